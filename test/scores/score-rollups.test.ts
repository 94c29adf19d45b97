// The score rollups (docs/scores.md, "Storage") over HTTP: a score follows its execution's
// dimensions into the spend breakdowns and the version comparison, whether it arrived before the
// execution, and when the execution changes; "executions scored" stays exact through deletes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { agentTrace, chatSpan } from '../helpers/ingest-log.ts';
import { until } from '../helpers/wait.ts';
import { loadMigrations, SCHEMA_DIR, splitStatements } from '../../src/stores/migrate.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const sendSpans = async (spans: object[]) => {
  const r = await fetch(`${svc.url}/api/v1/traces`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ spans }),
  });
  expect(r.status).toBe(200);
};
const hex = (n: number, t: number) => t.toString(16).padStart(n, '0');
type Row = { user?: string; scores: Record<string, { n: number; scored_executions: number; mean?: number }> };
const byUser = async (name: string) => {
  const r = await call('GET', `/spend?group_by=user&scores=${name}&window=2d`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return Object.fromEntries((r.body.rows as Row[]).filter((x) => x.scores[name]).map((x) => [x.user, x.scores[name]]));
};

describe(`score rollups (${mode} mode)`, () => {
  it('a score sent before its execution joins its group once assembled, and moves when the execution changes', async () => {
    const t = 0x7a0001;
    const traceId = hex(32, t);
    expect((await call('POST', '/scores', { id: 'r-early', trace_id: traceId, name: 'rq', value: 0.4 })).status).toBe(201);
    expect(await byUser('rq')).toEqual({});
    const start = BigInt(Date.now()) * 1_000_000n;
    await sendSpans(agentTrace(t, start));
    expect(await until(async () => (await byUser('rq'))[''], 'the score in the group of its execution (no user)')).toEqual({
      data_type: 'NUMERIC',
      n: 1,
      scored_executions: 1,
      mean: 0.4,
    });
    // A late span names the user: the execution is corrected, and its score follows it.
    await sendSpans([
      {
        trace_id: traceId,
        span_id: hex(16, t * 2 + 3),
        parent_span_id: hex(16, t * 2 + 1),
        span_name: 'lookup',
        attributes: { 'user.id': 'u-late' },
        start_time_ns: String(start + 2_000n),
        end_time_ns: String(start + 3_000n),
      },
    ]);
    expect(
      await until(async () => {
        const groups = await byUser('rq');
        return groups['u-late'] && !groups[''] ? groups : undefined;
      }, 'the score moved with its execution'),
    ).toEqual({ 'u-late': { data_type: 'NUMERIC', n: 1, scored_executions: 1, mean: 0.4 } });
    // Its stamp is current: a restamp finds nothing stale (the engine compares) and writes nothing.
    await svc.domain.flush();
    expect(await svc.domain.scores.service.restamp('default', [traceId])).toBe(0);
  });

  it('two scores of one name on one execution count it once, through the delete of either', async () => {
    const t = 0x7a0002;
    const traceId = hex(32, t);
    await sendSpans(agentTrace(t));
    await until(async () => (await call('GET', `/executions/${traceId}`)).status === 200, 'the execution');
    for (const [id, value] of [
      ['c-a', 1],
      ['c-b', 3],
    ] as const)
      expect((await call('POST', '/scores', { id, trace_id: traceId, name: 'cq', value })).status).toBe(201);
    expect((await byUser('cq'))['']).toEqual({ data_type: 'NUMERIC', n: 2, scored_executions: 1, mean: 2 });
    expect((await call('DELETE', '/scores/c-a')).status).toBe(204);
    expect((await byUser('cq'))['']).toEqual({ data_type: 'NUMERIC', n: 1, scored_executions: 1, mean: 3 });
    expect((await call('POST', '/scores', { id: 'c-b', trace_id: traceId, name: 'cq', value: 5 })).status).toBe(201);
    expect((await byUser('cq'))['']).toEqual({ data_type: 'NUMERIC', n: 1, scored_executions: 1, mean: 5 });
    expect((await call('DELETE', '/scores/c-b')).status).toBe(204);
    expect(await byUser('cq')).toEqual({});
  });

  it('a counted score moved to another trace, renamed or deleted hands the count to another score of its old trace and name', async () => {
    const [t1, t2] = [0x7a0010, 0x7a0011];
    await sendSpans([...agentTrace(t1), ...agentTrace(t2)]);
    for (const t of [t1, t2]) await until(async () => (await call('GET', `/executions/${hex(32, t)}`)).status === 200, 'the executions');
    const totals = async () => {
      const r = await call('GET', '/spend?group_by=model&scores=mv,mv2&window=2d');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const of = (name: string) =>
        r.body.total_scores[name] && { n: r.body.total_scores[name].n, scored: r.body.total_scores[name].scored_executions };
      return { mv: of('mv'), mv2: of('mv2') };
    };
    const put = async (id: string, t: number, name: string, value: number) =>
      expect((await call('POST', '/scores', { id, trace_id: hex(32, t), name, value })).status).toBe(201);
    await put('m-a', t1, 'mv', 1); // counted: the first of t1's mv
    await put('m-b', t1, 'mv', 2);
    expect(await totals()).toEqual({ mv: { n: 2, scored: 1 }, mv2: undefined });
    await put('m-a', t2, 'mv', 1); // moved: m-b now counts t1
    expect(await totals()).toEqual({ mv: { n: 2, scored: 2 }, mv2: undefined });
    await put('m-c', t2, 'mv', 4); // a second score of t2 counts nothing more
    expect(await totals()).toEqual({ mv: { n: 3, scored: 2 }, mv2: undefined });
    await put('m-b', t1, 'mv2', 2); // renamed: t1 has no mv left
    expect(await totals()).toEqual({ mv: { n: 2, scored: 1 }, mv2: { n: 1, scored: 1 } });
    expect((await call('DELETE', '/scores/m-a')).status).toBe(204); // m-c now counts t2
    expect(await totals()).toEqual({ mv: { n: 1, scored: 1 }, mv2: { n: 1, scored: 1 } });
    expect((await call('DELETE', '/scores/m-c')).status).toBe(204);
    expect(await totals()).toEqual({ mv: undefined, mv2: { n: 1, scored: 1 } });
  });

  it('the comparison counts a corrected execution once, at its corrected cost, with its score once', async () => {
    expect((await call('POST', '/prompts', { prompt_id: 'fixed', type: 'text', template: 'v1' })).status).toBe(201);
    expect((await call('POST', '/prompts/fixed/versions', { template: 'v2' })).status).toBe(201);
    const t = 0x7a0003;
    const traceId = hex(32, t);
    const start = BigInt(Date.now()) * 1_000_000n;
    const chat = (n: number, tokensIn: number) =>
      chatSpan(t, t * 4 + n, start + BigInt(n) * 1_000n, start + 4_000_000n, {
        tokensIn,
        tokensOut: 0,
        attributes: { 'traceloom.prompt.id': 'fixed', 'traceloom.prompt.version': '2' },
      });
    await sendSpans([agentTrace(t, start)[0]!, chat(1, 1_000_000)]);
    const v2 = async () => {
      const r = await call('GET', `/prompts/fixed/compare?versions=1,2&start=${new Date(Date.now() - 86_400_000).toISOString()}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.groups[1] as { executions: number; cost: { total_usd: number }; scores: Record<string, { n: number }> };
    };
    const first = await until(async () => ((await v2()).executions === 1 ? v2() : undefined), 'the execution in the comparison');
    expect((await call('POST', '/scores', { id: 'fixed-s', trace_id: traceId, name: 'fq', value: 0.5 })).status).toBe(201);
    // A second call of the trace arrives late: the execution is corrected (a cancel row and a new version).
    await sendSpans([chat(2, 3_000_000)]);
    const corrected = await until(async () => {
      const g = await v2();
      return g.cost.total_usd > first.cost.total_usd ? g : undefined;
    }, 'the corrected cost');
    expect(corrected.executions).toBe(1);
    expect(corrected.cost.total_usd).toBeCloseTo(first.cost.total_usd * 4, 9);
    expect(corrected.scores.fq).toMatchObject({ n: 1, scored_executions: 1, mean: 0.5 });
  });

  it('a trace indexed before the index carried stamps is stamped from its executions row', async () => {
    const t = 0x7a0004;
    const traceId = hex(32, t);
    await sendSpans(agentTrace(t));
    await until(async () => (await call('GET', `/executions/${traceId}`)).status === 200, 'the execution');
    // The index row as migration 014 finds it: written again without the stamp (the same version, later: it wins).
    await svc.stores.clickhouse.command(
      `INSERT INTO execution_traces (project_id, trace_id, version, started_at, content_hash)
       SELECT project_id, trace_id, version, started_at, content_hash FROM execution_traces FINAL WHERE project_id = 'default' AND trace_id = {t:String}`,
      { t: traceId },
    );
    const [row] = await svc.stores.clickhouse.query<{ stamped: number; model: string }>(
      "SELECT stamped, model FROM execution_traces FINAL WHERE project_id = 'default' AND trace_id = {t:String}",
      { t: traceId },
    );
    expect(row).toEqual({ stamped: 0, model: '' });
    expect((await call('POST', '/scores', { id: 'old-index', trace_id: traceId, name: 'oq', value: 0.25 })).status).toBe(201);
    const r = await call('GET', '/spend?group_by=model&scores=oq&window=2d');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const scored = (r.body.rows as Array<{ model?: string; scores: Record<string, unknown> }>).filter((x) => x.scores.oq);
    expect(scored.map((x) => [x.model, x.scores.oq])).toEqual([
      ['gpt-4o', { data_type: 'NUMERIC', n: 1, scored_executions: 1, mean: 0.25 }],
    ]);
  });

  it('writes sent at once are stored together: every score once, each execution counted once, one live row per id', async () => {
    const traces = Array.from({ length: 20 }, (_x, i) => hex(32, 0x7b0000 + i));
    const start = BigInt(Date.now()) * 1_000_000n;
    await sendSpans(traces.flatMap((_t, i) => agentTrace(0x7b0000 + i, start)));
    await until(async () => (await call('GET', `/executions/${traces[19]}`)).status === 200, 'the executions');
    // Eight requests at once, each scoring every trace under its own ids, and five updates of one id.
    const sent = await Promise.all([
      ...Array.from({ length: 8 }, (_x, r) =>
        call(
          'POST',
          '/scores',
          traces.map((trace_id, i) => ({ id: `at-once-${r}-${i}`, trace_id, name: 'aq', value: r })),
        ),
      ),
      ...Array.from({ length: 5 }, (_x, v) => call('POST', '/scores', { id: 'one-id', trace_id: traces[0], name: 'oi', value: v })),
    ]);
    expect(sent.map((r) => r.status)).toEqual(Array(13).fill(201));
    expect((await byUser('aq'))['']).toEqual({ data_type: 'NUMERIC', n: 160, scored_executions: 20, mean: 3.5 });
    const live = await call('GET', '/scores?name=oi');
    expect(live.body.items).toHaveLength(1);
    expect((await byUser('oi'))['']).toMatchObject({ n: 1, scored_executions: 1, mean: live.body.items[0].value });
  });

  // Last in this file: it empties the rollup's rows of every score (prompt_id '') of every project.
  it('migration 015 copies the rows of score_hourly into the one rollup once, and breakdowns read them', async () => {
    const t = 0x7c0001;
    await sendSpans([...agentTrace(t), ...agentTrace(t + 1)]);
    await until(async () => (await call('GET', `/executions/${hex(32, t + 1)}`)).status === 200, 'the executions');
    for (const [i, value] of [0.2, 0.6].entries())
      expect((await call('POST', '/scores', { id: `m15-${i}`, trace_id: hex(32, t + i), name: 'mq', value })).status).toBe(201);
    // By model and session: no score rollup by grain holds the session (020), so the hourly one answers.
    const byModel = async () => {
      const r = await call('GET', '/spend?group_by=model,session&scores=mq&window=2d');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.rows as Array<{ model?: string; scores: Record<string, unknown> }>)
        .filter((x) => x.scores.mq)
        .map((x) => [x.model, x.scores.mq]);
    };
    const before = await byModel();
    expect(before).toEqual([['gpt-4o', { data_type: 'NUMERIC', n: 2, scored_executions: 2, mean: 0.4 }]]);
    // The state 015 finds: these sums in score_hourly, none under prompt_id ''.
    const ch = svc.stores.clickhouse;
    await ch.command(
      `INSERT INTO score_hourly SELECT project_id, name, hour, provider, model, agent_id, user_id, session_id, data_type, label,
         scores, scored, value_sum, value_squares FROM score_hourly_prompts WHERE prompt_id = ''`,
    );
    await ch.command("ALTER TABLE score_hourly_prompts DELETE WHERE prompt_id = '' SETTINGS mutations_sync = 2");
    expect(await byModel()).toEqual([]);
    const m015 = loadMigrations(`${SCHEMA_DIR}clickhouse`).find((m) => m.version === 15)!;
    for (let run = 0; run < 2; run++) {
      for (const statement of splitStatements(m015.sql)) await ch.command(statement);
      expect(await byModel(), `after run ${run + 1}`).toEqual(before);
    }
  });
});
