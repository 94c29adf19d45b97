// The spend rollups `daily_spend` (day × provider × model) and `daily_prompt_spend` (day × prompt),
// filled by materialized views from executions: every SQL statement that reads them. Rows of a
// SummingMergeTree are summed at read (no FINAL needed); decimal sums leave ClickHouse as text.
import type { ClickHouseStore } from '../stores/clickhouse.ts';

export interface SpendCell {
  date_t: string;
  provider: string;
  model: string;
  cost_t: string;
  executions_t: string;
  unpriced_t: string;
  tokens_in_t: string;
  tokens_out_t: string;
}

export interface PromptSpend {
  prompt_id: string;
  cost_t: string;
  executions_t: string;
}

/** Days as YYYY-MM-DD, both ends included. */
export interface DayRange {
  first: string;
  last: string;
}

const IN_RANGE = 'project_id = {p:String} AND day >= toDate({s:String}) AND day <= toDate({e:String})';

export function createDailySpendRepository(ch: ClickHouseStore) {
  const params = (projectId: string, r: DayRange) => ({ p: projectId, s: r.first, e: r.last });
  return {
    /** One row per day × provider × model with spend in the range (small: the stats read it once). */
    async cells(projectId: string, range: DayRange): Promise<SpendCell[]> {
      return ch.query<SpendCell>(
        `SELECT toString(day) AS date_t, provider, model, toString(sum(cost_usd)) AS cost_t, toString(sum(executions)) AS executions_t,
           toString(sum(unpriced_executions)) AS unpriced_t, toString(sum(tokens_in)) AS tokens_in_t,
           toString(sum(tokens_out)) AS tokens_out_t
         FROM daily_spend WHERE ${IN_RANGE} GROUP BY day, provider, model`,
        params(projectId, range),
        'spend.stats.daily',
      );
    },

    /** The prompts that cost most in the range (then the most executions, then by id). */
    async topPrompts(projectId: string, range: DayRange, limit: number): Promise<PromptSpend[]> {
      return ch.query<PromptSpend>(
        `SELECT prompt_id, toString(sum(cost_usd)) AS cost_t, toString(sum(executions)) AS executions_t
         FROM daily_prompt_spend WHERE ${IN_RANGE} GROUP BY prompt_id
         HAVING sum(executions) != 0 OR sum(cost_usd) != 0
         ORDER BY sum(cost_usd) DESC, sum(executions) DESC, prompt_id LIMIT {limit:UInt32}`,
        { ...params(projectId, range), limit },
        'spend.stats.top_prompts',
      );
    },

    /** The project's spend from day `from` (included) to day `until` (excluded), as a decimal string (undefined: none). */
    async spentBetween(projectId: string, from: string, until: string): Promise<string | undefined> {
      const [row] = await ch.query<{ cost: string }>(
        `SELECT toString(sum(cost_usd)) AS cost FROM daily_spend
         WHERE project_id = {p:String} AND day >= toDate({s:String}) AND day < toDate({e:String})`,
        { p: projectId, s: from, e: until },
        'spend.budget.month_to_date',
      );
      return row?.cost;
    },
  };
}

export type DailySpendRepository = ReturnType<typeof createDailySpendRepository>;
