// Comparing two runs (GET …/runs/compare?runs=a,b; docs/datasets.md): the statistics in the answer
// equal values computed here, independently of src/quality/statistics.ts — the paired t-test by
// integrating Student's density, McNemar's exact p from binomial coefficients in BigInt, Welch's
// t and df from their formulas, exact cost totals in nano-dollars, type-7 percentiles — and the
// items come side by side in dataset order, a page at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { binomial, twoSidedP } from '../helpers/independent-statistics.ts';

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

// ---- Independent statistics -------------------------------------------------------------------

/** The t with P(|T| > t) = p, by bisection on twoSidedP. */
function tCritical(p: number, df: number): number {
  let lo = 0;
  let hi = 50;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (twoSidedP(mid, df) > p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sampleVar = (xs: number[]) => xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1);

function percentile7(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const h = (s.length - 1) * p;
  const i = Math.floor(h);
  return i + 1 < s.length ? s[i]! + (h - i) * (s[i + 1]! - s[i]!) : s[i]!;
}

// ---- The experiment ------------------------------------------------------------------------

const N = 14;
// Run a ran items 0..11, run b items 0..9, 12 and 13: items 0..9 are paired.
const inA = (i: number) => i < 12;
const inB = (i: number) => i < 10 || i >= 12;
const quality = {
  a: [0.61, 0.72, 0.55, 0.8, 0.67, 0.49, 0.73, 0.58, 0.66, 0.7],
  b: [0.7, 0.75, 0.62, 0.79, 0.74, 0.6, 0.81, 0.57, 0.72, 0.78],
};
// correct: both true on 0..2, a only on 3, b only on 4..8, both false on 9.
const correct = { a: (i: number) => i <= 3, b: (i: number) => i <= 2 || (i >= 4 && i <= 8) };
// style: scored only on items one run ran and the other did not (no pairs: the unpaired test).
const style = {
  a: new Map([
    [10, 3.5],
    [11, 4.25],
  ]),
  b: new Map([
    [12, 2],
    [13, 2.75],
  ]),
};
const costOf = (run: 'a' | 'b', i: number) => `0.${String(1000 + i * 37 + (run === 'b' ? 11 : 0)).padStart(4, '0')}12345`;
const latencyOf = (run: 'a' | 'b', i: number) => 400 + i * 25 + (run === 'b' ? (i % 3) * 40 : 0);

describe(`comparing runs (${mode} mode)`, () => {
  it('the paired tests, the unpaired fallback, totals and the side-by-side items equal values computed here', async () => {
    const ds = (await call('POST', '/datasets', { name: 'compare' })).body;
    const items = (
      await call(
        'POST',
        `/datasets/${ds.dataset_id}/items`,
        Array.from({ length: N }, (_x, i) => ({ input: { i } })),
      )
    ).body.items as Array<{
      item_id: string;
    }>;
    const runs: Record<'a' | 'b', string> = {
      a: (await call('POST', `/datasets/${ds.dataset_id}/runs`, { name: 'v7' })).body.run_id,
      b: (await call('POST', `/datasets/${ds.dataset_id}/runs`, { name: 'v8' })).body.run_id,
    };
    for (const run of ['a', 'b'] as const) {
      const ran = Array.from({ length: N }, (_x, i) => i).filter(run === 'a' ? inA : inB);
      for (const i of ran) {
        const trace = `cmp-${run}-${i}`;
        const rec = await call('POST', '/executions', {
          trace_id: trace,
          model: 'gpt-4o',
          cost_usd: Number(costOf(run, i)),
          latency_ms: latencyOf(run, i),
          conversation_history: [
            { role: 'user', content: `q${i}` },
            { role: 'assistant', content: `${run}${i}` },
          ],
        });
        expect(rec.status, JSON.stringify(rec.body)).toBe(201);
        const scores: Array<Record<string, unknown>> = [];
        if (i < 10)
          scores.push(
            { trace_id: trace, name: 'quality', value: quality[run][i] },
            { trace_id: trace, name: 'correct', value: correct[run](i), data_type: 'BOOLEAN' },
          );
        if (style[run].has(i)) scores.push({ trace_id: trace, name: 'style', value: style[run].get(i) });
        if (scores.length) expect((await call('POST', '/scores', scores)).status).toBe(201);
      }
      const linked = await call(
        'POST',
        `/datasets/${ds.dataset_id}/runs/${runs[run]}/items`,
        ran.map((i) => ({ item_id: items[i]!.item_id, trace_id: `cmp-${run}-${i}` })),
      );
      expect(linked.body).toEqual({ linked: ran.length });
    }
    const path = `/datasets/${ds.dataset_id}/runs/compare?runs=${runs.a},${runs.b}&limit=5`;
    const r = await until(async () => {
      const c = await call('GET', path);
      return c.status === 200 &&
        c.body.runs.every((x: { totals: { items: { awaiting_execution: number } } }) => x.totals.items.awaiting_execution === 0)
        ? c.body
        : undefined;
    }, 'both runs joined to their executions');

    expect(r.runs.map((x: { name: string }) => x.name)).toEqual(['v7', 'v8']);
    expect(r.comparison.paired_items).toBe(10);

    // quality: the paired t-test on the 10 items scored in both.
    const d = quality.b.map((b, i) => b - quality.a[i]!);
    const se = Math.sqrt(sampleVar(d) / d.length);
    const t = mean(d) / se;
    const q = r.comparison.scores.quality;
    expect(q.test).toBe('paired_t');
    expect(q.n).toBe(10);
    expect(q.df).toBe(9);
    expect(q.t).toBeCloseTo(t, 9);
    expect(q.difference).toBeCloseTo(mean(d), 5);
    expect(q.p_value).toBeCloseTo(twoSidedP(t, 9), 8);
    const half = tCritical(0.05, 9) * se;
    expect(q.ci.low).toBeCloseTo(mean(d) - half, 5);
    expect(q.ci.high).toBeCloseTo(mean(d) + half, 5);
    expect(q.significant).toBe(twoSidedP(t, 9) < 0.05);
    expect(q.verdict).toMatch(/^v8 scores 0\.\d+ higher \(95 % CI .*paired t-test p/);

    // correct: McNemar's exact test on the 10 pairs: 1 true under a only, 5 under b only.
    const c = r.comparison.scores.correct;
    expect(c).toMatchObject({ test: 'mcnemar_exact', n: 10, a_only: 1, b_only: 5, rate_a: 0.4, rate_b: 0.8 });
    let tail = 0n;
    for (let k = 0; k <= 1; k++) tail += binomial(6, k);
    const exactP = Math.min(1, (2 * Number(tail)) / 2 ** 6); // 2·(1 + 6)/64
    expect(c.p_value).toBeCloseTo(exactP, 12);
    expect(c.p_value).toBeCloseTo(0.21875, 12);
    expect(c.difference).toBeCloseTo(0.4, 12);
    expect(c.significant).toBe(false);
    expect(c.verdict).toMatch(/McNemar's exact test p = 0\.22\), not significant: p ≥ 0\.05/);

    // style: no item scored in both runs: Welch's test of the two samples.
    const [sa, sb] = [[...style.a.values()], [...style.b.values()]];
    const va = sampleVar(sa) / sa.length;
    const vb = sampleVar(sb) / sb.length;
    const s = r.comparison.scores.style;
    expect(s.test).toBe('welch_t');
    expect(s.t).toBeCloseTo((mean(sb) - mean(sa)) / Math.sqrt(va + vb), 9);
    expect(s.df).toBeCloseTo((va + vb) ** 2 / (va ** 2 / (sa.length - 1) + vb ** 2 / (sb.length - 1)), 9);

    // cost per item: paired over the 10 items with an execution in both.
    const costD = Array.from({ length: 10 }, (_x, i) => Number(costOf('b', i)) - Number(costOf('a', i)));
    expect(r.comparison.cost_per_item.test).toBe('paired_t');
    expect(r.comparison.cost_per_item.difference).toBeCloseTo(mean(costD), 8);
    expect(r.comparison.latency_ms.test).toBe('paired_t');
    // Cost and latency verdicts speak of cost and latency (b costs $0.0011 more on every item, and is slower on most).
    expect(r.comparison.cost_per_item.verdict).toMatch(
      /^v8 costs \$0\.00110 more per item \(95 % CI \$0\.00110 to \$0\.00110, paired t-test p /,
    );
    // latency differences b − a: 0, 40, 80, 0, 40, 80, 0, 40, 80, 0 ms.
    expect(r.comparison.latency_ms.verdict).toBe('v8 is 36 ms slower (95 % CI 11–61 ms, paired t-test p = 0.01)');
    // p-values at their computed precision, not float noise (McNemar's 7/32 came out 0.21875000000000094).
    expect(c.p_value).toBe(0.21875);
    for (const t of [r.comparison.cost_per_item, r.comparison.latency_ms, ...Object.values(r.comparison.scores)] as Array<{
      p_value: number;
    }>)
      expect(Number(t.p_value.toPrecision(10))).toBe(t.p_value);

    // Each run's totals: exact cost, type-7 latency percentiles, score means and rates.
    for (const [k, run] of [
      ['a', r.runs[0]],
      ['b', r.runs[1]],
    ] as const) {
      const ran = Array.from({ length: N }, (_x, i) => i).filter(k === 'a' ? inA : inB);
      const totalNanos = ran.reduce((sum, i) => sum + BigInt(costOf(k, i).replace('0.', '')), 0n);
      expect(run.totals.cost.total_usd).toBe(
        Number(`${totalNanos / 1_000_000_000n}.${String(totalNanos % 1_000_000_000n).padStart(9, '0')}`),
      );
      const latencies = ran.map((i) => latencyOf(k, i));
      expect(run.totals.latency_ms).toEqual({ p50: percentile7(latencies, 0.5), p95: Number(percentile7(latencies, 0.95).toFixed(1)) });
      expect(run.totals.scores.quality.mean).toBeCloseTo(mean(quality[k]), 5);
      expect(run.totals.scores.correct.rate).toBe(k === 'a' ? 0.4 : 0.8);
      expect(run.totals.items).toMatchObject({ linked: ran.length, done: ran.length, failed: 0 });
    }

    // Side by side in dataset order, in pages: items 0..13 (a missing on 12, 13; b on 10, 11).
    const seen: Array<[number, string | null, string | null]> = [];
    let page = r;
    for (;;) {
      for (const row of page.items) {
        const i = items.findIndex((x) => x.item_id === row.item_id);
        seen.push([i, row.a?.execution?.output ?? null, row.b?.execution?.output ?? null]);
      }
      if (!page.next_cursor) break;
      page = (await call('GET', `${path}&cursor=${page.next_cursor}`)).body;
    }
    expect(seen).toEqual(Array.from({ length: N }, (_x, i) => [i, inA(i) ? `a${i}` : null, inB(i) ? `b${i}` : null]));
  });

  it('runs=a,b,c: a 400 naming the parameter and saying how many run ids it got', async () => {
    const ds = (await call('POST', '/datasets', { name: 'compare-three' })).body;
    const ids: string[] = [];
    for (const name of ['x', 'y', 'z']) ids.push((await call('POST', `/datasets/${ds.dataset_id}/runs`, { name })).body.run_id);
    const three = await call('GET', `/datasets/${ds.dataset_id}/runs/compare?runs=${ids.join(',')}`);
    expect([three.status, three.body]).toEqual([400, { detail: 'runs: give exactly two run ids separated by a comma (runs=a,b), got 3' }]);
    const repeated = await call('GET', `/datasets/${ds.dataset_id}/runs/compare?${ids.map((id) => `runs=${id}`).join('&')}`);
    expect([repeated.status, repeated.body]).toEqual([
      400,
      { detail: 'runs: give exactly two run ids separated by a comma (runs=a,b), got 3' },
    ]);
    const two = await call('GET', `/datasets/${ds.dataset_id}/runs/compare?runs=${ids[0]},${ids[1]}`);
    expect(two.status).toBe(200);
  });
});
