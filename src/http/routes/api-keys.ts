import type { ApiKeyService } from '../../auth/key-service.ts';
import type { KeyScope, Role } from '../../auth/principal.ts';
import { notFound } from '../errors.ts';
import type { RouteDef } from './types.ts';

const BASE = '/api/projects/:project_id/api-keys';

export function apiKeyRoutes(apiKeys: ApiKeyService): RouteDef[] {
  return [
    {
      method: 'POST',
      path: BASE,
      operationId: 'createApiKey',
      summary: 'Create an API key (JWT or operator, admin). The key is in this response only.',
      tag: 'api-keys',
      access: 'authenticated',
      need: 'admin',
      jwtOnly: true,
      body: 'ApiKeyCreate',
      responses: { 201: { description: 'Created', schema: 'ApiKeyCreated' } },
      async handler(ctx) {
        const body = ctx.state.body as { name: string; expires_in_days: number; scope: KeyScope; role: Role };
        const { key, view } = await apiKeys.create({
          projectId: ctx.state.projectId!,
          name: body.name,
          expiresInDays: body.expires_in_days,
          scope: body.scope,
          role: body.role,
          createdBy: ctx.state.principal!.userId,
        });
        const { key_id, name, prefix, scope, role, project_id, created_at, expires_at } = view;
        ctx.status = 201;
        ctx.set('Cache-Control', 'no-store');
        ctx.body = { key_id, name, key, prefix, scope, role, project_id, created_at, expires_at };
      },
    },
    {
      method: 'GET',
      path: BASE,
      operationId: 'listApiKeys',
      summary: "List the project's API keys (never the secrets)",
      tag: 'api-keys',
      access: 'authenticated',
      need: 'read',
      responses: { 200: { description: 'Keys, newest first', schema: 'ApiKeyList' } },
      async handler(ctx) {
        ctx.body = { items: await apiKeys.list(ctx.state.projectId!) };
      },
    },
    {
      method: 'GET',
      path: `${BASE}/:key_id`,
      operationId: 'getApiKey',
      summary: 'One API key (JWT or operator)',
      tag: 'api-keys',
      access: 'authenticated',
      need: 'read',
      jwtOnly: true,
      responses: { 200: { description: 'The key', schema: 'ApiKey' }, 404: { description: 'Not in this project', schema: 'Error' } },
      async handler(ctx) {
        const key = await apiKeys.get(ctx.state.projectId!, ctx.params.key_id!);
        if (!key) throw notFound('API key');
        ctx.body = key;
      },
    },
    {
      method: 'DELETE',
      path: `${BASE}/:key_id`,
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (JWT or operator, admin); it fails on its very next use, on every node',
      tag: 'api-keys',
      access: 'authenticated',
      need: 'admin',
      jwtOnly: true,
      responses: { 204: { description: 'Revoked' }, 404: { description: 'Not in this project', schema: 'Error' } },
      async handler(ctx) {
        if (!(await apiKeys.revoke(ctx.state.projectId!, ctx.params.key_id!))) throw notFound('API key');
        ctx.status = 204;
      },
    },
  ];
}
