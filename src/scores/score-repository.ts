// The `scores` table (schema/clickhouse/010_scores.sql): every statement that reads or writes it.
// Every query carries the project predicate. Live scores are the rows FINAL keeps with sign 1.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { badRequest } from '../errors.ts';
import { timeRange } from '../time.ts';
import type { ScoreRow } from './score.ts';

// created_at and updated_at are read as text under their own names: a filter on the time column
// names it scores.created_at.
const COLUMNS = `project_id, id, trace_id, span_id, session_id, name, data_type, value, label, comment, source, author, config_id,
  toString(created_at) AS created_at, toString(updated_at) AS updated_at, toString(version) AS version`;

export type StoredScore = ScoreRow & { version: string };

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

const encodeCursor = (createdAt: string, id: string) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && /^\d{4}-/.test(v[0]))
      return [v[0], v[1]];
  } catch {
    // below
  }
  throw badRequest('cursor: is not a cursor this API gave');
}

export function createScoreRepository(ch: ClickHouseStore) {
  return {
    /** The live scores of these ids. */
    async byIds(projectId: string, ids: string[]): Promise<Map<string, StoredScore>> {
      if (ids.length === 0) return new Map();
      const rows = await ch.query<StoredScore>(
        `SELECT ${COLUMNS} FROM scores FINAL WHERE project_id = {p:String} AND id IN {ids:Array(String)} AND sign = 1`,
        { p: projectId, ids },
        'scores.byIds',
      );
      return new Map(rows.map((r) => [r.id, r]));
    },

    /** The live scores of a trace (its spans' included), oldest first. */
    async ofTrace(projectId: string, traceId: string): Promise<StoredScore[]> {
      return ch.query<StoredScore>(
        `SELECT ${COLUMNS} FROM scores FINAL WHERE project_id = {p:String} AND trace_id = {t:String} AND sign = 1 ORDER BY created_at, id`,
        { p: projectId, t: traceId },
        'scores.ofTrace',
      );
    },

    /** New rows (`sign` 1) and cancel rows (`sign` -1, a copy of the row they cancel), in one insert. */
    async write(rows: Array<ScoreRow & { version: string | number; sign: 1 | -1 }>): Promise<void> {
      if (rows.length) await ch.insert('scores', rows);
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
