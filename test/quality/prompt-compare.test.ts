// "Is version 2 better, and what does it cost?" (GET …/prompts/{id}/compare): on a fixed data set,
// every figure equals what this test computes by itself — means, sample variances, Welch's t and
// its degrees of freedom, p-values and quantiles by numerical integration of the t and normal
// densities (no code shared with src/quality/statistics.ts), Wilson intervals by their formula.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { correctExecution } from '../helpers/corrections.ts';

let svc: TestService;
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

// The data set: five executions per version, their cost, a NUMERIC and a BOOLEAN score each.
const V1 = { cost: [0.01, 0.012, 0.011, 0.013, 0.014], quality: [0.6, 0.7, 0.65, 0.5, 0.55], resolved: [true, false, true, false, false] };
const V3 = {
  cost: [0.0105, 0.0145, 0.012, 0.013, 0.011, 0.014, 0.0125, 0.0115, 0.0135, 0.0125],
  quality: [0.8, 0.85, 0.9, 0.75, 0.7, 0.8, 0.85, 0.9, 0.75, 0.7],
  latency: [900, 903, 906, 909, 912, 915, 918, 921, 924, 927],
};
const V2 = { cost: [0.015, 0.016, 0.014, 0.018, 0.017], quality: [0.8, 0.85, 0.9, 0.75, 0.7], resolved: [true, true, true, false, true] };

beforeAll(async () => {
  svc = await startTestService();
  expect((await call('POST', '/prompts', { prompt_id: 'cmp', type: 'text', template: 'v1 {{x}}' })).status).toBe(201);
  expect((await call('POST', '/prompts/cmp/versions', { template: 'v2 {{x}}' })).status).toBe(201);
  expect((await call('PUT', '/prompts/cmp/labels/production', { version: 1 })).status).toBe(200);
  expect((await call('PUT', '/prompts/cmp/labels/staging', { version: 2 })).status).toBe(200);
  const scores: object[] = [];
  for (const [v, data, ref] of [
    [1, V1, 'production'],
    [2, V2, 'staging'],
  ] as const) {
    for (let i = 0; i < 5; i++) {
      const traceId = `cmp-v${v}-${i}`;
      const r = await call('POST', '/executions', {
        trace_id: traceId,
        model: 'gpt-4o',
        cost_usd: data.cost[i],
        latency_ms: 100 * v + i,
        template_usages: [{ prompt_id: 'cmp', version: ref }],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      scores.push({ trace_id: traceId, name: 'quality', value: data.quality[i] });
      scores.push({ trace_id: traceId, name: 'resolved', value: data.resolved[i] });
      scores.push({ trace_id: traceId, name: 'tone', value: i % 2 ? 'warm' : 'cold' });
    }
  }
  // Version 3: ten executions scored better than version 1's, costing 4 % more on average, a
  // difference the cost test does not find; latencies whose p95 is 925.65 ms exactly.
  expect((await call('POST', '/prompts/cmp/versions', { template: 'v3 {{x}}' })).status).toBe(201);
  for (let i = 0; i < V3.cost.length; i++) {
    const traceId = `cmp-v3-${i}`;
    const r = await call('POST', '/executions', {
      trace_id: traceId,
      model: 'gpt-4o',
      cost_usd: V3.cost[i],
      latency_ms: V3.latency[i],
      template_usages: [{ prompt_id: 'cmp', version: 3 }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    scores.push({ trace_id: traceId, name: 'quality', value: V3.quality[i] });
  }
  // A score deleted and one on an execution of another prompt count nowhere.
  scores.push({ id: 'gone', trace_id: 'cmp-v1-0', name: 'quality', value: 100 });
  expect((await call('POST', '/scores', scores)).status).toBe(201);
  expect((await call('DELETE', '/scores/gone')).status).toBe(204);
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

// --- independent arithmetic ---
const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / x.length;
const variance = (x: number[]) => {
  const m = mean(x);
  return x.reduce((a, b) => a + (b - m) ** 2, 0) / (x.length - 1);
};
/** Simpson's rule on [a, b] with n (even) intervals. */
function simpson(f: (x: number) => number, a: number, b: number, n = 20_000): number {
  const h = (b - a) / n;
  let s = f(a) + f(b);
  for (let i = 1; i < n; i++) s += f(a + i * h) * (i % 2 ? 4 : 2);
  return (s * h) / 3;
}
/** Two-sided tail of Student's t with df degrees of freedom: the density's kernel integrated over x = tan θ. */
function tTwoSided(t: number, df: number): number {
  const kernel = (th: number) => (1 + Math.tan(th) ** 2 / df) ** (-(df + 1) / 2) / Math.cos(th) ** 2;
  const edge = Math.PI / 2 - 1e-9;
  return (2 * simpson(kernel, Math.atan(Math.abs(t)), edge)) / simpson(kernel, -edge, edge);
}
/** The 0.975 quantile of t by bisection on the tail. */
function tQuantile975(df: number): number {
  let lo = 0;
  let hi = 50;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (tTwoSided(mid, df) > 0.05) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
const normalTwoSided = (z: number) =>
  (2 * simpson((x) => Math.exp((-x * x) / 2) / Math.sqrt(2 * Math.PI), Math.abs(z), Math.abs(z) + 40)) as number;
const Z975 = 1.959963984540054;
function wilson(k: number, n: number): [number, number] {
  const p = k / n;
  const centre = (p + (Z975 * Z975) / (2 * n)) / (1 + (Z975 * Z975) / n);
  const half = ((Z975 / (1 + (Z975 * Z975) / n)) * Math.sqrt((p * (1 - p)) / n + (Z975 * Z975) / (4 * n * n))) as number;
  return [centre - half, centre + half];
}
/** Linear interpolation between closest ranks. */
function quantile(x: number[], q: number): number {
  const s = [...x].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  return s[Math.floor(h)]! + (h - Math.floor(h)) * (s[Math.ceil(h)]! - s[Math.floor(h)]!);
}
function welch(a: number[], b: number[]) {
  const se2 = variance(a) / a.length + variance(b) / b.length;
  const df = se2 ** 2 / ((variance(a) / a.length) ** 2 / (a.length - 1) + (variance(b) / b.length) ** 2 / (b.length - 1));
  const d = mean(b) - mean(a);
  const t = d / Math.sqrt(se2);
  const half = tQuantile975(df) * Math.sqrt(se2);
  return { t, df, d, p: tTwoSided(t, df), low: d - half, high: d + half };
}

describe(`prompt version comparison (${mode} mode)`, () => {
  it('versions 1 and 2: costs, latency, score means with intervals, and the tests, as computed here', async () => {
    const r = await call('GET', '/prompts/cmp/compare?versions=1,2');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.quantiles).toBe('exact');
    const [g1, g2] = r.body.groups;
    expect(g1).toMatchObject({ version: 1, executions: 5, tokens: { in: 0, out: 0 } });
    expect(g2).toMatchObject({ version: 2, executions: 5 });
    // Exact money: 0.01 + 0.012 + 0.011 + 0.013 + 0.014 = 0.06, mean 0.012.
    expect(g1.cost.total_usd).toBe(0.06);
    expect(g1.cost.per_execution.mean_usd).toBe(0.012);
    expect(g2.cost.total_usd).toBe(0.08);
    expect(g1.cost.per_execution.p95_usd).toBeCloseTo(quantile(V1.cost, 0.95), 9);
    expect(g1.latency_ms).toEqual({ p50: 102, p95: quantile([100, 101, 102, 103, 104], 0.95) });

    const t4 = tQuantile975(4);
    for (const [g, data] of [
      [g1, V1],
      [g2, V2],
    ] as const) {
      const q = g.scores.quality;
      expect(q).toMatchObject({ data_type: 'NUMERIC', n: 5, scored_executions: 5 });
      expect(q.mean).toBeCloseTo(mean(data.quality), 6);
      const half = t4 * Math.sqrt(variance(data.quality) / 5);
      expect(q.ci.low).toBeCloseTo(mean(data.quality) - half, 5);
      expect(q.ci.high).toBeCloseTo(mean(data.quality) + half, 5);
      const k = data.resolved.filter(Boolean).length;
      expect(g.scores.resolved).toMatchObject({ data_type: 'BOOLEAN', n: 5, rate: k / 5 });
      const [lo, hi] = wilson(k, 5);
      expect(g.scores.resolved.ci.low).toBeCloseTo(lo, 5);
      expect(g.scores.resolved.ci.high).toBeCloseTo(hi, 5);
      expect(g.scores.tone).toEqual({ data_type: 'CATEGORICAL', n: 5, scored_executions: 5, labels: { cold: 3, warm: 2 } });
    }

    const w = welch(V1.quality, V2.quality);
    const q = r.body.comparison.scores.quality;
    expect(q.test).toBe('welch_t');
    expect(q.difference).toBeCloseTo(w.d, 6);
    expect(q.t).toBeCloseTo(w.t, 6);
    expect(q.df).toBeCloseTo(w.df, 6);
    expect(q.p_value).toBeCloseTo(w.p, 6);
    expect(q.ci.low).toBeCloseTo(w.low, 5);
    expect(q.ci.high).toBeCloseTo(w.high, 5);
    expect(q.significant).toBe(w.p < 0.05);
    expect(q.verdict).toMatch(/^v2 scores 0\.\d+ higher \(95 % CI .+, Welch's t-test p [=<] .+\) and costs 33 % more$/);

    // Booleans: the two-proportion z-test, pooled standard error for z, unpooled for the interval.
    const [ka, kb] = [2, 4];
    const pooled = (ka + kb) / 10;
    const z = (kb / 5 - ka / 5) / Math.sqrt(pooled * (1 - pooled) * (2 / 5));
    const res = r.body.comparison.scores.resolved;
    expect(res.test).toBe('two_proportion_z');
    expect(res.z).toBeCloseTo(z, 6);
    expect(res.p_value).toBeCloseTo(normalTwoSided(z), 6);
    const seU = Math.sqrt(((ka / 5) * (1 - ka / 5)) / 5 + ((kb / 5) * (1 - kb / 5)) / 5);
    expect(res.ci.low).toBeCloseTo(0.4 - Z975 * seU, 5);
    expect(res.ci.high).toBeCloseTo(0.4 + Z975 * seU, 5);
    expect(r.body.comparison.scores.tone).toBeUndefined(); // label counts: nothing single to test

    const cost = r.body.comparison.cost_per_execution;
    const wc = welch(V1.cost, V2.cost);
    expect(cost.test).toBe('welch_t');
    expect(cost.difference).toBeCloseTo(0.004, 9);
    expect(cost.p_value).toBeCloseTo(wc.p, 6);
    expect(cost.relative).toBeCloseTo(0.08 / 0.06 - 1, 4);
  });

  it('by label: the executions fetched by each label; only the scores named', async () => {
    const r = await call('GET', '/prompts/cmp/compare?labels=production,staging&scores=quality');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.by).toBe('label');
    expect(r.body.groups.map((g: { label: string; executions: number }) => [g.label, g.executions])).toEqual([
      ['production', 5],
      ['staging', 5],
    ]);
    expect(Object.keys(r.body.groups[0].scores)).toEqual(['quality']);
    expect(r.body.comparison.scores.quality.difference).toBeCloseTo(mean(V2.quality) - mean(V1.quality), 6);
  });

  it('bad input: not two versions, both kinds, an unknown prompt', async () => {
    expect((await call('GET', '/prompts/cmp/compare')).status).toBe(400);
    const one = await call('GET', '/prompts/cmp/compare?versions=1');
    expect([one.status, one.body.detail]).toEqual([400, 'versions: give exactly two to compare, got 1']);
    expect((await call('GET', '/prompts/cmp/compare?versions=1,2&labels=a,b')).status).toBe(400);
    expect((await call('GET', '/prompts/cmp/compare?versions=2,2')).status).toBe(400);
    expect((await call('GET', '/prompts/nope/compare?versions=1,2')).status).toBe(404);
    // A version nobody ran: empty figures, nothing to test, no error.
    const empty = await call('GET', '/prompts/cmp/compare?versions=1,7');
    expect(empty.status).toBe(200);
    expect(empty.body.groups[1]).toMatchObject({ version: 7, executions: 0, cost: { total_usd: 0, per_execution: { mean_usd: null } } });
    expect(empty.body.comparison.scores.quality).toMatchObject({ p_value: null, significant: false });
  });

  it('a score verdict says how the cost differs only when the cost test finds it', async () => {
    const r = await call('GET', '/prompts/cmp/compare?versions=1,3&scores=quality');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const cost = r.body.comparison.cost_per_execution;
    expect(cost.relative).toBeCloseTo(0.0125 / 0.012 - 1, 4); // 4 % more
    expect(cost.significant).toBe(false);
    const q = r.body.comparison.scores.quality;
    expect(q.significant).toBe(true);
    expect(q.verdict).toMatch(
      /^v3 scores 0\.\d+ higher \(95 % CI .+, Welch's t-test p [=<] [\d.]+\); the cost difference is not significant$/,
    );
    expect(q.verdict).not.toMatch(/costs \d+ %/);
  });

  it('latency percentiles: the comparison and the prompt analytics answer the same on the same data', async () => {
    // Type 7 over 900, 903, …, 924, 927: p95 at rank 8.55 = 924 + 0.55 × 3 = 925.65, p50 = 913.5.
    const compared = await call('GET', '/prompts/cmp/compare?versions=1,3');
    const analytics = await call('GET', '/prompts/cmp/analytics?version=3');
    expect([compared.status, analytics.status]).toEqual([200, 200]);
    const fromCompare = compared.body.groups[1].latency_ms;
    const fromAnalytics = analytics.body.latency_ms;
    expect(fromCompare).toEqual({ p50: 913.5, p95: 925.7 });
    expect({ p50: fromAnalytics.p50, p95: fromAnalytics.p95 }).toEqual(fromCompare);
    expect(analytics.body.by_version[0].latency_ms.p95).toBe(fromCompare.p95);
  });
  it('groups of over 100,000 executions: counts, costs and the cost test exact from the days, quantiles estimated', async () => {
    expect((await call('POST', '/prompts', { prompt_id: 'big', type: 'text', template: 'v1 {{x}}' })).status).toBe(201);
    expect((await call('POST', '/prompts/big/versions', { template: 'v2 {{x}}' })).status).toBe(201);
    const ch = svc.stores.clickhouse;
    // 60,000 executions per version over the last two days, as stored by ingest (through the views).
    await ch.command(
      `INSERT INTO executions (project_id, started_at, trace_id, version, sign, source, model, status, tokens_in, tokens_out, latency_ms,
         cost_usd, cost_source, content_hash, \`tu.prompt_id\`, \`tu.version\`, \`tu.version_ref\`, \`tu.role\`, \`tu.source\`, \`tu.message_index\`)
       SELECT 'default', now64(3) - toIntervalSecond(number), concat('big-', toString(number)), 1, 1, 'api', 'gpt-4o', 'ok', 10, 5,
         100 + number % 900 + (number % 2) * 50, toDecimal64(0.001 + (number % 1000) / 1000000 + (number % 2) / 10000, 9), 'computed', 'h',
         ['big'], [toUInt32(1 + number % 2)], [''], [''], [''], [-1]
       FROM numbers(120000)`,
    );
    await correctExecution(ch, 'big-7', { cost_usd: '0.5' });
    const exact = await ch.query<{ v: number; n: string; cost: string; mean: number; variance: number; p50: number }>(
      `SELECT \`tu.version\`[1] AS v, toString(count()) AS n, toString(sum(cost_usd)) AS cost, avg(toFloat64(cost_usd)) AS mean,
         varSamp(toFloat64(cost_usd)) AS variance, quantileExactInclusive(0.5)(toFloat64(latency_ms)) AS p50
       FROM executions FINAL WHERE project_id = 'default' AND has(\`tu.prompt_id\`, 'big') AND sign = 1 GROUP BY v ORDER BY v`,
    );
    const r = await call('GET', '/prompts/big/compare?versions=1,2');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.quantiles).toBe('estimated');
    for (const [i, g] of (r.body.groups as Array<Record<string, any>>).entries()) {
      expect(g.executions).toBe(Number(exact[i]!.n));
      expect(g.cost.total_usd).toBe(Number(exact[i]!.cost));
      expect(Math.abs(g.latency_ms.p50 / exact[i]!.p50 - 1)).toBeLessThan(0.05);
    }
    const [a, b] = exact.map((e) => ({ n: Number(e.n), mean: e.mean, variance: e.variance }));
    const se = Math.sqrt(a!.variance / a!.n + b!.variance / b!.n);
    // the variance from sums of squares (floats) agrees with the two-pass one to a millionth
    expect(Math.abs(r.body.comparison.cost_per_execution.t / ((b!.mean - a!.mean) / se) - 1)).toBeLessThan(1e-5);
    // The days are copied from the executions at boot when the table is empty.
    await ch.command('TRUNCATE TABLE prompt_version_days');
    const env = svc.testEnv;
    await svc.close();
    svc = await startTestService({}, { env });
    const again = await call('GET', '/prompts/big/compare?versions=1,2');
    const exactParts = (body: { groups: Array<Record<string, any>> }) =>
      body.groups.map((g) => [g.executions, g.cost.total_usd, g.cost.per_execution.mean_usd]);
    expect(exactParts(again.body)).toEqual(exactParts(r.body));
  });
});
