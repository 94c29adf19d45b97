// Model connections (docs/evaluators.md). Thin: the route table validates; src/evaluators/ does the work.
// The API key is write-only: no response here carries it.
import type { ConnectionInput, ConnectionUpdate, Connections } from '../../evaluators/connection-repository.ts';
import type { RouteDef } from './types.ts';

const P = '/api/projects/:project_id/model-connections';
const tag = 'evaluators';

export function modelConnectionRoutes(connections: Connections): RouteDef[] {
  return [
    {
      method: 'POST',
      path: P,
      operationId: 'createModelConnection',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'ModelConnectionCreate',
      summary: 'Add an OpenAI-compatible chat completions endpoint for judges (admin); its API key is sealed and never returned',
      responses: {
        201: { description: 'The connection (without its key)', schema: 'ModelConnection' },
        400: { description: 'A base_url that is not an absolute http(s) URL, or carries credentials', schema: 'Error' },
        409: { description: 'A connection of that name exists; or SECRETS_KEY is not configured (server stores)', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await connections.create(ctx.state.projectId!, ctx.state.body as ConnectionInput);
      },
    },
    {
      method: 'GET',
      path: P,
      operationId: 'listModelConnections',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: "The project's model connections (never their keys)",
      responses: { 200: { description: 'The connections', schema: 'ModelConnectionList' } },
      async handler(ctx) {
        ctx.body = { items: await connections.list(ctx.state.projectId!) };
      },
    },
    {
      method: 'GET',
      path: `${P}/:connection_id`,
      operationId: 'getModelConnection',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One model connection (never its key)',
      responses: {
        200: { description: 'The connection', schema: 'ModelConnection' },
        404: { description: 'No such connection in this project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await connections.get(ctx.state.projectId!, ctx.params.connection_id!);
      },
    },
    {
      method: 'PUT',
      path: `${P}/:connection_id`,
      operationId: 'updateModelConnection',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'ModelConnectionUpdate',
      summary: "Change a connection's fields or replace its API key (admin)",
      responses: {
        200: { description: 'The connection', schema: 'ModelConnection' },
        400: { description: 'A bad base_url', schema: 'Error' },
        404: { description: 'No such connection in this project', schema: 'Error' },
        409: { description: 'Another connection has that name', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await connections.update(ctx.state.projectId!, ctx.params.connection_id!, ctx.state.body as ConnectionUpdate);
      },
    },
    {
      method: 'DELETE',
      path: `${P}/:connection_id`,
      operationId: 'deleteModelConnection',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Delete a connection (admin), with its sealed key',
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'No such connection in this project', schema: 'Error' },
        409: { description: 'Evaluators use it', schema: 'Error' },
      },
      async handler(ctx) {
        await connections.remove(ctx.state.projectId!, ctx.params.connection_id!);
        ctx.status = 204;
      },
    },
  ];
}
