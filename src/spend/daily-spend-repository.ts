// Spend by day: the day grain of the rollups by grain (schema/clickhouse/018, 021), by provider and
// model (`spend_by_dims`) and by prompt (`spend_by_attribute`, attribute 'prompt'), which replaced
// the daily rollups of 001 (022). Rows of a SummingMergeTree are summed at read (no FINAL needed);
// decimal sums leave ClickHouse as text.
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

const IN_RANGE = `project_id = {p:String} AND grain = 'day'
  AND bucket >= toDateTime(toDate({s:String}), 'UTC') AND bucket <= toDateTime(toDate({e:String}), 'UTC')`;

export function createDailySpendRepository(ch: ClickHouseStore) {
  const params = (projectId: string, r: DayRange) => ({ p: projectId, s: r.first, e: r.last });
  return {
    /** One row per day × provider × model with spend in the range (small: the stats read it once). */
    async cells(projectId: string, range: DayRange): Promise<SpendCell[]> {
      return ch.query<SpendCell>(
        `SELECT toString(toDate(bucket, 'UTC')) AS date_t, provider, model, toString(sum(cost_usd)) AS cost_t,
           toString(sum(executions)) AS executions_t, toString(sum(unpriced_executions)) AS unpriced_t,
           toString(sum(tokens_in)) AS tokens_in_t, toString(sum(tokens_out)) AS tokens_out_t
         FROM spend_by_dims WHERE ${IN_RANGE} GROUP BY bucket, provider, model`,
        params(projectId, range),
        'spend.stats.daily',
      );
    },

    /** The prompts that cost most in the range (then the most executions, then by id). */
    async topPrompts(projectId: string, range: DayRange, limit: number): Promise<PromptSpend[]> {
      return ch.query<PromptSpend>(
        `SELECT value AS prompt_id, toString(sum(cost_usd)) AS cost_t, toString(sum(executions)) AS executions_t
         FROM spend_by_attribute WHERE attribute = 'prompt' AND ${IN_RANGE} AND value != '' GROUP BY value
         HAVING sum(executions) != 0 OR sum(cost_usd) != 0
         ORDER BY sum(cost_usd) DESC, sum(executions) DESC, prompt_id LIMIT {limit:UInt32}`,
        { ...params(projectId, range), limit },
        'spend.stats.top_prompts',
      );
    },

    /** The project's spend from day `from` (included) to day `until` (excluded), as a decimal string (undefined: none). */
    async spentBetween(projectId: string, from: string, until: string): Promise<string | undefined> {
      const [row] = await ch.query<{ cost: string }>(
        `SELECT toString(sum(cost_usd)) AS cost FROM spend_by_dims
         WHERE project_id = {p:String} AND grain = 'day'
           AND bucket >= toDateTime(toDate({s:String}), 'UTC') AND bucket < toDateTime(toDate({e:String}), 'UTC')`,
        { p: projectId, s: from, e: until },
        'spend.budget.month_to_date',
      );
      return row?.cost;
    },
  };
}

export type DailySpendRepository = ReturnType<typeof createDailySpendRepository>;
