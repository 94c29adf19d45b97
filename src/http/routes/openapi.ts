import type { RouteDef } from './types.ts';

export function openapiRoutes(document: () => object): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This OpenAPI 3.1 document, generated from the route table and the JSON Schemas that validate requests',
      tag: 'operations',
      access: 'public',
      responses: { 200: { description: 'OpenAPI 3.1 document' } },
      async handler(ctx) {
        ctx.body = document();
      },
    },
  ];
}
