// Exact decimal arithmetic for money: amounts are BigInt counts of a fixed scale (nano-dollars
// for costs: 9 decimal places), never binary floating point.

export const NANOS = 9;

/** "0.000123" (or a finite number, through its shortest decimal form) → BigInt at `scale` decimals; half-up beyond. */
export function toScaled(value: string | number, scale: number): bigint {
  const s = typeof value === 'number' ? numberToDecimal(value) : value.trim();
  const m = /^(-?)(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new Error(`not a decimal: ${s}`);
  const [, sign, int, frac = ''] = m;
  const kept = frac.slice(0, scale).padEnd(scale, '0');
  let n = BigInt((int || '0') + kept);
  if (frac.length > scale && Number(frac[scale]) >= 5) n += 1n;
  return sign === '-' ? -n : n;
}

/** A JS number's exact decimal spelling (no exponent), e.g. 1e-7 → "0.0000001". */
export function numberToDecimal(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  const s = String(n);
  if (!/e/i.test(s)) return s;
  const [mantissa, expPart] = s.toLowerCase().split('e') as [string, string];
  const exp = Number(expPart);
  const neg = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const point =
    (mantissa.replace('-', '').indexOf('.') === -1 ? mantissa.replace('-', '').length : mantissa.replace('-', '').indexOf('.')) + exp;
  const body =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (neg ? '-' : '') + body;
}

/** BigInt at `scale` decimals → its decimal string without trailing zeros ("0.123", "25"). */
export function fromScaled(n: bigint, scale: number): string {
  const neg = n < 0n;
  const abs = (neg ? -n : n).toString().padStart(scale + 1, '0');
  const int = abs.slice(0, abs.length - scale);
  const frac = abs.slice(abs.length - scale).replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/** a × b / divisor, rounded half-up (non-negative operands). */
export function mulDiv(a: bigint, b: bigint, divisor: bigint): bigint {
  const p = a * b;
  return (p + divisor / 2n) / divisor;
}

/**
 * A computed figure as an answer shows it: `digits` decimals, half away from zero, of its decimal
 * value to 15 significant digits — so float noise of the computation does not decide the rounding
 * (995.65 computed as 995.6499999999999 by one engine function and 995.6500000000001 by another
 * is 995.7 in both answers).
 */
export function roundFigure(x: number, digits: number): number {
  if (!Number.isFinite(x)) throw new Error(`not a finite number: ${x}`);
  return Number(fromScaled(toScaled(Number(x.toPrecision(15)), digits), digits));
}

/** A figure to `significant` digits (a p-value: 0.10937499999999979 → 0.109375). */
export function roundSignificant(x: number, significant: number): number {
  if (!Number.isFinite(x)) throw new Error(`not a finite number: ${x}`);
  return Number(x.toPrecision(significant));
}
