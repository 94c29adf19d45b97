// The spend dimensions (docs/spend.md, "Breakdowns"): one entry each, from which the breakdown's
// `group_by` names and filter parameters (src/spend/breakdowns.ts), its SQL on the executions
// ledger (breakdown-sql.ts, executions/execution-breakdown-repository.ts), the rollup that serves it (sourceOf),
// the exports' columns (src/exports/scheduled-export.ts) and the API schema's parameters (checked by
// test/spend/dimensions.unit.test.ts) derive. Adding a dimension is one entry here, its column
// (a migration) and where ingest fills it.

/**
 * The hourly rollup still fed (schema/clickhouse/006; 019 retired those by tag and by API key, 021
 * the one by prompt), keyed by every scalar dimension but the API key and environment, per hour.
 */
export type Rollup = 'spend_hourly';

export interface SpendDimension {
  /** its name in `group_by` and in each row of the answer */
  readonly name: string;
  /** the query parameter that filters by it (any of the values given) */
  readonly filter: string;
  /** the column a breakdown groups by (in the rollup, and on executions or as the array joined) */
  readonly column: string;
  /** the hourly rollup that holds it, or null: read from a rollup by grain (SPEND_ROLLUPS) or the executions ledger */
  readonly rollup: Rollup | null;
  /**
   * An execution holds several values (an array column of executions): the rollup counts an
   * execution once per value, so it is exact when the dimension is grouped or filtered by one value.
   */
  readonly fromArray?: { readonly array: string };
  /** values of the filter may be comma-separated (not for tags: a comma is part of a tag) */
  readonly commaSeparated: boolean;
  /** a column of every export (CSV, Parquet) beyond the columns they always had */
  readonly exported: boolean;
}

export const SPEND_DIMENSIONS = [
  { name: 'provider', filter: 'provider', column: 'provider', rollup: 'spend_hourly', commaSeparated: true, exported: false },
  { name: 'model', filter: 'model', column: 'model', rollup: 'spend_hourly', commaSeparated: true, exported: false },
  { name: 'agent', filter: 'agent_id', column: 'agent_id', rollup: 'spend_hourly', commaSeparated: true, exported: false },
  { name: 'user', filter: 'user_id', column: 'user_id', rollup: 'spend_hourly', commaSeparated: true, exported: false },
  { name: 'session', filter: 'session_id', column: 'session_id', rollup: 'spend_hourly', commaSeparated: true, exported: false },
  { name: 'api_key', filter: 'api_key_id', column: 'api_key_id', rollup: null, commaSeparated: true, exported: false },
  {
    name: 'tag',
    filter: 'tag',
    column: 'tag',
    rollup: null,
    fromArray: { array: 'tags' },
    commaSeparated: false,
    exported: false,
  },
  {
    name: 'prompt',
    filter: 'prompt_id',
    column: 'prompt_id',
    rollup: null,
    fromArray: { array: '`tu.prompt_id`' },
    commaSeparated: true,
    exported: false,
  },
  { name: 'environment', filter: 'environment', column: 'environment', rollup: null, commaSeparated: true, exported: true },
] as const satisfies readonly SpendDimension[];

/**
 * The rollups by dimension family and time grain (schema/clickhouse/018_spend_grains.sql; 021 holds
 * the families by tag, prompt and API key in one table, `spend_by_attribute`), the smallest first: a breakdown reads the first whose columns hold every dimension it groups or
 * filters by (src/spend/breakdowns.ts, planOf), over a cover of its window by months, days and
 * hours (spend-grains.ts). A family without its own hours reads them from `hours` (a rollup of
 * 006 that holds its columns per hour).
 */
export interface SpendRollup {
  readonly table: string;
  readonly columns: readonly string[];
  /** the grains its table holds, coarsest first */
  readonly grains: readonly ('month' | 'day' | 'hour')[];
  /** the rollup its hours are read from when its table holds none */
  readonly hours?: Rollup;
  /**
   * The table holds several families, told apart by its column `attribute`: this family's rows
   * are those with `attribute` = this, and its first column is stored as `value`.
   */
  readonly attribute?: string;
  /**
   * The family of metadata (schema/clickhouse/025): `value` holds a key/value pair as
   * `<bytes of the key>:<key><value>`, its only column; filled for executions stored before it by
   * its migration, not at boot.
   */
  readonly metadata?: true;
}

export const SPEND_ROLLUPS = [
  { table: 'spend_by_dims', columns: ['provider', 'model', 'agent_id', 'environment'], grains: ['month', 'day', 'hour'] },
  {
    table: 'spend_by_attribute',
    attribute: 'tag',
    columns: ['tag', 'provider', 'model', 'agent_id', 'environment'],
    grains: ['month', 'day', 'hour'],
  },
  {
    table: 'spend_by_attribute',
    attribute: 'prompt',
    columns: ['prompt_id', 'provider', 'model', 'agent_id', 'environment'],
    grains: ['month', 'day', 'hour'],
  },
  {
    table: 'spend_by_attribute',
    attribute: 'api_key',
    columns: ['api_key_id', 'provider', 'model', 'agent_id', 'environment'],
    grains: ['month', 'day', 'hour'],
  },
  { table: 'spend_by_attribute', attribute: 'metadata', metadata: true, columns: ['metadata'], grains: ['month', 'day', 'hour'] },
  { table: 'spend_by_user', columns: ['user_id'], grains: ['month', 'day'], hours: 'spend_hourly' },
  { table: 'spend_by_user_model', columns: ['user_id', 'provider', 'model'], grains: ['month'], hours: 'spend_hourly' },
] as const satisfies readonly SpendRollup[];

/** A column a breakdown groups or filters by. */
export type DimensionColumn = (typeof SPEND_DIMENSIONS)[number]['column'];
/** A filter parameter of a breakdown. */
export type DimensionFilter = (typeof SPEND_DIMENSIONS)[number]['filter'];

export const dimensionByName = (name: string): SpendDimension | undefined => SPEND_DIMENSIONS.find((d) => d.name === name);
export const dimensionByColumn = (column: string): SpendDimension | undefined => SPEND_DIMENSIONS.find((d) => d.column === column);

/** The columns exports add for dimensions (after the columns each export always had). */
export const EXPORTED_DIMENSION_COLUMNS: readonly string[] = SPEND_DIMENSIONS.filter((d) => d.exported).map((d) => d.column);
