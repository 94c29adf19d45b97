// A score's stamp (schema/clickhouse/013_score_rollups.sql, docs/scores.md "Storage"): the
// dimensions of its execution when the score was written, which the score rollups sum by, and
// `counted`, set on exactly one live score per trace and name so "executions scored" is a sum.
// `planTraceScores` says which rows a set of traces needs written for every live score to carry
// its execution's current stamp and one counted score per name: the one rule behind writing,
// deleting and restamping scores.
import type { ScoreRow } from './score.ts';

/** The execution's dimensions as a score stores them (`exec_version` '0': no execution known). */
export interface ExecutionStamp {
  exec_version: string;
  exec_hour: string;
  exec_provider: string;
  exec_model: string;
  exec_agent_id: string;
  exec_user_id: string;
  exec_session_id: string;
  exec_prompt_ids: string[];
  exec_prompt_versions: number[];
  exec_prompt_refs: string[];
}

export const NO_STAMP: ExecutionStamp = {
  exec_version: '0',
  exec_hour: '1970-01-01 00:00:00',
  exec_provider: '',
  exec_model: '',
  exec_agent_id: '',
  exec_user_id: '',
  exec_session_id: '',
  exec_prompt_ids: [],
  exec_prompt_versions: [],
  exec_prompt_refs: [],
};

/** A score row as stored: its fields, stamp, counted flag and version. */
export type StampedScore = ScoreRow & ExecutionStamp & { counted: number; version: string };

/** A row to write: a cancel row (a stored row, sign -1) or a new one (sign 1, a new version). */
export type ScoreWrite = Omit<StampedScore, 'version'> & { version: string | number; sign: 1 | -1 };

/**
 * Whether a rewrite would change no rollup: the same dimensions (a new version of an execution
 * that changed only its cost, a repricing, needs no new stamp) and the same counted flag.
 */
function sameStamp(a: ExecutionStamp & { counted: number }, b: ExecutionStamp & { counted: number }): boolean {
  return (
    (String(a.exec_version) === '0') === (String(b.exec_version) === '0') &&
    Number(a.counted) === Number(b.counted) &&
    a.exec_hour === b.exec_hour &&
    a.exec_provider === b.exec_provider &&
    a.exec_model === b.exec_model &&
    a.exec_agent_id === b.exec_agent_id &&
    a.exec_user_id === b.exec_user_id &&
    a.exec_session_id === b.exec_session_id &&
    a.exec_prompt_ids.join('\u0000') === b.exec_prompt_ids.join('\u0000') &&
    a.exec_prompt_versions.map(Number).join(',') === b.exec_prompt_versions.map(Number).join(',') &&
    a.exec_prompt_refs.join('\u0000') === b.exec_prompt_refs.join('\u0000')
  );
}

/**
 * The rows to write so that the live scores of some traces become `next` (by id: the live scores
 * after this change; a stored id absent from `next` is deleted), each stamped with its trace's
 * execution (`stamps`, by trace id) and one counted per trace and name (the one counted before if
 * it is still there, else the smallest id). `stored`: the live rows now, by id. `changed`: ids
 * whose fields change (they are rewritten even when their stamp does not).
 */
export function planTraceScores(
  stored: ReadonlyMap<string, StampedScore>,
  next: ReadonlyMap<string, ScoreRow>,
  changed: ReadonlySet<string>,
  stamps: ReadonlyMap<string, ExecutionStamp>,
  nextVersion: () => number,
): ScoreWrite[] {
  const holder = new Map<string, string>();
  const key = (r: ScoreRow) => `${r.trace_id}\u0000${r.name}`;
  for (const [id, r] of next) {
    if (!r.trace_id) continue;
    const before = stored.get(id);
    // The score counted before keeps it while it stays under the same trace and name.
    if (before && Number(before.counted) === 1 && key(before) === key(r)) holder.set(key(r), id);
  }
  for (const [id, r] of [...next].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (r.trace_id && !holder.has(key(r))) holder.set(key(r), id);
  }
  const writes: ScoreWrite[] = [];
  for (const [id, old] of stored) if (!next.has(id)) writes.push({ ...old, sign: -1 });
  for (const [id, r] of next) {
    const stamp = (r.trace_id && stamps.get(r.trace_id)) || NO_STAMP;
    const wanted = { ...stamp, counted: r.trace_id && holder.get(key(r)) === id ? 1 : 0 };
    const old = stored.get(id);
    if (old && !changed.has(id) && sameStamp(old, wanted)) continue;
    if (old) writes.push({ ...old, sign: -1 });
    // Object.assign, not `{ ...r, ...wanted }`: V8 builds an object of two spreads property by
    // property (a thousand rows took 20 ms; this takes one).
    writes.push(Object.assign({}, r, wanted, { version: nextVersion(), sign: 1 as const }));
  }
  return writes;
}
