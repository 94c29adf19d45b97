// The statistics of "is version 7 better?" (issue 26) against values worked out here from first
// principles (closed forms of the t distribution at 1 and 2 df, Simpson integration of the t
// density, binomial sums, the normal CDF's power series, the 2×2 chi-square) or published
// reference values (t and normal tables; 40-digit values from mpmath where the comment says so).
import { describe, expect, it } from 'vitest';
import {
  erf,
  erfc,
  formatP,
  mcNemarExactTest,
  meanInterval,
  normalCdf,
  normalQuantile,
  pairedTTest,
  percentile,
  proportion,
  regularizedIncompleteBeta,
  studentTCdf,
  studentTQuantile,
  studentTTwoSidedP,
  summarize,
  twoProportionZTest,
  verdict,
  welchTTest,
  welchTTestSamples,
} from '../../src/quality/statistics.ts';

/** |actual − expected| ≤ tol·max(1, |expected|): relative for large values, absolute for small ones. */
function close(actual: number | null | undefined, expected: number, tol: number) {
  expect(actual).not.toBeNull();
  expect(actual).not.toBeUndefined();
  const err = Math.abs((actual as number) - expected) / Math.max(1, Math.abs(expected));
  if (!(err <= tol)) throw new Error(`${actual} is not ${expected} within ${tol} (off by ${err})`);
}

/** Relative closeness, for tail probabilities. */
function relClose(actual: number | null | undefined, expected: number, tol: number) {
  expect(actual).not.toBeNull();
  const err = Math.abs((actual as number) - expected) / Math.abs(expected);
  if (!(err <= tol)) throw new Error(`${actual} is not ${expected} within relative ${tol} (off by ${err})`);
}

// --- independent references ---------------------------------------------------------------

/** Γ(k/2) for a positive integer k, by Γ(1) = 1, Γ(½) = √π and Γ(x + 1) = xΓ(x). */
function gammaHalf(k: number): number {
  let x = k % 2 === 0 ? 1 : 0.5;
  let g = k % 2 === 0 ? 1 : Math.sqrt(Math.PI);
  while (x < k / 2) {
    g *= x;
    x += 1;
  }
  return g;
}

/** P(0 ≤ T ≤ t) for integer df by composite Simpson integration of the t density. */
function tCentralMass(t: number, df: number): number {
  const c = gammaHalf(df + 1) / (gammaHalf(df) * Math.sqrt(df * Math.PI));
  const f = (u: number) => c * Math.pow(1 + (u * u) / df, -(df + 1) / 2);
  const steps = 20_000;
  const h = t / steps;
  let s = f(0) + f(t);
  for (let i = 1; i < steps; i++) s += (i % 2 === 1 ? 4 : 2) * f(i * h);
  return (s * h) / 3;
}

/** Φ(x) − ½ = φ(x)·Σ x^(2k+1)/(1·3·…·(2k+1)) (Marsaglia's series, positive terms for x > 0). */
function normalCentralMass(x: number): number {
  let term = x;
  let sum = x;
  for (let k = 1; k < 500 && Math.abs(term) > 1e-300; k++) {
    term *= (x * x) / (2 * k + 1);
    sum += term;
  }
  return (Math.exp((-x * x) / 2) / Math.sqrt(2 * Math.PI)) * sum;
}

/** I_x(a, b) for integer a, b as the binomial tail Σ_{j=a}^{a+b−1} C(a+b−1, j) x^j (1−x)^(a+b−1−j). */
function binomialTail(x: number, a: number, b: number): number {
  const n = a + b - 1;
  let sum = 0;
  for (let j = a; j <= n; j++) {
    let c = 1;
    for (let i = 1; i <= j; i++) c = (c * (n - j + i)) / i;
    sum += c * Math.pow(x, j) * Math.pow(1 - x, n - j);
  }
  return sum;
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const sampleVariance = (xs: number[]) => {
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
};

// --- special functions ----------------------------------------------------------------------

describe('Student t distribution', () => {
  it('t(0.975) equals the published table values', () => {
    close(studentTQuantile(0.975, 1), 12.706204736, 1e-9);
    close(studentTQuantile(0.975, 10), 2.228138852, 1e-9);
    close(studentTQuantile(0.975, 30), 2.042272456, 1e-9);
    close(studentTQuantile(0.975, 7), 2.364624251592785, 1e-12); // mpmath, 40 digits
    close(studentTQuantile(0.025, 10), -2.228138852, 1e-9);
    close(studentTQuantile(0.975, Infinity), 1.959963984540054, 1e-14);
    expect(studentTQuantile(0.5, 3)).toBe(0);
  });

  it('at 1 df is the Cauchy distribution: CDF ½ + atan(t)/π, quantile tan(π(p − ½))', () => {
    for (const t of [0.1, 0.7, 1, 3, 12.7, 100, 1e4]) {
      close(studentTCdf(t, 1), 0.5 + Math.atan(t) / Math.PI, 1e-14);
      relClose(studentTCdf(-t, 1), Math.atan(1 / t) / Math.PI, 1e-12); // lower tail, relatively
    }
    for (const p of [0.6, 0.9, 0.975, 0.995, 0.9999]) relClose(studentTQuantile(p, 1), Math.tan(Math.PI * (p - 0.5)), 1e-12);
    for (const q of [1e-6, 1e-10]) relClose(studentTQuantile(q, 1), -1 / Math.tan(Math.PI * q), 1e-12);
  });

  it('at 2 df: CDF ½ + t/(2√(2 + t²)), quantile (2p − 1)/√(2p(1 − p))', () => {
    for (const t of [0.05, 0.5, 1, 2.5, 4.302652729, 30]) close(studentTCdf(t, 2), 0.5 + t / (2 * Math.sqrt(2 + t * t)), 1e-14);
    for (const p of [0.55, 0.8, 0.975, 0.999, 1 - 1e-9]) relClose(studentTQuantile(p, 2), (2 * p - 1) / Math.sqrt(2 * p * (1 - p)), 1e-11);
  });

  it('two-sided p-values equal the integrated density at 5, 9 and 24 df to 1e-11', () => {
    for (const df of [5, 9, 24])
      for (const t of [0.3, 1, 2, 2.5, 3.5]) {
        close(studentTTwoSidedP(t, df), 1 - 2 * tCentralMass(t, df), 1e-11);
        close(studentTTwoSidedP(-t, df), 1 - 2 * tCentralMass(t, df), 1e-11);
      }
  });

  it('quantile and CDF invert each other, fractional df included', () => {
    for (const df of [0.7, 1.5, 3.3, 24.99, 150.5, 5e4, 2e6])
      for (const p of [1e-8, 0.001, 0.025, 0.3, 0.8, 0.975, 0.9999]) {
        const t = studentTQuantile(p, df);
        relClose(p < 0.5 ? studentTCdf(t, df) : 1 - studentTCdf(t, df), p < 0.5 ? p : 1 - p, 1e-11);
      }
  });

  it('tends to the normal as df grows, smoothly across the large-df expansion', () => {
    const twoSidedNormal = (t: number) => 2 * normalCdf(-t);
    // Fisher's first-order term: P(|T| > t) ≈ 2Q(t) + 2φ(t)(t³ + t)/4ν
    for (const df of [1e5, 2.9e5, 3.1e5, 1e7, 1e9]) {
      const t = 2.5;
      const first = twoSidedNormal(t) + (2 * Math.exp((-t * t) / 2) * (t ** 3 + t)) / (4 * df * Math.sqrt(2 * Math.PI));
      relClose(studentTTwoSidedP(t, df), first, 40 / (df * df));
    }
    // just below and above the switch to the expansion (mpmath betainc / quad at 40 digits)
    relClose(studentTTwoSidedP(2.5, 2.9e5), 0.012419878415553287, 1e-10);
    relClose(studentTTwoSidedP(4, 1e6), 6.33470340100481e-5, 1e-10);
    relClose(studentTTwoSidedP(1.96, 1e5), 0.04999856319430164, 1e-10);
    relClose(studentTTwoSidedP(3, 1e15), twoSidedNormal(3), 1e-13); // the 1/ν term is 2.5e-14 here
    relClose(studentTTwoSidedP(3, Infinity), twoSidedNormal(3), 1e-15);
    expect(studentTTwoSidedP(0, 12)).toBe(1);
    expect(studentTTwoSidedP(Infinity, 12)).toBe(0);
    expect(studentTTwoSidedP(1, 0)).toBeNaN();
  });
});

describe('normal distribution and incomplete beta', () => {
  it('Φ equals its power series near the centre and the published tail values', () => {
    for (const x of [0.01, 0.5, 1, 1.5, 2, 2.7]) {
      close(normalCdf(x), 0.5 + normalCentralMass(x), 1e-15);
      close(normalCdf(-x), 0.5 - normalCentralMass(x), 1e-15);
    }
    // 40-digit values (mpmath ncdf)
    relClose(normalCdf(-1), 0.15865525393145705, 1e-15);
    relClose(normalCdf(-3), 0.0013498980316300946, 1e-14);
    relClose(normalCdf(-5), 2.866515718791939e-7, 1e-14);
    relClose(normalCdf(-10), 7.619853024160525e-24, 1e-13);
    close(erf(1), 0.8427007929497149, 1e-15);
    close(erf(-0.5), -0.5204998778130465, 1e-15);
    relClose(erfc(3), 2.209049699858544e-5, 1e-14);
    relClose(erf(1e-10), (2 / Math.sqrt(Math.PI)) * 1e-10, 1e-15);
  });

  it('Φ⁻¹ equals the table value and inverts Φ far into the tails', () => {
    close(normalQuantile(0.975), 1.959963985, 1e-9);
    close(normalQuantile(0.975), 1.959963984540054, 1e-14);
    close(normalQuantile(0.5), 0, 1e-15);
    for (const p of [1e-300, 1e-50, 1e-9, 0.01, 0.02425, 0.2, 0.7]) relClose(normalCdf(normalQuantile(p)), p, 1e-13);
  });

  it('I_x(a, b) equals the binomial tail for integer a, b', () => {
    for (const [x, a, b] of [
      [0.3, 3, 5],
      [0.9, 10, 4],
      [0.05, 1, 30],
      [0.62, 40, 25],
      [0.999, 2, 2],
    ] as const)
      close(regularizedIncompleteBeta(x, a, b), binomialTail(x, a, b), 1e-13);
    close(regularizedIncompleteBeta(0.5, 0.5, 0.5), 0.5, 1e-15); // arcsine distribution: (2/π)·asin(√x)
    close(regularizedIncompleteBeta(0.2, 0.5, 0.5), (2 / Math.PI) * Math.asin(Math.sqrt(0.2)), 1e-14);
    expect(regularizedIncompleteBeta(0, 2, 3)).toBe(0);
    expect(regularizedIncompleteBeta(1, 2, 3)).toBe(1);
    expect(regularizedIncompleteBeta(1.5, 2, 3)).toBeNaN();
  });
});

// --- summaries and proportions --------------------------------------------------------------

describe('sample summaries', () => {
  it('n, mean, sample variance, the t interval of the mean and type-7 percentiles', () => {
    const xs = [9, 4, 5, 2, 4, 7, 4, 5]; // mean 5, Σ(x − 5)² = 32
    const s = summarize(xs);
    expect(s.n).toBe(8);
    close(s.mean, 5, 1e-15);
    close(s.variance, 32 / 7, 1e-15);
    close(s.std_dev, Math.sqrt(32 / 7), 1e-15);
    const half = 2.364624251592785 * Math.sqrt(32 / 7 / 8); // t(0.975, 7)
    close(s.ci!.low, 5 - half, 1e-13);
    close(s.ci!.high, 5 + half, 1e-13);
    // numpy.percentile(xs, [50, 95]) with its default method='linear': 4.5 and 8.3
    close(s.p50, 4.5, 1e-15);
    close(s.p95, 8.3, 1e-14);
    expect([s.min, s.max]).toEqual([2, 9]);
    expect(percentile([1, 2, 3, 4], 0.95)).toBeCloseTo(3.85, 14);
    expect(percentile([3], 0.95)).toBe(3);
    expect(percentile([], 0.5)).toBeNull();
    expect(percentile([1, 2], 0)).toBe(1);
    expect(percentile([1, 2], 1)).toBe(2);
  });

  it('a large common offset does not cancel the variance away', () => {
    const s = summarize([1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16]);
    close(s.mean, 1e9 + 10, 1e-16);
    close(s.variance, 30, 1e-12);
    // the textbook one-pass formula (Σx² − (Σx)²/n)/(n − 1) is off by far more here: the check can tell
    const xs = [1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16];
    const naive = (xs.reduce((a, x) => a + x * x, 0) - xs.reduce((a, x) => a + x, 0) ** 2 / 4) / 3;
    expect(Math.abs(naive - 30)).toBeGreaterThan(1e-6);
  });

  it('n = 0, n = 1, constant samples and a million values', () => {
    expect(summarize([])).toEqual({
      n: 0,
      mean: null,
      variance: null,
      std_dev: null,
      ci: null,
      min: null,
      max: null,
      p50: null,
      p95: null,
    });
    const one = summarize([0.7]);
    expect(one).toMatchObject({ n: 1, mean: 0.7, variance: null, std_dev: null, ci: null, p50: 0.7, p95: 0.7 });
    const flat = summarize([0.5, 0.5, 0.5]);
    expect(flat.variance).toBe(0);
    expect(flat.ci).toEqual({ low: 0.5, high: 0.5 });
    const big = summarize(Array.from({ length: 1_000_000 }, (_, i) => i % 10));
    close(big.mean, 4.5, 1e-15);
    close(big.variance, (8.25 * 1e6) / (1e6 - 1), 1e-14);
    close(big.p95, 9, 1e-15);
    expect(meanInterval(1, 3, 0)).toBeNull();
  });
});

describe('proportions', () => {
  it('8/10: the Wilson interval solves (p̂ − p)² = z²·p(1 − p)/n and equals the reference', () => {
    const r = proportion(8, 10);
    expect(r.rate).toBe(0.8);
    const z = 1.959963984540054;
    for (const p of [r.ci!.low, r.ci!.high]) close((0.8 - p) ** 2, (z * z * p * (1 - p)) / 10, 1e-15);
    close(r.ci!.low, 0.4901624715366417, 1e-13); // mpmath, 40 digits
    close(r.ci!.high, 0.9433178485456247, 1e-13);
  });

  it('0/n and n/n give bounds of exactly 0 and 1; 0/0 gives nothing', () => {
    const none = proportion(0, 20);
    expect(none.ci!.low).toBe(0);
    const z2 = 1.959963984540054 ** 2;
    close(none.ci!.high, z2 / (20 + z2), 1e-15); // the score bound at p̂ = 0
    expect(proportion(20, 20).ci!.high).toBe(1);
    close(proportion(20, 20).ci!.low, 20 / (20 + z2), 1e-15);
    expect(proportion(0, 0)).toEqual({ n: 0, successes: 0, rate: null, ci: null });
  });
});

// --- tests ------------------------------------------------------------------------------------

// Welch's first example on Wikipedia ("Welch's t-test"): published t = 2.46 (B − A), ν ≈ 24.99, p = 0.021.
const A1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
const A2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];

describe("Welch's t-test", () => {
  it('the classic example: t and df by hand, p to 1e-12, CI with Welch df', () => {
    const va = sampleVariance(A1);
    const vb = sampleVariance(A2);
    const sa = va / 15;
    const sb = vb / 15;
    const t = (mean(A2) - mean(A1)) / Math.sqrt(sa + sb);
    const df = (sa + sb) ** 2 / (sa ** 2 / 14 + sb ** 2 / 14);
    const r = welchTTestSamples(A1, A2);
    expect(r.test).toBe('welch_t');
    close(r.t, t, 1e-13);
    close(r.df, df, 1e-13);
    close(r.difference, mean(A2) - mean(A1), 1e-13);
    expect(r.t!.toFixed(2)).toBe('2.46');
    expect(r.df!.toFixed(2)).toBe('24.99');
    relClose(r.p_value, 0.02137800146286703, 1e-11); // mpmath betainc at 40 digits
    expect(r.significant).toBe(true);
    // the interval is estimate ± t(0.975, ν)·SE, and at each of its ends the test gives p = 0.05
    const half = studentTQuantile(0.975, df) * Math.sqrt(sa + sb);
    close(r.ci!.low, r.difference! - half, 1e-13);
    close(r.ci!.high, r.difference! + half, 1e-13);
    for (const end of [r.ci!.low, r.ci!.high]) {
      const shifted = welchTTest({ n: 15, mean: mean(A1) + end, variance: va }, { n: 15, mean: mean(A2), variance: vb });
      close(shifted.p_value, 0.05, 1e-12);
    }
  });

  it('from summary statistics equals the same from raw samples; swapping groups flips the sign only', () => {
    const a = { n: 15, mean: mean(A1), variance: sampleVariance(A1) };
    const b = { n: 15, mean: mean(A2), variance: sampleVariance(A2) };
    const ab = welchTTest(a, b);
    const ba = welchTTest(b, a);
    close(ba.t, -ab.t!, 1e-15);
    close(ba.p_value, ab.p_value!, 1e-15);
    close(ba.ci!.low, -ab.ci!.high, 1e-14);
  });

  it('identical samples: t = 0, p = 1, an interval centred on 0', () => {
    const r = welchTTestSamples([1, 2, 3, 4], [1, 2, 3, 4]);
    expect(r.t).toBe(0);
    expect(r.p_value).toBe(1);
    expect(r.significant).toBe(false);
    close(r.ci!.low, -r.ci!.high, 1e-15);
    close(r.df, 6, 1e-14); // equal variances and sizes: n_a + n_b − 2
  });

  it('no variation in either group: no t, no p, no claim; in one group: df = n − 1 of the other', () => {
    const flat = welchTTest({ n: 20, mean: 0.5, variance: 0 }, { n: 30, mean: 0.9, variance: 0 });
    expect(flat).toEqual({ test: 'welch_t', difference: 0.9 - 0.5, t: null, df: null, ci: null, p_value: null, significant: false });
    const one = welchTTest({ n: 20, mean: 0.5, variance: 0 }, { n: 30, mean: 0.6, variance: 0.04 });
    close(one.df, 29, 1e-13);
    close(one.t, 0.1 / Math.sqrt(0.04 / 30), 1e-13);
  });

  it('n = 0 or 1 in a group: nothing to test', () => {
    expect(welchTTestSamples([], [1, 2, 3]).difference).toBeNull();
    const r = welchTTestSamples([0.4], [0.3, 0.5, 0.6]);
    expect(r).toMatchObject({ t: null, p_value: null, ci: null, significant: false });
    close(r.difference, 0.4666666666666667 - 0.4, 1e-15);
  });

  it('huge n: p matches the normal with the 1/ν correction, and the df comes out without overflow', () => {
    const a = { n: 1e9, mean: 0.5, variance: 0.25 };
    const b = { n: 2e9, mean: 0.50005, variance: 0.24 };
    const r = welchTTest(a, b);
    const se = Math.sqrt(0.25 / 1e9 + 0.24 / 2e9);
    close(r.t, 0.00005 / se, 1e-9);
    expect(r.df).toBeGreaterThan(1e9);
    relClose(r.p_value, 2 * normalCdf(-Math.abs(r.t!)), 1e-8);
    const tiny = welchTTest({ n: 10, mean: 1e-200, variance: 1e-300 }, { n: 12, mean: 2e-200, variance: 2e-300 });
    expect(Number.isFinite(tiny.df)).toBe(true);
    expect(tiny.df).toBeGreaterThan(9);
  });
});

describe('two-proportion z-test', () => {
  it('45/100 against 60/100: z² is the 2×2 chi-square, p from the normal series, unpooled CI', () => {
    const r = twoProportionZTest({ successes: 45, n: 100 }, { successes: 60, n: 100 });
    expect(r.test).toBe('two_proportion_z');
    close(r.difference, 0.15, 1e-15);
    // Pearson's chi-square of [[45, 55], [60, 40]] without continuity correction: N(ad − bc)²/(r1 r2 c1 c2)
    const chi2 = (200 * (45 * 40 - 55 * 60) ** 2) / (100 * 100 * 105 * 95);
    close(r.z! ** 2, chi2, 1e-14);
    expect(r.z).toBeGreaterThan(0);
    close(r.z, 0.15 / Math.sqrt(0.525 * 0.475 * 0.02), 1e-14);
    close(r.p_value, 1 - 2 * normalCentralMass(r.z!), 1e-14);
    close(r.p_value, 0.03367, 1e-5); // textbook value, 4 significant figures
    expect(r.significant).toBe(true);
    const half = 1.959963984540054 * Math.sqrt((0.45 * 0.55) / 100 + (0.6 * 0.4) / 100);
    close(r.ci!.low, 0.15 - half, 1e-14);
    close(r.ci!.high, 0.15 + half, 1e-14);
  });

  it('both groups all true: no z, no p; a group of 0: nothing', () => {
    const r = twoProportionZTest({ successes: 10, n: 10 }, { successes: 30, n: 30 });
    expect(r).toMatchObject({ difference: 0, z: null, p_value: null, ci: null, significant: false });
    const one = twoProportionZTest({ successes: 10, n: 10 }, { successes: 27, n: 30 }); // pooled SE > 0, unpooled too
    expect(one.p_value).not.toBeNull();
    expect(twoProportionZTest({ successes: 0, n: 0 }, { successes: 3, n: 9 })).toMatchObject({
      rate_a: null,
      difference: null,
      p_value: null,
    });
  });
});

describe('paired t-test', () => {
  it('differences with df = 7: t by hand, p from the integrated density, the CI by inversion', () => {
    const d = [0.1, 0.3, -0.05, 0.2, 0.15, 0.05, 0.25, 0.0];
    const m = mean(d);
    const sd = Math.sqrt(sampleVariance(d));
    const t = m / (sd / Math.sqrt(8));
    const r = pairedTTest(d);
    expect(r).toMatchObject({ test: 'paired_t', n: 8, df: 7 });
    close(r.difference, m, 1e-15);
    close(r.t, t, 1e-13);
    close(r.p_value, 1 - 2 * tCentralMass(t, 7), 1e-11);
    close(r.ci!.low, m - (2.364624251592785 * sd) / Math.sqrt(8), 1e-13);
    close(pairedTTest(d.map((x) => x - r.ci!.high)).p_value, 0.05, 1e-12);
    expect(r.significant).toBe(r.p_value! < 0.05);
  });

  it('n < 2 or all differences equal: no t, no p', () => {
    expect(pairedTTest([])).toMatchObject({ n: 0, difference: null, p_value: null, significant: false });
    expect(pairedTTest([0.2])).toMatchObject({ n: 1, difference: 0.2, t: null, p_value: null });
    expect(pairedTTest([0.2, 0.2, 0.2])).toMatchObject({ n: 3, t: null, df: null, ci: null, p_value: null, significant: false });
    expect(pairedTTest([0, 0, 0, 0])).toMatchObject({ difference: 0, p_value: null, significant: false });
  });
});

describe('verdict', () => {
  const result = {
    test: 'welch_t' as const,
    difference: 0.08,
    t: 3.2,
    df: 180,
    ci: { low: 0.03, high: 0.13 },
    p_value: 0.0021,
    significant: true,
  };

  const costDiffers = { p_value: 0.003, significant: true };
  const costSame = { p_value: 0.31, significant: false };

  it('says the difference, its interval, the test and p, and the cost change', () => {
    const v = verdict({ result, a: 'v6', b: 'v7', cost: { a: 0.01, b: 0.0112, test: costDiffers } });
    expect(v).toEqual({
      test: 'welch_t',
      significant: true,
      sentence: "v7 scores 0.08 higher (95 % CI 0.03–0.13, Welch's t-test p = 0.0021) and costs 12 % more",
    });
  });

  it('a difference that is not significant is said to be so, with a signed interval', () => {
    const v = verdict({
      result: { ...result, difference: -0.012, ci: { low: -0.034, high: 0.01 }, p_value: 0.41, significant: false },
      a: 'v6',
      b: 'v7',
      cost: { a: 0.02, b: 0.019, test: costDiffers },
    });
    expect(v.significant).toBe(false);
    // decimals from the interval: half-width 0.022 → 2
    expect(v.sentence).toBe(
      "v7 scores 0.01 lower (95 % CI −0.03 to 0.01, Welch's t-test p = 0.41), not significant: p ≥ 0.05 and the interval includes 0; v7 costs 5 % less",
    );
    const finer = verdict({
      result: { ...result, difference: -0.012, ci: { low: -0.034, high: 0.01 }, p_value: 0.41, significant: false },
      a: 'v6',
      b: 'v7',
      decimals: 3,
    });
    expect(finer.sentence).toBe(
      "v7 scores 0.012 lower (95 % CI −0.034 to 0.010, Welch's t-test p = 0.41), not significant: p ≥ 0.05 and the interval includes 0",
    );
  });

  it('rates are in percentage points, from a real two-proportion test', () => {
    const r = twoProportionZTest({ successes: 45, n: 100 }, { successes: 60, n: 100 });
    const v = verdict({ result: r, a: 'v6', b: 'v7' });
    expect(v.test).toBe('two_proportion_z');
    expect(v.sentence).toBe("v7's rate is 15 points higher (95 % CI 1–29 points, two-proportion z-test p = 0.034)");
  });

  it('no claim when the test cannot be made; p below 0.0001 is written as such', () => {
    const flat = welchTTest({ n: 5, mean: 1, variance: 0 }, { n: 5, mean: 1, variance: 0 });
    const v = verdict({ result: flat, a: 'v6', b: 'v7', cost: { a: 1, b: 1.001, test: costDiffers } });
    expect(v).toEqual({
      test: 'welch_t',
      significant: false,
      sentence: 'v7 scores the same as v6 (not testable: too few scores or no variation) and costs less than 1 % more',
    });
    expect(formatP(0.00004)).toBe('< 0.0001');
    expect(formatP(0.0004)).toBe('= 0.0004');
    expect(formatP(0.10937499999999979)).toBe('= 0.11');
    expect(formatP(0.12499999999999997)).toBe('= 0.13'); // as the answer's p_value (0.125) reads
    expect(formatP(0.05)).toBe('= 0.05');
    const paired = pairedTTest([0.1, 0.12, 0.09, 0.11, 0.1, 0.13, 0.08, 0.1]);
    expect(verdict({ result: paired, a: 'v6', b: 'v7' }).sentence).toMatch(
      /^v7 scores 0\.10 higher \(95 % CI 0\.09–0\.12, paired t-test p < 0\.0001\)$/,
    );
  });

  it('the cost change only when the cost test finds one; nothing when it cannot test', () => {
    const v = verdict({ result, a: 'v6', b: 'v7', cost: { a: 0.01, b: 0.0104, test: costSame } });
    expect(v.sentence).toBe("v7 scores 0.08 higher (95 % CI 0.03–0.13, Welch's t-test p = 0.0021); the cost difference is not significant");
    const untested = verdict({ result, a: 'v6', b: 'v7', cost: { a: 0.01, b: 0.0104, test: { p_value: null, significant: false } } });
    expect(untested.sentence).toBe("v7 scores 0.08 higher (95 % CI 0.03–0.13, Welch's t-test p = 0.0021)");
  });

  it('a cost speaks of dollars, a latency of milliseconds, never of scores', () => {
    const cost = pairedTTest([0.00004, 0.00006, 0.00005, 0.000055, 0.000045, 0.00005]);
    expect(verdict({ result: cost, a: 'v6', b: 'v7', measure: 'cost_usd' }).sentence).toBe(
      'v7 costs $0.000050 more per execution (95 % CI $0.000043 to $0.000057, paired t-test p < 0.0001)',
    );
    const cheaper = welchTTestSamples([0.012, 0.013, 0.011], [0.01, 0.011, 0.0105]);
    expect(verdict({ result: cheaper, a: 'run a', b: 'run b', measure: 'cost_usd', per: 'item' }).sentence).toMatch(
      /^run b costs \$0\.00\d+ less per item \(95 % CI −\$0\.00\d+ to (−)?\$0\.00\d+, Welch's t-test p = 0\.\d+\)/,
    );
    const slower = pairedTTest([118, 122, 121, 119, 120]);
    expect(verdict({ result: slower, a: 'v6', b: 'v7', measure: 'latency_ms' }).sentence).toMatch(
      /^v7 is 120 ms slower \(95 % CI 11\d–12\d ms, paired t-test p < 0\.0001\)$/,
    );
    const faster = pairedTTest([-30, -10, 5, -25]);
    expect(verdict({ result: faster, a: 'v6', b: 'v7', measure: 'latency_ms' }).sentence).toMatch(
      /^v7 is 15 ms faster \(95 % CI −\d+ to \d+ ms, paired t-test p = 0\.\d+\), not significant: p ≥ 0\.05 and the interval includes 0$/,
    );
    const none = pairedTTest([]);
    expect(verdict({ result: none, a: 'v6', b: 'v7', measure: 'latency_ms' }).sentence).toBe(
      'v7 cannot be compared with v6: one of them has no executions',
    );
    // Money keeps two significant digits of its difference beside a wide interval.
    const wide = {
      test: 'welch_t' as const,
      difference: 0.000005,
      t: 0.3,
      df: 6,
      ci: { low: -0.0000323, high: 0.0000423 },
      p_value: 0.75,
      significant: false,
    };
    expect(verdict({ result: wide, a: 'v2', b: 'v3', measure: 'cost_usd' }).sentence).toBe(
      "v3 costs $0.0000050 more per execution (95 % CI −$0.0000323 to $0.0000423, Welch's t-test p = 0.75), not significant: p ≥ 0.05 and the interval includes 0",
    );
    // The counts name the side with nothing to compare.
    expect(verdict({ result: none, a: 'v6', b: 'v7', measure: 'latency_ms', counts: { a: 4, b: 0 } }).sentence).toBe(
      'v7 cannot be compared with v6: v7 has no executions',
    );
    // The cost clause belongs to scores: a cost or latency verdict never carries it.
    expect(
      verdict({ result: slower, a: 'v6', b: 'v7', measure: 'latency_ms', cost: { a: 1, b: 2, test: costDiffers } }).sentence,
    ).not.toMatch(/costs/);
  });

  it('a side with no scores is named, and the cost is not mixed in', () => {
    const empty = welchTTest({ n: 0, mean: 0, variance: NaN }, { n: 12, mean: 0.7, variance: 0.01 });
    const v = verdict({ result: empty, a: 'v4', b: 'v5', cost: { a: 0.01, b: 0.0103, test: costDiffers }, counts: { a: 0, b: 12 } });
    expect(v).toEqual({ test: 'welch_t', significant: false, sentence: 'v5 cannot be compared with v4: v4 has no scores' });
    const neither = twoProportionZTest({ successes: 0, n: 0 }, { successes: 0, n: 0 });
    expect(verdict({ result: neither, a: 'v4', b: 'v5', counts: { a: 0, b: 0 } }).sentence).toBe(
      'v5 cannot be compared with v4: neither has scores',
    );
  });

  it('an interval that disagrees with the test is explained: the test decides', () => {
    // 8 pairs, 5 discordant, all for b: exact p = 2 · ½⁵ = 0.0625 while the Wald interval excludes 0.
    const edge = mcNemarExactTest({ n: 8, both: 1, a_only: 0, b_only: 5 });
    expect(edge.p_value).toBeCloseTo(0.0625, 6);
    expect(edge.ci!.low).toBeGreaterThan(0);
    const v = verdict({ result: edge, a: 'v3', b: 'v4' });
    expect(v.significant).toBe(false);
    expect(v.sentence).toMatch(
      /^v4's rate is 63 points higher \(95 % CI \d+–\d+ points, McNemar's exact test p = 0\.063\), not significant: p ≥ 0\.05 by the test, which decides \(its approximate interval excludes 0\)$/,
    );
  });
});
