// API keys: `tl_` + 40 base62 characters from a CSPRNG (~238 bits). Only the SHA-256 of a key is
// stored (keys are high-entropy random, so a fast hash is right; lookup by hash needs no
// constant-time compare), with `prefix` (tl_ + 8) for display. The key is shown once, at creation.
import crypto from 'node:crypto';
import type { Queryable } from '../stores/postgres.ts';
import type { KeyScope, Role } from './principal.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PATTERN = /^tl_[0-9A-Za-z]{40}$/;
const KEY_BODY_LENGTH = 40;

export function generateApiKey(): string {
  let out = 'tl_';
  while (out.length < 3 + KEY_BODY_LENGTH) {
    for (const byte of crypto.randomBytes(64)) {
      // Rejection sampling: 248 = 4 × 62, so every character is equally likely.
      if (byte < 248 && out.length < 3 + KEY_BODY_LENGTH) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function hashApiKey(key: string): string {
  return crypto.createHash('sha256').update(key).digest('hex');
}

export interface ApiKeyRow {
  key_id: string;
  project_id: string;
  name: string;
  prefix: string;
  scope: KeyScope;
  role: Role;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export type ApiKeyStatus = 'active' | 'expired' | 'revoked';

export function keyStatus(row: Pick<ApiKeyRow, 'expires_at' | 'revoked_at'>, now = Date.now()): ApiKeyStatus {
  if (row.revoked_at) return 'revoked';
  if (row.expires_at.getTime() <= now) return 'expired';
  return 'active';
}

const COLUMNS = 'key_id, project_id, name, prefix, scope, role, created_at, expires_at, revoked_at, last_used_at';

export interface NewApiKey {
  projectId: string;
  name: string;
  expiresInDays: number;
  scope: KeyScope;
  role: Role;
  createdBy: string | null;
}

/** Stores a key: a new random one, or `key` when given (the operator-chosen bootstrap key, bootstrap.ts). */
export async function createApiKey(db: Queryable, input: NewApiKey, key = generateApiKey()): Promise<{ row: ApiKeyRow; key: string }> {
  const [row] = await db.query<ApiKeyRow & Record<string, unknown>>(
    `INSERT INTO api_keys (project_id, name, key_hash, prefix, scope, role, created_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(days => $8::int))
     RETURNING ${COLUMNS}`,
    [input.projectId, input.name, hashApiKey(key), key.slice(0, 11), input.scope, input.role, input.createdBy, input.expiresInDays],
  );
  return { row: row as ApiKeyRow, key };
}

/** The stored row of a key secret (by its hash), whichever project it belongs to. */
export async function getApiKeyBySecret(db: Queryable, key: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query<ApiKeyRow & Record<string, unknown>>(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [
    hashApiKey(key),
  ]);
  return row;
}

export async function listApiKeys(db: Queryable, projectId: string): Promise<ApiKeyRow[]> {
  return db.query<ApiKeyRow & Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM api_keys WHERE project_id = $1 ORDER BY created_at DESC, key_id`,
    [projectId],
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function getApiKey(db: Queryable, projectId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  if (!UUID.test(keyId)) return undefined;
  const [row] = await db.query<ApiKeyRow & Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM api_keys WHERE project_id = $1 AND key_id = $2`,
    [projectId, keyId],
  );
  return row;
}

/** Marks a key revoked; returns its hash for cache eviction, or undefined when not in this project. */
export async function revokeApiKey(db: Queryable, projectId: string, keyId: string): Promise<string | undefined> {
  if (!UUID.test(keyId)) return undefined;
  const [row] = await db.query<{ key_hash: string }>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE project_id = $1 AND key_id = $2 RETURNING key_hash`,
    [projectId, keyId],
  );
  return row?.key_hash;
}

export interface VerifiedKeyRow {
  key_id: string;
  project_id: string;
  scope: KeyScope;
  role: Role;
  expires_at: Date;
  revoked_at: Date | null;
}

export async function findKeyByHash(db: Queryable, keyHash: string): Promise<VerifiedKeyRow | undefined> {
  const [row] = await db.query<VerifiedKeyRow & Record<string, unknown>>(
    'SELECT key_id, project_id, scope, role, expires_at, revoked_at FROM api_keys WHERE key_hash = $1',
    [keyHash],
  );
  return row;
}

export async function touchKeys(db: Queryable, keyIds: readonly string[]): Promise<void> {
  if (keyIds.length === 0) return;
  await db.query('UPDATE api_keys SET last_used_at = now() WHERE key_id = ANY($1::uuid[])', [keyIds]);
}

/** The public shape of a key (never the secret, never the hash). */
export function presentKey(row: ApiKeyRow) {
  return {
    key_id: row.key_id,
    name: row.name,
    prefix: row.prefix,
    scope: row.scope,
    role: row.role,
    project_id: row.project_id,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    status: keyStatus(row),
  };
}

/**
 * The names of these keys of the project (key_id → name), revoked and expired keys included: an
 * execution names the key that sent it whatever became of the key since. Ids that are not UUIDs
 * or not of this project are simply absent.
 */
export async function apiKeyNames(db: Queryable, projectId: string, keyIds: readonly string[]): Promise<Map<string, string>> {
  const ids = [...new Set(keyIds.filter((id) => UUID.test(id)))];
  if (ids.length === 0) return new Map();
  const rows = await db.query<{ key_id: string; name: string }>(
    'SELECT key_id, name FROM api_keys WHERE project_id = $1 AND key_id = ANY($2::uuid[])',
    [projectId, ids],
  );
  return new Map(rows.map((r) => [r.key_id, r.name]));
}
