// Money in spend answers: exact nano-dollar BigInts inside, JSON numbers at the edge (docs/api-conventions.md, "Money").
import { fromScaled, mulDiv, NANOS, toScaled } from '../decimal.ts';

/** ClickHouse Decimal as text (toString) or a PostgreSQL numeric → nano-dollars. */
export const nanos = (text: string | null | undefined): bigint => (text ? toScaled(text, NANOS) : 0n);

/** Nano-dollars → the JSON number with the same decimal spelling. */
export const usd = (n: bigint): number => Number(fromScaled(n, NANOS));

/** Mean in nano-dollars, rounded half-up; 0 for no executions. */
export function average(total: bigint, count: bigint | number): bigint {
  const c = BigInt(count);
  if (c <= 0n) return 0n;
  const neg = total < 0n;
  const r = mulDiv(neg ? -total : total, 1n, c);
  return neg ? -r : r;
}

/** spent / budget as a percentage with 4 decimals, rounded half-up, as an exact decimal string (what is stored). */
export function percentText(spent: bigint, budget: bigint): string {
  if (budget <= 0n) return '0';
  const s = spent < 0n ? 0n : spent;
  return fromScaled(mulDiv(s, 1_000_000n, budget), 4);
}

/** spent / budget as a percentage with 4 decimals (a JSON number). */
export const percent = (spent: bigint, budget: bigint): number => Number(percentText(spent, budget));
