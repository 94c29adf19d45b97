// API-key management, orchestrated once for every caller (the HTTP routes and the admin CLI):
// creation with its rules, listing, and revocation, which evicts the key from every node's cache
// before it returns.
import { badRequest } from '../errors.ts';
import { createApiKey, getApiKey, listApiKeys, presentKey, revokeApiKey } from './api-key-repository.ts';
import type { KeyVerifier } from './key-verifier.ts';
import type { KeyScope, Role } from './principal.ts';
import type { Queryable } from '../stores/postgres.ts';

export type ApiKeyView = ReturnType<typeof presentKey>;

export interface KeyRequest {
  projectId: string;
  name: string;
  expiresInDays: number;
  scope: KeyScope;
  role: Role;
  /** Who asks: a user id, `api_key:<id>`, `operator`. */
  createdBy: string;
}

export interface ApiKeyService {
  /** The new key's secret (shown once) and its public view. */
  create(request: KeyRequest): Promise<{ key: string; view: ApiKeyView }>;
  /** A project's keys, newest first, with `last_used_at` as of now on this node. */
  list(projectId: string): Promise<ApiKeyView[]>;
  get(projectId: string, keyId: string): Promise<ApiKeyView | undefined>;
  /** Revokes and evicts the key everywhere; false when the project has no such key. */
  revoke(projectId: string, keyId: string): Promise<boolean>;
}

export function createApiKeyService(postgres: Queryable, verifier: KeyVerifier): ApiKeyService {
  return {
    async create(r) {
      // An ingest key exists to send data, which a viewer may not do.
      if (r.scope === 'ingest' && r.role === 'viewer') throw badRequest('role: an ingest key sends data, so its role is member or admin');
      const { row, key } = await createApiKey(postgres, r);
      return { key, view: presentKey(row) };
    },
    async list(projectId) {
      await verifier.flushUsage();
      return (await listApiKeys(postgres, projectId)).map(presentKey);
    },
    async get(projectId, keyId) {
      const row = await getApiKey(postgres, projectId, keyId);
      return row && presentKey(row);
    },
    async revoke(projectId, keyId) {
      const keyHash = await revokeApiKey(postgres, projectId, keyId);
      if (!keyHash) return false;
      await verifier.evict(keyHash);
      return true;
    },
  };
}
