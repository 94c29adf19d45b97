// Which price applies to a call: the project's own prices first (model_prices), then the built-in
// catalogue. Unknown models have no price (cost_source "unpriced"), never a guess.
//
// The resolver runs for every ingested execution and every OTLP inference span, so it never
// queries PostgreSQL per call: each project's rows are held in memory, loaded once (concurrent
// callers share the load), and dropped on every node by a broadcast after each PUT/DELETE. Which
// keys can apply to a (provider, model) pair is memoised, so a regex runs once per distinct model
// id and table load, not once per call. A TTL bounds staleness if a broadcast is ever missed.
import type { Broadcast } from '../stores/broadcast.ts';
import type { Queryable } from '../stores/postgres.ts';
import type { PriceRow } from './cost.ts';
import { cataloguePrice } from './catalogue.ts';
import { fromScaled, toScaled } from '../decimal.ts';
import { RATE_SCALE } from './cost.ts';
import { EXTRA_RATE_COLUMNS, projectPrices, type ProjectPriceRow } from './project-price-repository.ts';
import { MAX_REGEX_INPUT } from './regex-guard.ts';

export interface PriceResolver {
  resolve(projectId: string, provider: string, model: string, at: Date, tokensIn: number): Promise<PriceRow | undefined>;
  /** After a committed change to a project's prices: drop its table here at once and on every other node. */
  invalidate(projectId: string): Promise<void>;
}

const CHANNEL = 'model-prices-changed';
const MAX_PROJECTS = 10_000;
const MAX_MEMO = 10_000;
/** Bound on staleness if a broadcast is ever missed; after it the table is refreshed in the background. */
const TTL_MS = 60_000;

interface CompiledRow {
  price: PriceRow;
  effectiveMs: number;
  /** Lower-cased; null applies to every provider. */
  provider: string | null;
  regex: RegExp | null;
}

/** One model key of a project: its history, newest effective_from first, the base row (-Infinity) last. */
interface KeyHistory {
  model: string;
  rows: CompiledRow[];
}

/** A key that can price a given (provider, model): which of its rows match. */
interface Candidate {
  key: KeyHistory;
  exact: boolean;
  matches: boolean[];
}

interface ProjectTable {
  keys: KeyHistory[];
  memo: Map<string, Candidate[]>;
  loadedAt: number;
}

const decimal = (s: string) => fromScaled(toScaled(s, RATE_SCALE), RATE_SCALE);

/** The PriceRow cost.ts computes with, from a stored row; `price_id` is `project:<uuid>`. */
export function toPriceRow(r: ProjectPriceRow): PriceRow {
  return {
    price_id: `project:${r.price_id}`,
    provider: r.provider ?? '',
    model: r.model,
    input_per_mtok: decimal(r.input_per_mtok),
    output_per_mtok: decimal(r.output_per_mtok),
    ...(r.cached_input_per_mtok !== null ? { cached_input_per_mtok: decimal(r.cached_input_per_mtok) } : {}),
    ...(r.cache_write_per_mtok !== null ? { cache_write_per_mtok: decimal(r.cache_write_per_mtok) } : {}),
    ...Object.fromEntries(EXTRA_RATE_COLUMNS.filter((c) => r[c] !== null && r[c] !== undefined).map((c) => [c, decimal(r[c]!)])),
    ...(r.tiers?.length ? { tiers: r.tiers } : {}),
    ...(r.conditions?.length ? { conditions: r.conditions } : {}),
  };
}

function compile(rows: ProjectPriceRow[]): ProjectTable {
  const byModel = new Map<string, KeyHistory>();
  for (const r of rows) {
    let key = byModel.get(r.model);
    if (!key) byModel.set(r.model, (key = { model: r.model, rows: [] }));
    let regex: RegExp | null = null;
    try {
      regex = r.match ? new RegExp(r.match) : null;
    } catch {
      regex = null; // validated on PUT; a row that no longer compiles still matches its own name
    }
    // The base row (undated) is in force at every time no dated row of its key covers.
    const effectiveMs = r.effective_from === null ? -Infinity : new Date(r.effective_from).getTime();
    key.rows.push({ price: toPriceRow(r), effectiveMs, provider: r.provider?.toLowerCase() ?? null, regex });
  }
  for (const key of byModel.values())
    key.rows.sort((a, b) => (a.effectiveMs === b.effectiveMs ? 0 : a.effectiveMs < b.effectiveMs ? 1 : -1));
  return { keys: [...byModel.values()], memo: new Map(), loadedAt: Date.now() };
}

function candidates(table: ProjectTable, provider: string, model: string): Candidate[] {
  const memoKey = `${provider}\u0000${model}`;
  let found = table.memo.get(memoKey);
  if (found) return found;
  found = [];
  const providerLc = provider.toLowerCase();
  for (const key of table.keys) {
    const exact = key.model === model;
    // A row's provider must equal the call's when both are known.
    const matches = key.rows.map(
      (r) =>
        (r.provider === null || providerLc === '' || r.provider === providerLc) &&
        (exact || (r.regex !== null && model.length <= MAX_REGEX_INPUT && r.regex.test(model))),
    );
    if (matches.some(Boolean)) found.push({ key, exact, matches });
  }
  if (table.memo.size >= MAX_MEMO) table.memo.clear();
  table.memo.set(memoKey, found);
  return found;
}

/**
 * The project price for a call at `atMs`, or undefined. Per key, the row in force is the latest
 * with effective_from ≤ the call's time, else the key's base row; it applies when it matches. Among applicable keys: the
 * exact model name before a regex, a row naming the provider before one that does not, then the
 * latest effective_from, then the key name (so the choice never depends on load order).
 */
export function pickProjectPrice(cands: readonly Candidate[], atMs: number): PriceRow | undefined {
  let best: { row: CompiledRow; exact: boolean; model: string } | undefined;
  for (const c of cands) {
    const i = c.key.rows.findIndex((r) => r.effectiveMs <= atMs);
    if (i < 0 || !c.matches[i]) continue;
    const row = c.key.rows[i]!;
    if (!best || better({ row, exact: c.exact, model: c.key.model }, best)) best = { row, exact: c.exact, model: c.key.model };
  }
  return best?.row.price;
}

function better(a: { row: CompiledRow; exact: boolean; model: string }, b: { row: CompiledRow; exact: boolean; model: string }): boolean {
  if (a.exact !== b.exact) return a.exact;
  if ((a.row.provider !== null) !== (b.row.provider !== null)) return a.row.provider !== null;
  if (a.row.effectiveMs !== b.row.effectiveMs) return a.row.effectiveMs > b.row.effectiveMs;
  return a.model < b.model;
}

export function createPriceResolver(postgres: Queryable, broadcast: Broadcast): PriceResolver {
  const tables = new Map<string, ProjectTable>();
  const loading = new Map<string, Promise<ProjectTable>>();
  // A load that raced with a change must not store what it read: it stores only when neither the
  // project's generation nor the global epoch (bumped on a resync) moved meanwhile.
  const generations = new Map<string, number>();
  let epoch = 0;

  const drop = (projectId: string) => {
    tables.delete(projectId);
    loading.delete(projectId); // later callers start a fresh load instead of joining a stale one
    generations.set(projectId, (generations.get(projectId) ?? 0) + 1);
    if (generations.size > MAX_PROJECTS * 4) {
      generations.clear();
      epoch++;
    }
  };
  broadcast.subscribe(CHANNEL, drop, () => {
    tables.clear();
    loading.clear();
    epoch++;
  });

  function load(projectId: string): Promise<ProjectTable> {
    const pending = loading.get(projectId);
    if (pending) return pending;
    const generation = generations.get(projectId) ?? 0;
    const startEpoch = epoch;
    const work = projectPrices(postgres, projectId)
      .then((rows) => {
        const table = compile(rows);
        if ((generations.get(projectId) ?? 0) === generation && epoch === startEpoch) {
          if (!tables.has(projectId) && tables.size >= MAX_PROJECTS) tables.delete(tables.keys().next().value as string);
          tables.set(projectId, table);
        }
        return table;
      })
      .finally(() => {
        if (loading.get(projectId) === work) loading.delete(projectId);
      });
    loading.set(projectId, work);
    return work;
  }

  async function table(projectId: string): Promise<ProjectTable> {
    const cached = tables.get(projectId);
    if (!cached) return load(projectId);
    if (Date.now() - cached.loadedAt > TTL_MS && !loading.has(projectId)) {
      // Served stale while refreshing: the hot path never waits for PostgreSQL once warm. A
      // failed refresh keeps the table and is retried on a later call.
      load(projectId).catch(() => undefined);
    }
    return cached;
  }

  return {
    async resolve(projectId, provider, model, at, tokensIn) {
      if (model) {
        const t = await table(projectId);
        if (t.keys.length > 0) {
          const own = pickProjectPrice(candidates(t, provider, model), at.getTime());
          if (own) return own;
        }
      }
      return cataloguePrice(provider, model, at, tokensIn);
    },
    async invalidate(projectId) {
      await broadcast.publish(CHANNEL, projectId);
    },
  };
}
