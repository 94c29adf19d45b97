// Budgets at every level: scoped to an agent (daily, three thresholds, signed webhook), a user
// (weekly, Slack format), a tag (monthly, block mode), the project (daily) and an API key (daily,
// block mode: two keys of one project send direct records and OTLP traces). Each threshold fires
// exactly once per budget and period — through repeated and concurrent evaluations and a new
// period —, /budget/check answers for every budget that applies (an API key's for its caller),
// the breakdown by API key equals hand-computed sums through a late correction, roles and
// validation hold; in server mode, an older evaluation's state cannot overwrite a newer one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until, WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createLogger } from '../../src/logger.ts';
import { createScopedBudgetStateStore } from '../../src/spend/scoped-budget-state.ts';

const idp = new TestIdp();
const signed = new WebhookReceiver();
const slack = new WebhookReceiver();
let svc: TestService;
let adminJwt: string;
let memberJwt: string;
const PROJECT = 'acme-scoped';
const P = `/api/projects/${PROJECT}`;
let now = new Date('2026-11-18T12:00:00.000Z'); // a Wednesday: the week started on Monday 16th
const ids: Record<string, string> = {};

const call = (method: string, path: string, body?: unknown, jwt = adminJwt) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${jwt}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
let seq = 0;
async function spend(
  cost: number,
  who: { agent_id?: string; user_id?: string; tags?: string[] },
  startedAt = new Date(now.getTime() - 3_600_000),
) {
  const r = await call('POST', '/executions', { trace_id: `s-${++seq}`, cost_usd: cost, started_at: startedAt.toISOString(), ...who });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}
const evaluate = () => svc.domain.spend.scopedBudgets.evaluate(PROJECT);
const alertsOf = async (id: string) =>
  (await call('GET', `/budgets/${id}`)).body.alerts as Array<{ period_start: string; threshold_pct: number }>;
const check = async (q: string) => (await call('GET', `/budget/check${q}`)).body;

beforeAll(async () => {
  await idp.start();
  await signed.start();
  await slack.start();
  svc = await startTestService(
    {},
    {
      env: await testEnv(
        idp.env({
          AUTH_REQUIRED: 'true',
          WEBHOOK_ALLOW_PRIVATE: 'true',
          WEBHOOK_BACKOFF_MS: '50',
          WEBHOOK_ATTEMPTS: '4',
          BUDGET_EVAL_DEBOUNCE_MS: '10',
          BUDGET_CHECK_CACHE_MS: '50',
        }),
      ),
    },
  );
  svc.domain.spend.clock.now = () => now;
  adminJwt = await idp.token({ sub: 'alice', project_id: PROJECT, role: 'admin' });
  memberJwt = await idp.token({ sub: 'bob', project_id: PROJECT, role: 'member' });
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await signed.stop();
  await slack.stop();
  await dropTestDatabases();
});

describe(`scoped budgets (${mode} mode)`, () => {
  it('are created by admins, validated, one per scope and period', async () => {
    const agent = await call('POST', '/budgets', {
      scope: { kind: 'agent', value: 'a1' },
      period: 'day',
      amount_usd: 1,
      thresholds_pct: [100, 50, 80],
      webhook_url: signed.url,
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    expect(agent.body).toMatchObject({
      scope: { kind: 'agent', value: 'a1' },
      period: 'day',
      amount_usd: 1,
      thresholds_pct: [50, 80, 100],
      enforcement_mode: 'alert',
      webhook_format: 'signed',
      spent_usd: 0,
      status: 'ok',
      period_start: '2026-11-18T00:00:00.000Z',
      reset_at: '2026-11-19T00:00:00.000Z',
    });
    expect(agent.body.webhook_secret).toMatch(/^whsec_/);
    signed.secret = agent.body.webhook_secret;
    ids.agent = agent.body.id;
    const user = await call('POST', '/budgets', {
      scope: { kind: 'user', value: 'u1' },
      period: 'week',
      amount_usd: 2,
      thresholds_pct: [50, 100],
      webhook_url: slack.url,
      webhook_format: 'slack',
    });
    expect(user.body).toMatchObject({
      period_start: '2026-11-16T00:00:00.000Z',
      reset_at: '2026-11-23T00:00:00.000Z',
      webhook_format: 'slack',
    });
    expect(user.body.webhook_secret).toBeUndefined();
    ids.user = user.body.id;
    const tag = await call('POST', '/budgets', {
      scope: { kind: 'tag', value: 'prod' },
      period: 'month',
      amount_usd: 3,
      thresholds_pct: [100],
      enforcement_mode: 'block',
    });
    expect(tag.body).toMatchObject({ period_start: '2026-11-01T00:00:00.000Z', reset_at: '2026-12-01T00:00:00.000Z' });
    ids.tag = tag.body.id;
    ids.project = (
      await call('POST', '/budgets', { scope: { kind: 'project' }, period: 'day', amount_usd: 10, thresholds_pct: [100] })
    ).body.id;

    expect((await call('POST', '/budgets', { scope: { kind: 'agent', value: 'a1' }, period: 'day', amount_usd: 5 })).status).toBe(409);
    expect((await call('POST', '/budgets', { scope: { kind: 'agent' }, period: 'day', amount_usd: 5 })).body.detail).toContain(
      'scope.value',
    );
    expect((await call('POST', '/budgets', { scope: { kind: 'project', value: 'x' }, period: 'day', amount_usd: 5 })).status).toBe(400);
    expect(
      (await call('POST', '/budgets', { scope: { kind: 'user', value: 'u9' }, period: 'day', amount_usd: 5, webhook_format: 'slack' })).body
        .detail,
    ).toContain('webhook_url');
    expect((await call('POST', '/budgets', { scope: { kind: 'team', value: 'x' }, period: 'day', amount_usd: 5 })).status).toBe(400);
    expect((await call('POST', '/budgets', { scope: { kind: 'user', value: 'u9' }, period: 'year', amount_usd: 5 })).status).toBe(400);
    expect((await call('POST', '/budgets', { scope: { kind: 'user', value: 'u9' }, period: 'day', amount_usd: 0 })).status).toBe(400);
    expect((await call('POST', '/budgets', { scope: { kind: 'user', value: 'u9' }, period: 'day', amount_usd: 5 }, memberJwt)).status).toBe(
      403,
    );
    const list = await call('GET', '/budgets', undefined, memberJwt);
    expect(list.body.items).toHaveLength(4);
    expect(list.body.items[0].webhook_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/…$/); // members see the origin only
  });

  it('each threshold fires exactly once per budget and period, on its channel', async () => {
    await spend(0.6, { agent_id: 'a1', user_id: 'u1', tags: ['prod'] });
    await evaluate();
    await spend(0.3, { agent_id: 'a1', user_id: 'u1', tags: ['prod'] });
    await evaluate();
    await spend(0.2, { agent_id: 'a1', user_id: 'u1', tags: ['prod'] });
    await Promise.all([evaluate(), evaluate(), evaluate()]);
    await evaluate();
    expect((await alertsOf(ids.agent!)).map((a) => [a.period_start, a.threshold_pct])).toEqual([
      ['2026-11-18', 100],
      ['2026-11-18', 80],
      ['2026-11-18', 50],
    ]);
    expect((await alertsOf(ids.user!)).map((a) => a.threshold_pct)).toEqual([50]); // 1.1 of 2
    expect(await alertsOf(ids.tag!)).toEqual([]); // 1.1 of 3
    await until(() => signed.verified.length >= 3 && slack.deliveries.length >= 1, 'the deliveries');
    expect(signed.verified.map((d) => d.body.threshold_pct).sort((a, b) => a - b)).toEqual([50, 80, 100]);
    expect(signed.verified[0]!.body).toMatchObject({
      type: 'budget.scope.threshold',
      project_id: PROJECT,
      scope: { kind: 'agent', value: 'a1' },
      period: 'day',
      period_start: '2026-11-18',
      amount_usd: 1,
    });
    expect(new Set(signed.verified.map((d) => d.headers['x-traceloom-event-id'])).size).toBe(3);
    expect(slack.deliveries).toHaveLength(1);
    expect(slack.deliveries[0]!.body).toEqual({
      text: expect.stringContaining('user "u1" in project acme-scoped reached 55% of its weekly budget ($1.1 of $2'),
    });

    // the next day: a new period for the daily budget fires again; the weekly one does not
    now = new Date('2026-11-19T12:00:00.000Z');
    await spend(0.6, { agent_id: 'a1', user_id: 'u1' });
    await evaluate();
    await evaluate();
    expect((await alertsOf(ids.agent!)).map((a) => [a.period_start, a.threshold_pct])).toEqual([
      ['2026-11-19', 50],
      ['2026-11-18', 100],
      ['2026-11-18', 80],
      ['2026-11-18', 50],
    ]);
    expect((await alertsOf(ids.user!)).map((a) => a.threshold_pct)).toEqual([50]); // 1.7 of 2: 85 %
    await until(() => signed.verified.length >= 4, 'the new period alert');
    expect(signed.verified).toHaveLength(4);
    const agent = (await call('GET', `/budgets/${ids.agent}`)).body;
    expect(agent).toMatchObject({
      spent_usd: 0.6,
      remaining_usd: 0.4,
      pct_used: 60,
      status: 'alert',
      period_start: '2026-11-19T00:00:00.000Z',
    });
  });

  it('/budget/check answers for every budget that applies; block mode refuses calls in its scope only', async () => {
    await spend(2, { agent_id: 'a2', user_id: 'u2', tags: ['prod', 'eu'] }); // the tag's month: 1.1 + 2 = 3.1 of 3
    await evaluate();
    const none = await check('');
    expect(none.allowed).toBe(true);
    expect(none.budgets.map((b: { scope: { kind: string } }) => b.scope.kind)).toEqual(['project']);
    const tagged = await check('?tag=prod');
    expect(tagged.allowed).toBe(false);
    expect(tagged.budgets.find((b: { id: string }) => b.id === ids.tag)).toMatchObject({
      allowed: false,
      status: 'exceeded',
      enforcement_mode: 'block',
      remaining_usd: 0,
      reset_at: '2026-12-01T00:00:00.000Z',
    });
    const agent = await check('?agent_id=a1');
    expect(agent.allowed).toBe(true);
    expect(agent.budgets.map((b: { id: string }) => b.id).sort()).toEqual([ids.agent, ids.project].sort());
    const all = await check('?agent_id=a1&user_id=u1&tag=prod&tag=other');
    expect(all.budgets.map((b: { id: string }) => b.id).sort()).toEqual([ids.agent, ids.user, ids.tag, ids.project].sort());
    expect(all.allowed).toBe(false);
    expect(all.budgets.find((b: { id: string }) => b.id === ids.user)).toMatchObject({
      status: 'alert',
      remaining_usd: 0.3,
      period: 'week',
    });
    expect((await call('GET', '/budget/check?colour=red')).status).toBe(400);

    // a new month lifts the block without waiting for an evaluation
    now = new Date('2026-12-01T00:00:01.000Z');
    expect((await check('?tag=prod')).allowed).toBe(true);
    now = new Date('2026-11-19T12:00:00.000Z');
  });

  it('are edited by admins; thresholds fired this period do not fire again', async () => {
    expect((await call('PUT', `/budgets/${ids.agent}`, { amount_usd: 0.5 }, memberJwt)).status).toBe(403);
    expect((await call('PUT', '/budgets/999999', { amount_usd: 0.5 })).status).toBe(404);
    expect((await call('PUT', `/budgets/${ids.agent}`, { period: 'week' })).status).toBe(400);
    expect((await call('PUT', `/budgets/${ids.user}`, { webhook_url: null })).body.detail).toContain('webhook_url'); // slack needs one
    // the agent has spent 0.6 today: a budget of 0.5 crosses 80 and 100 % now (50 % fired already)
    const rotated = await call('PUT', `/budgets/${ids.agent}`, { rotate_webhook_secret: true });
    expect(rotated.body.webhook_secret).toMatch(/^whsec_/);
    expect(rotated.body.webhook_secret).not.toBe(signed.secret);
    signed.secret = rotated.body.webhook_secret;
    const lower = await call('PUT', `/budgets/${ids.agent}`, { amount_usd: 0.5 });
    expect(lower.status, JSON.stringify(lower.body)).toBe(200);
    expect(lower.body).toMatchObject({ amount_usd: 0.5, spent_usd: 0.6, status: 'exceeded', thresholds_pct: [50, 80, 100] });
    const more = await call('PUT', `/budgets/${ids.agent}`, { thresholds_pct: [50, 80, 100, 120] });
    expect(more.body.webhook_secret).toBeUndefined();
    await evaluate();
    // yesterday (1.1 spent) is still evaluated for its alerts during the first 48 hours of today, with the budget as it is now: 220 % crosses the new 120 %
    expect((await alertsOf(ids.agent!)).map((a) => [a.period_start, a.threshold_pct])).toEqual([
      ['2026-11-19', 120],
      ['2026-11-19', 100],
      ['2026-11-19', 80],
      ['2026-11-19', 50],
      ['2026-11-18', 120],
      ['2026-11-18', 100],
      ['2026-11-18', 80],
      ['2026-11-18', 50],
    ]);
    await until(() => signed.verified.length >= 8, 'the deliveries signed with the new secret');
    expect(
      signed.verified
        .slice(4)
        .map((d) => `${d.body.period_start} ${d.body.threshold_pct}`)
        .sort(),
    ).toEqual(['2026-11-18 120', '2026-11-19 100', '2026-11-19 120', '2026-11-19 80']);
  });

  it('are removed with their alerts', async () => {
    expect((await call('DELETE', `/budgets/${ids.tag}`, undefined, memberJwt)).status).toBe(403);
    expect((await call('DELETE', `/budgets/${ids.tag}`)).status).toBe(204);
    expect((await call('GET', `/budgets/${ids.tag}`)).status).toBe(404);
    expect((await call('DELETE', `/budgets/${ids.tag}`)).status).toBe(404);
    expect((await check('?tag=prod')).allowed).toBe(true);
  });
});

describe(`budgets of an API key (${mode} mode)`, () => {
  const KP = 'acme-keys';
  let keysAdminJwt: string;
  const keys: Record<'a' | 'b', { key_id: string; key: string }> = {} as never;
  let budgetId: string;
  const asJwt = (method: string, path: string, body?: unknown) =>
    getJson(`${svc.url}/api/projects/${KP}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${keysAdminJwt}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const asKey = (k: 'a' | 'b', method: string, path: string, body?: unknown) =>
    getJson(`${svc.url}${path.startsWith('/api/v1/') ? '' : `/api/projects/${KP}`}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', 'X-API-Key': keys[k].key },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const hourAgo = () => new Date(now.getTime() - 3_600_000);
  async function record(by: 'a' | 'b' | 'jwt', traceId: string, cost: number) {
    const body = { trace_id: traceId, cost_usd: cost, started_at: hourAgo().toISOString(), model: 'm1' };
    const r = by === 'jwt' ? await asJwt('POST', '/executions', body) : await asKey(by, 'POST', '/executions', body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');
  /** One span in the flat OTLP form: an inference span with a stated cost, or (cost undefined) an agent span. */
  function span(traceId: string, spanId: string, parent: string, cost?: number) {
    const start = BigInt(hourAgo().getTime()) * 1_000_000n;
    return {
      trace_id: traceId,
      span_id: spanId,
      ...(parent ? { parent_span_id: parent } : {}),
      span_name: cost === undefined ? 'invoke_agent planner' : 'chat m1',
      start_time_ns: String(start),
      end_time_ns: String(start + 1_000_000_000n),
      attributes:
        cost === undefined
          ? { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' }
          : {
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': 'openai',
              'gen_ai.request.model': 'm1',
              'gen_ai.usage.input_tokens': 10,
              'gen_ai.usage.output_tokens': 5,
              'gen_ai.usage.cost': cost,
            },
    };
  }
  async function sendSpans(k: 'a' | 'b', spans: object[]) {
    const r = await asKey(k, 'POST', '/api/v1/traces', { spans });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  const execution = (traceId: string, ok: (e: any) => boolean) =>
    until(async () => {
      const r = await asJwt('GET', `/executions/${traceId}`);
      return r.status === 200 && ok(r.body) ? r.body : undefined;
    }, `execution ${traceId}`);
  const evaluateKeys = () => svc.domain.spend.scopedBudgets.evaluate(KP);
  const keyAlerts = async () =>
    ((await asJwt('GET', `/budgets/${budgetId}`)).body.alerts as Array<{ period_start: string; threshold_pct: number }>).map((a) => [
      a.period_start,
      a.threshold_pct,
    ]);
  const DAY = 'start=2026-12-10T00:00:00Z&end=2026-12-11T00:00:00Z';
  const byKey = async (q = '') => {
    const r = await asJwt('GET', `/spend?${DAY}&group_by=api_key${q}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return {
      source: r.body.source,
      total: r.body.total.cost_usd,
      rows: Object.fromEntries(r.body.rows.map((x: any) => [x.api_key, [x.cost_usd, x.executions]])),
    };
  };
  const TA = hex(0xa1, 32);
  const TS = hex(0x5b, 32);

  beforeAll(async () => {
    now = new Date('2026-12-10T12:00:00.000Z');
    keysAdminJwt = await idp.token({ sub: 'carol', project_id: KP, role: 'admin' });
    for (const k of ['a', 'b'] as const) {
      const r = await asJwt('POST', '/api-keys', { name: `key-${k}` });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      keys[k] = { key_id: r.body.key_id, key: r.body.key };
    }
  });

  it('are created for a key of the project only', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const missing = await asJwt('POST', '/budgets', { scope: { kind: 'api_key', value: unknown }, period: 'day', amount_usd: 1 });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toContain(unknown);
    expect((await asJwt('POST', '/budgets', { scope: { kind: 'api_key', value: 'not-a-key' }, period: 'day', amount_usd: 1 })).status).toBe(
      422,
    );
    // a key of another project is not this project's
    const other = await call('POST', '/api-keys', { name: 'elsewhere' });
    expect(other.status).toBe(201);
    expect(
      (await asJwt('POST', '/budgets', { scope: { kind: 'api_key', value: other.body.key_id }, period: 'day', amount_usd: 1 })).status,
    ).toBe(422);
    expect((await asJwt('POST', '/budgets', { scope: { kind: 'api_key' }, period: 'day', amount_usd: 1 })).body.detail).toContain(
      'an API key budget',
    );
    const created = await asJwt('POST', '/budgets', {
      scope: { kind: 'api_key', value: keys.a.key_id },
      period: 'day',
      amount_usd: 1,
      thresholds_pct: [50, 100],
      enforcement_mode: 'block',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ scope: { kind: 'api_key', value: keys.a.key_id }, spent_usd: 0, status: 'ok' });
    budgetId = created.body.id;
    expect(
      (await asJwt('POST', '/budgets', { scope: { kind: 'api_key', value: keys.a.key_id }, period: 'day', amount_usd: 2 })).status,
    ).toBe(409);
  });

  it('executions record the key that sent them: direct records, OTLP traces, a trace split between keys', async () => {
    await record('a', 'k-a1', 0.3);
    await record('b', 'k-b1', 5);
    await record('jwt', 'k-jwt', 0.7);
    await sendSpans('a', [span(TA, hex(1, 16), '', 0.25)]);
    // a trace split across requests of two keys: the child (with the cost) from b, then the root from a
    await sendSpans('b', [span(TS, hex(3, 16), hex(2, 16), 0.2)]);
    await sendSpans('a', [span(TS, hex(2, 16), '')]);

    expect((await asJwt('GET', '/executions/k-a1')).body.api_key_id).toBe(keys.a.key_id);
    expect((await asJwt('GET', '/executions/k-b1')).body.api_key_id).toBe(keys.b.key_id);
    expect((await asJwt('GET', '/executions/k-jwt')).body.api_key_id).toBeNull();
    expect((await execution(TA, (e) => e.api_key_id !== null)).api_key_id).toBe(keys.a.key_id);
    // the execution takes its root span's key
    const split = await execution(TS, (e) => e.span_count === 2);
    expect(split).toMatchObject({ api_key_id: keys.a.key_id, cost_usd: 0.2, cost_source: 'provided' });
    const listed = await asJwt('GET', `/executions?api_key_id=${keys.b.key_id}`);
    expect(listed.body.items.map((e: { trace_id: string }) => e.trace_id)).toEqual(['k-b1']);
    expect(listed.body.total).toBe(1);
  });

  it('fire exactly once per period and threshold, for the spend of their key only; /budget/check answers for the caller', async () => {
    await evaluateKeys();
    // key a: 0.3 + 0.25 + 0.2 = 0.75 of 1 (b's 5 and the token's 0.7 do not count)
    expect((await asJwt('GET', `/budgets/${budgetId}`)).body).toMatchObject({ spent_usd: 0.75, status: 'alert', blocked: false });
    expect(await keyAlerts()).toEqual([['2026-12-10', 50]]);
    await record('a', 'k-a2', 0.5);
    await Promise.all([evaluateKeys(), evaluateKeys(), evaluateKeys()]);
    await evaluateKeys();
    expect(await keyAlerts()).toEqual([
      ['2026-12-10', 100],
      ['2026-12-10', 50],
    ]);

    const asA = (await asKey('a', 'GET', '/budget/check')).body;
    expect(asA.allowed).toBe(false);
    expect(asA.budgets).toEqual([
      expect.objectContaining({ id: budgetId, scope: { kind: 'api_key', value: keys.a.key_id }, allowed: false, status: 'exceeded' }),
    ]);
    const asB = (await asKey('b', 'GET', '/budget/check')).body;
    expect(asB).toMatchObject({ allowed: true, budgets: [] });
    expect((await asJwt('GET', '/budget/check')).body).toMatchObject({ allowed: true, budgets: [] });
    const asked = (await asJwt('GET', `/budget/check?api_key_id=${keys.a.key_id}`)).body;
    expect(asked.allowed).toBe(false);
    expect(asked.budgets.map((b: { id: string }) => b.id)).toEqual([budgetId]);
  });

  it('breakdown by API key equals the hand-computed sums, through a late correction that moves spend between keys', async () => {
    const a = keys.a.key_id;
    const b = keys.b.key_id;
    expect(await byKey()).toEqual({
      source: 'rollup',
      total: '6.95',
      rows: { [b]: ['5', 1], [a]: ['1.25', 4], '': ['0.7', 1] },
    });
    expect((await byKey(`&api_key_id=${a}`)).total).toBe('1.25');
    // with a tag dimension the executions rows answer: the same sums (no execution is tagged)
    const tagged = (await asJwt('GET', `/spend?${DAY}&group_by=api_key,tag`)).body;
    expect(tagged.source).toBe('executions');
    expect(tagged.rows.map((x: any) => [x.api_key, x.tag, x.cost_usd])).toEqual([
      [b, '', '5'],
      [a, '', '1.25'],
      ['', '', '0.7'],
    ]);

    // k-a2 (0.5, key a) corrected late: it was b's, and cost 0.400000001
    const [row] = await svc.stores.clickhouse.query<Record<string, unknown>>(
      'SELECT * FROM executions WHERE project_id = {p:String} AND trace_id = {t:String} AND sign = 1 ORDER BY version DESC LIMIT 1',
      { p: KP, t: 'k-a2' },
    );
    await svc.stores.clickhouse.insert('executions', [
      { ...row, sign: -1 },
      { ...row, api_key_id: b, cost_usd: '0.400000001', version: Number(row!.version) + 1, sign: 1 },
    ]);
    expect(await byKey()).toEqual({
      source: 'rollup',
      total: '6.850000001',
      rows: { [b]: ['5.400000001', 2], [a]: ['0.75', 3], '': ['0.7', 1] },
    });
    await evaluateKeys();
    expect((await asJwt('GET', `/budgets/${budgetId}`)).body).toMatchObject({ spent_usd: 0.75, status: 'alert', blocked: false });
    expect((await asKey('a', 'GET', '/budget/check')).body.allowed).toBe(true);
    expect(await keyAlerts()).toEqual([
      ['2026-12-10', 100],
      ['2026-12-10', 50],
    ]); // fired thresholds stay fired, none again
  });

  it('a new period fires again', async () => {
    now = new Date('2026-12-11T12:00:00.000Z');
    await record('a', 'k-a3', 0.6);
    await evaluateKeys();
    await evaluateKeys();
    expect(await keyAlerts()).toEqual([
      ['2026-12-11', 50],
      ['2026-12-10', 100],
      ['2026-12-10', 50],
    ]);
  });

  // The Redis state exists in server mode only (as in budget-state.unit.test.ts: defined only when there is one).
  if (mode === 'server')
    it('an evaluation finishing late cannot overwrite the state a newer one published (Redis)', async () => {
      const older = await evaluateKeys();
      await record('a', 'k-a4', 0.5); // 1.1 of 1: exceeded, blocked
      const newer = await evaluateKeys();
      expect(newer.budgetVersion).toBeGreaterThan(older.budgetVersion);
      // another node publishes the older evaluation's state last (its wall clock even ahead)
      const otherNode = createScopedBudgetStateStore(svc.stores.redis, 0, createLogger({ logLevel: 'silent' }));
      expect(await otherNode.publish(KP, { ...older, readAt: Date.now() + 3_600_000 })).toBe(false);
      const stored = await otherNode.published(KP);
      expect(stored!.budgetVersion).toBeGreaterThanOrEqual(newer.budgetVersion); // the newer one (or one after it)
      expect(stored?.budgets.find((x) => x.id === budgetId)?.spentNanos).toBe('1100000000');
      await new Promise((r) => setTimeout(r, 60)); // past BUDGET_CHECK_CACHE_MS: this node reads Redis again
      expect((await asKey('a', 'GET', '/budget/check')).body.allowed).toBe(false);
      // a newer state still replaces it (an hour ahead: no evaluation running meanwhile is newer)
      expect(await otherNode.publish(KP, { ...newer, budgetVersion: newer.budgetVersion + 3_600_000, budgets: [] })).toBe(true);
      await new Promise((r) => setTimeout(r, 60));
      expect((await asKey('a', 'GET', '/budget/check')).body).toMatchObject({ allowed: true, budgets: [] });
    });
});
