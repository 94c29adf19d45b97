// The price table of a project (GET/PUT/DELETE /api/projects/{pid}/models): its own prices, which
// take precedence, and the built-in catalogue. Every write drops the project's prices from the
// resolver's memory on every node before the response is sent.
import crypto from 'node:crypto';
import { waitForUpdate } from '@pydantic/genai-prices';
import { badRequest, notFound } from '../errors.ts';
import type { Queryable } from '../stores/postgres.ts';
import { parseTime } from '../time.ts';
import { cataloguePrice } from './catalogue.ts';
import type { PriceCondition, PriceRow, PriceTier } from './cost.ts';
import { numberToDecimal } from '../decimal.ts';
import type { PriceResolver } from './prices.ts';
import {
  deleteProjectPrices,
  pageProjectPrices,
  priceInForce,
  upsertProjectPrice,
  EXTRA_RATE_COLUMNS,
  type ExtraRateColumn,
  type ProjectPriceRow,
} from './project-price-repository.ts';
import { slowRegexReason, unsafeRegexReason } from './regex-guard.ts';

/** Rates as the API takes them: JSON numbers, USD per million tokens (web_search_per_call: per call). */
export interface RatesInput extends Partial<Record<ExtraRateColumn, number>> {
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok?: number;
  cache_write_per_mtok?: number;
}

export interface TierInput extends RatesInput {
  above_input_tokens: number;
}

export interface ConditionInput extends RatesInput {
  when: { service_tier?: string; region?: string; batch?: boolean };
  tiers?: TierInput[];
}

export interface ModelPriceInput extends RatesInput {
  provider?: string;
  match?: string;
  tiers?: TierInput[];
  conditions?: ConditionInput[];
  effective_from?: string | number;
}

export interface ModelPriceQuery {
  q?: string;
  provider?: string;
  source?: 'project' | 'catalogue';
  limit: number;
  offset: number;
}

export interface ModelPrice {
  source: 'project' | 'catalogue';
  price_id: string;
  provider: string | null;
  model: string;
  match: string | null;
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok: number | null;
  cache_write_per_mtok: number | null;
  cache_write_1h_per_mtok: number | null;
  reasoning_per_mtok: number | null;
  input_audio_per_mtok: number | null;
  output_audio_per_mtok: number | null;
  input_image_per_mtok: number | null;
  output_image_per_mtok: number | null;
  web_search_per_call: number | null;
  tiers: Array<Record<string, unknown>>;
  conditions: Array<Record<string, unknown>>;
  effective_from: string | null;
  in_force: boolean;
  created_at: string | null;
  created_by: string | null;
}

/** Model keys: what a provider's API calls a model ("gpt-4o", "anthropic.claude-3-5-sonnet-v2:0", "org/model"). */
// eslint-disable-next-line no-control-regex -- control characters are what this refuses
const MODEL_KEY = /^[^\s\u0000-\u001f\u007f]{1,256}$/;

// A rate of 1e-12 USD per million tokens is the arithmetic's resolution (RATE_SCALE): the JSON
// number's shortest decimal spelling is what is stored, and NUMERIC(30, 12) keeps it exactly.
const rate = (n: number | undefined) => (n === undefined ? null : numberToDecimal(n));
const num = (s: string | null | undefined) => (s === null || s === undefined ? null : Number(s));

const RATE_KEYS = ['input_per_mtok', 'output_per_mtok', 'cached_input_per_mtok', 'cache_write_per_mtok', ...EXTRA_RATE_COLUMNS] as const;

/** Stored rates (decimal strings) → the API's numbers; absent rates stay absent. */
function presentRates(r: object): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of RATE_KEYS) {
    const v = (r as Record<string, unknown>)[k];
    if (typeof v === 'string') out[k] = Number(v);
  }
  return out;
}
const presentTier = (t: PriceTier) => ({ above_input_tokens: t.above_input_tokens, ...presentRates(t) });
const presentCondition = (c: PriceCondition) => ({
  when: c.when,
  ...presentRates(c),
  ...(c.tiers?.length ? { tiers: c.tiers.map(presentTier) } : {}),
});

/** API rates (numbers) → stored rates: each number's shortest decimal spelling. */
function ratesOf(r: RatesInput): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of RATE_KEYS) {
    const v = r[k];
    if (v !== undefined) out[k] = numberToDecimal(v);
  }
  return out;
}

function checkTiers(tiers: readonly TierInput[] | undefined, at: string): PriceTier[] | undefined {
  if (!tiers?.length) return undefined;
  tiers.forEach((t, i) => {
    if (i > 0 && t.above_input_tokens <= tiers[i - 1]!.above_input_tokens)
      throw badRequest(
        `${at}[${i}].above_input_tokens: must be greater than ${at}[${i - 1}].above_input_tokens (${tiers[i - 1]!.above_input_tokens})`,
      );
  });
  return tiers.map((t) => ({ above_input_tokens: t.above_input_tokens, ...ratesOf(t) }) as PriceTier);
}

function checkConditions(conditions: readonly ConditionInput[] | undefined): PriceCondition[] | undefined {
  if (!conditions?.length) return undefined;
  const seen = new Map<string, number>();
  return conditions.map((c, i) => {
    const w = c.when;
    const key = JSON.stringify([w.service_tier?.toLowerCase() ?? null, w.region?.toLowerCase() ?? null, w.batch ?? null]);
    const before = seen.get(key);
    if (before !== undefined) throw badRequest(`conditions[${i}].when: the same as conditions[${before}].when`);
    seen.set(key, i);
    const when = {
      ...(w.service_tier !== undefined ? { service_tier: w.service_tier } : {}),
      ...(w.region !== undefined ? { region: w.region } : {}),
      ...(w.batch !== undefined ? { batch: w.batch } : {}),
    };
    const tiers = checkTiers(c.tiers, `conditions[${i}].tiers`);
    return { when, ...ratesOf(c), ...(tiers ? { tiers } : {}) } as PriceCondition;
  });
}

function presentProjectRow(r: ProjectPriceRow, inForce: boolean): ModelPrice {
  return {
    source: 'project',
    price_id: `project:${r.price_id}`,
    provider: r.provider,
    model: r.model,
    match: r.match,
    input_per_mtok: Number(r.input_per_mtok),
    output_per_mtok: Number(r.output_per_mtok),
    cached_input_per_mtok: num(r.cached_input_per_mtok),
    cache_write_per_mtok: num(r.cache_write_per_mtok),
    cache_write_1h_per_mtok: num(r.cache_write_1h_per_mtok),
    reasoning_per_mtok: num(r.reasoning_per_mtok),
    input_audio_per_mtok: num(r.input_audio_per_mtok),
    output_audio_per_mtok: num(r.output_audio_per_mtok),
    input_image_per_mtok: num(r.input_image_per_mtok),
    output_image_per_mtok: num(r.output_image_per_mtok),
    web_search_per_call: num(r.web_search_per_call),
    tiers: (r.tiers ?? []).map(presentTier),
    conditions: (r.conditions ?? []).map(presentCondition),
    effective_from: r.effective_from === null ? null : new Date(r.effective_from).toISOString(),
    in_force: inForce,
    created_at: new Date(r.created_at).toISOString(),
    created_by: r.created_by,
  };
}

function presentCatalogueRow(p: PriceRow): ModelPrice {
  return {
    source: 'catalogue',
    price_id: p.price_id,
    provider: p.provider,
    model: p.model,
    match: null,
    input_per_mtok: Number(p.input_per_mtok),
    output_per_mtok: Number(p.output_per_mtok),
    cached_input_per_mtok: num(p.cached_input_per_mtok),
    cache_write_per_mtok: num(p.cache_write_per_mtok),
    cache_write_1h_per_mtok: num(p.cache_write_1h_per_mtok),
    reasoning_per_mtok: num(p.reasoning_per_mtok),
    input_audio_per_mtok: num(p.input_audio_per_mtok),
    output_audio_per_mtok: num(p.output_audio_per_mtok),
    input_image_per_mtok: num(p.input_image_per_mtok),
    output_image_per_mtok: num(p.output_image_per_mtok),
    web_search_per_call: num(p.web_search_per_call),
    tiers: [],
    conditions: [],
    effective_from: null,
    in_force: true,
    created_at: null,
    created_by: null,
  };
}

// The catalogue as a list: every model the resolver prices under its own id, at today's prices
// (tiered rates: the base tier), by provider then model. About 1,400 rows, built once per UTC day.
let catalogueList: { day: string; rows: ModelPrice[] } | undefined;
async function catalogueRows(now: Date): Promise<ModelPrice[]> {
  const day = now.toISOString().slice(0, 10);
  if (catalogueList?.day === day) return catalogueList.rows;
  const providers = (await waitForUpdate()) ?? [];
  const rows: ModelPrice[] = [];
  for (const provider of providers) {
    for (const model of provider.models) {
      const p = cataloguePrice(provider.id, model.id, now, 0);
      if (p && p.price_id === `catalogue:${provider.id}/${model.id}`) rows.push(presentCatalogueRow(p));
    }
  }
  rows.sort((a, b) =>
    a.provider! < b.provider! ? -1 : a.provider! > b.provider! ? 1 : a.model < b.model ? -1 : a.model > b.model ? 1 : 0,
  );
  catalogueList = { day, rows };
  return rows;
}

function checkModelKey(model: string): void {
  if (!MODEL_KEY.test(model)) throw badRequest('model: must be 1 to 256 characters without spaces or control characters');
}

export function createModelPriceService(postgres: Queryable, resolver: PriceResolver) {
  return {
    async list(projectId: string, query: ModelPriceQuery): Promise<{ items: ModelPrice[]; total: number; limit: number; offset: number }> {
      const now = new Date();
      const { limit, offset } = query;
      // Project rows come first; the page spans both sources.
      const own =
        query.source === 'catalogue'
          ? { total: 0, rows: [] }
          : await pageProjectPrices(postgres, projectId, { q: query.q, provider: query.provider, now, limit, offset });
      let catalogue: ModelPrice[] = [];
      if (query.source !== 'project') {
        const q = query.q?.toLowerCase();
        const provider = query.provider?.toLowerCase();
        catalogue = (await catalogueRows(now)).filter(
          (r) => (!q || r.model.toLowerCase().includes(q)) && (!provider || r.provider === provider),
        );
      }
      const items = own.rows.map((r) => presentProjectRow(r, r.in_force));
      const from = Math.max(0, offset - own.total);
      items.push(...catalogue.slice(from, from + (limit - items.length)));
      return { items, total: own.total + catalogue.length, limit, offset };
    },

    async set(projectId: string, model: string, input: ModelPriceInput, userId: string): Promise<ModelPrice> {
      checkModelKey(model);
      const tiers = checkTiers(input.tiers, 'tiers');
      const conditions = checkConditions(input.conditions);
      const extraRates: Partial<Record<ExtraRateColumn, string>> = {};
      for (const c of EXTRA_RATE_COLUMNS) if (input[c] !== undefined) extraRates[c] = numberToDecimal(input[c]);
      if (input.match !== undefined) {
        try {
          new RegExp(input.match);
        } catch (err) {
          throw badRequest(
            `match: is not a valid regular expression (${(err as Error).message.replace(/^Invalid regular expression: /, '')})`,
          );
        }
        const unsafe = unsafeRegexReason(input.match);
        if (unsafe) throw badRequest(`match: ${unsafe}`);
        const slow = await slowRegexReason(input.match);
        if (slow) throw badRequest(`match: ${slow}`);
      }
      // Undated: the key's base price, for every call of the model, past and future, until a dated
      // row supersedes it from its date (docs/executions.md, "Effective dates").
      const effectiveFrom = input.effective_from !== undefined ? parseTime(input.effective_from, 'effective_from') : null;
      const row = await upsertProjectPrice(postgres, projectId, {
        priceId: crypto.randomUUID(),
        model,
        provider: input.provider ?? null,
        match: input.match ?? null,
        inputPerMtok: rate(input.input_per_mtok)!,
        outputPerMtok: rate(input.output_per_mtok)!,
        cachedInputPerMtok: rate(input.cached_input_per_mtok),
        cacheWritePerMtok: rate(input.cache_write_per_mtok),
        extraRates,
        tiers: tiers ?? null,
        conditions: conditions ?? null,
        effectiveFrom,
        createdBy: userId,
      });
      await resolver.invalidate(projectId);
      return presentProjectRow(row, await priceInForce(postgres, projectId, model, row.price_id, new Date()));
    },

    async remove(projectId: string, model: string): Promise<void> {
      checkModelKey(model);
      const removed = await deleteProjectPrices(postgres, projectId, model);
      if (removed === 0) throw notFound('Model price');
      await resolver.invalidate(projectId);
    },
  };
}

export type ModelPriceService = ReturnType<typeof createModelPriceService>;
