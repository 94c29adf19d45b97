// What finance reads from the executions ledger itself (docs/spend.md, "Invoices and
// reconciliation", "Chargeback statements"): the executions of a month that explain a difference
// with an invoice (unpriced, without usage, failed), and a month's spend by tag with each
// execution's cost split evenly among its distinct tags. Both sum signed rows (no FINAL): a
// correction's cancel row repeats the row it cancels, so every sum nets to the live versions.
import type { ClickHouseStore } from '../stores/clickhouse.ts';

/** A month (or any UTC range) of one project; `provider` narrows to the executions of one provider. */
export interface FinanceRange {
  projectId: string;
  /** 'YYYY-MM-DD hh:mm:ss.sss' UTC, start included, end excluded */
  start: string;
  end: string;
  provider?: string;
}

/** The executions of one UTC day, provider and model that may explain a difference with an invoice. */
export interface ExplanationRow {
  day: string;
  provider: string;
  model: string;
  unpriced_n: string;
  unpriced_tokens_in: string;
  unpriced_tokens_out: string;
  unpriced_traces: string[];
  no_usage_n: string;
  no_usage_cost: string;
  no_usage_traces: string[];
  failed_n: string;
  failed_cost: string;
  failed_tokens_in: string;
  failed_tokens_out: string;
  failed_traces: string[];
}

/** A tag's share of a month: nano-dollars and tokens split evenly among each execution's distinct tags. */
export interface TagShareRow {
  tag: string;
  cost_nanos: string;
  tokens_in: string;
  tokens_out: string;
  executions: string;
  shared_executions: string;
  unpriced: string;
}

const RANGE = `project_id = {p:String} AND started_at >= toDateTime64({s:String}, 3, 'UTC') AND started_at < toDateTime64({e:String}, 3, 'UTC')
  AND ({provider:String} = '' OR provider = {provider:String})`;

/** Examples named per cause and cell: enough to open them, never a list as long as a day. */
const EXAMPLES = 5;

/** x's share for the i-th of k values: x / k truncated, and one unit more (in x's direction) for the first |x mod k|. */
const share = (x: string) => `(intDiv(${x}, k) + if(i <= abs(${x} % k), if(${x} < 0, -1, 1), 0)) * sg`;

export function createExecutionFinance(ch: ClickHouseStore) {
  const params = (r: FinanceRange) => ({ p: r.projectId, s: r.start, e: r.end, provider: r.provider ?? '' });
  return {
    /**
     * Per UTC day, provider and model: the live executions priced at nothing (unpriced), without
     * usage (no token in nor out) and failed, with their counts, our cost and tokens of them, and
     * a few trace ids of each. Cells without any are absent. Only rows of those kinds are grouped
     * by trace (to net a correction out): a scan of the month's light columns.
     */
    async explanations(r: FinanceRange): Promise<ExplanationRow[]> {
      return ch.query<ExplanationRow>(
        `SELECT toString(d) AS day, provider, model,
           toString(sum(unpriced)) AS unpriced_n, toString(sumIf(tin, unpriced > 0)) AS unpriced_tokens_in,
           toString(sumIf(tout, unpriced > 0)) AS unpriced_tokens_out, arraySort(groupArrayIf(${EXAMPLES})(trace_id, unpriced > 0)) AS unpriced_traces,
           toString(sum(no_usage)) AS no_usage_n, toString(sumIf(cost, no_usage > 0)) AS no_usage_cost,
           arraySort(groupArrayIf(${EXAMPLES})(trace_id, no_usage > 0)) AS no_usage_traces,
           toString(sum(failed)) AS failed_n, toString(sumIf(cost, failed > 0)) AS failed_cost,
           toString(sumIf(tin, failed > 0)) AS failed_tokens_in, toString(sumIf(tout, failed > 0)) AS failed_tokens_out,
           arraySort(groupArrayIf(${EXAMPLES})(trace_id, failed > 0)) AS failed_traces
         FROM (
           SELECT toDate(started_at, 'UTC') AS d, provider, model, trace_id,
             sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS unpriced,
             sum(if(tokens_in = 0 AND tokens_out = 0, toInt64(sign), 0)) AS no_usage,
             sum(if(status = 'error', toInt64(sign), 0)) AS failed,
             sum(toDecimal128(cost_usd, 9) * sign) AS cost, sum(toInt64(tokens_in) * sign) AS tin, sum(toInt64(tokens_out) * sign) AS tout
           FROM executions
           WHERE ${RANGE} AND (cost_source = 'unpriced' OR (tokens_in = 0 AND tokens_out = 0) OR status = 'error')
           GROUP BY d, provider, model, trace_id
           HAVING unpriced > 0 OR no_usage > 0 OR failed > 0)
         GROUP BY d, provider, model
         ORDER BY d, provider, model`,
        params(r),
        'finance.reconciliation.explanations',
      );
    },

    /**
     * Spend by tag with each execution split evenly among its distinct tags (sorted; the first
     * |remainder| tags take one nano-dollar, or token, more), untagged ones under '': the tags'
     * costs and tokens add up to the range's exactly. `executions` counts an execution under each
     * of its tags; `shared_executions` those of them carrying several.
     */
    async tagShares(r: FinanceRange): Promise<TagShareRow[]> {
      return ch.query<TagShareRow>(
        `SELECT tag, toString(sum(${share('c')})) AS cost_nanos, toString(sum(${share('ti')})) AS tokens_in,
           toString(sum(${share('tout')})) AS tokens_out, toString(sum(sg)) AS executions,
           toString(sum(if(k > 1, sg, 0))) AS shared_executions, toString(sum(if(unpriced, sg, 0))) AS unpriced
         FROM (
           SELECT if(empty(tags), [''], arraySort(arrayDistinct(tags))) AS ts, toInt128(length(ts)) AS k, toInt128(sign) AS sg,
             toInt128(toDecimal128(cost_usd, 9) * 1000000000) AS c, toInt128(tokens_in) AS ti, toInt128(tokens_out) AS tout,
             cost_source = 'unpriced' AS unpriced
           FROM executions WHERE ${RANGE})
         ARRAY JOIN ts AS tag, arrayEnumerate(ts) AS i
         GROUP BY tag
         HAVING sum(sg) != 0 OR sum(${share('c')}) != 0
         ORDER BY sum(${share('c')}) DESC, tag`,
        params(r),
        'finance.statement.tags',
      );
    },
  };
}

export type ExecutionFinance = ReturnType<typeof createExecutionFinance>;
