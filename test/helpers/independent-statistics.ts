// Statistics computed the long way, independently of src/quality/statistics.ts, for tests to check
// the service's figures against: Student's t tail by integrating its density (Simpson's rule) and
// binomial coefficients in BigInt (McNemar's exact p).

/** Γ(x) for x a positive multiple of ½ (exact products). */
export function gammaHalf(x: number): number {
  if (Number.isInteger(x)) {
    let g = 1;
    for (let k = 2; k < x; k++) g *= k;
    return g;
  }
  let g = Math.sqrt(Math.PI); // Γ(½)
  for (let k = 0.5; k < x; k++) g *= k;
  return g;
}

/** P(|T| > |t|) for Student's t with integer df, by Simpson's rule over the density on [0, |t|]. */
export function twoSidedP(t: number, df: number): number {
  const c = gammaHalf((df + 1) / 2) / (Math.sqrt(df * Math.PI) * gammaHalf(df / 2));
  const density = (x: number) => c * (1 + (x * x) / df) ** (-(df + 1) / 2);
  const steps = 20_000;
  const h = Math.abs(t) / steps;
  let s = density(0) + density(Math.abs(t));
  for (let i = 1; i < steps; i++) s += density(i * h) * (i % 2 ? 4 : 2);
  return 1 - 2 * ((s * h) / 3);
}

/** n choose k, exactly. */
export function binomial(n: number, k: number): bigint {
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
}
