// The middleware chain: every error status leaves as {"detail"} naming the problem, with the
// request id echoed. Test routes ride the real chain (auth seam, body limit, ajv validation).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createValidator, loadApiSchemas, type JsonSchema } from '../../src/http/validation.ts';
import type { RouteDef } from '../../src/http/routes/types.ts';
import { dropTestDatabases } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

const echoSchema: JsonSchema = {
  $id: 'TestEcho',
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    expires_in_days: { type: 'integer', minimum: 1, maximum: 3650 },
  },
};

const testRoutes = (): RouteDef[] => [
  {
    method: 'POST',
    path: '/api/test/echo',
    operationId: 'testEcho',
    summary: 'echo',
    tag: 'test',
    access: 'authenticated',
    body: 'TestEcho',
    responses: { 200: { description: 'echo' } },
    async handler(ctx) {
      ctx.body = { body: ctx.state.body, principal: ctx.state.principal };
    },
  },
  {
    method: 'GET',
    path: '/api/test/boom',
    operationId: 'testBoom',
    summary: 'a bug',
    tag: 'test',
    access: 'public',
    responses: { 200: { description: 'never' } },
    async handler() {
      throw new Error('secret internal detail');
    },
  },
];

let svc: TestService;
const MAX_JSON = 4096;

beforeAll(async () => {
  svc = await startTestService(
    { MAX_JSON_BYTES: String(MAX_JSON) },
    { extraRoutes: testRoutes, validator: createValidator([...loadApiSchemas(), echoSchema]) },
  );
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const post = (body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
  getJson(`${svc.url}/api/test/echo`, { method: 'POST', body, headers });

describe('error renderer', () => {
  it('accepts a valid body and reaches the handler as the dev principal (AUTH_REQUIRED=false)', async () => {
    const r = await post(JSON.stringify({ name: 'a', expires_in_days: 5 }));
    expect(r.status).toBe(200);
    expect(r.body.body).toEqual({ name: 'a', expires_in_days: 5 });
    expect(r.body.principal).toMatchObject({ userId: 'dev', projectId: 'default', role: 'admin', authMethod: 'none' });
  });

  it('400 for malformed JSON', async () => {
    const r = await post('{"name": ');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ detail: expect.stringMatching(/not valid JSON/) });
  });

  it('400 for an empty body', async () => {
    const r = await post('');
    expect(r.status).toBe(400);
    expect(Object.keys(r.body)).toEqual(['detail']);
  });

  it('400 naming each field that breaks the schema', async () => {
    const r = await post(JSON.stringify({ expires_in_days: 9999, colour: 'red' }));
    expect(r.status).toBe(400);
    expect(r.body.detail).toContain('name: is required');
    expect(r.body.detail).toContain('expires_in_days: must be <= 3650');
    expect(r.body.detail).toContain('colour: unknown field');
  });

  it('404 for an unknown route', async () => {
    const r = await getJson(`${svc.url}/api/nothing/here`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ detail: 'Route GET /api/nothing/here not found' });
  });

  it('405 with Allow for a known path and the wrong method', async () => {
    const r = await getJson(`${svc.url}/api/health`, { method: 'DELETE' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET');
    expect(r.body.detail).toMatch(/DELETE is not allowed on \/api\/health/);
  });

  it('413 for a body over the limit, declared by Content-Length', async () => {
    const r = await post(JSON.stringify({ name: 'x'.repeat(MAX_JSON) }));
    expect(r.status).toBe(413);
    expect(r.body.detail).toContain(`${MAX_JSON} bytes`);
  });

  it('413 for a chunked body that grows over the limit while read', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        `${svc.url}/api/test/echo`,
        { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } },
        (res) => {
          let data = '';
          res.on('data', (c) => (data += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
        },
      );
      req.on('error', reject);
      req.write('{"name":"');
      for (let i = 0; i < 10; i++) req.write('y'.repeat(1024));
      req.end('"}');
    });
    expect(status).toBe(413);
    expect(JSON.parse(body).detail).toMatch(/exceeds the limit/);
  });

  it('415 for another content type', async () => {
    const r = await post('name=a', { 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(415);
    expect(r.body.detail).toMatch(/application\/x-www-form-urlencoded.*application\/json/);
  });

  it('500 for a bug, without internal detail in the body, with the request id', async () => {
    const r = await getJson(`${svc.url}/api/test/boom`, { headers: { 'X-Request-Id': 'req-boom-1' } });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ detail: 'Internal server error (request req-boom-1)' });
    expect(JSON.stringify(r.body)).not.toContain('secret');
  });

  it('401 for a presented credential that cannot be verified, even with AUTH_REQUIRED=false', async () => {
    const r = await getJson(`${svc.url}/api/test/echo`, {
      method: 'POST',
      body: '{"name":"a"}',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': 'tl_notarealkey' },
    });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: 'Unauthorized - No valid authentication provided' });
  });
});

describe('request id', () => {
  it('echoes X-Request-Id on success and on errors', async () => {
    for (const path of ['/api/health', '/api/missing']) {
      const res = await fetch(`${svc.url}${path}`, { headers: { 'X-Request-Id': 'abc-123.XYZ' } });
      expect(res.headers.get('x-request-id')).toBe('abc-123.XYZ');
    }
  });

  it('generates one when absent, and replaces one that is not a plain token', async () => {
    const a = await fetch(`${svc.url}/api/health`);
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const b = await fetch(`${svc.url}/api/health`, { headers: { 'X-Request-Id': '<script>alert(1)</script>' } });
    expect(b.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
