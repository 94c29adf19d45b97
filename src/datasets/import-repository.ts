// The `dataset_imports` table (schema/postgres/017): an import's progress, committed with each batch
// of its items in one transaction, so what the row says was stored is what was stored. Every query
// is scoped by project_id.
import { conflict, notFound } from '../errors.ts';
import type { PostgresStore } from '../stores/postgres.ts';
import { insertItems, isUuid, type NewItem } from './dataset-repository.ts';

export type ImportStatus = 'running' | 'completed' | 'interrupted' | 'failed';

export type ImportRow = {
  import_id: string;
  dataset_id: string;
  format: 'jsonl' | 'csv';
  status: ImportStatus;
  attempt: string;
  attempts: number;
  last_line: string;
  imported: string;
  rejected_count: string;
  rejected: Array<{ line: number; detail: string }>;
  error: string | null;
  started_at: Date;
  updated_at: Date;
  finished_at: Date | null;
};

/** One batch: its items, the lines rejected since the last batch, and the last line read (settled with it). */
export interface ImportBatch {
  items: NewItem[];
  rejected: Array<{ line: number; detail: string }>;
  rejectedCount: number;
  lastLine: number;
}

export const MAX_REJECTED_KEPT = 1_000;

const COLUMNS = `import_id, dataset_id, format, status, attempt, attempts, last_line::text AS last_line, imported::text AS imported,
  rejected_count::text AS rejected_count, rejected, error, started_at, updated_at, finished_at`;

const taken = (importId: string) =>
  conflict(`import ${importId}: a newer request for this import id took it over; this one stopped (GET the import for its progress)`);

export function createImportRepository(db: PostgresStore) {
  return {
    /**
     * Starts a request of the import: creates the row, or takes an existing one over (`attempt`
     * becomes this request's). Returns the row as it was taken: its last_line is where this request
     * resumes.
     */
    async begin(projectId: string, datasetId: string, importId: string, format: 'jsonl' | 'csv', attempt: string): Promise<ImportRow> {
      return db.transaction(async (tx) => {
        const [row] = await tx.query<ImportRow>(
          `INSERT INTO dataset_imports (dataset_id, import_id, project_id, format, status, attempt) VALUES ($1, $2, $3, $4, 'running', $5)
           ON CONFLICT (dataset_id, import_id) DO UPDATE SET attempt = EXCLUDED.attempt, attempts = dataset_imports.attempts + 1,
             status = 'running', error = NULL, finished_at = NULL, updated_at = now()
           WHERE dataset_imports.project_id = EXCLUDED.project_id AND dataset_imports.format = EXCLUDED.format
           RETURNING ${COLUMNS}`,
          [datasetId, importId, projectId, format, attempt],
        );
        if (row) return row;
        const [other] = await tx.query<{ format: string }>(
          'SELECT format FROM dataset_imports WHERE project_id = $1 AND dataset_id = $2 AND import_id = $3',
          [projectId, datasetId, importId],
        );
        if (other) throw conflict(`import_id: import ${importId} of this dataset is a ${other.format} import; send the same file`);
        throw notFound('Dataset'); // the id is another project's dataset's: never said so
      });
    },

    /** Stores a batch and moves the import's progress past it, in one transaction; refused (409) once a newer request took over. */
    async commit(projectId: string, datasetId: string, importId: string, attempt: string, batch: ImportBatch): Promise<void> {
      await db.transaction(async (tx) => {
        const [mine] = await tx.query(
          'SELECT 1 FROM dataset_imports WHERE project_id = $1 AND dataset_id = $2 AND import_id = $3 AND attempt = $4 FOR UPDATE',
          [projectId, datasetId, importId, attempt],
        );
        if (!mine) throw taken(importId);
        const stored = await insertItems(tx, projectId, datasetId, batch.items, true);
        await tx.query(
          `UPDATE dataset_imports SET last_line = GREATEST(last_line, $4), imported = imported + $5, rejected_count = rejected_count + $6,
             rejected = CASE WHEN jsonb_array_length(rejected) >= ${MAX_REJECTED_KEPT} THEN rejected
               ELSE jsonb_path_query_array(rejected || $7::jsonb, '$[0 to ${MAX_REJECTED_KEPT - 1}]') END,
             updated_at = now()
           WHERE project_id = $1 AND dataset_id = $2 AND import_id = $3`,
          [projectId, datasetId, importId, batch.lastLine, stored, batch.rejectedCount, JSON.stringify(batch.rejected)],
        );
      });
    },

    /** Ends this request's part: completed, interrupted or failed (with why); a request taken over changes nothing. */
    async finish(projectId: string, datasetId: string, importId: string, attempt: string, status: ImportStatus, error?: string) {
      const [row] = await db.query<ImportRow>(
        `UPDATE dataset_imports SET status = $5, error = $6, updated_at = now(), finished_at = now()
         WHERE project_id = $1 AND dataset_id = $2 AND import_id = $3 AND attempt = $4 RETURNING ${COLUMNS}`,
        [projectId, datasetId, importId, attempt, status, error?.slice(0, 2000) ?? null],
      );
      return row;
    },

    async get(projectId: string, datasetId: string, importId: string): Promise<ImportRow> {
      if (!isUuid(datasetId)) throw notFound('Dataset import');
      const [row] = await db.query<ImportRow>(
        `SELECT ${COLUMNS} FROM dataset_imports WHERE project_id = $1 AND dataset_id = $2 AND import_id = $3`,
        [projectId, datasetId, importId],
      );
      if (!row) throw notFound('Dataset import');
      return row;
    },

    /** A dataset's imports, newest first. */
    async list(projectId: string, datasetId: string, limit: number): Promise<ImportRow[]> {
      return db.query<ImportRow>(
        `SELECT ${COLUMNS} FROM dataset_imports WHERE project_id = $1 AND dataset_id = $2 ORDER BY started_at DESC, import_id LIMIT $3`,
        [projectId, datasetId, limit],
      );
    },
  };
}

export type ImportRepository = ReturnType<typeof createImportRepository>;
