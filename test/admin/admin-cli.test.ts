// The operator's commands (`npm run admin`): on the stores when no process holds DATA_DIR, through
// the running API's admin socket when one does; the same commands and output either way, only the
// key on stdout. The admin socket itself: mode 0600, its requests are the operator's, and project
// creation is the operator's alone.
import fs from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminSocketPath } from '../../src/http/admin-socket.ts';
import { runAdmin } from '../helpers/admin-cli.ts';
import { dropTestDatabases, mode, tempDir, testEnv, type TestEnv } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

/** What create-key prints: the key and its newline, nothing else. */
const KEY_LINE = /^tl_[0-9A-Za-z]{40}\n$/;
const UNAUTHORIZED = { detail: 'Unauthorized - No valid authentication provided' };
let t: TestEnv;
let cliEnv: Record<string, string>;
let svc: TestService | undefined;
let firstAdminKey = '';

beforeAll(async () => {
  t = await testEnv({ AUTH_REQUIRED: 'true' });
  // The CLI on the stores is another process: its own chDB directory (one engine per directory);
  // PostgreSQL (DATA_DIR, or the server) is the one the service then uses.
  cliEnv = { ...t.env, CHDB_DIR: tempDir('traceloom-chdb-cli-') };
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** A request on the admin socket, as `curl --unix-socket DATA_DIR/admin.sock` makes it. */
function onSocket(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { socketPath: adminSocketPath(t.dataDir), method, path, headers: payload ? { 'Content-Type': 'application/json' } : {} },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe(`npm run admin (${mode} mode)`, () => {
  it('with the API stopped, on the stores: create-project, create-key --role admin (only the key on stdout), list-keys; usage errors exit 2', async () => {
    const project = await runAdmin(cliEnv, ['create-project', '--project', 'selfhost', '--name', 'Self Host']);
    expect(project.status, project.stderr).toBe(0);
    expect(project.stdout).toBe('selfhost\n');

    const created = await runAdmin(cliEnv, ['create-key', '--project', 'selfhost', '--name', 'first admin', '--role', 'admin'], {
      viaNpm: true,
    });
    expect(created.status, created.stderr).toBe(0);
    // `KEY=$(npm run -s admin -- create-key ...)`: stdout is the key and its newline, nothing else
    expect(created.stdout).toMatch(KEY_LINE);
    firstAdminKey = created.stdout.trim();
    expect(created.stderr).toContain('role admin');
    expect(created.stderr).not.toContain(firstAdminKey);

    const listed = await runAdmin(cliEnv, ['list-keys', '--project', 'selfhost']);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`\t${firstAdminKey.slice(0, 11)}\tadmin\tfull\tactive\t`);
    expect(listed.stdout).toMatch(/\tfirst admin\n$/);
    expect(listed.stdout).not.toContain(firstAdminKey);

    for (const [args, message] of [
      [['create-key', '--project', 'selfhost'], '--name is required'],
      [['create-key', '--project', 'selfhost', '--name', 'x', '--role', 'owner'], '--role must be admin, member, viewer'],
      [['create-key', '--project', 'not a project', '--name', 'x'], 'is not a valid project id'],
      [['create-project'], '--project is required'],
      [['list-projects', '--all'], 'unknown argument "--all"'],
    ] as const) {
      const bad = await runAdmin(cliEnv, [...args]);
      expect(bad.status, args.join(' ')).toBe(2);
      expect(bad.stderr).toContain(message);
      expect(bad.stdout).toBe('');
    }
  }, 300_000);

  it('while the API runs on DATA_DIR, through its admin socket: the same commands; a new key works at once, a revoked one fails at once', async () => {
    svc = await startTestService({}, { env: t });
    // The key made on the stores is an admin of its project: it sets a price and the retention
    expect((await getJson(`${svc.url}/api/me/context`, { headers: bearer(firstAdminKey) })).body).toMatchObject({
      project_id: 'selfhost',
      role: 'admin',
    });
    const price = await getJson(`${svc.url}/api/projects/selfhost/models/house-model`, {
      method: 'PUT',
      headers: { ...bearer(firstAdminKey), 'Content-Type': 'application/json' },
      body: JSON.stringify({ input_per_mtok: 1, output_per_mtok: 2 }),
    });
    expect(price.status).toBe(200);
    expect(price.body.created_by).toMatch(/^api_key:/);

    const created = await runAdmin(
      cliEnv,
      ['create-key', '--project', 'newproj', '--name', 'second', '--role', 'admin', '--expires-in-days', '7'],
      { viaNpm: true },
    );
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toMatch(KEY_LINE);
    expect(created.stderr).toContain('admin socket');
    const key = created.stdout.trim();
    const project = await getJson(`${svc.url}/api/projects/newproj`, { headers: bearer(key) });
    expect(project.status).toBe(200);
    expect(project.body).toMatchObject({ project_id: 'newproj', name: 'newproj', role: 'admin' });

    const ingest = await runAdmin(cliEnv, ['create-key', '--project', 'newproj', '--name', 'agent', '--scope', 'ingest']);
    expect(ingest.status, ingest.stderr).toBe(0);
    const ctx = await getJson(`${svc.url}/api/me/context`, { headers: bearer(ingest.stdout.trim()) });
    expect(ctx.body).toMatchObject({ project_id: 'newproj', role: 'member', scope: 'ingest' });
    const viewerIngest = await runAdmin(cliEnv, [
      'create-key',
      '--project',
      'newproj',
      '--name',
      'x',
      '--scope',
      'ingest',
      '--role',
      'viewer',
    ]);
    expect(viewerIngest.status).toBe(2); // the API's 400, through the socket
    expect(viewerIngest.stderr).toContain('role: an ingest key sends data, so its role is member or admin');
    expect(viewerIngest.stdout).toBe('');

    const projects = await runAdmin(cliEnv, ['list-projects']);
    expect(projects.status, projects.stderr).toBe(0);
    expect(projects.stdout).toMatch(/^newproj\tnewproj\t\S+Z\nselfhost\tSelf Host\t\S+Z\n/m);
    const again = await runAdmin(cliEnv, ['create-project', '--project', 'selfhost']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('Project selfhost already exists');
    const missing = await runAdmin(cliEnv, ['list-keys', '--project', 'nosuch']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('Project not found');

    const listed = await runAdmin(cliEnv, ['list-keys', '--project', 'newproj']);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`\t${key.slice(0, 11)}\tadmin\tfull\tactive\t`);
    const keyId = listed.stdout
      .split('\n')
      .find((l) => l.includes(key.slice(0, 11)))!
      .split('\t')[0]!;
    expect((await getJson(`${svc.url}/api/me/context`, { headers: bearer(key) })).status).toBe(200); // cached on the node now
    const revoked = await runAdmin(cliEnv, ['revoke-key', '--project', 'newproj', '--key-id', keyId]);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`revoked ${keyId}\n`);
    const after = await getJson(`${svc.url}/api/me/context`, { headers: bearer(key) });
    expect(after.status).toBe(401);
    expect(after.body).toEqual(UNAUTHORIZED);
    const unknown = await runAdmin(cliEnv, ['revoke-key', '--project', 'newproj', '--key-id', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no API key 00000000-0000-4000-8000-000000000000 in project newproj');
  }, 300_000);

  it("the admin socket: mode 0600, its requests are the operator's; creating a project is refused over TCP, even to an admin", async () => {
    const file = adminSocketPath(t.dataDir);
    expect(fs.statSync(file).isSocket()).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    expect((await onSocket('GET', '/api/me/context')).body).toMatchObject({
      user_id: 'operator',
      auth_method: 'operator',
      project_id: null,
      role: 'admin',
    });
    const made = await onSocket('POST', '/api/projects', { project_id: 'acme', name: 'Acme Inc' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ project_id: 'acme', name: 'Acme Inc', role: 'admin' });
    expect(made.body.created_at).toMatch(/Z$/);
    expect(await onSocket('POST', '/api/projects', { project_id: 'acme' })).toEqual({
      status: 409,
      body: { detail: 'Project acme already exists' },
    });
    const bad = await onSocket('POST', '/api/projects', { project_id: '-nope' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('project_id: must match');
    expect(await onSocket('GET', '/api/projects/ghost/api-keys')).toEqual({ status: 404, body: { detail: 'Project not found' } });
    const all = await onSocket('GET', '/api/projects');
    expect(all.body.items.map((p: { project_id: string }) => p.project_id)).toEqual(['acme', 'newproj', 'selfhost']);

    // Over TCP the same request is a tenant's: no role in one project creates another
    const tcp = await getJson(`${svc!.url}/api/projects`, {
      method: 'POST',
      headers: { ...bearer(firstAdminKey), 'Content-Type': 'application/json' },
      body: '{"project_id":"evil"}',
    });
    expect(tcp.status).toBe(403);
    const mine = await getJson(`${svc!.url}/api/projects`, { headers: bearer(firstAdminKey) });
    expect(mine.body.items.map((p: { project_id: string }) => p.project_id)).toEqual(['selfhost']);

    await svc!.close();
    svc = undefined;
    expect(fs.existsSync(file)).toBe(false); // a stopped API leaves no socket behind
  });
});
