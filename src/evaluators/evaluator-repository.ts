// The `evaluators` and `evaluations` tables (schema/postgres/015_evaluators.sql): every statement
// that reads or writes them. Every query carries the project predicate, except the scan's list of
// evaluators to look for work for (`scannable`), which looks across projects as the scheduled
// jobs do.
import { badRequest } from '../errors.ts';
import type { Queryable } from '../stores/postgres.ts';
import type { EvaluationCounts, EvaluatorRow } from './evaluator.ts';

const COLUMNS = `evaluator_id, project_id, name, prompt_id, prompt_label, variables, connection_id, score_name, agent_id, target,
  concurrency, max_calls_per_minute, timeout_ms, paused, max_daily_cost_usd::text AS max_daily_cost_usd, scanned_to, created_at, updated_at`;

export type EvaluationStatus = 'queued' | 'done' | 'failed';

export type EvaluationRow = {
  trace_id: string;
  status: EvaluationStatus;
  attempts: number;
  score_id: string | null;
  judge_trace_id: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
};

const encodeCursor = (at: Date, traceId: string) => Buffer.from(JSON.stringify([at.toISOString(), traceId])).toString('base64url');
function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && typeof v[0] === 'string' && typeof v[1] === 'string' && !Number.isNaN(Date.parse(v[0]))) return [v[0], v[1]];
  } catch {
    // below
  }
  throw badRequest('cursor: is not a cursor this API gave');
}

/** $1 … $15 of the insert and the update, in the insert's column order. */
const fields = (r: Omit<EvaluatorRow, 'scanned_to' | 'created_at' | 'updated_at'>) => [
  r.evaluator_id,
  r.project_id,
  r.name,
  r.prompt_id,
  r.prompt_label,
  JSON.stringify(r.variables),
  r.connection_id,
  r.score_name,
  r.agent_id,
  JSON.stringify(r.target),
  r.concurrency,
  r.max_calls_per_minute,
  r.timeout_ms,
  r.paused,
  r.max_daily_cost_usd,
];

export function createEvaluatorRepository(db: Queryable) {
  return {
    async insert(r: Omit<EvaluatorRow, 'scanned_to' | 'created_at' | 'updated_at'>): Promise<EvaluatorRow> {
      const [row] = await db.query<EvaluatorRow>(
        `INSERT INTO evaluators (evaluator_id, project_id, name, prompt_id, prompt_label, variables, connection_id, score_name, agent_id,
           target, concurrency, max_calls_per_minute, timeout_ms, paused, max_daily_cost_usd)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING ${COLUMNS}`,
        fields(r),
      );
      return row!;
    },

    async update(r: EvaluatorRow): Promise<EvaluatorRow | undefined> {
      const [row] = await db.query<EvaluatorRow>(
        `UPDATE evaluators SET name = $3, prompt_id = $4, prompt_label = $5, variables = $6, connection_id = $7, score_name = $8,
           agent_id = $9, target = $10, concurrency = $11, max_calls_per_minute = $12, timeout_ms = $13, paused = $14,
           max_daily_cost_usd = $15, updated_at = now()
         WHERE evaluator_id = $1 AND project_id = $2 RETURNING ${COLUMNS}`,
        fields(r),
      );
      return row;
    },

    async get(projectId: string, evaluatorId: string): Promise<EvaluatorRow | undefined> {
      const [row] = await db.query<EvaluatorRow>(`SELECT ${COLUMNS} FROM evaluators WHERE project_id = $1 AND evaluator_id = $2`, [
        projectId,
        evaluatorId,
      ]);
      return row;
    },

    async list(projectId: string): Promise<EvaluatorRow[]> {
      return db.query<EvaluatorRow>(`SELECT ${COLUMNS} FROM evaluators WHERE project_id = $1 ORDER BY name`, [projectId]);
    },

    /** Every live evaluator of every project (new executions, or a run's items linked since): what the scan looks for work for. */
    async scannable(): Promise<EvaluatorRow[]> {
      return db.query<EvaluatorRow>(
        `SELECT ${COLUMNS} FROM evaluators WHERE NOT paused AND target->>'kind' IN ('executions', 'dataset_run')`,
      );
    },

    async setScannedTo(projectId: string, evaluatorId: string, at: Date): Promise<void> {
      await db.query('UPDATE evaluators SET scanned_to = $3 WHERE project_id = $1 AND evaluator_id = $2', [projectId, evaluatorId, at]);
    },

    async remove(projectId: string, evaluatorId: string): Promise<boolean> {
      await db.query('DELETE FROM evaluations WHERE project_id = $1 AND evaluator_id = $2', [projectId, evaluatorId]);
      const rows = await db.query('DELETE FROM evaluators WHERE project_id = $1 AND evaluator_id = $2 RETURNING evaluator_id', [
        projectId,
        evaluatorId,
      ]);
      return rows.length > 0;
    },

    /** Queues these executions; returns the ones that were not queued before (each is judged at most once). */
    async queue(projectId: string, evaluatorId: string, traceIds: string[]): Promise<string[]> {
      if (traceIds.length === 0) return [];
      const rows = await db.query<{ trace_id: string }>(
        `INSERT INTO evaluations (project_id, evaluator_id, trace_id, status)
         SELECT $1, $2, t, 'queued' FROM unnest($3::text[]) AS t
         ON CONFLICT DO NOTHING RETURNING trace_id`,
        [projectId, evaluatorId, traceIds],
      );
      return rows.map((r) => r.trace_id);
    },

    async evaluation(projectId: string, evaluatorId: string, traceId: string): Promise<EvaluationRow | undefined> {
      const [row] = await db.query<EvaluationRow>(
        `SELECT trace_id, status, attempts, score_id, judge_trace_id, error, created_at, updated_at FROM evaluations
         WHERE project_id = $1 AND evaluator_id = $2 AND trace_id = $3`,
        [projectId, evaluatorId, traceId],
      );
      return row;
    },

    /** An attempt that will be retried: counted, its error kept; the evaluation stays queued. */
    async attemptFailed(projectId: string, evaluatorId: string, traceId: string, error: string): Promise<void> {
      await db.query(
        `UPDATE evaluations SET attempts = attempts + 1, error = $4, updated_at = now()
         WHERE project_id = $1 AND evaluator_id = $2 AND trace_id = $3 AND status = 'queued'`,
        [projectId, evaluatorId, traceId, error],
      );
    },

    /** The end of an evaluation: done (its score and judge call) or failed (its reason). Only a queued one ends. */
    async finish(
      projectId: string,
      evaluatorId: string,
      traceId: string,
      end: { status: 'done'; scoreId: string; judgeTraceId: string } | { status: 'failed'; error: string; judgeTraceId?: string },
    ): Promise<void> {
      await db.query(
        `UPDATE evaluations SET status = $4, attempts = attempts + 1, score_id = $5, judge_trace_id = $6, error = $7, updated_at = now()
         WHERE project_id = $1 AND evaluator_id = $2 AND trace_id = $3 AND status = 'queued'`,
        [
          projectId,
          evaluatorId,
          traceId,
          end.status,
          end.status === 'done' ? end.scoreId : null,
          end.judgeTraceId ?? null,
          end.status === 'failed' ? end.error : null,
        ],
      );
    },

    async counts(projectId: string, evaluatorId: string): Promise<EvaluationCounts> {
      const rows = await db.query<{ status: EvaluationStatus; n: number }>(
        'SELECT status, count(*)::int AS n FROM evaluations WHERE project_id = $1 AND evaluator_id = $2 GROUP BY status',
        [projectId, evaluatorId],
      );
      const [last] = await db.query<{ error: string; updated_at: Date }>(
        `SELECT error, updated_at FROM evaluations WHERE project_id = $1 AND evaluator_id = $2 AND status = 'failed'
         ORDER BY updated_at DESC LIMIT 1`,
        [projectId, evaluatorId],
      );
      const n = (s: EvaluationStatus) => rows.find((r) => r.status === s)?.n ?? 0;
      return {
        queued: n('queued'),
        done: n('done'),
        failed: n('failed'),
        last_error: last?.error ?? null,
        last_error_at: last?.updated_at.toISOString() ?? null,
      };
    },

    /** Queued evaluations not touched since `before`, oldest first (re-enqueued after a resume or a lost job). */
    async queuedSince(projectId: string, evaluatorId: string, before: Date, limit: number): Promise<string[]> {
      const rows = await db.query<{ trace_id: string }>(
        `SELECT trace_id FROM evaluations WHERE project_id = $1 AND evaluator_id = $2 AND status = 'queued' AND updated_at <= $3
         ORDER BY updated_at LIMIT $4`,
        [projectId, evaluatorId, before, limit],
      );
      return rows.map((r) => r.trace_id);
    },

    async evaluationPage(projectId: string, evaluatorId: string, q: { status?: EvaluationStatus; limit: number; cursor?: string }) {
      const params: unknown[] = [projectId, evaluatorId, q.status ?? null, q.limit];
      let after = '';
      if (q.cursor) {
        const [at, id] = decodeCursor(q.cursor);
        params.push(at, id);
        after = "AND (date_trunc('milliseconds', updated_at), trace_id) < ($5::timestamptz, $6)";
      }
      const rows = await db.query<EvaluationRow>(
        `SELECT trace_id, status, attempts, score_id, judge_trace_id, error, created_at, updated_at FROM evaluations
         WHERE project_id = $1 AND evaluator_id = $2 AND ($3::text IS NULL OR status = $3) ${after}
         ORDER BY date_trunc('milliseconds', updated_at) DESC, trace_id DESC LIMIT $4`,
        params,
      );
      const last = rows[rows.length - 1];
      return { rows, next_cursor: rows.length === q.limit && last ? encodeCursor(last.updated_at, last.trace_id) : null };
    },
  };
}

export type EvaluatorRepository = ReturnType<typeof createEvaluatorRepository>;
