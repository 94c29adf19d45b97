// Release gate routes (docs/prompts.md, "Release gates"): thin. The gate of a protected label, its
// dry-run check, approvals and the label events; the gated move itself is PUT …/labels/{label}
// (prompts.ts).
import type { GateInput, LabelGates } from '../../release-gates/label-gates.ts';
import { actorOf } from './prompts.ts';
import type { RouteDef } from './types.ts';

const ONE = '/api/projects/:project_id/prompts/:prompt_id';
const GATE = `${ONE}/labels/:label/gate`;
const tag = 'prompts';
const notFound = { description: 'No such prompt, or the label has no gate', schema: 'Error' };

export function labelGateRoutes(gates: LabelGates): RouteDef[] {
  return [
    {
      method: 'GET',
      path: `${ONE}/gates`,
      operationId: 'listPromptLabelGates',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: "The release gates of the prompt's protected labels (a label not listed is not protected)",
      responses: {
        200: { description: 'The gates', schema: 'PromptLabelGateList' },
        404: { description: 'No such prompt', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await gates.list(ctx.state.projectId!, ctx.params.prompt_id!);
      },
    },
    {
      method: 'GET',
      path: GATE,
      operationId: 'getPromptLabelGate',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'The release gate protecting a label',
      responses: { 200: { description: 'The gate', schema: 'PromptLabelGate' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await gates.get(ctx.state.projectId!, ctx.params.prompt_id!, ctx.params.label!);
      },
    },
    {
      method: 'PUT',
      path: GATE,
      operationId: 'setPromptLabelGate',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'PromptLabelGateSet',
      summary: 'Protect a label with a release gate, or change its gate (recorded as a label event)',
      responses: {
        200: { description: 'The gate', schema: 'PromptLabelGate' },
        404: { description: 'No such prompt', schema: 'Error' },
        422: { description: 'No such dataset in the project; lower_is_better names a score not in scores', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await gates.set(
          ctx.state.projectId!,
          ctx.params.prompt_id!,
          ctx.params.label!,
          ctx.state.body as GateInput,
          actorOf(ctx.state.principal!),
        );
      },
    },
    {
      method: 'DELETE',
      path: GATE,
      operationId: 'deletePromptLabelGate',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Remove the release gate of a label (recorded as a label event)',
      responses: { 204: { description: 'Removed' }, 404: notFound },
      async handler(ctx) {
        await gates.remove(ctx.state.projectId!, ctx.params.prompt_id!, ctx.params.label!, actorOf(ctx.state.principal!));
        ctx.status = 204;
      },
    },
    {
      method: 'GET',
      path: `${GATE}/check`,
      operationId: 'checkPromptLabelGate',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PromptLabelGateCheckQuery',
      summary: 'Dry run: every condition of the gate for moving the label to a version, with its figures; nothing moves',
      responses: {
        200: { description: 'The conditions', schema: 'PromptLabelGateCheck' },
        404: notFound,
        422: { description: 'No such version', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await gates.check(ctx.state.projectId!, ctx.params.prompt_id!, ctx.params.label!, ctx.state.query as never);
      },
    },
    {
      method: 'POST',
      path: `${ONE}/labels/:label/approvals`,
      operationId: 'approvePromptLabelMove',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'PromptLabelApprovalCreate',
      summary: "Approve a version for a protected label (an admin other than the version's author)",
      responses: {
        201: { description: 'The approval', schema: 'PromptLabelApproval' },
        403: { description: 'The caller wrote the version (or is not an admin)', schema: 'Error' },
        404: { description: 'No such prompt', schema: 'Error' },
        409: { description: 'The label has no gate, or the caller approved this version already', schema: 'Error' },
        422: { description: 'No such version', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await gates.approve(
          ctx.state.projectId!,
          ctx.params.prompt_id!,
          ctx.params.label!,
          ctx.state.body as { version: number; comment?: string },
          actorOf(ctx.state.principal!),
        );
      },
    },
    {
      method: 'GET',
      path: `${ONE}/label-events`,
      operationId: 'listPromptLabelEvents',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PromptLabelEventListQuery',
      summary: 'Label moves, removals, approvals, overrides and gate changes of a prompt, newest first (keyset pages)',
      responses: {
        200: { description: 'A page of events', schema: 'PromptLabelEventList' },
        404: { description: 'No such prompt', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await gates.events(ctx.state.projectId!, ctx.params.prompt_id!, ctx.state.query as never);
      },
    },
  ];
}
