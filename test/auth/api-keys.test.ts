// API key lifecycle, roles and scopes, revocation across nodes, and no secret in any log line.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/api-key-repository.ts';
import { createLogger } from '../../src/logger.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { agentRun, exporting } from '../helpers/otel.ts';
import { until } from '../helpers/wait.ts';

const idp = new TestIdp();
let svc: TestService;
let logs = '';
const capture = new Writable({
  write(chunk, _enc, cb) {
    logs += chunk.toString();
    cb();
  },
});
let admin: string; // JWT of an admin of acme
const UNAUTHORIZED = { detail: 'Unauthorized - No valid authentication provided' };
const FORBIDDEN = { detail: 'Forbidden - User does not have access to this resource' };

beforeAll(async () => {
  await idp.start();
  svc = await startTestService(idp.env({ AUTH_REQUIRED: 'true' }), { logger: createLogger({ logLevel: 'debug' }, capture) });
  admin = await idp.token({ sub: 'admin-1', project_id: 'acme', role: 'admin' });
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await dropTestDatabases();
});

const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const keyHeader = (k: string) => ({ 'X-API-Key': k });
const json = { 'Content-Type': 'application/json' };

async function createKey(body: object, token = admin, project = 'acme') {
  return getJson(`${svc.url}/api/projects/${project}/api-keys`, {
    method: 'POST',
    headers: { ...json, ...bearer(token) },
    body: JSON.stringify(body),
  });
}

describe(`API keys (${mode} mode)`, () => {
  it('create → shown once → works → listed without secret → revoke → 401 on the next request', async () => {
    const c = await createKey({ name: 'agent prod' });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ name: 'agent prod', scope: 'full', project_id: 'acme', prefix: c.body.key.slice(0, 11) });
    expect(c.body.key).toMatch(/^tl_[0-9A-Za-z]{40}$/);
    expect(new Date(c.body.expires_at).getTime() - new Date(c.body.created_at).getTime()).toBe(90 * 86_400_000);
    const key: string = c.body.key;

    // stored hashed only
    const stored = await svc.stores.postgres.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE key_id = $1', [
      c.body.key_id,
    ]);
    expect(stored[0]!.key_hash).toBe(hashApiKey(key));
    expect(JSON.stringify(await svc.stores.postgres.query('SELECT * FROM api_keys'))).not.toContain(key);

    const ctx = await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(key) });
    expect(ctx.status).toBe(200);
    expect(ctx.body).toMatchObject({
      auth_method: 'api_key',
      project_id: 'acme',
      role: 'member',
      scope: 'full',
      user_id: `api_key:${c.body.key_id}`,
      key_name: 'agent prod',
    });

    const list = await getJson(`${svc.url}/api/projects/acme/api-keys`, { headers: keyHeader(key) });
    expect(list.status).toBe(200);
    const item = list.body.items.find((i: { key_id: string }) => i.key_id === c.body.key_id);
    expect(item).toMatchObject({ status: 'active', prefix: c.body.prefix, revoked_at: null });
    expect(item.last_used_at).not.toBeNull();
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect(item.key).toBeUndefined();

    const one = await getJson(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { headers: bearer(admin) });
    expect(one.status).toBe(200);
    expect(one.body.key).toBeUndefined();

    const del = await fetch(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { method: 'DELETE', headers: bearer(admin) });
    expect(del.status).toBe(204);
    const after = await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(key) });
    expect(after.status).toBe(401);
    expect(after.body).toEqual(UNAUTHORIZED);
    const listed = await getJson(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { headers: bearer(admin) });
    expect(listed.body.status).toBe('revoked');
  });

  it('an expired key is a 401 like an unknown one', async () => {
    const c = await createKey({ name: 'short', expires_in_days: 1 });
    await svc.stores.postgres.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE key_id = $1", [c.body.key_id]);
    const r = await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(c.body.key) });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
    const item = await getJson(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { headers: bearer(admin) });
    expect(item.body.status).toBe('expired');
  });

  it.each([
    ['malformed', 'not-a-key'],
    ['well-formed but unknown', `tl_${'A'.repeat(40)}`],
    ['empty', ' '],
  ])('a %s key is a 401', async (_n, key) => {
    const r = await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(key) });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });

  it("another project's key gets 403 on this project", async () => {
    const otherAdmin = await idp.token({ sub: 'admin-2', project_id: 'globex', role: 'admin' });
    const c = await createKey({ name: 'globex key' }, otherAdmin, 'globex');
    expect(c.status).toBe(201);
    const r = await getJson(`${svc.url}/api/projects/acme/api-keys`, { headers: keyHeader(c.body.key) });
    expect(r.status).toBe(403);
    expect(r.body).toEqual(FORBIDDEN);
  });

  it('validates the body, naming the field', async () => {
    for (const [body, field] of [
      [{ name: 'x', expires_in_days: 0 }, 'expires_in_days'],
      [{ name: 'x', expires_in_days: 3651 }, 'expires_in_days'],
      [{ name: 'x', scope: 'root' }, 'scope'],
      [{ name: '' }, 'name'],
      [{}, 'name'],
      [{ name: 'x', colour: 'red' }, 'colour'],
    ] as const) {
      const r = await createKey(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.detail).toContain(`${field}:`);
    }
  });

  it('key management is JWT only: an API key gets 403 creating, reading one or revoking', async () => {
    const c = await createKey({ name: 'm' });
    const h = { ...json, ...keyHeader(c.body.key) };
    expect((await getJson(`${svc.url}/api/projects/acme/api-keys`, { method: 'POST', headers: h, body: '{"name":"x"}' })).status).toBe(403);
    expect((await getJson(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { headers: h })).status).toBe(403);
    expect((await getJson(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { method: 'DELETE', headers: h })).status).toBe(403);
  });

  it('roles: a member or viewer cannot manage keys; a viewer may list them', async () => {
    const member = await idp.token({ sub: 'm-1', project_id: 'acme', role: 'member' });
    const viewer = await idp.token({ sub: 'v-1', project_id: 'acme', role: 'viewer' });
    expect((await createKey({ name: 'x' }, member)).status).toBe(403);
    expect((await createKey({ name: 'x' }, viewer)).status).toBe(403);
    expect((await getJson(`${svc.url}/api/projects/acme/api-keys`, { headers: bearer(viewer) })).status).toBe(200);
    const c = await createKey({ name: 'to revoke' });
    expect(
      (await fetch(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { method: 'DELETE', headers: bearer(member) })).status,
    ).toBe(403);
  });

  it('an ingest key may read its context but not list keys', async () => {
    const c = await createKey({ name: 'agent', scope: 'ingest' });
    expect(c.body.scope).toBe('ingest');
    const ctx = await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(c.body.key) });
    expect(ctx.status).toBe(200);
    expect(ctx.body.scope).toBe('ingest');
    const list = await getJson(`${svc.url}/api/projects/acme/api-keys`, { headers: keyHeader(c.body.key) });
    expect(list.status).toBe(403);
    expect(list.body).toEqual(FORBIDDEN);
  });

  it('404 for a key of another project or an id that is not one', async () => {
    const otherAdmin = await idp.token({ sub: 'admin-3', project_id: 'initech', role: 'admin' });
    const c = await createKey({ name: 'initech key' }, otherAdmin, 'initech');
    expect((await getJson(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { headers: bearer(admin) })).status).toBe(404);
    expect(
      (await fetch(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { method: 'DELETE', headers: bearer(admin) })).status,
    ).toBe(404);
    const bad = await getJson(`${svc.url}/api/projects/acme/api-keys/not-a-uuid`, { headers: bearer(admin) });
    expect(bad.status).toBe(404);
    expect(bad.body).toEqual({ detail: 'API key not found' });
    // and the other project's key still works
    expect((await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(c.body.key) })).status).toBe(200);
  });

  it('a revocation reaches another node', async () => {
    const c = await createKey({ name: 'two nodes' });
    // A second API process on the same stores (same DATA_DIR is refused in embedded mode: one
    // process per store; so in embedded mode the second "node" is a restart after the revocation).
    if (mode === 'server') {
      const other = await startTestService({}, { env: svc.testEnv });
      try {
        expect((await getJson(`${other.url}/api/me/context`, { headers: keyHeader(c.body.key) })).status).toBe(200); // cached there now
        expect(
          (await fetch(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { method: 'DELETE', headers: bearer(admin) })).status,
        ).toBe(204);
        const deadline = Date.now() + 5_000;
        let status = 200;
        while (status !== 401 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
          status = (await getJson(`${other.url}/api/me/context`, { headers: keyHeader(c.body.key) })).status;
        }
        expect(status).toBe(401);
      } finally {
        await other.close();
      }
    } else {
      expect((await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(c.body.key) })).status).toBe(200);
      expect(
        (await fetch(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { method: 'DELETE', headers: bearer(admin) })).status,
      ).toBe(204);
      expect((await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(c.body.key) })).status).toBe(401);
    }
  });

  it('no key and no token ever appears in the logs', async () => {
    const c = await createKey({ name: 'logged?' });
    await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(c.body.key) });
    await getJson(`${svc.url}/api/me/context`, { headers: keyHeader(`${c.body.key.slice(0, -1)}x`) });
    await getJson(`${svc.url}/api/me/context`, { headers: bearer(`${admin}x`) });
    expect(logs).toContain('"msg":"request"'); // the capture works
    expect(logs).toContain('authentication rejected');
    expect(logs).not.toContain(c.body.key);
    expect(logs).not.toContain(c.body.key.slice(3)); // not even the random part
    expect(logs).not.toContain(admin);
    expect(logs).not.toContain(admin.split('.')[2]!); // nor a token's signature
  });
});

describe(`bearer API keys and key roles (${mode} mode)`, () => {
  it('`Authorization: Bearer tl_…` is the API key; other bearer tokens stay JWTs', async () => {
    const c = await createKey({ name: 'bearer' });
    const ctx = await getJson(`${svc.url}/api/me/context`, { headers: bearer(c.body.key) });
    expect(ctx.status).toBe(200);
    expect(ctx.body).toMatchObject({ auth_method: 'api_key', user_id: `api_key:${c.body.key_id}`, project_id: 'acme', role: 'member' });
    expect((await getJson(`${svc.url}/api/projects/acme/prompts`, { headers: bearer(c.body.key) })).status).toBe(200);
    // The scheme is case-insensitive, as for JWTs; a JWT still authenticates as one
    expect((await getJson(`${svc.url}/api/me/context`, { headers: { Authorization: `bearer ${c.body.key}` } })).body.auth_method).toBe(
      'api_key',
    );
    expect((await getJson(`${svc.url}/api/me/context`, { headers: bearer(admin) })).body).toMatchObject({
      auth_method: 'jwt',
      user_id: 'admin-1',
    });
    // X-API-Key comes first when both are sent
    const other = await createKey({ name: 'other', role: 'viewer' });
    const both = await getJson(`${svc.url}/api/me/context`, { headers: { ...keyHeader(other.body.key), ...bearer(c.body.key) } });
    expect(both.body.user_id).toBe(`api_key:${other.body.key_id}`);
    // API keys stay out of the JWT-only routes whichever header carries them
    expect((await getJson(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { headers: bearer(c.body.key) })).status).toBe(403);
  });

  it('the same 401 for an unknown, malformed, revoked or expired bearer key', async () => {
    const revoked = await createKey({ name: 'to revoke' });
    const expired = await createKey({ name: 'to expire' });
    await svc.stores.postgres.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE key_id = $1", [
      expired.body.key_id,
    ]);
    expect((await getJson(`${svc.url}/api/me/context`, { headers: bearer(revoked.body.key) })).status).toBe(200); // cached now
    expect(
      (await fetch(`${svc.url}/api/projects/acme/api-keys/${revoked.body.key_id}`, { method: 'DELETE', headers: bearer(admin) })).status,
    ).toBe(204);
    for (const key of [`tl_${'B'.repeat(40)}`, 'tl_short', revoked.body.key, expired.body.key]) {
      const r = await getJson(`${svc.url}/api/me/context`, { headers: bearer(key) });
      expect(r.status, key.slice(0, 8)).toBe(401);
      expect(r.body).toEqual(UNAUTHORIZED);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('a real OTLP exporter configured with `Authorization: Bearer tl_…` sends traces; a revoked key is refused', async () => {
    const c = await createKey({ name: 'collector', scope: 'ingest' });
    const exp = exporting(svc.url, { protocol: 'proto', gzip: true, headers: { Authorization: `Bearer ${c.body.key}` } });
    const run = agentRun(exp.tracer, { base: Date.now() - 60_000 });
    run.endRoot();
    await exp.flush();
    await exp.shutdown();
    const e = await until(async () => {
      const r = await getJson(`${svc.url}/api/projects/acme/executions/${run.traceId}`, { headers: bearer(admin) });
      return r.status === 200 ? r.body : undefined;
    }, 'the execution of the exported trace');
    expect(e).toMatchObject({ trace_id: run.traceId, source: 'otlp', span_count: 4 });

    expect(
      (await fetch(`${svc.url}/api/projects/acme/api-keys/${c.body.key_id}`, { method: 'DELETE', headers: bearer(admin) })).status,
    ).toBe(204);
    const refused = exporting(svc.url, { protocol: 'json', gzip: false, headers: { Authorization: `Bearer ${c.body.key}` } });
    agentRun(refused.tracer).endRoot();
    const err = await refused.flush().then(
      () => undefined,
      (e: unknown) => e,
    );
    // one error per refused export, each carrying the HTTP status and the API's body
    const errors = [err].flat() as Array<{ code?: number; data?: string }>;
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatchObject({ code: 401, data: JSON.stringify(UNAUTHORIZED) });
    await refused.shutdown().catch(() => undefined);
  });

  it('a key has a role: an admin key sets the retention, a viewer key only reads; an ingest key cannot be a viewer', async () => {
    const adminKey = await createKey({ name: 'ops', role: 'admin' });
    expect(adminKey.status).toBe(201);
    expect(adminKey.body).toMatchObject({ role: 'admin', scope: 'full' });
    const viewerKey = await createKey({ name: 'dashboards', role: 'viewer' });
    const memberKey = await createKey({ name: 'default role' });
    expect(memberKey.body.role).toBe('member');
    const put = (key: string) =>
      getJson(`${svc.url}/api/projects/acme/retention`, {
        method: 'PUT',
        headers: { ...json, ...bearer(key) },
        body: JSON.stringify({ days: 30 }),
      });
    expect((await put(adminKey.body.key)).status).toBe(200);
    expect((await put(memberKey.body.key)).status).toBe(403);
    expect((await put(viewerKey.body.key)).status).toBe(403);
    expect((await getJson(`${svc.url}/api/projects/acme/prompts`, { headers: bearer(viewerKey.body.key) })).status).toBe(200);
    const write = await getJson(`${svc.url}/api/projects/acme/prompts`, {
      method: 'POST',
      headers: { ...json, ...bearer(viewerKey.body.key) },
      body: JSON.stringify({ prompt_id: 'by-viewer', type: 'text', template: 'x' }),
    });
    expect(write.status).toBe(403);
    expect((await getJson(`${svc.url}/api/me/context`, { headers: bearer(viewerKey.body.key) })).body.role).toBe('viewer');
    const listed = await getJson(`${svc.url}/api/projects/acme/api-keys`, { headers: bearer(admin) });
    expect(listed.body.items.find((k: { key_id: string }) => k.key_id === adminKey.body.key_id).role).toBe('admin');

    const bad = await createKey({ name: 'x', scope: 'ingest', role: 'viewer' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toBe('role: an ingest key sends data, so its role is member or admin');
    expect((await createKey({ name: 'x', role: 'owner' })).body.detail).toContain('role:');
  });

  it('GET /api/projects lists the projects the caller may act in, with its role; GET /api/projects/{id} one of them', async () => {
    const key = (await createKey({ name: 'lister', role: 'viewer' })).body.key;
    const byKey = await getJson(`${svc.url}/api/projects`, { headers: bearer(key) });
    expect(byKey.status).toBe(200);
    expect(byKey.body.items).toEqual([{ project_id: 'acme', name: 'acme', created_at: expect.stringMatching(/Z$/), role: 'viewer' }]);
    const multi = await idp.token({ sub: 'multi', project_id: ['acme', 'umbrella'], role: 'member' });
    const byJwt = await getJson(`${svc.url}/api/projects`, { headers: bearer(multi) });
    expect(byJwt.body.items.map((p: { project_id: string; role: string }) => [p.project_id, p.role])).toEqual([
      ['acme', 'member'],
      ['umbrella', 'member'],
    ]);
    expect((await getJson(`${svc.url}/api/projects/umbrella`, { headers: bearer(multi) })).body).toMatchObject({
      project_id: 'umbrella',
      role: 'member',
    });
    expect((await getJson(`${svc.url}/api/projects/umbrella`, { headers: bearer(key) })).status).toBe(403);
    const ingest = (await createKey({ name: 'ingest lister', scope: 'ingest' })).body.key;
    expect((await getJson(`${svc.url}/api/projects`, { headers: bearer(ingest) })).status).toBe(403);
    expect((await getJson(`${svc.url}/api/projects`)).status).toBe(401);
    // creating a project is the operator's (the admin socket): an admin JWT gets 403
    const create = await getJson(`${svc.url}/api/projects`, {
      method: 'POST',
      headers: { ...json, ...bearer(admin) },
      body: '{"project_id":"new-one"}',
    });
    expect(create.status).toBe(403);
    expect(create.body).toEqual(FORBIDDEN);
  });
});

describe('AUTH_REQUIRED=false', () => {
  it('creates the default project and the dev user (admin) at boot', async () => {
    const dev = await startTestService({ AUTH_REQUIRED: 'false' });
    try {
      expect(await dev.stores.postgres.query("SELECT project_id, user_id, role FROM memberships WHERE user_id = 'dev'")).toEqual([
        { project_id: 'default', user_id: 'dev', role: 'admin' },
      ]);
      const r = await getJson(`${dev.url}/api/me/context`);
      expect(r.body).toEqual({
        user_id: 'dev',
        auth_method: 'none',
        project_id: 'default',
        role: 'admin',
        projects: [{ project_id: 'default', name: 'default', role: 'admin' }],
      });
      // a presented but invalid credential never falls through to the dev user
      expect((await getJson(`${dev.url}/api/me/context`, { headers: keyHeader('tl_bogus') })).status).toBe(401);
      // the dev user has no access to other projects
      expect((await getJson(`${dev.url}/api/projects/acme/api-keys`)).status).toBe(403);
    } finally {
      await dev.close();
    }
  });
});
