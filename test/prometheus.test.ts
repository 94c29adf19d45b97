// GET /metrics read the way Prometheus reads it: parsed by a real text-format parser
// (parse-prometheus-text-format) after real traffic (HTTP requests, OTLP spans through the real
// exporter, a refused ingest, a budget that fires alerts delivered to a loopback receiver that
// fails once), and the series issue 13 lists are there with the values the traffic implies.
// With METRICS_TOKEN set, a scrape without it is a 401 and with it a 200.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format';
import { dropTestDatabases } from './helpers/env.ts';
import { getJson, startTestService, type TestService } from './helpers/service.ts';
import { until, WebhookReceiver } from './helpers/webhook-receiver.ts';
import { agentRun, exporting } from './helpers/otel.ts';

const TOKEN = 'scrape-secret-1';
const receiver = new WebhookReceiver();
let svc: TestService;
beforeAll(async () => {
  await receiver.start();
  svc = await startTestService({
    METRICS_TOKEN: TOKEN,
    TRACE_DEBOUNCE_MS: '50',
    INGEST_LOG_MAX_ROWS: '100',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_BACKOFF_MS: '50',
    BUDGET_EVAL_DEBOUNCE_MS: '10',
  });
});
afterAll(async () => {
  await svc?.close();
  await receiver.stop();
  await dropTestDatabases();
});

async function scrape(): Promise<MetricFamily[]> {
  const res = await fetch(`${svc.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(await res.text());
}

const family = (all: MetricFamily[], name: string) => all.find((f) => f.name === name);
/** The value of the sample whose labels include `labels` (0 when there is none). */
function value(all: MetricFamily[], name: string, labels: Record<string, string> = {}): number {
  const f = family(all, name);
  const s = f?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return s?.value !== undefined ? Number(s.value) : 0;
}

describe('METRICS_TOKEN', () => {
  it('a scrape without the token is a 401, with a wrong one too, with it a 200', async () => {
    const none = await getJson(`${svc.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.body.detail).toMatch(/METRICS_TOKEN/);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await getJson(`${svc.url}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${svc.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });
});

describe('the series after real traffic', () => {
  it('HTTP, ingest, budgets, alerts and stores, as a Prometheus parser reads them', async () => {
    // HTTP: a few answered requests, one 404.
    for (let i = 0; i < 3; i++) expect((await fetch(`${svc.url}/api/health`)).status).toBe(200);
    expect((await fetch(`${svc.url}/api/nothing-here`)).status).toBe(404);

    // Ingest: an agent run (4 spans, one request each) through the real exporter, then a request
    // larger than the ingest log's bound (413, refused as too_large).
    const ex = exporting(svc.url, { protocol: 'proto', gzip: false });
    const run = agentRun(ex.tracer);
    run.endRoot();
    await ex.flush();
    await ex.shutdown();
    const now = String(BigInt(Date.now()) * 1_000_000n);
    const spans = Array.from({ length: 101 }, (_, i) => ({
      trace_id: 'c'.repeat(32),
      span_id: (i + 1).toString(16).padStart(16, '0'),
      span_name: 's',
      start_time_ns: now,
      end_time_ns: now,
    }));
    const tooLarge = await getJson(`${svc.url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ spans }),
    });
    expect(tooLarge.status).toBe(413);

    // Budgets: a budget spend exceeds, with a webhook that fails once, then accepts.
    receiver.script = [500];
    const put = await getJson(`${svc.url}/api/projects/default/budget`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ budget_monthly_usd: 1, alert_threshold_pct: 50, enforcement_mode: 'alert', webhook_url: receiver.url }),
    });
    expect(put.status).toBe(200);
    receiver.secret = put.body.webhook_secret;
    const rec = await getJson(`${svc.url}/api/projects/default/executions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ trace_id: 'over-budget', cost_usd: 2, provider: 'openai', model: 'gpt-4o' }),
    });
    expect(rec.status).toBe(201);
    await until(() => receiver.verified.length === 2, 'both alerts delivered (threshold and exceeded)');

    const m = await until(async () => {
      const all = await scrape();
      return value(all, 'traceloom_budget_alert_deliveries_total', { outcome: 'delivered' }) >= 2 &&
        value(all, 'traceloom_ingest_spans_accepted_total') >= 4
        ? all
        : undefined;
    }, 'the counters of the traffic');

    // Every family the issue lists is there, with its Prometheus type.
    const types = Object.fromEntries(m.map((f) => [f.name, f.type]));
    expect(types).toMatchObject({
      traceloom_http_requests_total: 'COUNTER',
      traceloom_http_request_duration_seconds: 'HISTOGRAM',
      traceloom_ingest_spans_accepted_total: 'COUNTER',
      traceloom_ingest_refused_total: 'COUNTER',
      traceloom_ingest_queue_rows: 'GAUGE',
      traceloom_assembly_lag_seconds: 'GAUGE',
      traceloom_budget_evaluations_total: 'COUNTER',
      traceloom_budget_alerts_fired_total: 'COUNTER',
      traceloom_budget_alert_deliveries_total: 'COUNTER',
      traceloom_store_up: 'GAUGE',
    });

    // HTTP requests by route pattern and status; latency histogram by route.
    expect(value(m, 'traceloom_http_requests_total', { method: 'GET', route: '/api/health', status: '200' })).toBeGreaterThanOrEqual(3);
    expect(value(m, 'traceloom_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(value(m, 'traceloom_http_requests_total', { route: '/api/v1/traces', status: '413' })).toBe(1);
    // The parser (1.1.1) folds a histogram's labelled series into one set of buckets: it proves the
    // family parses as a histogram; the per-route count is read from the same registry's values.
    expect(family(m, 'traceloom_http_request_duration_seconds')!.metrics[0]!.buckets!['+Inf']).toBeDefined();
    const durations = (await svc.domain.metrics.httpDuration.get()).values;
    const healthCount = durations.find(
      (v) => v.metricName === 'traceloom_http_request_duration_seconds_count' && v.labels.route === '/api/health',
    );
    expect(healthCount?.value).toBeGreaterThanOrEqual(3);

    // Ingest: the 4 spans accepted, the oversized request refused.
    expect(value(m, 'traceloom_ingest_spans_accepted_total')).toBe(4);
    expect(value(m, 'traceloom_ingest_refused_total', { reason: 'too_large' })).toBe(1);

    // Budgets: evaluations that saw the budget exceeded, both alerts fired once, one failed attempt then deliveries.
    expect(value(m, 'traceloom_budget_evaluations_total', { status: 'exceeded' })).toBeGreaterThanOrEqual(1);
    expect(value(m, 'traceloom_budget_alerts_fired_total', { kind: 'threshold' })).toBe(1);
    expect(value(m, 'traceloom_budget_alerts_fired_total', { kind: 'exceeded' })).toBe(1);
    expect(value(m, 'traceloom_budget_alert_deliveries_total', { outcome: 'failed' })).toBe(1);
    expect(value(m, 'traceloom_budget_alert_deliveries_total', { outcome: 'delivered' })).toBe(2);

    // Stores: up.
    expect(value(m, 'traceloom_store_up', { store: 'clickhouse' })).toBe(1);
    expect(value(m, 'traceloom_store_up', { store: 'postgres' })).toBe(1);
    // Every sample carries the service label.
    expect(family(m, 'traceloom_http_requests_total')!.metrics.every((s) => s.labels?.service === 'traceloom')).toBe(true);
  });
});
