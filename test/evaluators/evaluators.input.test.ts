// Evaluators and model connections refuse bad input with a 4xx naming the field (docs/evaluators.md):
// URLs the SSRF guard or the URL check refuses, references that do not exist, unmapped template
// variables, out-of-range limits, bad backfill ranges; a connection in use cannot be deleted.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let connectionId = '';
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const evaluator = (extra: Record<string, unknown> = {}) => ({
  name: 'e',
  prompt_id: 'judge',
  connection_id: connectionId,
  score_name: 'quality',
  target: { kind: 'executions', filter: {} },
  ...extra,
});

beforeAll(async () => {
  svc = await startTestService({ SECRETS_KEY: mode === 'server' ? 'a'.repeat(64) : undefined });
  expect(
    (
      await call('POST', '/prompts', {
        prompt_id: 'judge',
        type: 'text',
        template: 'Judge {{output}} for {{audience}}',
        labels: ['production'],
      })
    ).status,
  ).toBe(201);
  expect((await call('POST', '/score-configs', { name: 'quality', data_type: 'BOOLEAN' })).status).toBe(201);
  const c = await call('POST', '/model-connections', { name: 'c', base_url: 'https://judge.example.com/v1', model: 'm', api_key: 'sk-x' });
  expect(c.status, JSON.stringify(c.body)).toBe(201);
  connectionId = c.body.connection_id;
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`evaluators: bad input (${mode} mode)`, () => {
  it('model connections: 400 for a URL that is not http(s), carries credentials, or a missing key; 409 for a name taken', async () => {
    const ok = { name: 'd', base_url: 'https://judge.example.com/v1', model: 'm', api_key: 'sk-y' };
    const cases: Array<[Record<string, unknown>, number, string | RegExp]> = [
      [{ ...ok, base_url: 'ftp://judge.example.com' }, 400, 'base_url: must use http or https, got ftp'],
      [{ ...ok, base_url: 'https://u:p@judge.example.com/v1' }, 400, 'base_url: must not carry credentials (user:password@)'],
      [{ ...ok, base_url: 'judge' }, 400, 'base_url: must be an absolute http or https URL'],
      [{ ...ok, api_key: undefined }, 400, /api_key: is required/],
      [{ ...ok, extra: 1 }, 400, /extra: unknown field/],
      [{ ...ok, name: 'c' }, 409, 'name: a model connection named "c" exists in this project'],
    ];
    for (const [body, status, detail] of cases) {
      const r = await call('POST', '/model-connections', body);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      if (typeof detail === 'string') expect(r.body.detail).toBe(detail);
      else expect(r.body.detail).toMatch(detail);
    }
    expect((await call('GET', '/model-connections/not-a-uuid')).status).toBe(404);
    expect((await call('PUT', `/model-connections/${connectionId}`, {})).status).toBe(400);
  });

  it('evaluators: 422 naming what does not exist or does not fit, 400 for what no evaluator may hold', async () => {
    const cases: Array<[Record<string, unknown>, number, string | RegExp]> = [
      [evaluator({ prompt_id: 'nope' }), 422, 'prompt_id: prompt nope does not exist'],
      [evaluator({ prompt_label: 'staging' }), 422, 'prompt_label: prompt judge has no label "staging"'],
      [
        evaluator(),
        422,
        "variables: the judge prompt's {{audience}} has no source (map it to input, output, expected_output, metadata or metadata.<key>)",
      ],
      [
        evaluator({ variables: { audience: 'metadata.audience' }, score_name: 'nope' }),
        422,
        /^score_name: no live score config named "nope"/,
      ],
      [
        evaluator({ variables: { audience: 'metadata.audience' }, connection_id: '00000000-0000-4000-8000-000000000000' }),
        422,
        'connection_id: model connection 00000000-0000-4000-8000-000000000000 does not exist',
      ],
      [evaluator({ variables: { audience: 'the audience' } }), 400, /variables\.audience: must match pattern/],
      [evaluator({ target: { kind: 'executions', sampling_rate: 2 } }), 400, /target\.sampling_rate: must be <= 1/],
      [evaluator({ target: { kind: 'dataset' } }), 400, /target\.kind: must be one of "executions"/],
      [evaluator({ target: { kind: 'executions', filter: { nope: 1 } } }), 400, /target\.filter\.nope: unknown field/],
      [evaluator({ concurrency: 0 }), 400, /concurrency: must be >= 1/],
      [evaluator({ timeout_ms: 10 }), 400, /timeout_ms: must be >= 100/],
    ];
    for (const [body, status, detail] of cases) {
      const r = await call('POST', '/evaluators', body);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      if (typeof detail === 'string') expect(r.body.detail).toBe(detail);
      else expect(r.body.detail).toMatch(detail);
    }
  });

  it('backfill ranges, unknown evaluators, and a connection in use', async () => {
    const created = await call('POST', '/evaluators', evaluator({ variables: { audience: 'metadata.audience' } }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      prompt_label: 'production',
      agent_id: 'evaluator:e',
      target: { kind: 'executions', filter: {}, sampling_rate: 1 },
      status: { state: 'active', queued: 0, done: 0, failed: 0, last_error: null },
    });
    const id = created.body.evaluator_id;
    expect((await call('POST', '/evaluators', evaluator({ variables: { audience: 'metadata.audience' } }))).status).toBe(409);
    const bad = await call('POST', `/evaluators/${id}/backfill`, { start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' });
    expect(bad).toMatchObject({ status: 400, body: { detail: 'end: must be after start' } });
    const notTime = await call('POST', `/evaluators/${id}/backfill`, { start: 'yesterday', end: '2026-01-01T00:00:00Z' });
    expect(notTime.status).toBe(400);
    expect(notTime.body.detail).toMatch(/^start: /);
    expect((await call('GET', '/evaluators/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await call('GET', '/evaluators/x/evaluations')).status).toBe(404);
    expect((await call('GET', `/evaluators/${id}/evaluations?status=lost`)).status).toBe(400);
    const inUse = await call('DELETE', `/model-connections/${connectionId}`);
    expect(inUse).toMatchObject({
      status: 409,
      body: { detail: 'connection: evaluators use this model connection; delete or change them first' },
    });
    expect((await call('DELETE', `/evaluators/${id}`)).status).toBe(204);
    expect((await call('DELETE', `/model-connections/${connectionId}`)).status).toBe(204);
  });

  it('the sealing key: made once in DATA_DIR with embedded stores; with server stores and no SECRETS_KEY, connections are refused', async () => {
    if (mode === 'embedded') {
      const file = path.join(svc.testEnv.dataDir, 'secrets.key');
      expect(fs.readFileSync(file, 'utf8')).toMatch(/^[0-9a-f]{64}$/);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      return;
    }
    const keyless = await startTestService({ SECRETS_KEY: undefined });
    try {
      const r = await getJson(`${keyless.url}/api/projects/default/model-connections`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'c', base_url: 'https://judge.example.com/v1', model: 'm', api_key: 'sk-x' }),
      });
      expect(r.status).toBe(409);
      expect(r.body.detail).toBe(
        'api_key: connections cannot be stored: SECRETS_KEY is not configured on this server (docs/evaluators.md)',
      );
      expect(fs.existsSync(path.join(keyless.testEnv.dataDir, 'secrets.key'))).toBe(false);
    } finally {
      await keyless.close();
    }
  });
});
