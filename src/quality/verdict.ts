// The plain sentence of a tested difference (the `verdict` of the version and run comparisons;
// docs/scores.md, docs/datasets.md): what differs in the words of what was measured — a score
// ("v7 scores 0.08 higher"), a rate ("v7's rate is 15 points higher"), a cost ("v7 costs $0.00005
// more per execution"), a latency ("v7 is 120 ms slower") —, its interval, the test and p. Pure.
import type { Interval, McNemarResult, PairedResult, TestName, TestResult, TwoProportionResult, WelchResult } from './statistics.ts';

const TEST_LABEL: Record<TestName, string> = {
  welch_t: "Welch's t-test",
  two_proportion_z: 'two-proportion z-test',
  paired_t: 'paired t-test',
  mcnemar_exact: "McNemar's exact test",
};

/** What a difference measures: scores (or rates, by the test), cost per execution in USD, latency in ms. */
export type Measure = 'score' | 'cost_usd' | 'latency_ms';

export interface VerdictInput {
  /** the result of welchTTest, twoProportionZTest, pairedTTest or mcNemarExactTest, b against a */
  result: WelchResult | TwoProportionResult | PairedResult | McNemarResult;
  /** names of the two versions as shown, e.g. 'v6' and 'v7' */
  a: string;
  b: string;
  /** what the result measures; default a score */
  measure?: Measure;
  /** for a cost: what one value is the cost of ('execution', the default, or 'item') */
  per?: string;
  /**
   * Beside a score: each version's mean cost per execution and the test of their difference. The
   * sentence says how much more or less b costs only when that test finds a difference.
   */
  cost?: { a: number; b: number; test: Pick<TestResult, 'p_value' | 'significant'> };
  /** how many values each side has: names the side with none when the difference cannot be computed */
  counts?: { a: number; b: number };
  /** decimals of the difference and its interval; by default from the interval's width */
  decimals?: number;
}

export interface Verdict {
  test: TestName;
  significant: boolean;
  sentence: string;
}

/** p as people read it (and as the console shows it): 2 significant digits, "< 0.0001" below that. */
export function formatP(p: number): string {
  if (p < 0.0001) return '< 0.0001';
  // From p as the answers carry it (10 significant digits): 0.12499999999 is 0.125, shown 0.13 as the console shows it.
  return `= ${Number(Number(p.toPrecision(10)).toPrecision(2))}`;
}

/** How each measure speaks of b against a. */
const WORDING: Record<Measure | 'rate', { more: string; less: string; same: string; unit: (x: string) => string; nothing: string }> = {
  score: { more: 'scores {x} higher', less: 'scores {x} lower', same: 'scores the same as {a}', unit: (x) => x, nothing: 'scores' },
  rate: {
    more: "'s rate is {x} higher",
    less: "'s rate is {x} lower",
    same: "'s rate is the same as {a}'s",
    unit: (x) => `${x} points`,
    nothing: 'scores',
  },
  cost_usd: {
    more: 'costs {x} more per {per}',
    less: 'costs {x} less per {per}',
    same: 'costs the same as {a} per {per}',
    unit: (x) => (x.startsWith('−') ? `−$${x.slice(1)}` : `$${x}`),
    nothing: 'executions',
  },
  latency_ms: { more: 'is {x} slower', less: 'is {x} faster', same: 'is as fast as {a}', unit: (x) => `${x} ms`, nothing: 'executions' },
};

/**
 * A plain sentence for the difference of b against a, e.g. "v7 scores 0.08 higher (95 % CI
 * 0.03–0.13, Welch's t-test p = 0.002) and costs 12 % more". Rates (two-proportion and McNemar
 * tests) are in percentage points. A difference that is not significant is said to be so, and why;
 * one that cannot be tested (p null) says why instead of giving an interval; one side with nothing
 * to compare is named, without the cost clause.
 */
export function verdict(input: VerdictInput): Verdict {
  const { result, a, b } = input;
  const measure = input.measure ?? 'score';
  const rate = measure === 'score' && (result.test === 'two_proportion_z' || result.test === 'mcnemar_exact');
  const words = WORDING[rate ? 'rate' : measure];
  const scale = rate ? 100 : 1;
  const d = result.difference;
  const cost = measure === 'score' ? costClause(input.cost) : '';
  // Nothing to compare: said alone, the cost beside it would read as a finding about the score.
  if (d === null)
    return { test: result.test, significant: false, sentence: `${b} cannot be compared with ${a}: ${missing(input, words.nothing)}` };
  const decimals = input.decimals ?? moneyDecimals(measure, d, autoDecimals(result.ci, d, scale, measure === 'cost_usd' ? 9 : 6));
  const fmt = (x: number) => {
    const s = (x * scale).toFixed(decimals);
    return Number(s) === 0 ? (0).toFixed(decimals) : s.replace('-', '−'); // no "−0.00"
  };
  const magnitude = fmt(Math.abs(d));
  const phrase = Number(magnitude) === 0 ? words.same : d > 0 ? words.more : words.less;
  const head = `${b}${rate ? '' : ' '}${phrase
    .replace('{x}', words.unit(magnitude))
    .replace('{a}', a)
    .replace('{per}', input.per ?? 'execution')}`;
  if (result.p_value === null || result.ci === null) {
    const few = measure === 'score' ? 'scores' : 'executions';
    return { test: result.test, significant: false, sentence: `${head} (not testable: too few ${few} or no variation)${cost}` };
  }
  const low = fmt(result.ci.low);
  const high = fmt(result.ci.high);
  const range =
    measure === 'cost_usd'
      ? `${words.unit(low)} to ${words.unit(high)}`
      : words.unit(result.ci.low < 0 || low.startsWith('−') ? `${low} to ${high}` : `${low}–${high}`);
  const stats = `(95 % CI ${range}, ${TEST_LABEL[result.test]} p ${formatP(result.p_value)})`;
  const caveat = significance(result);
  // After a caveat, "and costs 5 % less" would read as part of it: the cost is its own clause.
  const tail = caveat && cost.startsWith(' and ') ? `; ${b}${cost.slice(' and'.length)}` : cost;
  return { test: result.test, significant: result.significant, sentence: `${head} ${stats}${caveat}${tail}` };
}

/**
 * Why a difference is (not) significant, in the sentence: the test decides (p against α = 0.05).
 * The interval is the usual approximation (Wald; the two-proportion test pools the rates, McNemar's
 * test is exact), so it can disagree with the test near the edge: then the sentence says so.
 */
function significance(result: { p_value: number | null; ci: Interval | null; significant: boolean }): string {
  const ci = result.ci!;
  const excludesZero = ci.low > 0 || ci.high < 0;
  if (result.significant) return excludesZero ? '' : ', significant by the test (p < 0.05) although its approximate interval includes 0';
  return excludesZero
    ? ', not significant: p ≥ 0.05 by the test, which decides (its approximate interval excludes 0)'
    : ', not significant: p ≥ 0.05 and the interval includes 0';
}

/** Which side has nothing to compare, when the counts are known. */
function missing(input: VerdictInput, nothing: string): string {
  const c = input.counts;
  if (!c) return `one of them has no ${nothing}`;
  if (c.a === 0 && c.b === 0) return `neither has ${nothing}`;
  return `${c.a === 0 ? input.a : input.b} has no ${nothing}`;
}

/**
 * Decimals that show the interval's precision (without one, two significant digits of the
 * difference), and never more than three significant digits of the largest figure shown: an
 * interval narrowed to float noise (every pair differs by the same amount) is not "$0.001100000".
 */
function autoDecimals(ci: Interval | null, difference: number, scale: number, most: number): number {
  const decimalsFor = (x: number) => -Math.floor(Math.log10(x));
  const half = ci ? ((ci.high - ci.low) / 2) * scale : Math.abs(difference * scale) / 10;
  const largest = Math.max(Math.abs(difference), Math.abs(ci?.low ?? 0), Math.abs(ci?.high ?? 0)) * scale;
  if (!(half > 0)) return 2;
  const shown = largest > 0 ? Math.min(decimalsFor(half), decimalsFor(largest) + 2) : decimalsFor(half);
  return Math.min(most, Math.max(0, shown));
}

/**
 * Money keeps two significant digits of its difference even when the interval is wide: "$0.000005
 * more", not "$0.00001 more" beside a difference the page shows as +$0.000005.
 */
function moneyDecimals(measure: Measure, difference: number, decimals: number): number {
  if (measure !== 'cost_usd' || difference === 0) return decimals;
  return Math.min(9, Math.max(decimals, 1 - Math.floor(Math.log10(Math.abs(difference)))));
}

/** How b's cost compares, said only when its test finds a difference (a score's verdict must not claim one the cost test denies). */
function costClause(cost: VerdictInput['cost']): string {
  if (!cost || !(cost.a > 0) || !(cost.b >= 0) || cost.test.p_value === null) return '';
  if (!cost.test.significant) return '; the cost difference is not significant';
  const pct = Math.round((cost.b / cost.a - 1) * 100);
  const direction = cost.b > cost.a ? 'more' : 'less';
  if (pct === 0) return ` and costs less than 1 % ${direction}`;
  return ` and costs ${Math.abs(pct)} % ${direction}`;
}
