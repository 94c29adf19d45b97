// Scores (docs/scores.md): written one at a time or in batches of up to 1,000, each upserted by
// its id (a client-chosen id makes a retry or a correction an update, never a second score);
// listed, read with their execution, deleted. A batch is checked whole before anything is
// written: one bad item refuses it all, naming the item. Scores never touch spend. Every write
// stamps its scores with their execution's dimensions (score-stamps.ts), which the score rollups
// sum by; a score whose execution arrives or changes later is stamped again. Writes that come
// while one is being stored are stored together next (write-rounds.ts).
import crypto from 'node:crypto';
import { badRequest, DomainError, notFound } from '../errors.ts';
import { toClickHouseTime } from '../time.ts';
import type { ScoreConfigs } from './score-config-repository.ts';
import type { ScoreRepository, ScoreListQuery, StoredScore } from './score-repository.ts';
import { presentScore, sameScore, scoreFields, type Score, type ScoreInput, type ScoreRow } from './score.ts';
import { planTraceScores } from './score-stamps.ts';
import type { ExecutionStamp } from '../executions/execution-stamp-repository.ts';
import { createWriteRounds, type RoundWrite } from './write-rounds.ts';
import { createKeyLocks } from './key-locks.ts';

export const MAX_SCORES_PER_REQUEST = 1_000;

/** An evaluation from OpenTelemetry (ingest/mapping/evaluations.ts), joined to its span. */
export interface EvaluationScore {
  traceId: string;
  spanId: string;
  name: string;
  value?: number;
  label?: string;
  explanation?: string;
  timeNs: string;
}

/** The current stamp of each of these traces' executions (those not known yet are absent). */
export type ExecutionStamps = (projectId: string, traceIds: string[]) => Promise<Map<string, ExecutionStamp>>;

/** Scores stored in one round at most (write-rounds.ts): ten requests of a thousand. */
const MAX_SCORES_PER_ROUND = 10_000;

/**
 * Rounds stored at once: a second starts beside the first while a full round waits (accepted
 * batches), so one round's reads run in the engine while the other's rows are built in code.
 */
const MAX_ROUNDS = 2;

/** A score as a write stores it once checked: its fields and its id. */
export type CheckedScore = Omit<ScoreRow, 'project_id' | 'author' | 'created_at' | 'updated_at'>;

/** One request's scores, checked, waiting for their round. */
interface Upsert extends RoundWrite {
  fields: CheckedScore[];
  author: string;
}

export function createScoreService(deps: {
  repository: ScoreRepository;
  configs: ScoreConfigs;
  stamps: ExecutionStamps;
  /** Scores were written while their executions were unknown: their traces are to be stamped again (restamp-queue.ts). */
  onUnstamped?: (projectId: string, traceIds: string[]) => void;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const exclusive = createKeyLocks();
  let lastVersion = 0;
  /** A version above every one this node gave (rows of one id must order by version). */
  const nextVersion = () => (lastVersion = Math.max(lastVersion + 1, now() * 1_000));

  /**
   * Writes `changes` (ids to their new rows, or null to delete) over `stored`: the live rows of the
   * ids changed and the counted score of every trace and name they are written under (and, for a
   * trace and name whose counted score moves away, all its live scores). Each row written carries
   * its execution's current stamp; a trace and name keeps one counted score. Reads nothing per score
   * a trace already holds beyond these: a write costs the same on a trace of a million scores.
   */
  async function writeChanges(
    projectId: string,
    stored: Map<string, StoredScore>,
    changes: ReadonlyMap<string, ScoreRow | null>,
    stampsAhead: { traces: ReadonlySet<string>; stamps: Promise<Map<string, ExecutionStamp>> },
  ): Promise<void> {
    // A counted score that leaves its trace and name (deleted, moved, renamed): another live score
    // of that pair is counted instead, so every score of the pair is read.
    const orphaned = new Map<string, Set<string>>();
    for (const [id, row] of changes) {
      const old = stored.get(id);
      if (!old || Number(old.counted) !== 1 || !old.trace_id) continue;
      if (row && row.trace_id === old.trace_id && row.name === old.name) continue;
      let names = orphaned.get(old.trace_id);
      if (!names) orphaned.set(old.trace_id, (names = new Set()));
      names.add(old.name);
    }
    if (orphaned.size > 0) {
      const pairs = await deps.repository.ofTraces(
        projectId,
        [...orphaned.keys()],
        [],
        [...new Set([...orphaned.values()].flatMap((n) => [...n]))],
      );
      for (const [id, r] of pairs) if (orphaned.get(r.trace_id)?.has(r.name) && !stored.has(id)) stored.set(id, r);
    }
    const next = new Map<string, ScoreRow>(stored);
    const changed = new Set<string>();
    for (const [id, row] of changes) {
      if (row) {
        next.set(id, row);
        changed.add(id);
      } else next.delete(id);
    }
    // Every trace of a row that may be written needs its stamp (a row without one is unstamped).
    const traces = new Set<string>();
    for (const r of next.values()) if (r.trace_id) traces.add(r.trace_id);
    const rest = [...traces].filter((t) => !stampsAhead.traces.has(t));
    const [ahead, more] = await Promise.all([
      stampsAhead.stamps,
      rest.length ? deps.stamps(projectId, rest) : new Map<string, ExecutionStamp>(),
    ]);
    const stamps = more.size ? new Map([...ahead, ...more]) : ahead;
    await deps.repository.write(planTraceScores(stored, next, changed, stamps, nextVersion));
    // Scores written while their execution is unknown are looked at again (and by the stamp sweep).
    const unstamped = [...changed].map((id) => next.get(id)!.trace_id).filter((t) => t && !stamps.has(t));
    if (unstamped.length) deps.onUnstamped?.(projectId, [...new Set(unstamped)]);
  }

  /**
   * Stores a round of upserts of one project (write-rounds.ts; their ids distinct): the lookup of
   * where the ids are, the counted scores of the traces and names written and the stamps of the
   * traces, read at once; then the rows of the ids that exist; one write. Returns each upsert's
   * scores as stored, in the order sent.
   */
  async function storeRound(projectId: string, upserts: Upsert[]): Promise<Score[][]> {
    const all = upserts.flatMap((u) => u.fields);
    const ids = all.map((f) => f.id);
    const traces = [...new Set(all.map((f) => f.trace_id).filter(Boolean))];
    const names = [...new Set(all.map((f) => f.name))];
    return exclusive(projectId, ids, traces, async () => {
      const stampsAhead = {
        traces: new Set(traces),
        stamps: traces.length ? deps.stamps(projectId, traces) : Promise.resolve(new Map<string, ExecutionStamp>()),
      };
      stampsAhead.stamps.catch(() => undefined); // awaited in writeChanges; a failure is thrown there
      const [was, counted] = await Promise.all([
        deps.repository.tracesOfIds(projectId, ids),
        deps.repository.countedOf(projectId, traces, names),
      ]);
      // An id may move from one trace (or session) to another: its row is read where it is now.
      const existing = was.size ? await deps.repository.ofTraces(projectId, [...new Set(was.values())], [...was.keys()], []) : new Map();
      const stored = new Map<string, StoredScore>([...counted, ...existing]);
      const at = toClickHouseTime(new Date(now()));
      const out = upserts.map(() => [] as ScoreRow[]);
      const changes = new Map<string, ScoreRow | null>();
      upserts.forEach((u, i) => {
        for (const f of u.fields) {
          const old = existing.get(f.id);
          if (old && sameScore(old, f)) {
            out[i]!.push(old);
            continue;
          }
          const row = scoreRow(projectId, f, u.author, old?.created_at ?? at, at);
          changes.set(f.id, row);
          out[i]!.push(row);
        }
      });
      await writeChanges(projectId, stored, changes, stampsAhead);
      return out.map((rows) => rows.map(presentScore));
    });
  }
  const rounds = createWriteRounds(storeRound, MAX_SCORES_PER_ROUND, MAX_ROUNDS);

  const service = {
    /** Upserts scores by id, all or none; returns them as stored, in the order sent. */
    async upsert(projectId: string, inputs: ScoreInput[], author: string, prefix: (i: number) => string): Promise<Score[]> {
      const fields = await service.check(projectId, inputs, prefix);
      return rounds.write({ projectId, ids: fields.map((f) => f.id), fields, author });
    },

    /**
     * A batch checked whole as an upsert checks it (400 or 422 naming the item and field; nothing
     * is stored), each score with its id (one is made for a score sent without): what
     * `storeChecked` stores.
     */
    async check(projectId: string, inputs: ScoreInput[], prefix: (i: number) => string): Promise<CheckedScore[]> {
      if (inputs.length > MAX_SCORES_PER_REQUEST)
        throw badRequest(`scores: at most ${MAX_SCORES_PER_REQUEST} in one request, got ${inputs.length}`);
      const configs = await deps.configs.liveByName(projectId, [...new Set(inputs.map((s) => s.name))]);
      const seen = new Map<string, number>();
      return inputs.map((s, i) => {
        const f = scoreFields(s, configs.get(s.name), prefix(i));
        if (s.id !== undefined) {
          const first = seen.get(s.id);
          if (first !== undefined) throw badRequest(`${prefix(i)}id: repeats ${prefix(first)}id ("${s.id}")`);
          seen.set(s.id, i);
        }
        return { id: s.id ?? crypto.randomUUID(), ...f };
      });
    },

    /**
     * Stores checked batches (score-log.ts: batches accepted earlier), each as its upsert would,
     * queued together so that they share rounds. Resolves once all are stored.
     */
    async storeChecked(batches: ReadonlyArray<{ projectId: string; scores: CheckedScore[]; author: string }>): Promise<void> {
      await Promise.all(
        rounds.writeAll(
          batches.map((b) => ({ projectId: b.projectId, ids: b.scores.map((f) => f.id), fields: b.scores, author: b.author })),
        ),
      );
    },

    /**
     * Evaluation events as scores (source otel): each upserted under an id made of its span, name
     * and time, so an export sent again writes nothing new. One its name's config refuses is left
     * out with the reason; the others are stored.
     */
    async recordEvaluations(
      projectId: string,
      evaluations: EvaluationScore[],
      author: string,
    ): Promise<{ stored: number; rejected: string[] }> {
      const configs = await deps.configs.liveByName(projectId, [...new Set(evaluations.map((e) => e.name))]);
      const byId = new Map<string, ScoreInput>();
      const rejected: string[] = [];
      for (const e of evaluations) {
        const input: ScoreInput = {
          id: `otel-${crypto.createHash('sha256').update(`${e.traceId}\u0000${e.spanId}\u0000${e.name}\u0000${e.timeNs}`).digest('hex').slice(0, 32)}`,
          trace_id: e.traceId,
          ...(e.spanId ? { span_id: e.spanId } : {}),
          name: e.name,
          value: e.value ?? e.label!,
          ...(e.value !== undefined && e.label !== undefined ? { label: e.label } : {}),
          ...(e.explanation ? { comment: e.explanation } : {}),
          source: 'otel',
        };
        try {
          scoreFields(input, configs.get(e.name), '');
          byId.set(input.id!, input);
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          rejected.push(`evaluation ${e.name} of span ${e.spanId}: ${err.detail}`);
        }
      }
      for (let i = 0; i < byId.size; i += MAX_SCORES_PER_REQUEST)
        await service.upsert(projectId, [...byId.values()].slice(i, i + MAX_SCORES_PER_REQUEST), author, () => '');
      return { stored: byId.size, rejected };
    },

    async get(projectId: string, id: string): Promise<Score> {
      const row = (await deps.repository.byIds(projectId, [id])).get(id);
      if (!row) throw notFound('Score');
      return presentScore(row);
    },

    /** Deletes a score: its row is cancelled (counts and means drop it at once). */
    async remove(projectId: string, id: string): Promise<void> {
      const traceId = (await deps.repository.tracesOfIds(projectId, [id])).get(id);
      if (traceId === undefined) throw notFound('Score');
      await exclusive(projectId, [id], traceId ? [traceId] : [], async () => {
        const stored = await deps.repository.ofTraces(projectId, [traceId], [id], []);
        if (!stored.has(id)) throw notFound('Score');
        const none = { traces: new Set<string>(), stamps: Promise.resolve(new Map<string, ExecutionStamp>()) };
        await writeChanges(projectId, stored, new Map([[id, null]]), none);
      });
    },

    /**
     * Stamps the live scores of these traces with their executions' current stamps (after an
     * execution is written, or later when a score's execution was unknown). Reads only the traces
     * that hold scores, and of those only the rows whose stamp is stale (the engine compares);
     * writes nothing for a score whose stamp is current. Counted flags stay as they are.
     */
    async restamp(projectId: string, traceIds: string[]): Promise<number> {
      const scored = await deps.repository.scoredTraces(projectId, [...new Set(traceIds)].filter(Boolean));
      if (scored.length === 0) return 0;
      return exclusive(projectId, [], scored, async () => {
        const stamps = await deps.stamps(projectId, scored);
        const stale = await deps.repository.staleOf(projectId, stamps);
        if (stale.size === 0) return 0;
        await deps.repository.write(planTraceScores(stale, stale, new Set(), stamps, nextVersion, { keepCounted: true }));
        return stale.size;
      });
    },

    async list(projectId: string, q: ScoreListQuery) {
      const { rows, next_cursor } = await deps.repository.list(projectId, q);
      return { items: rows.map(presentScore), next_cursor };
    },

    async ofTrace(projectId: string, traceId: string): Promise<Score[]> {
      return (await deps.repository.ofTrace(projectId, traceId)).map(presentScore);
    },
  };
  return service;
}

export type ScoreService = ReturnType<typeof createScoreService>;

/** A score's row, every field named once (a literal with a spread is built property by property). */
function scoreRow(projectId: string, f: CheckedScore, author: string, createdAt: string, updatedAt: string): ScoreRow {
  return {
    project_id: projectId,
    id: f.id,
    trace_id: f.trace_id,
    span_id: f.span_id,
    session_id: f.session_id,
    name: f.name,
    data_type: f.data_type,
    value: f.value,
    label: f.label,
    comment: f.comment,
    source: f.source,
    author,
    config_id: f.config_id,
    created_at: createdAt,
    updated_at: updatedAt,
  };
}
