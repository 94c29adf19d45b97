// The spend dimensions (docs/spend.md, "Breakdowns"): one entry each, from which the breakdown's
// `group_by` names and filter parameters (src/spend/breakdowns.ts), its SQL on the executions
// ledger (spend-breakdown-sql.ts, execution-repository.ts), the rollup that serves it (sourceOf),
// the exports' columns (src/exports/scheduled-export.ts) and the API schema's parameters (checked by
// test/spend/dimensions.unit.test.ts) derive. Adding a dimension is one entry here, its column
// (a migration) and where ingest fills it.

/** The hourly rollups (schema/clickhouse/006, 008), each keyed like spend_hourly plus its own key column. */
export type Rollup = 'spend_hourly' | 'spend_hourly_tags' | 'spend_hourly_prompts' | 'spend_hourly_api_keys';

export interface SpendDimension {
  /** its name in `group_by` and in each row of the answer */
  readonly name: string;
  /** the query parameter that filters by it (any of the values given) */
  readonly filter: string;
  /** the column a breakdown groups by (in the rollup, and on executions or as the array joined) */
  readonly column: string;
  /** the rollup that holds it, or null: read from the executions ledger */
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
  { name: 'api_key', filter: 'api_key_id', column: 'api_key_id', rollup: 'spend_hourly_api_keys', commaSeparated: true, exported: false },
  {
    name: 'tag',
    filter: 'tag',
    column: 'tag',
    rollup: 'spend_hourly_tags',
    fromArray: { array: 'tags' },
    commaSeparated: false,
    exported: false,
  },
  {
    name: 'prompt',
    filter: 'prompt_id',
    column: 'prompt_id',
    rollup: 'spend_hourly_prompts',
    fromArray: { array: '`tu.prompt_id`' },
    commaSeparated: true,
    exported: false,
  },
  { name: 'environment', filter: 'environment', column: 'environment', rollup: null, commaSeparated: true, exported: true },
] as const satisfies readonly SpendDimension[];

/** A column a breakdown groups or filters by. */
export type DimensionColumn = (typeof SPEND_DIMENSIONS)[number]['column'];
/** A filter parameter of a breakdown. */
export type DimensionFilter = (typeof SPEND_DIMENSIONS)[number]['filter'];

export const dimensionByName = (name: string): SpendDimension | undefined => SPEND_DIMENSIONS.find((d) => d.name === name);
export const dimensionByColumn = (column: string): SpendDimension | undefined => SPEND_DIMENSIONS.find((d) => d.column === column);

/** The columns exports add for dimensions (after the columns each export always had). */
export const EXPORTED_DIMENSION_COLUMNS: readonly string[] = SPEND_DIMENSIONS.filter((d) => d.exported).map((d) => d.column);
