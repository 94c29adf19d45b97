// Repricing's reads and writes of `executions` (src/spend/reprice.ts): the live rows a reprice
// scope covers, read in keyset pages, and the corrections it writes (cancel row + new version, as
// the ledger always does).
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { toClickHouseTime } from '../time.ts';

/** The executions a reprice covers: started in [from, to), optionally of one provider and/or model. */
export interface RepriceScope {
  provider?: string;
  model?: string;
  from: Date;
  to: Date;
}

/** A live execution row; `cost_usd` and `cost_computed_usd` as exact text. Full rows carry every column. */
export type LedgerRow = Record<string, unknown> & {
  started_at: string;
  trace_id: string;
  version: string | number;
  /** `api` (a direct record) or `otlp` (assembled from spans). */
  source: string;
  provider: string;
  model: string;
  tokens_in: string;
  tokens_out: string;
  tokens_cached_in: string;
  tokens_cache_write_in: string;
  tokens_reasoning: string;
  cost_usd: string;
  cost_source: string;
  cost_computed_usd: string | null;
  price_id: string;
  /** 028_usage_types.sql; empty for rows stored before it */
  usage_details?: Record<string, string | number>;
  pricing_context?: Record<string, string>;
  cost_lines?: string;
};

const LIGHT = `started_at, trace_id, version, source, provider, model, tokens_in, tokens_out, tokens_cached_in, tokens_cache_write_in, tokens_reasoning,
  toString(cost_usd) AS cost_usd, cost_source, toString(cost_computed_usd) AS cost_computed_usd, price_id,
  usage_details, pricing_context, cost_lines`;
const FULL = '* REPLACE (toString(cost_usd) AS cost_usd, toString(cost_computed_usd) AS cost_computed_usd)';

/**
 * Direct records whose cost the service computed (or could not: unpriced) — a provided cost is
 * what the caller paid, never repriced — and OTLP executions, priced again span by span by
 * assembling their trace again (docs/spend.md, "Repricing").
 */
function repriceScopeWhere(projectId: string, s: RepriceScope) {
  const parts = [
    'project_id = {p:String}',
    "started_at >= toDateTime64({from:String}, 3, 'UTC')",
    "started_at < toDateTime64({to:String}, 3, 'UTC')",
    "((source = 'api' AND cost_source != 'provided') OR source = 'otlp')",
  ];
  const params: Record<string, unknown> = { p: projectId, from: toClickHouseTime(s.from), to: toClickHouseTime(s.to) };
  if (s.provider !== undefined) {
    parts.push('provider = {provider:String}');
    params.provider = s.provider;
  }
  if (s.model !== undefined) {
    parts.push('model = {model:String}');
    params.model = s.model;
  }
  return { sql: parts.join(' AND '), params };
}

export function createRepriceLedger(ch: ClickHouseStore) {
  return {
    /** Live executions in scope (sum of sign: each counted once). */
    async count(projectId: string, s: RepriceScope): Promise<bigint> {
      const w = repriceScopeWhere(projectId, s);
      const [r] = await ch.query<{ n: string }>(
        `SELECT toString(sum(sign)) AS n FROM executions WHERE ${w.sql}`,
        w.params,
        'reprice.count',
      );
      return BigInt(r?.n ?? 0);
    },
    /**
     * The live rows among the next `n` raw rows after `after` (started_at, trace_id), in key order,
     * and the key the page ended at (undefined at the end of the scope). The raw keys are read in
     * order without FINAL (a LIMIT that stops early); the live rows are then collapsed (FINAL) within
     * that key range only, so each page costs its own range, not the rest of the scope.
     */
    async page(
      projectId: string,
      s: RepriceScope,
      after: { startedAt: string; traceId: string } | undefined,
      n: number,
      full: boolean,
    ): Promise<{ rows: LedgerRow[]; end?: { startedAt: string; traceId: string } }> {
      const w = repriceScopeWhere(projectId, s);
      const cursor = after ? " AND (started_at, trace_id) > (toDateTime64({c_started:String}, 3, 'UTC'), {c_trace:String})" : '';
      const params = { ...w.params, n, ...(after ? { c_started: after.startedAt, c_trace: after.traceId } : {}) };
      const keys = await ch.query<{ started_at: string; trace_id: string }>(
        `SELECT started_at, trace_id FROM executions WHERE ${w.sql}${cursor} ORDER BY started_at, trace_id LIMIT {n:UInt32}`,
        params,
        'reprice.keys',
      );
      const last = keys[keys.length - 1];
      if (!last) return { rows: [] };
      const rows = await ch.query<LedgerRow>(
        `SELECT ${full ? FULL : LIGHT} FROM executions FINAL
         WHERE ${w.sql}${cursor} AND (started_at, trace_id) <= (toDateTime64({e_started:String}, 3, 'UTC'), {e_trace:String}) AND sign = 1
         ORDER BY started_at, trace_id
         SETTINGS do_not_merge_across_partitions_select_final = 1`,
        { ...params, e_started: last.started_at, e_trace: last.trace_id },
        full ? 'reprice.page' : 'reprice.page.light',
      );
      return { rows, end: { startedAt: last.started_at, traceId: last.trace_id } };
    },
    /** Corrections: each a cancel row and its new version, in one insert. */
    async write(rows: object[]): Promise<void> {
      if (rows.length) await ch.insert('executions', rows, { max_partitions_per_insert_block: '1000' });
    },
  };
}

export type RepriceLedger = ReturnType<typeof createRepriceLedger>;
