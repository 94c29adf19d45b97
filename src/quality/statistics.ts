// The statistics behind "is prompt version 7 better than 6?" (issue 26): summaries of a sample with
// a confidence interval of the mean, Wilson intervals of rates, Welch's t-test, the two-proportion
// z-test, the paired t-test, McNemar's exact test and a plain-sentence verdict. Pure: no I/O, no dependencies.
//
// Numerics. The Student t distribution goes through the regularized incomplete beta function
// (continued fraction, modified Lentz), with log B(a, b) computed without the cancellation of
// lgamma differences at large degrees of freedom and 1 − x passed in exactly rather than formed,
// so tail probabilities keep their relative precision. erfc is the regularized upper incomplete
// gamma Q(1/2, x²) (series below x² = 1.5, continued fraction above), exp(−x²) split so x² is not
// rounded; above 3e5 df the t tail is Fisher's expansion around the normal. Quantiles are solved on
// the tail probability (safeguarded Newton inside a bracket). Checked against 40-digit mpmath values
// over df 0.5–1e10: t p-values within 6e-12 relative for |t| ≤ 4 and 1.4e-10 for |t| ≤ 6; t quantiles
// within 2e-11 relative for 1e-12 ≤ p ≤ 1 − 1e-8; erfc, erf and Φ⁻¹ within 2e-15.
//
// Every result names its test; what cannot be computed (too few values, no variation) is null,
// never NaN or Infinity, and a null p-value is never significant.

/** Significance level of every test here, and 1 − the confidence of every interval. */
export const ALPHA = 0.05;

export type TestName = 'welch_t' | 'two_proportion_z' | 'paired_t' | 'mcnemar_exact';

export interface Interval {
  low: number;
  high: number;
}

// ---------------------------------------------------------------------------------------------
// Special functions

const LN_SQRT_2PI = 0.9189385332046727; // ln √(2π)
const SQRT_PI = 1.772453850905516;
const TINY = 1e-300; // Lentz's guard against a zero denominator
const EPS = 1e-16;

// Lanczos approximation, g = 7, n = 9 (relative error ~1e-15 for x > 0).
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0. */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x); // reflection
  const z = x - 1;
  let s = LANCZOS[0]!;
  for (let i = 1; i < 9; i++) s += LANCZOS[i]! / (z + i);
  const t = z + 7.5;
  return LN_SQRT_2PI + (z + 0.5) * Math.log(t) - t + Math.log(s);
}

/** lgamma(x) − [(x − ½)ln x − x + ln √(2π)], the Stirling remainder, for x ≥ 10 (error < 1e-16). */
function stirlingRemainder(x: number): number {
  const r = 1 / (x * x);
  return (1 / 12 - r * (1 / 360 - r * (1 / 1260 - r * (1 / 1680 - r * (1 / 1188))))) / x;
}

/** ln Γ(a) − ln Γ(a + b) for a, b > 0, without cancellation when a is large. */
function logGammaRatio(a: number, b: number): number {
  if (a < 10) return logGamma(a) - logGamma(a + b);
  // (a − ½)ln a − (a + b − ½)ln(a + b) + b, rearranged so no two large terms are subtracted.
  return -(a - 0.5) * Math.log1p(b / a) - b * Math.log(a + b) + b + stirlingRemainder(a) - stirlingRemainder(a + b);
}

/** ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b). */
function logBeta(a: number, b: number): number {
  const big = Math.max(a, b);
  const small = Math.min(a, b);
  return logGamma(small) + logGammaRatio(big, small);
}

/** Continued fraction of I_x(a, b) (Numerical Recipes' betacf), evaluated by the modified Lentz method. */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 1_000_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < EPS) return h;
  }
  return h; // not reached for the arguments used here (O(√max(a, b)) terms)
}

/**
 * The regularized incomplete beta function I_x(a, b), a, b > 0, 0 ≤ x ≤ 1. `y` is 1 − x; pass it
 * when it is known more precisely than 1 − x can be formed (tail probabilities).
 */
export function regularizedIncompleteBeta(x: number, a: number, b: number, y: number = 1 - x): number {
  if (!(a > 0 && b > 0) || !(x >= 0 && x <= 1)) return NaN;
  if (x === 0) return 0;
  if (y === 0) return 1;
  return incompleteBeta(x, y, Math.log(x), Math.log(y), a, b);
}

/**
 * I_x(a, b) from x, y = 1 − x and their logarithms. At large a a rounding of x of one ulp moves
 * a·ln x by a·ulp, so callers that can form ln x more exactly (log1p) pass it in.
 */
function incompleteBeta(x: number, y: number, logX: number, logY: number, a: number, b: number): number {
  const front = Math.exp(a * logX + b * logY - logBeta(a, b));
  // The fraction converges fast for x < (a + 1)/(a + b + 2); otherwise I_x(a, b) = 1 − I_y(b, a).
  if (x * (a + b + 2) < a + 1) return (front * betaContinuedFraction(x, a, b)) / a;
  return 1 - (front * betaContinuedFraction(y, b, a)) / b;
}

/** erf(x) for x² < 1.5 through the series of P(½, x²): positive terms, no cancellation. */
function erfSeries(x: number): number {
  const x2 = x * x;
  let term = 2;
  let sum = term;
  for (let n = 1; n < 200; n++) {
    term *= x2 / (0.5 + n);
    sum += term;
    if (term < sum * EPS) break;
  }
  return (sum * Math.exp(-x2) * x) / SQRT_PI;
}

/** erfc(x), relative precision ~1e-15 over the whole line (underflows to 0 past x ≈ 26.5). */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x * x < 1.5) return 1 - erfSeries(x);
  // Q(½, x²) by its continued fraction (modified Lentz), front e^(−x²)·x/√π with x² split as
  // xs² + (x − xs)(x + xs), xs = x rounded to 1/16, so that e^(−x²) carries no rounding of x².
  let b = x * x + 0.5;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10_000; i++) {
    const an = -i * (i - 0.5);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < EPS) break;
  }
  const xs = Math.trunc(x * 16) / 16;
  return ((Math.exp(-xs * xs) * Math.exp(-(x - xs) * (x + xs)) * x) / SQRT_PI) * h;
}

/** erf(x). */
export function erf(x: number): number {
  return x * x < 1.5 ? erfSeries(x) : Math.sign(x) * (1 - erfc(Math.abs(x)));
}

/** Standard normal CDF Φ(z), accurate in relative terms in the lower tail. */
export function normalCdf(z: number): number {
  return 0.5 * erfc(-z / Math.SQRT2);
}

/** Standard normal quantile Φ⁻¹(p): Acklam's rational approximation, polished by Halley steps on erfc. */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p > 0.5) return -lowerNormalQuantile(1 - p);
  return lowerNormalQuantile(p);
}

function lowerNormalQuantile(p: number): number {
  // p ≤ ½
  let x: number;
  if (p < 0.02425) {
    const q = Math.sqrt(-2 * Math.log(p));
    x =
      (((((-7.784894002430293e-3 * q - 3.223964580411365e-1) * q - 2.400758277161838) * q - 2.549732539343734) * q + 4.374664141464968) *
        q +
        2.938163982698783) /
      ((((7.784695709041462e-3 * q + 3.224671290700398e-1) * q + 2.445134137142996) * q + 3.754408661907416) * q + 1);
  } else {
    const q = p - 0.5;
    const r = q * q;
    x =
      ((((((-3.969683028665376e1 * r + 2.209460984245205e2) * r - 2.759285104469687e2) * r + 1.38357751867269e2) * r -
        3.066479806614716e1) *
        r +
        2.506628277459239) *
        q) /
      (((((-5.447609879822406e1 * r + 1.615858368580409e2) * r - 1.556989798598866e2) * r + 6.680131188771972e1) * r -
        1.328068155288572e1) *
        r +
        1);
  }
  for (let i = 0; i < 2; i++) {
    const e = normalCdf(x) - p;
    const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
    if (!Number.isFinite(u)) break; // beyond p ≈ 1e-308 the density underflows; Acklam's value stands
    x -= u / (1 + (x * u) / 2);
  }
  return x;
}

// Beyond this many degrees of freedom the tail comes from Fisher's expansion in 1/df around the
// normal (next term O(df⁻³): < 1e-11 relative for |t| ≤ 6): the continued fraction in x = df/(df + t²)
// loses precision there, x carrying 1 − x ≈ t²/df only to an ulp (6e-11 relative at df = 1e6, 2e-9 at 1e8).
const LARGE_DF = 3e5;

/** P(T > t) for t ≥ 0: ½·I_x(df/2, ½) with x = df/(df + t²), 1 − x and both logarithms formed without cancellation. */
function studentTUpperTail(t: number, df: number): number {
  if (t === Infinity) return 0;
  if (t === 0) return 0.5;
  if (df > LARGE_DF) {
    // P(T > t) = Q(t) + φ(t)·[(t³ + t)/4ν + (3t⁷ − 7t⁵ − 5t³ − 3t)/96ν² + O(ν⁻³)]
    const t2 = t * t;
    const g1 = (t * (t2 + 1)) / 4;
    const g2 = (t * (((3 * t2 - 7) * t2 - 5) * t2 - 3)) / 96;
    return normalCdf(-t) + Math.exp(-t2 / 2 - LN_SQRT_2PI) * ((g1 + g2 / df) / df);
  }
  const r = (t / df) * t; // t²/df, overflowing only where the tail is 0 anyway
  if (r === Infinity) return 0;
  const logX = -Math.log1p(r);
  const x = 1 / (1 + r);
  const y = r / (1 + r);
  return 0.5 * incompleteBeta(x, y, logX, Math.log(r) + logX, df / 2, 0.5);
}

/** Student t CDF P(T ≤ t) with `df` > 0 degrees of freedom (df may be fractional, or Infinity). */
export function studentTCdf(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return NaN;
  return t < 0 ? studentTUpperTail(-t, df) : 1 - studentTUpperTail(t, df);
}

/** Two-sided p-value P(|T| ≥ |t|). */
export function studentTTwoSidedP(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return NaN;
  return Math.min(1, 2 * studentTUpperTail(Math.abs(t), df));
}

function studentTDensity(t: number, df: number): number {
  // Γ((df+1)/2) / (Γ(df/2) √(df π)) · (1 + t²/df)^(−(df+1)/2)
  return Math.exp(-logGammaRatio(df / 2, 0.5) - 0.5 * Math.log(df * Math.PI) - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/** Student t quantile: the t with P(T ≤ t) = p. */
export function studentTQuantile(p: number, df: number): number {
  if (!(p >= 0 && p <= 1) || !(df > 0)) return NaN;
  if (p === 0.5) return 0;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (df === Infinity) return normalQuantile(p);
  return p < 0.5 ? -upperTailQuantile(p, df) : upperTailQuantile(1 - p, df);
}

/** The t ≥ 0 with P(T > t) = q, 0 < q < ½: Newton on the tail, kept inside a bracket (bisection when it leaves). */
function upperTailQuantile(q: number, df: number): number {
  let lo = 0;
  let hi = 1;
  while (studentTUpperTail(hi, df) > q) {
    lo = hi;
    hi *= 2;
    if (hi === Infinity) return Number.MAX_VALUE;
  }
  // Cornish–Fisher start from the normal quantile, clamped into the bracket.
  const z = -normalQuantile(q);
  let t = z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df * df);
  if (!(t > lo && t < hi)) t = (lo + hi) / 2;
  for (let i = 0; i < 500; i++) {
    const f = studentTUpperTail(t, df) - q; // decreasing in t
    if (f === 0) return t;
    if (f > 0) lo = t;
    else hi = t;
    let next = t + f / studentTDensity(t, df);
    if (!(next > lo && next < hi)) next = hi / lo > 4 && lo > 0 ? Math.sqrt(lo * hi) : (lo + hi) / 2;
    if (Math.abs(next - t) <= 4 * Number.EPSILON * t || hi - lo <= 4 * Number.EPSILON * hi) return next;
    t = next;
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// Summaries

/** Σ values with Neumaier's compensation. */
function compensatedSum(values: readonly number[]): number {
  let sum = 0;
  let c = 0;
  for (const v of values) {
    const s = sum + v;
    c += Math.abs(sum) >= Math.abs(v) ? sum - s + v : v - s + sum;
    sum = s;
  }
  return sum + c;
}

/**
 * Percentile by linear interpolation between closest ranks (Hyndman & Fan type 7): numpy's default
 * (`method='linear'`), R's default, Excel's PERCENTILE.INC and ClickHouse's quantileExactInclusive
 * (not quantileExact, which takes one element without interpolating). With the values sorted as
 * x[0..n−1] and h = (n − 1)·p: x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). `sorted` must be ascending.
 */
export function percentileSorted(sorted: readonly number[], p: number): number | null {
  const n = sorted.length;
  if (n === 0 || !(p >= 0 && p <= 1)) return null;
  const h = (n - 1) * p;
  const i = Math.floor(h);
  const lower = sorted[i]!;
  if (i >= n - 1) return sorted[n - 1]!;
  const frac = h - i;
  return frac === 0 ? lower : lower + frac * (sorted[i + 1]! - lower);
}

/** Percentile (type 7, see percentileSorted) of unsorted values. */
export function percentile(values: readonly number[], p: number): number | null {
  return percentileSorted(
    [...values].sort((a, b) => a - b),
    p,
  );
}

/** The 95 % confidence interval of a mean from n, mean and sample variance: mean ± t(0.975, n − 1)·s/√n; null for n < 2. */
export function meanInterval(n: number, mean: number, variance: number): Interval | null {
  if (!(n >= 2) || !Number.isFinite(mean) || !(variance >= 0)) return null;
  const half = studentTQuantile(1 - ALPHA / 2, n - 1) * Math.sqrt(variance / n);
  return { low: mean - half, high: mean + half };
}

export interface SampleSummary {
  n: number;
  /** null when n = 0 */
  mean: number | null;
  /** sample variance (n − 1 denominator); null when n < 2 */
  variance: number | null;
  std_dev: number | null;
  /** 95 % CI of the mean (Student t, n − 1 df); null when n < 2 */
  ci: Interval | null;
  min: number | null;
  max: number | null;
  p50: number | null;
  p95: number | null;
}

/**
 * n, mean, sample variance and standard deviation, the 95 % CI of the mean and p50/p95 (type 7).
 * The variance is two-pass with the compensation term (Σd)²/n, so a large common offset
 * (1e9 + small noise) does not cancel it away. Non-finite values are a caller's bug: NaN out.
 */
export function summarize(values: readonly number[]): SampleSummary {
  const n = values.length;
  if (n === 0) return { n, mean: null, variance: null, std_dev: null, ci: null, min: null, max: null, p50: null, p95: null };
  const mean = compensatedSum(values) / n;
  const sorted = [...values].sort((a, b) => a - b);
  let variance: number | null = null;
  if (n >= 2) {
    const deviations = values.map((v) => v - mean);
    const squares = compensatedSum(deviations.map((d) => d * d));
    const sumDev = compensatedSum(deviations);
    variance = Math.max(0, (squares - (sumDev * sumDev) / n) / (n - 1));
  }
  return {
    n,
    mean,
    variance,
    std_dev: variance === null ? null : Math.sqrt(variance),
    ci: variance === null ? null : meanInterval(n, mean, variance),
    min: sorted[0]!,
    max: sorted[n - 1]!,
    p50: percentileSorted(sorted, 0.5),
    p95: percentileSorted(sorted, 0.95),
  };
}

export interface ProportionSummary {
  n: number;
  successes: number;
  /** successes / n; null when n = 0 */
  rate: number | null;
  /** 95 % Wilson score interval; null when n = 0 */
  ci: Interval | null;
}

/**
 * A rate with its 95 % Wilson score interval: the p for which |p̂ − p| ≤ z·√(p(1 − p)/n), i.e.
 * (p̂ + z²/2n ± z·√(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n). Stays inside [0, 1] and is sensible at 0/n and n/n.
 */
export function proportion(successes: number, n: number): ProportionSummary {
  if (!(n > 0) || !(successes >= 0 && successes <= n)) return { n: Math.max(0, n || 0), successes, rate: null, ci: null };
  const rate = successes / n;
  const z = normalQuantile(1 - ALPHA / 2);
  const z2n = (z * z) / n;
  const centre = (rate + z2n / 2) / (1 + z2n);
  const half = (z * Math.sqrt((rate * (1 - rate)) / n + z2n / (4 * n))) / (1 + z2n);
  // at 0/n and n/n the bound is exactly 0 or 1; the formula gives it to a rounding error
  const low = successes === 0 ? 0 : Math.max(0, centre - half);
  const high = successes === n ? 1 : Math.min(1, centre + half);
  return { n, successes, rate, ci: { low, high } };
}

// ---------------------------------------------------------------------------------------------
// Tests

export interface GroupMoments {
  n: number;
  mean: number;
  /** sample variance (n − 1 denominator) */
  variance: number;
}

export interface TestResult {
  test: TestName;
  /** b − a (for the paired test, the mean of the differences b − a) */
  difference: number | null;
  /** 95 % CI of the difference; null when the test cannot be computed */
  ci: Interval | null;
  /** two-sided; null when the statistic is undefined (too few values, no variation) */
  p_value: number | null;
  /** p_value < α; false whenever p_value is null */
  significant: boolean;
}

export interface WelchResult extends TestResult {
  test: 'welch_t';
  t: number | null;
  /** Welch–Satterthwaite degrees of freedom */
  df: number | null;
}

export interface TwoProportionResult extends TestResult {
  test: 'two_proportion_z';
  /** the rates a and b; null when a group is empty */
  rate_a: number | null;
  rate_b: number | null;
  z: number | null;
}

export interface PairedResult extends TestResult {
  test: 'paired_t';
  n: number;
  t: number | null;
  df: number | null;
}

const significant = (p: number | null) => p !== null && p < ALPHA;

/** The t-based answer shared by Welch's and the paired test: estimate, its standard error and df. */
function tAnswer(difference: number, se: number, df: number) {
  const t = difference / se;
  if (!Number.isFinite(t)) return { t: null, df: null, ci: null, p_value: null, significant: false };
  const half = studentTQuantile(1 - ALPHA / 2, df) * se;
  const p = studentTTwoSidedP(t, df);
  return { t, df, ci: { low: difference - half, high: difference + half }, p_value: p, significant: significant(p) };
}

/**
 * Welch's two-sample t-test of b against a from summary statistics: t = (mean_b − mean_a)/SE,
 * SE² = v_a/n_a + v_b/n_b, Welch–Satterthwaite df = SE⁴ / Σ (v/n)²/(n − 1), two-sided p, and the
 * 95 % CI of mean_b − mean_a with that df. Needs n ≥ 2 in each group; when both variances are 0
 * the statistic is undefined: t, df, p and CI are null and nothing is significant.
 */
export function welchTTest(a: GroupMoments, b: GroupMoments): WelchResult {
  const ok = (g: GroupMoments) => g.n >= 2 && Number.isFinite(g.mean) && g.variance >= 0 && Number.isFinite(g.variance);
  const difference = a.n >= 1 && b.n >= 1 ? b.mean - a.mean : null;
  const none = { test: 'welch_t' as const, difference, t: null, df: null, ci: null, p_value: null, significant: false };
  if (!ok(a) || !ok(b)) return none;
  const sa = a.variance / a.n;
  const sb = b.variance / b.n;
  const se2 = sa + sb;
  if (!(se2 > 0)) return none;
  // df as 1/Σ (s/SE²)²/(n − 1): ratios in [0, 1], no squares of tiny variances to underflow
  const ra = sa / se2;
  const rb = sb / se2;
  const df = 1 / ((ra * ra) / (a.n - 1) + (rb * rb) / (b.n - 1));
  return { test: 'welch_t', difference: b.mean - a.mean, ...tAnswer(b.mean - a.mean, Math.sqrt(se2), df) };
}

/** Welch's test from two raw samples (see welchTTest). */
export function welchTTestSamples(a: readonly number[], b: readonly number[]): WelchResult {
  const moments = (s: SampleSummary): GroupMoments => ({ n: s.n, mean: s.mean ?? NaN, variance: s.variance ?? NaN });
  return welchTTest(moments(summarize(a)), moments(summarize(b)));
}

/**
 * Two-proportion z-test of b against a: z = (p_b − p_a)/SE_pooled with the pooled rate
 * p = (k_a + k_b)/(n_a + n_b), SE_pooled = √(p(1 − p)(1/n_a + 1/n_b)); two-sided p from the normal;
 * 95 % CI of p_b − p_a with the unpooled SE √(p_a(1 − p_a)/n_a + p_b(1 − p_b)/n_b). When both groups
 * are all true or all false, z and p are null; the CI is null when its SE is 0.
 */
export function twoProportionZTest(a: { successes: number; n: number }, b: { successes: number; n: number }): TwoProportionResult {
  const valid = (g: { successes: number; n: number }) => g.n > 0 && g.successes >= 0 && g.successes <= g.n;
  const rateA = valid(a) ? a.successes / a.n : null;
  const rateB = valid(b) ? b.successes / b.n : null;
  const base = { test: 'two_proportion_z' as const, rate_a: rateA, rate_b: rateB };
  if (rateA === null || rateB === null) return { ...base, difference: null, z: null, ci: null, p_value: null, significant: false };
  const difference = rateB - rateA;
  const pooled = (a.successes + b.successes) / (a.n + b.n);
  const sePooled = Math.sqrt(pooled * (1 - pooled) * (1 / a.n + 1 / b.n));
  const z = sePooled > 0 ? difference / sePooled : null;
  const p = z === null ? null : Math.min(1, 2 * normalCdf(-Math.abs(z)));
  const se = Math.sqrt((rateA * (1 - rateA)) / a.n + (rateB * (1 - rateB)) / b.n);
  const half = normalQuantile(1 - ALPHA / 2) * se;
  const ci = se > 0 ? { low: difference - half, high: difference + half } : null;
  return { ...base, difference, z, ci, p_value: p, significant: significant(p) };
}

/**
 * Paired t-test from the paired differences d_i = b_i − a_i (the same items run under both
 * versions): mean difference, t = mean/(s_d/√n), df = n − 1, two-sided p, 95 % CI of the mean
 * difference. n < 2 or differences all equal: t, p and CI are null.
 */
export function pairedTTest(differences: readonly number[]): PairedResult {
  const s = summarize(differences);
  const none = { test: 'paired_t' as const, n: s.n, difference: s.mean, t: null, df: null, ci: null, p_value: null, significant: false };
  if (s.mean === null || s.variance === null || !(s.variance > 0)) return none;
  return { test: 'paired_t', n: s.n, difference: s.mean, ...tAnswer(s.mean, Math.sqrt(s.variance / s.n), s.n - 1) };
}

export interface McNemarResult extends TestResult {
  test: 'mcnemar_exact';
  /** pairs (the same item judged under a and under b) */
  n: number;
  /** discordant pairs: true under a only, and true under b only */
  a_only: number;
  b_only: number;
  rate_a: number | null;
  rate_b: number | null;
}

/**
 * McNemar's test of paired booleans, exact form: of the n_d = a_only + b_only discordant pairs,
 * b_only ~ Binomial(n_d, ½) under "no difference"; two-sided p = min(1, 2·P(X ≤ min(a_only, b_only))),
 * computed as the regularized incomplete beta I_½(n_d − k, k + 1), exact at every size (no
 * chi-square approximation). The difference is rate_b − rate_a = (b_only − a_only)/n, with the
 * 95 % Wald interval of a paired difference of proportions, √(n_d − (b_only − a_only)²/n)/n.
 * No discordant pair: p and CI are null (nothing to test), never significant.
 */
export function mcNemarExactTest(p: { n: number; both: number; a_only: number; b_only: number }): McNemarResult {
  const n = p.n;
  const base = {
    test: 'mcnemar_exact' as const,
    n,
    a_only: p.a_only,
    b_only: p.b_only,
    rate_a: n > 0 ? (p.both + p.a_only) / n : null,
    rate_b: n > 0 ? (p.both + p.b_only) / n : null,
  };
  const discordant = p.a_only + p.b_only;
  if (!(n > 0)) return { ...base, difference: null, ci: null, p_value: null, significant: false };
  const difference = (p.b_only - p.a_only) / n;
  if (discordant === 0) return { ...base, difference, ci: null, p_value: null, significant: false };
  const k = Math.min(p.a_only, p.b_only);
  const tail = regularizedIncompleteBeta(0.5, discordant - k, k + 1, 0.5);
  const pValue = Math.min(1, 2 * tail);
  const se = Math.sqrt(Math.max(0, discordant - (p.b_only - p.a_only) ** 2 / n)) / n;
  const half = normalQuantile(1 - ALPHA / 2) * se;
  return {
    ...base,
    difference,
    ci: se > 0 ? { low: difference - half, high: difference + half } : null,
    p_value: pValue,
    significant: significant(pValue),
  };
}

// ---------------------------------------------------------------------------------------------
// Verdict

const TEST_LABEL: Record<TestName, string> = {
  welch_t: "Welch's t-test",
  two_proportion_z: 'two-proportion z-test',
  paired_t: 'paired t-test',
  mcnemar_exact: "McNemar's exact test",
};

export interface VerdictInput {
  /** the result of welchTTest, twoProportionZTest, pairedTTest or mcNemarExactTest, b against a */
  result: WelchResult | TwoProportionResult | PairedResult | McNemarResult;
  /** names of the two versions as shown, e.g. 'v6' and 'v7' */
  a: string;
  b: string;
  /** mean cost per execution of each version; the sentence then says how much more or less b costs */
  cost?: { a: number; b: number };
  /** decimals of the difference and its interval; by default from the interval's width */
  decimals?: number;
}

export interface Verdict {
  test: TestName;
  significant: boolean;
  sentence: string;
}

/** p as people read it: 2 significant digits, "< 0.001" below that. */
export function formatP(p: number): string {
  if (p < 0.001) return '< 0.001';
  return `= ${Number(p.toPrecision(2))}`;
}

/**
 * A plain sentence for the difference of b against a, e.g. "v7 scores 0.08 higher (95 % CI
 * 0.03–0.13, Welch's t-test p = 0.002) and costs 12 % more". Rates (two-proportion test) are in
 * percentage points. A difference that is not significant is said to be so; one that cannot be
 * tested (p null) says why instead of giving an interval.
 */
export function verdict(input: VerdictInput): Verdict {
  const { result, a, b } = input;
  const rate = result.test === 'two_proportion_z' || result.test === 'mcnemar_exact';
  const scale = rate ? 100 : 1;
  const unit = rate ? ' points' : '';
  const d = result.difference;
  const cost = costClause(input.cost);
  if (d === null)
    return { test: result.test, significant: false, sentence: `${b} cannot be compared with ${a}: one of them has no scores${cost}` };
  const decimals = input.decimals ?? autoDecimals(result.ci, scale);
  const fmt = (x: number) => {
    const s = (x * scale).toFixed(decimals);
    return Number(s) === 0 ? (0).toFixed(decimals) : s.replace('-', '−'); // no "−0.00"
  };
  const subject = rate ? `${b}'s rate is` : `${b} scores`;
  const magnitude = fmt(Math.abs(d));
  const direction = Number(magnitude.replace('−', '-')) === 0 ? null : d > 0 ? 'higher' : 'lower';
  const head =
    direction === null
      ? rate
        ? `${b}'s rate is the same as ${a}'s`
        : `${b} scores the same as ${a}`
      : `${subject} ${magnitude}${unit} ${direction}`;
  if (result.p_value === null || result.ci === null) {
    return { test: result.test, significant: false, sentence: `${head} (not testable: too few scores or no variation)${cost}` };
  }
  const low = fmt(result.ci.low);
  const high = fmt(result.ci.high);
  const range = result.ci.low < 0 || low.startsWith('−') ? `${low} to ${high}` : `${low}–${high}`;
  const stats = `(95 % CI ${range}${unit}, ${TEST_LABEL[result.test]} p ${formatP(result.p_value)})`;
  const caveat = result.significant ? '' : ', not a significant difference';
  return { test: result.test, significant: result.significant, sentence: `${head} ${stats}${caveat}${cost}` };
}

function autoDecimals(ci: Interval | null, scale: number): number {
  if (ci === null) return 2;
  const half = ((ci.high - ci.low) / 2) * scale;
  if (!(half > 0)) return 2;
  return Math.min(6, Math.max(0, -Math.floor(Math.log10(half))));
}

function costClause(cost: { a: number; b: number } | undefined): string {
  if (!cost || !(cost.a > 0) || !(cost.b >= 0)) return '';
  const pct = Math.round((cost.b / cost.a - 1) * 100);
  if (pct === 0) return ' and costs about the same';
  return ` and costs ${Math.abs(pct)} % ${pct > 0 ? 'more' : 'less'}`;
}
