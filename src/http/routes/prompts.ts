// Prompt routes: thin. Parse (the route table validates body and query), call the prompt
// service with plain arguments, shape the response.
import { apiKeyIdOf, roleIn, type Principal } from '../../auth/principal.ts';
import type { Actor, PromptService } from '../../prompts/service.ts';
import { parseVersionRef, type CreatePromptInput, type NewVersionInput } from '../../prompts/prompt-input.ts';
import type { LabelGates, LabelMoveInput } from '../../release-gates/label-gates.ts';
import type { RouteDef } from './types.ts';

const BASE = '/api/projects/:project_id/prompts';
const ONE = `${BASE}/:prompt_id`;
const tag = 'prompts';
const notFound = { description: 'No such prompt, version or label', schema: 'Error' };

/** Who calls, as label events record it. */
export const actorOf = (p: Principal): Actor => ({ userId: p.userId, apiKeyId: apiKeyIdOf(p) || null });

const gated = {
  description: 'A protected label would move without its release gate passing (the detail names each failed condition)',
  schema: 'Error',
};

export function promptRoutes(prompts: PromptService, gates: LabelGates): RouteDef[] {
  return [
    {
      method: 'POST',
      path: BASE,
      operationId: 'createPrompt',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'PromptCreate',
      summary: 'Create a prompt with its version 1',
      responses: {
        201: { description: 'Created', schema: 'PromptWithLatest' },
        409: { description: 'The id exists (also if archived)', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await prompts.create(ctx.state.projectId!, ctx.state.body as CreatePromptInput, actorOf(ctx.state.principal!));
      },
    },
    {
      method: 'GET',
      path: BASE,
      operationId: 'listPrompts',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PromptListQuery',
      summary: 'List prompts (paginated, by id; archived ones only with include_archived=true)',
      responses: { 200: { description: 'A page of prompts', schema: 'PromptList' } },
      async handler(ctx) {
        ctx.body = await prompts.list(ctx.state.projectId!, ctx.state.query as never);
      },
    },
    {
      method: 'GET',
      path: ONE,
      operationId: 'getPrompt',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'A prompt with its latest version inline (`latest`)',
      responses: { 200: { description: 'The prompt', schema: 'PromptWithLatest' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await prompts.get(ctx.state.projectId!, ctx.params.prompt_id!);
      },
    },
    {
      method: 'DELETE',
      path: ONE,
      operationId: 'archivePrompt',
      tag,
      access: 'authenticated',
      need: 'write',
      summary: 'Archive a prompt: hidden from the list, versions kept and readable',
      responses: { 204: { description: 'Archived' }, 404: notFound },
      async handler(ctx) {
        await prompts.archive(ctx.state.projectId!, ctx.params.prompt_id!);
        ctx.status = 204;
      },
    },
    {
      method: 'POST',
      path: `${ONE}/versions`,
      operationId: 'createPromptVersion',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'PromptVersionCreate',
      summary: 'Add a version; content identical to the latest returns the latest (200) and adds none',
      responses: {
        201: { description: 'New version', schema: 'PromptVersion' },
        200: { description: 'Same content as the latest: no new version', schema: 'PromptVersion' },
        404: notFound,
        409: { description: 'The prompt is archived, or `labels` names a protected label', schema: 'Error' },
        422: { description: 'Template does not fit the prompt type', schema: 'Error' },
      },
      async handler(ctx) {
        const r = await prompts.addVersion(
          ctx.state.projectId!,
          ctx.params.prompt_id!,
          ctx.state.body as NewVersionInput,
          actorOf(ctx.state.principal!),
        );
        ctx.status = r.created ? 201 : 200;
        ctx.body = r.version;
      },
    },
    {
      method: 'GET',
      path: `${ONE}/versions`,
      operationId: 'listPromptVersions',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'Version history, newest first',
      responses: { 200: { description: 'Versions', schema: 'PromptVersionList' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await prompts.versions(ctx.state.projectId!, ctx.params.prompt_id!);
      },
    },
    {
      method: 'GET',
      path: `${ONE}/versions/:version`,
      operationId: 'getPromptVersion',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One version by number, `latest` or label (served from cache)',
      responses: { 200: { description: 'The version', schema: 'PromptVersion' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await prompts.version(ctx.state.projectId!, ctx.params.prompt_id!, parseVersionRef(ctx.params.version!));
      },
    },
    {
      method: 'POST',
      path: `${ONE}/rollback`,
      operationId: 'rollbackPrompt',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'PromptRollback',
      summary: 'Append a version with the content of an earlier one (history is never rewritten)',
      responses: {
        201: { description: 'The new version', schema: 'PromptVersion' },
        404: notFound,
        409: { description: 'Already the latest content, or `labels` names a protected label', schema: 'Error' },
      },
      async handler(ctx) {
        const body = ctx.state.body as { version: string | number; commit_message?: string; labels?: string[] };
        ctx.status = 201;
        ctx.body = await prompts.rollback(
          ctx.state.projectId!,
          ctx.params.prompt_id!,
          parseVersionRef(body.version),
          { commitMessage: body.commit_message, labels: body.labels },
          actorOf(ctx.state.principal!),
        );
      },
    },
    {
      method: 'PUT',
      path: `${ONE}/labels/:label`,
      operationId: 'setPromptLabel',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'PromptLabelSet',
      summary:
        'Point a label at a version (labels are unique per prompt; `latest` is reserved); a protected label only through its release gate',
      responses: {
        200: { description: 'The label', schema: 'PromptLabel' },
        400: { description: 'An override without a reason', schema: 'Error' },
        403: { description: 'An override by a caller who is not an admin', schema: 'Error' },
        404: notFound,
        409: gated,
        422: { description: 'No such version; override or gate_run_id on a label without a gate', schema: 'Error' },
      },
      async handler(ctx) {
        const p = ctx.state.principal!;
        ctx.body = await gates.move(
          ctx.state.projectId!,
          ctx.params.prompt_id!,
          ctx.params.label!,
          ctx.state.body as LabelMoveInput,
          actorOf(p),
          roleIn(p, ctx.state.projectId!) ?? 'viewer',
        );
      },
    },
    {
      method: 'DELETE',
      path: `${ONE}/labels/:label`,
      operationId: 'deletePromptLabel',
      tag,
      access: 'authenticated',
      need: 'write',
      summary: 'Remove a label (not a protected one: its gate goes first)',
      responses: {
        204: { description: 'Removed' },
        404: notFound,
        409: { description: 'The label is protected by a release gate', schema: 'Error' },
      },
      async handler(ctx) {
        await prompts.deleteLabel(ctx.state.projectId!, ctx.params.prompt_id!, ctx.params.label!, actorOf(ctx.state.principal!));
        ctx.status = 204;
      },
    },
    {
      method: 'POST',
      path: `${ONE}/render`,
      operationId: 'renderPrompt',
      tag,
      access: 'authenticated',
      need: 'read',
      body: 'PromptRender',
      summary: 'Fill the variables and placeholders of a version (default latest); 422 names each missing variable and placeholder',
      responses: {
        200: { description: 'Rendered', schema: 'PromptRendered' },
        400: { description: 'A placeholder fill that is not a list of {role, content} messages', schema: 'Error' },
        404: notFound,
        422: { description: 'Missing variables or placeholders', schema: 'Error' },
      },
      async handler(ctx) {
        const body = ctx.state.body as {
          version?: string | number;
          inputs: Record<string, unknown>;
          placeholders?: Record<string, unknown>;
        };
        ctx.body = await prompts.render(
          ctx.state.projectId!,
          ctx.params.prompt_id!,
          parseVersionRef(body.version ?? 'latest'),
          body.inputs,
          body.placeholders,
        );
      },
    },
    {
      method: 'GET',
      path: `${ONE}/versions/:a/diff/:b`,
      operationId: 'diffPromptVersions',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'Line diff of two versions: content and config',
      responses: { 200: { description: 'The diff', schema: 'PromptDiff' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await prompts.diff(
          ctx.state.projectId!,
          ctx.params.prompt_id!,
          parseVersionRef(ctx.params.a!, 'a'),
          parseVersionRef(ctx.params.b!, 'b'),
        );
      },
    },
  ];
}
