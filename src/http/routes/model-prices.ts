// Price table routes (docs/executions.md, "Prices"): thin. Reading the table is open to every role; setting or
// removing a project price is `admin`: prices are project configuration that changes every
// computed cost (and so the budget), like API keys and the budget itself.
import type { ModelPriceInput, ModelPriceQuery, ModelPriceService } from '../../pricing/price-table.ts';
import type { RouteDef } from './types.ts';

const BASE = '/api/projects/:project_id/models';
const tag = 'prices';

export function modelPriceRoutes(models: ModelPriceService): RouteDef[] {
  return [
    {
      method: 'GET',
      path: BASE,
      operationId: 'listModelPrices',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'ModelPriceListQuery',
      summary: "The effective price table: the project's own prices (which take precedence), then the built-in catalogue",
      responses: { 200: { description: 'A page of the table', schema: 'ModelPriceList' } },
      async handler(ctx) {
        ctx.body = await models.list(ctx.state.projectId!, ctx.state.query as ModelPriceQuery);
      },
    },
    {
      method: 'PUT',
      path: `${BASE}/:model`,
      operationId: 'setModelPrice',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'ModelPriceSet',
      summary:
        'Set a project price for a model: without effective_from its base price (every call, past and future, that no dated row covers), ' +
        "with it a price from that date; the key's other rows stay as its history",
      responses: { 200: { description: 'The stored price', schema: 'ModelPrice' } },
      async handler(ctx) {
        ctx.body = await models.set(
          ctx.state.projectId!,
          ctx.params.model!,
          ctx.state.body as ModelPriceInput,
          ctx.state.principal!.userId,
        );
      },
    },
    {
      method: 'DELETE',
      path: `${BASE}/:model`,
      operationId: 'deleteModelPrice',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: "Remove every project price row of a model (the catalogue's price applies again)",
      responses: { 204: { description: 'Removed' }, 404: { description: 'The project has no price for this model', schema: 'Error' } },
      async handler(ctx) {
        await models.remove(ctx.state.projectId!, ctx.params.model!);
        ctx.status = 204;
      },
    },
  ];
}
