// The built-in price catalogue: @pydantic/genai-prices with its bundled data (never updated at
// run time). Only the model's per-token rates are taken from it; the arithmetic is ours (exact).
import { calcPrice } from '@pydantic/genai-prices';
import { fromScaled, numberToDecimal, toScaled } from '../decimal.ts';
import type { PriceRow } from './cost.ts';

type Rate = number | { base: number; tiers: Array<{ start: number; price: number }> } | undefined;

/** A tiered rate applies the tier whose threshold the call's input tokens passed (`applied` notes it). */
function rateAt(rate: Rate, tokensIn: number, applied?: Set<string>): string | undefined {
  if (rate === undefined) return undefined;
  if (typeof rate === 'number') return numberToDecimal(rate);
  let price = rate.base;
  let start: number | undefined;
  for (const t of rate.tiers ?? [])
    if (tokensIn > t.start) {
      price = t.price;
      start = t.start;
    }
  if (start !== undefined) applied?.add(`catalogue tier above ${start} input tokens`);
  return numberToDecimal(price);
}

/** USD per thousand calls → USD per call, exactly. */
function perCall(rate: Rate, tokensIn: number): string | undefined {
  const k = rateAt(rate, tokensIn);
  return k === undefined ? undefined : fromScaled(toScaled(k, 15), 18);
}

/** OpenTelemetry provider names (gen_ai.provider.name) the catalogue spells otherwise. */
const CATALOGUE_PROVIDER: Record<string, string> = { x_ai: 'x-ai', 'azure.ai.inference': 'azure', ibm: 'ibm' };

function lookup(provider: string | undefined, model: string, at: Date, tokensIn: number) {
  try {
    return calcPrice({ input_tokens: Math.max(tokensIn, 1) }, model, {
      ...(provider ? { providerId: CATALOGUE_PROVIDER[provider] ?? provider } : {}),
      timestamp: at,
    } as never);
  } catch {
    return undefined; // a provider or model the catalogue does not know
  }
}

/** What calcPrice chose for one (provider, model) and time: the raw rates (tiers still unapplied). */
interface Entry {
  priceId: string;
  provider: string;
  model: string;
  rates: Record<string, Rate>;
  /** The input-token thresholds of its tiered rates, sorted: between two of them, the rates are the same. */
  starts?: number[];
  /** The row built for each interval between thresholds (null: no input or output rate there). */
  rows?: Map<number, PriceRow | null>;
}

function tierStarts(rates: Record<string, Rate>): number[] {
  const starts = new Set<number>();
  for (const r of Object.values(rates)) if (r && typeof r === 'object') for (const t of r.tiers ?? []) starts.add(t.start);
  return [...starts].sort((a, b) => a - b);
}

/**
 * Per (provider, model, UTC day): the seconds of the day at which a time-of-day price starts or
 * ends (DeepSeek's peak windows) and what calcPrice returned in each slot between them. Start-date
 * constraints are whole UTC days, so within one slot of one day the rates cannot change; the tier
 * (which depends on the call's input tokens) is applied on every call, never cached.
 */
interface DayEntry {
  bounds: number[];
  slots: Map<number, Entry | null>;
}
const cache = new Map<string, DayEntry>();
const MAX_CACHE = 10_000;

const secondsOfDay = (d: Date) => d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds() + d.getUTCMilliseconds() / 1000;

function clockSeconds(t: string): number | undefined {
  const m = /^(\d{2}):(\d{2})(?::(\d{2}))?/.exec(t);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0) : undefined;
}

/** The time-of-day boundaries of a model's conditional prices, sorted (empty when it has none). */
function boundsOf(model: { prices?: unknown } | undefined): number[] {
  const out = new Set<number>();
  if (model && Array.isArray(model.prices)) {
    for (const p of model.prices as Array<{ constraint?: { type?: string; start_time?: string; end_time?: string } }>) {
      if (p.constraint?.type !== 'time_of_date') continue;
      for (const t of [p.constraint.start_time, p.constraint.end_time]) {
        const s = t === undefined ? undefined : clockSeconds(t);
        if (s !== undefined && s > 0) out.add(s);
      }
    }
  }
  return [...out].sort((a, b) => a - b);
}

const slotOf = (bounds: readonly number[], at: Date) => {
  const s = secondsOfDay(at);
  let i = 0;
  while (i < bounds.length && s >= bounds[i]!) i++;
  return i;
};

function lookupEntry(provider: string, model: string, at: Date): { entry: Entry | null; bounds: number[] } {
  // A provider the catalogue does not know (a gateway, a self-hosted endpoint) still prices a
  // model id the catalogue knows; an unknown model stays unpriced, never a guess. The token count
  // given to calcPrice does not change which rates it picks (only the tier, applied by us).
  const r = lookup(provider || undefined, model, at, 1) ?? (provider ? lookup(undefined, model, at, 1) : undefined);
  if (!r) return { entry: null, bounds: [] };
  return {
    entry: {
      priceId: `catalogue:${r.provider.id}/${r.model.id}`,
      provider: r.provider.id,
      model: r.model.id,
      rates: (r.model_price ?? {}) as Record<string, Rate>,
    },
    bounds: boundsOf(r.model as { prices?: unknown }),
  };
}

export function cataloguePrice(provider: string, model: string, at: Date, tokensIn: number): PriceRow | undefined {
  if (!model || Number.isNaN(at.getTime())) return undefined;
  const key = `${provider}\u0000${model}\u0000${at.toISOString().slice(0, 10)}`;
  let day = cache.get(key);
  let entry: Entry | null | undefined;
  if (day) entry = day.slots.get(slotOf(day.bounds, at));
  if (entry === undefined) {
    const found = lookupEntry(provider, model, at);
    if (!day) {
      if (cache.size >= MAX_CACHE) cache.clear();
      day = { bounds: found.bounds, slots: new Map() };
      cache.set(key, day);
    }
    entry = found.entry;
    day.slots.set(slotOf(day.bounds, at), entry);
  }
  if (!entry) return undefined;
  // The row is the same for every call whose input tokens fall between the same two thresholds:
  // built once per interval, so the rates are parsed once (cost.ts keeps them by row).
  const starts = (entry.starts ??= tierStarts(entry.rates));
  let interval = 0;
  while (interval < starts.length && tokensIn > starts[interval]!) interval++;
  const rows = (entry.rows ??= new Map());
  let built = rows.get(interval);
  if (built === undefined) rows.set(interval, (built = catalogueRow(entry, tokensIn) ?? null));
  return built ?? undefined;
}

/** The price row of a catalogue entry for a call with `tokensIn` input tokens (its tiers applied). */
function catalogueRow(entry: Entry, tokensIn: number): PriceRow | undefined {
  const applied = new Set<string>();
  const r = entry.rates;
  const input = rateAt(r.input_mtok, tokensIn, applied);
  const output = rateAt(r.output_mtok, tokensIn, applied);
  if (input === undefined || output === undefined) return undefined;
  const row: PriceRow = {
    price_id: entry.priceId,
    provider: entry.provider,
    model: entry.model,
    input_per_mtok: input,
    output_per_mtok: output,
  };
  // Only the rates the catalogue knows; the others fall back (cost.ts).
  const optional: Array<[keyof PriceRow, string | undefined]> = [
    ['cached_input_per_mtok', rateAt(r.cache_read_mtok, tokensIn, applied)],
    ['cache_write_per_mtok', rateAt(r.cache_write_mtok, tokensIn, applied)],
    ['reasoning_per_mtok', rateAt(r.output_reasoning_mtok, tokensIn, applied)],
    ['input_audio_per_mtok', rateAt(r.input_audio_mtok, tokensIn, applied)],
    ['output_audio_per_mtok', rateAt(r.output_audio_mtok, tokensIn, applied)],
    ['input_image_per_mtok', rateAt(r.input_image_mtok, tokensIn, applied)],
    ['output_image_per_mtok', rateAt(r.output_image_mtok, tokensIn, applied)],
    ['web_search_per_call', perCall(r.web_searches_kcount, tokensIn)],
  ];
  for (const [k, v] of optional) if (v !== undefined) (row as unknown as Record<string, string>)[k] = v;
  if (applied.size) row.applied = [...applied];
  return Object.freeze(row); // shared by every call of the interval
}
