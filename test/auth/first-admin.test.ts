// The first admin of a project on a fresh deployment with authentication on and no identity
// provider, while the API runs on the embedded stores: from TRACELOOM_INIT_* (idempotent across
// restarts, never resurrecting a revoked key), and with `npm run -s admin` against a running
// `npm start` (the README's path).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { loadConfig } from '../../src/config.ts';
import { runAdmin } from '../helpers/admin-cli.ts';
import { startChild } from '../helpers/child.ts';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { getJson, startTestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

afterAll(async () => {
  await dropTestDatabases();
});

const newKey = () =>
  `tl_${crypto
    .randomBytes(60)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 40)}`;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return { logger: createLogger({ logLevel: 'debug' }, stream), text: () => text };
}

describe(`first admin (${mode} mode)`, () => {
  it('TRACELOOM_INIT_*: the project and its admin key exist at start, stored hashed; restarts change nothing; a revoked key stays revoked', async () => {
    const key = newKey();
    const t = await testEnv({
      AUTH_REQUIRED: 'true',
      TRACELOOM_INIT_PROJECT_ID: 'acme',
      TRACELOOM_INIT_PROJECT_NAME: 'Acme Inc',
      TRACELOOM_INIT_API_KEY: key,
    });
    const logs = capture();
    let svc = await startTestService({}, { env: t, logger: logs.logger });
    try {
      const ctx = await getJson(`${svc.url}/api/me/context`, { headers: bearer(key) });
      expect(ctx.status).toBe(200);
      expect(ctx.body).toMatchObject({
        auth_method: 'api_key',
        project_id: 'acme',
        role: 'admin',
        scope: 'full',
        projects: [{ project_id: 'acme', name: 'Acme Inc', role: 'admin' }],
      });
      // an admin: the budget is its to set
      const budget = await getJson(`${svc.url}/api/projects/acme/budget`, {
        method: 'PUT',
        headers: { ...bearer(key), 'Content-Type': 'application/json' },
        body: JSON.stringify({ budget_monthly_usd: 100, alert_threshold_pct: 80, enforcement_mode: 'alert' }),
      });
      expect(budget.status).toBe(200);
      const rows = await svc.stores.postgres.query<{ name: string; role: string; days: number }>(
        "SELECT name, role, round(extract(epoch FROM expires_at - created_at) / 86400)::int AS days FROM api_keys WHERE project_id = 'acme'",
      );
      expect(rows).toEqual([{ name: 'TRACELOOM_INIT_API_KEY', role: 'admin', days: 3650 }]);
      expect(JSON.stringify(await svc.stores.postgres.query('SELECT * FROM api_keys'))).not.toContain(key.slice(3));
    } finally {
      await svc.close();
    }

    // A restart with the same variables (and a new name) keeps the one key, renames the project
    const renamed = { ...t, config: loadConfig({ ...t.env, TRACELOOM_INIT_PROJECT_NAME: 'Acme Corporation' }) };
    svc = await startTestService({}, { env: renamed, logger: logs.logger });
    try {
      expect((await svc.stores.postgres.query("SELECT count(*)::int AS n FROM api_keys WHERE project_id = 'acme'"))[0]).toEqual({ n: 1 });
      const projects = await getJson(`${svc.url}/api/projects`, { headers: bearer(key) });
      expect(projects.body.items).toEqual([expect.objectContaining({ project_id: 'acme', name: 'Acme Corporation', role: 'admin' })]);
      const keys = await svc.identity.apiKeys.list('acme');
      expect(await svc.identity.apiKeys.revoke('acme', keys[0]!.key_id)).toBe(true);
      expect((await getJson(`${svc.url}/api/me/context`, { headers: bearer(key) })).status).toBe(401);
    } finally {
      await svc.close();
    }

    svc = await startTestService({}, { env: t, logger: logs.logger });
    try {
      expect((await getJson(`${svc.url}/api/me/context`, { headers: bearer(key) })).status).toBe(401);
      expect(logs.text()).toContain('TRACELOOM_INIT_API_KEY is revoked: it is not restored');
    } finally {
      await svc.close();
    }
    expect(logs.text()).toContain('bootstrap admin key stored');
    expect(logs.text()).not.toContain(key.slice(3)); // the secret is never logged
  });

  it("TRACELOOM_INIT_API_KEY that is another project's key stops the start, naming the variable", async () => {
    const key = newKey();
    const t = await testEnv({ AUTH_REQUIRED: 'true', TRACELOOM_INIT_PROJECT_ID: 'first', TRACELOOM_INIT_API_KEY: key });
    const svc = await startTestService({}, { env: t });
    await svc.close();
    const other = { ...t, config: loadConfig({ ...t.env, TRACELOOM_INIT_PROJECT_ID: 'second' }) };
    await expect(startTestService({}, { env: other })).rejects.toThrow(/^TRACELOOM_INIT_API_KEY is already a key of another project/);
  });

  it("the README's path: `npm start`, then `KEY=$(npm run -s admin -- create-key --project acme --name admin --role admin)`, then the key works", async () => {
    const t = await testEnv({ AUTH_REQUIRED: 'true', LOG_LEVEL: 'info' });
    const starting = startChild(t.env);
    // The command is typed as soon as the API has taken DATA_DIR, before it serves: it waits for the socket.
    await until(() => fs.existsSync(path.join(t.dataDir, '.lock')), 'the API to lock DATA_DIR', 60_000);
    const creating = runAdmin(t.env, ['create-key', '--project', 'acme', '--name', 'admin', '--role', 'admin'], { viaNpm: true });
    const api = await starting;
    try {
      expect((await getJson(`${api.url}/api/me/context`)).status).toBe(401); // authentication is on
      const created = await creating;
      expect(created.status, created.stderr).toBe(0);
      expect(created.stderr).toContain('admin socket');
      expect(created.stdout).toMatch(/^tl_[0-9A-Za-z]{40}\n$/);
      const key = created.stdout.trim();
      const projects = await getJson(`${api.url}/api/projects`, { headers: bearer(key) });
      expect(projects.status).toBe(200);
      expect(projects.body.items).toEqual([expect.objectContaining({ project_id: 'acme', role: 'admin' })]);
      expect(api.logs()).toContain('admin socket listening');
      expect(api.logs()).not.toContain(key.slice(3));
    } finally {
      api.child.kill('SIGTERM');
      await api.exited;
    }
  }, 300_000);
});
