// One evaluation of a monitor (docs/monitors.md, "Evaluation"): the metric over the window
// [at − window, at), and for a change condition over the baseline (the window before, or the same
// window's executions of the baseline prompt label), then the condition. Significance with the
// tests `…/compare` runs (quality/statistics.ts): Welch's t-test for means (score_mean,
// cost_per_execution), the two-proportion z-test for rates (score_rate, error_rate) and, for
// latency_p95, the two-proportion z-test of the share of executions slower than the baseline's p95
// (a p95 that rose is more than 5 % of executions above the old p95). A change is a breach when
// the two-sided p-value is under alpha and the difference goes the condition's direction.
import { twoProportionZTest, welchTTest, type GroupMoments, type TestResult } from '../quality/statistics.ts';
import { round, roundInterval, roundP } from '../quality/compare.ts';
import { listFilterOf, type ExecutionFilter } from '../evaluators/evaluator.ts';
import type { ExecutionFigures, WindowRead } from '../executions/execution-window-repository.ts';
import type { WindowScoreFigures } from '../scores/score-aggregate-repository.ts';
import { metricWords, type Condition, type Evaluation, type Metric, type TestFigures, type WindowFigures } from './monitor.ts';

/** What an evaluation reads (ClickHouse: executions/execution-window-repository.ts, scores/score-repository.ts). */
export interface MonitorMetrics {
  executions(r: WindowRead): Promise<ExecutionFigures>;
  latencyP95(r: WindowRead): Promise<{ n: number; p95: number | null }>;
  slowerThan(r: WindowRead, ms: number): Promise<{ n: number; slower: number }>;
  scores(r: WindowRead, name: string, rateValue: string): Promise<WindowScoreFigures>;
}

interface Sample {
  n: number;
  value: number | null;
  moments?: GroupMoments;
  rate?: { successes: number; n: number };
}

export interface MonitorDefinition {
  project_id: string;
  metric: Metric;
  filter: ExecutionFilter;
  window_minutes: number;
  condition: Condition;
}

async function measure(metric: Metric, read: WindowRead, reads: MonitorMetrics): Promise<Sample> {
  if (metric.kind === 'latency_p95') {
    const l = await reads.latencyP95(read);
    return { n: l.n, value: l.p95 };
  }
  if (metric.kind === 'score_mean' || metric.kind === 'score_rate') {
    const s = await reads.scores(read, metric.score_name, metric.kind === 'score_rate' ? (metric.value ?? 'true') : 'true');
    if (metric.kind === 'score_rate') return { n: s.n, value: s.n ? s.successes / s.n : null, rate: { successes: s.successes, n: s.n } };
    return { n: s.n, value: s.mean, moments: { n: s.n, mean: s.mean ?? NaN, variance: s.variance ?? NaN } };
  }
  const e = await reads.executions(read);
  if (metric.kind === 'executions_count') return { n: e.n, value: e.n };
  if (metric.kind === 'error_rate') return { n: e.n, value: e.n ? e.errors / e.n : null, rate: { successes: e.errors, n: e.n } };
  const mean = e.n ? e.costSum / e.n : NaN;
  const variance = e.n > 1 ? Math.max(0, (e.costSquares - (e.costSum * e.costSum) / e.n) / (e.n - 1)) : NaN;
  return { n: e.n, value: e.n ? mean : null, moments: { n: e.n, mean, variance } };
}

const digitsOf = (metric: Metric) => (metric.kind === 'cost_per_execution' ? 9 : metric.kind === 'latency_p95' ? 1 : 6);
const figures = (metric: Metric, read: WindowRead, s: Sample): WindowFigures => ({
  start: read.start.toISOString(),
  end: read.end.toISOString(),
  n: s.n,
  value: s.value === null || !Number.isFinite(s.value) ? null : round(s.value, digitsOf(metric)),
});

const holds = (value: number, op: '>' | '>=' | '<' | '<=', limit: number) =>
  op === '>' ? value > limit : op === '>=' ? value >= limit : op === '<' ? value < limit : value <= limit;

/** The test of current (b) against baseline (a); for latency, the share slower than the baseline's p95. */
async function test(
  def: MonitorDefinition,
  current: { read: WindowRead; s: Sample },
  baseline: { read: WindowRead; s: Sample },
  reads: MonitorMetrics,
): Promise<{ result: TestResult & { z?: number | null; t?: number | null }; of: string }> {
  if (def.metric.kind === 'latency_p95') {
    const limit = baseline.s.value!;
    const [a, b] = await Promise.all([reads.slowerThan(baseline.read, limit), reads.slowerThan(current.read, limit)]);
    return {
      result: twoProportionZTest({ successes: a.slower, n: a.n }, { successes: b.slower, n: b.n }),
      of: `share of executions slower than the baseline's p95 (${round(limit, 1)} ms)`,
    };
  }
  if (current.s.rate && baseline.s.rate)
    return { result: twoProportionZTest(baseline.s.rate, current.s.rate), of: metricWords(def.metric) };
  return { result: welchTTest(baseline.s.moments!, current.s.moments!), of: metricWords(def.metric) };
}

export async function evaluate(def: MonitorDefinition, reads: MonitorMetrics, at: Date): Promise<Evaluation> {
  const windowMs = def.window_minutes * 60_000;
  const read: WindowRead = {
    projectId: def.project_id,
    filter: listFilterOf(def.filter),
    start: new Date(at.getTime() - windowMs),
    end: at,
  };
  const c = def.condition;
  const base = { evaluated_at: at.toISOString(), metric: def.metric.kind };
  const words = metricWords(def.metric);
  if (c.kind === 'threshold') {
    const s = await measure(def.metric, read, reads);
    const current = figures(def.metric, read, s);
    const counted = def.metric.kind === 'executions_count' || s.n >= c.min_samples;
    if (!counted || current.value === null)
      return {
        ...base,
        current,
        baseline: null,
        test: null,
        breached: null,
        reason: `too few samples: ${s.n} in the window, the condition needs ${c.min_samples}`,
      };
    const breached = holds(current.value, c.op, c.value);
    return {
      ...base,
      current,
      baseline: null,
      test: null,
      breached,
      reason: `${words} ${current.value} (n=${s.n}) ${breached ? 'is' : 'is not'} ${c.op} ${c.value}`,
    };
  }
  const baseRead: WindowRead =
    c.against === 'previous_window'
      ? { ...read, start: new Date(read.start.getTime() - windowMs), end: read.start }
      : { ...read, filter: listFilterOf({ ...def.filter, prompt_label: c.against.label }) };
  const [s, b] = await Promise.all([measure(def.metric, read, reads), measure(def.metric, baseRead, reads)]);
  const current = figures(def.metric, read, s);
  const baseline = {
    ...figures(def.metric, baseRead, b),
    ...(c.against === 'previous_window' ? {} : { label: c.against.label }),
  };
  const against = c.against === 'previous_window' ? 'the previous window' : `label "${c.against.label}"`;
  if (s.n < c.min_samples || b.n < c.min_samples || s.value === null || b.value === null)
    return {
      ...base,
      current,
      baseline,
      test: null,
      breached: null,
      reason: `too few samples: ${s.n} in the window and ${b.n} in ${against}, the condition needs ${c.min_samples} in each`,
    };
  const { result, of } = await test(def, { read, s }, { read: baseRead, s: b }, reads);
  const statistic = 'z' in result ? (result.z ?? null) : 't' in result ? (result.t ?? null) : null;
  const testFigures: TestFigures = {
    name: result.test as TestFigures['name'],
    of,
    statistic: round(statistic),
    p_value: roundP(result.p_value),
    alpha: c.alpha,
    difference: round(result.difference, digitsOf(def.metric)),
    ci: roundInterval(result.ci),
  };
  const significant = result.p_value !== null && result.p_value < c.alpha;
  const diff = result.difference ?? 0;
  const way = diff > 0 ? 'increase' : diff < 0 ? 'decrease' : 'no change';
  const breached = significant && (c.direction === 'any' ? diff !== 0 : c.direction === way);
  const pText = testFigures.p_value === null ? 'p undefined (no variation)' : `p=${testFigures.p_value}`;
  return {
    ...base,
    current,
    baseline,
    test: testFigures,
    breached,
    reason:
      `${words} ${current.value} (n=${s.n}) against ${baseline.value} (n=${b.n}) in ${against}: ${testFigures.name} ${pText}` +
      `${significant ? ` < α=${c.alpha}` : ` (α=${c.alpha}, not significant)`}, ${way}` +
      (significant && !breached ? ` (the condition watches for ${c.direction === 'increase' ? 'an increase' : 'a decrease'})` : ''),
  };
}
