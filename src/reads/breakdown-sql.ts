// The SQL shape of a spend breakdown: signed sums grouped by dimensions, the costliest first, with
// the count and sums of every group alongside (the `other` row). One shape over two kinds of
// source, each described by its repository: the executions ledger (src/executions/
// executions/execution-breakdown-repository.ts, for what no rollup serves) and the hourly rollups of it
// (src/spend/spend-rollup-repository.ts). Every read carries the project predicate and bound
// parameters; sums leave the engine as text.

import {
  dimensionByColumn,
  SPEND_DIMENSIONS,
  SPEND_ROLLUPS,
  type DimensionColumn,
  type Rollup,
  type SpendRollup,
} from './spend-dimensions.ts';
import type { Grain, GrainRange } from './spend-grains.ts';

export type { DimensionColumn };

/** Where a breakdown is read: a rollup, or (metadata, tag × prompt, a dimension no rollup holds) the signed executions rows. */
export type BreakdownSource = Rollup | 'executions';

/** A grouping column of the source: a scalar column, `tag`, `prompt_id` or a metadata key. */
export type GroupColumn =
  | { kind: 'column'; column: DimensionColumn }
  | { kind: 'metadata'; key: string }
  | { kind: 'time'; bucket: 'hour' | 'day' | 'week' | 'month' };

export interface BreakdownFilter {
  /** column → any of these values */
  anyOf: Partial<Record<DimensionColumn, string[]>>;
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
  /**
   * The spend is read from this rollup by grain over a cover of the window (spend-grains.ts),
   * rather than from `source` hour by hour; `source` still says where the executions' scores are.
   */
  grains?: { rollup: SpendRollup; ranges: GrainRange[] };
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

/** What a source contributes to the shape: its table, hour column, measures and array dimensions. */
export interface BreakdownSourceSql {
  /** `FROM <table>` */
  from: string;
  /** The hour of a row (an expression). */
  hour: string;
  /** `sum(...) AS c, ... AS n, ... AS ti, ... AS tout, ... AS u` */
  measures: string;
  /** The predicate of a filter on an array dimension not grouped (tags or prompts held as arrays), or undefined: `IN`. */
  arrayFilter?(column: DimensionColumn): string | undefined;
  /** The ARRAY JOINs that turn grouped array dimensions into one row per value. */
  arrayJoins?(grouped: ReadonlySet<string>): string[];
  /** `from` already holds only the project's rows of the window that pass the filter. */
  bounded?: boolean;
  /** The column of `from` holding the value of the metadata key grouped (default: read from the map `metadata`). */
  metadata?: string;
}

/** The parts every read of a breakdown shares: its filter, joins and group keys (`names`: g0, g1, ...). */
export function breakdownGroups(r: BreakdownRead, source: BreakdownSourceSql) {
  const time = source.hour;
  const params: Record<string, unknown> = { p: r.projectId, s: r.start, e: r.end, limit: r.limit };
  const grouped = new Set<string>(r.groups.flatMap((g) => (g.kind === 'column' ? [g.column] : [])));
  const where = source.bounded
    ? []
    : [
        'project_id = {p:String}',
        `${time} >= toDateTime({s:String}, 'UTC')`,
        `${time} < toDateTime({e:String}, 'UTC')`,
        ...filterPredicates(r, grouped, source, params),
      ];
  const joins: string[] = [];
  joins.push(...(source.arrayJoins?.(grouped) ?? []));
  const keys = r.groups.map((g, i) => {
    if (g.kind === 'time') return `toUnixTimestamp(${BUCKET[g.bucket](time)}) AS g${i}`;
    if (g.kind === 'metadata') {
      if (source.metadata) return `${source.metadata} AS g${i}`;
      params[`gk${i}`] = g.key;
      return `metadata[{gk${i}:String}] AS g${i}`;
    }
    return `toString(${g.column}) AS g${i}`;
  });
  return { where, joins, keys, names: r.groups.map((_, i) => `g${i}`), params };
}

/** The predicates of a breakdown's filter (binding their values into `params`); `stored`: where the source holds a column. */
function filterPredicates(
  r: BreakdownRead,
  grouped: ReadonlySet<string>,
  source: Pick<BreakdownSourceSql, 'arrayFilter'>,
  params: Record<string, unknown>,
  stored: (column: string) => string = (column) => column,
): string[] {
  const where: string[] = [];
  for (const [column, values] of Object.entries(r.filter.anyOf)) {
    if (!values?.length) continue;
    params[`f_${column}`] = values;
    // An array dimension not grouped is the source's own filter on the array; grouped, the joined
    // value is filtered like any column.
    const onArray =
      dimensionByColumn(column)?.fromArray && !grouped.has(column) ? source.arrayFilter?.(column as DimensionColumn) : undefined;
    where.push(onArray ?? `${stored(column)} IN {f_${column}:Array(String)}`);
  }
  Object.entries(r.filter.metadata).forEach(([key, value], i) => {
    params[`mk${i}`] = key;
    params[`mv${i}`] = value;
    where.push(`metadata[{mk${i}:String}] = {mv${i}:String}`);
  });
  return where;
}

const SIGNED_MEASURES = ['cost_usd', 'tokens_in', 'tokens_out', 'executions', 'unpriced_executions'];

/**
 * A rollup by grain as a read sees it: its table (columns `grain`, `bucket`), the grains it holds,
 * its columns, where its hours are read when it holds none (a rollup with column `hour`,
 * restricted by `hoursWhere`), and, for a table of several families (SpendRollup's `attribute`),
 * which family: its rows with that `attribute`, its first column stored as `value`.
 */
export interface GrainedSource {
  readonly table: string;
  readonly columns: readonly string[];
  readonly grains: readonly Grain[];
  readonly hours?: string;
  readonly hoursWhere?: string;
  readonly attribute?: string;
}

/** The predicates of a cover's ranges of one sign, on the table's own grains and on the hourly rollup its hours are read from. */
function rangeSpans(ranges: readonly GrainRange[], sign: 1 | -1, hoursHeld: boolean, params: Record<string, unknown>) {
  const own: string[] = [];
  const hours: string[] = [];
  ranges.forEach((g, i) => {
    if (g.sign !== sign) return;
    params[`gf${i}`] = g.from / 1000;
    params[`gt${i}`] = g.to / 1000;
    if (g.grain === 'hour' && hoursHeld)
      hours.push(`(hour >= toDateTime({gf${i}:UInt32}, 'UTC') AND hour < toDateTime({gt${i}:UInt32}, 'UTC'))`);
    else
      own.push(`(grain = '${g.grain}' AND bucket >= toDateTime({gf${i}:UInt32}, 'UTC') AND bucket < toDateTime({gt${i}:UInt32}, 'UTC'))`);
  });
  return { own, hours };
}

const negated = (sign: 1 | -1, measures: readonly string[]) => measures.map((m) => (sign === 1 ? m : `-${m} AS ${m}`));

/**
 * The rows of a read by grain: one part per table and sign, each the project's rows of its ranges
 * that pass the read's filter and `where`, with `t` (the bucket), the grouped columns, `plain`
 * columns and `signed` ones (negated in subtracted parts). Parameters are added to `params`.
 */
export function grainedRows(
  r: BreakdownRead,
  source: GrainedSource,
  ranges: readonly GrainRange[],
  select: { signed: readonly string[]; plain?: readonly string[]; where?: readonly string[] },
  params: Record<string, unknown>,
): string {
  const grouped = new Set<string>(r.groups.flatMap((g) => (g.kind === 'column' ? [g.column] : [])));
  const stored = (c: string) => (source.attribute && c === source.columns[0] ? 'value' : c);
  if (source.attribute) params.attribute = source.attribute;
  const filters = [...filterPredicates(r, grouped, {}, params, stored), ...(select.where ?? [])];
  const columns = source.columns.filter((c) => grouped.has(c)).map((c) => (stored(c) === c ? c : `${stored(c)} AS ${c}`));
  const parts: string[] = [];
  for (const sign of [1, -1] as const) {
    const { own, hours } = rangeSpans(ranges, sign, source.hours !== undefined, params);
    const part = (table: string, time: string, spans: string[], extra: string[]) =>
      `SELECT ${[`${time} AS t`, ...columns, ...(select.plain ?? []), ...negated(sign, select.signed)].join(', ')}
       FROM ${table} WHERE ${['project_id = {p:String}', `(${spans.join(' OR ')})`, ...filters, ...extra].join(' AND ')}`;
    if (own.length) parts.push(part(source.table, 'bucket', own, source.attribute ? ['attribute = {attribute:String}'] : []));
    if (hours.length) parts.push(part(source.hours!, 'hour', hours, source.hoursWhere ? [source.hoursWhere] : []));
  }
  return parts.join(' UNION ALL ');
}

/** The stored prefix of a metadata key's pairs in the family of metadata (schema/clickhouse/025). */
export const metadataPrefix = (key: string) => `${Buffer.byteLength(key)}:${key}`;

/**
 * The rows of a read of one metadata key by grain (the family of metadata, SpendRollup's
 * `metadata`), with `t` and the key's value as `meta`: the key's pairs (or, filtered, the one pair
 * of the filter's value), and when its values are grouped the executions without the key under
 * '': every execution's sums (`all`, the family that counts each execution once) minus the key's.
 */
function metadataRows(
  r: BreakdownRead,
  rollup: SpendRollup,
  all: SpendRollup,
  ranges: readonly GrainRange[],
  params: Record<string, unknown>,
) {
  const key = r.groups.find((g) => g.kind === 'metadata')?.key ?? Object.keys(r.filter.metadata)[0]!;
  const value: string | undefined = r.filter.metadata[key];
  const grouped = r.groups.some((g) => g.kind === 'metadata');
  params.mprefix = metadataPrefix(key);
  params.mstart = Buffer.byteLength(params.mprefix as string) + 1;
  params.attribute = rollup.attribute;
  const pairs = value === undefined ? ['startsWith(value, {mprefix:String})'] : ['value = concat({mprefix:String}, {mvalue:String})'];
  if (value !== undefined) params.mvalue = value;
  const parts: string[] = [];
  for (const sign of [1, -1] as const) {
    const { own } = rangeSpans(ranges, sign, false, params);
    if (!own.length) continue;
    const where = (table: string, extra: string[]) =>
      `FROM ${table} WHERE ${['project_id = {p:String}', `(${own.join(' OR ')})`, ...extra].join(' AND ')}`;
    const ofKey = where(rollup.table, ['attribute = {attribute:String}', ...pairs]);
    parts.push(`SELECT bucket AS t, substring(value, {mstart:UInt32}) AS meta, ${negated(sign, SIGNED_MEASURES).join(', ')} ${ofKey}`);
    if (grouped && value === undefined) {
      parts.push(`SELECT bucket AS t, '' AS meta, ${negated(sign, SIGNED_MEASURES).join(', ')} ${where(all.table, [])}`);
      parts.push(`SELECT bucket AS t, '' AS meta, ${negated(sign === 1 ? -1 : 1, SIGNED_MEASURES).join(', ')} ${ofKey}`);
    }
  }
  return parts.join(' UNION ALL ');
}

/** A spend breakdown read from a rollup by grain (`r.grains`), grouped and summed like any source. */
export function grainedBreakdownSql(r: BreakdownRead): { text: string; params: Record<string, unknown> } {
  const { rollup, ranges } = r.grains!;
  const params: Record<string, unknown> = {};
  const rows =
    'metadata' in rollup && rollup.metadata
      ? metadataRows(r, rollup, SPEND_ROLLUPS[0], ranges, params)
      : grainedRows(r, rollup, ranges, { signed: SIGNED_MEASURES }, params);
  const q = breakdownSql(r, {
    from: `FROM (${rows})`,
    hour: 't',
    measures: 'sum(cost_usd) AS c, sum(executions) AS n, sum(tokens_in) AS ti, sum(tokens_out) AS tout, sum(unpriced_executions) AS u',
    bounded: true,
    metadata: 'meta',
  });
  return { text: q.text, params: { ...q.params, ...params } };
}

/**
 * How the executions ledger holds the array dimensions (SPEND_DIMENSIONS' `fromArray`): a filter not
 * grouped is "has any" on the array; grouped, the array is joined, each distinct value once ('' for none).
 */
export const EXECUTIONS_ARRAYS: Pick<BreakdownSourceSql, 'arrayFilter' | 'arrayJoins'> = {
  arrayFilter: (column) => {
    const d = dimensionByColumn(column);
    return d?.fromArray ? `hasAny(${d.fromArray.array}, {f_${column}:Array(String)})` : undefined;
  },
  arrayJoins: (grouped) =>
    SPEND_DIMENSIONS.flatMap((d) =>
      'fromArray' in d && grouped.has(d.column)
        ? [`ARRAY JOIN if(empty(${d.fromArray.array}), [''], arrayDistinct(${d.fromArray.array})) AS ${d.column}`]
        : [],
    ),
};

export function breakdownSql(r: BreakdownRead, source: BreakdownSourceSql): { text: string; params: Record<string, unknown> } {
  const { where, joins, keys, names, params } = breakdownGroups(r, source);
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
      SELECT ${[...keys, source.measures].join(', ')}
      ${source.from} ${joins.join(' ')}
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ${names.length ? `GROUP BY ${names.join(', ')}` : ''}
      HAVING n != 0 OR c != 0 OR ti != 0 OR tout != 0
    )
    ORDER BY c DESC, n DESC${names.length ? `, ${names.join(', ')}` : ''}
    LIMIT {limit:UInt32}`;
  return { text, params };
}

/**
 * The live rows of a breakdown's window and filters, one per execution and group (arrays joined as
 * the breakdown joins them): `trace_id, g0, g1, ...`. What the scores of a breakdown join.
 * `source.from` must read live rows only (its own FINAL and sign predicate in `live`).
 */
export function breakdownKeysSql(
  r: BreakdownRead,
  source: BreakdownSourceSql & { live: string },
): { text: string; params: Record<string, unknown> } {
  const { where, joins, keys, params } = breakdownGroups(r, source);
  return {
    text: `SELECT ${['trace_id', ...keys].join(', ')} ${source.from} ${joins.join(' ')} WHERE ${[...where, source.live].join(' AND ')}`,
    params,
  };
}
