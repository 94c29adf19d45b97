// Scores (docs/scores.md): written one at a time or in batches of up to 1,000, each upserted by
// its id (a client-chosen id makes a retry or a correction an update, never a second score);
// listed, read with their execution, deleted. A batch is checked whole before anything is
// written: one bad item refuses it all, naming the item. Scores never touch spend.
import crypto from 'node:crypto';
import { badRequest, DomainError, notFound } from '../errors.ts';
import { toClickHouseTime } from '../time.ts';
import type { ScoreConfigs } from './score-configs.ts';
import type { ScoreRepository, ScoreListQuery, StoredScore } from './score-repository.ts';
import { presentScore, sameScore, scoreFields, type Score, type ScoreInput, type ScoreRow } from './score.ts';

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

export function createScoreService(deps: { repository: ScoreRepository; configs: ScoreConfigs; now?: () => number }) {
  const now = deps.now ?? Date.now;
  // One read-then-write at a time per score id on this node, so two concurrent updates of one
  // score cannot both cancel the same row.
  const inFlight = new Map<string, Promise<unknown>>();
  async function exclusive<T>(keys: string[], work: () => Promise<T>): Promise<T> {
    for (;;) {
      const busy = keys.map((k) => inFlight.get(k)).filter((p): p is Promise<unknown> => p !== undefined);
      if (busy.length === 0) break;
      await Promise.allSettled(busy);
    }
    const done = work();
    const settled = done.catch(() => undefined);
    for (const k of keys) inFlight.set(k, settled);
    try {
      return await done;
    } finally {
      for (const k of keys) if (inFlight.get(k) === settled) inFlight.delete(k);
    }
  }
  let lastVersion = 0;
  /** A version above every one this node gave (rows of one id must order by version). */
  const nextVersion = () => (lastVersion = Math.max(lastVersion + 1, now() * 1_000));

  return {
    /** Upserts scores by id, all or none; returns them as stored, in the order sent. */
    async upsert(projectId: string, inputs: ScoreInput[], author: string, prefix: (i: number) => string): Promise<Score[]> {
      if (inputs.length > MAX_SCORES_PER_REQUEST)
        throw badRequest(`scores: at most ${MAX_SCORES_PER_REQUEST} in one request, got ${inputs.length}`);
      const configs = await deps.configs.liveByName(projectId, [...new Set(inputs.map((s) => s.name))]);
      const seen = new Map<string, number>();
      const fields = inputs.map((s, i) => {
        const f = scoreFields(s, configs.get(s.name), prefix(i));
        if (s.id !== undefined) {
          const first = seen.get(s.id);
          if (first !== undefined) throw badRequest(`${prefix(i)}id: repeats ${prefix(first)}id ("${s.id}")`);
          seen.set(s.id, i);
        }
        return { id: s.id ?? crypto.randomUUID(), ...f };
      });
      const ids = fields.map((f) => f.id);
      return exclusive(
        ids.map((id) => `${projectId}\u0000${id}`),
        async () => {
          const existing = await deps.repository.byIds(projectId, ids);
          const at = toClickHouseTime(new Date(now()));
          const rows: Array<ScoreRow & { version: string | number; sign: 1 | -1 }> = [];
          const out = fields.map((f) => {
            const old = existing.get(f.id);
            if (old && sameScore(old, f)) return old;
            const row: ScoreRow = { project_id: projectId, ...f, author, created_at: old?.created_at ?? at, updated_at: at };
            if (old) rows.push({ ...old, sign: -1 });
            rows.push({ ...row, version: nextVersion(), sign: 1 });
            return row;
          });
          await deps.repository.write(rows);
          return out.map(presentScore);
        },
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
        await this.upsert(projectId, [...byId.values()].slice(i, i + MAX_SCORES_PER_REQUEST), author, () => '');
      return { stored: byId.size, rejected };
    },

    async get(projectId: string, id: string): Promise<Score> {
      const row = (await deps.repository.byIds(projectId, [id])).get(id);
      if (!row) throw notFound('Score');
      return presentScore(row);
    },

    /** Deletes a score: its row is cancelled (counts and means drop it at once). */
    async remove(projectId: string, id: string): Promise<void> {
      await exclusive([`${projectId}\u0000${id}`], async () => {
        const old = (await deps.repository.byIds(projectId, [id])).get(id);
        if (!old) throw notFound('Score');
        await deps.repository.write([{ ...old, sign: -1 } as StoredScore & { sign: -1 }]);
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
}

export type ScoreService = ReturnType<typeof createScoreService>;
