// Score rows as the repository reads them (src/scores/score-repository.ts): rows read without
// FINAL settled as FINAL would, a stamp as one text the engine and this code build alike, and the
// keyset cursor of the scores list.
import { badRequest } from '../errors.ts';
import { liveRows } from '../stores/live-rows.ts';
import type { StampedScore } from './score-stamps.ts';
import type { ExecutionStamp } from '../executions/execution-stamp-repository.ts';

export const encodeCursor = (createdAt: string, id: string) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
export function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && /^\d{4}-/.test(v[0]))
      return [v[0], v[1]];
  } catch {
    // below
  }
  throw badRequest('cursor: is not a cursor this API gave');
}

/** Score rows read without FINAL, collapsed as FINAL would (stores/live-rows.ts), by id. */
export function liveOf(rows: ReadonlyArray<StampedScore & { sign: number }>): Map<string, StampedScore> {
  const live = new Map<string, StampedScore>();
  for (const [id, { sign: _sign, ...score }] of liveRows(rows, (r) => r.id)) live.set(id, score);
  return live;
}

/**
 * A trace and the dimensions of a stamp as one text, each field prefixed by its length in bytes:
 * the same in SQL (over a score row's `exec_*`) and in code (over an execution's stamp), so the
 * engine can tell a stale stamp from a current one. The version is not in it (see `staleOf`).
 */
const sized = (x: string) => `concat(toString(length(${x})), ':', ${x})`;
export const STAMP_KEY_SQL = `concat(${[
  sized('trace_id'),
  sized('toString(scores.exec_hour)'),
  ...['exec_provider', 'exec_model', 'exec_agent_id', 'exec_user_id', 'exec_session_id'].map(sized),
  `toString(length(exec_prompt_ids)), '[', arrayStringConcat(arrayMap(x -> ${sized('x')}, exec_prompt_ids))`,
  `arrayStringConcat(arrayMap(x -> toString(x), exec_prompt_versions), ',')`,
  `'|', arrayStringConcat(arrayMap(x -> ${sized('x')}, exec_prompt_refs))`,
].join(', ')})`;

export function stampKey(traceId: string, s: ExecutionStamp): string {
  const sized = (x: string) => `${Buffer.byteLength(x, 'utf8')}:${x}`;
  return [
    sized(traceId),
    sized(s.exec_hour.slice(0, 19)), // a DateTime's text (an hour read as DateTime64 carries .000)
    ...[s.exec_provider, s.exec_model, s.exec_agent_id, s.exec_user_id, s.exec_session_id].map(sized),
    `${s.exec_prompt_ids.length}[`,
    s.exec_prompt_ids.map(sized).join(''),
    s.exec_prompt_versions.map((v) => String(Number(v))).join(','),
    '|',
    s.exec_prompt_refs.map(sized).join(''),
  ].join('');
}
