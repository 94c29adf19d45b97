// JWTs from the customer's identity provider, against a real JWKS server on loopback.
import { SignJWT, exportSPKI } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, dropTestDatabases, mode } from '../helpers/env.ts';
import { newSigningKey, TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

const idp = new TestIdp();
let svc: TestService;
const UNAUTHORIZED = { detail: 'Unauthorized - No valid authentication provided' };

beforeAll(async () => {
  await idp.start();
  svc = await startTestService(idp.env({ AUTH_REQUIRED: 'true', IDP_JWKS_COOLDOWN_MS: '0' }));
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await dropTestDatabases();
});

const me = (token: string, url = svc.url) => getJson(`${url}/api/me/context`, { headers: { Authorization: `Bearer ${token}` } });
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe(`JWT authentication (${mode} mode)`, () => {
  it('a valid token is the user of its sub, in the projects of its claim, provisioned on first sight', async () => {
    const r = await me(await idp.token({ sub: 'alice', project_id: ['acme', 'beta'], role: 'admin' }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      user_id: 'alice',
      auth_method: 'jwt',
      project_id: 'acme',
      role: 'admin',
      projects: [
        { project_id: 'acme', name: 'acme', role: 'admin' },
        { project_id: 'beta', name: 'beta', role: 'admin' },
      ],
    });
    const rows = await svc.stores.postgres.query("SELECT project_id, role FROM memberships WHERE user_id = 'alice' ORDER BY project_id");
    expect(rows).toEqual([
      { project_id: 'acme', role: 'admin' },
      { project_id: 'beta', role: 'admin' },
    ]);
  });

  it('a string project claim and no role claim mean one project as member', async () => {
    const r = await me(await idp.token({ sub: 'bob', project_id: 'acme' }));
    expect(r.body).toMatchObject({ user_id: 'bob', project_id: 'acme', role: 'member' });
  });

  it('an unknown role value gets the least privilege (viewer)', async () => {
    const r = await me(await idp.token({ sub: 'eve', project_id: 'acme', role: 'superuser' }));
    expect(r.body.role).toBe('viewer');
  });

  const negatives: Array<[string, () => Promise<string>]> = [
    ['expired (beyond the 30 s tolerance)', () => idp.token({ exp: Math.floor(Date.now() / 1000) - 120 })],
    ['not yet valid', () => idp.token({ nbf: Math.floor(Date.now() / 1000) + 120 })],
    ['wrong issuer', () => idp.token({}, { issuer: 'https://evil.example/' })],
    ['wrong audience', () => idp.token({}, { audience: 'another-api' })],
    [
      'bad signature',
      async () => {
        const t = await idp.token();
        const [h, p, s] = t.split('.');
        return `${h}.${p}.${s!.slice(0, -4)}${s!.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      },
    ],
    ['unknown kid', async () => idp.token({}, { key: await newSigningKey('not-published'), kid: 'not-published' })],
    [
      'alg none',
      async () =>
        `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'x', iss: idp.issuer, aud: idp.audience, exp: Math.floor(Date.now() / 1000) + 600 })}.`,
    ],
    [
      'HS256 signed with the RSA public key as the secret',
      async () => {
        const pem = await exportSPKI(idp.keys[0]!.publicKey);
        return new SignJWT({ sub: 'x', iss: idp.issuer, aud: idp.audience })
          .setProtectedHeader({ alg: 'HS256', kid: idp.keys[0]!.kid })
          .setExpirationTime('10m')
          .sign(new TextEncoder().encode(pem));
      },
    ],
    ['missing sub', () => idp.token({ sub: undefined })],
    [
      'missing exp',
      async () =>
        new SignJWT({ sub: 'x', iss: idp.issuer, aud: idp.audience })
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .sign(idp.keys[0]!.privateKey),
    ],
    ['over 8 KB', () => idp.token({ padding: 'x'.repeat(9000) })],
    ['garbage', async () => 'not-a-jwt'],
    ['three garbage segments', async () => 'aaa.bbb.ccc'],
  ];

  it.each(negatives)('401 for a token that is %s', async (_name, make) => {
    const r = await me(await make());
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });

  it('401 for an Authorization header that is not Bearer', async () => {
    const r = await getJson(`${svc.url}/api/me/context`, { headers: { Authorization: 'Basic dXNlcjpwYXNz' } });
    expect(r.status).toBe(401);
  });

  it('401 without credentials when AUTH_REQUIRED=true', async () => {
    const r = await getJson(`${svc.url}/api/me/context`);
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });

  it('picks up a key rotation at the IdP (new kid)', async () => {
    const fresh = await newSigningKey('k2', 'ES256');
    idp.keys = [fresh]; // the IdP rotates: k1 is gone, k2 is published
    const r = await me(await idp.token({ sub: 'rotated', project_id: 'acme' }, { key: fresh }));
    expect(r.status).toBe(200);
    expect(r.body.user_id).toBe('rotated');
  });

  it('503 (not 401) when the JWKS cannot be fetched', async () => {
    const down = await startTestService({
      AUTH_REQUIRED: 'true',
      IDP_JWT_ISSUER: idp.issuer,
      IDP_JWT_AUDIENCE: idp.audience,
      IDP_JWKS_URL: `http://127.0.0.1:${await closedPort()}/jwks.json`,
    });
    try {
      const r = await me(await idp.token({ project_id: 'acme' }, { key: idp.keys[0] }), down.url);
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBeTruthy();
      expect(r.body.detail).toMatch(/identity provider/);
      // garbage is still a 401: nothing needed the IdP to reject it
      expect((await me('garbage', down.url)).status).toBe(401);
    } finally {
      await down.close();
    }
  });

  it('401 for any bearer token when no identity provider is configured', async () => {
    const noIdp = await startTestService({ AUTH_REQUIRED: 'true' });
    try {
      expect((await me(await idp.token(), noIdp.url)).status).toBe(401);
    } finally {
      await noIdp.close();
    }
  });
});
