// Cost of one LLM call with OpenTelemetry GenAI token semantics (docs/executions.md, "Pricing"): tokens_in
// includes cached and cache-write tokens, tokens_out includes reasoning tokens.
//   (tokens_in − cached − cache_write) × input + cached × cached_input
//     + cache_write × cache_write_input + tokens_out × output
// A missing cached (or cache-write) price falls back to the input price. Exact: rates are
// decimals scaled to 1e-12 USD per million tokens, the result is nano-dollars, rounded once.
import { fromScaled, mulDiv, NANOS, toScaled } from '../decimal.ts';

export const RATE_SCALE = 12;

export interface PriceRow {
  price_id: string;
  provider: string;
  model: string;
  /** USD per million tokens, as decimal strings */
  input_per_mtok: string;
  output_per_mtok: string;
  cached_input_per_mtok?: string;
  cache_write_per_mtok?: string;
}

export interface Usage {
  tokensIn: number;
  tokensOut: number;
  cachedIn: number;
  cacheWriteIn: number;
}

export interface Cost {
  costNanos: bigint;
  costUsd: string;
  warnings: string[];
}

// tokens × rate(1e-12 USD/Mtok) / 1e9 = nano-dollars
const DIVISOR = 10n ** BigInt(RATE_SCALE - NANOS + 6);

export function computeCost(usage: Usage, price: PriceRow): Cost {
  const warnings: string[] = [];
  const input = toScaled(price.input_per_mtok, RATE_SCALE);
  const output = toScaled(price.output_per_mtok, RATE_SCALE);
  const cached = price.cached_input_per_mtok !== undefined ? toScaled(price.cached_input_per_mtok, RATE_SCALE) : input;
  const cacheWrite = price.cache_write_per_mtok !== undefined ? toScaled(price.cache_write_per_mtok, RATE_SCALE) : input;
  let uncached = usage.tokensIn - usage.cachedIn - usage.cacheWriteIn;
  if (uncached < 0) {
    warnings.push(
      `tokens_cached_in + tokens_cache_write_in (${usage.cachedIn + usage.cacheWriteIn}) exceed tokens_in (${usage.tokensIn}): ` +
        'counts kept as sent, uncached input priced as 0',
    );
    uncached = 0;
  }
  const weighted =
    BigInt(uncached) * input + BigInt(usage.cachedIn) * cached + BigInt(usage.cacheWriteIn) * cacheWrite + BigInt(usage.tokensOut) * output;
  const costNanos = mulDiv(weighted, 1n, DIVISOR);
  return { costNanos, costUsd: fromScaled(costNanos, NANOS), warnings };
}
