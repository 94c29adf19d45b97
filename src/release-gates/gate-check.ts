// The conditions of a release gate (docs/prompts.md, "Release gates"), judged from the statistics
// of two dataset runs (datasets/run-compare.ts: paired t-test or McNemar's exact test where the
// same items ran in both runs) — the candidate version's run against the run of the version the
// label holds — and the approvals. Pure: the figures in, the conditions out.
import type { RunMeasures, ScoreTest } from '../datasets/run-compare.ts';
import type { GateConfig } from '../prompts/label-gate-repository.ts';
import { roundP } from '../quality/compare.ts';
import { formatP } from '../quality/statistics.ts';

/** passed and not_applicable let the label move; failed and not_evaluated refuse it. */
export type ConditionStatus = 'passed' | 'failed' | 'not_evaluated' | 'not_applicable';

export interface Condition {
  condition: 'evidence_candidate' | 'evidence_current' | 'score' | 'cost' | 'approval';
  /** the score name, for a score condition */
  score?: string;
  status: ConditionStatus;
  /** what was found, in words; a refusal quotes the details of the failed conditions */
  detail: string;
  figures?: Record<string, unknown>;
}

export interface RunRef {
  run_id: string;
  name: string;
}

const runWords = (r: RunRef) => `run "${r.name}" (${r.run_id})`;
const num = (x: number | null, digits = 6) => (x === null ? null : Number(x.toFixed(digits)));
const signed = (x: number) => (x >= 0 ? `+${num(x)}` : `${num(x)}`);
const TEST_WORDS: Record<string, string> = {
  paired_t: 'paired t-test',
  mcnemar_exact: "McNemar's exact test",
  welch_t: "Welch's t-test",
  two_proportion_z: 'two-proportion z-test',
};

/** Whether one gated score regressed significantly: p < alpha with the difference in the worse direction. */
export function scoreCondition(
  name: string,
  lowerIsBetter: boolean,
  alpha: number,
  t: ScoreTest | undefined,
  runs: { current: RunRef; candidate: RunRef },
): Condition {
  const base = { condition: 'score' as const, score: name };
  const direction = lowerIsBetter ? 'lower_is_better' : 'higher_is_better';
  const missing = !t || t.n_a === 0 ? runs.current : t.n_b === 0 ? runs.candidate : undefined;
  if (!t || missing)
    return {
      ...base,
      status: 'failed',
      detail: `score ${name}: no values in ${runWords(missing ?? runs.current)}, so no regression can be ruled out`,
      figures: { direction, n_current: t?.n_a ?? 0, n_candidate: t?.n_b ?? 0 },
    };
  const r = t.result;
  const p = r.p_value;
  const d = r.difference;
  const worse = d !== null && (lowerIsBetter ? d > 0 : d < 0);
  const significant = p !== null && p < alpha;
  const what = t.data_type === 'BOOLEAN' ? 'rate' : 'mean';
  const figures = {
    data_type: t.data_type,
    direction,
    test: r.test,
    n_current: t.n_a,
    n_candidate: t.n_b,
    ...('n' in r ? { n_paired: r.n } : {}),
    [`${what}_current`]: num(t.mean_a),
    [`${what}_candidate`]: num(t.mean_b),
    difference: num(d),
    p_value: roundP(p), // 10 significant digits, as the comparisons answer it (no 0.10937499999999979)
    alpha,
    significant,
    worse,
  };
  const moved = `${what} ${num(t.mean_a)} → ${num(t.mean_b)}`;
  const testWords = `${TEST_WORDS[r.test] ?? r.test} ${p === null ? 'p not computable (no difference to test)' : `p ${formatP(p)}`}`;
  if (significant && worse)
    return {
      ...base,
      status: 'failed',
      detail: `score ${name} regressed significantly: ${moved} (difference ${signed(d!)}, ${testWords} < alpha ${alpha}${lowerIsBetter ? ', lower is better' : ''})`,
      figures,
    };
  return {
    ...base,
    status: 'passed',
    detail: `score ${name}: no significant regression (${moved}, ${testWords}, alpha ${alpha})`,
    figures,
  };
}

/** Whether the mean cost per item of the candidate's run stays within the bound over the current's. */
export function costCondition(boundPct: number, cost: RunMeasures['cost'], runs: { current: RunRef; candidate: RunRef }): Condition {
  const figures: Record<string, unknown> = {
    mean_cost_current_usd: num(cost.a, 12),
    mean_cost_candidate_usd: num(cost.b, 12),
    items_current: cost.n_a,
    items_candidate: cost.n_b,
    max_increase_pct: boundPct,
  };
  const missing = cost.n_a === 0 ? runs.current : cost.n_b === 0 ? runs.candidate : undefined;
  if (missing)
    return {
      condition: 'cost',
      status: 'failed',
      detail: `cost: no executions in ${runWords(missing)} to take a cost per item from`,
      figures,
    };
  const increasePct = cost.a > 0 ? ((cost.b - cost.a) / cost.a) * 100 : cost.b > 0 ? null : 0;
  figures.increase_pct = num(increasePct, 4);
  const within = increasePct !== null && increasePct <= boundPct;
  const words = `mean cost per item $${num(cost.a, 12)} → $${num(cost.b, 12)}`;
  if (!within)
    return {
      condition: 'cost',
      status: 'failed',
      detail:
        increasePct === null
          ? `cost per item rose from nothing (${words}): above the bound of ${boundPct} %`
          : `cost per item rose ${num(increasePct, 2)} % (${words}), above the bound of ${boundPct} %`,
      figures,
    };
  return {
    condition: 'cost',
    status: 'passed',
    detail: `cost per item changed ${num(increasePct, 2)} % (${words}), within ${boundPct} %`,
    figures,
  };
}

/** The conditions that cannot be judged without both runs, each marked as such. */
export function comparedConditions(gate: GateConfig, status: 'not_evaluated' | 'not_applicable', why: string): Condition[] {
  return [
    ...gate.scores.map((name) => ({ condition: 'score' as const, score: name, status, detail: `score ${name}: ${why}` })),
    ...(gate.max_cost_increase_pct === null ? [] : [{ condition: 'cost' as const, status, detail: `cost: ${why}` }]),
  ];
}

export const passes = (conditions: readonly Condition[]) => conditions.every((c) => c.status === 'passed' || c.status === 'not_applicable');

/** A refusal in words: the failed conditions (those not evaluated follow from a failed one). */
export function refusal(label: string, version: number, conditions: readonly Condition[]): string {
  const failed = conditions.filter((c) => c.status === 'failed').map((c) => c.detail);
  return `The release gate of label ${label} refuses version ${version}: ${failed.join('; ')}`;
}
