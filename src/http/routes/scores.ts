// Scores and score configs (docs/scores.md). Thin: the route table validates; src/scores/ does the work.
import type { ScoreService } from '../../scores/service.ts';
import type { ScoreLoader } from '../../scores/score-log.ts';
import type { ScoreConfigInput, ScoreConfigs, ScoreConfigUpdate } from '../../scores/score-config-repository.ts';
import type { ScoreInput } from '../../scores/score.ts';
import type { ScoreListQuery } from '../../scores/score-repository.ts';
import type { Comparison, CompareQuery } from '../../quality/compare.ts';
import type { PromptService } from '../../prompts/service.ts';
import type { RouteDef } from './types.ts';

const P = '/api/projects/:project_id/scores';
const C = '/api/projects/:project_id/score-configs';
const tag = 'scores';

export function scoreRoutes(
  scores: ScoreService,
  accepted: ScoreLoader,
  configs: ScoreConfigs,
  comparison: Comparison,
  prompts: PromptService,
): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/projects/:project_id/prompts/:prompt_id/compare',
      operationId: 'comparePromptVersions',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PromptCompareQuery',
      summary:
        'Is version b better than a, and what does it cost? Two versions (or labels) side by side: cost, latency, tokens, score means or rates with 95 % intervals, and the tested difference',
      responses: {
        200: { description: 'The comparison', schema: 'PromptComparison' },
        400: { description: 'Not two versions or two labels', schema: 'Error' },
        404: { description: 'No such prompt', schema: 'Error' },
      },
      async handler(ctx) {
        await prompts.get(ctx.state.projectId!, ctx.params.prompt_id!); // 404 for a prompt that is not the project's
        ctx.body = await comparison.compare(ctx.state.projectId!, ctx.params.prompt_id!, ctx.state.query as CompareQuery);
      },
    },
    {
      method: 'POST',
      path: P,
      operationId: 'createScores',
      tag,
      access: 'authenticated',
      need: 'write',
      ingest: true,
      body: 'ScoreCreateRequest',
      batch: 'scores',
      summary:
        'Add or update (by id) one score, or a batch of up to 1,000 (all or none); with Prefer: respond-async, answered once the checked batch is durable and stored in the background',
      responses: {
        201: { description: 'One score sent: the score; an array: {"items": [...]} in the order sent', schema: 'Score' },
        202: {
          description:
            'Sent with Prefer: respond-async: the batch is checked and durable; its scores are stored shortly after, in the order accepted (docs/scores.md, "Accepted writes")',
          schema: 'ScoresAccepted',
        },
        400: {
          description: 'A score no rule allows (no trace_id nor session_id, a repeated id...): the item and field named',
          schema: 'Error',
        },
        422: { description: "A score its name's config refuses (type, range, category): the item and field named", schema: 'Error' },
      },
      async handler(ctx) {
        const body = ctx.state.body as ScoreInput | ScoreInput[];
        const many = Array.isArray(body);
        const prefix = (i: number) => (many ? `scores[${i}].` : '');
        if (respondAsync(ctx.get('prefer'))) {
          const ids = await accepted.accept(ctx.state.projectId!, many ? body : [body], ctx.state.principal!.userId, prefix);
          ctx.status = 202;
          ctx.set('Preference-Applied', 'respond-async');
          ctx.body = { accepted: ids.length, ids };
          return;
        }
        const inputs = many ? body : [body];
        // An id accepted earlier and not yet stored: this write comes after it.
        await accepted.settled(
          ctx.state.projectId!,
          inputs.flatMap((s) => (typeof s.id === 'string' ? [s.id] : [])),
        );
        const stored = await scores.upsert(ctx.state.projectId!, inputs, ctx.state.principal!.userId, prefix);
        ctx.status = 201;
        ctx.body = many ? { items: stored } : stored[0];
      },
    },
    {
      method: 'GET',
      path: P,
      operationId: 'listScores',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'ScoreListQuery',
      summary: 'Scores, newest first, with filters (name, source, type, trace, session, time, value range); keyset pages',
      responses: { 200: { description: 'A page', schema: 'ScoreList' } },
      async handler(ctx) {
        ctx.body = await scores.list(ctx.state.projectId!, ctx.state.query as ScoreListQuery);
      },
    },
    {
      method: 'GET',
      path: `${P}/:score_id`,
      operationId: 'getScore',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One score',
      responses: {
        200: { description: 'The score', schema: 'Score' },
        404: { description: 'No such score in this project', schema: 'Error' },
      },
      async handler(ctx) {
        await accepted.settled(ctx.state.projectId!, [ctx.params.score_id!]);
        ctx.body = await scores.get(ctx.state.projectId!, ctx.params.score_id!);
      },
    },
    {
      method: 'DELETE',
      path: `${P}/:score_id`,
      operationId: 'deleteScore',
      tag,
      access: 'authenticated',
      need: 'write',
      summary: 'Delete a score',
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'No such score in this project', schema: 'Error' },
      },
      async handler(ctx) {
        await accepted.settled(ctx.state.projectId!, [ctx.params.score_id!]);
        await scores.remove(ctx.state.projectId!, ctx.params.score_id!);
        ctx.status = 204;
      },
    },
    {
      method: 'POST',
      path: C,
      operationId: 'createScoreConfig',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'ScoreConfigCreate',
      summary: 'Add a score config: what scores of a name may hold (admin)',
      responses: {
        201: { description: 'The config', schema: 'ScoreConfig' },
        409: { description: 'A live config of that name exists', schema: 'Error' },
        422: { description: 'A range on a non-NUMERIC config, categories on a non-CATEGORICAL one, min above max...', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await configs.create(ctx.state.projectId!, ctx.state.body as ScoreConfigInput);
      },
    },
    {
      method: 'GET',
      path: C,
      operationId: 'listScoreConfigs',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'ScoreConfigListQuery',
      summary: "The project's score configs (archived ones with include_archived=true)",
      responses: { 200: { description: 'The configs', schema: 'ScoreConfigList' } },
      async handler(ctx) {
        const q = ctx.state.query as { include_archived: boolean };
        ctx.body = { items: await configs.list(ctx.state.projectId!, q.include_archived) };
      },
    },
    {
      method: 'GET',
      path: `${C}/:config_id`,
      operationId: 'getScoreConfig',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One score config',
      responses: {
        200: { description: 'The config', schema: 'ScoreConfig' },
        404: { description: 'No such config in this project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await configs.get(ctx.state.projectId!, ctx.params.config_id!);
      },
    },
    {
      method: 'PUT',
      path: `${C}/:config_id`,
      operationId: 'updateScoreConfig',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'ScoreConfigUpdate',
      summary: "Change a config's description, or archive it (admin); its rule never changes under existing scores",
      responses: {
        200: { description: 'The config', schema: 'ScoreConfig' },
        404: { description: 'No such config in this project', schema: 'Error' },
        409: {
          description: 'A change to its name, type, range or categories; or unarchiving while another live config has its name',
          schema: 'Error',
        },
      },
      async handler(ctx) {
        ctx.body = await configs.update(ctx.state.projectId!, ctx.params.config_id!, ctx.state.body as ScoreConfigUpdate);
      },
    },
  ];
}

/** Whether a Prefer header (RFC 7240) asks for respond-async. */
function respondAsync(prefer: string): boolean {
  return prefer.split(',').some((p) => p.split(';')[0]!.trim().toLowerCase() === 'respond-async');
}
