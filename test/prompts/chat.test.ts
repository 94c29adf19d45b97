// Chat prompts over HTTP: messages and placeholders, the render of the shared compile fixtures
// (the SDKs' compile must agree with it), placeholder fills validated (400) and required (422),
// config size, and versions, diff, rollback, labels and template usages as for text prompts.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { getJson, serviceForFile } from '../helpers/service.ts';

export interface CompileCase {
  name: string;
  type: 'text' | 'chat';
  template: unknown;
  inputs: Record<string, unknown>;
  placeholders?: Record<string, unknown>;
  expect:
    { status: number; detail: string } | { text?: string; messages?: unknown[]; unused_inputs: string[]; unused_placeholders: string[] };
}
const fixtures = JSON.parse(fs.readFileSync(new URL('../fixtures/prompt-compile.json', import.meta.url), 'utf8')) as {
  cases: CompileCase[];
};

const svc = serviceForFile();

const BASE = '/api/projects/default/prompts';
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc().url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const support = [
  { role: 'system', content: 'You support {{product}} customers.' },
  { type: 'placeholder', name: 'history' },
  { role: 'user', content: '{{question}}' },
];

describe(`chat prompts (${mode} mode)`, () => {
  it('renders every shared compile fixture as the fixture expects', async () => {
    for (const [i, c] of fixtures.cases.entries()) {
      const id = `fixture-${i}`;
      const created = await call('POST', BASE, { prompt_id: id, type: c.type, template: c.template });
      expect(created.status, `${c.name}: ${JSON.stringify(created.body)}`).toBe(201);
      const r = await call('POST', `${BASE}/${id}/render`, {
        inputs: c.inputs,
        ...(c.placeholders ? { placeholders: c.placeholders } : {}),
      });
      if ('status' in c.expect) {
        expect({ status: r.status, body: r.body }, c.name).toEqual({ status: c.expect.status, body: { detail: c.expect.detail } });
      } else {
        expect(r.status, c.name).toBe(200);
        expect(r.body, c.name).toEqual({ prompt_id: id, version: 1, type: c.type, config: {}, ...c.expect });
      }
    }
  });

  it('a chat prompt with a placeholder: listed apart from the variables, config returned with the version', async () => {
    const r = await call('POST', BASE, {
      prompt_id: 'support',
      type: 'chat',
      template: support,
      config: { model: 'gpt-4o', temperature: 0.2, tools: [{ type: 'function', function: { name: 'lookup' } }] },
      labels: ['production'],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.latest).toMatchObject({
      version: 1,
      type: 'chat',
      template: support,
      variables: ['product', 'question'],
      placeholders: ['history'],
      config: { model: 'gpt-4o', temperature: 0.2 },
    });
    const byLabel = await call('GET', `${BASE}/support/versions/production`);
    expect(byLabel.body).toMatchObject({ version: 1, placeholders: ['history'], config: { model: 'gpt-4o' } });
    const rendered = await call('POST', `${BASE}/support/render`, {
      version: 'production',
      inputs: { product: 'Loom', question: 'Refund?' },
      placeholders: { history: [{ role: 'user', content: 'Hi' }] },
    });
    expect(rendered.body).toEqual({
      prompt_id: 'support',
      version: 1,
      type: 'chat',
      messages: [
        { role: 'system', content: 'You support Loom customers.' },
        { role: 'user', content: 'Hi' },
        { role: 'user', content: 'Refund?' },
      ],
      config: { model: 'gpt-4o', temperature: 0.2, tools: [{ type: 'function', function: { name: 'lookup' } }] },
      unused_inputs: [],
      unused_placeholders: [],
    });
  });

  it('a bad template entry or fill is a 400 naming it; a missing placeholder a 422', async () => {
    const noName = await call('POST', BASE, { prompt_id: 'bad1', type: 'chat', template: [{ type: 'placeholder' }] });
    expect(noName.status).toBe(400);
    expect(noName.body.detail).toContain('template.0.name: is required');
    const badName = await call('POST', BASE, { prompt_id: 'bad2', type: 'chat', template: [{ type: 'placeholder', name: 'has space' }] });
    expect(badName.status).toBe(400);
    expect(badName.body.detail).toContain('template.0.name: must match pattern');
    const noRole = await call('POST', BASE, { prompt_id: 'bad3', type: 'chat', template: [{ content: 'x' }] });
    expect(noRole.status).toBe(400);
    expect(noRole.body.detail).toContain('template.0.role: is required');
    expect((await call('GET', `${BASE}/bad1`)).status).toBe(404);

    const notObject = await call('POST', `${BASE}/support/render`, { inputs: {}, placeholders: [] });
    expect(notObject.status).toBe(400);
    expect(notObject.body.detail).toContain('placeholders: must be object');
    const badMessage = await call('POST', `${BASE}/support/render`, {
      inputs: { product: 'p', question: 'q' },
      placeholders: {
        history: [
          { role: 'user', content: 'a' },
          { role: '', content: 'b' },
        ],
      },
    });
    expect(badMessage.status).toBe(400);
    expect(badMessage.body.detail).toBe('placeholders.history[1].role: must be a non-empty string');
    const missing = await call('POST', `${BASE}/support/render`, { inputs: { product: 'p', question: 'q' } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toBe('Missing placeholders: history');
  });

  it('config: free JSON up to 64 KiB, a larger one is a 400 naming it', async () => {
    const big = { notes: 'x'.repeat(64 * 1024) };
    const r = await call('POST', BASE, { prompt_id: 'bigcfg', type: 'chat', template: support, config: big });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/^config: \d+ bytes of JSON, at most 65536$/);
    const v = await call('POST', `${BASE}/support/versions`, { template: support, config: big });
    expect(v.status).toBe(400);
    expect(v.body.detail).toMatch(/^config: /);
    const fits = await call('POST', BASE, { prompt_id: 'cfgfits', type: 'text', template: 't', config: { notes: 'x'.repeat(60_000) } });
    expect(fits.status).toBe(201);
  });

  it('versions, diff, rollback and labels work on chat prompts as on text ones', async () => {
    const v2 = [...support.slice(0, 2), { type: 'placeholder', name: 'examples' }, { role: 'user', content: 'Q: {{question}}' }];
    const created = await call('POST', `${BASE}/support/versions`, { template: v2, labels: ['staging'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      version: 2,
      placeholders: ['history', 'examples'],
      config: { model: 'gpt-4o' },
      labels: ['staging'],
    });
    expect((await call('POST', `${BASE}/support/versions`, { template: v2 })).status).toBe(200); // same content: no version

    const diff = await call('GET', `${BASE}/support/versions/1/diff/2`);
    expect(diff.body.changed).toBe(true);
    expect(diff.body.content.unified).toBe(
      [
        ' [system]',
        ' You support {{product}} customers.',
        ' [placeholder: history]',
        '+[placeholder: examples]',
        ' [user]',
        '-{{question}}',
        '+Q: {{question}}',
      ].join('\n'),
    );
    expect(diff.body.config.changed).toBe(false);

    const rolled = await call('POST', `${BASE}/support/rollback`, { version: 'production' });
    expect(rolled.status).toBe(201);
    expect(rolled.body).toMatchObject({ version: 3, rolled_back_from: 1, template: support, placeholders: ['history'] });
    expect((await call('PUT', `${BASE}/support/labels/production`, { version: 2 })).status).toBe(200);
    const viaLabel = await call('POST', `${BASE}/support/render`, {
      version: 'production',
      inputs: { product: 'p', question: 'q' },
      placeholders: { history: [], examples: [{ role: 'assistant', content: 'e' }] },
    });
    expect(viaLabel.body).toMatchObject({
      version: 2,
      messages: [{ role: 'system' }, { role: 'assistant', content: 'e' }, { content: 'Q: q' }],
    });
  });

  it('a direct execution names a chat prompt: the usage is resolved like a text prompt’s', async () => {
    const r = await call('POST', '/api/projects/default/executions', {
      trace_id: 'chat-usage-1',
      model: 'gpt-4o',
      template_usages: [{ prompt_id: 'support', version: 'production', inputs: { product: 'p', question: 'q' } }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const e = await call('GET', '/api/projects/default/executions/chat-usage-1');
    expect(e.body.template_usages).toEqual([expect.objectContaining({ prompt_id: 'support', version_ref: 'production', version: 2 })]);
    const unknown = await call('POST', '/api/projects/default/executions', {
      trace_id: 'chat-usage-2',
      template_usages: [{ prompt_id: 'support', version: 9 }],
    });
    expect(unknown.status).toBe(422);
  });
});
