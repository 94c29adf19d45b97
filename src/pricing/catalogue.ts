// The built-in price catalogue: @pydantic/genai-prices with its bundled data (never updated at
// run time). Only the model's per-token rates are taken from it; the arithmetic is ours (exact).
import { calcPrice } from '@pydantic/genai-prices';
import { numberToDecimal } from './decimal.ts';
import type { PriceRow } from './cost.ts';

type Rate = number | { base: number; tiers: Array<{ start: number; price: number }> } | undefined;

/** A tiered rate applies the tier whose threshold the call's input tokens reached. */
function rateAt(rate: Rate, tokensIn: number): string | undefined {
  if (rate === undefined) return undefined;
  if (typeof rate === 'number') return numberToDecimal(rate);
  let price = rate.base;
  for (const t of rate.tiers ?? []) if (tokensIn > t.start) price = t.price;
  return numberToDecimal(price);
}

const cache = new Map<string, PriceRow | null>();

/** OpenTelemetry provider names (gen_ai.provider.name) the catalogue spells otherwise. */
const CATALOGUE_PROVIDER: Record<string, string> = { x_ai: 'x-ai', 'azure.ai.inference': 'azure', ibm: 'ibm' };

function lookup(provider: string | undefined, model: string, at: Date, tokensIn: number) {
  try {
    return calcPrice({ input_tokens: Math.max(tokensIn, 1) }, model, { ...(provider ? { providerId: CATALOGUE_PROVIDER[provider] ?? provider } : {}), timestamp: at } as never);
  } catch {
    return undefined; // a provider or model the catalogue does not know
  }
}

export function cataloguePrice(provider: string, model: string, at: Date, tokensIn: number): PriceRow | undefined {
  if (!model) return undefined;
  const key = `${provider}\u0000${model}\u0000${at.toISOString().slice(0, 10)}\u0000${tokensIn > 128_000 ? 'big' : 'small'}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit ?? undefined;
  let row: PriceRow | null = null;
  {
    // A provider the catalogue does not know (a gateway, a self-hosted endpoint) still prices a
    // model id the catalogue knows; an unknown model stays unpriced, never a guess.
    const r = lookup(provider || undefined, model, at, tokensIn) ?? (provider ? lookup(undefined, model, at, tokensIn) : undefined);
    const mp = r?.model_price as Record<string, Rate> | undefined;
    const input = rateAt(mp?.input_mtok, tokensIn);
    const output = rateAt(mp?.output_mtok, tokensIn);
    if (r && input !== undefined && output !== undefined) {
      row = {
        price_id: `catalogue:${r.provider.id}/${r.model.id}`,
        provider: r.provider.id,
        model: r.model.id,
        input_per_mtok: input,
        output_per_mtok: output,
        cached_input_per_mtok: rateAt(mp?.cache_read_mtok, tokensIn),
        cache_write_per_mtok: rateAt(mp?.cache_write_mtok, tokensIn),
      };
    }
  }
  if (cache.size > 10_000) cache.clear();
  cache.set(key, row);
  return row ?? undefined;
}
