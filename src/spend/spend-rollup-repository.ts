// The SQL of the spend rollups (schema/clickhouse/006: spend_hourly, spend_hourly_tags,
// spend_hourly_prompts) and of the one breakdown they cannot serve, read from executions. Every
// read carries the project predicate and bound parameters; sums leave the engine as text.
import type { ClickHouseStore } from '../stores/clickhouse.ts';

/** Where a breakdown is read: a rollup, or (metadata, tag × prompt) the signed executions rows. */
export type BreakdownSource = 'spend_hourly' | 'spend_hourly_tags' | 'spend_hourly_prompts' | 'executions';

/** A grouping column of the source: a scalar column, `tag`, `prompt_id` or a metadata key. */
export type GroupColumn =
  | { kind: 'column'; column: 'provider' | 'model' | 'agent_id' | 'user_id' | 'session_id' | 'tag' | 'prompt_id' }
  | { kind: 'metadata'; key: string }
  | { kind: 'time'; bucket: 'hour' | 'day' | 'week' | 'month' };

export interface BreakdownFilter {
  /** column → any of these values */
  anyOf: Partial<Record<'provider' | 'model' | 'agent_id' | 'user_id' | 'session_id' | 'tag' | 'prompt_id', string[]>>;
  /** metadata key → value */
  metadata: Record<string, string>;
}

export interface BreakdownRead {
  projectId: string;
  source: BreakdownSource;
  /** [start, end) on whole UTC hours, as 'YYYY-MM-DD hh:00:00' */
  start: string;
  end: string;
  groups: GroupColumn[];
  filter: BreakdownFilter;
  limit: number;
}

export interface BreakdownRow {
  /** g0, g1, ...: the group values in `groups` order (time buckets as epoch seconds) */
  [group: string]: string | number;
  cost_t: string;
  executions_t: string;
  tokens_in_t: string;
  tokens_out_t: string;
  unpriced_t: string;
  /** Over every group (not only the rows returned): count, and sums. */
  groups_t: string;
  all_cost_t: string;
  all_executions_t: string;
  all_tokens_in_t: string;
  all_tokens_out_t: string;
  all_unpriced_t: string;
}

const BUCKET = {
  hour: (t: string) => t,
  day: (t: string) => `toStartOfDay(${t}, 'UTC')`,
  week: (t: string) => `toDateTime(toMonday(${t}, 'UTC'), 'UTC')`,
  month: (t: string) => `toDateTime(toStartOfMonth(${t}, 'UTC'), 'UTC')`,
} as const;

/** Measures of each source: the rollups hold signed sums; executions rows are summed by sign. */
const MEASURES: Record<'rollup' | 'executions', string> = {
  rollup: `sum(cost_usd) AS c, sum(executions) AS n, sum(tokens_in) AS ti, sum(tokens_out) AS tout, sum(unpriced_executions) AS u`,
  executions: `sum(toDecimal128(cost_usd, 9) * sign) AS c, sum(toInt64(sign)) AS n, sum(toInt64(tokens_in) * sign) AS ti,
    sum(toInt64(tokens_out) * sign) AS tout, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u`,
};

function sql(r: BreakdownRead): { text: string; params: Record<string, unknown> } {
  const onExecutions = r.source === 'executions';
  const time = onExecutions ? "toStartOfHour(started_at, 'UTC')" : 'hour';
  const params: Record<string, unknown> = { p: r.projectId, s: r.start, e: r.end, limit: r.limit };
  const where = ['project_id = {p:String}', `${time} >= toDateTime({s:String}, 'UTC')`, `${time} < toDateTime({e:String}, 'UTC')`];
  const joins: string[] = [];
  const grouped = new Set(r.groups.flatMap((g) => (g.kind === 'column' ? [g.column] : [])));
  for (const [column, values] of Object.entries(r.filter.anyOf)) {
    if (!values?.length) continue;
    params[`f_${column}`] = values;
    // On executions an array dimension is a filter on the array unless it is also grouped (then
    // the joined value is filtered, like on its rollup).
    if (onExecutions && column === 'tag' && !grouped.has('tag')) where.push(`hasAny(tags, {f_tag:Array(String)})`);
    else if (onExecutions && column === 'prompt_id' && !grouped.has('prompt_id'))
      where.push('hasAny(`tu.prompt_id`, {f_prompt_id:Array(String)})');
    else where.push(`${column} IN {f_${column}:Array(String)}`);
  }
  Object.entries(r.filter.metadata).forEach(([key, value], i) => {
    params[`mk${i}`] = key;
    params[`mv${i}`] = value;
    where.push(`metadata[{mk${i}:String}] = {mv${i}:String}`);
  });
  if (onExecutions && grouped.has('tag')) joins.push("ARRAY JOIN if(empty(tags), [''], arrayDistinct(tags)) AS tag");
  if (onExecutions && grouped.has('prompt_id'))
    joins.push("ARRAY JOIN if(empty(`tu.prompt_id`), [''], arrayDistinct(`tu.prompt_id`)) AS prompt_id");
  const keys = r.groups.map((g, i) => {
    if (g.kind === 'time') return `toUnixTimestamp(${BUCKET[g.bucket](time)}) AS g${i}`;
    if (g.kind === 'metadata') {
      params[`gk${i}`] = g.key;
      return `metadata[{gk${i}:String}] AS g${i}`;
    }
    return `toString(${g.column}) AS g${i}`;
  });
  const names = r.groups.map((_, i) => `g${i}`);
  const text = `SELECT ${[
    ...names,
    'toString(c) AS cost_t',
    'toString(n) AS executions_t',
    'toString(ti) AS tokens_in_t',
    'toString(tout) AS tokens_out_t',
    'toString(u) AS unpriced_t',
    'toString(count() OVER ()) AS groups_t',
    'toString(sum(c) OVER ()) AS all_cost_t',
    'toString(sum(n) OVER ()) AS all_executions_t',
    'toString(sum(ti) OVER ()) AS all_tokens_in_t',
    'toString(sum(tout) OVER ()) AS all_tokens_out_t',
    'toString(sum(u) OVER ()) AS all_unpriced_t',
  ].join(', ')}
    FROM (
      SELECT ${[...keys, MEASURES[onExecutions ? 'executions' : 'rollup']].join(', ')}
      FROM ${r.source} ${joins.join(' ')}
      WHERE ${where.join(' AND ')}
      ${names.length ? `GROUP BY ${names.join(', ')}` : ''}
      HAVING n != 0 OR c != 0 OR ti != 0 OR tout != 0
    )
    ORDER BY c DESC, n DESC${names.length ? `, ${names.join(', ')}` : ''}
    LIMIT {limit:UInt32}`;
  return { text, params };
}

const ROLLUPS = [
  { table: 'spend_hourly', key: undefined },
  { table: 'spend_hourly_tags', key: 'tag' },
  { table: 'spend_hourly_prompts', key: 'prompt_id' },
] as const;

/** Fills one rollup from every stored execution (src/executions/execution-repository.ts, aggregateIntoRollup). */
export type RollupFiller = (table: string, key: 'tag' | 'prompt_id' | undefined) => Promise<void>;

export function createSpendRollupRepository(ch: ClickHouseStore) {
  return {
    /**
     * Copies executions stored before the rollups' views existed into each rollup that is still
     * empty while executions are not (the first boot after migration 006, before this node
     * ingests: anything ingested since would have made the rollup non-empty). Returns the tables filled.
     */
    async backfillIfEmpty(executionsStored: () => Promise<boolean>, fill: RollupFiller): Promise<string[]> {
      if (!(await executionsStored())) return [];
      const filled: string[] = [];
      for (const r of ROLLUPS) {
        const [rows] = await ch.query<{ n: string }>(
          `SELECT toString(count()) AS n FROM (SELECT 1 FROM ${r.table} LIMIT 1)`,
          {},
          'spend.backfill.check',
        );
        if (Number(rows?.n ?? 0) > 0) continue;
        await fill(r.table, r.key);
        filled.push(r.table);
      }
      return filled;
    },
    /** The `limit` costliest groups, with the count and sums of every group alongside. */
    async breakdown(r: BreakdownRead): Promise<BreakdownRow[]> {
      const q = sql(r);
      return ch.query<BreakdownRow>(q.text, q.params, `spend.breakdown.${r.source}`);
    },
    /**
     * Spend (exact text) over [from, to) ('YYYY-MM-DD hh:mm:ss', UTC) of each of these values of a
     * budget scope kind, in one read (values without spend are absent); `project`: the key ''.
     */
    async scopeSpends(
      projectId: string,
      kind: 'project' | 'agent' | 'user' | 'tag',
      values: string[],
      from: string,
      to: string,
    ): Promise<Map<string, string>> {
      const [table, column] = (
        {
          project: ['spend_hourly', undefined],
          agent: ['spend_hourly', 'agent_id'],
          user: ['spend_hourly', 'user_id'],
          tag: ['spend_hourly_tags', 'tag'],
        } as const
      )[kind];
      const rows = await ch.query<{ v: string; cost_t: string }>(
        `SELECT ${column ? `toString(${column})` : "''"} AS v, toString(sum(cost_usd)) AS cost_t FROM ${table}
         WHERE project_id = {p:String} AND hour >= toDateTime({from:String}, 'UTC') AND hour < toDateTime({to:String}, 'UTC')${column ? ` AND ${column} IN {vs:Array(String)}` : ''}
         GROUP BY v`,
        { p: projectId, from, to, vs: values },
        'spend.scope_spend',
      );
      return new Map(rows.map((r) => [r.v, r.cost_t]));
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
