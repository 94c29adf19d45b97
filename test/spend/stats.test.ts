// Project stats and template analytics against hand-computed expectations on a seeded project:
// retried and corrected executions, executions outside the window, an unpriced one, several
// prompts and versions; every day of the window present; consistency with the executions list to
// the last nano-dollar.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromScaled, toScaled } from '../../src/decimal.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { correctExecution } from '../helpers/corrections.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
const P = '/api/projects/default';
const json = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const WINDOW = 'start=2026-10-01T00:00:00Z&end=2026-10-08T00:00:00Z';

async function exec(body: Record<string, unknown>, expected = 201) {
  const r = await json('POST', '/executions', body);
  expect(r.status, JSON.stringify(r.body)).toBe(expected);
  return r.body;
}

const correct = (traceId: string, changes: Record<string, unknown>) => correctExecution(svc.stores.clickhouse, traceId, changes);

const tu = (prompt_id: string, version: number) => ({ prompt_id, version });

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
  expect((await json('POST', '/prompts', { prompt_id: 'support', type: 'text', template: 'Help with {{topic}}' })).status).toBe(201);
  expect((await json('POST', '/prompts/support/versions', { template: 'Please help with {{topic}}' })).status).toBe(201);
  expect((await json('POST', '/prompts', { prompt_id: 'billing', type: 'text', template: 'Invoice {{n}}' })).status).toBe(201);
  expect((await json('POST', '/prompts', { prompt_id: 'archived-one', type: 'text', template: 'x' })).status).toBe(201);
  expect((await json('DELETE', '/prompts/archived-one')).status).toBe(204);

  const base = { tokens_in: 0, tokens_out: 0 };
  await exec({
    ...base,
    trace_id: 'e1',
    provider: 'openai',
    model: 'gpt-x',
    cost_usd: 0.000123,
    latency_ms: 100,
    tokens_in: 10,
    tokens_out: 5,
    started_at: '2026-10-01T10:00:00Z',
    template_usages: [tu('support', 1)],
  });
  await exec({
    ...base,
    trace_id: 'e2',
    provider: 'openai',
    model: 'gpt-x',
    cost_usd: 0.1,
    latency_ms: 200,
    tokens_in: 20,
    tokens_out: 10,
    started_at: '2026-10-01T23:59:59.999Z',
    template_usages: [tu('support', 2)],
  });
  for (let i = 0; i < 10; i++) await exec({ trace_id: `bulk-${i}`, cost_usd: 0.000123, started_at: '2026-10-02T08:00:00Z' });
  await exec({
    ...base,
    trace_id: 'e3',
    provider: 'anthropic',
    model: 'claude-y',
    cost_usd: 1.234567891,
    latency_ms: 300,
    tokens_in: 30,
    tokens_out: 15,
    started_at: '2026-10-03T00:00:00Z',
    template_usages: [tu('support', 1), tu('billing', 1), tu('support', 1)],
  });
  const e4 = await exec({
    trace_id: 'e4',
    provider: 'acme',
    model: 'unknown-model-zz',
    latency_ms: 400,
    tokens_in: 40,
    tokens_out: 20,
    started_at: '2026-10-05T06:00:00Z',
    template_usages: [tu('billing', 1)],
  });
  expect(e4.cost_source).toBe('unpriced');
  const e5 = {
    trace_id: 'e5',
    provider: 'openai',
    model: 'gpt-x',
    cost_usd: 0.5,
    latency_ms: 500,
    tokens_in: 50,
    tokens_out: 25,
    started_at: '2026-10-05T12:00:00Z',
    template_usages: [tu('support', 2)],
  };
  await exec(e5);
  await exec(e5, 200); // a retry: never counted twice
  await exec({
    trace_id: 'e6',
    provider: 'google',
    model: 'gem',
    cost_usd: 0.2,
    latency_ms: 600,
    tokens_in: 60,
    tokens_out: 30,
    started_at: '2026-10-06T08:00:00Z',
    template_usages: [tu('support', 1)],
  });
  await correct('e6', { cost_usd: '0.25', latency_ms: '650' });
  // outside the window by one millisecond on each side
  await exec({ trace_id: 'before', cost_usd: 9, started_at: '2026-09-30T23:59:59.999Z', template_usages: [tu('support', 1)] });
  await exec({ trace_id: 'after', cost_usd: 9, started_at: '2026-10-08T00:00:00Z', template_usages: [tu('support', 1)] });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`project stats (${mode} mode)`, () => {
  it('matches the hand-computed figures, every day of the window present', async () => {
    const r = await json('GET', `/stats?${WINDOW}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      start: '2026-10-01T00:00:00.000Z',
      end: '2026-10-08T00:00:00.000Z',
      prompts_count: 2,
      total_cost: 2.085920891,
      total_executions: 16,
      avg_cost_per_execution: 0.130370056, // 2.085920891 / 16 = 0.1303700556875, half-up
      unpriced_executions: 1,
      total_tokens_in: 210,
      total_tokens_out: 105,
      daily_costs: [
        { date: '2026-10-01', cost: 0.100123, executions: 2 },
        { date: '2026-10-02', cost: 0.00123, executions: 10 },
        { date: '2026-10-03', cost: 1.234567891, executions: 1 },
        { date: '2026-10-04', cost: 0, executions: 0 },
        { date: '2026-10-05', cost: 0.5, executions: 2 },
        { date: '2026-10-06', cost: 0.25, executions: 1 },
        { date: '2026-10-07', cost: 0, executions: 0 },
      ],
      top_prompts: [
        { prompt_id: 'support', cost: 2.084690891, execution_count: 5, avg_cost: 0.416938178 },
        { prompt_id: 'billing', cost: 1.234567891, execution_count: 2, avg_cost: 0.617283946 },
      ],
      by_model: [
        { provider: 'anthropic', model: 'claude-y', cost: 1.234567891, execution_count: 1, unpriced_executions: 0 },
        { provider: 'openai', model: 'gpt-x', cost: 0.600123, execution_count: 3, unpriced_executions: 0 },
        { provider: 'google', model: 'gem', cost: 0.25, execution_count: 1, unpriced_executions: 0 },
        { provider: '', model: '', cost: 0.00123, execution_count: 10, unpriced_executions: 0 },
        // Its cost is unknown, not $0: the console shows it as unpriced (docs/spend.md).
        { provider: 'acme', model: 'unknown-model-zz', cost: 0, execution_count: 1, unpriced_executions: 1 },
      ],
    });
  });

  it('agrees with the executions list to the last nano-dollar', async () => {
    const stats = (await json('GET', `/stats?${WINDOW}`)).body;
    const list = await json('GET', `/executions?${WINDOW}&limit=1000`);
    expect(list.body.total).toBe(stats.total_executions);
    const sum = list.body.items.reduce((s: bigint, i: { cost_usd: number }) => s + toScaled(i.cost_usd, 9), 0n);
    expect(fromScaled(sum, 9)).toBe(String(stats.total_cost));
    expect(list.body.items.find((i: { trace_id: string }) => i.trace_id === 'e6').cost_usd).toBe(0.25);
  });

  it('widens partial days to whole UTC days and says so; epoch milliseconds work too', async () => {
    const partial = await json('GET', '/stats?start=2026-10-01T12:00:00Z&end=2026-10-07T00:00:01Z');
    expect(partial.body).toMatchObject({ start: '2026-10-01T00:00:00.000Z', end: '2026-10-08T00:00:00.000Z', total_cost: 2.085920891 });
    const epoch = await json('GET', `/stats?start=${Date.parse('2026-10-03T00:00:00Z')}&end=${Date.parse('2026-10-04T00:00:00Z')}`);
    expect(epoch.body).toMatchObject({
      total_cost: 1.234567891,
      total_executions: 1,
      daily_costs: [{ date: '2026-10-03', cost: 1.234567891, executions: 1 }],
    });
  });

  it('defaults to the last 30 UTC days, today included', async () => {
    const r = await json('GET', '/stats');
    expect(r.status).toBe(200);
    expect(r.body.daily_costs).toHaveLength(30);
    expect(r.body.daily_costs[29].date).toBe(new Date().toISOString().slice(0, 10));
    expect(r.body.end).toBe(`${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}T00:00:00.000Z`);
  });

  it('refuses a bad window with 400 naming the parameter', async () => {
    expect((await json('GET', '/stats?start=2026-10-05&end=2026-10-01')).body.detail).toMatch(/^start: /);
    expect((await json('GET', '/stats?start=yesterday')).status).toBe(400);
    expect((await json('GET', '/stats?start=2000-01-01&end=2026-01-01')).body.detail).toMatch(/^end: the window spans/);
    expect((await json('GET', '/stats?foo=1')).status).toBe(400);
  });
});

describe(`template analytics (${mode} mode)`, () => {
  const v1 = {
    version: 1,
    total_executions: 3,
    total_cost: 1.484690891,
    avg_cost: 0.494896964,
    latency_ms: { avg: 350, p50: 450, p95: 642.5 },
    tokens_in: 100,
    tokens_out: 50,
  };
  const v2 = {
    version: 2,
    total_executions: 2,
    total_cost: 0.6,
    avg_cost: 0.3,
    latency_ms: { avg: 350, p50: 350, p95: 485 },
    tokens_in: 70,
    tokens_out: 35,
  };
  const zero = (date: string) => ({ date, executions: 0, cost: 0 });

  it('totals, latency, tokens, by version and daily for a window', async () => {
    const r = await json('GET', `/prompts/support/analytics?${WINDOW}`);
    expect(r.status).toBe(200);
    // p50/p95: the sketch holds +1 rows only, so e6's superseded 600 ms stays beside its 650 ms:
    // [100, 200, 300, 500, 600, 650] → p50 400, p95 637.5 (linear interpolation)
    expect(r.body).toEqual({
      prompt_id: 'support',
      version: null,
      start: '2026-10-01T00:00:00.000Z',
      end: '2026-10-08T00:00:00.000Z',
      total_executions: 5,
      total_cost: 2.084690891,
      avg_cost: 0.416938178,
      latency_ms: { avg: 350, p50: 400, p95: 637.5 },
      tokens_in: 170,
      tokens_out: 85,
      by_version: [v1, v2],
      daily: [
        { date: '2026-10-01', executions: 2, cost: 0.100123 },
        zero('2026-10-02'),
        { date: '2026-10-03', executions: 1, cost: 1.234567891 },
        zero('2026-10-04'),
        { date: '2026-10-05', executions: 1, cost: 0.5 },
        { date: '2026-10-06', executions: 1, cost: 0.25 },
        zero('2026-10-07'),
      ],
    });
  });

  it('one version only', async () => {
    const r = await json('GET', `/prompts/support/analytics?${WINDOW}&version=1`);
    const { version, ...totals } = v1;
    expect(r.body).toMatchObject({ version, ...totals, by_version: [v1] });
    expect(r.body.daily.filter((d: { executions: number }) => d.executions > 0)).toEqual([
      { date: '2026-10-01', executions: 1, cost: 0.000123 },
      { date: '2026-10-03', executions: 1, cost: 1.234567891 },
      { date: '2026-10-06', executions: 1, cost: 0.25 },
    ]);
  });

  it('a prompt without executions in the window answers zeros; an unknown prompt 404', async () => {
    const r = await json('GET', '/prompts/billing/analytics?start=2026-11-01&end=2026-11-03');
    expect(r.body).toMatchObject({
      total_executions: 0,
      total_cost: 0,
      avg_cost: 0,
      latency_ms: { avg: null, p50: null, p95: null },
      by_version: [],
      daily: [zero('2026-11-01'), zero('2026-11-02')],
    });
    const missing = await json('GET', '/prompts/nope/analytics');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'Prompt not found' });
  });

  it('reads the pre-aggregated table, not raw executions', async () => {
    // Drop the raw rows of the window: analytics and stats stay (they never read them).
    await svc.stores.clickhouse.command(
      "ALTER TABLE executions DELETE WHERE project_id = 'default' AND has(`tu.prompt_id`, 'billing')",
      {},
      { mutations_sync: '2' },
    );
    const [left] = await svc.stores.clickhouse.query<{ n: string }>(
      "SELECT toString(count()) AS n FROM executions WHERE project_id = 'default' AND has(`tu.prompt_id`, 'billing')",
    );
    expect(left!.n).toBe('0');
    const r = await json('GET', `/prompts/billing/analytics?${WINDOW}`);
    expect(r.body).toMatchObject({
      total_executions: 2,
      total_cost: 1.234567891,
      avg_cost: 0.617283946,
      latency_ms: { avg: 350 },
      tokens_in: 70,
    });
  });
});
