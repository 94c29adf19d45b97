// Spend breakdowns (GET .../spend) against hand-computed sums on a seeded project: every
// dimension grouped and filtered, the `other` row, the rollups and the executions read, and a late
// correction (cancel row + new version) moving cost, user and tags between groups.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { correctExecution } from '../helpers/corrections.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { SPEND_ROLLUPS } from '../../src/reads/spend-dimensions.ts';

let svc: TestService;
const P = '/api/projects/default';
const json = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const WINDOW = 'start=2026-10-01T00:00:00Z&end=2026-10-08T00:00:00Z';
const spend = (q: string) => json('GET', `/spend?${WINDOW}&${q}`);

async function exec(body: Record<string, unknown>) {
  const r = await json('POST', '/executions', body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

const correct = (traceId: string, changes: Record<string, unknown>) => correctExecution(svc.stores.clickhouse, traceId, changes);

const m = (cost_usd: string, executions: number, tokens_in = 0, tokens_out = 0, unpriced_executions = 0) => ({
  cost_usd,
  executions,
  tokens_in,
  tokens_out,
  unpriced_executions,
});
/** Rows without token figures (checked in the total): dimension values, cost and count. */
const brief = (rows: Array<Record<string, unknown>>) => rows.map(({ tokens_in: _i, tokens_out: _o, unpriced_executions: _u, ...r }) => r);

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
  for (const id of ['support', 'billing'])
    expect((await json('POST', '/prompts', { prompt_id: id, type: 'text', template: 'x' })).status).toBe(201);
  await exec({
    trace_id: 'b1',
    provider: 'openai',
    model: 'gpt-x',
    agent_id: 'a1',
    user_id: 'u1',
    session_id: 's1',
    tags: ['prod', 'eu'],
    metadata: { plan: 'pro' },
    cost_usd: 0.000123,
    tokens_in: 10,
    tokens_out: 5,
    started_at: '2026-10-01T10:15:00Z',
    template_usages: [{ prompt_id: 'support' }],
  });
  await exec({
    trace_id: 'b2',
    provider: 'openai',
    model: 'gpt-x',
    agent_id: 'a1',
    user_id: 'u2',
    session_id: 's2',
    tags: ['prod'],
    metadata: { plan: 'free' },
    cost_usd: 0.1,
    tokens_in: 20,
    tokens_out: 10,
    started_at: '2026-10-01T10:45:00Z',
  });
  await exec({
    trace_id: 'b3',
    provider: 'anthropic',
    model: 'claude-y',
    agent_id: 'a2',
    user_id: 'u1',
    session_id: 's1',
    metadata: { plan: 'pro' },
    cost_usd: 1.234567891,
    tokens_in: 30,
    tokens_out: 15,
    started_at: '2026-10-02T00:00:00Z',
    template_usages: [{ prompt_id: 'support' }, { prompt_id: 'billing' }, { prompt_id: 'support' }],
  });
  await exec({
    trace_id: 'b4',
    provider: 'google',
    model: 'gem',
    agent_id: 'a2',
    user_id: 'u3',
    tags: ['eu', 'eu'],
    cost_usd: 0.2,
    tokens_in: 40,
    tokens_out: 20,
    started_at: '2026-10-05T12:00:00Z',
  });
  await exec({
    trace_id: 'b5',
    provider: 'acme',
    model: 'unknown-model-zz',
    user_id: 'u3',
    tokens_in: 50,
    tokens_out: 25,
    started_at: '2026-10-06T08:00:00Z',
  });
  for (let i = 0; i < 10; i++) await exec({ trace_id: `bulk-${i}`, user_id: 'u4', cost_usd: 0.000123, started_at: '2026-10-03T08:00:00Z' });
  // outside the window by one millisecond on each side
  await exec({ trace_id: 'before', user_id: 'u1', tags: ['prod'], cost_usd: 9, started_at: '2026-09-30T23:59:59.999Z' });
  await exec({ trace_id: 'after', user_id: 'u1', tags: ['prod'], cost_usd: 9, started_at: '2026-10-08T00:00:00Z' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`spend breakdowns (${mode} mode)`, () => {
  it('by user: exact sums, costliest first, the rest in other', async () => {
    const r = await spend('group_by=user');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      start: '2026-10-01T00:00:00.000Z',
      end: '2026-10-08T00:00:00.000Z',
      group_by: ['user'],
      granularity: null,
      source: 'rollup',
      groups: 4,
      other: null,
    });
    expect(r.body.total).toEqual(m('1.535920891', 15, 150, 75, 1));
    expect(brief(r.body.rows)).toEqual([
      { user: 'u1', cost_usd: '1.234690891', executions: 2 },
      { user: 'u3', cost_usd: '0.2', executions: 2 },
      { user: 'u2', cost_usd: '0.1', executions: 1 },
      { user: 'u4', cost_usd: '0.00123', executions: 10 },
    ]);
    const top = await spend('group_by=user&limit=2');
    expect(brief(top.body.rows)).toEqual([
      { user: 'u1', cost_usd: '1.234690891', executions: 2 },
      { user: 'u3', cost_usd: '0.2', executions: 2 },
    ]);
    expect(top.body.other).toEqual({ groups: 2, ...m('0.10123', 11, 20, 10, 0) });
  });

  it('by tag (an execution once per distinct tag; untagged under ""), by prompt, by metadata', async () => {
    const tags = await spend('group_by=tag');
    expect(tags.body.source).toBe('rollup');
    expect(brief(tags.body.rows)).toEqual([
      { tag: '', cost_usd: '1.235797891', executions: 12 },
      { tag: 'eu', cost_usd: '0.200123', executions: 2 },
      { tag: 'prod', cost_usd: '0.100123', executions: 2 },
    ]);
    expect(tags.body.total).toEqual(m('1.535920891', 15, 150, 75, 1)); // each execution once
    const prompts = await spend('group_by=prompt');
    expect(brief(prompts.body.rows)).toEqual([
      { prompt: 'support', cost_usd: '1.234690891', executions: 2 },
      { prompt: 'billing', cost_usd: '1.234567891', executions: 1 },
      { prompt: '', cost_usd: '0.30123', executions: 13 },
    ]);
    const plans = await spend('group_by=metadata.plan');
    expect(plans.body.source).toBe('rollup');
    expect(brief(plans.body.rows)).toEqual([
      { 'metadata.plan': 'pro', cost_usd: '1.234690891', executions: 2 },
      { 'metadata.plan': '', cost_usd: '0.20123', executions: 12 },
      { 'metadata.plan': 'free', cost_usd: '0.1', executions: 1 },
    ]);
    // with a dimension beside the key, or a filter by '' (the key absent): the executions rows, the same sums
    const byModel = await spend('group_by=metadata.plan,provider');
    expect(byModel.body.source).toBe('executions');
    const absent = await spend('metadata.plan=');
    expect(absent.body.source).toBe('executions');
    expect(absent.body.total).toMatchObject({ cost_usd: '0.20123', executions: 12 });
  });

  it('by time buckets and several dimensions at once', async () => {
    const days = await spend('group_by=day');
    expect(days.body.granularity).toBe('day');
    expect(brief(days.body.rows)).toEqual([
      { day: '2026-10-02T00:00:00.000Z', cost_usd: '1.234567891', executions: 1 },
      { day: '2026-10-05T00:00:00.000Z', cost_usd: '0.2', executions: 1 },
      { day: '2026-10-01T00:00:00.000Z', cost_usd: '0.100123', executions: 2 },
      { day: '2026-10-03T00:00:00.000Z', cost_usd: '0.00123', executions: 10 },
      { day: '2026-10-06T00:00:00.000Z', cost_usd: '0', executions: 1 },
    ]);
    const hours = await spend('group_by=time,model&granularity=hour&model=gpt-x');
    expect(brief(hours.body.rows)).toEqual([{ time: '2026-10-01T10:00:00.000Z', model: 'gpt-x', cost_usd: '0.100123', executions: 2 }]);
    const weeks = await spend('group_by=week');
    expect(brief(weeks.body.rows)).toEqual([
      { week: '2026-09-28T00:00:00.000Z', cost_usd: '1.335920891', executions: 13 },
      { week: '2026-10-05T00:00:00.000Z', cost_usd: '0.2', executions: 2 },
    ]);
    const month = await spend('group_by=month,provider,agent');
    expect(brief(month.body.rows)).toEqual([
      { month: '2026-10-01T00:00:00.000Z', provider: 'anthropic', agent: 'a2', cost_usd: '1.234567891', executions: 1 },
      { month: '2026-10-01T00:00:00.000Z', provider: 'google', agent: 'a2', cost_usd: '0.2', executions: 1 },
      { month: '2026-10-01T00:00:00.000Z', provider: 'openai', agent: 'a1', cost_usd: '0.100123', executions: 2 },
      { month: '2026-10-01T00:00:00.000Z', provider: '', agent: '', cost_usd: '0.00123', executions: 10 },
      { month: '2026-10-01T00:00:00.000Z', provider: 'acme', agent: '', cost_usd: '0', executions: 1 },
    ]);
  });

  it('every dimension filters, from the rollup that is exact for it', async () => {
    const byUser = await spend('group_by=model&user_id=u1');
    expect(brief(byUser.body.rows)).toEqual([
      { model: 'claude-y', cost_usd: '1.234567891', executions: 1 },
      { model: 'gpt-x', cost_usd: '0.000123', executions: 1 },
    ]);
    const oneTag = await spend('group_by=user&tag=eu');
    expect(oneTag.body.source).toBe('executions'); // no rollup holds a tag with a user
    expect(brief(oneTag.body.rows)).toEqual([
      { user: 'u3', cost_usd: '0.2', executions: 1 },
      { user: 'u1', cost_usd: '0.000123', executions: 1 },
    ]);
    // any of two tags: b1 carries both and counts once
    const twoTags = await spend('group_by=model&tag=eu&tag=prod');
    expect(twoTags.body.source).toBe('executions');
    expect(brief(twoTags.body.rows)).toEqual([
      { model: 'gem', cost_usd: '0.2', executions: 1 },
      { model: 'gpt-x', cost_usd: '0.100123', executions: 2 },
    ]);
    const tagByPrompt = await spend('group_by=tag&prompt_id=support');
    expect(brief(tagByPrompt.body.rows)).toEqual([
      { tag: '', cost_usd: '1.234567891', executions: 1 },
      { tag: 'eu', cost_usd: '0.000123', executions: 1 },
      { tag: 'prod', cost_usd: '0.000123', executions: 1 },
    ]);
    const meta = await spend('group_by=session&metadata.plan=pro&provider=openai,anthropic&agent_id=a1,a2');
    expect(brief(meta.body.rows)).toEqual([{ session: 's1', cost_usd: '1.234690891', executions: 2 }]);
    const none = await spend('session_id=nope');
    expect(none.body).toMatchObject({ total: m('0', 0), rows: [], groups: 0, other: null });
  });

  it('stays exact through a late correction that moves cost, user and tags', async () => {
    await correct('b4', { cost_usd: '0.25', user_id: 'u2', tags: ['dev'] });
    const users = await spend('group_by=user');
    expect(users.body.total).toEqual(m('1.585920891', 15, 150, 75, 1));
    expect(brief(users.body.rows)).toEqual([
      { user: 'u1', cost_usd: '1.234690891', executions: 2 },
      { user: 'u2', cost_usd: '0.35', executions: 2 },
      { user: 'u4', cost_usd: '0.00123', executions: 10 },
      { user: 'u3', cost_usd: '0', executions: 1 },
    ]);
    const tags = await spend('group_by=tag');
    expect(brief(tags.body.rows)).toEqual([
      { tag: '', cost_usd: '1.235797891', executions: 12 },
      { tag: 'dev', cost_usd: '0.25', executions: 1 },
      { tag: 'prod', cost_usd: '0.100123', executions: 2 },
      { tag: 'eu', cost_usd: '0.000123', executions: 1 },
    ]);
    const eu = await spend('group_by=tag&tag=eu&tag=dev');
    expect(brief(eu.body.rows)).toEqual([
      { tag: 'dev', cost_usd: '0.25', executions: 1 },
      { tag: 'eu', cost_usd: '0.000123', executions: 1 },
    ]);
    // the project stats (the day grain of spend_by_dims) agree with the breakdown total
    const stats = await json('GET', `/stats?${WINDOW}`);
    expect(stats.body.total_cost).toBe(1.585920891);
  });

  it('rollups empty beside stored executions (rows written before migrations 006 and 018) are filled at boot', async () => {
    const before = await Promise.all(['group_by=user', 'group_by=tag', 'group_by=prompt,day'].map((q) => spend(q)));
    for (const t of ['spend_hourly', ...new Set(SPEND_ROLLUPS.map((r) => r.table))])
      await svc.stores.clickhouse.command(`TRUNCATE TABLE ${t}`);
    expect((await spend('group_by=user')).body.rows).toEqual([]);
    const env = svc.testEnv;
    await svc.close();
    svc = await startTestService({}, { env });
    const after = await Promise.all(['group_by=user', 'group_by=tag', 'group_by=prompt,day'].map((q) => spend(q)));
    expect(after.map((r) => r.body)).toEqual(before.map((r) => r.body));
    // and once only: a second boot leaves them as they are
    await svc.close();
    svc = await startTestService({}, { env });
    expect((await spend('group_by=user')).body).toEqual(before[0]!.body);
  });

  it('refuses bad input with 400 naming it', async () => {
    const unknown = await spend('group_by=user,colour');
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('"colour"');
    expect((await spend('group_by=day,hour')).status).toBe(400);
    expect((await spend('group_by=day&granularity=hour')).status).toBe(400);
    expect((await spend('group_by=metadata.')).status).toBe(400);
    expect((await spend('window=7d')).body.detail).toContain('window');
    expect((await json('GET', '/spend?window=7x')).body.detail).toContain('window');
    expect((await json('GET', '/spend?limit=0')).status).toBe(400);
    expect((await json('GET', '/spend?colour=red')).body.detail).toContain('colour');
    const ok = await json('GET', '/spend?window=24h&group_by=user');
    expect(ok.status).toBe(200);
    expect(new Date(ok.body.end).getTime() - new Date(ok.body.start).getTime()).toBe(24 * 3_600_000);
  });
  it('migration 022 keeps the days only the daily rollups held (their executions removed before 018), once', async () => {
    const OLD = 'start=2026-09-01T00:00:00Z&end=2026-10-08T00:00:00Z';
    const read = async () => {
      const [stats, models] = await Promise.all([json('GET', `/stats?${OLD}`), json('GET', `/spend?${OLD}&group_by=model,day&limit=1000`)]);
      return { stats: stats.body, models: models.body };
    };
    const before = await read();
    // A day whose executions retention removed before 018 ran: only the daily rollups of 001 hold it.
    await svc.stores.clickhouse.command(
      `INSERT INTO daily_spend (project_id, day, provider, model, agent_id, cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
       VALUES ('default', '2026-09-10', 'openai', 'gpt-x', 'a1', 2.000000007, 7, 3, 4, 0)`,
    );
    await svc.stores.clickhouse.command(
      "INSERT INTO daily_prompt_spend (project_id, day, prompt_id, cost_usd, executions) VALUES ('default', '2026-09-10', 'billing', 2.000000007, 4)",
    );
    const unapply = async (truncate: string[] = []) => {
      for (const t of truncate) await svc.stores.clickhouse.command(`TRUNCATE TABLE ${t}`);
      await svc.stores.clickhouse.command('ALTER TABLE schema_migrations DELETE WHERE version = 22', {}, { mutations_sync: '1' });
      const env = svc.testEnv;
      await svc.close();
      svc = await startTestService({ AUTH_REQUIRED: 'false' }, { env });
    };
    await unapply();
    const after = await read();
    expect(after.stats.total_cost).toBe(Number((before.stats.total_cost + 2.000000007).toFixed(9)));
    expect(after.stats.total_executions).toBe(before.stats.total_executions + 4);
    expect(after.stats.daily_costs.find((d: { date: string }) => d.date === '2026-09-10')).toMatchObject({
      cost: 2.000000007,
      executions: 4,
    });
    const billing = (stats: { top_prompts: Array<{ prompt_id: string; execution_count: number }> }) =>
      stats.top_prompts.find((p) => p.prompt_id === 'billing')?.execution_count ?? 0;
    expect(billing(after.stats)).toBe(billing(before.stats) + 4);
    expect(after.models.rows).toHaveLength(before.models.rows.length + 1);
    expect(after.models.rows).toEqual(
      expect.arrayContaining([...before.models.rows, { model: 'gpt-x', day: '2026-09-10T00:00:00.000Z', ...m('2.000000007', 4, 7, 3) }]),
    );
    // run again: added once
    await unapply();
    expect(await read()).toEqual(after);
    // upgrading from before 018 (the rollups by grain empty when 022 runs): the old day from the
    // daily rollups, the rest from the executions at boot
    await unapply(['spend_by_dims', 'spend_by_attribute']);
    expect(await read()).toEqual(after);
  });

  // Last: it leaves the project without executions rows, as retention would.
  it('migration 021 moves the rollups by tag, prompt and API key of 018 into one table, once, without their executions', async () => {
    const queries = ['group_by=tag', 'group_by=prompt,day', 'group_by=api_key', 'group_by=tag,model&agent_id=a1', 'prompt_id=support'];
    const before = await Promise.all(queries.map((q) => spend(q)));
    expect(before.map((r) => r.body.source)).toEqual(queries.map(() => 'rollup'));
    const ch = svc.stores.clickhouse;
    // What 020 left: the three tables of 018 as their views filled them, 021 not applied; and the
    // raw rows gone (retention), so only what the migration copies can answer.
    const old = { tag: ['spend_by_tag', 'tag'], prompt: ['spend_by_prompt', 'prompt_id'], api_key: ['spend_by_api_key', 'api_key_id'] };
    for (const [attribute, [table, column]] of Object.entries(old))
      await ch.command(
        `INSERT INTO ${table} (project_id, grain, bucket, ${column}, provider, model, agent_id, environment, cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
         SELECT project_id, grain, bucket, value, provider, model, agent_id, environment, cost_usd, tokens_in, tokens_out, executions, unpriced_executions
         FROM spend_by_attribute WHERE attribute = '${attribute}'`,
      );
    const rows = async () =>
      (
        await svc.stores.clickhouse.query<{ n: string }>(
          "SELECT toString(sum(executions)) AS n FROM spend_by_attribute WHERE project_id = 'default'",
        )
      )[0]?.n;
    const stored = await rows();
    const unapply = async () => {
      await svc.stores.clickhouse.command('ALTER TABLE schema_migrations DELETE WHERE version = 21', {}, { mutations_sync: '1' });
      const env = svc.testEnv;
      await svc.close();
      svc = await startTestService({ AUTH_REQUIRED: 'false' }, { env });
    };
    await ch.command('TRUNCATE TABLE spend_by_attribute');
    await ch.command('TRUNCATE TABLE executions');
    await unapply();
    expect((await Promise.all(queries.map((q) => spend(q)))).map((r) => r.body)).toEqual(before.map((r) => r.body));
    // run again (as after an interruption): nothing is copied twice
    await unapply();
    expect(await rows()).toBe(stored);
    expect((await spend('group_by=tag')).body).toEqual(before[0]!.body);
  });
});
