// The SQL of the spend rollups: by grain (schema/clickhouse/018 and 021, SPEND_ROLLUPS) and hourly
// (006: spend_hourly; 019 and 021 retired those by tag, API key and prompt). The breakdowns they
// cannot serve are read from executions by the execution repository, in the same shape
// (src/reads/breakdown-sql.ts). Every read carries the project predicate and bound parameters;
// sums leave the engine as text.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import type { ScopeKind } from './budget-repository.ts';
import { SPEND_ROLLUPS, type SpendRollup } from '../reads/spend-dimensions.ts';
import { coverWindow, grainsFor } from '../reads/spend-grains.ts';
import { fromClickHouseTime } from '../time.ts';
import {
  breakdownSql,
  grainedBreakdownSql,
  type BreakdownRead,
  type BreakdownRow,
  type BreakdownSourceSql,
} from '../reads/breakdown-sql.ts';

/** The rollups' part of a breakdown (sums already signed); the executions' part is in executions/execution-breakdown-repository.ts. */
function rollupSql(table: string): BreakdownSourceSql {
  return {
    from: `FROM ${table}`,
    hour: 'hour',
    measures: `sum(cost_usd) AS c, sum(executions) AS n, sum(tokens_in) AS ti, sum(tokens_out) AS tout, sum(unpriced_executions) AS u`,
  };
}

/** Fills the hourly rollup from every stored execution (src/executions/execution-breakdown-repository.ts, aggregateIntoHourly). */
export type HourlyFiller = (table: string) => Promise<void>;
/** Fills one rollup by grain from every stored execution (aggregateIntoGrains). */
export type GrainsFiller = (rollup: SpendRollup) => Promise<void>;

export function createSpendRollupRepository(ch: ClickHouseStore) {
  return {
    /**
     * Copies executions stored before the rollups' views existed into each rollup (each family of
     * a table of several) that holds no row at its finest grain while executions are stored (the
     * first boot after migration 006, 018 or 021, before this node ingests: anything ingested
     * since would have written one; the days 022 adds from the daily rollups are not of that
     * grain). Returns the rollups filled.
     */
    async backfillIfEmpty(executionsStored: () => Promise<boolean>, fillHourly: HourlyFiller, fillGrains: GrainsFiller): Promise<string[]> {
      if (!(await executionsStored())) return [];
      const empty = async (table: string, where: string, params: Record<string, unknown> = {}) => {
        const [rows] = await ch.query<{ n: string }>(
          `SELECT toString(count()) AS n FROM (SELECT 1 FROM ${table} ${where} LIMIT 1)`,
          params,
          'spend.backfill.check',
        );
        return Number(rows?.n ?? 0) === 0;
      };
      const filled: string[] = [];
      if (await empty('spend_hourly', '')) {
        await fillHourly('spend_hourly');
        filled.push('spend_hourly');
      }
      for (const r of SPEND_ROLLUPS) {
        // Without metadata stored, the family of metadata stays empty: its migration (025) filled it.
        if ('metadata' in r) continue;
        const attribute = 'attribute' in r ? r.attribute : undefined;
        const finest = { grain: r.grains[r.grains.length - 1]!, ...(attribute ? { attribute } : {}) };
        if (!(await empty(r.table, `WHERE grain = {grain:String}${attribute ? ' AND attribute = {attribute:String}' : ''}`, finest)))
          continue;
        await fillGrains(r);
        filled.push(attribute ? `${r.table} (${attribute})` : r.table);
      }
      return filled;
    },
    /** The `limit` costliest groups, with the count and sums of every group alongside. */
    async breakdown(r: BreakdownRead): Promise<BreakdownRow[]> {
      if (r.grains) {
        const q = grainedBreakdownSql(r);
        return ch.query<BreakdownRow>(q.text, q.params, `spend.breakdown.${r.grains.rollup.table}`);
      }
      if (r.source === 'executions') throw new Error('a breakdown on executions is read by the execution repository');
      const q = breakdownSql(r, rollupSql(r.source));
      return ch.query<BreakdownRow>(q.text, q.params, `spend.breakdown.${r.source}`);
    },
    /**
     * Spend (exact text) over [from, to) ('YYYY-MM-DD hh:mm:ss', UTC) of each of these values of a
     * budget scope kind, in one read (values without spend are absent); `project`: the key ''.
     */
    async scopeSpends(projectId: string, kind: ScopeKind, values: string[], from: string, to: string): Promise<Map<string, string>> {
      const column = ({ project: undefined, agent: 'agent_id', user: 'user_id', tag: 'tag', api_key: 'api_key_id' } as const)[kind];
      // The smallest rollup by grain holding the scope's column, over a cover of the period.
      const rollup = SPEND_ROLLUPS.find((r) => !column || (r.columns as readonly string[]).includes(column))!;
      const grains = grainsFor(undefined, rollup.grains);
      const q = grainedBreakdownSql({
        projectId,
        source: 'spend_hourly',
        start: from,
        end: to,
        groups: column ? [{ kind: 'column', column }] : [],
        filter: { anyOf: column ? { [column]: values } : {}, metadata: {} },
        limit: Math.max(values.length, 1),
        grains: { rollup, ranges: coverWindow(Date.parse(fromClickHouseTime(from)), Date.parse(fromClickHouseTime(to)), grains) },
      });
      const rows = await ch.query<BreakdownRow>(q.text, q.params, 'spend.scope_spend');
      return new Map(rows.map((r) => [column ? String(r.g0) : '', r.cost_t]));
    },
    /** UTC days ('YYYY-MM-DD') of [from, to] holding live executions of the project. */
    async daysWithExecutions(projectId: string, from: string, to: string): Promise<string[]> {
      const rows = await ch.query<{ day: string }>(
        `SELECT toString(toDate(hour, 'UTC')) AS day FROM spend_hourly
         WHERE project_id = {p:String} AND hour >= toDateTime({from:String}, 'UTC') AND hour < toDateTime({to:String}, 'UTC') + INTERVAL 1 DAY
         GROUP BY day HAVING sum(executions) != 0 ORDER BY day`,
        { p: projectId, from, to },
        'spend.days_with_executions',
      );
      return rows.map((r) => r.day);
    },
  };
}

export type SpendRollupRepository = ReturnType<typeof createSpendRollupRepository>;
