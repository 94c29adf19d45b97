// The runs that tested a prompt version (GET …/prompts/{prompt_id}/runs?version=N; docs/datasets.md):
// the runs of every dataset whose `prompts` name that version, newest first in keyset pages, none
// of another version or another project; 404 for an unknown prompt or version, 400 without one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const call = async (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const ok = async (method: string, path: string, body?: unknown) => {
  const r = await call(method, path, body);
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};

describe(`runs of a prompt version (${mode} mode)`, () => {
  it('lists the runs of every dataset that name the version, newest first, a page at a time', async () => {
    await ok('POST', '/prompts', { prompt_id: 'tested', type: 'text', template: 'one' });
    await ok('POST', '/prompts/tested/versions', { template: 'two' });
    const [d1, d2] = [await ok('POST', '/datasets', { name: 'first' }), await ok('POST', '/datasets', { name: 'second' })];
    const v2 = [{ prompt_id: 'tested', version: 2 }];
    await ok('POST', `/datasets/${d1.dataset_id}/runs`, { name: 'r1', prompts: v2 });
    await ok('POST', `/datasets/${d1.dataset_id}/runs`, { name: 'r-v1', prompts: [{ prompt_id: 'tested', version: 1 }] });
    await ok('POST', `/datasets/${d2.dataset_id}/runs`, { name: 'r2', prompts: [...v2, { prompt_id: 'other', version: 2 }] });
    await ok('POST', `/datasets/${d2.dataset_id}/runs`, { name: 'r3', prompts: v2 });
    await ok('POST', `/datasets/${d2.dataset_id}/runs`, { name: 'no-prompt' });

    const all = await ok('GET', '/prompts/tested/runs?version=2');
    expect(all.items.map((r: { name: string }) => r.name)).toEqual(['r3', 'r2', 'r1']);
    expect(all.next_cursor).toBeNull();
    expect(all.items[2]).toMatchObject({ dataset_id: d1.dataset_id, prompts: v2 });
    const first = await ok('GET', '/prompts/tested/runs?version=2&limit=2');
    expect(first.items.map((r: { name: string }) => r.name)).toEqual(['r3', 'r2']);
    const rest = await ok('GET', `/prompts/tested/runs?version=2&limit=2&cursor=${first.next_cursor}`);
    expect([rest.items.map((r: { name: string }) => r.name), rest.next_cursor]).toEqual([['r1'], null]);
    expect((await ok('GET', '/prompts/tested/runs?version=1')).items.map((r: { name: string }) => r.name)).toEqual(['r-v1']);
  });

  it('404 for an unknown prompt or version, 400 without a version', async () => {
    const noPrompt = await call('GET', '/prompts/nope/runs?version=1');
    expect(noPrompt.status).toBe(404);
    expect(noPrompt.body.detail).toMatch(/prompt/i);
    const noVersion = await call('GET', '/prompts/tested/runs?version=9');
    expect(noVersion.status).toBe(404);
    expect(noVersion.body.detail).toMatch(/version/i);
    const missing = await call('GET', '/prompts/tested/runs');
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/version/);
  });
});
