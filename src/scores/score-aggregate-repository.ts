// Reads of scores by group (schema/clickhouse/013, 015, 020): the executions filter of score
// parameters, the scores of prompt-version groups and of spend breakdowns (from the rollups by
// grain where a window allows, else from the scores table), the backfill of those rollups, and a
// monitor's window. Every query carries the project predicate.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { badRequest } from '../errors.ts';
import { fromClickHouseTime } from '../time.ts';
import { breakdownGroups, grainedRows, type BreakdownRead, type GrainedSource } from '../reads/breakdown-sql.ts';
import { coverWindow, grainsFor } from '../reads/spend-grains.ts';
import { promptGroupParams, type PromptGroupRead } from '../reads/prompt-groups.ts';
/** `score.<name>.<gte|lte|eq>` query parameters. */
const CONDITION = /^score\.(.{1,200})\.(gte|lte|eq)$/;

/**
 * The executions filter of score parameters (`score.<name>.gte|lte|eq`, `has_score`): a condition
 * on `trace_id` per score name, true when one live score of that name meets every condition given
 * for it. `projectParam` names the project's parameter in the caller's query. 400 naming a
 * parameter whose bound is not a number.
 */
export function scoreFilterSql(query: Record<string, unknown>, projectParam: string): { parts: string[]; params: Record<string, unknown> } {
  const byName = new Map<string, string[]>();
  const params: Record<string, unknown> = {};
  const add = (name: string, condition?: string) => {
    let list = byName.get(name);
    if (!list) byName.set(name, (list = []));
    if (condition) list.push(condition);
  };
  let n = 0;
  for (const [key, raw] of Object.entries(query)) {
    const m = CONDITION.exec(key);
    if (!m) continue;
    const [, name, op] = m as unknown as [string, string, 'gte' | 'lte' | 'eq'];
    const text = String(Array.isArray(raw) ? raw[raw.length - 1] : raw);
    const num = text.trim() === '' ? NaN : Number(text);
    const p = `score_${n++}`;
    if (op !== 'eq') {
      if (!Number.isFinite(num)) throw badRequest(`${key}: must be a number, got ${JSON.stringify(text)}`);
      add(name, `value ${op === 'gte' ? '>=' : '<='} {${p}:Float64}`);
      params[p] = num;
    } else {
      params[p] = text;
      if (Number.isFinite(num)) {
        add(name, `(label = {${p}:String} OR (data_type = 'NUMERIC' AND value = {${p}_n:Float64}))`);
        params[`${p}_n`] = num;
      } else add(name, `label = {${p}:String}`);
    }
  }
  for (const name of (query.has_score as string[] | undefined) ?? []) add(name);
  const parts = [...byName].map(([name, conditions], i) => {
    params[`score_name_${i}`] = name;
    return `trace_id IN (SELECT trace_id FROM scores FINAL WHERE project_id = {${projectParam}:String} AND sign = 1 AND trace_id != '' AND name = {score_name_${i}:String}${conditions.map((c) => ` AND ${c}`).join('')})`;
  });
  return { parts, params };
}

export interface GroupScoreRow {
  grp: string;
  name: string;
  data_type: 'NUMERIC' | 'CATEGORICAL' | 'BOOLEAN';
  n: string;
  scored: string;
  mean: number;
  variance: number | null;
  total: number;
  /** Label counts: the labels, sorted, and their counts. */
  labels: [string[], Array<string | number>];
}

/** The aggregates of the rollup's signed sums, as the joined read gives them (score_hourly_prompts, 013 and 015). */
const ROLLUP_AGGREGATES = `any(data_type) AS data_type, toString(sum(scores)) AS n, toString(sum(scored)) AS scored,
  sum(value_sum) / sum(scores) AS mean,
  if(sum(scores) > 1, greatest(0, sum(value_squares) - pow(sum(value_sum), 2) / sum(scores)) / (sum(scores) - 1), NULL) AS variance,
  sum(value_sum) AS total, sumMap([label], [scores]) AS labels`;

/**
 * The live scores of a prompt group read (reads/prompt-groups.ts: a prompt's executions in
 * [start, end) by version or by the label they were fetched by), per group and score name, from
 * the prompts' score rollup: count, executions scored, mean and sample variance of the values,
 * their sum (a boolean's trues), and label counts.
 */
export async function groupScores(ch: ClickHouseStore, read: PromptGroupRead, names: string[] | undefined): Promise<GroupScoreRow[]> {
  const by = read.by;
  const params = promptGroupParams(read);
  return ch.query<GroupScoreRow>(
    `SELECT grp, name, ${ROLLUP_AGGREGATES}
     FROM (
       SELECT ${by === 'version' ? 'toString(prompt_version)' : 'version_ref'} AS grp, name, data_type, label, scores, scored, value_sum, value_squares
       FROM score_hourly_prompts
       WHERE project_id = {cmp_p:String} AND prompt_id = {cmp_prompt:String}
         AND hour >= toDateTime64({cmp_start:String}, 3, 'UTC') AND hour < toDateTime64({cmp_end:String}, 3, 'UTC')
         ${names ? 'AND name IN {score_names:Array(String)}' : ''})
     WHERE grp IN {cmp_groups:Array(String)}
     GROUP BY grp, name
     HAVING sum(scores) != 0`,
    names ? { ...params, score_names: names } : params,
    'quality.compare.scores',
  );
}

/**
 * A breakdown read from the hourly rollup (`read.source` spend_hourly): its scores from the score
 * rollup's rows of every score (prompt_id ''), keyed alike, per group (`g0, g1, ...`) and name.
 */
export async function rollupScoresByGroup(ch: ClickHouseStore, read: BreakdownRead, names: string[]): Promise<KeyedScoreRow[]> {
  const { where, keys, names: groups, params } = breakdownGroups(read, { from: 'FROM score_hourly_prompts', hour: 'hour', measures: '' });
  return ch.query<KeyedScoreRow>(
    `SELECT ${[...groups, 'name'].join(', ')}, ${ROLLUP_AGGREGATES}
     FROM (
       SELECT ${[...keys, 'name', 'data_type', 'label', 'scores', 'scored', 'value_sum', 'value_squares'].join(', ')}
       FROM score_hourly_prompts
       WHERE ${[...where, "prompt_id = ''", 'name IN {score_names:Array(String)}'].join(' AND ')})
     GROUP BY ${[...groups, 'name'].join(', ')}
     HAVING sum(scores) != 0`,
    { ...params, score_names: names },
    'spend.breakdown.scores.all',
  );
}

export type KeyedScoreRow = Omit<GroupScoreRow, 'grp'> & Record<`g${number}`, string | number>;

/**
 * The score rollups by grain (schema/clickhouse/020), the smallest first: a breakdown's scores are
 * read from the first whose columns hold every dimension it groups or filters by. `score_by_dims`
 * holds every score under prompt_id '' and again per prompt; `score_by_user` reads its hours from
 * the hourly rollup's rows of every score.
 */
export const SCORE_ROLLUPS = [
  { table: 'score_by_dims', columns: ['prompt_id', 'provider', 'model', 'agent_id'], grains: ['month', 'day', 'hour'] },
  {
    table: 'score_by_user',
    columns: ['user_id'],
    grains: ['month', 'day'],
    hours: 'score_hourly_prompts',
    hoursWhere: "prompt_id = ''",
  },
] as const satisfies readonly GrainedSource[];

const SCORE_SUMS = ['scores', 'scored', 'value_sum', 'value_squares'];

/**
 * A breakdown's scores from a score rollup by grain, per group (`g0, g1, ...`) and name, over a
 * cover of its window; undefined when no such rollup holds its dimensions (metadata, tags, API
 * keys, environment, sessions, a user with another dimension, several prompts without grouping).
 */
export async function grainedScoresByGroup(
  ch: ClickHouseStore,
  read: BreakdownRead,
  names: string[],
): Promise<KeyedScoreRow[] | undefined> {
  if (read.groups.some((g) => g.kind === 'metadata') || Object.keys(read.filter.metadata).length) return undefined;
  const grouped = new Set<string>(read.groups.flatMap((g) => (g.kind === 'column' ? [g.column] : [])));
  const used = new Set<string>([...grouped, ...Object.entries(read.filter.anyOf).flatMap(([c, v]) => (v?.length ? [c] : []))]);
  const perPrompt = used.has('prompt_id');
  if (perPrompt && !grouped.has('prompt_id') && read.filter.anyOf.prompt_id?.length !== 1) return undefined;
  const rollup = SCORE_ROLLUPS.find((r) => [...used].every((c) => (r.columns as readonly string[]).includes(c)));
  if (!rollup) return undefined;
  const time = read.groups.find((g) => g.kind === 'time');
  const ranges = coverWindow(
    Date.parse(fromClickHouseTime(read.start)),
    Date.parse(fromClickHouseTime(read.end)),
    grainsFor(time?.kind === 'time' ? time.bucket : undefined, rollup.grains),
  );
  const params: Record<string, unknown> = { score_names: names };
  const where = [
    'name IN {score_names:Array(String)}',
    ...(rollup.table === 'score_by_dims' ? [perPrompt ? "prompt_id != ''" : "prompt_id = ''"] : []),
  ];
  const rows = grainedRows(read, rollup, ranges, { signed: SCORE_SUMS, plain: ['name', 'data_type', 'label'], where }, params);
  const { keys, names: groups, params: keyParams } = breakdownGroups(read, { from: '', hour: 't', measures: '', bounded: true });
  return ch.query<KeyedScoreRow>(
    `SELECT ${[...groups, 'name'].join(', ')}, ${ROLLUP_AGGREGATES}
     FROM (SELECT ${[...keys, 'name', 'data_type', 'label', ...SCORE_SUMS].join(', ')} FROM (${rows}))
     GROUP BY ${[...groups, 'name'].join(', ')}
     HAVING sum(scores) != 0`,
    { ...keyParams, ...params },
    `spend.breakdown.scores.${rollup.table}`,
  );
}

/**
 * Copies the stamped scores stored before the score rollups by grain existed into each that is
 * still empty while stamped scores exist (the first boot after migration 020), as their views sum
 * them. Returns the tables filled.
 */
export async function backfillScoreGrainsIfEmpty(ch: ClickHouseStore): Promise<string[]> {
  const [stored] = await ch.query<{ n: string }>(
    'SELECT toString(count()) AS n FROM (SELECT 1 FROM scores WHERE exec_version > 0 LIMIT 1)',
    {},
    'scores.backfill.check',
  );
  if (Number(stored?.n ?? 0) === 0) return [];
  const filled: string[] = [];
  const bucket = { hour: 'exec_hour', day: "toStartOfDay(exec_hour, 'UTC')", month: "toDateTime(toStartOfMonth(exec_hour, 'UTC'), 'UTC')" };
  for (const r of SCORE_ROLLUPS) {
    const [rows] = await ch.query<{ n: string }>(
      `SELECT toString(count()) AS n FROM (SELECT 1 FROM ${r.table} LIMIT 1)`,
      {},
      'scores.backfill.check',
    );
    if (Number(rows?.n ?? 0) > 0) continue;
    const dims = r.table === 'score_by_dims';
    const columns = dims ? 'prompt_id, provider, model, agent_id' : 'user_id';
    const values = dims
      ? 'p AS prompt_id, exec_provider AS provider, exec_model AS model, exec_agent_id AS agent_id'
      : 'exec_user_id AS user_id';
    await ch.command(
      `INSERT INTO ${r.table} (project_id, name, grain, bucket, ${columns}, data_type, label, scores, scored, value_sum, value_squares)
       SELECT project_id, name, g.1 AS grain, g.2 AS bucket, ${values}, data_type, if(data_type = 'CATEGORICAL', label, '') AS label_,
         sum(toInt64(sign)), sum(toInt64(sign) * counted), sum(sign * value), sum(sign * value * value)
       FROM scores ${dims ? "ARRAY JOIN arrayConcat([''], arrayDistinct(exec_prompt_ids)) AS p" : ''}
       ARRAY JOIN [${r.grains.map((g) => `('${g}', ${bucket[g]})`).join(', ')}] AS g
       WHERE exec_version > 0
       GROUP BY project_id, name, grain, bucket, ${columns}, data_type, label_`,
      {},
      { max_partitions_per_insert_block: '10000' },
    );
    filled.push(r.table);
  }
  return filled;
}

/**
 * The live scores named `names` of the executions `keys` selects (`trace_id, g0, g1, ...`: a spend
 * breakdown's live rows), per group and name: count, executions scored, mean, sum (a boolean's
 * trues) and label counts. `{p}` is the project; `groups` the number of g columns. For the
 * breakdowns no score rollup serves (tags, API keys, metadata).
 */
export async function scoresByGroup(
  ch: ClickHouseStore,
  keys: { text: string; params: Record<string, unknown> },
  groups: number,
  names: string[],
): Promise<KeyedScoreRow[]> {
  const g = Array.from({ length: groups }, (_x, i) => `g${i}`);
  return ch.query<KeyedScoreRow>(
    `SELECT ${[...g, 'name'].join(', ')}, any(data_type) AS data_type, toString(count()) AS n, toString(uniqExact(trace_id)) AS scored,
       avg(value) AS mean, varSamp(value) AS variance, sum(value) AS total, sumMap([label], [toUInt64(1)]) AS labels
     FROM (
       SELECT ${g.map((k) => `e.${k} AS ${k}`).join(', ')}${g.length ? ', ' : ''}s.name AS name, s.data_type AS data_type,
         s.value AS value, s.label AS label, s.trace_id AS trace_id
       FROM scores AS s FINAL
       INNER JOIN (${keys.text}) AS e ON s.trace_id = e.trace_id
       WHERE s.project_id = {p:String} AND s.sign = 1 AND s.name IN {score_names:Array(String)})
     GROUP BY ${[...g, 'name'].join(', ')}`,
    { ...keys.params, score_names: names },
    'spend.breakdown.scores',
  );
}

export interface WindowScoreFigures {
  n: number;
  mean: number | null;
  variance: number | null;
  /** the scores whose label is `rateValue` (a BOOLEAN's 'true' / 'false', a CATEGORICAL label) */
  successes: number;
}

/**
 * The live scores named `name` of the executions `traces` selects (a subquery of trace ids binding
 * `{project_id}`: a monitor's window, executions/execution-window-repository.ts): count, mean,
 * sample variance, and how many have the label `rateValue`. The scores' key is
 * (project_id, trace_id): the trace ids select their granules.
 */
export async function windowScores(
  ch: ClickHouseStore,
  traces: { text: string; params: Record<string, unknown> },
  name: string,
  rateValue: string,
): Promise<WindowScoreFigures> {
  const [row] = await ch.query<{ n: string; mean: number | null; variance: number | null; successes: string }>(
    `SELECT toString(count()) AS n, if(count() = 0, NULL, avg(value)) AS mean, if(count() < 2, NULL, varSamp(value)) AS variance,
       toString(countIf(label = {rate_value:String})) AS successes
     FROM scores FINAL
     WHERE project_id = {project_id:String} AND sign = 1 AND name = {score_name:String} AND trace_id IN (${traces.text})`,
    { ...traces.params, score_name: name, rate_value: rateValue },
    'monitors.scores',
  );
  return { n: Number(row?.n ?? 0), mean: row?.mean ?? null, variance: row?.variance ?? null, successes: Number(row?.successes ?? 0) };
}
