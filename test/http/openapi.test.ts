// GET /api/openapi.json is a valid OpenAPI 3.1 document of every route in the route table, built
// from the same JSON Schemas that validate requests.
import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiSchemas } from '../../src/http/validation.ts';
import { dropTestDatabases } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'true' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe('OpenAPI document', () => {
  it('is public and passes an OpenAPI 3.1 validator', async () => {
    const r = await getJson(`${svc.url}/api/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(r.body));
    expect(result.valid, JSON.stringify(result)).toBe(true);
  });

  it('the validator does reject a broken document (so the check above can fail)', async () => {
    const doc = structuredClone((await getJson(`${svc.url}/api/openapi.json`)).body);
    doc.paths['/api/health'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Missing' };
    const result = await validate(doc);
    expect(result.valid).toBe(false);
  });

  it('lists every route of the route table with its method and operationId', async () => {
    const doc = (await getJson(`${svc.url}/api/openapi.json`)).body;
    for (const route of svc.app.routes) {
      const op = doc.paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op.operationId).toBe(route.operationId);
    }
  });

  it('embeds every schema of schema/api as a component', async () => {
    const doc = (await getJson(`${svc.url}/api/openapi.json`)).body;
    for (const s of loadApiSchemas()) {
      expect(doc.components.schemas[s.$id], s.$id).toBeDefined();
      expect(doc.components.schemas[s.$id].$id).toBeUndefined();
    }
  });

  it('health is public even with AUTH_REQUIRED=true', async () => {
    expect((await getJson(`${svc.url}/api/health`)).status).toBe(200);
  });
});
