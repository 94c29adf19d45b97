// A score's stamp (schema/clickhouse/013_score_rollups.sql, docs/scores.md "Storage"): the
// dimensions of its execution when the score was written, which the score rollups sum by, and
// `counted`, set on exactly one live score per trace and name so "executions scored" is a sum.
// `planTraceScores` says which rows a set of traces needs written for every live score to carry
// its execution's current stamp and one counted score per name: the one rule behind writing,
// deleting and restamping scores.
import type { ScoreRow } from './score.ts';
import type { ExecutionStamp } from '../executions/execution-stamp-repository.ts';

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
  /** `keepCounted`: every row keeps its counted flag (a restamp of some of a trace's rows only). */
  opts: { keepCounted?: boolean } = {},
): ScoreWrite[] {
  // The holder of each (trace, name): the score counted before if it is still there under the same
  // trace and name, else the smallest id (one pass, no sort). By name, then trace: the strings as
  // they came, not a key built per row.
  const holder = new Map<string, Map<string, string>>();
  const holderOf = (name: string) => {
    let byTrace = holder.get(name);
    if (!byTrace) holder.set(name, (byTrace = new Map()));
    return byTrace;
  };
  const kept = new Map<string, Set<string>>();
  for (const [id, r] of next) {
    if (!r.trace_id) continue;
    const before = stored.get(id);
    if (before && Number(before.counted) === 1 && before.trace_id === r.trace_id && before.name === r.name) {
      holderOf(r.name).set(r.trace_id, id);
      let traces = kept.get(r.name);
      if (!traces) kept.set(r.name, (traces = new Set()));
      traces.add(r.trace_id);
    }
  }
  for (const [id, r] of next) {
    if (!r.trace_id || kept.get(r.name)?.has(r.trace_id)) continue;
    const byTrace = holderOf(r.name);
    const h = byTrace.get(r.trace_id);
    if (h === undefined || id < h) byTrace.set(r.trace_id, id);
  }
  const writes: ScoreWrite[] = [];
  for (const [id, old] of stored) if (!next.has(id)) writes.push(cancelOf(old));
  for (const [id, r] of next) {
    const stamp = (r.trace_id && stamps.get(r.trace_id)) || NO_STAMP;
    const old = stored.get(id);
    const counted = opts.keepCounted ? Number(old?.counted ?? 0) : r.trace_id && holder.get(r.name)?.get(r.trace_id) === id ? 1 : 0;
    if (old) {
      if (!changed.has(id) && sameStamp(old, { ...stamp, counted })) continue;
      writes.push(cancelOf(old));
    }
    writes.push(stampedRow(r, stamp, counted, nextVersion()));
  }
  return writes;
}

/** The cancel row of a stored row: the same row, sign -1. */
function cancelOf(old: StampedScore): ScoreWrite {
  const row = Object.assign({}, old) as unknown as ScoreWrite;
  row.sign = -1;
  return row;
}

/**
 * A new row: every field named once, in one literal (V8 builds spreads and Object.assign of
 * several sources property by property: a thousand rows took 20 ms that way, under 2 this way).
 */
function stampedRow(r: ScoreRow, s: ExecutionStamp, counted: number, version: number): ScoreWrite {
  return {
    project_id: r.project_id,
    id: r.id,
    trace_id: r.trace_id,
    span_id: r.span_id,
    session_id: r.session_id,
    name: r.name,
    data_type: r.data_type,
    value: r.value,
    label: r.label,
    comment: r.comment,
    source: r.source,
    author: r.author,
    config_id: r.config_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    exec_version: s.exec_version,
    exec_hour: s.exec_hour,
    exec_provider: s.exec_provider,
    exec_model: s.exec_model,
    exec_agent_id: s.exec_agent_id,
    exec_user_id: s.exec_user_id,
    exec_session_id: s.exec_session_id,
    exec_prompt_ids: s.exec_prompt_ids,
    exec_prompt_versions: s.exec_prompt_versions,
    exec_prompt_refs: s.exec_prompt_refs,
    counted,
    version,
    sign: 1,
  };
}
