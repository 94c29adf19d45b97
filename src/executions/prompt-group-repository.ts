// The executions' side of a version comparison (src/quality/compare.ts): per group of one
// prompt's executions, count, exact cost, cost spread and latency. Read from the prompt's days
// (`prompt_version_days`, schema/clickhouse/023: the cost of a comparison does not grow with the
// prompt's volume), or, for groups small enough, from the prompt's template usages themselves:
// exact quantiles, and every correction applied to them.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { promptGroupParams, type PromptGroupBy, type PromptGroupRead } from '../reads/prompt-groups.ts';

/**
 * Groups of at most this many executions together are read from their executions: exact
 * quantiles (the days' sketches hold every value only up to 8,192 per group, and keep a corrected
 * execution's old values), at a cost that grows with the groups (about 0.1 s per 100,000).
 */
export const EXACT_COMPARISON_MAX = 100_000;

const WINDOW = `project_id = {cmp_p:String} AND prompt_id = {cmp_prompt:String}
  AND started_at >= toDateTime64({cmp_start:String}, 3, 'UTC') AND started_at < toDateTime64({cmp_end:String}, 3, 'UTC')`;
const DAYS = `project_id = {cmp_p:String} AND prompt_id = {cmp_prompt:String}
  AND day >= toDate(toDateTime64({cmp_start:String}, 3, 'UTC'), 'UTC') AND day < toDate(toDateTime64({cmp_end:String}, 3, 'UTC'), 'UTC')`;

/** A usage's (or a day row's) group: the prompt's version as text, or the reference it was fetched by. */
const groupOf = (by: PromptGroupBy) => (by === 'version' ? 'toString(prompt_version)' : 'version_ref');

/**
 * The live executions of a prompt group read (`{cmp_*}`, reads/prompt-groups.ts) from their
 * template usages, each once with the group of its first use of the prompt:
 * `grp, cost_usd, latency_ms, tokens_in, tokens_out`. Live rows without FINAL: a row is live when
 * no cancel row repeats its trace and version (cancel rows are few: their keys are read first).
 */
function promptGroupRowsSql(by: PromptGroupBy): string {
  return `SELECT grp, cost_usd, latency_ms, tokens_in, tokens_out FROM (
      SELECT argMin(${groupOf(by)}, usage_index) AS grp, any(cost_usd) AS cost_usd, any(latency_ms) AS latency_ms,
        any(tokens_in) AS tokens_in, any(tokens_out) AS tokens_out
      FROM template_usages
      WHERE ${WINDOW} AND sign = 1
        AND (trace_id, version) NOT IN (SELECT trace_id, version FROM template_usages PREWHERE ${WINDOW} AND sign = -1)
      GROUP BY trace_id, version)
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

/** Per group: its rows, and whether its quantiles are exact or estimated from the days' sketches. */
export interface PromptGroupCostRead {
  rows: PromptGroupCosts[];
  quantiles: 'exact' | 'estimated';
}

/** Per group of a prompt's executions: count, exact total cost, the variance and quantiles of cost per execution, latency quantiles, tokens. */
export function createPromptGroupCosts(ch: ClickHouseStore) {
  return async (read: PromptGroupRead): Promise<PromptGroupCostRead> => {
    const params = promptGroupParams(read);
    const days = await ch.query<PromptGroupCosts>(
      `SELECT grp, toString(sum(n)) AS executions, toString(sum(c)) AS cost,
         if(sum(n) > 1, greatest(0, sum(c2) - pow(toFloat64(sum(c)), 2) / sum(n)) / (sum(n) - 1), NULL) AS cost_var,
         quantilesMerge(0.5, 0.95)(cq) AS cost_q, quantilesMerge(0.5, 0.95)(lq) AS latency_q,
         toString(sum(ti)) AS tokens_in, toString(sum(tout)) AS tokens_out
       FROM (SELECT ${groupOf(read.by)} AS grp, executions AS n, cost_usd AS c, cost_squares AS c2, tokens_in AS ti, tokens_out AS tout,
               cost_quantiles AS cq, latency_quantiles AS lq
             FROM prompt_version_days WHERE ${DAYS})
       WHERE grp IN {cmp_groups:Array(String)}
       GROUP BY grp
       HAVING sum(n) != 0`,
      params,
      'quality.compare.days',
    );
    if (days.reduce((n, r) => n + Number(r.executions), 0) > EXACT_COMPARISON_MAX) return { rows: days, quantiles: 'estimated' };
    const rows = await ch.query<PromptGroupCosts>(
      `SELECT grp, toString(count()) AS executions, toString(sum(cost_usd)) AS cost, varSamp(toFloat64(cost_usd)) AS cost_var,
       quantilesExactInclusive(0.5, 0.95)(toFloat64(cost_usd)) AS cost_q, quantilesExactInclusive(0.5, 0.95)(toFloat64(latency_ms)) AS latency_q,
       toString(sum(tokens_in)) AS tokens_in, toString(sum(tokens_out)) AS tokens_out
     FROM (${promptGroupRowsSql(read.by)}) GROUP BY grp`,
      params,
      'quality.compare.costs',
    );
    return { rows, quantiles: 'exact' };
  };
}

/**
 * Copies the executions stored before `prompt_version_days` existed into it when it is empty while
 * executions with prompts are stored (the first boot after migration 023, before this node
 * ingests), as its view sums them. Returns whether it did.
 */
export async function backfillPromptVersionDaysIfEmpty(ch: ClickHouseStore): Promise<boolean> {
  const [state] = await ch.query<{ days: string; used: string }>(
    `SELECT toString((SELECT count() FROM (SELECT 1 FROM prompt_version_days LIMIT 1))) AS days,
       toString((SELECT count() FROM (SELECT 1 FROM template_usages LIMIT 1))) AS used`,
    {},
    'quality.compare.backfill.check',
  );
  if (Number(state?.days ?? 0) > 0 || Number(state?.used ?? 0) === 0) return false;
  await ch.command(
    `INSERT INTO prompt_version_days
     SELECT project_id, u.1 AS prompt_id, day, u.2 AS prompt_version, u.3 AS version_ref, sum(toInt64(sign)), sum(cost * sign),
       sum(cost_f * cost_f * sign), sum(toInt64(ti) * sign), sum(toInt64(tout) * sign),
       quantilesStateIf(0.5, 0.95)(cost_f, sign = 1), quantilesStateIf(0.5, 0.95)(latency, sign = 1)
     FROM (
       SELECT project_id, toDate(started_at, 'UTC') AS day, sign, toDecimal128(cost_usd, 9) AS cost, toFloat64(cost_usd) AS cost_f,
         tokens_in AS ti, tokens_out AS tout, latency_ms AS latency,
         arrayFilter((t, i) -> indexOf(\`tu.prompt_id\`, t.1) = i, arrayZip(\`tu.prompt_id\`, \`tu.version\`, \`tu.version_ref\`),
           arrayEnumerate(\`tu.prompt_id\`)) AS firsts
       FROM executions)
     ARRAY JOIN firsts AS u
     GROUP BY project_id, prompt_id, day, prompt_version, version_ref`,
    {},
    { max_partitions_per_insert_block: '10000' },
  );
  return true;
}
