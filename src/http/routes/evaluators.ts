// Evaluators: LLM-as-judge (docs/evaluators.md). Thin: the route table validates; src/evaluators/ does the work.
import type { EvaluatorService } from '../../evaluators/evaluator-service.ts';
import type { EvaluatorInput, EvaluatorUpdate } from '../../evaluators/evaluator.ts';
import type { EvaluationStatus } from '../../evaluators/evaluator-repository.ts';
import type { RouteDef, RouteContext } from './types.ts';

const P = '/api/projects/:project_id/evaluators';
const ONE = `${P}/:evaluator_id`;
const tag = 'evaluators';
const notFound = { description: 'No such evaluator in this project', schema: 'Error' };
const refused = {
  description:
    'The prompt or its label, the connection or a live score config of score_name does not exist, or a template variable has no source',
  schema: 'Error',
};

export function evaluatorRoutes(evaluators: EvaluatorService): RouteDef[] {
  const pauseRoute = (paused: boolean): RouteDef => ({
    method: 'POST',
    path: `${ONE}/${paused ? 'pause' : 'resume'}`,
    operationId: paused ? 'pauseEvaluator' : 'resumeEvaluator',
    tag,
    access: 'authenticated',
    need: 'admin',
    summary: paused
      ? 'Pause an evaluator (admin): no new judgement starts; queued ones wait'
      : 'Resume an evaluator (admin): its queued judgements run again',
    responses: { 200: { description: 'The evaluator with its status', schema: 'Evaluator' }, 404: notFound },
    async handler(ctx: RouteContext) {
      ctx.body = await evaluators.setPaused(ctx.state.projectId!, ctx.params.evaluator_id!, paused);
    },
  });
  return [
    {
      method: 'POST',
      path: P,
      operationId: 'createEvaluator',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'EvaluatorCreate',
      summary: 'Add an LLM-as-judge evaluator (admin): judge prompt, variables, model connection, score, target, limits',
      responses: {
        201: { description: 'The evaluator with its status', schema: 'Evaluator' },
        409: { description: 'An evaluator of that name exists', schema: 'Error' },
        422: refused,
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await evaluators.create(ctx.state.projectId!, ctx.state.body as EvaluatorInput);
      },
    },
    {
      method: 'GET',
      path: P,
      operationId: 'listEvaluators',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: "The project's evaluators with their status (queued, done, failed, last error)",
      responses: { 200: { description: 'The evaluators', schema: 'EvaluatorList' } },
      async handler(ctx) {
        ctx.body = await evaluators.list(ctx.state.projectId!);
      },
    },
    {
      method: 'GET',
      path: ONE,
      operationId: 'getEvaluator',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One evaluator with its status',
      responses: { 200: { description: 'The evaluator', schema: 'Evaluator' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await evaluators.get(ctx.state.projectId!, ctx.params.evaluator_id!);
      },
    },
    {
      method: 'PUT',
      path: ONE,
      operationId: 'updateEvaluator',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'EvaluatorUpdate',
      summary: "Change an evaluator's fields (admin); executions already judged are not judged again",
      responses: {
        200: { description: 'The evaluator', schema: 'Evaluator' },
        404: notFound,
        409: { description: 'Another evaluator has that name', schema: 'Error' },
        422: refused,
      },
      async handler(ctx) {
        ctx.body = await evaluators.update(ctx.state.projectId!, ctx.params.evaluator_id!, ctx.state.body as EvaluatorUpdate);
      },
    },
    {
      method: 'DELETE',
      path: ONE,
      operationId: 'deleteEvaluator',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Delete an evaluator and its evaluations (admin); the scores and judge executions it wrote stay',
      responses: { 204: { description: 'Deleted' }, 404: notFound },
      async handler(ctx) {
        await evaluators.remove(ctx.state.projectId!, ctx.params.evaluator_id!);
        ctx.status = 204;
      },
    },
    pauseRoute(true),
    pauseRoute(false),
    {
      method: 'POST',
      path: `${ONE}/backfill`,
      operationId: 'backfillEvaluator',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'EvaluatorBackfill',
      summary: "Queue the target's executions started in [start, end) (admin): filter and sampling applied, each judged at most once",
      responses: {
        200: { description: 'What matched, was sampled and was newly queued', schema: 'EvaluatorBackfillResult' },
        400: { description: 'A start or end that is not a time, or end not after start', schema: 'Error' },
        404: notFound,
        422: { description: 'More than 100,000 executions in the range', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await evaluators.backfill(
          ctx.state.projectId!,
          ctx.params.evaluator_id!,
          ctx.state.body as { start: string; end: string },
        );
      },
    },
    {
      method: 'GET',
      path: `${ONE}/evaluations`,
      operationId: 'listEvaluations',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'EvaluationListQuery',
      summary: "An evaluator's evaluations, latest change first: status, score, judge call, error; keyset pages",
      responses: { 200: { description: 'A page', schema: 'EvaluationList' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await evaluators.evaluations(
          ctx.state.projectId!,
          ctx.params.evaluator_id!,
          ctx.state.query as { status?: EvaluationStatus; limit: number; cursor?: string },
        );
      },
    },
  ];
}
