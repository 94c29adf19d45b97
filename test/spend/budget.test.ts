// Budgets end to end over HTTP: validation and roles; threshold then 100% → exactly two alerts,
// delivered to a loopback receiver that verifies the signature, a failing receiver retried;
// concurrent evaluations and a restart mid-month add no alert; block mode → check false and
// render 402 while ingest still succeeds; the check works with ingest keys; month rollover.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, testEnv, type TestEnv } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until, WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { ensureProject } from '../../src/auth/project-repository.ts';

const idp = new TestIdp();
const receiver = new WebhookReceiver();
let env: TestEnv;
let svc: TestService;
let adminJwt: string;
let memberJwt: string;
let ingestKey: string;
const PROJECT = 'acme-spend';
const P = `/api/projects/${PROJECT}`;
const NOV = new Date('2026-11-15T12:00:00.000Z');

const call = (method: string, path: string, auth: Record<string, string>, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...auth },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const admin = () => ({ Authorization: `Bearer ${adminJwt}` });
const ingest = () => ({ 'X-API-Key': ingestKey });
let seq = 0;
async function spend(costUsd: number, startedAt = '2026-11-10T09:00:00Z') {
  const r = await call('POST', '/executions', ingest(), {
    trace_id: `t-${++seq}`,
    cost_usd: costUsd,
    started_at: startedAt,
    provider: 'openai',
    model: 'gpt-x',
  });
  expect(r.status).toBe(201);
}
const budget = async () => (await call('GET', '/budget', admin())).body;
const alertsOf = async (month: string) => (await budget()).alerts.filter((a: { month: string }) => a.month === month);

async function boot() {
  svc = await startTestService({}, { env });
  svc.domain.spend.clock.now = () => NOV;
}

beforeAll(async () => {
  await idp.start();
  await receiver.start();
  env = await testEnv(
    idp.env({
      AUTH_REQUIRED: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true', // the receiver is on loopback
      WEBHOOK_BACKOFF_MS: '50',
      WEBHOOK_ATTEMPTS: '4',
      BUDGET_EVAL_DEBOUNCE_MS: '10',
      BUDGET_CHECK_CACHE_MS: '50',
    }),
  );
  await boot();
  adminJwt = await idp.token({ sub: 'alice', project_id: PROJECT, role: 'admin' });
  memberJwt = await idp.token({ sub: 'bob', project_id: PROJECT, role: 'member' });
  const k = await call('POST', '/api-keys', admin(), { name: 'agent', scope: 'ingest' });
  expect(k.status).toBe(201);
  ingestKey = k.body.key;
});
afterAll(async () => {
  await svc?.close();
  await receiver.stop();
  await idp.stop();
  await dropTestDatabases();
});

describe(`budgets (${mode} mode)`, () => {
  it('without a budget: spend shown, no limit, check allows', async () => {
    await spend(1.5);
    const b = await until(async () => {
      const x = await budget();
      return x.spent_usd === 1.5 && x;
    }, 'spend visible');
    expect(b).toMatchObject({
      budget_monthly_usd: null,
      alert_threshold_pct: null,
      enforcement_mode: null,
      webhook_url: null,
      month: '2026-11',
      remaining_usd: null,
      pct_used: null,
      status: 'ok',
      blocked: false,
      reset_at: '2026-12-01T00:00:00.000Z',
      alerts: [],
    });
    const c = await call('GET', '/budget/check', ingest());
    expect(c.body).toEqual({
      allowed: true,
      status: 'ok',
      enforcement_mode: null,
      remaining_usd: null,
      reset_at: '2026-12-01T00:00:00.000Z',
      budgets: [],
    });
  });

  it('without a budget the evaluation job reads no spend (it runs after every write that moves spend)', async () => {
    const ch = svc.stores.clickhouse;
    const query = ch.query;
    const spendReads: string[] = [];
    ch.query = ((sql: string, ...rest: unknown[]) => {
      if (sql.includes('spend_by_dims')) spendReads.push(sql);
      return (query as (...a: unknown[]) => unknown).call(ch, sql, ...rest);
    }) as typeof ch.query;
    try {
      const r = await svc.domain.spend.budgets.evaluate(PROJECT);
      expect(r.budget).toBeUndefined();
      expect(r.state.status).toBe('ok');
      expect(spendReads).toEqual([]);
      // What shows the spend still reads it: GET /budget, from the stores.
      expect((await budget()).spent_usd).toBe(1.5);
      expect(spendReads).toHaveLength(1);
    } finally {
      ch.query = query;
    }
    const c = await call('GET', '/budget/check', ingest());
    expect(c.body).toMatchObject({ allowed: true, status: 'ok', remaining_usd: null });
  });

  it('only admins set it; the body is validated', async () => {
    const ok = { budget_monthly_usd: 10, alert_threshold_pct: 80, enforcement_mode: 'alert' };
    expect((await call('PUT', '/budget', { Authorization: `Bearer ${memberJwt}` }, ok)).status).toBe(403);
    expect((await call('PUT', '/budget', ingest(), ok)).status).toBe(403);
    const bad: Array<[object, RegExp]> = [
      [{ ...ok, budget_monthly_usd: 0 }, /budget_monthly_usd/],
      [{ ...ok, budget_monthly_usd: -5 }, /budget_monthly_usd/],
      [{ ...ok, budget_monthly_usd: 1e-12 }, /budget_monthly_usd: must be greater than 0/],
      [{ ...ok, alert_threshold_pct: 0 }, /alert_threshold_pct/],
      [{ ...ok, alert_threshold_pct: 101 }, /alert_threshold_pct/],
      [{ ...ok, alert_threshold_pct: 50.5 }, /alert_threshold_pct/],
      [{ ...ok, enforcement_mode: 'hard' }, /enforcement_mode/],
      [{ ...ok, webhook_url: 'ftp://example.com/x' }, /webhook_url: must use http or https/],
      [{ ...ok, webhook_url: 'https://user:pw@example.com/x' }, /webhook_url: must not carry credentials/],
      [{ ...ok, webhook_url: 'not a url' }, /webhook_url/],
      [{ ...ok, webhook_url: `https://example.com/${'a'.repeat(2100)}` }, /webhook_url/],
      [{ ...ok, extra: 1 }, /extra/],
      [{ alert_threshold_pct: 80, enforcement_mode: 'alert' }, /budget_monthly_usd/],
    ];
    for (const [body, detail] of bad) {
      const r = await call('PUT', '/budget', admin(), body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.body.detail).toMatch(detail);
    }
  });

  it('threshold then 100%: exactly two alerts, signed, the failing receiver retried', async () => {
    const put = await call('PUT', '/budget', admin(), {
      budget_monthly_usd: 10,
      alert_threshold_pct: 80,
      enforcement_mode: 'alert',
      webhook_url: receiver.url,
    });
    expect(put.status).toBe(200);
    expect(put.body.webhook_secret).toMatch(/^whsec_/);
    receiver.secret = put.body.webhook_secret;
    expect(put.body).toMatchObject({
      budget_monthly_usd: 10,
      spent_usd: 1.5,
      remaining_usd: 8.5,
      pct_used: 15,
      status: 'ok',
      webhook_url: receiver.url,
    });
    const again = await call('PUT', '/budget', admin(), { budget_monthly_usd: 10, alert_threshold_pct: 80, enforcement_mode: 'alert' });
    expect(again.body.webhook_secret).toBeUndefined(); // shown once
    expect(again.body.webhook_url).toBe(receiver.url); // omitted: unchanged
    // a viewer-level caller sees the budget but not the webhook URL (it is often a secret)
    expect((await call('GET', '/budget', { Authorization: `Bearer ${memberJwt}` })).body.webhook_url).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/…$/,
    );

    receiver.script = [500]; // the first delivery fails
    await spend(5); // 65 %
    await spend(2); // 85 % → threshold
    const threshold = await until(() => receiver.verified.find((d) => d.body.kind === 'threshold'), 'threshold alert delivered');
    expect(receiver.deliveries.filter((d) => d.body.kind === 'threshold').map((d) => d.answered)).toEqual([500, 200]);
    expect(threshold.body).toMatchObject({
      type: 'budget.threshold',
      project_id: PROJECT,
      month: '2026-11',
      pct_used: 85,
      spent_usd: 8.5,
      budget_monthly_usd: 10,
      alert_threshold_pct: 80,
    });
    expect(threshold.headers['x-traceloom-event-id']).toBe(threshold.body.id);
    let b = await budget();
    expect(b).toMatchObject({ status: 'alert', pct_used: 85, remaining_usd: 1.5 });
    const a = await until(async () => (await alertsOf('2026-11')).find((x: any) => x.delivery.delivered_at), 'delivery recorded');
    expect(a).toMatchObject({ kind: 'threshold', pct: 85, delivery: { attempts: 2, last_status: 200 } });

    await spend(2); // 105 % → exceeded
    await until(() => receiver.verified.find((d) => d.body.kind === 'exceeded'), 'exceeded alert delivered');
    await spend(1); // 115 %: nothing new
    await Promise.all(Array.from({ length: 5 }, () => svc.domain.spend.budgets.evaluate(PROJECT))); // concurrent workers
    b = await budget();
    expect(b).toMatchObject({ status: 'exceeded', blocked: false, spent_usd: 11.5, remaining_usd: 0, pct_used: 115 });
    expect(b.alerts.map((x: { kind: string }) => x.kind).sort()).toEqual(['exceeded', 'threshold']);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.verified.map((d) => d.body.kind).sort()).toEqual(['exceeded', 'threshold']);
    expect(receiver.deliveries.every((d) => d.verified)).toBe(true);
    // alert mode: calls are still allowed
    expect((await call('GET', '/budget/check', ingest())).body).toMatchObject({
      allowed: true,
      status: 'exceeded',
      enforcement_mode: 'alert',
      remaining_usd: 0,
    });
  });

  it('a restart mid-month sends no alert twice', async () => {
    await svc.close();
    await boot();
    await svc.domain.spend.budgets.evaluateAll();
    await spend(0.5);
    await svc.domain.spend.budgets.evaluate(PROJECT);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.verified).toHaveLength(2);
    expect((await alertsOf('2026-11')).length).toBe(2);
  });

  it('block mode: check says no and render answers 402, ingest still succeeds', async () => {
    expect((await call('POST', '/prompts', admin(), { prompt_id: 'greet', type: 'text', template: 'Hi {{name}}' })).status).toBe(201);
    const put = await call('PUT', '/budget', admin(), { budget_monthly_usd: 10, alert_threshold_pct: 80, enforcement_mode: 'block' });
    expect(put.body).toMatchObject({ status: 'exceeded', blocked: true, enforcement_mode: 'block' });
    const c = await call('GET', '/budget/check', ingest());
    expect(c.status).toBe(200);
    expect(c.body).toEqual({
      allowed: false,
      status: 'exceeded',
      enforcement_mode: 'block',
      remaining_usd: 0,
      reset_at: '2026-12-01T00:00:00.000Z',
      budgets: [],
    });
    const r = await call('POST', '/prompts/greet/render', admin(), { inputs: { name: 'x' } });
    expect(r.status).toBe(402);
    expect(r.body.detail).toMatch(/^Budget exceeded - /);
    await spend(0.25); // ingest never refuses data because of a budget
    // the check never touches the stores: answered from memory (or Redis)
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) await svc.domain.spend.budgets.check(PROJECT);
    expect((performance.now() - t0) / 200).toBeLessThan(5);
  });

  it('a new month starts clean; its alerts fire again', async () => {
    svc.domain.spend.clock.now = () => new Date('2026-12-01T00:00:05.000Z');
    // before any evaluation, the check already reads the stored state as a fresh month
    expect((await call('GET', '/budget/check', ingest())).body).toEqual({
      allowed: true,
      status: 'ok',
      enforcement_mode: 'block',
      remaining_usd: 10,
      reset_at: '2027-01-01T00:00:00.000Z',
      budgets: [],
    });
    const b = await budget();
    expect(b).toMatchObject({ month: '2026-12', spent_usd: 0, status: 'ok', blocked: false });
    expect(b.alerts).toHaveLength(2); // November's, listed with their month
    expect((await call('POST', '/prompts/greet/render', admin(), { inputs: { name: 'x' } })).status).toBe(200);
    await spend(12, '2026-12-01T00:00:01Z');
    await until(() => receiver.verified.length === 4, 'December alerts delivered');
    expect(
      receiver.verified
        .slice(2)
        .map((d) => `${d.body.month} ${d.body.kind}`)
        .sort(),
    ).toEqual(['2026-12 exceeded', '2026-12 threshold']);
    // The evaluation publishes the state after it enqueued the deliveries, and with Redis a node
    // answers from its own copy for up to BUDGET_CHECK_CACHE_MS: blocked soon, not necessarily before the webhook lands.
    await until(
      async () => (await call('POST', '/prompts/greet/render', admin(), { inputs: { name: 'x' } })).status === 402,
      'render blocked in December',
    );
  });

  it("spend that crosses the budget in a month's last minutes, evaluated just after midnight, fires that month's alerts", async () => {
    svc.domain.spend.clock.now = () => new Date('2027-02-01T00:05:00.000Z');
    await spend(12, '2027-01-31T23:58:00Z'); // late: January, seen in February
    const b = await until(async () => {
      const x = await budget();
      return x.alerts.filter((a: { month: string }) => a.month === '2027-01').length === 2 && x;
    }, "January's alerts fired");
    // the published state (and the check) stay February's
    expect(b).toMatchObject({ month: '2027-02', spent_usd: 0, status: 'ok', blocked: false });
    expect((await call('GET', '/budget/check', ingest())).body).toMatchObject({ allowed: true, status: 'ok' });
    await until(() => receiver.verified.length === 6, 'January alerts delivered');
    expect(
      receiver.verified
        .slice(4)
        .map((d) => `${d.body.month} ${d.body.kind}`)
        .sort(),
    ).toEqual(['2027-01 exceeded', '2027-01 threshold']);
    // evaluated again (the job; reading the budget evaluates nothing): no duplicate
    await svc.domain.spend.budgets.evaluate(PROJECT);
    expect((await alertsOf('2027-01')).length).toBe(2);
  });

  it('after the first 48 hours of a month, the previous month is no longer evaluated', async () => {
    svc.domain.spend.clock.now = () => new Date('2027-03-03T00:00:01.000Z');
    await spend(12, '2027-02-27T12:00:00Z');
    await until(
      async () => (await call('GET', '/stats?start=2027-02-01&end=2027-02-28T23:59:59Z', admin())).body.total_cost === 12,
      'February spend visible',
    );
    await svc.domain.spend.budgets.evaluate(PROJECT); // the evaluation job, run now
    expect(await alertsOf('2027-02')).toEqual([]);
  });
});

describe(`budget reads are pure (${mode} mode)`, () => {
  it('GET /budget and a cold check never fire an alert; the evaluation job does', async () => {
    // A node whose periodic evaluation does not run during the test (its boot evaluation ran, and
    // listed the budgeted projects, before this project has a budget): only explicit runs evaluate.
    await svc.close();
    svc = await startTestService(
      {},
      { env: { ...env, config: { ...env.config, spend: { ...env.config.spend, budgetEvalIntervalMs: 86_400_000 } } } },
    );
    const PURE = 'acme-pure';
    await ensureProject(svc.stores.postgres, PURE);
    const jwt = await idp.token({ sub: 'carol', project_id: PURE, role: 'admin' });
    const auth = { Authorization: `Bearer ${jwt}` };
    const at = (path: string, method = 'GET', body?: unknown) =>
      getJson(`${svc.url}/api/projects/${PURE}${path}`, {
        method,
        headers: { 'Content-Type': 'application/json', ...auth },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    svc.domain.spend.clock.now = () => new Date('2027-03-15T12:00:00.000Z');
    // Spend stored directly in ClickHouse and a budget it exceeds stored directly in PostgreSQL, as
    // an operator could: no evaluation is asked for, and none has published the project's state.
    await svc.stores.clickhouse.command(
      `INSERT INTO executions (project_id, started_at, trace_id, version, sign, cost_usd, content_hash) VALUES ({p:String}, {t:DateTime64(3, 'UTC')}, 'pure-1', 1, 1, 12, 'h')`,
      { p: PURE, t: '2027-03-10 09:00:00.000' },
    );
    await svc.stores.postgres.query(
      `INSERT INTO budgets (project_id, budget_monthly_usd, alert_threshold_pct, enforcement_mode, webhook_url, webhook_secret) VALUES ($1, 10, 80, 'alert', NULL, 'whsec_x')`,
      [PURE],
    );
    expect((await at('/budget')).body).toMatchObject({ status: 'exceeded', pct_used: 120, alerts: [] });
    // The first check of a project no evaluation has seen: computed from the stores, nothing fired.
    expect((await at('/budget/check')).body).toMatchObject({ allowed: true, status: 'exceeded' });
    expect((await at('/budget')).body.alerts).toEqual([]);
    await svc.domain.spend.budgets.evaluate(PURE); // the evaluation job
    expect((await at('/budget')).body.alerts.map((a: { kind: string }) => a.kind).sort()).toEqual(['exceeded', 'threshold']);
  });
});
