// Retention: raw spans, executions and template usages older than N days go (a table TTL, applied
// by the retention job), per project; daily spend, prompt rollups and stats of old months stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/webhook-receiver.ts';
import { ttlClause } from '../../src/spend/retention.ts';

let svc: TestService;
const P = '/api/projects/default';
const json = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const DAY = 86_400_000;
const old = new Date(Date.now() - 100 * DAY);
const recent = new Date(Date.now() - 1 * DAY);
const day = (d: Date) => d.toISOString().slice(0, 10);

async function count(table: string, project: string): Promise<number> {
  const [r] = await svc.stores.clickhouse.query<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE project_id = {p:String}`, {
    p: project,
  });
  return Number(r!.n);
}
async function spans(project: string, traceId: string, at: Date) {
  const ns = BigInt(at.getTime()) * 1_000_000n;
  await svc.stores.clickhouse.insert('spans', [
    {
      project_id: project,
      trace_id: traceId,
      span_id: 's1',
      start_time_ns: String(ns),
      end_time_ns: String(ns + 1_000_000n),
      received_at: at.toISOString().replace('T', ' ').replace('Z', ''),
      name: 'llm',
    },
  ]);
}

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
  expect((await json('POST', '/prompts', { prompt_id: 'support', type: 'text', template: 'x' })).status).toBe(201);
  for (const [id, at] of [
    ['old-1', old],
    ['old-2', old],
    ['new-1', recent],
  ] as const) {
    const r = await json('POST', '/executions', {
      trace_id: id,
      cost_usd: 1.25,
      user_id: 'u-1',
      started_at: at.toISOString(),
      template_usages: [{ prompt_id: 'support' }],
    });
    expect(r.status).toBe(201);
    await spans('default', id, at);
  }
  // another project's old rows: its retention is not set, they stay
  await svc.stores.clickhouse.command(
    `INSERT INTO executions (project_id, started_at, trace_id, version, sign, cost_usd, content_hash) VALUES ('other', {t:DateTime64(3, 'UTC')}, 'o-1', 1, 1, 2, 'h')`,
    { t: old.toISOString().replace('T', ' ').replace('Z', '') },
  );
  await spans('other', 'o-1', old);
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`retention (${mode} mode)`, () => {
  it('validates the setting and reads it back', async () => {
    expect((await json('GET', '/retention')).body).toEqual({
      days: null,
      updated_at: null,
      applies_to: ['executions', 'template_usages', 'spans', 'span_log_events'],
    });
    for (const days of [0, 3651, 1.5, '30', -1]) expect((await json('PUT', '/retention', { days })).status).toBe(400);
    expect((await json('PUT', '/retention', {})).status).toBe(400);
  });

  it('drops raw rows older than N days for that project only; monthly spend and stats stay', async () => {
    const statsBefore = (await json('GET', `/stats?start=${day(old)}&end=${day(recent)}T23:59:59Z`)).body;
    expect(statsBefore.total_cost).toBe(3.75);
    const put = await json('PUT', '/retention', { days: 30 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ days: 30 });
    await until(
      async () =>
        (await count('executions', 'default')) === 1 &&
        (await count('spans', 'default')) === 1 &&
        (await count('template_usages', 'default')) === 1,
      'old raw rows dropped',
    );
    expect(await count('executions', 'other')).toBe(1);
    expect(await count('spans', 'other')).toBe(1);
    // the listing no longer has them; the rollups do
    const listed = (await json('GET', '/executions?limit=10')).body;
    expect(listed.items.map((i: { trace_id: string }) => i.trace_id)).toEqual(['new-1']);
    // its total too: the rollups count only from what retention keeps (intactSince)
    expect(listed.total).toBe(1);
    expect((await json('GET', `/executions?limit=10&start=${day(old)}T00:00:00Z`)).body.total).toBe(1);
    // and the users page: its user days count only from what retention keeps
    const users = (await json('GET', `/users?start=${day(old)}T00:00:00Z`)).body;
    expect(users.items).toMatchObject([{ user_id: 'u-1', executions: 1, cost_usd: '1.25' }]);
    const stats = (await json('GET', `/stats?start=${day(old)}&end=${day(recent)}T23:59:59Z`)).body;
    expect(stats).toMatchObject({ total_cost: 3.75, total_executions: 3 });
    expect(stats.daily_costs.find((d: { date: string }) => d.date === day(old))).toEqual({ date: day(old), cost: 2.5, executions: 2 });
    const a = (await json('GET', `/prompts/support/analytics?start=${day(old)}&end=${day(recent)}T23:59:59Z`)).body;
    expect(a).toMatchObject({ total_executions: 3, total_cost: 3.75 });
    // new rows for an old day are dropped by the same TTL; recent ones are kept
    await json('POST', '/executions', { trace_id: 'late-old', cost_usd: 1, started_at: old.toISOString() });
    await json('POST', '/executions', { trace_id: 'new-2', cost_usd: 1, started_at: recent.toISOString() });
    await svc.stores.clickhouse.command('OPTIMIZE TABLE executions FINAL');
    expect(
      (
        await svc.stores.clickhouse.query<{ trace_id: string }>(
          "SELECT trace_id FROM executions WHERE project_id = 'default' ORDER BY trace_id",
        )
      ).map((r) => r.trace_id),
    ).toEqual(['new-1', 'new-2']);
  });

  it('the job is idempotent and null removes the TTL', async () => {
    expect(await svc.domain.spend.retention.apply()).toEqual([]); // already in force
    expect((await json('PUT', '/retention', { days: null })).body).toMatchObject({ days: null });
    await until(async () => {
      const [t] = await svc.stores.clickhouse.query<{ engine_full: string }>(
        "SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'executions'",
      );
      return !/\sTTL\s/.test(t!.engine_full);
    }, 'TTL removed');
  });

  it('applies the TTL for thousands of projects (beyond the default max_query_size) and still keeps projects without a setting', async () => {
    const pg = svc.stores.postgres;
    const ids = Array.from({ length: 3000 }, (_, i) => `bulk-retention-test-project-${String(i).padStart(5, '0')}`);
    await pg.query(`INSERT INTO projects (project_id, name) SELECT unnest($1::text[]), 'bulk' ON CONFLICT DO NOTHING`, [ids]);
    await pg.query(
      `INSERT INTO project_retention (project_id, days) SELECT unnest($1::text[]), 30 ON CONFLICT (project_id) DO UPDATE SET days = 30`,
      [ids],
    );
    const target = ids[1234]!;
    await svc.stores.clickhouse.command(
      `INSERT INTO executions (project_id, started_at, trace_id, version, sign, cost_usd, content_hash) VALUES ({p:String}, {t:DateTime64(3, 'UTC')}, 'bulk-old', 1, 1, 1, 'h')`,
      { p: target, t: old.toISOString().replace('T', ' ').replace('Z', '') },
    );
    expect(await count('executions', target)).toBe(1);
    expect(await svc.domain.spend.retention.apply()).toEqual(['executions', 'template_usages', 'spans', 'span_log_events']);
    await until(async () => (await count('executions', target)) === 0, 'old row of a project with retention dropped');
    expect(await count('executions', 'other')).toBe(1); // no setting: kept
    await pg.query(`DELETE FROM project_retention WHERE project_id = ANY($1::text[])`, [ids]);
    await svc.domain.spend.retention.apply();
  });

  it('builds the TTL only from valid project ids', () => {
    expect(
      ttlClause('started_at', [
        { project_id: 'a', days: 7 },
        { project_id: 'b', days: 30 },
      ]).clause,
    ).toMatch(
      /^toDateTime\(started_at\) \+ toIntervalDay\(transform\(project_id, \['a','b'\], \[7,30\], 36500\)\) DELETE WHERE has\(\['a','b'\], project_id\)/,
    );
    expect(() => ttlClause('started_at', [{ project_id: "x' OR 1=1 --", days: 7 }])).toThrow();
    expect(() => ttlClause('started_at', [{ project_id: 'a', days: 0 }])).toThrow();
  });
});
