// The `experiments` and `experiment_items` tables (schema/postgres/019): every statement that reads
// or writes them, each scoped by project_id or by an experiment id read under one. An experiment
// pins its dataset's live items (at their current versions) when it is created; the process that
// drives it holds a lease, renewed as it goes, that another process takes over once it expired.
import { notFound } from '../errors.ts';
import type { PostgresStore, Queryable } from '../stores/postgres.ts';
import { isUuid } from './dataset-repository.ts';
import type { Check } from './experiment-checks.ts';

export type ExperimentStatus = 'queued' | 'running' | 'done' | 'capped' | 'blocked' | 'failed' | 'cancelled';
export const UNFINISHED: readonly ExperimentStatus[] = ['queued', 'running'];

export type ExperimentRow = {
  experiment_id: string;
  project_id: string;
  dataset_id: string;
  run_id: string;
  seq: string;
  name: string;
  prompt_id: string;
  prompt_version: number;
  connection_id: string;
  evaluator_ids: string[];
  checks: Check[];
  variables: Record<string, string>;
  config: Record<string, unknown>;
  /** The time its items were pinned as of, when it was not its creation */
  dataset_as_of: Date | null;
  concurrency: number;
  max_attempts: number;
  timeout_ms: number;
  /** numeric as text (exact), null: no cap */
  max_cost_usd: string | null;
  spent_usd: string;
  status: ExperimentStatus;
  status_detail: string | null;
  created_by: string;
  api_key_id: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
};

export type NewExperiment = Omit<
  ExperimentRow,
  'seq' | 'dataset_as_of' | 'spent_usd' | 'status' | 'status_detail' | 'created_at' | 'started_at' | 'finished_at'
>;

export type ExperimentItemRow = {
  item_id: string;
  item_version: number;
  item_seq: string;
  status: 'pending' | 'done' | 'failed';
  trace_id: string | null;
  output: string | null;
  cost_usd: string;
  attempts: number;
  error: string | null;
};

export type ItemCounts = { total: number; pending: number; done: number; failed: number };

const COLUMNS = `experiment_id, project_id, dataset_id, run_id, seq::text AS seq, name, prompt_id, prompt_version, connection_id,
  evaluator_ids, checks, variables, config, dataset_as_of, concurrency, max_attempts, timeout_ms, max_cost_usd::text AS max_cost_usd,
  spent_usd::text AS spent_usd, status, status_detail, created_by, api_key_id, created_at, started_at, finished_at`;
const ITEM_COLUMNS =
  'item_id, item_version, item_seq::text AS item_seq, status, trace_id, output, cost_usd::text AS cost_usd, attempts, error';

const addSpent = (tx: Queryable, experimentId: string, costUsd: string) =>
  tx.query(`UPDATE experiments SET spent_usd = spent_usd + $2::numeric, updated_at = now() WHERE experiment_id = $1`, [
    experimentId,
    costUsd,
  ]);

export function createExperimentRepository(db: PostgresStore) {
  return {
    /**
     * The experiment and its pinned items, in one transaction: the dataset's live items at their
     * current versions, or as they were at `asOf`.
     */
    async create(e: NewExperiment, asOf?: Date): Promise<{ row: ExperimentRow; items: number }> {
      return db.transaction(async (tx) => {
        const [row] = await tx.query<ExperimentRow>(
          `INSERT INTO experiments (experiment_id, project_id, dataset_id, run_id, name, prompt_id, prompt_version, connection_id,
             evaluator_ids, checks, variables, config, concurrency, max_attempts, timeout_ms, max_cost_usd, status, created_by, api_key_id,
             dataset_as_of)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'queued', $17, $18, $19) RETURNING ${COLUMNS}`,
          [
            e.experiment_id,
            e.project_id,
            e.dataset_id,
            e.run_id,
            e.name,
            e.prompt_id,
            e.prompt_version,
            e.connection_id,
            JSON.stringify(e.evaluator_ids),
            JSON.stringify(e.checks),
            JSON.stringify(e.variables),
            JSON.stringify(e.config),
            e.concurrency,
            e.max_attempts,
            e.timeout_ms,
            e.max_cost_usd,
            e.created_by,
            e.api_key_id,
            asOf ?? null,
          ],
        );
        // As of a time: the items that existed and were not archived then, each at its version then.
        const pinned = await tx.query(
          asOf === undefined
            ? `INSERT INTO experiment_items (experiment_id, item_id, project_id, item_version, item_seq, status)
               SELECT $1, item_id, project_id, version, seq, 'pending' FROM dataset_items
               WHERE project_id = $2 AND dataset_id = $3 AND archived_at IS NULL RETURNING item_id`
            : `INSERT INTO experiment_items (experiment_id, item_id, project_id, item_version, item_seq, status)
               SELECT $1, i.item_id, i.project_id, v.version, i.seq, 'pending' FROM dataset_items i
               JOIN LATERAL (SELECT max(version) AS version FROM dataset_item_versions
                             WHERE item_id = i.item_id AND project_id = i.project_id AND created_at <= $4) v ON v.version IS NOT NULL
               WHERE i.project_id = $2 AND i.dataset_id = $3 AND (i.archived_at IS NULL OR i.archived_at > $4) RETURNING item_id`,
          [e.experiment_id, e.project_id, e.dataset_id, ...(asOf === undefined ? [] : [asOf])],
        );
        return { row: row!, items: pinned.length };
      });
    },

    /** An experiment of the project (of `datasetId` when given); 404 otherwise. */
    async get(projectId: string, experimentId: string, datasetId?: string): Promise<ExperimentRow> {
      const [row] =
        isUuid(experimentId) && (datasetId === undefined || isUuid(datasetId))
          ? await db.query<ExperimentRow>(
              `SELECT ${COLUMNS} FROM experiments WHERE project_id = $1 AND experiment_id = $2 AND ($3::uuid IS NULL OR dataset_id = $3)`,
              [projectId, experimentId, datasetId ?? null],
            )
          : [];
      if (!row) throw notFound(`Experiment ${experimentId}`, 'experiment');
      return row;
    },

    /** Experiments of a dataset (or of the project), newest first, before seq `beforeSeq` (keyset). */
    async list(projectId: string, q: { datasetId?: string; limit: number; beforeSeq?: string }): Promise<ExperimentRow[]> {
      return db.query<ExperimentRow>(
        `SELECT ${COLUMNS} FROM experiments
         WHERE project_id = $1 AND ($2::uuid IS NULL OR dataset_id = $2) AND ($3::bigint IS NULL OR experiments.seq < $3::bigint)
         ORDER BY experiments.seq DESC LIMIT $4`,
        [projectId, q.datasetId ?? null, q.beforeSeq ?? null, q.limit],
      );
    },

    /** Item counts by status, for each of these experiments. */
    async counts(experimentIds: string[]): Promise<Map<string, ItemCounts>> {
      const rows = await db.query<{ experiment_id: string; status: string; n: number }>(
        `SELECT experiment_id, status, count(*)::int AS n FROM experiment_items WHERE experiment_id = ANY($1::uuid[]) GROUP BY 1, 2`,
        [experimentIds],
      );
      const out = new Map<string, ItemCounts>(experimentIds.map((id) => [id, { total: 0, pending: 0, done: 0, failed: 0 }]));
      for (const r of rows) {
        const c = out.get(r.experiment_id)!;
        c[r.status as 'pending' | 'done' | 'failed'] += r.n;
        c.total += r.n;
      }
      return out;
    },

    /**
     * Takes (or renews) the lease of an unfinished experiment for `owner`: the row (now `running`)
     * when it is free, expired or already `owner`'s; undefined when another process holds it or it ended.
     */
    async claim(experimentId: string, owner: string, leaseMs: number): Promise<ExperimentRow | undefined> {
      const [row] = await db.query<ExperimentRow>(
        `UPDATE experiments SET lease_owner = $2, lease_until = now() + $3 * interval '1 millisecond', status = 'running',
           started_at = COALESCE(started_at, now()), updated_at = now()
         WHERE experiment_id = $1 AND status IN ('queued', 'running')
           AND (lease_until IS NULL OR lease_until < now() OR lease_owner = $2)
         RETURNING ${COLUMNS}`,
        [experimentId, owner, leaseMs],
      );
      return row;
    },

    /** Gives the lease up (a stop before the end): another process may take the experiment over at once. */
    async release(experimentId: string, owner: string): Promise<void> {
      await db.query(`UPDATE experiments SET lease_owner = NULL, lease_until = NULL WHERE experiment_id = $1 AND lease_owner = $2`, [
        experimentId,
        owner,
      ]);
    },

    /** Ends a running experiment held by `owner` with its final status (a cancelled one stays cancelled). */
    async finish(experimentId: string, owner: string, status: ExperimentStatus, detail: string | null): Promise<void> {
      await db.query(
        `UPDATE experiments SET status = $3, status_detail = $4, finished_at = now(), lease_owner = NULL, lease_until = NULL, updated_at = now()
         WHERE experiment_id = $1 AND lease_owner = $2 AND status = 'running'`,
        [experimentId, owner, status, detail],
      );
    },

    /** Cancels an unfinished experiment; false when it had ended already. */
    async cancel(projectId: string, experimentId: string): Promise<boolean> {
      const rows = await db.query(
        `UPDATE experiments SET status = 'cancelled', status_detail = 'cancelled by request', finished_at = now(), updated_at = now()
         WHERE project_id = $1 AND experiment_id = $2 AND status IN ('queued', 'running') RETURNING experiment_id`,
        [projectId, experimentId],
      );
      return rows.length > 0;
    },

    /** Queues an ended experiment again (its pending items go on), with a new cap when given; false when it is unfinished. */
    async resume(projectId: string, experimentId: string, maxCostUsd: string | null | undefined): Promise<boolean> {
      const rows = await db.query(
        `UPDATE experiments SET status = 'queued', status_detail = NULL, finished_at = NULL,
           max_cost_usd = CASE WHEN $3::boolean THEN $4::numeric ELSE max_cost_usd END, updated_at = now()
         WHERE project_id = $1 AND experiment_id = $2 AND status NOT IN ('queued', 'running') RETURNING experiment_id`,
        [projectId, experimentId, maxCostUsd !== undefined, maxCostUsd ?? null],
      );
      return rows.length > 0;
    },

    /** Unfinished experiments no process holds (never started, released, or their lease expired). */
    async orphaned(limit: number): Promise<Array<{ project_id: string; experiment_id: string }>> {
      return db.query(
        `SELECT project_id, experiment_id FROM experiments
         WHERE status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < now()) ORDER BY seq LIMIT $1`,
        [limit],
      );
    },

    /** The pinned items not yet ended, in dataset order. */
    async pendingItems(experimentId: string): Promise<ExperimentItemRow[]> {
      return db.query<ExperimentItemRow>(
        `SELECT ${ITEM_COLUMNS} FROM experiment_items WHERE experiment_id = $1 AND status = 'pending' ORDER BY item_seq`,
        [experimentId],
      );
    },

    /**
     * The model call of an item is recorded: its trace id and answer are kept (it is never called
     * again) and what it cost is added to the item and the experiment at once.
     */
    async called(experimentId: string, itemId: string, c: { traceId: string; output: string | null; attempts: number; costUsd: string }) {
      await db.transaction(async (tx) => {
        await tx.query(
          `UPDATE experiment_items SET trace_id = $3, output = $4, attempts = $5, cost_usd = cost_usd + $6::numeric, updated_at = now()
           WHERE experiment_id = $1 AND item_id = $2`,
          [experimentId, itemId, c.traceId, c.output, c.attempts, c.costUsd],
        );
        await addSpent(tx, experimentId, c.costUsd);
      });
    },

    /** An item ended (done or failed); what its judges cost is added to the item and the experiment. */
    async ended(experimentId: string, itemId: string, e: { status: 'done' | 'failed'; error: string | null; costUsd: string }) {
      await db.transaction(async (tx) => {
        await tx.query(
          `UPDATE experiment_items SET status = $3, error = $4, cost_usd = cost_usd + $5::numeric, updated_at = now()
           WHERE experiment_id = $1 AND item_id = $2`,
          [experimentId, itemId, e.status, e.error, e.costUsd],
        );
        await addSpent(tx, experimentId, e.costUsd);
      });
    },

    /** What an item still pending cost so far (judges of a stopped item), added to it and the experiment. */
    async addCost(experimentId: string, itemId: string, costUsd: string) {
      await db.transaction(async (tx) => {
        await tx.query(
          `UPDATE experiment_items SET cost_usd = cost_usd + $3::numeric, updated_at = now() WHERE experiment_id = $1 AND item_id = $2`,
          [experimentId, itemId, costUsd],
        );
        await addSpent(tx, experimentId, costUsd);
      });
    },

    /** A page of an experiment's items in dataset order after item seq `afterSeq`. */
    async items(experimentId: string, limit: number, afterSeq: string | undefined): Promise<ExperimentItemRow[]> {
      return db.query<ExperimentItemRow>(
        `SELECT ${ITEM_COLUMNS} FROM experiment_items WHERE experiment_id = $1 AND item_seq > $2::bigint ORDER BY experiment_items.item_seq LIMIT $3`,
        [experimentId, afterSeq ?? '0', limit],
      );
    },
  };
}

export type ExperimentRepository = ReturnType<typeof createExperimentRepository>;
