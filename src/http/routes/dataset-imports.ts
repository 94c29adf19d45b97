// Dataset imports (docs/datasets.md, "Import and export"): the streamed import of JSON Lines or
// CSV, and its record (what an import stored, up to which line, whether it completed or was cut).
// Thin: src/datasets/imports.ts does the work.
import type { Config } from '../../config.ts';
import type { ImportFormat } from '../../datasets/import.ts';
import type { Imports } from '../../datasets/imports.ts';
import { unsupportedMediaType } from '../errors.ts';
import { inputProblems } from '../input-checks.ts';
import type { RouteDef } from './types.ts';

const D = '/api/projects/:project_id/datasets/:dataset_id';
const tag = 'datasets';

export function datasetImportRoutes(config: Config, imports: Imports): RouteDef[] {
  return [
    {
      method: 'POST',
      path: `${D}/items/import`,
      operationId: 'importDatasetItems',
      tag,
      access: 'authenticated',
      need: 'write',
      query: 'DatasetImportQuery',
      rawBody: {
        description:
          'JSON Lines (application/x-ndjson or application/jsonl: one {"input", "expected_output", "metadata", "source_trace_id"} per line) ' +
          'or CSV (text/csv: a header of input or input.<variable>, expected_output, metadata, source_trace_id). Read as a stream: no size ' +
          'limit and no request timeout (cut only after STREAM_IDLE_TIMEOUT_MS without a byte), MAX_JSON_BYTES per line; committed in ' +
          "batches of 1,000 with the import's progress. Re-sending the same file with the same import_id after a cut stores each line once.",
        contentTypes: { 'application/x-ndjson': undefined, 'application/jsonl': undefined, 'text/csv': undefined },
        unbounded: true,
      },
      summary: 'Import items from JSON Lines or CSV; rejected lines are named by line number, the others kept; resumable by import_id',
      responses: {
        200: {
          description: 'The import: totals over all its requests, the first 1,000 rejected lines with why',
          schema: 'DatasetImportResult',
        },
        400: { description: 'A CSV header that names an unknown column, or no input column; a malformed import_id', schema: 'Error' },
        404: { description: 'No such dataset in this project', schema: 'Error' },
        409: {
          description: 'The import_id names an import of the other format, or a newer request took this import over',
          schema: 'Error',
        },
        415: { description: 'Not JSON Lines nor CSV, or a Content-Encoding', schema: 'Error' },
      },
      async handler(ctx) {
        const format: ImportFormat | undefined = ctx.is('application/x-ndjson', 'application/jsonl', 'application/json-lines')
          ? 'jsonl'
          : ctx.is('text/csv')
            ? 'csv'
            : undefined;
        if (!format) throw unsupportedMediaType(ctx.get('Content-Type') || undefined, 'application/x-ndjson or text/csv');
        const encoding = ctx.get('Content-Encoding');
        if (encoding && encoding !== 'identity') throw unsupportedMediaType(`encoding ${encoding}`, 'an uncompressed body');
        ctx.body = await imports.run(ctx.state.projectId!, ctx.params.dataset_id!, {
          importId: (ctx.state.query as { import_id?: string }).import_id,
          format,
          body: ctx.req,
          isWhole: () => ctx.req.complete,
          maxLineChars: config.limits.maxJsonBytes,
          problemsOf: (v, what) => inputProblems(v, what),
        });
      },
    },
    {
      method: 'GET',
      path: `${D}/imports`,
      operationId: 'listDatasetImports',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'DatasetImportListQuery',
      summary: "A dataset's imports, newest first: status, items stored, the last line settled",
      responses: {
        200: { description: 'The imports', schema: 'DatasetImportList' },
        404: { description: 'No such dataset in this project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await imports.list(ctx.state.projectId!, ctx.params.dataset_id!, (ctx.state.query as { limit: number }).limit);
      },
    },
    {
      method: 'GET',
      path: `${D}/imports/:import_id`,
      operationId: 'getDatasetImport',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One import: running, completed, interrupted or failed; what it stored and the last line settled (resume after it)',
      responses: {
        200: { description: 'The import', schema: 'DatasetImport' },
        404: { description: 'No such import of this dataset in this project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await imports.get(ctx.state.projectId!, ctx.params.dataset_id!, ctx.params.import_id!);
      },
    },
  ];
}
