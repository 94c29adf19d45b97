// Projects: the caller's (GET /api/projects), one of them, and creation by the operator only (a
// request on the local admin socket, docs/identity.md): a project's admin is a tenant, and no
// role in one project reaches beyond it. With an identity provider, projects appear when a token
// names them.
import { createProject, listProjects, presentProject } from '../../auth/project-repository.ts';
import { roleIn } from '../../auth/principal.ts';
import type { Stores } from '../../stores/index.ts';
import { notFound } from '../errors.ts';
import type { RouteDef } from './types.ts';

const tag = 'projects';

export function projectRoutes(stores: Stores): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/projects',
      operationId: 'listProjects',
      tag,
      access: 'authenticated',
      summary: 'The projects the caller may act in, with its role in each (the operator: every project)',
      responses: { 200: { description: 'Projects, in the order of the credential (the operator: by id)', schema: 'ProjectList' } },
      async handler(ctx) {
        const p = ctx.state.principal!;
        const rows = await listProjects(stores.postgres, p.authMethod === 'operator' ? 'all' : [...p.projects.keys()]);
        ctx.body = { items: rows.map((r) => presentProject(r, roleIn(p, r.project_id)!)) };
      },
    },
    {
      method: 'POST',
      path: '/api/projects',
      operationId: 'createProject',
      tag,
      access: 'authenticated',
      operatorOnly: true,
      body: 'ProjectCreate',
      summary: 'Create a project (operator only: the admin socket in DATA_DIR, which `npm run admin` uses)',
      responses: {
        201: { description: 'Created', schema: 'Project' },
        409: { description: 'A project with this id exists', schema: 'Error' },
      },
      async handler(ctx) {
        const body = ctx.state.body as { project_id: string; name?: string };
        const row = await createProject(stores.postgres, body.project_id, body.name ?? body.project_id);
        ctx.status = 201;
        ctx.body = presentProject(row, 'admin');
      },
    },
    {
      method: 'GET',
      path: '/api/projects/:project_id',
      operationId: 'getProject',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One project the caller may act in, with its role there',
      responses: { 200: { description: 'The project', schema: 'Project' } },
      async handler(ctx) {
        const [row] = await listProjects(stores.postgres, [ctx.state.projectId!]);
        if (!row) throw notFound('Project');
        ctx.body = presentProject(row, roleIn(ctx.state.principal!, ctx.state.projectId!)!);
      },
    },
  ];
}
