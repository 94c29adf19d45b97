// Resolution of the caller (docs/identity.md): X-API-Key, then Authorization: Bearer (an API key when
// the token is `tl_…`, a JWT otherwise), then the default project only when AUTH_REQUIRED=false.
// A credential that is present but invalid is a 401 in every mode: it never silently falls
// through to the default project.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Stores } from '../stores/index.ts';
import type { Broadcast } from '../stores/broadcast.ts';
import { unauthorized } from '../errors.ts';
import { createJwtVerifier, type JwtVerifier } from './jwt.ts';
import { createKeyVerifier, type KeyVerifier } from './key-verifier.ts';
import { createApiKeyService, type ApiKeyService } from './key-service.ts';
import type { Principal, Role } from './principal.ts';
import { ensureMemberships } from './project-repository.ts';
import { applyInitConfig } from './bootstrap.ts';

export const DEFAULT_PROJECT_ID = 'default';
export const DEV_USER_ID = 'dev';
const PROVISIONED_TTL_MS = 60_000;

export interface Credentials {
  apiKey?: string;
  authorization?: string;
}

export interface Identity {
  /** The caller of a request; throws 401 (or 503 when the identity provider or PostgreSQL is down). */
  authenticate(credentials: Credentials): Promise<Principal>;
  readonly keys: KeyVerifier;
  /** API-key management, for the routes and the admin CLI alike. */
  readonly apiKeys: ApiKeyService;
  readonly jwt: JwtVerifier | undefined;
  close(): Promise<void>;
}

export async function createIdentity(config: Config, stores: Stores, broadcast: Broadcast, logger: Logger): Promise<Identity> {
  const keys = createKeyVerifier(stores.postgres, broadcast, logger);
  const jwt = createJwtVerifier(config);
  const devPrincipal: Principal = {
    userId: DEV_USER_ID,
    authMethod: 'none',
    projectId: DEFAULT_PROJECT_ID,
    role: 'admin',
    projects: new Map([[DEFAULT_PROJECT_ID, 'admin']]),
  };
  if (!config.authRequired) await ensureMemberships(stores.postgres, DEV_USER_ID, devPrincipal.projects);
  await applyInitConfig(config.init, stores.postgres, logger);

  // Tokens repeat on every request: write users/projects/memberships once per (sub, projects, role) a minute.
  const provisioned = new Map<string, number>();
  const provision = async (sub: string, projects: ReadonlyMap<string, Role>) => {
    const key = `${sub}\u0000${[...projects].map(([p, r]) => `${p}:${r}`).join(',')}`;
    const at = provisioned.get(key);
    if (at !== undefined && Date.now() - at < PROVISIONED_TTL_MS) return;
    await ensureMemberships(stores.postgres, sub, projects);
    if (provisioned.size > 50_000) provisioned.clear();
    provisioned.set(key, Date.now());
  };

  // Same 401 for every rejection so a caller learns nothing about which keys exist; the reason
  // is logged (never the credential itself).
  const reject = (method: string, reason: string, keyId?: string): never => {
    logger.info({ auth_method: method, reason, key_id: keyId }, 'authentication rejected');
    throw unauthorized();
  };

  return {
    keys,
    apiKeys: createApiKeyService(stores.postgres, keys),
    jwt,
    async authenticate({ apiKey, authorization }: Credentials): Promise<Principal> {
      const bearer = apiKey === undefined && authorization !== undefined ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
      // `Bearer tl_…` is an API key (collectors and SDKs that only speak bearer auth); a JWT never starts so.
      if (bearer?.startsWith('tl_')) apiKey = bearer;
      if (apiKey !== undefined) {
        const v = await keys.verify(apiKey.trim());
        if (!v.ok) return reject('api_key', v.reason, v.keyId);
        const project = v.row.project_id;
        return {
          userId: `api_key:${v.row.key_id}`,
          authMethod: 'api_key',
          projectId: project,
          role: v.row.role, // an API key acts with its role in its one project
          projects: new Map([[project, v.row.role]]),
          keyId: v.row.key_id,
          keyScope: v.row.scope,
        };
      }
      if (authorization !== undefined) {
        if (bearer === undefined) return reject('jwt', 'authorization header is not "Bearer <token>"');
        if (!jwt) return reject('jwt', 'no identity provider configured (IDP_JWKS_URL)');
        const v = await jwt.verify(bearer);
        if (!v.ok) return reject('jwt', v.reason);
        const t = v.token;
        await provision(t.sub, t.projects);
        return { userId: t.sub, authMethod: 'jwt', projectId: t.defaultProject, role: t.role, projects: t.projects };
      }
      if (!config.authRequired) return devPrincipal;
      return reject('none', 'no credentials');
    },
    close: () => keys.close(),
  };
}
