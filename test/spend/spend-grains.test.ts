// Spend breakdowns read from the rollups by grain (schema/clickhouse/018): months, days and hours
// added and subtracted over windows of every alignment must give, group by group, exactly what a
// plain sum over `executions FINAL` gives, through late corrections that move cost, user and tags.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { correctExecution } from '../helpers/corrections.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { SCORE_ROLLUPS } from '../../src/scores/score-aggregate-repository.ts';
import { createListTotals } from '../../src/spend/list-totals.ts';
import { createSpendRollupRepository } from '../../src/spend/spend-rollup-repository.ts';

let svc: TestService;
const P = '/api/projects/default';
const json = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const DAY = 86_400_000;
const FIRST = Date.parse('2026-08-20T00:00:00Z');
const N = 160;
/** Execution i: spread over 2026-08-20 .. 2026-11-11 at odd hours, 6 users, 4 models, tags of 3. */
function execution(i: number) {
  const at = FIRST + Math.floor(((i * 7919) % N) * (83 * DAY)) / N + ((i * 37) % 60) * 60_000;
  return {
    trace_id: `g-${i}`,
    provider: ['openai', 'anthropic'][i % 2],
    model: `m${i % 4}`,
    agent_id: `a${i % 3}`,
    user_id: `u${(i * 5) % 6}`,
    tags: [[], ['a'], ['b'], ['a', 'c'], ['c', 'c']][i % 5],
    environment: ['prod', 'staging', ''][i % 3],
    // a key absent from some executions and empty in others; a second key beside it
    metadata: [{ plan: 'pro', region: 'eu' }, { plan: 'free' }, {}, { plan: '', region: 'us' }, { plan: 'pro' }][i % 5],
    cost_usd: Number((((i * 1_234_567) % 100_000_000) / 1e9 + (i % 7)).toFixed(9)),
    tokens_in: i * 3,
    tokens_out: i,
    started_at: new Date(at).toISOString(),
  };
}

const correct = (traceId: string, changes: Record<string, unknown>) => correctExecution(svc.stores.clickhouse, traceId, changes);

const WINDOWS: Array<[string, string]> = [
  ['2026-08-25T07:00:00Z', '2026-11-03T05:00:00Z'], // partial months and days at both ends
  ['2026-09-01T00:00:00Z', '2026-10-01T00:00:00Z'], // one whole month
  ['2026-09-03T00:00:00Z', '2026-10-29T00:00:00Z'], // months minus their outside days
  ['2026-10-10T13:00:00Z', '2026-10-10T17:00:00Z'], // hours of one day
  ['2026-09-30T20:00:00Z', '2026-10-02T03:00:00Z'], // across a month boundary by hours
  ['2026-10-01T01:00:00Z', '2026-10-31T23:00:00Z'], // a month minus an hour at each end
];

/** What a plain sum over the live executions gives per group: key → [cost, executions]. */
async function expected(start: string, end: string, columns: string[], where = ''): Promise<Map<string, [string, number]>> {
  const tagged = columns.includes('tag');
  const rows = await svc.stores.clickhouse.query<{ k: string[]; c: string; n: string }>(
    `SELECT [${columns.map((c) => (c === 'day' ? "toString(toStartOfDay(started_at, 'UTC'))" : `toString(${c})`)).join(', ')}] AS k,
       toString(sum(cost_usd)) AS c, toString(count()) AS n
     FROM executions FINAL ${tagged ? "ARRAY JOIN if(empty(tags), [''], arrayDistinct(tags)) AS tag" : ''}
     WHERE project_id = 'default' AND sign = 1 AND started_at >= {s:DateTime64(3, 'UTC')} AND started_at < {e:DateTime64(3, 'UTC')} ${where}
     GROUP BY k`,
    { s: start.replace('T', ' ').replace('Z', ''), e: end.replace('T', ' ').replace('Z', '') },
  );
  return new Map(rows.map((r) => [JSON.stringify(r.k), [norm(r.c), Number(r.n)]]));
}

const norm = (d: string) => (d.includes('.') ? d.replace(/0+$/, '').replace(/\.$/, '') : d);

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
  for (let i = 0; i < N; i += 20)
    await Promise.all(
      Array.from({ length: 20 }, async (_, j) => {
        const r = await json('POST', '/executions', execution(i + j));
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }),
    );
  // late corrections: cost, user, tags and time move
  await correct('g-3', { cost_usd: '12.000000001', user_id: 'u-moved', tags: ['b'], metadata: { plan: 'enterprise' } });
  await correct('g-10', { started_at: '2026-10-10T14:30:00.000' });
  await correct('g-11', { cost_usd: '0' });
  // scores of half the executions, stamped with their (corrected) execution as they are written
  const scores = Array.from({ length: N }, (_, i) => i)
    .filter((i) => i % 2 === 0)
    .flatMap((i) => [
      { trace_id: `g-${i}`, name: 'quality', value: (i % 10) / 10 },
      ...(i % 3 === 0 ? [{ trace_id: `g-${i}`, name: 'ok', value: i % 4 === 0 }] : []),
    ]);
  const posted = await json('POST', '/scores', scores);
  expect(posted.status, JSON.stringify(posted.body)).toBe(201);
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

/** Per group and score name, what the live scores of the window's live executions give: n and mean. */
async function expectedScores(start: string, end: string, column: string): Promise<Record<string, { n: number; mean: number }>> {
  const rows = await svc.stores.clickhouse.query<{ k: string; name: string; n: string; mean: number }>(
    `SELECT e.k AS k, s.name AS name, toString(count()) AS n, avg(s.value) AS mean
     FROM scores AS s FINAL
     INNER JOIN (SELECT trace_id, toString(${column}) AS k FROM executions FINAL
       WHERE project_id = 'default' AND sign = 1 AND started_at >= {s:DateTime64(3, 'UTC')} AND started_at < {e:DateTime64(3, 'UTC')}) AS e
       ON s.trace_id = e.trace_id
     WHERE s.project_id = 'default' AND s.sign = 1
     GROUP BY k, name`,
    { s: start.replace('T', ' ').replace('Z', ''), e: end.replace('T', ' ').replace('Z', '') },
  );
  return Object.fromEntries(rows.map((r) => [`${r.k}/${r.name}`, { n: Number(r.n), mean: Number(r.mean.toFixed(6)) }]));
}

describe(`spend breakdowns read by grain (${mode} mode)`, () => {
  for (const [dimension, column] of [
    ['model', 'model'],
    ['agent', 'agent_id'],
    ['user', 'user_id'],
  ] as const)
    it(`group_by=${dimension} with scores=: each group's scores exact over windows of every alignment`, async () => {
      for (const [start, end] of WINDOWS) {
        const r = await json('GET', `/spend?start=${start}&end=${end}&group_by=${dimension}&limit=10000&scores=quality,ok`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const got: Record<string, { n: number; mean: number }> = {};
        for (const row of r.body.rows as Array<Record<string, unknown>>)
          for (const [name, sc] of Object.entries(row.scores as Record<string, { n: number; mean?: number; true_rate?: number }>))
            got[`${String(row[dimension])}/${name}`] = { n: sc.n, mean: Number((sc.mean ?? sc.true_rate)!.toFixed(6)) };
        expect(got, `${start} .. ${end}`).toEqual(await expectedScores(start, end, column));
      }
    });

  const cases: Array<{ group_by: string; columns: string[]; filter?: string; where?: string }> = [
    { group_by: 'model', columns: ['model'] },
    { group_by: 'user', columns: ['user_id'] },
    { group_by: 'model,user', columns: ['model', 'user_id'] },
    { group_by: 'tag', columns: ['tag'] },
    { group_by: 'environment,agent', columns: ['environment', 'agent_id'] },
    { group_by: 'day,provider', columns: ['day', 'provider'] },
    { group_by: 'user', columns: ['user_id'], filter: 'model=m1,m2', where: "AND model IN ('m1', 'm2')" },
    { group_by: 'model', columns: ['model'], filter: 'tag=a', where: "AND has(tags, 'a')" },
    { group_by: 'metadata.plan', columns: ["metadata['plan']"] },
    { group_by: 'day,metadata.region', columns: ['day', "metadata['region']"] },
    { group_by: 'day', columns: ['day'], filter: 'metadata.plan=pro', where: "AND metadata['plan'] = 'pro'" },
    {
      group_by: 'metadata.plan',
      columns: ["metadata['plan']"],
      filter: 'metadata.plan=enterprise',
      where: "AND metadata['plan'] = 'enterprise'",
    },
  ];
  for (const c of cases)
    it(`group_by=${c.group_by}${c.filter ? ` with ${c.filter}` : ''}: every group exact over windows of every alignment`, async () => {
      for (const [start, end] of WINDOWS) {
        const r = await json('GET', `/spend?start=${start}&end=${end}&group_by=${c.group_by}&limit=10000${c.filter ? `&${c.filter}` : ''}`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.source).toBe('rollup');
        const names = c.group_by.split(',');
        const got = new Map(
          (r.body.rows as Array<Record<string, string | number>>).map((row) => [
            JSON.stringify(names.map((n) => (n === 'day' ? String(row[n]).slice(0, 19).replace('T', ' ') : String(row[n])))),
            [norm(String(row.cost_usd)), Number(row.executions)],
          ]),
        );
        const want = await expected(start, end, c.columns, c.where);
        expect(Object.fromEntries(got), `${start} .. ${end}`).toEqual(Object.fromEntries(want));
      }
    });

  it("the list's total over whole hours of a rollup and the rest of the window over the rows: exact for every filter and window", async () => {
    const held = createListTotals({
      rollups: createSpendRollupRepository(svc.stores.clickhouse),
      intactSince: async () => undefined,
      now: () => new Date(),
    });
    const filters: Array<[string, string, boolean]> = [
      ['', '', true],
      ['provider=openai', "AND provider = 'openai'", true],
      ['model=m1,m2&agent_id=a1', "AND model IN ('m1', 'm2') AND agent_id = 'a1'", true],
      ['user_id=u1', "AND user_id = 'u1'", true],
      ['user_id=u1,u3&model=m1', "AND user_id IN ('u1', 'u3') AND model = 'm1'", true],
      ['tag=a', "AND has(tags, 'a')", true],
      ['metadata.plan=pro', "AND metadata['plan'] = 'pro'", true],
      ['tag=a&tag=b', "AND hasAny(tags, ['a', 'b'])", false],
      ['user_id=u1&agent_id=a1', "AND user_id = 'u1' AND agent_id = 'a1'", false],
      ['status=ok&provider=openai', "AND provider = 'openai'", false],
    ];
    // Bounds a millisecond after one execution and at another (its hour holds rows on both sides of each bound).
    const times = (
      await svc.stores.clickhouse.query<{ t: string }>(
        "SELECT toString(started_at) AS t FROM executions FINAL WHERE project_id = 'default' AND sign = 1 ORDER BY started_at",
      )
    ).map((r) => Date.parse(`${r.t.replace(' ', 'T')}Z`));
    const around: [string, string] = [new Date(times[20]! + 1).toISOString(), new Date(times[120]!).toISOString()];
    const windows: Array<[string | undefined, string | undefined]> = [
      ...WINDOWS,
      around,
      ['2026-08-25T07:13:27.123Z', '2026-11-03T05:59:59.999Z'],
      ['2026-10-10T13:20:00.000Z', '2026-10-10T13:40:00.000Z'],
      ['2026-09-15T00:00:00.001Z', undefined],
      [undefined, '2026-10-01T00:00:00.000Z'],
      [undefined, undefined],
    ];
    for (const [query, where, served] of filters)
      for (const [start, end] of windows) {
        const range = `${start ? `&start=${start}` : ''}${end ? `&end=${end}` : ''}`;
        const r = await json('GET', `/executions?limit=1${query ? `&${query}` : ''}${range}`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const [want] = await svc.stores.clickhouse.query<{ n: string }>(
          `SELECT toString(count()) AS n FROM executions FINAL
           WHERE project_id = 'default' AND sign = 1 ${start ? "AND started_at >= {s:DateTime64(3, 'UTC')}" : ''}
             ${end ? "AND started_at < {e:DateTime64(3, 'UTC')}" : ''} ${where}`,
          { s: start?.replace('T', ' ').replace('Z', ''), e: end?.replace('T', ' ').replace('Z', '') },
        );
        expect(r.body.total, `${query} ${start} .. ${end}`).toBe(Number(want!.n));
        // the query as the route hands it to the listing: repeatable fields as arrays
        const params = new URLSearchParams(`${query}${range}`);
        const listQuery: Record<string, unknown> = {};
        for (const k of new Set(params.keys()))
          listQuery[k] = ['provider', 'model', 'agent_id', 'user_id', 'tag'].includes(k) ? params.getAll(k) : params.get(k);
        const whole = await held('default', { ...listQuery, limit: 1, offset: 0 } as never);
        expect(whole !== undefined, `${query} ${start} .. ${end} served by a rollup`).toBe(
          served && !(start === '2026-10-10T13:20:00.000Z'),
        );
      }
  });

  it('migration 025 fills the family of metadata from the executions stored before it, once', async () => {
    const query = `/spend?start=${WINDOWS[0]![0]}&end=${WINDOWS[0]![1]}&group_by=metadata.plan,month&limit=1000`;
    const before = await json('GET', query);
    expect(before.body.source).toBe('rollup');
    const unapply = async () => {
      await svc.stores.clickhouse.command('ALTER TABLE schema_migrations DELETE WHERE version = 25', {}, { mutations_sync: '1' });
      const env = svc.testEnv;
      await svc.close();
      svc = await startTestService({ AUTH_REQUIRED: 'false' }, { env });
    };
    // as before 025: the executions stored, no pair rolled up
    await svc.stores.clickhouse.command("ALTER TABLE spend_by_attribute DELETE WHERE attribute = 'metadata'", {}, { mutations_sync: '1' });
    await unapply();
    expect((await json('GET', query)).body).toEqual(before.body);
    // run again: copied once
    await unapply();
    expect((await json('GET', query)).body).toEqual(before.body);
  });

  it('score rollups by grain empty beside stored scores (written before migration 020) are filled at boot', async () => {
    const query = `/spend?start=${WINDOWS[0]![0]}&end=${WINDOWS[0]![1]}&group_by=model&scores=quality,ok`;
    const before = await json('GET', query);
    for (const t of SCORE_ROLLUPS.map((r) => r.table)) await svc.stores.clickhouse.command(`TRUNCATE TABLE ${t}`);
    const env = svc.testEnv;
    await svc.close();
    svc = await startTestService({ AUTH_REQUIRED: 'false' }, { env });
    expect((await json('GET', query)).body).toEqual(before.body);
  });
});
