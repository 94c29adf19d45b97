// Datasets and their items (docs/datasets.md). Thin: the route table validates; src/datasets/ does the work.
import { Readable } from 'node:stream';
import type { Config } from '../../config.ts';
import type { Datasets, ItemInput, ItemUpdate } from '../../datasets/datasets.ts';
import { importItems, type ImportFormat } from '../../datasets/import.ts';
import { unsupportedMediaType } from '../errors.ts';
import { inputProblems } from '../input-checks.ts';
import type { RouteDef } from './types.ts';

const D = '/api/projects/:project_id/datasets';
const I = `${D}/:dataset_id/items`;
const tag = 'datasets';
// An ingest key may read datasets and their items (not exports, runs or versions): what the SDKs'
// datasets.get / runExperiment read before creating a run and linking items, so one key serves an
// experiment (issue 39). Items are test cases a project wrote, not the traces ingest keys may not read.
const EXPERIMENT_READ = true;
const notFound404 = (what: string) => ({ 404: { description: `No such ${what} in this project`, schema: 'Error' } });

export function datasetRoutes(config: Config, datasets: Datasets): RouteDef[] {
  return [
    {
      method: 'POST',
      path: D,
      operationId: 'createDataset',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'DatasetCreate',
      summary: 'Create a dataset (its name unique in the project)',
      responses: {
        201: { description: 'The dataset', schema: 'Dataset' },
        409: { description: 'A dataset of that name exists', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await datasets.create(ctx.state.projectId!, ctx.state.body as { name: string });
      },
    },
    {
      method: 'GET',
      path: D,
      operationId: 'listDatasets',
      tag,
      access: 'authenticated',
      need: 'read',
      ingest: EXPERIMENT_READ,
      query: 'PageQuery',
      summary: "The project's datasets by name; keyset pages",
      responses: { 200: { description: 'A page', schema: 'DatasetList' } },
      async handler(ctx) {
        ctx.body = await datasets.list(ctx.state.projectId!, ctx.state.query as { limit: number; cursor?: string });
      },
    },
    {
      method: 'GET',
      path: `${D}/:dataset_id`,
      operationId: 'getDataset',
      tag,
      access: 'authenticated',
      need: 'read',
      ingest: EXPERIMENT_READ,
      summary: 'One dataset',
      responses: { 200: { description: 'The dataset', schema: 'Dataset' }, ...notFound404('dataset') },
      async handler(ctx) {
        ctx.body = await datasets.get(ctx.state.projectId!, ctx.params.dataset_id!);
      },
    },
    {
      method: 'PATCH',
      path: `${D}/:dataset_id`,
      operationId: 'updateDataset',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'DatasetUpdate',
      summary: "Change a dataset's name, description or metadata",
      responses: {
        200: { description: 'The dataset', schema: 'Dataset' },
        ...notFound404('dataset'),
        409: { description: 'Another dataset has that name', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await datasets.update(ctx.state.projectId!, ctx.params.dataset_id!, ctx.state.body as { name?: string });
      },
    },
    {
      method: 'DELETE',
      path: `${D}/:dataset_id`,
      operationId: 'deleteDataset',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Delete a dataset with its items (admin); one with runs is refused until they are deleted; the executions stay',
      responses: {
        204: { description: 'Deleted' },
        ...notFound404('dataset'),
        409: { description: 'The dataset has runs: delete them first', schema: 'Error' },
      },
      async handler(ctx) {
        await datasets.remove(ctx.state.projectId!, ctx.params.dataset_id!);
        ctx.status = 204;
      },
    },
    {
      method: 'POST',
      path: I,
      operationId: 'createDatasetItems',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'DatasetItemCreateRequest',
      summary: 'Add one item, or a batch of up to 1,000 (all or none)',
      responses: {
        201: { description: 'One item sent: the item; an array: {"items": [...]} in the order sent', schema: 'DatasetItem' },
        ...notFound404('dataset'),
      },
      async handler(ctx) {
        const body = ctx.state.body as ItemInput | ItemInput[];
        const many = Array.isArray(body);
        const items = await datasets.addItems(ctx.state.projectId!, ctx.params.dataset_id!, many ? body : [body]);
        ctx.status = 201;
        ctx.body = many ? { items } : items[0];
      },
    },
    {
      method: 'GET',
      path: I,
      operationId: 'listDatasetItems',
      tag,
      access: 'authenticated',
      need: 'read',
      ingest: EXPERIMENT_READ,
      query: 'DatasetItemListQuery',
      summary: 'Items in the order they were added (archived ones with include_archived=true); keyset pages',
      responses: { 200: { description: 'A page', schema: 'DatasetItemList' }, ...notFound404('dataset') },
      async handler(ctx) {
        ctx.body = await datasets.listItems(
          ctx.state.projectId!,
          ctx.params.dataset_id!,
          ctx.state.query as { limit: number; cursor?: string; include_archived: boolean },
        );
      },
    },
    {
      method: 'POST',
      path: `${I}/from-execution`,
      operationId: 'createDatasetItemFromExecution',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'DatasetItemFromExecution',
      summary: 'An item made from an execution: its input messages as input, its last assistant turn as expected output',
      responses: {
        201: { description: 'The item', schema: 'DatasetItem' },
        404: { description: 'No such dataset or execution in this project', schema: 'Error' },
        422: { description: 'The execution holds no messages', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await datasets.addFromExecution(ctx.state.projectId!, ctx.params.dataset_id!, ctx.state.body as { trace_id: string });
      },
    },
    {
      method: 'POST',
      path: `${I}/import`,
      operationId: 'importDatasetItems',
      tag,
      access: 'authenticated',
      need: 'write',
      rawBody: {
        description:
          'JSON Lines (application/x-ndjson or application/jsonl: one {"input", "expected_output", "metadata", "source_trace_id"} per line) ' +
          'or CSV (text/csv: a header of input or input.<variable>, expected_output, metadata, source_trace_id). Read as a stream: no size limit ' +
          'but MAX_JSON_BYTES per line; stored in batches of 1,000.',
        contentTypes: { 'application/x-ndjson': undefined, 'application/jsonl': undefined, 'text/csv': undefined },
      },
      summary: 'Import items from JSON Lines or CSV; rejected lines are named by line number, the others kept',
      responses: {
        200: { description: 'Counts, and the first 1,000 rejected lines with why', schema: 'DatasetImportResult' },
        400: { description: 'A CSV header that names an unknown column, or no input column', schema: 'Error' },
        ...notFound404('dataset'),
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
        const projectId = ctx.state.projectId!;
        const datasetId = ctx.params.dataset_id!;
        await datasets.get(projectId, datasetId); // 404 before the body is read
        ctx.body = await importItems(ctx.req, format, {
          maxLineChars: config.limits.maxJsonBytes,
          problemsOf: (v, what) => inputProblems(v, what),
          store: (items) => datasets.addCheckedBatch(projectId, datasetId, items),
        });
      },
    },
    {
      method: 'GET',
      path: `${I}/export`,
      operationId: 'exportDatasetItems',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'DatasetExportQuery',
      summary: 'Every item as JSON Lines, streamed in order (an export imports back as new items)',
      responses: {
        200: { description: 'application/x-ndjson: item_id, version, input, expected_output, metadata, source_trace_id' },
        ...notFound404('dataset'),
      },
      async handler(ctx) {
        const dataset = await datasets.get(ctx.state.projectId!, ctx.params.dataset_id!);
        const q = ctx.state.query as { include_archived: boolean };
        ctx.set('Content-Type', 'application/x-ndjson; charset=utf-8');
        ctx.set('Content-Disposition', `attachment; filename="dataset-${dataset.dataset_id}.jsonl"`);
        ctx.body = Readable.from(datasets.exportLines(ctx.state.projectId!, dataset.dataset_id, q.include_archived));
      },
    },
    {
      method: 'GET',
      path: `${I}/:item_id`,
      operationId: 'getDatasetItem',
      tag,
      access: 'authenticated',
      need: 'read',
      ingest: EXPERIMENT_READ,
      summary: 'One item at its current version',
      responses: { 200: { description: 'The item', schema: 'DatasetItem' }, ...notFound404('dataset item') },
      async handler(ctx) {
        ctx.body = await datasets.getItem(ctx.state.projectId!, ctx.params.dataset_id!, ctx.params.item_id!);
      },
    },
    {
      method: 'PATCH',
      path: `${I}/:item_id`,
      operationId: 'updateDatasetItem',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'DatasetItemUpdate',
      summary: 'Edit an item (its content: a new version; runs keep the version they used), or archive / restore it',
      responses: { 200: { description: 'The item', schema: 'DatasetItem' }, ...notFound404('dataset item') },
      async handler(ctx) {
        ctx.body = await datasets.updateItem(
          ctx.state.projectId!,
          ctx.params.dataset_id!,
          ctx.params.item_id!,
          ctx.state.body as ItemUpdate,
        );
      },
    },
    {
      method: 'GET',
      path: `${I}/:item_id/versions`,
      operationId: 'listDatasetItemVersions',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: "Every version of an item's content, newest first",
      responses: { 200: { description: 'The versions', schema: 'DatasetItemVersionList' }, ...notFound404('dataset item') },
      async handler(ctx) {
        ctx.body = await datasets.itemVersions(ctx.state.projectId!, ctx.params.dataset_id!, ctx.params.item_id!);
      },
    },
  ];
}
