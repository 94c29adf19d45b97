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
import type { ScoreConfigs } from './score-configs.ts';
import type { ScoreRepository, ScoreListQuery, StoredScore } from './score-repository.ts';
import { presentScore, sameScore, scoreFields, type Score, type ScoreInput, type ScoreRow } from './score.ts';
import { planTraceScores, type ExecutionStamp } from './score-stamps.ts';
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

/** How long after a write its traces are stamped again, and again after that (docs/scores.md, "Storage"). */
export interface StampTiming {
  firstMs: number;
  againMs: number;
}

const MAX_WAITING_TRACES = 100_000;

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

/** Stamps a write asked for ahead of its read (of these traces). */
interface Prefetched {
  traces: ReadonlySet<string>;
  stamps: Promise<Map<string, ExecutionStamp>>;
}

export function createScoreService(deps: {
  repository: ScoreRepository;
  configs: ScoreConfigs;
  stamps: ExecutionStamps;
  timing?: StampTiming;
  onStampError?: (err: unknown) => void;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const timing = deps.timing ?? { firstMs: 0, againMs: 10_000 };
  const exclusive = createKeyLocks();
  let lastVersion = 0;
  /** A version above every one this node gave (rows of one id must order by version). */
  const nextVersion = () => (lastVersion = Math.max(lastVersion + 1, now() * 1_000));

  /**
   * The live scores of `traces` (and of the session scores `sessionIds`) become what `change` makes
   * of them (ids to their new rows, or null to delete), each stamped with its execution's current
   * stamp and one counted per trace and name. The caller holds the locks of the traces and ids.
   */
  async function rewrite(
    projectId: string,
    traces: Iterable<string>,
    change: ((stored: ReadonlyMap<string, StoredScore>) => Map<string, ScoreRow | null>) | undefined,
    /** `ids`: the ids written that have a live score (where they are now is read too). */
    scope: { ids?: string[]; names?: string[]; prefetched?: Prefetched } = {},
  ): Promise<ReadonlyMap<string, StoredScore>> {
    const restampOnly = change === undefined;
    const traceIds = [...new Set(traces)].filter(Boolean);
    const ids = scope.ids ?? [];
    // Only the names written matter to who is counted (and the old names of the ids written).
    const read = async () => {
      const first = await deps.repository.ofTraces(projectId, [...traceIds, ...(ids.length ? [''] : [])], ids, scope.names);
      if (!scope.names) return first;
      const more = [...first.values()].filter((r) => !scope.names!.includes(r.name)).map((r) => r.name);
      return more.length ? deps.repository.ofTraces(projectId, [...traceIds, ''], ids, [...scope.names, ...new Set(more)]) : first;
    };
    // A restamp (no change) looks up the executions of the traces that hold scores only: most
    // executions written have none.
    const stampsOf = async (of: string[]) => {
      // Stamps already asked for (a write asks while it reads where its ids are) are not asked again.
      const ahead = scope.prefetched;
      const rest = ahead ? of.filter((t) => !ahead.traces.has(t)) : of;
      const [before, more] = await Promise.all([
        ahead?.stamps ?? new Map<string, ExecutionStamp>(),
        rest.length ? deps.stamps(projectId, rest) : new Map<string, ExecutionStamp>(),
      ]);
      return new Map([...before, ...more]);
    };
    const [stored, stamps] = restampOnly
      ? await read().then(async (s) => [s, await stampsOf([...new Set([...s.values()].map((r) => r.trace_id).filter(Boolean))])] as const)
      : await Promise.all([read(), stampsOf(traceIds)]);
    const changes = change?.(stored) ?? new Map<string, ScoreRow | null>();
    const next = new Map<string, ScoreRow>(stored);
    const changed = new Set<string>();
    for (const [id, row] of changes) {
      if (row) {
        next.set(id, row);
        changed.add(id);
      } else next.delete(id);
    }
    await deps.repository.write(planTraceScores(stored, next, changed, stamps, nextVersion));
    // Scores written while their execution is unknown are looked at again (a restamp is itself
    // that look: it queues nothing, or scores of an execution that never comes would cycle).
    if (!restampOnly) {
      const scoredTraces = new Set([...next.values()].map((r) => r.trace_id));
      const unstamped = traceIds.filter((t) => !stamps.has(t) && scoredTraces.has(t));
      if (unstamped.length) stampLater(projectId, unstamped);
    }
    return stored;
  }

  // Traces to stamp again a little later (docs/scores.md, "Storage"): scores written while their
  // execution was unknown, and executions just written. A score and its execution written at the
  // same moment may each miss the other; looking again once both writes are done finds the pair.
  // Bounded: beyond the bound, the waiting traces are stamped at once.
  const waiting = new Map<string, { projectId: string; traceId: string; dueAt: number; again: boolean }>();
  let timer: NodeJS.Timeout | undefined;
  let stamping: Promise<void> | undefined;
  async function stampDue(all: boolean): Promise<void> {
    const byProject = new Map<string, string[]>();
    for (const [k, e] of waiting) {
      if (!all && e.dueAt > now()) continue;
      waiting.delete(k);
      if (e.again && !all) waiting.set(k, { ...e, dueAt: now() + timing.againMs, again: false });
      // Pushed, not spread into a new array: a hundred thousand waiting traces took minutes.
      const list = byProject.get(e.projectId);
      if (list) list.push(e.traceId);
      else byProject.set(e.projectId, [e.traceId]);
    }
    for (const [projectId, traces] of byProject)
      for (let i = 0; i < traces.length; i += MAX_SCORES_PER_REQUEST) {
        const chunk = traces.slice(i, i + MAX_SCORES_PER_REQUEST);
        try {
          await service.restamp(projectId, chunk);
        } catch (err) {
          // A store that failed: these traces wait for the next round.
          for (const traceId of chunk)
            waiting.set(`${projectId}\u0000${traceId}`, { projectId, traceId, dueAt: now() + timing.againMs, again: false });
          deps.onStampError?.(err);
        }
      }
  }
  function schedule(): void {
    if (timer || stamping || waiting.size === 0) return;
    const next = Math.min(...[...waiting.values()].map((e) => e.dueAt));
    timer = setTimeout(
      () => {
        timer = undefined;
        stamping = stampDue(waiting.size > MAX_WAITING_TRACES)
          .catch((err: unknown) => deps.onStampError?.(err))
          .finally(() => {
            stamping = undefined;
            schedule();
          });
      },
      Math.max(0, next - now()),
    );
    timer.unref();
  }
  function stampLater(projectId: string, traceIds: string[]): void {
    for (const traceId of traceIds) {
      const k = `${projectId}\u0000${traceId}`;
      if (!waiting.has(k)) waiting.set(k, { projectId, traceId, dueAt: now() + timing.firstMs, again: true });
    }
    schedule();
  }

  /**
   * Stores a round of upserts of one project (write-rounds.ts; their ids distinct): one lookup of
   * where the ids are, one read of the traces' live scores and stamps, one write. Returns each
   * upsert's scores as stored, in the order sent.
   */
  async function storeRound(projectId: string, upserts: Upsert[]): Promise<Score[][]> {
    const all = upserts.flatMap((u) => u.fields);
    const ids = all.map((f) => f.id);
    const traces = [...new Set(all.map((f) => f.trace_id).filter(Boolean))];
    return exclusive(projectId, ids, traces, async () => {
      // An id may move from one trace (or session) to another: where it is now is read too,
      // while the stamps of the traces written are read.
      const prefetched: Prefetched = {
        traces: new Set(traces),
        stamps: traces.length ? deps.stamps(projectId, traces) : Promise.resolve(new Map()),
      };
      prefetched.stamps.catch(() => undefined); // awaited below; a failure is thrown there
      const was = await deps.repository.tracesOfIds(projectId, ids);
      const at = toClickHouseTime(new Date(now()));
      const out = upserts.map(() => [] as ScoreRow[]);
      await rewrite(
        projectId,
        [...traces, ...was.values()],
        (stored) => {
          const change = new Map<string, ScoreRow | null>();
          upserts.forEach((u, i) => {
            for (const f of u.fields) {
              const old = stored.get(f.id);
              if (old && sameScore(old, f)) {
                out[i]!.push(old);
                continue;
              }
              const row = scoreRow(projectId, f, u.author, old?.created_at ?? at, at);
              change.set(f.id, row);
              out[i]!.push(row);
            }
          });
          return change;
        },
        { ids: [...was.keys()], names: [...new Set(all.map((f) => f.name))], prefetched },
      );
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
        await rewrite(
          projectId,
          [traceId],
          (stored) => {
            if (!stored.has(id)) throw notFound('Score');
            return new Map([[id, null]]);
          },
          { ids: [id] },
        );
      });
    },

    /**
     * Stamps the live scores of these traces with their executions' current stamps (after an
     * execution is written, or later when a score's execution was unknown). Writes nothing for a
     * score whose stamp is current.
     */
    async restamp(projectId: string, traceIds: string[]): Promise<void> {
      const traces = [...new Set(traceIds)].filter(Boolean);
      if (traces.length === 0) return;
      await exclusive(projectId, [], traces, () => rewrite(projectId, traces, undefined));
    },

    /** Executions of these traces were just written: their scores are stamped again shortly. */
    executionsWritten(projectId: string, traceIds: string[]): void {
      stampLater(projectId, traceIds);
    },

    /** Stamps every waiting trace now (shutdown, tests). */
    async flushStamps(): Promise<void> {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await stamping;
      await stampDue(true);
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
