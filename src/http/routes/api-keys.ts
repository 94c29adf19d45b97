import { createApiKey, getApiKey, listApiKeys, presentKey, revokeApiKey } from '../../auth/api-keys.ts';
import type { Identity } from '../../auth/identity.ts';
import type { Stores } from '../../stores/index.ts';
import { notFound } from '../errors.ts';
import type { RouteDef } from './types.ts';

const BASE = '/api/projects/:project_id/api-keys';

export function apiKeyRoutes(stores: Stores, identity: Identity): RouteDef[] {
  return [
    {
      method: 'POST',
      path: BASE,
      operationId: 'createApiKey',
      summary: 'Create an API key (JWT, admin). The key is in this response only.',
      tag: 'api-keys',
      access: 'authenticated',
      need: 'admin',
      jwtOnly: true,
      body: 'ApiKeyCreate',
      responses: { 201: { description: 'Created', schema: 'ApiKeyCreated' } },
      async handler(ctx) {
        const body = ctx.state.body as { name: string; expires_in_days: number; scope: 'full' | 'ingest' };
        const { row, key } = await createApiKey(stores.postgres, {
          projectId: ctx.state.projectId!,
          name: body.name,
          expiresInDays: body.expires_in_days,
          scope: body.scope,
          createdBy: ctx.state.principal!.userId,
        });
        const { key_id, name, prefix, scope, project_id, created_at, expires_at } = presentKey(row);
        ctx.status = 201;
        ctx.set('Cache-Control', 'no-store');
        ctx.body = { key_id, name, key, prefix, scope, project_id, created_at, expires_at };
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
        await identity.keys.flushUsage(); // last_used_at as of now, on this node
        ctx.body = { items: (await listApiKeys(stores.postgres, ctx.state.projectId!)).map(presentKey) };
      },
    },
    {
      method: 'GET',
      path: `${BASE}/:key_id`,
      operationId: 'getApiKey',
      summary: 'One API key (JWT)',
      tag: 'api-keys',
      access: 'authenticated',
      need: 'read',
      jwtOnly: true,
      responses: { 200: { description: 'The key', schema: 'ApiKey' }, 404: { description: 'Not in this project', schema: 'Error' } },
      async handler(ctx) {
        const row = await getApiKey(stores.postgres, ctx.state.projectId!, ctx.params.key_id!);
        if (!row) throw notFound('API key');
        ctx.body = presentKey(row);
      },
    },
    {
      method: 'DELETE',
      path: `${BASE}/:key_id`,
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (JWT, admin); it fails on its very next use',
      tag: 'api-keys',
      access: 'authenticated',
      need: 'admin',
      jwtOnly: true,
      responses: { 204: { description: 'Revoked' }, 404: { description: 'Not in this project', schema: 'Error' } },
      async handler(ctx) {
        const keyHash = await revokeApiKey(stores.postgres, ctx.state.projectId!, ctx.params.key_id!);
        if (!keyHash) throw notFound('API key');
        await identity.keys.evict(keyHash);
        ctx.status = 204;
      },
    },
  ];
}
