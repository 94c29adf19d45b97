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
        ctx.body = {
          user_id: p.userId,
          auth_method: p.authMethod,
          project_id: p.projectId,
          role: p.role,
          ...(p.keyScope ? { scope: p.keyScope } : {}),
          projects: [...p.projects].map(([project_id, role]) => ({ project_id, name: names.get(project_id) ?? project_id, role })),
        };
      },
    },
  ];
}
