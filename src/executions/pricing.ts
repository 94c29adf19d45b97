// The cost of one LLM call, the one pricing rule of every execution (direct records, trace
// assembly, the spans of the hierarchy): a cost the caller states is used as sent ("provided"),
// else the cost computed from the project's or the catalogue's price at the call's start
// ("computed"), else nothing counts ("unpriced"). Exact: nano-dollars, never floating point.
import type { PriceResolver } from '../pricing/prices.ts';
import { computeCost, type Cost, type PriceRow, type PricingContext, type Usage } from '../pricing/cost.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';

export type CostSource = 'provided' | 'computed' | 'unpriced';

export interface PricedCall {
  source: CostSource;
  /** The cost that counts: the provided one, else the computed one, else 0. */
  costNanos: bigint;
  /** The same, as a decimal string. */
  costUsd: string;
  /** The cost the price gives, when a price was found (with its warnings), whether or not it counts. */
  computed?: Cost;
  price?: PriceRow;
}

export interface PricedCallInput {
  provider: string;
  model: string;
  /** When the call started: the price in force then applies. */
  at: Date;
  usage: Usage;
  /** A cost the call states itself (a decimal), or nothing. */
  provided?: string | number | null;
  /** What price conditions match against (service tier, region, batch). */
  context?: PricingContext;
}

/** Decimal(18, 9) holds up to 999,999,999.999999999 USD per execution. */
export const MAX_EXECUTION_COST_NANOS = 10n ** 18n - 1n;

/** A cost an execution can hold: one beyond the most is capped, and `warnings` says so. */
export function capCost(n: bigint, what: string, warnings: string[]): bigint {
  if (n <= MAX_EXECUTION_COST_NANOS) return n;
  warnings.push(`${what} exceeds ${fromScaled(MAX_EXECUTION_COST_NANOS, NANOS)} USD; capped`);
  return MAX_EXECUTION_COST_NANOS;
}

const isProvided = (v: PricedCallInput['provided']): v is string | number => v !== undefined && v !== null && v !== '';

export async function priceCall(prices: PriceResolver, projectId: string, call: PricedCallInput): Promise<PricedCall> {
  const price = await prices.resolve(projectId, call.provider, call.model, call.at, call.usage.tokensIn);
  const computed = price ? computeCost(call.usage, price, call.context) : undefined;
  const source: CostSource = isProvided(call.provided) ? 'provided' : computed ? 'computed' : 'unpriced';
  const costNanos = isProvided(call.provided) ? toScaled(call.provided, NANOS) : (computed?.costNanos ?? 0n);
  return { source, costNanos, costUsd: fromScaled(costNanos, NANOS), computed, price };
}
