// One key serves an experiment (issue 39, defect 8; docs/identity.md): an ingest-scoped API key
// reads a dataset and its items, creates a run and links items, as the SDKs' datasets.get and
// runExperiment do, and is still refused every other read (403).
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-key-repository.ts';
import { ensureProject } from '../../src/auth/project-repository.ts';
import { mode } from '../helpers/env.ts';
import { getJson, jsonCaller, serviceForFile } from '../helpers/service.ts';

const svc = serviceForFile({ AUTH_REQUIRED: 'true' });
const base = () => `${svc().url}/api/projects/default`;

async function key(scope: 'ingest' | 'full') {
  await ensureProject(svc().stores.postgres, 'default');
  const { key } = await createApiKey(svc().stores.postgres, {
    projectId: 'default',
    name: `${scope} key`,
    expiresInDays: 1,
    scope,
    role: 'member',
    createdBy: null,
  });
  return jsonCaller(base, { 'X-API-Key': key });
}

describe(`an ingest key runs an experiment (${mode} mode)`, () => {
  it('reads the dataset and its items, creates a run, links the items; other reads stay 403', async () => {
    const full = await key('full');
    const dataset = (await full('POST', '/datasets', { name: 'qa' })).body;
    const added = await full('POST', `/datasets/${dataset.dataset_id}/items`, [{ input: 'a' }, { input: 'b' }]);
    expect(added.status).toBe(201);

    const ingest = await key('ingest');
    // datasets.get(name): the datasets by name, then the items page by page.
    const list = await ingest('GET', '/datasets?limit=1000');
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.items.map((d: { name: string }) => d.name)).toEqual(['qa']);
    expect((await ingest('GET', `/datasets/${dataset.dataset_id}`)).status).toBe(200);
    const items = await ingest('GET', `/datasets/${dataset.dataset_id}/items?limit=1000`);
    expect(items.status, JSON.stringify(items.body)).toBe(200);
    expect(items.body.items.map((i: { input: string }) => i.input)).toEqual(['a', 'b']);
    const one = items.body.items[0];
    expect((await ingest('GET', `/datasets/${dataset.dataset_id}/items/${one.item_id}`)).body.input).toBe('a');

    // runExperiment: the run, then the links.
    const run = await ingest('POST', `/datasets/${dataset.dataset_id}/runs`, { name: 'one key' });
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    const linked = await ingest(
      'POST',
      `/datasets/${dataset.dataset_id}/runs/${run.body.run_id}/items`,
      items.body.items.map((i: { item_id: string; version: number }) => ({
        item_id: i.item_id,
        item_version: i.version,
        trace_id: `t-${i.item_id}`,
      })),
    );
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);

    // Reads outside an experiment's: still refused.
    for (const path of [
      '/executions',
      `/datasets/${dataset.dataset_id}/runs`,
      `/datasets/${dataset.dataset_id}/items/export`,
      '/prompts',
    ]) {
      const r = await ingest('GET', path);
      expect(r.status, path).toBe(403);
      expect(r.body).toEqual({ detail: expect.any(String) });
    }
    // And writes an experiment does not need.
    expect((await ingest('POST', `/datasets/${dataset.dataset_id}/items`, { input: 'c' })).status).toBe(403);

    // The OpenAPI document says which operations an ingest key may call.
    const doc = (await getJson(`${svc().url}/api/openapi.json`)).body;
    const op = (path: string, method: string) => doc.paths[`/api/projects/{project_id}${path}`][method];
    expect(op('/datasets', 'get')['x-ingest-key']).toBe(true);
    expect(op('/datasets/{dataset_id}/items', 'get')['x-ingest-key']).toBe(true);
    expect(op('/datasets/{dataset_id}/runs/{run_id}/items', 'post')['x-ingest-key']).toBe(true);
    expect(op('/executions', 'get')['x-ingest-key']).toBeUndefined();
  });
});
