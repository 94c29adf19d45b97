// Experiments run by the service (docs/datasets.md, "Experiments run by the service"). Thin: the
// route table validates; src/datasets/experiments.ts does the work.
import { apiKeyIdOf } from '../../auth/principal.ts';
import type { ExperimentInput, Experiments } from '../../datasets/experiments.ts';
import type { RouteDef } from './types.ts';

const D = '/api/projects/:project_id/datasets/:dataset_id/experiments';
const E = `${D}/:experiment_id`;
const tag = 'datasets';
type Page = { limit: number; cursor?: string };
const notFound = { description: 'No such dataset or experiment in this project', schema: 'Error' };

export function experimentRoutes(experiments: Experiments): RouteDef[] {
  return [
    {
      method: 'POST',
      path: D,
      operationId: 'createExperiment',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'ExperimentCreate',
      summary:
        'Run a prompt version over this dataset on a model connection, with evaluators and checks: the service makes the calls (bounded concurrency, retries, a cost cap) into a run of its own',
      responses: {
        202: { description: 'The experiment, queued', schema: 'Experiment' },
        402: { description: "The project's budget blocks (block mode)", schema: 'Error' },
        404: { description: 'No such dataset, prompt, version or label, connection or evaluator (named)', schema: 'Error' },
        409: { description: 'The dataset has a run of that name', schema: 'Error' },
        422: { description: 'An evaluator named twice, two writers of one score, a check that does not fit (named)', schema: 'Error' },
      },
      async handler(ctx) {
        const principal = ctx.state.principal!;
        ctx.status = 202;
        ctx.body = await experiments.create(ctx.state.projectId!, ctx.params.dataset_id!, ctx.state.body as ExperimentInput, {
          createdBy: principal.userId,
          apiKeyId: apiKeyIdOf(principal),
        });
      },
    },
    {
      method: 'GET',
      path: D,
      operationId: 'listDatasetExperiments',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PageQuery',
      summary: "The dataset's experiments, newest first, with their progress; keyset pages",
      responses: { 200: { description: 'A page', schema: 'ExperimentList' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await experiments.list(ctx.state.projectId!, { ...(ctx.state.query as Page), datasetId: ctx.params.dataset_id! });
      },
    },
    {
      method: 'GET',
      path: '/api/projects/:project_id/experiments',
      operationId: 'listExperiments',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PageQuery',
      summary: "The project's experiments over every dataset, newest first, with their progress",
      responses: { 200: { description: 'A page', schema: 'ExperimentList' } },
      async handler(ctx) {
        ctx.body = await experiments.list(ctx.state.projectId!, ctx.state.query as Page);
      },
    },
    {
      method: 'GET',
      path: E,
      operationId: 'getExperiment',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'An experiment: its status and progress (items done, failed and pending; exact spend)',
      responses: { 200: { description: 'The experiment', schema: 'Experiment' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await experiments.get(ctx.state.projectId!, ctx.params.experiment_id!, ctx.params.dataset_id!);
      },
    },
    {
      method: 'GET',
      path: `${E}/items`,
      operationId: 'listExperimentItems',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PageQuery',
      summary: "An experiment's items in dataset order: each one's state, answer, trace id, cost and error",
      responses: { 200: { description: 'A page', schema: 'ExperimentItemList' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await experiments.items(
          ctx.state.projectId!,
          ctx.params.dataset_id!,
          ctx.params.experiment_id!,
          ctx.state.query as Page,
        );
      },
    },
    {
      method: 'POST',
      path: `${E}/cancel`,
      operationId: 'cancelExperiment',
      tag,
      access: 'authenticated',
      need: 'write',
      summary: 'Cancel an experiment: no item starts after this, the running ones end',
      responses: {
        200: { description: 'The experiment, cancelled', schema: 'Experiment' },
        404: notFound,
        409: { description: 'It has ended already', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await experiments.cancel(ctx.state.projectId!, ctx.params.dataset_id!, ctx.params.experiment_id!);
      },
    },
    {
      method: 'POST',
      path: `${E}/resume`,
      operationId: 'resumeExperiment',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'ExperimentResume',
      summary: 'Go on with the items a capped, blocked, failed or cancelled experiment did not run, with a new cost cap if given',
      responses: {
        202: { description: 'The experiment, queued', schema: 'Experiment' },
        402: { description: "The project's budget blocks", schema: 'Error' },
        404: notFound,
        409: { description: 'It is queued or running', schema: 'Error' },
        422: { description: 'A cap not above what it spent', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 202;
        ctx.body = await experiments.resume(
          ctx.state.projectId!,
          ctx.params.dataset_id!,
          ctx.params.experiment_id!,
          ctx.state.body as { max_cost_usd?: number | null },
        );
      },
    },
  ];
}
