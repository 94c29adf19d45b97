// Prompt management over HTTP: every endpoint's success and failure statuses, gap-free versions
// under concurrency, rollback, labels through the cache, render, diff, archive, roles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

const idp = new TestIdp();
let svc: TestService;
let tokens: Record<'admin' | 'member' | 'viewer' | 'outsider', string>;
let ingestKey: string;
let memberKey: string;
const BASE = '/api/projects/acme/prompts';

beforeAll(async () => {
  await idp.start();
  svc = await startTestService(idp.env({ AUTH_REQUIRED: 'true' }));
  tokens = {
    admin: await idp.token({ sub: 'ada', project_id: 'acme', role: 'admin' }),
    member: await idp.token({ sub: 'mel', project_id: 'acme', role: 'member' }),
    viewer: await idp.token({ sub: 'vic', project_id: 'acme', role: 'viewer' }),
    outsider: await idp.token({ sub: 'oz', project_id: 'other', role: 'admin' }),
  };
  const mk = async (scope: string) =>
    (await call('POST', '/api/projects/acme/api-keys', { name: scope, scope }, 'admin')).body.key as string;
  ingestKey = await mk('ingest');
  memberKey = await mk('full');
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await dropTestDatabases();
});

type Who = keyof typeof tokens | { key: string } | 'nobody';
function call(method: string, path: string, body?: unknown, who: Who = 'member') {
  const headers: Record<string, string> = {};
  if (who === 'nobody') {
    // no credentials
  } else if (typeof who === 'object') headers['X-API-Key'] = who.key;
  else headers.Authorization = `Bearer ${tokens[who]}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return getJson(`${svc.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const createText = (id: string, template = 'Hello {{ name }}', extra: object = {}) =>
  call('POST', BASE, { prompt_id: id, type: 'text', template, ...extra });

describe(`prompts (${mode} mode)`, () => {
  it('create: 201 with version 1 inline, variables extracted, config kept as sent', async () => {
    const r = await createText('welcome', 'Hi {{ name }} from {{user.city}}', {
      description: 'd',
      config: { temperature: 0.3, stop: ['\n'] },
      labels: ['production'],
      commit_message: 'first',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      prompt_id: 'welcome',
      type: 'text',
      description: 'd',
      latest_version: 1,
      labels: { production: 1 },
      archived_at: null,
    });
    expect(r.body.latest).toMatchObject({
      version: 1,
      variables: ['name', 'user.city'],
      config: { temperature: 0.3, stop: ['\n'] },
      commit_message: 'first',
      created_by: 'mel',
      labels: ['production'],
      rolled_back_from: null,
    });
  });

  it('create: 400 naming the field, 409 for an existing id, 401 and 403', async () => {
    const bad = await call('POST', BASE, { prompt_id: 'Bad Id', type: 'text', template: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('prompt_id:');
    const wrongShape = await call('POST', BASE, { prompt_id: 'shape', type: 'text', template: [{ role: 'user', content: 'x' }] });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body.detail).toContain('template:');
    const reserved = await createText('reserved', 'x', { labels: ['latest'] });
    expect(reserved.status).toBe(400);
    expect(reserved.body.detail).toMatch(/reserved/);
    await createText('dup');
    const dup = await createText('dup');
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toMatch(/already exists/);
    expect((await call('POST', BASE, { prompt_id: 'x', type: 'text', template: 'x' }, 'nobody')).status).toBe(401);
    expect((await call('POST', BASE, { prompt_id: 'x', type: 'text', template: 'x' }, 'viewer')).status).toBe(403);
    expect((await call('POST', BASE, { prompt_id: 'x', type: 'text', template: 'x' }, 'outsider')).status).toBe(403);
  });

  it('new version: 201, identical content → 200 and no version, omitted config kept, 404, 409 archived, 422 wrong type', async () => {
    await createText('ver', 'v1 {{a}}', { config: { model: 'gpt-x' } });
    const v2 = await call('POST', `${BASE}/ver/versions`, { template: 'v2 {{a}} {{b}}', commit_message: 'more' });
    expect(v2.status).toBe(201);
    expect(v2.body).toMatchObject({ version: 2, variables: ['a', 'b'], config: { model: 'gpt-x' } });
    const same = await call('POST', `${BASE}/ver/versions`, { template: 'v2 {{a}} {{b}}' });
    expect(same.status).toBe(200);
    expect(same.body.version).toBe(2);
    const cleared = await call('POST', `${BASE}/ver/versions`, { template: 'v2 {{a}} {{b}}', config: {} });
    expect(cleared.status).toBe(201);
    expect(cleared.body).toMatchObject({ version: 3, config: {} });
    expect((await call('POST', `${BASE}/nope/versions`, { template: 'x' })).status).toBe(404);
    const chat = await call('POST', `${BASE}/ver/versions`, { template: [{ role: 'user', content: 'x' }] });
    expect(chat.status).toBe(422);
    expect(chat.body.detail).toMatch(/string for a text prompt/);
    expect((await call('POST', `${BASE}/ver/versions`, { template: 'x', extra: 1 })).status).toBe(400);
  });

  it('20 concurrent version writes get versions 2..21 exactly', async () => {
    await createText('race', 'v1');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('POST', `${BASE}/race/versions`, { template: `v${i + 2} writer ${i}` })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(results.map((r) => r.body.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    const history = await call('GET', `${BASE}/race/versions`);
    expect(history.body.items.map((v: { version: number }) => v.version)).toEqual(Array.from({ length: 21 }, (_, i) => 21 - i));
  });

  it('reads a version by number, latest and label; 404 for unknown ones, 400 for an impossible reference', async () => {
    await createText('refs', 'one', { labels: ['staging'] });
    await call('POST', `${BASE}/refs/versions`, { template: 'two' });
    expect((await call('GET', `${BASE}/refs/versions/1`)).body.template).toBe('one');
    expect((await call('GET', `${BASE}/refs/versions/latest`)).body.template).toBe('two');
    expect((await call('GET', `${BASE}/refs/versions/staging`)).body).toMatchObject({ version: 1, labels: ['staging'] });
    expect((await call('GET', `${BASE}/refs/versions/9`)).status).toBe(404);
    const noLabel = await call('GET', `${BASE}/refs/versions/prod`);
    expect(noLabel.status).toBe(404);
    expect(noLabel.body.detail).toBe('Label prod not found');
    expect((await call('GET', `${BASE}/nope/versions/latest`)).body.detail).toBe('Prompt not found');
    expect((await call('GET', `${BASE}/refs/versions/Not%20A%20Ref`)).status).toBe(400);
  });

  it('a label move and a new version are visible at once through the cache', async () => {
    await createText('cached', 'c1', { labels: ['production'] });
    await call('POST', `${BASE}/cached/versions`, { template: 'c2' });
    // warm the cache
    for (let i = 0; i < 3; i++)
      expect((await call('GET', `${BASE}/cached/versions/production`, undefined, { key: memberKey })).body.version).toBe(1);
    expect((await call('GET', `${BASE}/cached/versions/latest`)).body.version).toBe(2);
    const moved = await call('PUT', `${BASE}/cached/labels/production`, { version: 2 });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ prompt_id: 'cached', label: 'production', version: 2 });
    expect((await call('GET', `${BASE}/cached/versions/production`, undefined, { key: memberKey })).body.version).toBe(2);
    await call('POST', `${BASE}/cached/versions`, { template: 'c3' });
    expect((await call('GET', `${BASE}/cached/versions/latest`)).body.template).toBe('c3');
    expect((await call('GET', `${BASE}/cached/versions/1`)).body.labels).toEqual([]);
  });

  it('labels: unique per prompt, latest reserved, 422 for a missing version, delete 204 then 404', async () => {
    await createText('lab', 'l1');
    await call('POST', `${BASE}/lab/versions`, { template: 'l2' });
    await call('PUT', `${BASE}/lab/labels/beta`, { version: 1 });
    await call('PUT', `${BASE}/lab/labels/beta`, { version: 2 });
    expect((await call('GET', `${BASE}/lab`)).body.labels).toEqual({ beta: 2 });
    expect((await call('PUT', `${BASE}/lab/labels/latest`, { version: 1 })).status).toBe(400);
    expect((await call('PUT', `${BASE}/lab/labels/7`, { version: 1 })).status).toBe(400);
    expect((await call('PUT', `${BASE}/lab/labels/beta`, { version: 5 })).status).toBe(422);
    expect((await call('PUT', `${BASE}/lab/labels/beta`, { version: 'x' })).status).toBe(400);
    expect((await call('PUT', `${BASE}/nope/labels/beta`, { version: 1 })).status).toBe(404);
    expect((await call('PUT', `${BASE}/lab/labels/beta`, { version: 1 }, 'viewer')).status).toBe(403);
    expect((await call('DELETE', `${BASE}/lab/labels/beta`)).status).toBe(204);
    expect((await call('DELETE', `${BASE}/lab/labels/beta`)).status).toBe(404);
    expect((await call('DELETE', `${BASE}/lab/labels/latest`)).status).toBe(400);
    expect((await call('GET', `${BASE}/lab/versions/beta`)).status).toBe(404);
  });

  it('rollback appends a version (twice in a row), never rewrites history; 409 to the latest content', async () => {
    await createText('rb', 'first');
    await call('POST', `${BASE}/rb/versions`, { template: 'second' });
    await call('POST', `${BASE}/rb/versions`, { template: 'third' });
    const r1 = await call('POST', `${BASE}/rb/rollback`, { version: 1 });
    expect(r1.status).toBe(201);
    expect(r1.body).toMatchObject({ version: 4, template: 'first', rolled_back_from: 1, commit_message: 'Rollback to version 1' });
    const r2 = await call('POST', `${BASE}/rb/rollback`, { version: 2, commit_message: 'back to 2' });
    expect(r2.status).toBe(201);
    expect(r2.body).toMatchObject({ version: 5, template: 'second', rolled_back_from: 2, commit_message: 'back to 2' });
    expect((await call('GET', `${BASE}/rb/versions/latest`)).body.version).toBe(5);
    const history = (await call('GET', `${BASE}/rb/versions`)).body.items;
    expect(history.map((v: { version: number; rolled_back_from: number | null }) => [v.version, v.rolled_back_from])).toEqual([
      [5, 2],
      [4, 1],
      [3, null],
      [2, null],
      [1, null],
    ]);
    expect((await call('GET', `${BASE}/rb/versions/1`)).body.template).toBe('first'); // untouched
    expect((await call('POST', `${BASE}/rb/rollback`, { version: 'latest' })).status).toBe(409);
    expect((await call('POST', `${BASE}/rb/rollback`, { version: 2 })).status).toBe(409); // v5 already has v2's content
    expect((await call('POST', `${BASE}/rb/rollback`, { version: 42 })).status).toBe(404);
    expect((await call('POST', `${BASE}/rb/rollback`, {})).status).toBe(400);
  });

  it('render text and chat: nested names, whitespace in braces, extra inputs reported, 422 naming each missing variable', async () => {
    await createText('rt', 'Dear {{ user.name }}, re: {{topic}}{{  sig }}', { config: { temperature: 0 } });
    const t = await call('POST', `${BASE}/rt/render`, { inputs: { user: { name: 'Ann' }, topic: 'bills', sig: '!', unused: 1 } });
    expect(t.status).toBe(200);
    expect(t.body).toEqual({
      prompt_id: 'rt',
      version: 1,
      type: 'text',
      text: 'Dear Ann, re: bills!',
      config: { temperature: 0 },
      unused_inputs: ['unused'],
      unused_placeholders: [],
    });
    const missing = await call('POST', `${BASE}/rt/render`, { inputs: { topic: 'x' } });
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({ detail: 'Missing variables: user.name, sig' });

    const chat = await call('POST', BASE, {
      prompt_id: 'rc',
      type: 'chat',
      template: [
        { role: 'system', content: 'You help {{ org.name }}.' },
        { role: 'user', content: '{{question}}' },
      ],
    });
    expect(chat.status).toBe(201);
    expect(chat.body.latest.variables).toEqual(['org.name', 'question']);
    const c = await call('POST', `${BASE}/rc/render`, { version: 1, inputs: { 'org.name': 'Acme', question: 'Why?' } });
    expect(c.body).toMatchObject({
      type: 'chat',
      messages: [
        { role: 'system', content: 'You help Acme.' },
        { role: 'user', content: 'Why?' },
      ],
      unused_inputs: [],
    });
    expect((await call('POST', `${BASE}/rc/render`, { version: 'nolabel', inputs: {} })).status).toBe(404);
    expect((await call('POST', `${BASE}/rc/render`, { inputs: [] })).status).toBe(400);
    // agents with a full API key may render; ingest keys may not read prompts
    expect((await call('POST', `${BASE}/rc/render`, { inputs: { 'org.name': 'a', question: 'b' } }, { key: memberKey })).status).toBe(200);
    expect((await call('POST', `${BASE}/rc/render`, { inputs: {} }, { key: ingestKey })).status).toBe(403);
  });

  it('diff of content and config between two versions', async () => {
    await createText('df', 'line one\nline two\nline three', { config: { temperature: 0.1, model: 'm' } });
    await call('POST', `${BASE}/df/versions`, {
      template: 'line one\nline 2\nline three\nline four',
      config: { temperature: 0.7, model: 'm' },
    });
    const d = await call('GET', `${BASE}/df/versions/1/diff/latest`);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ prompt_id: 'df', from: 1, to: 2, changed: true });
    expect(d.body.content.unified).toBe(' line one\n-line two\n+line 2\n line three\n+line four');
    expect(d.body.config.unified).toContain('-  "temperature": 0.1\n+  "temperature": 0.7');
    const none = await call('GET', `${BASE}/df/versions/2/diff/2`);
    expect(none.body.changed).toBe(false);
    expect((await call('GET', `${BASE}/df/versions/1/diff/9`)).status).toBe(404);
  });

  it('list: paginated with total, q filters by id, archived hidden unless asked; 400 naming a bad parameter', async () => {
    await createText('list-a');
    await createText('list-b');
    await createText('list-c');
    const page = await call('GET', `${BASE}?q=list-&limit=2&offset=1`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect(page.body.items.map((p: { prompt_id: string }) => p.prompt_id)).toEqual(['list-b', 'list-c']);
    expect((await call('DELETE', `${BASE}/list-b`)).status).toBe(204);
    expect((await call('GET', `${BASE}?q=list-`)).body.items.map((p: { prompt_id: string }) => p.prompt_id)).toEqual(['list-a', 'list-c']);
    const withArchived = await call('GET', `${BASE}?q=list-&include_archived=true`);
    expect(withArchived.body.total).toBe(3);
    expect(withArchived.body.items[1]).toMatchObject({ prompt_id: 'list-b', archived_at: expect.any(String) });
    for (const [qs, param] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['offset=-1', 'offset'],
      ['include_archived=maybe', 'include_archived'],
      ['sort=x', 'sort'],
    ]) {
      const r = await call('GET', `${BASE}?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.detail).toContain(`${param}:`);
    }
    expect((await call('GET', BASE, undefined, { key: ingestKey })).status).toBe(403);
    expect((await call('GET', BASE, undefined, 'viewer')).status).toBe(200);
  });

  it('archive: 204, versions still readable, no new versions (409), id not reusable (409), 404 unknown', async () => {
    await createText('arch', 'kept {{x}}');
    expect((await call('DELETE', `${BASE}/arch`, undefined, 'viewer')).status).toBe(403);
    expect((await call('DELETE', `${BASE}/arch`)).status).toBe(204);
    expect((await call('DELETE', `${BASE}/arch`)).status).toBe(204);
    expect((await call('GET', `${BASE}/arch/versions/1`)).body.template).toBe('kept {{x}}');
    expect((await call('GET', `${BASE}/arch`)).body.archived_at).toEqual(expect.any(String));
    expect((await call('POST', `${BASE}/arch/render`, { inputs: { x: 1 } })).body.text).toBe('kept 1');
    expect((await call('POST', `${BASE}/arch/versions`, { template: 'new' })).status).toBe(409);
    expect((await createText('arch')).status).toBe(409);
    expect((await call('DELETE', `${BASE}/never`)).status).toBe(404);
  });

  it('an ingest key may record executions but not read them', async () => {
    const r = await call(
      'POST',
      '/api/projects/acme/executions',
      { trace_id: 'ingest-only', template_usages: [{ prompt_id: 'welcome' }] },
      { key: ingestKey },
    );
    expect(r.status).toBe(201);
    expect(r.body.template_usages[0]).toMatchObject({ prompt_id: 'welcome', version_ref: 'latest', version: 1 });
    expect((await call('GET', '/api/projects/acme/executions', undefined, { key: ingestKey })).status).toBe(403);
    expect((await call('GET', '/api/projects/acme/executions/ingest-only', undefined, { key: ingestKey })).status).toBe(403);
    expect((await call('POST', '/api/projects/acme/executions', { trace_id: 'viewer-write' }, 'viewer')).status).toBe(403);
  });

  it('a write on one node is visible on another node at once', async () => {
    await createText('nodes', 'n1', { labels: ['production'] });
    await call('POST', `${BASE}/nodes/versions`, { template: 'n2' });
    // A second API process on the same stores. Embedded stores belong to one process, so there the
    // second node is this one restarted: the cache is per process either way.
    const other = mode === 'server' ? await startTestService({}, { env: svc.testEnv }) : svc;
    try {
      const read = () =>
        getJson(`${other.url}${BASE}/nodes/versions/production`, { headers: { Authorization: `Bearer ${tokens.member}` } });
      expect((await read()).body.version).toBe(1); // now cached on the other node
      await call('PUT', `${BASE}/nodes/labels/production`, { version: 2 }); // written through the first node
      const deadline = Date.now() + 5_000;
      let v = (await read()).body.version;
      while (v !== 2 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        v = (await read()).body.version;
      }
      expect(v).toBe(2);
    } finally {
      if (other !== svc) await other.close();
    }
  });
});
