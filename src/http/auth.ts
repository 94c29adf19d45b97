// Authentication and authorisation at the edge, driven by each route's declaration in the route
// table: `access`, the role it needs in the path's project, whether ingest keys and API keys may
// call it. Every project-scoped route takes project_id from the path and refuses a caller
// without access to it (403, the same for a project that does not exist). A request that came
// through the local admin socket is the operator's: admin of every project that exists.
import type Koa from 'koa';
import type { Identity } from '../auth/identity.ts';
import { allows, OPERATOR, roleIn } from '../auth/principal.ts';
import { projectExists } from '../auth/project-repository.ts';
import type { Queryable } from '../stores/postgres.ts';
import { isOperatorRequest } from './admin-socket.ts';
import { forbidden, notFound } from './errors.ts';
import type { RouteDef, RouteState } from './routes/types.ts';

export type { Principal } from '../auth/principal.ts';

export function authenticate(route: RouteDef, identity: Identity): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    if (route.access !== 'public') {
      ctx.state.principal = isOperatorRequest(ctx.req)
        ? OPERATOR
        : await identity.authenticate({
            apiKey: ctx.get('X-API-Key') || undefined,
            authorization: ctx.get('Authorization') || undefined,
          });
    }
    await next();
  };
}

export function authorize(route: RouteDef, postgres: Queryable): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    const p = ctx.state.principal;
    if (route.access === 'public' || !p) return next();
    if (route.operatorOnly && p.authMethod !== 'operator') throw forbidden();
    if (route.jwtOnly && p.authMethod === 'api_key') throw forbidden();
    // An ingest key (the one an agent ships with) may only send data and read its context.
    if (p.keyScope === 'ingest' && !route.ingest) throw forbidden();
    const projectId = (ctx as unknown as { params: Record<string, string> }).params.project_id;
    if (projectId !== undefined) {
      const role = roleIn(p, projectId);
      if (!role || !allows(role, route.need ?? 'read')) throw forbidden();
      // The operator may name any project: one that does not exist is said so.
      if (p.authMethod === 'operator' && !(await projectExists(postgres, projectId))) throw notFound('Project');
      ctx.state.projectId = projectId;
    }
    await next();
  };
}
