// Datasets and items over HTTP (docs/datasets.md): create, list in keyset pages, change and delete
// a dataset; items added one at a time and in batches, edited into new versions (the old ones
// kept), archived and restored; an item made from an execution in one call; bad input a 4xx
// naming the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });

describe(`datasets (${mode} mode)`, () => {
  it('CRUD: unique names, keyset pages by name, rename, delete', async () => {
    const made = await call('POST', '/datasets', { name: 'golden', description: 'cases that matter', metadata: { team: 'search' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ name: 'golden', description: 'cases that matter', metadata: { team: 'search' }, items: 0 });
    const dup = await call('POST', '/datasets', { name: 'golden' });
    expect([dup.status, dup.body.detail]).toEqual([409, 'name: a dataset named "golden" exists in this project']);
    for (const n of ['b-set', 'c-set', 'd-set']) expect((await call('POST', '/datasets', { name: n })).status).toBe(201);
    const first = await call('GET', '/datasets?limit=2');
    expect(first.body.items.map((d: { name: string }) => d.name)).toEqual(['b-set', 'c-set']);
    const second = await call('GET', `/datasets?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items.map((d: { name: string }) => d.name)).toEqual(['d-set', 'golden']);
    const third = await call('GET', `/datasets?limit=2&cursor=${second.body.next_cursor}`);
    expect([third.body.items, third.body.next_cursor]).toEqual([[], null]);
    const renamed = await call('PATCH', `/datasets/${made.body.dataset_id}`, { name: 'golden-v2', description: null });
    expect(renamed.body).toMatchObject({ name: 'golden-v2', description: null, metadata: { team: 'search' } });
    expect((await call('PATCH', `/datasets/${made.body.dataset_id}`, { name: 'b-set' })).status).toBe(409);
    const d = (await call('GET', '/datasets?limit=10')).body.items.find((x: { name: string }) => x.name === 'd-set');
    expect((await call('DELETE', `/datasets/${d.dataset_id}`)).status).toBe(204);
    expect((await call('GET', `/datasets/${d.dataset_id}`)).status).toBe(404);
    expect((await call('DELETE', `/datasets/${d.dataset_id}`)).status).toBe(404);
    expect((await call('GET', '/datasets/not-a-uuid')).status).toBe(404);
  });

  it('items: batches in order, edits make versions, archive hides and restores', async () => {
    const ds = (await call('POST', '/datasets', { name: 'items' })).body;
    const one = await call('POST', `/datasets/${ds.dataset_id}/items`, {
      input: { city: 'Paris' },
      expected_output: 'sunny',
      metadata: { difficulty: 'easy' },
    });
    expect(one.status, JSON.stringify(one.body)).toBe(201);
    expect(one.body).toMatchObject({
      version: 1,
      input: { city: 'Paris' },
      expected_output: 'sunny',
      archived: false,
      source_trace_id: null,
    });
    const batch = await call(
      'POST',
      `/datasets/${ds.dataset_id}/items`,
      [1, 2, 3].map((i) => ({ input: [{ role: 'user', content: `q${i}` }] })),
    );
    expect(batch.status).toBe(201);
    expect(batch.body.items.map((i: { input: Array<{ content: string }> }) => i.input[0]!.content)).toEqual(['q1', 'q2', 'q3']);
    const page1 = await call('GET', `/datasets/${ds.dataset_id}/items?limit=3`);
    const page2 = await call('GET', `/datasets/${ds.dataset_id}/items?limit=3&cursor=${page1.body.next_cursor}`);
    expect([...page1.body.items, ...page2.body.items].map((i: { item_id: string }) => i.item_id)).toEqual([
      one.body.item_id,
      ...batch.body.items.map((i: { item_id: string }) => i.item_id),
    ]);
    expect(page2.body.next_cursor).toBeNull();

    const path = `/datasets/${ds.dataset_id}/items/${one.body.item_id}`;
    const edited = await call('PATCH', path, { input: { city: 'Lyon' }, expected_output: 'rainy', metadata: { difficulty: 'easy' } });
    expect(edited.body).toMatchObject({ version: 2, input: { city: 'Lyon' }, expected_output: 'rainy' });
    const same = await call('PATCH', path, { input: { city: 'Lyon' }, expected_output: 'rainy', metadata: { difficulty: 'easy' } });
    expect(same.body.version).toBe(2); // nothing changed: no version
    const versions = await call('GET', `${path}/versions`);
    expect(versions.body.items.map((v: { version: number; input: unknown }) => [v.version, v.input])).toEqual([
      [2, { city: 'Lyon' }],
      [1, { city: 'Paris' }],
    ]);
    const noInput = await call('PATCH', path, { expected_output: 'x' });
    expect([noInput.status, noInput.body.detail]).toEqual([400, expect.stringMatching(/^input: is required when the content changes/)]);

    const archived = await call('PATCH', path, { archived: true });
    expect(archived.body).toMatchObject({ archived: true, version: 2, archived_at: expect.any(String) });
    expect((await call('GET', `/datasets/${ds.dataset_id}/items`)).body.items).toHaveLength(3);
    expect((await call('GET', `/datasets/${ds.dataset_id}/items?include_archived=true`)).body.items).toHaveLength(4);
    expect((await call('GET', `/datasets/${ds.dataset_id}`)).body.items).toBe(3);
    expect((await call('PATCH', path, { archived: false })).body).toMatchObject({ archived: false, archived_at: null });
    expect((await call('GET', `/datasets/${ds.dataset_id}/items/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });

  it('an item from an execution: its input messages, its last answer as expected output, its trace as source', async () => {
    const ds = (await call('POST', '/datasets', { name: 'from-prod' })).body;
    const conversation = [
      { role: 'system', content: 'You answer weather questions.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'It is 18°C and sunny in Paris.' },
    ];
    const rec = await call('POST', '/executions', {
      trace_id: 'prod-1',
      model: 'gpt-4o',
      conversation_history: conversation,
      cost_usd: 0.001,
    });
    expect(rec.status, JSON.stringify(rec.body)).toBe(201);
    await until(async () => (await call('GET', '/executions/prod-1')).status === 200, 'the execution');
    const item = await call('POST', `/datasets/${ds.dataset_id}/items/from-execution`, {
      trace_id: 'prod-1',
      metadata: { why: 'regression' },
    });
    expect(item.status, JSON.stringify(item.body)).toBe(201);
    expect(item.body).toMatchObject({
      input: conversation.slice(0, 2),
      expected_output: 'It is 18°C and sunny in Paris.',
      metadata: { why: 'regression' },
      source_trace_id: 'prod-1',
      version: 1,
    });
    const overridden = await call('POST', `/datasets/${ds.dataset_id}/items/from-execution`, {
      trace_id: 'prod-1',
      expected_output: 'Sunny',
    });
    expect(overridden.body.expected_output).toBe('Sunny');
    const missing = await call('POST', `/datasets/${ds.dataset_id}/items/from-execution`, { trace_id: 'no-such-trace' });
    expect([missing.status, missing.body.detail]).toEqual([404, 'Execution not found']);
  });

  it('bad input: a 4xx naming the field, never a 500', async () => {
    const ds = (await call('POST', '/datasets', { name: 'bad-input' })).body;
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      ['POST', '/datasets', {}, 400, /name: is required/],
      ['POST', '/datasets', { name: '' }, 400, /name: must NOT have fewer than 1 characters/],
      ['POST', '/datasets', { name: 'x', metadata: [1] }, 400, /metadata: must be object/],
      ['POST', '/datasets', { name: 'x', owner: 'me' }, 400, /owner: unknown field/],
      ['POST', `/datasets/${ds.dataset_id}/items`, { expected_output: 1 }, 400, /input: is required/],
      ['POST', `/datasets/${ds.dataset_id}/items`, { input: 'a\u0000b' }, 400, /input: must not contain NUL/],
      ['POST', `/datasets/${ds.dataset_id}/items`, [], 400, /^Invalid body: items: must NOT have fewer than 1 items$/],
      [
        'POST',
        `/datasets/${ds.dataset_id}/items`,
        [{ input: 1 }, { input: 2, colour: 'red' }],
        400,
        /^Invalid body: items\[1\]\.colour: unknown field$/,
      ],
      ['POST', '/datasets/00000000-0000-4000-8000-000000000000/items', { input: 1 }, 404, /^Dataset not found$/],
      ['PATCH', `/datasets/${ds.dataset_id}`, {}, 400, /must NOT have fewer than 1 properties/],
      ['GET', '/datasets?cursor=nonsense', undefined, 400, /^cursor: is not a cursor this endpoint gave$/],
      ['GET', `/datasets/${ds.dataset_id}/items?limit=0`, undefined, 400, /limit: must be >= 1/],
      ['POST', `/datasets/${ds.dataset_id}/items/from-execution`, {}, 400, /trace_id: is required/],
    ];
    for (const [method, path, body, status, detail] of cases) {
      const r = await call(method, path, body);
      expect([r.status, r.body?.detail], `${method} ${path} ${JSON.stringify(body)}`).toEqual([status, expect.stringMatching(detail)]);
    }
    const tooMany = await call(
      'POST',
      `/datasets/${ds.dataset_id}/items`,
      Array.from({ length: 1_001 }, () => ({ input: 1 })),
    );
    expect([tooMany.status, tooMany.body.detail]).toEqual([400, expect.stringMatching(/must NOT have more than 1000 items/)]);
  });
});
