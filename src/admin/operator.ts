// What the admin CLI does, behind one interface with two ways of doing it: on the stores directly
// (when no process holds DATA_DIR: servers, or the API stopped), or through the running API's
// admin socket (when the API holds the embedded stores). Both answer the same shapes and the same
// errors, so every command behaves the same either way.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { notFound } from '../errors.ts';
import { bootStores } from '../service.ts';
import { createBroadcast } from '../stores/broadcast.ts';
import { createKeyVerifier } from '../auth/key-verifier.ts';
import { createApiKeyService, type ApiKeyView, type KeyRequest } from '../auth/key-service.ts';
import { createProject, ensureProject, listProjects, presentProject, projectExists } from '../auth/project-repository.ts';

export type ProjectView = ReturnType<typeof presentProject>;
export type NewKey = Omit<KeyRequest, 'createdBy'>;

export interface Operator {
  /** How it reaches the stores. */
  readonly via: 'stores' | 'socket';
  /** 409 when the project exists. */
  createProject(projectId: string, name: string): Promise<ProjectView>;
  listProjects(): Promise<ProjectView[]>;
  /** Creates the project first when it does not exist (docs/identity.md, "The first admin"). */
  createKey(request: NewKey): Promise<{ key: string; view: ApiKeyView }>;
  /** 404 when the project does not exist. */
  listKeys(projectId: string): Promise<ApiKeyView[]>;
  /** False when the project has no such key; 404 when the project does not exist. */
  revokeKey(projectId: string, keyId: string): Promise<boolean>;
  close(): Promise<void>;
}

export const OPERATOR_USER = 'operator';

/** The operator on its own stores (migrations applied on opening, as at every start). */
export async function storesOperator(config: Config, logger: Logger): Promise<Operator> {
  const stores = await bootStores(config, logger);
  const db = stores.postgres;
  // Revocations reach running API nodes (with Redis) through the same broadcast as the routes'.
  const broadcast = createBroadcast(stores.redis, logger);
  const verifier = createKeyVerifier(db, broadcast, logger);
  const keys = createApiKeyService(db, verifier);
  const requireProject = async (projectId: string) => {
    if (!(await projectExists(db, projectId))) throw notFound('Project');
  };
  return {
    via: 'stores',
    async createProject(projectId, name) {
      return presentProject(await createProject(db, projectId, name), 'admin');
    },
    async listProjects() {
      return (await listProjects(db, 'all')).map((r) => presentProject(r, 'admin'));
    },
    async createKey(request) {
      await ensureProject(db, request.projectId);
      return keys.create({ ...request, createdBy: OPERATOR_USER });
    },
    async listKeys(projectId) {
      await requireProject(projectId);
      return keys.list(projectId);
    },
    async revokeKey(projectId, keyId) {
      await requireProject(projectId);
      return keys.revoke(projectId, keyId);
    },
    async close() {
      await verifier.close();
      broadcast.close();
      await stores.close();
    },
  };
}
