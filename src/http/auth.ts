// The authentication seam. Resolution order (api.md part 1): X-API-Key, then Authorization:
// Bearer, then the default project only when AUTH_REQUIRED=false. A credential that is present
// but cannot be verified is a 401 in every mode: it never silently falls through.
//
// API keys and JWTs are verified by the identity work; until it lands, no credential can be
// verified, so a presented credential is a 401 and only AUTH_REQUIRED=false grants access.
import type Koa from 'koa';
import type { Config } from '../config.ts';
import { unauthorized } from './errors.ts';
import type { RouteDef, RouteState } from './routes/types.ts';

export type Role = 'admin' | 'member' | 'viewer';

export interface Principal {
  userId: string;
  authMethod: 'api_key' | 'jwt' | 'none';
  /** The project the caller acts in by default. */
  projectId: string;
  role: Role;
}

export const DEFAULT_PROJECT_ID = 'default';
export const DEV_USER_ID = 'dev';

export interface Authenticator {
  /** Returns the principal of a request; throws 401 (or 503 when an identity store is down). */
  authenticate(headers: { apiKey?: string; authorization?: string }): Promise<Principal>;
}

export function createAuthenticator(config: Pick<Config, 'authRequired'>): Authenticator {
  return {
    async authenticate({ apiKey, authorization }): Promise<Principal> {
      if (apiKey !== undefined || authorization !== undefined) throw unauthorized();
      if (!config.authRequired) {
        return { userId: DEV_USER_ID, authMethod: 'none', projectId: DEFAULT_PROJECT_ID, role: 'admin' };
      }
      throw unauthorized();
    },
  };
}

/** Per-route middleware: public routes pass; others get `ctx.state.principal` or a 401. */
export function requireAuth(route: RouteDef, auth: Authenticator): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    if (route.access !== 'public') {
      ctx.state.principal = await auth.authenticate({
        apiKey: ctx.get('X-API-Key') || undefined,
        authorization: ctx.get('Authorization') || undefined,
      });
    }
    await next();
  };
}
