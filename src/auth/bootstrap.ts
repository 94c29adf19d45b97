// The first project and admin key of a deployment from TRACELOOM_INIT_* (like Langfuse's
// LANGFUSE_INIT_*), applied at every start and idempotent: the project is created if absent (and
// renamed to TRACELOOM_INIT_PROJECT_NAME when that is set); the operator-chosen key is stored
// hashed as an admin key of that project unless its hash is stored already. A key revoked since
// stays revoked (a restart does not bring it back); a key that belongs to another project stops
// the start, since the variables then say something that is not true.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Queryable } from '../stores/postgres.ts';
import { createApiKey, getApiKeyBySecret, keyStatus } from './api-key-repository.ts';
import { ensureProject, renameProject } from './project-repository.ts';

/** The longest life a key can have (docs/identity.md: expires_in_days ≤ 3650). */
export const INIT_KEY_DAYS = 3650;
export const INIT_KEY_NAME = 'TRACELOOM_INIT_API_KEY';

export async function applyInitConfig(init: Config['init'], db: Queryable, logger: Logger): Promise<void> {
  if (!init) return;
  await ensureProject(db, init.projectId, init.projectName ?? init.projectId);
  if (init.projectName) await renameProject(db, init.projectId, init.projectName);
  if (!init.apiKey) return;
  const existing = await getApiKeyBySecret(db, init.apiKey);
  if (existing && existing.project_id !== init.projectId) {
    throw new Error(
      `TRACELOOM_INIT_API_KEY is already a key of another project than TRACELOOM_INIT_PROJECT_ID (${init.projectId}): choose another key`,
    );
  }
  if (existing) {
    const status = keyStatus(existing);
    if (status !== 'active')
      logger.warn(
        { key_id: existing.key_id, status },
        `TRACELOOM_INIT_API_KEY is ${status}: it is not restored; set a new key or create one with npm run admin`,
      );
    return;
  }
  try {
    const { row } = await createApiKey(
      db,
      { projectId: init.projectId, name: INIT_KEY_NAME, expiresInDays: INIT_KEY_DAYS, scope: 'full', role: 'admin', createdBy: 'operator' },
      init.apiKey,
    );
    logger.info({ project_id: init.projectId, key_id: row.key_id, prefix: row.prefix }, 'bootstrap admin key stored');
  } catch (err) {
    // Another API process starting at the same time stored it first (unique key_hash).
    if ((err as { code?: string }).code !== '23505') throw err;
  }
}
