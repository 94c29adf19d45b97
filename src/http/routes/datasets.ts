// Datasets and their items (docs/datasets.md). Thin: the route table validates; src/datasets/ does the work.
import { Readable } from 'node:stream';
import type { Datasets, ItemInput, ItemUpdate } from '../../datasets/datasets.ts';
import type { RouteDef } from './types.ts';

const D = '/api/projects/:project_id/datasets';
const I = `${D}/:dataset_id/items`;
const tag = 'datasets';
// An ingest key may read datasets and their items (not exports, runs or versions): what the SDKs'
// datasets.get / runExperiment read before creating a run and linking items, so one key serves an
// experiment (issue 39). Items are test cases a project wrote, not the traces ingest keys may not read.
const EXPERIMENT_READ = true;
const notFound404 = (what: string) => ({ 404: { description: `No such ${what} in this project`, schema: 'Error' } });

export function datasetRoutes(datasets: Datasets): RouteDef[] {
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
      batch: 'items',
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
