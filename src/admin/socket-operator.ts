// The operator through the running API's admin socket (DATA_DIR/admin.sock): plain HTTP requests
// to the API's own routes, which treat requests on that socket as the operator's. Errors come back
// as the API's {"detail"} with its status, turned back into the domain error it stands for.
import http from 'node:http';
import { NotFound } from '../errors.ts';
import { fromHttpStatus } from '../http/errors.ts';
import type { ApiKeyView } from '../auth/key-service.ts';
import type { Operator, ProjectView } from './operator.ts';

const TIMEOUT_MS = 30_000;

function request(socketPath: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        method,
        path,
        headers: {
          Host: 'localhost',
          Accept: 'application/json',
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
        },
        timeout: TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = text;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`the API did not answer on ${socketPath} within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The answer's body when its status is one of `ok`; the API's error otherwise. */
async function call<T = unknown>(socketPath: string, ok: number[], method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(socketPath, method, path, body);
  if (ok.includes(res.status)) return res.body as T;
  const detail = (res.body as { detail?: unknown } | undefined)?.detail;
  throw fromHttpStatus(res.status, typeof detail === 'string' ? detail : `the API answered ${res.status}`);
}

const projectPath = (projectId: string) => `/api/projects/${encodeURIComponent(projectId)}`;

/** Connects to the API's admin socket; rejects with the connection's error (ENOENT, ECONNREFUSED) when nothing answers there. */
export async function socketOperator(socketPath: string): Promise<Operator> {
  await call(socketPath, [200, 503], 'GET', '/api/health');
  return {
    via: 'socket',
    createProject: (projectId, name) => call<ProjectView>(socketPath, [201], 'POST', '/api/projects', { project_id: projectId, name }),
    listProjects: async () => (await call<{ items: ProjectView[] }>(socketPath, [200], 'GET', '/api/projects')).items,
    async createKey(r) {
      // The project is created when absent, as on the stores.
      await call(socketPath, [201, 409], 'POST', '/api/projects', { project_id: r.projectId });
      const created = await call<{ key: string } & Omit<ApiKeyView, 'last_used_at' | 'revoked_at' | 'status'>>(
        socketPath,
        [201],
        'POST',
        `${projectPath(r.projectId)}/api-keys`,
        {
          name: r.name,
          expires_in_days: r.expiresInDays,
          scope: r.scope,
          role: r.role,
        },
      );
      const { key, ...view } = created;
      return { key, view: { ...view, last_used_at: null, revoked_at: null, status: 'active' } };
    },
    listKeys: async (projectId) =>
      (await call<{ items: ApiKeyView[] }>(socketPath, [200], 'GET', `${projectPath(projectId)}/api-keys`)).items,
    async revokeKey(projectId, keyId) {
      try {
        await call(socketPath, [204], 'DELETE', `${projectPath(projectId)}/api-keys/${encodeURIComponent(keyId)}`);
        return true;
      } catch (err) {
        // Over HTTP both a missing project and a missing key are a 404: the detail tells them apart.
        if (err instanceof NotFound && err.detail === 'API key not found') return false;
        throw err;
      }
    },
    close: async () => undefined,
  };
}
