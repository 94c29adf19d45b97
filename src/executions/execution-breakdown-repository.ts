// The spend the executions ledger answers itself: breakdowns no rollup serves, and the rows that
// fill a rollup (schema/clickhouse/006, 018, 021) from the executions stored before it existed.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import {
  breakdownKeysSql,
  breakdownSql,
  EXECUTIONS_ARRAYS,
  type BreakdownRead,
  type BreakdownRow,
  type BreakdownSourceSql,
} from '../reads/breakdown-sql.ts';
import { SPEND_DIMENSIONS, type SpendRollup } from '../reads/spend-dimensions.ts';

/** The executions' part of a spend breakdown: the ledger's rows summed by sign, arrays joined or filtered in place. */
const EXECUTIONS_BREAKDOWN: BreakdownSourceSql = {
  from: 'FROM executions',
  hour: "toStartOfHour(started_at, 'UTC')",
  measures: `sum(toDecimal128(cost_usd, 9) * sign) AS c, sum(toInt64(sign)) AS n, sum(toInt64(tokens_in) * sign) AS ti,
    sum(toInt64(tokens_out) * sign) AS tout, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u`,
  ...EXECUTIONS_ARRAYS,
};

/**
 * Spend breakdowns no rollup serves (metadata, tag × prompt, several tags), read from the executions
 * ledger; and the backfill of the rollups from the executions stored before them.
 */
export function createExecutionBreakdowns(ch: ClickHouseStore) {
  return {
    /** Whether any execution row is stored (every project). */
    async anyStored(): Promise<boolean> {
      const [r] = await ch.query<{ n: string }>(
        'SELECT toString(count()) AS n FROM (SELECT 1 FROM executions LIMIT 1)',
        {},
        'executions.any',
      );
      return Number(r?.n ?? 0) > 0;
    },

    /**
     * Sums every stored execution into the hourly rollup `table` (schema/clickhouse/006), as its
     * view does: signed sums per project, hour and dimensions.
     */
    async aggregateIntoHourly(table: string): Promise<void> {
      await ch.command(
        `INSERT INTO ${table} (project_id, hour, provider, model, agent_id, user_id, session_id, cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
         SELECT project_id, toStartOfHour(started_at, 'UTC') AS hour, provider, model, agent_id, user_id, session_id,
           sum(toDecimal128(cost_usd, 9) * sign), sum(toInt64(tokens_in) * sign), sum(toInt64(tokens_out) * sign), sum(toInt64(sign)),
           sum(if(cost_source = 'unpriced', toInt64(sign), 0))
         FROM executions
         GROUP BY project_id, hour, provider, model, agent_id, user_id, session_id`,
        {},
        { max_partitions_per_insert_block: '10000' },
      );
    },

    /**
     * Sums every stored execution into a rollup by grain (schema/clickhouse/018), as its view does:
     * signed sums per project, grain bucket and the family's columns (an array column joined once
     * per distinct value, '' for none), at each grain its table holds.
     */
    async aggregateIntoGrains(rollup: SpendRollup): Promise<void> {
      const joins = SPEND_DIMENSIONS.flatMap((d) =>
        'fromArray' in d && (rollup.columns as readonly string[]).includes(d.column)
          ? [`ARRAY JOIN if(empty(${d.fromArray.array}), [''], arrayDistinct(${d.fromArray.array})) AS ${d.column}`]
          : [],
      );
      const bucket = {
        hour: "toStartOfHour(started_at, 'UTC')",
        day: "toDateTime(toStartOfDay(started_at, 'UTC'), 'UTC')",
        month: "toDateTime(toStartOfMonth(started_at, 'UTC'), 'UTC')",
      };
      const grains = rollup.grains.map((g) => `('${g}', ${bucket[g]})`);
      const columns = rollup.columns.join(', ');
      // A table of several families: this family's rows, its first column stored as `value`.
      const [first, ...rest] = rollup.columns;
      const stored = rollup.attribute ? ['attribute', 'value', ...rest].join(', ') : columns;
      const values = rollup.attribute ? [`{attribute:String}`, first, ...rest].join(', ') : columns;
      await ch.command(
        `INSERT INTO ${rollup.table} (project_id, grain, bucket, ${stored}, cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
         SELECT project_id, g.1 AS grain, g.2 AS bucket, ${values},
           sum(toDecimal128(cost_usd, 9) * sign), sum(toInt64(tokens_in) * sign), sum(toInt64(tokens_out) * sign), sum(toInt64(sign)),
           sum(if(cost_source = 'unpriced', toInt64(sign), 0))
         FROM executions ${joins.join(' ')} ARRAY JOIN [${grains.join(', ')}] AS g
         GROUP BY project_id, grain, bucket, ${columns}`,
        rollup.attribute ? { attribute: rollup.attribute } : {},
        { max_partitions_per_insert_block: '10000' },
      );
    },

    async breakdown(r: BreakdownRead): Promise<BreakdownRow[]> {
      const q = breakdownSql(r, EXECUTIONS_BREAKDOWN);
      return ch.query<BreakdownRow>(q.text, q.params, 'spend.breakdown.executions');
    },
    /** The live executions of a breakdown, each with its group values (`trace_id, g0, ...`): what its scores join. */
    keys: (r: BreakdownRead) => breakdownKeysSql(r, { ...EXECUTIONS_BREAKDOWN, from: 'FROM executions FINAL', live: 'sign = 1' }),
  };
}

export type ExecutionBreakdowns = ReturnType<typeof createExecutionBreakdowns>;
