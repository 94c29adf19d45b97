// The `scores` table (schema/clickhouse/010_scores.sql): every statement that reads or writes it.
// Every query carries the project predicate. Live scores are the rows FINAL keeps with sign 1.
import { liveRows } from '../stores/live-rows.ts';
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { timeRange } from '../time.ts';
import type { ScoreWrite, StampedScore } from './score-stamps.ts';
import { presentScore } from './score.ts';
import type { ExecutionStamp } from '../executions/execution-stamp-repository.ts';
import { decodeCursor, encodeCursor, liveOf, STAMP_KEY_SQL, stampKey } from './score-rows.ts';

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
