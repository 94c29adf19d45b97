// Scoped budget routes (budgets per project, agent, user, tag or API key; docs/spend.md "Scoped budgets").
// Thin: the route table validates; src/spend/scoped-budgets.ts does the work.
import type { Domain } from '../../compose/domain.ts';
import type { ScopedBudgetInput, ScopedBudgetUpdate } from '../../spend/scoped-budgets.ts';
import type { RouteDef } from './types.ts';

const P = '/api/projects/:project_id/budgets';
const tag = 'spend';

export function scopedBudgetRoutes(domain: Domain): RouteDef[] {
  const budgets = domain.spend.scopedBudgets;
  const isAdmin = (ctx: Parameters<RouteDef['handler']>[0]) =>
    ctx.state.principal?.authMethod === 'operator' || ctx.state.principal?.projects.get(ctx.state.projectId!) === 'admin';
  return [
    {
      method: 'POST',
      path: P,
      operationId: 'createScopedBudget',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'ScopedBudgetCreate',
      summary:
        'Add a budget scoped to the project, an agent, a user, a tag or an API key (admin); a signed-format answer carries the webhook secret once',
      responses: {
        201: { description: 'The budget', schema: 'ScopedBudget' },
        409: { description: 'The scope already has a budget for this period', schema: 'Error' },
        422: { description: 'An API key scope names a key that does not exist in the project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await budgets.create(ctx.state.projectId!, ctx.state.body as ScopedBudgetInput);
      },
    },
    {
      method: 'GET',
      path: P,
      operationId: 'listScopedBudgets',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: "The project's scoped budgets with their current period's spend and status",
      responses: { 200: { description: 'The budgets', schema: 'ScopedBudgetList' } },
      async handler(ctx) {
        ctx.body = await budgets.list(ctx.state.projectId!, isAdmin(ctx));
      },
    },
    {
      method: 'GET',
      path: `${P}/:budget_id`,
      operationId: 'getScopedBudget',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One scoped budget with its spend, status and alerts',
      responses: {
        200: { description: 'The budget', schema: 'ScopedBudget' },
        404: { description: 'No such budget in this project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await budgets.get(ctx.state.projectId!, ctx.params.budget_id!, isAdmin(ctx));
      },
    },
    {
      method: 'PUT',
      path: `${P}/:budget_id`,
      operationId: 'updateScopedBudget',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'ScopedBudgetUpdate',
      summary: 'Change the amount, thresholds, mode or channel of a scoped budget (admin); thresholds fired this period do not fire again',
      responses: {
        200: { description: 'The budget', schema: 'ScopedBudget' },
        404: { description: 'No such budget in this project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await budgets.update(ctx.state.projectId!, ctx.params.budget_id!, ctx.state.body as ScopedBudgetUpdate);
      },
    },
    {
      method: 'DELETE',
      path: `${P}/:budget_id`,
      operationId: 'deleteScopedBudget',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Remove a scoped budget and its alerts (admin)',
      responses: { 204: { description: 'Removed' }, 404: { description: 'No such budget in this project', schema: 'Error' } },
      async handler(ctx) {
        await budgets.remove(ctx.state.projectId!, ctx.params.budget_id!);
        ctx.status = 204;
      },
    },
  ];
}
