// Monitors end to end (docs/monitors.md): a made error-rate regression, evaluated by the jobs
// runner, fires exactly one signed `monitor.triggered`; evaluations while it lasts send nothing;
// the recovery sends one `monitor.resolved`. A threshold on a score mean alerts once in Slack
// format through concurrent evaluations; a cost change against a baseline label and a latency p95
// give the figures computed here independently (scipy's, for Welch); bad input is 400/404/409/422
// naming the field; roles hold. Executions and scores recorded by the API with controlled times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until, WebhookReceiver } from '../helpers/webhook-receiver.ts';

const idp = new TestIdp();
const signed = new WebhookReceiver();
const slack = new WebhookReceiver();
let svc: TestService;
const jwts: Record<'admin' | 'member' | 'viewer', string> = { admin: '', member: '', viewer: '' };
const PROJECT = 'acme-monitors';
const P = `/api/projects/${PROJECT}`;
const MIN = 60_000;
/** The evaluation time: the spend clock, which monitors read (whole minutes, near the real now: ingest takes it). */
const T0 = new Date(Math.floor(Date.now() / MIN) * MIN);
let now = T0;

const call = (method: string, path: string, body?: unknown, jwt = jwts.member) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${jwt}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

let seq = 0;
/** `count` executions spread over [from, from + spanMs), the first `errors` of them failed. */
async function record(
  count: number,
  opts: {
    from: Date;
    spanMs: number;
    errors?: number;
    agent_id?: string;
    cost?: (i: number) => number;
    latency?: (i: number) => number;
    label?: string;
  },
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `m-${++seq}`);
  const one = async (i: number) => {
    const r = await call('POST', '/executions', {
      trace_id: ids[i],
      agent_id: opts.agent_id ?? 'checkout',
      started_at: new Date(opts.from.getTime() + Math.floor((i * opts.spanMs) / count)).toISOString(),
      status: i < (opts.errors ?? 0) ? 'error' : 'ok',
      latency_ms: opts.latency?.(i) ?? 100,
      cost_usd: opts.cost?.(i) ?? 0.001,
      ...(opts.label ? { template_usages: [{ prompt_id: 'checkout-prompt', version: opts.label }] } : {}),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  };
  // 25 at once: the writer stores them together
  for (let i = 0; i < count; i += 25) await Promise.all(ids.slice(i, i + 25).map((_id, j) => one(i + j)));
  await svc.domain.flush();
  return ids;
}

/** Two-proportion z-test, written out here (pooled SE; p from erfc, Abramowitz–Stegun 7.1.26). */
function twoProportion(ka: number, na: number, kb: number, nb: number) {
  const pooled = (ka + kb) / (na + nb);
  const z = (kb / nb - ka / na) / Math.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb));
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erfc = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * Math.exp(-x * x);
  return { z, p: erfc };
}

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
          MONITOR_INTERVAL_MS: '200',
          MONITOR_MAX_PER_PROJECT: '8',
        }),
      ),
    },
  );
  svc.domain.spend.clock.now = () => now;
  for (const role of ['admin', 'member', 'viewer'] as const) jwts[role] = await idp.token({ sub: `${role}-1`, project_id: PROJECT, role });
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await signed.stop();
  await slack.stop();
  await dropTestDatabases();
});

describe(`monitors (${mode} mode)`, () => {
  it('refuse bad input naming the field, and hold roles', async () => {
    const ok = { name: 'v', metric: { kind: 'error_rate' }, window_minutes: 60, condition: { kind: 'threshold', op: '>', value: 0.1 } };
    const cases: Array<[unknown, number, RegExp]> = [
      [{ ...ok, metric: undefined }, 400, /metric/],
      [{ ...ok, window_minutes: 2 }, 400, /window_minutes/],
      [{ ...ok, metric: { kind: 'score_mean' } }, 400, /metric/],
      [{ ...ok, metric: { kind: 'error_rate', score_name: 'x' } }, 400, /metric/],
      [{ ...ok, condition: { kind: 'threshold', op: '!=', value: 1 } }, 400, /condition/],
      [
        { ...ok, metric: { kind: 'executions_count' }, condition: { kind: 'change' } },
        400,
        /condition\.kind: a change of executions_count/,
      ],
      [
        { ...ok, condition: { kind: 'change', against: { label: 'production' } } },
        400,
        /condition\.against\.label: .*filter\.prompt_label/,
      ],
      [{ ...ok, webhook_format: 'slack' }, 400, /webhook_url: is required/],
      [{ ...ok, webhook_url: 'ftp://hooks.example.com/x' }, 400, /webhook_url: must use http or https/],
      [{ ...ok, filter: { min_cost: '2', max_cost: '1' } }, 400, /filter\.min_cost: is greater than max_cost/],
      [{ ...ok, filter: { prompt_id: 'no-such-prompt' } }, 422, /filter\.prompt_id: prompt no-such-prompt does not exist/],
    ];
    for (const [body, status, detail] of cases) {
      const r = await call('POST', '/monitors', body);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.detail).toMatch(detail);
    }
    expect((await call('POST', '/monitors', ok, jwts.viewer)).status).toBe(403);
    const created = await call('POST', '/monitors', { ...ok, enabled: false, webhook_url: 'https://hooks.example.com/secret-path' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      state: 'ok',
      enabled: false,
      next_evaluation_at: null,
      interval_minutes: 5,
      condition: { kind: 'threshold', op: '>', value: 0.1, min_samples: 1 },
      filter: {},
    });
    expect(created.body.webhook_secret).toMatch(/^whsec_/);
    const dup = await call('POST', '/monitors', ok);
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toMatch(/^name: /);
    // a viewer reads, without the URL's path
    const seen = await call('GET', `/monitors/${created.body.monitor_id}`, undefined, jwts.viewer);
    expect(seen.body.webhook_url).toBe('https://hooks.example.com/…');
    expect(seen.body.webhook_secret).toBeUndefined();
    expect((await call('PATCH', `/monitors/${created.body.monitor_id}`, { window_minutes: 99_999 })).body.detail).toMatch(/window_minutes/);
    expect((await call('PATCH', `/monitors/${created.body.monitor_id}`, {})).status).toBe(400);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const r = await call('GET', `/monitors/${id}`);
      expect(r.status).toBe(404);
      expect(r.body.detail).toBe('Monitor not found');
    }
    expect((await call('GET', `/monitors/${created.body.monitor_id}/alerts?cursor=nope`)).body.detail).toMatch(/^cursor: /);
    expect((await call('DELETE', `/monitors/${created.body.monitor_id}`, undefined, jwts.viewer)).status).toBe(403);
    expect((await call('DELETE', `/monitors/${created.body.monitor_id}`)).status).toBe(204);
    expect((await call('DELETE', `/monitors/${created.body.monitor_id}`)).status).toBe(404);
  });

  it('hold a project to MONITOR_MAX_PER_PROJECT monitors, and list them all', async () => {
    const jwt = await idp.token({ sub: 'cap-admin', project_id: 'acme-monitors-cap', role: 'admin' });
    const capped = (method: string, path: string, body?: unknown) =>
      getJson(`${svc.url}/api/projects/acme-monitors-cap${path}`, {
        method,
        headers: { Authorization: `Bearer ${jwt}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const monitor = (i: number) => ({
      name: `cap-${i}`,
      metric: { kind: 'error_rate' },
      window_minutes: 60,
      condition: { kind: 'threshold', op: '>', value: 0.5 },
      enabled: false,
    });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await capped('POST', '/monitors', monitor(i));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      ids.push(r.body.monitor_id);
    }
    const over = await capped('POST', '/monitors', monitor(8));
    expect(over.status).toBe(409);
    expect(over.body.detail).toMatch(/^the project has 8 monitors, the most it may have \(MONITOR_MAX_PER_PROJECT\)/);
    expect((await capped('GET', '/monitors')).body.items).toHaveLength(8);
    expect((await capped('DELETE', `/monitors/${ids[0]}`)).status).toBeLessThan(300);
    expect((await capped('POST', '/monitors', monitor(8))).status).toBe(201);
  });

  it('fire once on an error-rate regression, stay quiet while it lasts, and resolve once', async () => {
    // The hour before: 2 % errors; this hour: 20 %. Another agent failing everything is outside the filter.
    await record(100, { from: new Date(T0.getTime() - 120 * MIN), spanMs: 60 * MIN, errors: 2 });
    await record(100, { from: new Date(T0.getTime() - 60 * MIN), spanMs: 60 * MIN, errors: 20 });
    await record(30, { from: new Date(T0.getTime() - 60 * MIN), spanMs: 60 * MIN, errors: 30, agent_id: 'search' });
    const created = await call('POST', '/monitors', {
      name: 'checkout errors',
      metric: { kind: 'error_rate' },
      filter: { agent_id: ['checkout'] },
      window_minutes: 60,
      condition: { kind: 'change', direction: 'increase' },
      interval_minutes: 1440,
      enabled: false,
      webhook_url: signed.url,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.condition).toEqual({
      kind: 'change',
      against: 'previous_window',
      direction: 'increase',
      alpha: 0.05,
      min_samples: 30,
    });
    signed.secret = created.body.webhook_secret;
    const id = created.body.monitor_id;

    // Enabled: due at once, evaluated by the jobs runner (MONITOR_INTERVAL_MS 200).
    expect((await call('PATCH', `/monitors/${id}`, { enabled: true })).status).toBe(200);
    await until(() => signed.deliveries.length >= 1, 'the triggered alert');
    const expected = twoProportion(2, 100, 20, 100);
    const [d] = signed.deliveries;
    expect(d!.verified).toBe(true);
    expect(d!.headers['x-traceloom-event']).toBe('monitor.triggered');
    expect(d!.body).toMatchObject({
      type: 'monitor.triggered',
      project_id: PROJECT,
      monitor_id: id,
      monitor_name: 'checkout errors',
      kind: 'triggered',
      resolves_alert_id: null,
      evaluation: {
        metric: 'error_rate',
        evaluated_at: T0.toISOString(),
        current: { n: 100, value: 0.2, start: new Date(T0.getTime() - 60 * MIN).toISOString(), end: T0.toISOString() },
        baseline: { n: 100, value: 0.02 },
        breached: true,
        test: { name: 'two_proportion_z', alpha: 0.05, difference: 0.18 },
      },
    });
    expect(d!.body.evaluation.test.statistic).toBeCloseTo(expected.z, 5);
    expect(Math.abs(d!.body.evaluation.test.p_value / expected.p - 1)).toBeLessThan(0.01);
    expect(d!.body.evaluation.test.p_value).toBeCloseTo(4.744656019286541e-5, 9); // scipy: 2·norm.sf(z)
    expect(d!.body.evaluation.reason).toMatch(/two_proportion_z p=.* < α=0\.05, increase/);

    // Still breached: evaluations (on demand, two at once) record nothing and send nothing.
    const again = await Promise.all([call('POST', `/monitors/${id}/evaluate`), call('POST', `/monitors/${id}/evaluate`)]);
    for (const r of again) expect(r.body).toMatchObject({ state: 'breached', alert: null, evaluation: { breached: true } });
    await new Promise((r) => setTimeout(r, 400));
    expect(signed.deliveries).toHaveLength(1);

    // An hour later the errors are back to 2 %: one resolution, naming the alert it resolves.
    await record(100, { from: T0, spanMs: 60 * MIN, errors: 2 });
    now = new Date(T0.getTime() + 60 * MIN);
    const resolved = await call('POST', `/monitors/${id}/evaluate`);
    expect(resolved.body).toMatchObject({ state: 'ok', alert: { kind: 'resolved' }, evaluation: { breached: false } });
    expect((await call('POST', `/monitors/${id}/evaluate`)).body).toMatchObject({ state: 'ok', alert: null });
    await until(() => signed.deliveries.length >= 2, 'the resolved alert');
    await new Promise((r) => setTimeout(r, 300));
    expect(signed.deliveries).toHaveLength(2);
    const r = signed.deliveries[1]!;
    expect(r.verified).toBe(true);
    expect(r.body).toMatchObject({
      type: 'monitor.resolved',
      kind: 'resolved',
      resolves_alert_id: d!.body.alert_id,
      evaluation: { current: { value: 0.02 }, baseline: { value: 0.2 } },
    });

    // The history, newest first, one page at a time, with the deliveries recorded.
    const page1 = await call('GET', `/monitors/${id}/alerts?limit=1`, undefined, jwts.viewer);
    expect(page1.body.items.map((a: { kind: string }) => a.kind)).toEqual(['resolved']);
    expect(page1.body.items[0].delivery).toMatchObject({ attempts: 1, last_status: 200 });
    const page2 = await call('GET', `/monitors/${id}/alerts?limit=1&cursor=${page1.body.next_cursor}`);
    expect(page2.body.items.map((a: { kind: string }) => a.kind)).toEqual(['triggered']);
    const page3 = await call('GET', `/monitors/${id}/alerts?limit=1&cursor=${page2.body.next_cursor}`);
    expect(page3.body).toEqual({ items: [], next_cursor: null });
    now = T0;
  });

  it('alert once in Slack format on a score mean under a threshold, through concurrent evaluations', async () => {
    const traces = await record(10, { from: new Date(T0.getTime() - 30 * MIN), spanMs: 30 * MIN, agent_id: 'support' });
    const values = traces.map((_t, i) => (i < 8 ? 0.25 : 0.75)); // mean 0.35
    const s = await call(
      'POST',
      '/scores',
      traces.map((trace_id, i) => ({ trace_id, name: 'helpfulness', value: values[i] })),
    );
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    await svc.domain.flush();
    const created = await call('POST', '/monitors', {
      name: 'support helpfulness',
      metric: { kind: 'score_mean', score_name: 'helpfulness' },
      filter: { agent_id: ['support'] },
      window_minutes: 30,
      condition: { kind: 'threshold', op: '<', value: 0.5, min_samples: 5 },
      webhook_url: slack.url,
      webhook_format: 'slack',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.webhook_secret).toBeUndefined();
    const id = created.body.monitor_id;
    // Three on-demand evaluations race the job's (the monitor is due at once): one alert.
    const runs = await Promise.all([1, 2, 3].map(() => call('POST', `/monitors/${id}/evaluate`)));
    for (const r of runs)
      expect(r.body).toMatchObject({ state: 'breached', evaluation: { current: { n: 10, value: 0.35 }, breached: true } });
    await until(() => slack.deliveries.length >= 1, 'the Slack alert');
    await new Promise((r) => setTimeout(r, 400));
    expect(slack.deliveries).toHaveLength(1);
    expect(slack.deliveries[0]!.headers['x-traceloom-signature']).toBeUndefined();
    expect(slack.deliveries[0]!.body.text).toBe(
      `Traceloom monitor "support helpfulness" triggered in project ${PROJECT} (30-minute window ending ${T0.toISOString()}): mean of score "helpfulness" 0.35 (n=10) is < 0.5.`,
    );
    const alerts = await call('GET', `/monitors/${id}/alerts`);
    expect(alerts.body.items).toHaveLength(1);
    expect(alerts.body.items[0]).toMatchObject({ kind: 'triggered', evaluation: { breached: true }, delivery: { attempts: 1 } });
    const listed = await call('GET', '/monitors', undefined, jwts.viewer);
    expect(listed.body.items.find((m: { monitor_id: string }) => m.monitor_id === id)).toMatchObject({ state: 'breached' });
  });

  it('test a cost change against a baseline label (Welch) and read a p95; a disabled monitor is only measured', async () => {
    const prompt = await call(
      'POST',
      '/prompts',
      { prompt_id: 'checkout-prompt', type: 'text', template: 'a', labels: ['production'] },
      jwts.admin,
    );
    expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
    const v2 = await call('POST', '/prompts/checkout-prompt/versions', { template: 'b', labels: ['canary'] }, jwts.admin);
    expect(v2.status, JSON.stringify(v2.body)).toBe(201);
    const from = new Date(T0.getTime() - 15 * MIN);
    await record(40, { from, spanMs: 15 * MIN, agent_id: 'pricing', label: 'production', cost: (i) => 0.01 + (i % 5) * 0.001 });
    await record(40, {
      from,
      spanMs: 15 * MIN,
      agent_id: 'pricing',
      label: 'canary',
      cost: (i) => 0.012 + (i % 5) * 0.001,
      latency: (i) => 100 + i * 10,
    });
    const base = {
      metric: { kind: 'cost_per_execution' },
      filter: { agent_id: ['pricing'], prompt_id: 'checkout-prompt', prompt_label: 'canary' },
      window_minutes: 15,
      enabled: false,
    };
    const missing = await call('POST', '/monitors', {
      ...base,
      name: 'x',
      condition: { kind: 'change', against: { label: 'staging' } },
    });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toBe('condition.against.label: prompt checkout-prompt has no label "staging"');
    const cost = await call('POST', '/monitors', {
      ...base,
      name: 'canary cost',
      condition: { kind: 'change', against: { label: 'production' }, direction: 'increase', alpha: 0.01 },
    });
    expect(cost.status, JSON.stringify(cost.body)).toBe(201);
    const e = await call('POST', `/monitors/${cost.body.monitor_id}/evaluate`);
    // scipy.stats.ttest_ind(canary, production, equal_var=False)
    expect(e.body).toMatchObject({
      state: 'ok',
      alert: null,
      evaluation: {
        current: { n: 40, value: 0.014 },
        baseline: { n: 40, value: 0.012, label: 'production' },
        test: { name: 'welch_t', alpha: 0.01, difference: 0.002 },
        breached: true,
      },
    });
    expect(e.body.evaluation.test.statistic).toBeCloseTo(6.2449979983984045, 5);
    expect(e.body.evaluation.test.p_value / 2.0665092067729833e-8).toBeCloseTo(1, 5);
    expect((await call('GET', `/monitors/${cost.body.monitor_id}/alerts`)).body.items).toEqual([]);

    const p95 = await call('POST', '/monitors', {
      ...base,
      name: 'canary p95',
      metric: { kind: 'latency_p95' },
      condition: { kind: 'threshold', op: '>', value: 400 },
    });
    const l = await call('POST', `/monitors/${p95.body.monitor_id}/evaluate`);
    // numpy.percentile([100, 110, …, 490], 95) = 470.5
    expect(l.body.evaluation).toMatchObject({ current: { n: 40, value: 470.5 }, breached: true });
  });
});
