// Imports as records (docs/datasets.md, "Import and export"). Each import has an id (the client's
// `import_id`, else one made here) and a row that commits with every batch of its items: what it
// stored, up to which line, and whether it completed or was cut. A request with an import id seen
// before takes the import over and reads past the lines already settled, and an item's id is
// derived from (dataset, import id, line), so re-sending the same file after a cut stores each line
// once. No Koa here.
import crypto from 'node:crypto';
import { badRequest, DomainError } from '../errors.ts';
import type { DatasetRepository } from './dataset-repository.ts';
import type { ImportRepository, ImportRow } from './import-repository.ts';
import { BodyCut, importItems, type ImportFormat, type ImportOptions } from './import.ts';

export const IMPORT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The item a line of an import makes: the same id on every retry of that import (a UUID, version 8: hash-based). */
export function importedItemId(datasetId: string, importId: string, line: number): string {
  const h = crypto.createHash('sha256').update(`${datasetId}\n${importId}\n${line}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export function presentImport(r: ImportRow) {
  return {
    import_id: r.import_id,
    dataset_id: r.dataset_id,
    format: r.format,
    status: r.status,
    imported: Number(r.imported),
    rejected_count: Number(r.rejected_count),
    rejected: r.rejected,
    last_line: Number(r.last_line),
    attempts: r.attempts,
    error: r.error,
    started_at: r.started_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
  };
}

export interface ImportRequest {
  importId?: string;
  format: ImportFormat;
  body: AsyncIterable<Buffer | string>;
  /** Whether the whole body arrived (the transport knows; a stream that ends early is a cut). */
  isWhole: () => boolean;
  maxLineChars: number;
  problemsOf: ImportOptions['problemsOf'];
}

export function createImports(deps: { imports: ImportRepository; datasets: Pick<DatasetRepository, 'getDataset'> }) {
  const repo = deps.imports;
  return {
    /** Runs (or resumes) an import; answers its record as it ends, with the lines this request read past as settled. */
    async run(projectId: string, datasetId: string, req: ImportRequest) {
      await deps.datasets.getDataset(projectId, datasetId);
      if (req.importId !== undefined && !IMPORT_ID.test(req.importId)) throw badRequest('import_id: 1 to 128 letters, digits or . _ : -');
      const importId = req.importId ?? crypto.randomUUID();
      const attempt = crypto.randomUUID();
      const begun = await repo.begin(projectId, datasetId, importId, req.format, attempt);
      let skippedLines: number;
      try {
        ({ skippedLines } = await importItems(
          req.body,
          req.format,
          {
            maxLineChars: req.maxLineChars,
            problemsOf: req.problemsOf,
            settledThrough: Number(begun.last_line),
            commit: (b) =>
              repo.commit(projectId, datasetId, importId, attempt, {
                items: b.items.map(({ line, item }) => ({ item_id: importedItemId(datasetId, importId, line), ...item })),
                rejected: b.rejected,
                rejectedCount: b.rejectedCount,
                lastLine: b.lastLine,
              }),
          },
          req.isWhole,
        ));
      } catch (err) {
        // A request taken over by a newer one changes nothing here (finish matches its attempt only).
        const cut = err instanceof BodyCut;
        const why =
          cut || err instanceof DomainError ? (err as Error).message : 'a store failed while storing a batch (see the service log)';
        await repo.finish(projectId, datasetId, importId, attempt, cut ? 'interrupted' : 'failed', why).catch(() => undefined);
        throw cut ? badRequest(`import ${importId}: ${why}`) : err;
      }
      const done = await repo.finish(projectId, datasetId, importId, attempt, 'completed');
      return { ...presentImport(done ?? (await repo.get(projectId, datasetId, importId))), skipped_lines: skippedLines };
    },

    async get(projectId: string, datasetId: string, importId: string) {
      return presentImport(await repo.get(projectId, datasetId, importId));
    },

    async list(projectId: string, datasetId: string, limit: number) {
      await deps.datasets.getDataset(projectId, datasetId);
      return { items: (await repo.list(projectId, datasetId, limit)).map(presentImport) };
    },
  };
}

export type Imports = ReturnType<typeof createImports>;
