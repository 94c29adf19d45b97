// PostgreSQL side of repricing: the reprice_jobs rows (schema/postgres/008) and their progress.
import type { Queryable } from '../stores/postgres.ts';
import type { RepriceScope } from '../executions/reprice-ledger-repository.ts';

export type RepriceStatus = 'queued' | 'running' | 'done' | 'failed';

export type RepriceJobRow = {
  reprice_id: string;
  project_id: string;
  provider: string | null;
  model: string | null;
  from_at: Date;
  to_at: Date;
  status: RepriceStatus;
  requested_by: string;
  executions_total: string;
  executions_scanned: string;
  executions_changed: string;
  spend_delta_usd: string;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
};

export type { RepriceScope };

const COLUMNS = `reprice_id::text AS reprice_id, project_id, provider, model, from_at, to_at, status, requested_by, executions_total::text AS executions_total,
  executions_scanned::text AS executions_scanned, executions_changed::text AS executions_changed, spend_delta_usd::text AS spend_delta_usd,
  error, created_at, started_at, finished_at`;

export function createRepriceJobStore(pg: Queryable) {
  return {
    /** A new queued job, or undefined when the project already has one unfinished. */
    async create(projectId: string, scope: RepriceScope, requestedBy: string): Promise<RepriceJobRow | undefined> {
      const rows = await pg.query<RepriceJobRow>(
        `INSERT INTO reprice_jobs (project_id, provider, model, from_at, to_at, status, requested_by)
         VALUES ($1, $2, $3, $4, $5, 'queued', $6)
         ON CONFLICT (project_id) WHERE status IN ('queued', 'running') DO NOTHING
         RETURNING ${COLUMNS}`,
        [projectId, scope.provider ?? null, scope.model ?? null, scope.from, scope.to, requestedBy],
      );
      return rows[0];
    },
    async get(projectId: string, id: string): Promise<RepriceJobRow | undefined> {
      if (!/^\d{1,18}$/.test(id)) return undefined;
      const rows = await pg.query<RepriceJobRow>(`SELECT ${COLUMNS} FROM reprice_jobs WHERE project_id = $1 AND reprice_id = $2`, [
        projectId,
        id,
      ]);
      return rows[0];
    },
    async getById(id: string): Promise<RepriceJobRow | undefined> {
      const rows = await pg.query<RepriceJobRow>(`SELECT ${COLUMNS} FROM reprice_jobs WHERE reprice_id = $1`, [id]);
      return rows[0];
    },
    /** Jobs a crash or restart left unfinished (enqueued again at boot: a job is idempotent). */
    async unfinished(): Promise<RepriceJobRow[]> {
      return pg.query<RepriceJobRow>(`SELECT ${COLUMNS} FROM reprice_jobs WHERE status IN ('queued', 'running') ORDER BY reprice_id`);
    },
    /**
     * A run begins (again, after a crash): the scan restarts; what earlier runs changed stays
     * counted (a run never sees its own corrections as changes: they are priced already).
     */
    async start(id: string, total: bigint): Promise<void> {
      await pg.query(
        `UPDATE reprice_jobs SET status = 'running', started_at = COALESCE(started_at, now()), executions_total = $2,
        executions_scanned = 0, error = NULL WHERE reprice_id = $1`,
        [id, total.toString()],
      );
    },
    /** After a page: `scanned` so far in this run; `changed` and `deltaUsd` of this page only. */
    async progress(id: string, scanned: bigint, changed: number, deltaUsd: string): Promise<void> {
      await pg.query(
        'UPDATE reprice_jobs SET executions_scanned = $2, executions_changed = executions_changed + $3, spend_delta_usd = spend_delta_usd + $4::numeric WHERE reprice_id = $1',
        [id, scanned.toString(), changed, deltaUsd],
      );
    },
    async finish(id: string, status: 'done' | 'failed', error?: string): Promise<void> {
      await pg.query('UPDATE reprice_jobs SET status = $2, error = $3, finished_at = now() WHERE reprice_id = $1', [
        id,
        status,
        error ?? null,
      ]);
    },
  };
}

export type RepriceJobStore = ReturnType<typeof createRepriceJobStore>;
