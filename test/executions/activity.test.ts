// Sessions and users (GET .../sessions, .../users) and the list's who/where fields and metadata
// filter (docs/executions.md): what the console's sessions, users and filters read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { correctExecution } from '../helpers/corrections.ts';
import { createExecutionListing } from '../../src/executions/execution-listing-repository.ts';
import { scoreFilterSql } from '../../src/scores/score-aggregate-repository.ts';

let svc: TestService;
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const T0 = Date.parse('2026-11-20T10:00:00Z');
const fromChTime = (t: string) => `${t.replace(' ', 'T')}Z`;
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
const runs = [
  { trace_id: 'a-1', session_id: 's-a', user_id: 'ada', started_at: at(0), cost_usd: 0.1, tags: ['beta'], metadata: { tier: 'gold' } },
  { trace_id: 'a-2', session_id: 's-a', user_id: 'ada', started_at: at(5), cost_usd: 0.2, status: 'error' },
  { trace_id: 'b-1', session_id: 's-b', user_id: 'bob', started_at: at(30), cost_usd: 0.000000001, metadata: { tier: 'free' } },
  { trace_id: 'c-1', user_id: 'ada', started_at: at(40), cost_usd: 0.3 },
  { trace_id: 'n-1', started_at: at(50), cost_usd: 1 },
];

beforeAll(async () => {
  svc = await startTestService();
  for (const r of runs) {
    const res = await call('POST', '/executions', { provider: 'openai', model: 'gpt-4o-mini', tokens_in: 10, tokens_out: 5, ...r });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`sessions and users (${mode} mode)`, () => {
  it('lists sessions most recently seen first, with user, counts, exact cost and first/last seen', async () => {
    const res = await call('GET', `/sessions?start=${at(-60)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items).toEqual([
      {
        session_id: 's-b',
        user_id: 'bob',
        executions: 1,
        errors: 0,
        cost_usd: '0.000000001',
        tokens_in: 10,
        tokens_out: 5,
        first_seen: at(30),
        last_seen: at(30),
      },
      {
        session_id: 's-a',
        user_id: 'ada',
        executions: 2,
        errors: 1,
        cost_usd: '0.3',
        tokens_in: 20,
        tokens_out: 10,
        first_seen: at(0),
        last_seen: at(5),
      },
    ]);
    const ada = await call('GET', `/sessions?start=${at(-60)}&user_id=ada`);
    expect(ada.status, JSON.stringify(ada.body)).toBe(200);
    expect(ada.body.items.map((s: { session_id: string }) => s.session_id)).toEqual(['s-a']);
    expect((await call('GET', `/sessions?start=${at(1)}&end=${at(20)}`)).body.items[0]).toMatchObject({ session_id: 's-a', executions: 1 });
    expect((await call('GET', '/sessions?limit=0')).status).toBe(400);
  });

  it('lists users with their sessions, executions and cost', async () => {
    const res = await call('GET', `/users?start=${at(-60)}&limit=10`);
    expect(res.status).toBe(200);
    expect(
      res.body.items.map((u: { user_id: string; sessions: number; executions: number; cost_usd: string; last_seen: string }) => [
        u.user_id,
        u.sessions,
        u.executions,
        u.cost_usd,
        u.last_seen,
      ]),
    ).toEqual([
      ['ada', 1, 3, '0.6', at(40)],
      ['bob', 1, 1, '0.000000001', at(30)],
    ]);
  });

  it('the list shows user, session and tags, and filters on metadata.<key>', async () => {
    const list = await call('GET', `/executions?start=${at(-60)}&metadata.tier=gold`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({ trace_id: 'a-1', user_id: 'ada', session_id: 's-a', tags: ['beta'] });
    const none = await call('GET', `/executions?start=${at(-60)}&metadata.tier=gold&metadata.region=eu`);
    expect(none.body.total).toBe(0);
    const all = await call('GET', `/executions?start=${at(-60)}`);
    expect(all.body.items.find((e: { trace_id: string }) => e.trace_id === 'n-1')).toMatchObject({
      user_id: null,
      session_id: null,
      tags: [],
    });
    const csv = await fetch(`${svc.url}/api/projects/default/executions/export?format=csv&metadata.tier=free&start=${at(-60)}`);
    expect(
      (await csv.text())
        .trim()
        .split('\r\n')
        .map((l) => l.split(',')[0]),
    ).toEqual(['trace_id', 'b-1']);
  });
  it('a page equals one sum over every id, most recently seen first, ties, corrections and ids netting to none included', async () => {
    const ch = svc.stores.clickhouse;
    // 400 executions over 2026-06-01 .. 06-03: 37 users, sessions of 3, times with ties (40 rows per 6.48 s).
    await ch.command(
      `INSERT INTO executions (project_id, started_at, trace_id, version, sign, source, model, status, tokens_in, tokens_out, latency_ms,
         cost_usd, cost_source, content_hash, user_id, session_id)
       SELECT 'default', toDateTime64('2026-06-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv((number * 7919) % 400, 40) * 25920000),
         concat('act-', toString(number)), 1, 1, 'api', 'm', if(number % 5 = 0, 'error', 'ok'), 10 + number, 5, 100,
         toDecimal64((number % 13) / 1000, 9), 'computed', 'h', concat('u', toString(number % 37)),
         if(number % 11 = 0, '', concat('s', toString(intDiv(number, 3))))
       FROM numbers(400)`,
    );
    // u5 keeps no execution (each moved to another user); two more corrections move a session and a cost.
    // Unmerged, as a busy tenant's rows are: u5's rows and their cancel rows are both read.
    await ch.command('SYSTEM STOP MERGES executions');
    for (let i = 5; i < 400; i += 37) await correctExecution(ch, `act-${i}`, { user_id: 'moved' });
    await correctExecution(ch, 'act-8', { session_id: 's-late', cost_usd: '1.5' });
    const [{ u5 }] = (await ch.query<{ u5: string }>(
      "SELECT toString(count()) AS u5 FROM executions WHERE project_id = 'default' AND user_id = 'u5' AND sign = 1",
    )) as [{ u5: string }];
    expect(Number(u5)).toBeGreaterThan(0);
    const oneSum = async (key: 'user_id' | 'session_id', limit: number, w: { start: string; end: string }) =>
      ch.query<{ id: string; executions: string; cost: string; first_seen: string; last_seen: string; extra: string }>(
        `SELECT ${key} AS id, toString(sum(sign)) AS executions, toString(sum(toDecimal128(cost_usd, 9) * sign)) AS cost,
           minIf(started_at, sign = 1) AS first_seen, maxIf(started_at, sign = 1) AS last_seen,
           toString([sum(if(status = 'error', sign, 0)), sum(toInt64(tokens_in) * sign), ${key === 'user_id' ? 'any(live_sessions)' : '0'}]) AS extra
         FROM executions
         -- a user's sessions: those holding at least one of its executions (superseded rows net to none)
         LEFT JOIN (
           SELECT user_id, toInt64(count()) AS live_sessions FROM (
             SELECT user_id, session_id FROM executions
             WHERE project_id = 'default' AND started_at >= {s:DateTime64(3, 'UTC')} AND started_at < {e:DateTime64(3, 'UTC')} AND session_id != ''
             GROUP BY user_id, session_id HAVING sum(sign) > 0)
           GROUP BY user_id) AS live USING user_id
         WHERE project_id = 'default' AND started_at >= {s:DateTime64(3, 'UTC')} AND started_at < {e:DateTime64(3, 'UTC')}
           AND ${key} != '' GROUP BY id HAVING sum(sign) > 0 ORDER BY last_seen DESC, id LIMIT {limit:UInt32}`,
        { limit, s: w.start.slice(0, 19).replace('T', ' '), e: w.end.slice(0, 19).replace('T', ' ') },
      );
    // Few rows read first, so the read grows (7, 56, 448) and ids seen at the cut are read again; no
    // spare id, so an id netting to none makes the page take more ids of the same read.
    const listing = createExecutionListing(ch, { scoreFilter: scoreFilterSql, activityScan: 7, activitySpare: 0 });
    // Users' whole days are read from user_days, the partial days at the ends from the executions.
    const windows = [
      { start: '2026-06-01T00:00:00Z', end: '2026-06-04T00:00:00Z' }, // whole days
      { start: '2026-06-01T07:30:00Z', end: '2026-06-03T13:00:00Z' }, // partial days at both ends
      { start: '2026-06-02T03:00:00Z', end: '2026-06-02T20:00:00Z' }, // inside one day
      { start: '2026-06-01T12:00:00Z', end: '2026-06-02T12:00:00Z' }, // across midnight, no whole day
    ];
    for (const window of windows)
      for (const [by, key] of [
        ['user', 'user_id'],
        ['session', 'session_id'],
      ] as const)
        for (const limit of [1, 2, 3, 5, 8, 13, 21, 34, 40, 200]) {
          const page = await listing.activity('default', by, { ...window, limit });
          const want = await oneSum(key, limit, window);
          expect(
            page.items.map((r: Record<string, unknown>) => [
              r[key],
              String(r.executions),
              r.cost_usd,
              r.first_seen,
              r.last_seen,
              JSON.stringify([r.errors, r.tokens_in, by === 'user' ? r.sessions : 0]),
            ]),
            `${by} limit ${limit} ${window.start} .. ${window.end}`,
          ).toEqual(
            want.map((r) => [
              r.id,
              r.executions,
              r.cost.includes('.') ? r.cost.replace(/0+$/, '').replace(/\.$/, '') : r.cost,
              fromChTime(r.first_seen),
              fromChTime(r.last_seen),
              JSON.stringify(JSON.parse(r.extra)),
            ]),
          );
        }
    expect(
      (await listing.activity('default', 'user', { ...windows[0]!, limit: 100 })).items.map((u) => (u as Record<string, unknown>).user_id),
    ).not.toContain('u5');
    await ch.command('SYSTEM START MERGES executions');
  });

  it('migration 027 fills user_days from the executions stored before it, again on a rerun', async () => {
    const window = { start: '2026-06-01T07:30:00Z', end: '2026-06-03T13:00:00Z' };
    const page = async () => (await call('GET', `/users?start=${window.start}&end=${window.end}&limit=100`)).body;
    const before = await page();
    expect(before.items.length).toBeGreaterThan(30);
    const unapply = async () => {
      await svc.stores.clickhouse.command('ALTER TABLE schema_migrations DELETE WHERE version = 27', {}, { mutations_sync: '1' });
      const env = svc.testEnv;
      await svc.close();
      svc = await startTestService(undefined, { env });
    };
    // as before 026 (027 fills the table whole): the executions stored, no user day
    await svc.stores.clickhouse.command('TRUNCATE TABLE user_days');
    await unapply();
    expect(await page()).toEqual(before);
    // run again (a migration that failed after its copy): emptied and copied again, not added twice
    await unapply();
    expect(await page()).toEqual(before);
  });
});
