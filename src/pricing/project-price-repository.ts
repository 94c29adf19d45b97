// SQL of the model_prices table (schema/postgres/004_model_prices.sql): a project's own prices.
// Every statement is scoped by project_id. Rates travel as decimal strings in both directions
// (pg returns NUMERIC as text), so no price ever passes through a binary float here.
import type { Queryable } from '../stores/postgres.ts';
import type { PriceCondition, PriceTier } from './cost.ts';

/** The per-usage-type rates added by 022_price_usage_types.sql, in column order. */
export const EXTRA_RATE_COLUMNS = [
  'cache_write_1h_per_mtok',
  'reasoning_per_mtok',
  'input_audio_per_mtok',
  'output_audio_per_mtok',
  'input_image_per_mtok',
  'output_image_per_mtok',
  'web_search_per_call',
] as const;
export type ExtraRateColumn = (typeof EXTRA_RATE_COLUMNS)[number];

export interface ProjectPriceRow {
  price_id: string;
  model: string;
  provider: string | null;
  match: string | null;
  input_per_mtok: string;
  output_per_mtok: string;
  cached_input_per_mtok: string | null;
  cache_write_per_mtok: string | null;
  cache_write_1h_per_mtok: string | null;
  reasoning_per_mtok: string | null;
  input_audio_per_mtok: string | null;
  output_audio_per_mtok: string | null;
  input_image_per_mtok: string | null;
  output_image_per_mtok: string | null;
  web_search_per_call: string | null;
  /** Rates as decimal strings (jsonb); null when none. */
  tiers: PriceTier[] | null;
  conditions: PriceCondition[] | null;
  /** null: the key's base price (undated), in force wherever no dated row of the key is. */
  effective_from: Date | null;
  created_at: Date;
  created_by: string | null;
}

export interface NewProjectPrice {
  priceId: string;
  model: string;
  provider: string | null;
  match: string | null;
  inputPerMtok: string;
  outputPerMtok: string;
  cachedInputPerMtok: string | null;
  cacheWritePerMtok: string | null;
  extraRates: Partial<Record<ExtraRateColumn, string>>;
  tiers: PriceTier[] | null;
  conditions: PriceCondition[] | null;
  /** null: the base price (replaces the key's base row, if any). */
  effectiveFrom: Date | null;
  createdBy: string;
}

type R<T> = T & Record<string, unknown>;

/**
 * Whether a row is the one of its model in force at the time bound to `at`: the latest dated row at
 * or before it, or the base row (effective_from null) when the model has no such dated row.
 */
const inForceAt = (at: string) => {
  const latest = `max(effective_from) FILTER (WHERE effective_from <= ${at}) OVER (PARTITION BY model)`;
  return `CASE WHEN effective_from IS NULL THEN ${latest} IS NULL ELSE effective_from = ${latest} END`;
};

const COLUMNS = `price_id::text AS price_id, model, provider, match, input_per_mtok::text AS input_per_mtok,
  output_per_mtok::text AS output_per_mtok, cached_input_per_mtok::text AS cached_input_per_mtok,
  cache_write_per_mtok::text AS cache_write_per_mtok,
  ${EXTRA_RATE_COLUMNS.map((c) => `${c}::text AS ${c}`).join(', ')}, tiers, conditions,
  effective_from, created_at, created_by`;

/** Every row of a project: what the resolver's in-memory table is built from. */
export async function projectPrices(db: Queryable, projectId: string): Promise<ProjectPriceRow[]> {
  return db.query<R<ProjectPriceRow>>(
    `SELECT ${COLUMNS} FROM model_prices WHERE project_id = $1 ORDER BY model, effective_from DESC NULLS LAST`,
    [projectId],
  );
}

/**
 * Inserts a row, or replaces the row of the same (model, effective_from), the base row when
 * effective_from is null (a new price_id: a new price).
 */
export async function upsertProjectPrice(db: Queryable, projectId: string, p: NewProjectPrice): Promise<ProjectPriceRow> {
  // The base row's unique index is partial (effective_from IS NULL), so it is named as such.
  const conflict = p.effectiveFrom === null ? '(project_id, model) WHERE effective_from IS NULL' : '(project_id, model, effective_from)';
  const [row] = await db.query<R<ProjectPriceRow>>(
    `INSERT INTO model_prices (price_id, project_id, model, provider, match, input_per_mtok, output_per_mtok,
       cached_input_per_mtok, cache_write_per_mtok, effective_from, created_by, ${EXTRA_RATE_COLUMNS.join(', ')}, tiers, conditions)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19::jsonb, $20::jsonb)
     ON CONFLICT ${conflict} DO UPDATE SET
       price_id = excluded.price_id, provider = excluded.provider, match = excluded.match,
       input_per_mtok = excluded.input_per_mtok, output_per_mtok = excluded.output_per_mtok,
       cached_input_per_mtok = excluded.cached_input_per_mtok, cache_write_per_mtok = excluded.cache_write_per_mtok,
       ${EXTRA_RATE_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')},
       tiers = excluded.tiers, conditions = excluded.conditions,
       created_at = now(), created_by = excluded.created_by
     RETURNING ${COLUMNS}`,
    [
      p.priceId,
      projectId,
      p.model,
      p.provider,
      p.match,
      p.inputPerMtok,
      p.outputPerMtok,
      p.cachedInputPerMtok,
      p.cacheWritePerMtok,
      p.effectiveFrom,
      p.createdBy,
      ...EXTRA_RATE_COLUMNS.map((c) => p.extraRates[c] ?? null),
      p.tiers === null ? null : JSON.stringify(p.tiers),
      p.conditions === null ? null : JSON.stringify(p.conditions),
    ],
  );
  return row!;
}

/** Removes every row of one model key; the number removed. */
export async function deleteProjectPrices(db: Queryable, projectId: string, model: string): Promise<number> {
  const rows = await db.query(`DELETE FROM model_prices WHERE project_id = $1 AND model = $2 RETURNING price_id`, [projectId, model]);
  return rows.length;
}

export interface ProjectPricePage {
  total: number;
  rows: Array<ProjectPriceRow & { in_force: boolean }>;
}

/**
 * One page of a project's rows for the price table, by model then newest first (the base row
 * last). `in_force` is decided over each model's whole history (before the filters), at `now`.
 */
export async function pageProjectPrices(
  db: Queryable,
  projectId: string,
  f: { q?: string; provider?: string; now: Date; limit: number; offset: number },
): Promise<ProjectPricePage> {
  const where = `($2::text IS NULL OR strpos(lower(model), lower($2)) > 0) AND ($3::text IS NULL OR lower(provider) = lower($3))`;
  const params = [projectId, f.q ?? null, f.provider ?? null];
  const [count] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM model_prices WHERE project_id = $1 AND ${where}`, params);
  const total = Number(count?.n ?? 0);
  if (f.limit === 0 || f.offset >= total) return { total, rows: [] };
  const rows = await db.query<R<ProjectPriceRow & { in_force: boolean }>>(
    `SELECT * FROM (
       SELECT ${COLUMNS}, ${inForceAt('$4')} AS in_force
       FROM model_prices WHERE project_id = $1
     ) t
     WHERE ${where}
     ORDER BY model, effective_from DESC NULLS LAST
     LIMIT $5 OFFSET $6`,
    [...params, f.now, f.limit, f.offset],
  );
  return { total, rows: rows.map((r) => ({ ...r, in_force: r.in_force === true })) };
}

/** Whether the row `priceId` of `model` prices a call made at `now`. */
export async function priceInForce(db: Queryable, projectId: string, model: string, priceId: string, now: Date): Promise<boolean> {
  const [row] = await db.query<{ in_force: boolean | null }>(
    `SELECT in_force FROM (
       SELECT price_id, ${inForceAt('$3')} AS in_force FROM model_prices WHERE project_id = $1 AND model = $2
     ) t WHERE price_id = $4`,
    [projectId, model, now, priceId],
  );
  return row?.in_force === true;
}
