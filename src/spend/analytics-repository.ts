// Template analytics (GET .../prompts/{prompt_id}/analytics) from the pre-aggregated
// prompt_daily_stats table (schema/clickhouse/003): counts, money, tokens and mean latency are
// exact sums of sign; p50/p95 merge the quantile sketches (fed by +1 rows only, see the migration).
import { roundFigure } from '../decimal.ts';
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { average, nanos, usd } from './money.ts';
import { dayWindow } from './window.ts';

export interface AnalyticsQuery {
  start?: string;
  end?: string;
  version?: number;
}

interface AggRow {
  version_t: string | number;
  executions_t: string;
  cost_t: string;
  latency_sum_t: string;
  tokens_in_t: string;
  tokens_out_t: string;
  q: Array<number | string | null>;
}

const AGG = `toString(sum(executions)) AS executions_t, toString(sum(cost_usd)) AS cost_t, toString(sum(latency_ms_sum)) AS latency_sum_t,
  toString(sum(tokens_in)) AS tokens_in_t, toString(sum(tokens_out)) AS tokens_out_t, quantilesMerge(0.5, 0.95)(latency_ms_quantiles) AS q`;

// Rounded as every answer rounds its figures (the comparison of versions shows the same p95).
const round1 = (n: number) => roundFigure(n, 1);

function shape(r: AggRow | undefined) {
  const n = BigInt(r?.executions_t ?? 0);
  const cost = nanos(r?.cost_t);
  const q = (i: number) => {
    const v = Number(r?.q?.[i]);
    return n > 0n && Number.isFinite(v) ? round1(v) : null;
  };
  return {
    total_executions: Number(n),
    total_cost: usd(cost),
    avg_cost: usd(average(cost, n)),
    latency_ms: { avg: n > 0n ? round1(Number(BigInt(r?.latency_sum_t ?? 0)) / Number(n)) : null, p50: q(0), p95: q(1) },
    tokens_in: Number(r?.tokens_in_t ?? 0),
    tokens_out: Number(r?.tokens_out_t ?? 0),
  };
}

export function createAnalytics(ch: ClickHouseStore, now: () => Date) {
  return {
    /** The caller checks that the prompt exists in the project (404 otherwise). */
    async prompt(projectId: string, promptId: string, q: AnalyticsQuery) {
      const w = dayWindow(q, now());
      // version 0 holds "every version" (an execution counted once per prompt)
      const total = q.version ?? 0;
      const params = { p: projectId, id: promptId, s: w.days[0], e: w.days[w.days.length - 1], v: total };
      const where = 'project_id = {p:String} AND prompt_id = {id:String} AND day >= toDate({s:String}) AND day <= toDate({e:String})';
      const [totals, versions, days] = await Promise.all([
        ch.query<AggRow>(
          `SELECT {v:UInt32} AS version_t, ${AGG} FROM prompt_daily_stats WHERE ${where} AND prompt_version = {v:UInt32}`,
          params,
          'spend.analytics.totals',
        ),
        ch.query<AggRow>(
          `SELECT prompt_version AS version_t, ${AGG} FROM prompt_daily_stats WHERE ${where} AND prompt_version ${q.version ? '= {v:UInt32}' : '> 0'}
           GROUP BY prompt_version HAVING sum(executions) != 0 ORDER BY prompt_version`,
          params,
          'spend.analytics.versions',
        ),
        ch.query<{ date_t: string; executions_t: string; cost_t: string }>(
          `SELECT toString(day) AS date_t, toString(sum(executions)) AS executions_t, toString(sum(cost_usd)) AS cost_t
           FROM prompt_daily_stats WHERE ${where} AND prompt_version = {v:UInt32} GROUP BY day ORDER BY day`,
          params,
          'spend.analytics.daily',
        ),
      ]);
      const byDay = new Map(days.map((d) => [d.date_t, d]));
      return {
        prompt_id: promptId,
        version: q.version ?? null,
        start: w.start.toISOString(),
        end: w.end.toISOString(),
        ...shape(totals[0]),
        by_version: versions.map((r) => ({ version: Number(r.version_t), ...shape(r) })),
        daily: w.days.map((date) => {
          const d = byDay.get(date);
          return { date, executions: Number(d?.executions_t ?? 0), cost: usd(nanos(d?.cost_t)) };
        }),
      };
    },
  };
}

export type Analytics = ReturnType<typeof createAnalytics>;
