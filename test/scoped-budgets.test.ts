// Budgets at every level: scoped to an agent (daily, three thresholds, signed webhook), a user
// (weekly, Slack format), a tag (monthly, block mode) and the project (daily). Each threshold
// fires exactly once per budget and period — through repeated and concurrent evaluations and a
// new period —, /budget/check answers for every budget that applies, roles and validation hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, testEnv } from './helpers/env.ts';
import { TestIdp } from './helpers/idp.ts';
import { getJson, startTestService, type TestService } from './helpers/service.ts';
import { until, WebhookReceiver } from './helpers/webhook-receiver.ts';

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
