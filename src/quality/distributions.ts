// The distributions behind the tests of statistics.ts: the Student t (CDF, two-sided p, quantile),
// the standard normal (CDF, quantile), erf/erfc, ln Γ and the regularized incomplete beta function.
// Pure: no I/O, no dependencies. Numerics and their checked precision: statistics.ts, top.
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
