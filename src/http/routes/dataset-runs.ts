// Experiment runs of a dataset and their comparison (docs/datasets.md). Thin: the route table
// validates; src/datasets/ does the work.
import type { RunComparison } from '../../datasets/run-compare.ts';
import type { RunInput } from '../../datasets/run-repository.ts';
import type { RunItemInput, Runs } from '../../datasets/runs.ts';
import type { PromptService } from '../../prompts/service.ts';
import type { RouteDef } from './types.ts';

const R = '/api/projects/:project_id/datasets/:dataset_id/runs';
const tag = 'datasets';
type Page = { limit: number; cursor?: string };

export function datasetRunRoutes(runs: Runs, comparison: RunComparison, prompts: Pick<PromptService, 'version'>): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/projects/:project_id/prompts/:prompt_id/runs',
      operationId: 'listPromptVersionRuns',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PromptRunsQuery',
      summary: 'The dataset runs (of any dataset) whose `prompts` name this prompt version, newest first; keyset pages',
      responses: {
        200: { description: 'A page', schema: 'DatasetRunList' },
        404: { description: 'No such prompt, or no such version of it', schema: 'Error' },
      },
      async handler(ctx) {
        const q = ctx.state.query as Page & { version: number };
        await prompts.version(ctx.state.projectId!, ctx.params.prompt_id!, { kind: 'number', version: q.version });
        ctx.body = await runs.ofPromptVersion(ctx.state.projectId!, ctx.params.prompt_id!, q.version, q);
      },
    },
    {
      method: 'POST',
      path: R,
      operationId: 'createDatasetRun',
      tag,
      access: 'authenticated',
      need: 'write',
      ingest: true,
      body: 'DatasetRunCreate',
      summary: 'Start an experiment run: its name, the prompt versions and model it tests, metadata',
      responses: {
        201: { description: 'The run', schema: 'DatasetRun' },
        404: { description: 'No such dataset in this project', schema: 'Error' },
        409: { description: 'The dataset has a run of that name', schema: 'Error' },
        422: { description: 'A prompt version named twice', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await runs.create(ctx.state.projectId!, ctx.params.dataset_id!, ctx.state.body as RunInput);
      },
    },
    {
      method: 'GET',
      path: R,
      operationId: 'listDatasetRuns',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PageQuery',
      summary: "The dataset's runs, oldest first; keyset pages",
      responses: { 200: { description: 'A page', schema: 'DatasetRunList' }, 404: { description: 'No such dataset', schema: 'Error' } },
      async handler(ctx) {
        ctx.body = await runs.list(ctx.state.projectId!, ctx.params.dataset_id!, ctx.state.query as Page);
      },
    },
    {
      // Registered before /:run_id, which would otherwise take "compare" for a run id.
      method: 'GET',
      path: `${R}/compare`,
      operationId: 'compareDatasetRuns',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'DatasetRunCompareQuery',
      summary:
        'Two runs side by side, item by item and in aggregate: paired t-test (numbers) and McNemar exact test (booleans) on the items run in both',
      responses: {
        200: { description: 'The comparison', schema: 'DatasetRunComparison' },
        400: { description: 'Not two different runs', schema: 'Error' },
        404: { description: 'A run that is not of this dataset', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await comparison.compare(ctx.state.projectId!, ctx.params.dataset_id!, ctx.state.query as Page & { runs: string[] });
      },
    },
    {
      method: 'GET',
      path: `${R}/:run_id`,
      operationId: 'getDatasetRun',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PageQuery',
      summary: "A run's answer: totals (items done and failed, exact cost, latency p50/p95, score means) and a page of its items",
      responses: {
        200: { description: 'The run', schema: 'DatasetRunResult' },
        404: { description: 'No such run in this dataset', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await runs.get(ctx.state.projectId!, ctx.params.dataset_id!, ctx.params.run_id!, ctx.state.query as Page);
      },
    },
    {
      method: 'DELETE',
      path: `${R}/:run_id`,
      operationId: 'deleteDatasetRun',
      tag,
      access: 'authenticated',
      need: 'write',
      summary: 'Delete a run and its links (the executions stay)',
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such run in this dataset', schema: 'Error' } },
      async handler(ctx) {
        await runs.remove(ctx.state.projectId!, ctx.params.dataset_id!, ctx.params.run_id!);
        ctx.status = 204;
      },
    },
    {
      method: 'POST',
      path: `${R}/:run_id/items`,
      operationId: 'linkDatasetRunItems',
      tag,
      access: 'authenticated',
      need: 'write',
      ingest: true,
      body: 'DatasetRunItemLinkRequest',
      batch: 'items',
      summary: 'Link items of a run to the executions they produced (or mark them failed); one or up to 1,000, all or none',
      responses: {
        200: { description: 'How many links were stored (an item linked again takes the newer link)', schema: 'DatasetRunItemsLinked' },
        404: { description: 'No such run in this dataset', schema: 'Error' },
        422: {
          description: 'An item not of the dataset, repeated, done without trace_id, or an unknown item_version: named by index',
          schema: 'Error',
        },
      },
      async handler(ctx) {
        const body = ctx.state.body as RunItemInput | RunItemInput[];
        const many = Array.isArray(body);
        ctx.body = await runs.link(ctx.state.projectId!, ctx.params.dataset_id!, ctx.params.run_id!, many ? body : [body], (i) =>
          many ? `items[${i}].` : '',
        );
      },
    },
  ];
}
