// The executions' side of a version comparison (src/quality/compare.ts): per group of one
// prompt's executions, count, exact cost, cost spread and latency.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { promptGroupParams, type PromptGroupBy, type PromptGroupRead } from '../reads/prompt-groups.ts';

/**
 * The live executions of a prompt group read (`{cmp_*}`, reads/prompt-groups.ts), each with its
 * group (the prompt's version it used, as text, or the reference it was fetched by):
 * `trace_id, grp, cost_usd, latency_ms, tokens_in, tokens_out`.
 */
function promptGroupRowsSql(by: PromptGroupBy): string {
  const key =
    by === 'version'
      ? 'toString(arrayFirst((x, id) -> id = {cmp_prompt:String}, `tu.version`, `tu.prompt_id`))'
      : 'arrayFirst((x, id) -> id = {cmp_prompt:String}, `tu.version_ref`, `tu.prompt_id`)';
  const window = `project_id = {cmp_p:String}
        AND started_at >= toDateTime64({cmp_start:String}, 3, 'UTC') AND started_at < toDateTime64({cmp_end:String}, 3, 'UTC')`;
  // The live rows without FINAL (which merges every part of the window, most of this read's
  // time): a row is live when no cancel row repeats its trace and version. Cancel rows are few
  // (merges collapse them with their rows), so their keys are read first, sign alone.
  return `SELECT trace_id, grp, cost_usd, latency_ms, tokens_in, tokens_out FROM (
      SELECT trace_id, cost_usd, latency_ms, tokens_in, tokens_out, ${key} AS grp
      FROM executions
      WHERE ${window} AND has(\`tu.prompt_id\`, {cmp_prompt:String}) AND sign = 1
        AND (trace_id, version) NOT IN (SELECT trace_id, version FROM executions PREWHERE ${window} AND sign = -1))
    WHERE grp IN {cmp_groups:Array(String)}`;
}

export interface PromptGroupCosts {
  grp: string;
  executions: string;
  cost: string;
  cost_var: number | null;
  cost_q: number[];
  latency_q: number[];
  tokens_in: string;
  tokens_out: string;
}

/** Per group of a prompt's executions: count, exact total cost, the variance and quantiles of cost per execution, latency quantiles, tokens. */
export function createPromptGroupCosts(ch: ClickHouseStore) {
  return (read: PromptGroupRead): Promise<PromptGroupCosts[]> =>
    ch.query<PromptGroupCosts>(
      `SELECT grp, toString(count()) AS executions, toString(sum(cost_usd)) AS cost, varSamp(toFloat64(cost_usd)) AS cost_var,
       quantilesExactInclusive(0.5, 0.95)(toFloat64(cost_usd)) AS cost_q, quantilesExactInclusive(0.5, 0.95)(toFloat64(latency_ms)) AS latency_q,
       toString(sum(tokens_in)) AS tokens_in, toString(sum(tokens_out)) AS tokens_out
     FROM (${promptGroupRowsSql(read.by)}) GROUP BY grp`,
      promptGroupParams(read),
      'quality.compare.costs',
    );
}
