// The `dataset_runs` and `dataset_run_items` tables (schema/postgres/014): every statement that
// reads or writes them, each scoped by project_id. A run item is the link of one dataset item (at
// the version the run used) to the execution it produced: a trace id, stored as it arrives, joined
// to the execution when the run is read.
import { conflict, notFound } from '../errors.ts';
import type { PostgresStore } from '../stores/postgres.ts';
import { isUuid } from './dataset-repository.ts';

export interface RunPrompt {
  prompt_id: string;
  version: number;
}

export interface RunInput {
  name: string;
  description?: string;
  prompts?: RunPrompt[];
  model?: string;
  metadata?: Record<string, unknown>;
}

export type RunRow = {
  run_id: string;
  dataset_id: string;
  seq: string;
  name: string;
  description: string | null;
  prompts: RunPrompt[];
  model: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
};

export type RunLink = {
  item_id: string;
  item_version: number;
  item_seq: string;
  trace_id: string | null;
  status: 'done' | 'failed';
  error: string | null;
  linked_by: 'api' | 'otel';
};

export type StoredRunLink = RunLink & { updated_at: Date };

// ORDER BY names the table's column: a bare seq / item_seq would be the text alias below, which
// orders "10" before "9" (and a keyset page after it would repeat rows).
const RUN_COLUMNS = 'run_id, dataset_id, seq::text AS seq, name, description, prompts, model, metadata, created_at';
const LINK_COLUMNS = 'item_id, item_version, item_seq::text AS item_seq, trace_id, status, error, linked_by, updated_at';

export function createRunRepository(db: PostgresStore) {
  return {
    async create(projectId: string, datasetId: string, runId: string, input: RunInput): Promise<RunRow> {
      const [row] = await db
        .query<RunRow>(
          `INSERT INTO dataset_runs (run_id, project_id, dataset_id, name, description, prompts, model, metadata)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${RUN_COLUMNS}`,
          [
            runId,
            projectId,
            datasetId,
            input.name,
            input.description ?? null,
            JSON.stringify(input.prompts ?? []),
            input.model ?? null,
            JSON.stringify(input.metadata ?? {}),
          ],
        )
        .catch((err: { code?: string }) => {
          if (err.code === '23505') throw conflict(`name: this dataset has a run named "${input.name}"`);
          throw err;
        });
      return row!;
    },

    /** A run of the project (of `datasetId` when given); 404 otherwise. */
    async get(projectId: string, runId: string, datasetId?: string): Promise<RunRow> {
      const [row] =
        isUuid(runId) && (datasetId === undefined || isUuid(datasetId))
          ? await db.query<RunRow>(
              `SELECT ${RUN_COLUMNS} FROM dataset_runs WHERE project_id = $1 AND run_id = $2 AND ($3::uuid IS NULL OR dataset_id = $3)`,
              [projectId, runId, datasetId ?? null],
            )
          : [];
      if (!row) throw notFound('Run');
      return row;
    },

    /** Of these run ids, the runs of the project (unknown and malformed ids left out). */
    async some(projectId: string, runIds: string[]): Promise<RunRow[]> {
      const ids = runIds.filter(isUuid);
      if (ids.length === 0) return [];
      return db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM dataset_runs WHERE project_id = $1 AND run_id = ANY($2::uuid[])`, [
        projectId,
        ids,
      ]);
    },

    /**
     * The newest run of a dataset whose `prompts` name this prompt version (a release gate's
     * evidence, release-gates/label-gates.ts); of the runs with these ids only, when given. A run
     * an experiment of the service is still making (queued or running) is no evidence yet.
     */
    async latestWithPrompt(projectId: string, datasetId: string, prompt: RunPrompt, runId?: string): Promise<RunRow | undefined> {
      if (!isUuid(datasetId) || (runId !== undefined && !isUuid(runId))) return undefined;
      const [row] = await db.query<RunRow>(
        `SELECT ${RUN_COLUMNS} FROM dataset_runs
         WHERE project_id = $1 AND dataset_id = $2 AND prompts @> $3::jsonb AND ($4::uuid IS NULL OR run_id = $4)
           AND NOT EXISTS (SELECT 1 FROM experiments x WHERE x.run_id = dataset_runs.run_id AND x.status IN ('queued', 'running'))
         ORDER BY dataset_runs.seq DESC LIMIT 1`,
        [projectId, datasetId, JSON.stringify([{ prompt_id: prompt.prompt_id, version: prompt.version }]), runId ?? null],
      );
      return row;
    },

    /**
     * The project's runs, of any dataset, whose `prompts` name this prompt version: newest first,
     * before seq `beforeSeq` (keyset). A project has few runs: its rows are read by project.
     */
    async withPrompt(projectId: string, prompt: RunPrompt, limit: number, beforeSeq: string | undefined): Promise<RunRow[]> {
      return db.query<RunRow>(
        `SELECT ${RUN_COLUMNS} FROM dataset_runs
         WHERE project_id = $1 AND prompts @> $2::jsonb AND ($3::bigint IS NULL OR dataset_runs.seq < $3::bigint)
         ORDER BY dataset_runs.seq DESC LIMIT $4`,
        [projectId, JSON.stringify([{ prompt_id: prompt.prompt_id, version: prompt.version }]), beforeSeq ?? null, limit],
      );
    },

    /** Runs of a dataset, oldest first, after seq `afterSeq` (keyset). */
    async list(projectId: string, datasetId: string, limit: number, afterSeq: string | undefined): Promise<RunRow[]> {
      return db.query<RunRow>(
        `SELECT ${RUN_COLUMNS} FROM dataset_runs WHERE project_id = $1 AND dataset_id = $2 AND seq > $3::bigint ORDER BY dataset_runs.seq LIMIT $4`,
        [projectId, datasetId, afterSeq ?? '0', limit],
      );
    },

    /** How many runs a dataset has. */
    async count(projectId: string, datasetId: string): Promise<number> {
      const [r] = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM dataset_runs WHERE project_id = $1 AND dataset_id = $2', [
        projectId,
        datasetId,
      ]);
      return Number(r?.n ?? 0);
    },

    async remove(projectId: string, datasetId: string, runId: string): Promise<void> {
      const rows =
        isUuid(runId) && isUuid(datasetId)
          ? await db.query('DELETE FROM dataset_runs WHERE project_id = $1 AND dataset_id = $2 AND run_id = $3 RETURNING run_id', [
              projectId,
              datasetId,
              runId,
            ])
          : [];
      if (rows.length === 0) throw notFound('Run');
    },

    /** Links items of a run to what they produced; an item linked again takes the newer link. */
    async upsertLinks(projectId: string, runId: string, links: readonly RunLink[]): Promise<void> {
      if (links.length === 0) return;
      await db.query(
        `INSERT INTO dataset_run_items (run_id, item_id, project_id, item_version, item_seq, trace_id, status, error, linked_by)
         SELECT $1, (e.v->>'item_id')::uuid, $2, (e.v->>'item_version')::int, (e.v->>'item_seq')::bigint, e.v->>'trace_id',
           e.v->>'status', e.v->>'error', e.v->>'linked_by'
         FROM jsonb_array_elements($3::jsonb) AS e(v)
         ON CONFLICT (run_id, item_id) DO UPDATE SET item_version = EXCLUDED.item_version, trace_id = EXCLUDED.trace_id,
           status = EXCLUDED.status, error = EXCLUDED.error, linked_by = EXCLUDED.linked_by, updated_at = now()`,
        [runId, projectId, JSON.stringify(links)],
      );
    },

    /** A page of a run's items in dataset order, after item seq `afterSeq`; every one when `limit` is absent. */
    async links(
      projectId: string,
      runId: string,
      q: { limit?: number; afterSeq?: string; itemIds?: string[] } = {},
    ): Promise<StoredRunLink[]> {
      return db.query<StoredRunLink>(
        `SELECT ${LINK_COLUMNS} FROM dataset_run_items
         WHERE project_id = $1 AND run_id = $2 AND item_seq > $3::bigint AND ($4::uuid[] IS NULL OR item_id = ANY($4::uuid[]))
         ORDER BY dataset_run_items.item_seq ${q.limit !== undefined ? 'LIMIT $5' : ''}`,
        [projectId, runId, q.afterSeq ?? '0', q.itemIds?.filter(isUuid) ?? null, ...(q.limit !== undefined ? [q.limit] : [])],
      );
    },

    /** The trace ids of a run's linked items (failed items without one left out). */
    async traceIds(projectId: string, runId: string): Promise<string[]> {
      const rows = await db.query<{ trace_id: string }>(
        `SELECT trace_id FROM dataset_run_items WHERE project_id = $1 AND run_id = $2 AND trace_id IS NOT NULL ORDER BY item_seq`,
        [projectId, runId],
      );
      return rows.map((r) => r.trace_id);
    },

    /** The item of a run linked to this trace id (the first in dataset order if several are). */
    async linkOfTrace(projectId: string, runId: string, traceId: string): Promise<StoredRunLink | undefined> {
      const [row] = await db.query<StoredRunLink>(
        `SELECT ${LINK_COLUMNS} FROM dataset_run_items WHERE project_id = $1 AND run_id = $2 AND trace_id = $3 ORDER BY item_seq LIMIT 1`,
        [projectId, runId, traceId],
      );
      return row;
    },
  };
}

export type RunRepository = ReturnType<typeof createRunRepository>;
