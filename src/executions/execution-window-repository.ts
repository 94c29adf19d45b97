// The figures of one window of a filter's executions (what a monitor reads: src/monitors). Every
// read is a range of the executions' primary key — (project_id, started_at) — plus the filter's
// conditions (execution-filter.ts, the list's SQL), so its cost is the window's rows, never the
// project's history (docs/monitors.md, "Cost"). Counts and sums are signed sums over every row (a
// cancel row subtracts what its row added: exact without FINAL); the p95 reads the live rows
// (FINAL within the range), as a quantile cannot be netted by sign.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { executionFilter, type ListQuery } from './execution-filter.ts';

/** The window [start, end) of the executions a list query's filter selects. */
export interface WindowRead {
  projectId: string;
  filter: Omit<ListQuery, 'limit' | 'offset' | 'cursor' | 'start' | 'end'>;
  start: Date;
  end: Date;
}

export interface ExecutionFigures {
  n: number;
  errors: number;
  /** Σ cost and Σ cost² (USD, floats: what Welch's test takes) */
  costSum: number;
  costSquares: number;
}

/** No score conditions: a window's filter is the evaluators' shape, which has none. */
const noScoreConditions = () => ({ parts: [], params: {} });

function whereOf(r: WindowRead) {
  return executionFilter(
    r.projectId,
    { ...r.filter, start: r.start.toISOString(), end: r.end.toISOString(), limit: 0, offset: 0 },
    noScoreConditions,
  );
}

export function createExecutionWindows(ch: ClickHouseStore) {
  return {
    async figures(r: WindowRead): Promise<ExecutionFigures> {
      const w = whereOf(r);
      const [row] = await ch.query<{ n: string; errors: string; cost_sum: number; cost_squares: number }>(
        `SELECT toString(sum(toInt64(sign))) AS n, toString(sum(if(status = 'error', toInt64(sign), 0))) AS errors,
           sum(toFloat64(cost_usd) * sign) AS cost_sum, sum(pow(toFloat64(cost_usd), 2) * sign) AS cost_squares
         FROM executions WHERE ${w.sql}`,
        w.params,
        'monitors.executions',
      );
      return {
        n: Number(row?.n ?? 0),
        errors: Number(row?.errors ?? 0),
        costSum: Number(row?.cost_sum ?? 0),
        costSquares: Number(row?.cost_squares ?? 0),
      };
    },

    /** The live executions' p95 latency (type 7, as statistics.ts percentile) and count. */
    async latencyP95(r: WindowRead): Promise<{ n: number; p95: number | null }> {
      const w = whereOf(r);
      const [row] = await ch.query<{ n: string; p95: number | null }>(
        `SELECT toString(count()) AS n, if(count() = 0, NULL, quantileExactInclusive(0.95)(toFloat64(latency_ms))) AS p95
         FROM executions FINAL WHERE ${w.sql} AND sign = 1`,
        w.params,
        'monitors.latency',
      );
      return { n: Number(row?.n ?? 0), p95: row?.p95 === null || row?.p95 === undefined ? null : Number(row.p95) };
    },

    /** How many executions took longer than `ms` (signed count). */
    async slowerThan(r: WindowRead, ms: number): Promise<{ n: number; slower: number }> {
      const w = whereOf(r);
      const [row] = await ch.query<{ n: string; slower: string }>(
        `SELECT toString(sum(toInt64(sign))) AS n, toString(sum(if(latency_ms > {slower_ms:Float64}, toInt64(sign), 0))) AS slower
         FROM executions WHERE ${w.sql}`,
        { ...w.params, slower_ms: ms },
        'monitors.latency.share',
      );
      return { n: Number(row?.n ?? 0), slower: Number(row?.slower ?? 0) };
    },

    /** The trace ids of the window's live executions, as a subquery (`{project_id}` bound): what their scores are read by. */
    liveTraces(r: WindowRead): { text: string; params: Record<string, unknown> } {
      const w = whereOf(r);
      return { text: `SELECT trace_id FROM executions WHERE ${w.sql} GROUP BY trace_id HAVING sum(sign) > 0`, params: w.params };
    },
  };
}

export type ExecutionWindows = ReturnType<typeof createExecutionWindows>;
