// Cost of one LLM call, one line per usage type (docs/spend.md, "Usage types"). Counts follow the
// OpenTelemetry GenAI semantics: tokens_in includes cached and cache-write tokens, tokens_out
// includes reasoning tokens, and every detail count is a part of one of them (input audio and
// image of the uncached input, the 1-hour cache write of the cache write, output audio and image
// and reasoning of the output), so each token is priced exactly once:
//   input         = tokens_in − cache read − cache write − input audio − input image
//   cache_write_5m = cache write − cache write 1h
//   output        = tokens_out − reasoning − output audio − output image
// A missing rate falls back (cache read, cache write, input audio/image → input; cache write 1h →
// cache write; reasoning, output audio/image → output); web searches are priced per call, and
// only with a per-call rate. Which rates apply: the price's tiers (by the call's tokens_in) and
// conditions (service tier, region, batch) — see `ratesFor`. Exact: rates are decimals scaled to
// 1e-12 USD per million tokens (or per call); each line is exact (1e-18 USD), the call's cost is
// their sum rounded once, half-up, to nano-dollars.
import { fromScaled, mulDiv, NANOS, toScaled } from '../decimal.ts';

export const RATE_SCALE = 12;

/** The rates of one price, tier or condition: decimal strings, USD per million tokens (web search: per call). */
export interface Rates {
  input_per_mtok: string;
  output_per_mtok: string;
  cached_input_per_mtok?: string;
  cache_write_per_mtok?: string;
  cache_write_1h_per_mtok?: string;
  reasoning_per_mtok?: string;
  input_audio_per_mtok?: string;
  output_audio_per_mtok?: string;
  input_image_per_mtok?: string;
  output_image_per_mtok?: string;
  web_search_per_call?: string;
}

export const OPTIONAL_RATES = [
  'cached_input_per_mtok',
  'cache_write_per_mtok',
  'cache_write_1h_per_mtok',
  'reasoning_per_mtok',
  'input_audio_per_mtok',
  'output_audio_per_mtok',
  'input_image_per_mtok',
  'output_image_per_mtok',
  'web_search_per_call',
] as const satisfies ReadonlyArray<keyof Rates>;

/**
 * Above `above_input_tokens` input tokens per call (tokens_in, cache included), the tier's rates
 * replace the base rates; token rates it omits fall back within it, a per-call rate it omits is the price's.
 */
export interface PriceTier extends Rates {
  above_input_tokens: number;
}

/** What a condition requires of the call; every field given must equal the call's. */
export interface PriceWhen {
  service_tier?: string;
  region?: string;
  batch?: boolean;
}

export interface PriceCondition extends Rates {
  when: PriceWhen;
  tiers?: PriceTier[];
}

export interface PriceRow extends Rates {
  price_id: string;
  provider: string;
  model: string;
  tiers?: PriceTier[];
  conditions?: PriceCondition[];
  /** Rules already applied when the row was resolved (a catalogue tier), for the breakdown. */
  applied?: string[];
}

/** The usage types a price can bill, in display order. */
export const USAGE_TYPES = [
  'input',
  'cache_read',
  'cache_write_5m',
  'cache_write_1h',
  'input_audio',
  'input_image',
  'output',
  'reasoning',
  'output_audio',
  'output_image',
  'web_search',
] as const;
export type UsageType = (typeof USAGE_TYPES)[number];

/** Counts beyond the four totals, each a part of one of them (web_search: calls, outside all). */
export const DETAIL_TYPES = ['cache_write_1h', 'input_audio', 'input_image', 'output_audio', 'output_image', 'web_search'] as const;
export type DetailType = (typeof DETAIL_TYPES)[number];
export type UsageDetails = Partial<Record<DetailType, number>>;

export interface Usage {
  tokensIn: number;
  tokensOut: number;
  cachedIn: number;
  cacheWriteIn: number;
  reasoning?: number;
  details?: UsageDetails;
}

/** The call's attributes conditions are matched against ('' / undefined: not known). */
export interface PricingContext {
  service_tier?: string;
  region?: string;
  batch?: boolean;
}

export interface CostLine {
  type: UsageType;
  quantity: number;
  unit: 'tokens' | 'calls';
  /** USD per million tokens, or per call */
  rate: string;
  /**
   * Exact, in 1e-18 USD (LINE_SCALE decimals); the call's cost is the sum of its lines rounded to
   * 9 decimals. Kept as a count, not text: lines are summed over an execution's calls, and only
   * the sums are written out (executions/cost-lines.ts).
   */
  exact: bigint;
}

export interface Cost {
  costNanos: bigint;
  costUsd: string;
  warnings: string[];
  lines: CostLine[];
  /** Which rates applied: "base rates", "tier above 200000 input tokens", "condition service_tier=batch", ... */
  rule: string;
}

/** Decimals of a line's exact cost: tokens × (1e-12 USD / 1e6 tokens) = 1e-18 USD. */
export const LINE_SCALE = RATE_SCALE + 6;
const ROUND = 10n ** BigInt(LINE_SCALE - NANOS);
const PER_CALL = 10n ** 6n; // calls × 1e-12 USD → 1e-18 USD

const describeWhen = (w: PriceWhen) =>
  Object.entries(w)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');

function pickTier(tiers: readonly PriceTier[] | undefined, tokensIn: number): PriceTier | undefined {
  let found: PriceTier | undefined;
  for (const t of tiers ?? [])
    if (tokensIn > t.above_input_tokens && (!found || t.above_input_tokens > found.above_input_tokens)) found = t;
  return found;
}

const specificity = (w: PriceWhen) =>
  (w.service_tier !== undefined ? 1 : 0) + (w.region !== undefined ? 1 : 0) + (w.batch !== undefined ? 1 : 0);

function matches(w: PriceWhen, ctx: PricingContext): boolean {
  if (w.service_tier !== undefined && (ctx.service_tier ?? '').toLowerCase() !== w.service_tier.toLowerCase()) return false;
  if (w.region !== undefined && (ctx.region ?? '').toLowerCase() !== w.region.toLowerCase()) return false;
  if (w.batch !== undefined && (ctx.batch ?? false) !== w.batch) return false;
  return true;
}

/**
 * The rates that price a call: the matching condition with the most fields (ties: the first
 * listed), else the price's own rates; then, within what was chosen, the tier with the highest
 * `above_input_tokens` the call's tokens_in exceeds.
 */
export function ratesFor(price: PriceRow, tokensIn: number, ctx: PricingContext): { rates: Rates; rule: string } {
  if (!price.applied && !price.tiers && !price.conditions) return { rates: price, rule: 'base rates' };
  const rules = [...(price.applied ?? [])];
  let base: Rates = price;
  let tiers = price.tiers;
  let best: PriceCondition | undefined;
  for (const c of price.conditions ?? []) if (matches(c.when, ctx) && (!best || specificity(c.when) > specificity(best.when))) best = c;
  if (best) {
    base = best;
    tiers = best.tiers;
    rules.push(`condition ${describeWhen(best.when)}`);
  }
  const tier = pickTier(tiers, tokensIn);
  if (tier) rules.push(`tier above ${tier.above_input_tokens} input tokens`);
  let rates: Rates = tier ?? base;
  // A per-call rate does not scale with token rates: one a tier or condition omits is the price's own.
  if (rates.web_search_per_call === undefined && price.web_search_per_call !== undefined)
    rates = { ...rates, web_search_per_call: price.web_search_per_call };
  return { rates, rule: rules.length ? rules.join('; ') : 'base rates' };
}

const scaled = (s: string | undefined) => (s === undefined ? undefined : toScaled(s, RATE_SCALE));

type ScaledRates = Record<UsageType, bigint | undefined>;
/**
 * Each usage type's rate (1e-12 USD), fallbacks applied, and its text, read once per rates object:
 * price rows are cached by the resolver, so a batch's thousands of calls of one model parse them once.
 */
const scaledRates = new WeakMap<Rates, { rate: ScaledRates; text: Partial<Record<UsageType, string>> }>();

function ratesOf(rates: Rates): { rate: ScaledRates; text: Partial<Record<UsageType, string>> } {
  const known = scaledRates.get(rates);
  if (known) return known;
  const input = toScaled(rates.input_per_mtok, RATE_SCALE);
  const output = toScaled(rates.output_per_mtok, RATE_SCALE);
  const cacheWrite = scaled(rates.cache_write_per_mtok) ?? input;
  const rate: ScaledRates = {
    input,
    cache_read: scaled(rates.cached_input_per_mtok) ?? input,
    cache_write_5m: cacheWrite,
    cache_write_1h: scaled(rates.cache_write_1h_per_mtok) ?? cacheWrite,
    input_audio: scaled(rates.input_audio_per_mtok) ?? input,
    input_image: scaled(rates.input_image_per_mtok) ?? input,
    output,
    reasoning: scaled(rates.reasoning_per_mtok) ?? output,
    output_audio: scaled(rates.output_audio_per_mtok) ?? output,
    output_image: scaled(rates.output_image_per_mtok) ?? output,
    web_search: scaled(rates.web_search_per_call),
  };
  const text: Partial<Record<UsageType, string>> = {};
  for (const type of USAGE_TYPES) if (rate[type] !== undefined) text[type] = fromScaled(rate[type], RATE_SCALE);
  const parsed = { rate, text };
  scaledRates.set(rates, parsed);
  return parsed;
}

export function computeCost(usage: Usage, price: PriceRow, ctx: PricingContext = {}): Cost {
  const warnings: string[] = [];
  const { rates, rule } = ratesFor(price, usage.tokensIn, ctx);
  const { rate, text } = ratesOf(rates);
  const d = usage.details ?? {};
  const qty: Record<UsageType, number> = {
    input: 0,
    cache_read: usage.cachedIn,
    cache_write_5m: 0,
    cache_write_1h: 0,
    input_audio: 0,
    input_image: 0,
    output: 0,
    reasoning: 0,
    output_audio: 0,
    output_image: 0,
    web_search: d.web_search ?? 0,
  };
  // Parts taken from a whole in turn; a part larger than what is left is cut, and said.
  const take = (left: number, n: number | undefined, what: string, of: string): [number, number] => {
    const want = n ?? 0;
    if (want <= left) return [want, left - want];
    warnings.push(`${what} (${want}) exceeds what is left of ${of} (${left}): priced as ${left}`);
    return [left, 0];
  };
  let uncached = usage.tokensIn - usage.cachedIn - usage.cacheWriteIn;
  if (uncached < 0) {
    warnings.push(
      `tokens_cached_in + tokens_cache_write_in (${usage.cachedIn + usage.cacheWriteIn}) exceed tokens_in (${usage.tokensIn}): ` +
        'counts kept as sent, uncached input priced as 0',
    );
    uncached = 0;
  }
  [qty.input_audio, uncached] = take(uncached, d.input_audio, 'input audio tokens', 'the uncached input');
  [qty.input_image, uncached] = take(uncached, d.input_image, 'input image tokens', 'the uncached input');
  qty.input = uncached;
  let write5m: number;
  [qty.cache_write_1h, write5m] = take(usage.cacheWriteIn, d.cache_write_1h, '1-hour cache write tokens', 'the cache write');
  qty.cache_write_5m = write5m;
  let out = usage.tokensOut;
  [qty.reasoning, out] = take(out, usage.reasoning, 'reasoning tokens', 'tokens_out');
  [qty.output_audio, out] = take(out, d.output_audio, 'output audio tokens', 'tokens_out');
  [qty.output_image, out] = take(out, d.output_image, 'output image tokens', 'tokens_out');
  qty.output = out;

  const lines: CostLine[] = [];
  let total = 0n;
  for (const type of USAGE_TYPES) {
    const n = qty[type];
    if (n <= 0) continue;
    const r = rate[type];
    if (r === undefined) {
      warnings.push(`${type}: ${n} calls and no per-call price; not counted`);
      continue;
    }
    const cost = BigInt(n) * r * (type === 'web_search' ? PER_CALL : 1n);
    total += cost;
    lines.push({ type, quantity: n, unit: type === 'web_search' ? 'calls' : 'tokens', rate: text[type]!, exact: cost });
  }
  const costNanos = mulDiv(total, 1n, ROUND);
  return { costNanos, costUsd: fromScaled(costNanos, NANOS), warnings, lines, rule };
}
