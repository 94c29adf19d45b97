// The `scores` table (schema/clickhouse/010_scores.sql): every statement that reads or writes it.
// Every query carries the project predicate. Live scores are the rows FINAL keeps with sign 1.
import { liveRows } from '../stores/live-rows.ts';
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { badRequest } from '../errors.ts';
import { fromClickHouseTime, timeRange } from '../time.ts';
import type { ScoreWrite, StampedScore } from './score-stamps.ts';
import { presentScore } from './score.ts';
import type { ExecutionStamp } from '../executions/execution-stamp-repository.ts';
import { decodeCursor, encodeCursor, liveOf, STAMP_KEY_SQL, stampKey } from './score-rows.ts';
import { breakdownGroups, grainedRows, type BreakdownRead, type GrainedSource } from '../reads/breakdown-sql.ts';
import { coverWindow, grainsFor } from '../reads/spend-grains.ts';
import { promptGroupParams, type PromptGroupRead } from '../reads/prompt-groups.ts';

// created_at and updated_at are read as text under their own names: a filter on the time column
// names it scores.created_at.
const COLUMNS = `project_id, id, trace_id, span_id, session_id, name, data_type, value, label, comment, source, author, config_id,
  toString(created_at) AS created_at, toString(updated_at) AS updated_at, toString(version) AS version, counted,
  toString(exec_version) AS exec_version, toString(exec_hour) AS exec_hour, exec_provider, exec_model, exec_agent_id, exec_user_id,
  exec_session_id, exec_prompt_ids, exec_prompt_versions, exec_prompt_refs`;

export type StoredScore = StampedScore;

export interface ScoreListQuery {
  name?: string[];
  source?: string[];
  data_type?: string;
  trace_id?: string;
  session_id?: string;
  start?: string;
  end?: string;
  min_value?: number;
  max_value?: number;
  limit: number;
  cursor?: string;
}

/** Stores rows of `scores` (resolves once stored): the service's batching writer, or a plain insert. */
export interface ScoreWriter {
  write(rows: readonly object[], bytes: number): Promise<void>;
}

export function createScoreRepository(ch: ClickHouseStore, writer: ScoreWriter = { write: (rows) => ch.insert('scores', rows) }) {
  return {
    /**
     * The trace each of these ids' live score is under (through the id index: '' for a session's
     * score). Read without FINAL (half the time) and settled here as FINAL would (stores/live-rows.ts).
     */
    async tracesOfIds(projectId: string, ids: string[]): Promise<Map<string, string>> {
      if (ids.length === 0) return new Map();
      const rows = await ch.queryBinary<{ id: string; trace_id: string; version: string; sign: number }>(
        'SELECT id, trace_id, toString(version) AS version, sign FROM score_ids PREWHERE project_id = {p:String} AND id IN {ids:Array(String)}',
        { p: projectId, ids },
        'scores.byIds.index',
      );
      return new Map([...liveRows(rows, (r) => r.id)].map(([id, r]) => [id, r.trace_id]));
    },

    /**
     * The live scores of these traces (their spans' and, with '', sessions' of these ids), by id;
     * with `names`, only those of these names and these ids. Read without FINAL (which would merge
     * every granule the traces touch) and collapsed here: a row lives while no cancel row repeats
     * its id and version. Every condition is a PREWHERE, the name first: the trace ids and the
     * wide columns are read for the rows kept only (a new name on scored traces reads none of
     * them). `ids`: those that exist (the others have no row to find).
     */
    async ofTraces(projectId: string, traceIds: string[], ids: string[] = [], names?: string[]): Promise<Map<string, StoredScore>> {
      if (traceIds.length === 0) return new Map();
      const rows = await ch.queryBinary<StoredScore & { sign: number }>(
        `SELECT ${COLUMNS}, sign FROM scores
         PREWHERE project_id = {p:String}${names ? ' AND (name IN {names:Array(String)} OR id IN {ids:Array(String)})' : ''}
           AND trace_id IN {traces:Array(String)} AND (trace_id != '' OR id IN {ids:Array(String)})`,
        { p: projectId, traces: traceIds, ids, names: names ?? [] },
        'scores.ofTraces',
      );
      return liveOf(rows);
    },

    /**
     * The latest live score (by updated_at, then id) of each of these names on each of these traces,
     * its value as the API shows it (a number, true/false, or a label), by trace id then name: the
     * executions list's score columns. One read of these traces' keys (see ofTraces).
     */
    async latestOf(
      projectId: string,
      traceIds: string[],
      names: string[],
    ): Promise<Map<string, Record<string, number | boolean | string>>> {
      const out = new Map<string, Record<string, number | boolean | string>>();
      if (traceIds.length === 0 || names.length === 0) return out;
      const wanted = new Set(names);
      const latest = new Map<string, StoredScore>();
      for (const s of (await this.ofTraces(projectId, traceIds, [], names)).values()) {
        if (!s.trace_id || !wanted.has(s.name)) continue;
        const key = `${s.trace_id}\u0000${s.name}`;
        const was = latest.get(key);
        if (!was || s.updated_at > was.updated_at || (s.updated_at === was.updated_at && s.id > was.id)) latest.set(key, s);
      }
      for (const s of latest.values()) {
        const byName = out.get(s.trace_id) ?? {};
        byName[s.name] = presentScore(s).value;
        out.set(s.trace_id, byName);
      }
      return out;
    },

    /** The live scores of these ids. */
    async byIds(projectId: string, ids: string[]): Promise<Map<string, StoredScore>> {
      const traces = await this.tracesOfIds(projectId, ids);
      if (traces.size === 0) return new Map();
      const live = await this.ofTraces(projectId, [...new Set(traces.values())], [...traces.keys()], []);
      return new Map([...live].filter(([id]) => traces.has(id)));
    },

    /**
     * The score counted for each of these traces and names (`counted` 1: one live score per trace
     * and name), by id. Read by key and flag, so a write reads one row per trace and name however
     * many scores the trace holds.
     */
    async countedOf(projectId: string, traceIds: string[], names: string[]): Promise<Map<string, StoredScore>> {
      if (traceIds.length === 0 || names.length === 0) return new Map();
      return liveOf(
        await ch.queryBinary<StoredScore & { sign: number }>(
          `SELECT ${COLUMNS}, sign FROM scores
           PREWHERE project_id = {p:String} AND name IN {names:Array(String)} AND trace_id IN {traces:Array(String)} AND counted = 1`,
          { p: projectId, traces: traceIds, names },
          'scores.counted',
        ),
      );
    },

    /**
     * The live scores of these traces whose stamp is not their execution's current one (`stamps`:
     * each trace's stamp; traces absent have no execution and are not read). The engine compares:
     * a row stamped with the current version is current, an older version is current when its
     * dimensions are (a repricing changes the version only), so only the rows a restamp rewrites
     * come back, however many scores the traces hold.
     */
    async staleOf(projectId: string, stamps: ReadonlyMap<string, ExecutionStamp>): Promise<Map<string, StoredScore>> {
      if (stamps.size === 0) return new Map();
      const traces = [...stamps.keys()];
      return liveOf(
        await ch.queryBinary<StoredScore & { sign: number }>(
          `SELECT ${COLUMNS}, sign FROM scores
           PREWHERE project_id = {p:String} AND trace_id IN {traces:Array(String)}
           WHERE scores.exec_version < toUInt64(transform(trace_id, {traces:Array(String)}, {versions:Array(String)}, '0'))
             AND (scores.exec_version = 0 OR ${STAMP_KEY_SQL} != transform(trace_id, {traces:Array(String)}, {keys:Array(String)}, ''))`,
          {
            p: projectId,
            traces,
            versions: traces.map((t) => stamps.get(t)!.exec_version),
            keys: traces.map((t) => stampKey(t, stamps.get(t)!)),
          },
          'scores.stale',
        ),
      );
    },

    /** Which of these traces hold a score (live or deleted: a restamp reads their stale rows next). */
    async scoredTraces(projectId: string, traceIds: string[]): Promise<string[]> {
      if (traceIds.length === 0) return [];
      const rows = await ch.queryBinary<{ trace_id: string }>(
        'SELECT DISTINCT trace_id FROM scores PREWHERE project_id = {p:String} AND trace_id IN {traces:Array(String)}',
        { p: projectId, traces: traceIds },
        'scores.scoredTraces',
      );
      return rows.map((r) => r.trace_id);
    },

    /**
     * Traces (of every project) holding a live score that carries no stamp, in key order after
     * `after`: the scores written before their execution, which a restamp looks at again once it
     * exists (docs/scores.md, "Storage").
     */
    async unstampedTraces(after: { projectId: string; traceId: string } | undefined, limit: number) {
      return ch.query<{ project_id: string; trace_id: string }>(
        `SELECT project_id, trace_id FROM scores
         PREWHERE exec_version = 0 AND trace_id != ''
         WHERE (project_id, trace_id) > ({ap:String}, {at:String})
         GROUP BY project_id, trace_id
         HAVING sum(sign) > 0
         ORDER BY project_id, trace_id
         LIMIT {limit:UInt32}`,
        { ap: after?.projectId ?? '', at: after?.traceId ?? '', limit },
        'scores.unstamped',
      );
    },

    /** The live scores of a trace (its spans' included), oldest first. */
    async ofTrace(projectId: string, traceId: string): Promise<StoredScore[]> {
      return ch.query<StoredScore>(
        `SELECT ${COLUMNS} FROM scores FINAL WHERE project_id = {p:String} AND trace_id = {t:String} AND sign = 1 ORDER BY created_at, id`,
        { p: projectId, t: traceId },
        'scores.ofTrace',
      );
    },

    /** The live scores of these traces (their spans' included), oldest first. */
    async listOfTraces(projectId: string, traceIds: string[]): Promise<StoredScore[]> {
      if (traceIds.length === 0) return [];
      return ch.query<StoredScore>(
        `SELECT ${COLUMNS} FROM scores FINAL WHERE project_id = {p:String} AND trace_id IN {ts:Array(String)} AND sign = 1 ORDER BY created_at, id`,
        { p: projectId, ts: traceIds },
        'scores.listOfTraces',
      );
    },

    /**
     * New rows (`sign` 1) and cancel rows (`sign` -1, a copy of the row they cancel), in one insert
     * (with the rows of other writes made meanwhile: one batch, stored whole or not at all).
     */
    async write(rows: ScoreWrite[]): Promise<void> {
      if (rows.length)
        await writer.write(
          rows,
          rows.reduce((n, r) => n + 400 + r.comment.length + r.id.length, 0),
        );
    },

    async list(projectId: string, q: ScoreListQuery) {
      const parts = ['project_id = {p:String}', 'sign = 1'];
      const params: Record<string, unknown> = { p: projectId };
      if (q.name?.length) {
        parts.push('name IN {names:Array(String)}');
        params.names = q.name;
      }
      if (q.source?.length) {
        parts.push('source IN {sources:Array(String)}');
        params.sources = q.source;
      }
      for (const f of ['data_type', 'trace_id', 'session_id'] as const) {
        if (q[f] !== undefined) {
          parts.push(`${f} = {${f}:String}`);
          params[f] = q[f];
        }
      }
      if (q.min_value !== undefined) {
        parts.push('value >= {min_value:Float64}');
        params.min_value = q.min_value;
      }
      if (q.max_value !== undefined) {
        parts.push('value <= {max_value:Float64}');
        params.max_value = q.max_value;
      }
      const range = timeRange(q.start, q.end);
      if (range.start) {
        parts.push("scores.created_at >= toDateTime64({start:String}, 3, 'UTC')");
        params.start = range.start;
      }
      if (range.end) {
        parts.push("scores.created_at < toDateTime64({end:String}, 3, 'UTC')");
        params.end = range.end;
      }
      if (q.cursor) {
        const [at, id] = decodeCursor(q.cursor);
        parts.push("(scores.created_at, id) < (toDateTime64({c_at:String}, 3, 'UTC'), {c_id:String})");
        params.c_at = at;
        params.c_id = id;
      }
      const rows = await ch.query<StoredScore>(
        `SELECT ${COLUMNS} FROM scores FINAL WHERE ${parts.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT {limit:UInt32}`,
        { ...params, limit: q.limit },
        'scores.list',
      );
      const last = rows[rows.length - 1];
      return { rows, next_cursor: rows.length === q.limit && last ? encodeCursor(last.created_at, last.id) : null };
    },
  };
}

export type ScoreRepository = ReturnType<typeof createScoreRepository>;

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
