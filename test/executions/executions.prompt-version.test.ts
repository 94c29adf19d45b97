// The executions of one prompt version (GET …/executions?prompt_id=…&prompt_version=N, and the
// export; docs/executions.md): those whose first use of the prompt was that version — the groups
// of the version comparison, which links each group to this list. prompt_version needs prompt_id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
const P = '/api/projects/default';
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const ids = (items: Array<{ trace_id: string }>) => items.map((i) => i.trace_id).sort();

describe(`executions of a prompt version (${mode} mode)`, () => {
  it('lists and exports the executions whose first use of the prompt was that version, as the comparison groups them', async () => {
    for (const [id, template] of [
      ['pv', 'one'],
      ['other', 'else'],
    ])
      expect((await call('POST', '/prompts', { prompt_id: id, type: 'text', template, labels: ['production'] })).status).toBe(201);
    expect((await call('POST', '/prompts/pv/versions', { template: 'two' })).status).toBe(201);
    const usages: Record<string, object[]> = {
      'pv-1': [{ prompt_id: 'pv', version: 1 }],
      'pv-2': [{ prompt_id: 'pv', version: 2 }],
      'pv-2-by-label': [{ prompt_id: 'pv', version: 'production' }], // production is on v1: a v1 execution
      'pv-1-then-2': [
        { prompt_id: 'pv', version: 1 },
        { prompt_id: 'pv', version: 2 },
      ],
      'other-then-pv-2': [
        { prompt_id: 'other', version: 1 },
        { prompt_id: 'pv', version: 2 },
      ],
      'other-1': [{ prompt_id: 'other', version: 1 }],
    };
    for (const [trace_id, template_usages] of Object.entries(usages)) {
      const r = await call('POST', '/executions', { trace_id, provider: 'openai', model: 'gpt-4o-mini', template_usages });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    const v1 = await call('GET', '/executions?prompt_id=pv&prompt_version=1');
    expect(ids(v1.body.items)).toEqual(['pv-1', 'pv-1-then-2', 'pv-2-by-label']);
    const v2 = await call('GET', '/executions?prompt_id=pv&prompt_version=2');
    expect(ids(v2.body.items)).toEqual(['other-then-pv-2', 'pv-2']);
    expect(v2.body.total).toBe(2);
    // The version comparison counts the same executions in each group.
    const cmp = await call('GET', '/prompts/pv/compare?versions=1,2');
    expect(cmp.body.groups.map((g: { executions: number }) => g.executions)).toEqual([3, 2]);
    // The export takes the same filter (and prompt_label, as the list does).
    const csv = await fetch(`${svc.url}${P}/executions/export?format=csv&prompt_id=pv&prompt_version=2`);
    expect(csv.status).toBe(200);
    expect(
      (await csv.text())
        .trim()
        .split('\r\n')
        .slice(1)
        .map((r) => r.split(',')[0])
        .sort(),
    ).toEqual(['other-then-pv-2', 'pv-2']);
    const byLabel = await fetch(`${svc.url}${P}/executions/export?format=csv&prompt_id=pv&prompt_label=production`);
    expect(byLabel.status).toBe(200);
    expect(
      (await byLabel.text())
        .trim()
        .split('\r\n')
        .slice(1)
        .map((r) => r.split(',')[0]),
    ).toEqual(['pv-2-by-label']);
  });

  it('prompt_version without prompt_id, or not a version number, is a 400 naming it', async () => {
    const alone = await call('GET', '/executions?prompt_version=1');
    expect(alone.status).toBe(400);
    expect(alone.body.detail).toBe('prompt_version: give prompt_id too (the version of which prompt)');
    const bad = await call('GET', '/executions?prompt_id=pv&prompt_version=0');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^Invalid query parameter: prompt_version/);
    expect((await call('GET', '/executions/export?prompt_version=2')).status).toBe(400);
  });
});
