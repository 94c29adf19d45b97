import { apiKeyNames } from '../../auth/api-key-repository.ts';
import { projectNames } from '../../auth/project-repository.ts';
import type { Stores } from '../../stores/index.ts';
import type { RouteDef } from './types.ts';

export function contextRoutes(stores: Stores): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/me/context',
      operationId: 'getMeContext',
      summary: 'Who the caller is, and the projects they may act in',
      tag: 'identity',
      access: 'authenticated',
      ingest: true,
      responses: { 200: { description: 'The caller', schema: 'MeContext' } },
      async handler(ctx) {
        const p = ctx.state.principal!;
        const names = await projectNames(stores.postgres, [...p.projects.keys()]);
        // An API key's caller sees the key by its name (the console's shell), never its secret.
        const keyName =
          p.authMethod === 'api_key' && p.keyId && p.projectId
            ? (await apiKeyNames(stores.postgres, p.projectId, [p.keyId])).get(p.keyId)
            : undefined;
        ctx.body = {
          user_id: p.userId,
          auth_method: p.authMethod,
          project_id: p.projectId,
          role: p.role,
          ...(p.keyScope ? { scope: p.keyScope } : {}),
          ...(keyName !== undefined ? { key_name: keyName } : {}),
          projects: [...p.projects].map(([project_id, role]) => ({ project_id, name: names.get(project_id) ?? project_id, role })),
        };
      },
    },
  ];
}
