// GET …/executions/{trace_id}: why a traced execution failed (its root span's reason, else the
// earliest failed span's, whatever the order spans are read in; read from the spans when the
// stored row has none) and the name of the API key that sent it (kept when revoked, null when the
// key is gone or no key sent it). Real OTLP exports, real stores.
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorReason } from '../../src/executions/error-reason.ts';
import { correctExecution } from '../helpers/corrections.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { exporting } from '../helpers/otel.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

let svc: TestService;
let key: { key_id: string; key: string };
const P = '/api/projects/default';
const call = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  getJson(`${svc.url}${P}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(init.key ? { 'X-API-Key': init.key } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false', TRACE_DEBOUNCE_MS: '50' });
  const created = await call('/api-keys', { method: 'POST', body: { name: 'checkout-service' } });
  expect(created.status).toBe(201);
  key = { key_id: created.body.key_id, key: created.body.key };
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

/**
 * A root, a chat call and a tool call, sent with the key; `fail` sets each span's status (a message, or
 * ERROR without one). Returns the trace id once assembled.
 */
async function failedTrace(fail: { root?: string | true; first?: string | true; second?: string | true }) {
  const exp = exporting(svc.url, { protocol: 'proto', gzip: false, headers: { 'x-api-key': key.key } });
  const base = Date.now() - 5_000;
  const status = (s: string | true | undefined) =>
    s === undefined ? undefined : s === true ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message: s };
  const root = exp.tracer.startSpan('invoke_agent planner', {
    kind: SpanKind.INTERNAL,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
    startTime: new Date(base),
  });
  const ctx = trace.setSpan(context.active(), root);
  for (const [i, which] of (['first', 'second'] as const).entries()) {
    // The first a chat call (a trace is an execution once it has one), the second a tool call.
    const attributes =
      i === 0
        ? { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini' }
        : { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' };
    const s = exp.tracer.startSpan(`step ${i}`, { attributes, startTime: new Date(base + 10 + i * 100) }, ctx);
    const st = status(fail[which]);
    if (st) s.setStatus(st);
    s.end(new Date(base + 90 + i * 100));
  }
  const st = status(fail.root);
  if (st) root.setStatus(st);
  root.end(new Date(base + 500));
  await exp.flush();
  await exp.shutdown();
  const traceId = root.spanContext().traceId;
  await until(async () => (await call(`/executions/${traceId}`)).body?.span_count === 3, 'the trace as an execution');
  return traceId;
}

describe(`execution detail: error reason and key name (${mode} mode)`, () => {
  it("a failed trace's error_message is its root span's reason, though a child failed without one", async () => {
    const traceId = await failedTrace({ root: 'upstream refused: 429 rate limited', first: true });
    const e = (await call(`/executions/${traceId}`)).body;
    expect(e).toMatchObject({
      status: 'error',
      error_message: 'upstream refused: 429 rate limited',
      source: 'otlp',
      api_key_id: key.key_id,
      api_key_name: 'checkout-service',
    });
    // Stored so at assembly: the row's reason, not only the detail's.
    const stored = await svc.stores.clickhouse.query<{ m: string }>(
      "SELECT error_message AS m FROM executions FINAL WHERE project_id = 'default' AND trace_id = {t:String} AND sign = 1",
      { t: traceId },
    );
    expect(stored).toEqual([{ m: 'upstream refused: 429 rate limited' }]);
  });

  it("without a root reason: the earliest failed span's; none at all: null", async () => {
    const child = await failedTrace({ first: true, second: 'tool timed out after 30 s' });
    expect((await call(`/executions/${child}`)).body).toMatchObject({ status: 'error', error_message: 'tool timed out after 30 s' });
    const both = await failedTrace({ first: 'first failure', second: 'second failure' });
    expect((await call(`/executions/${both}`)).body.error_message).toBe('first failure');
    const silent = await failedTrace({ root: true });
    expect((await call(`/executions/${silent}`)).body).toMatchObject({ status: 'error', error_message: null });
    const ok = await failedTrace({});
    expect((await call(`/executions/${ok}`)).body).toMatchObject({ status: 'ok', error_message: null });
  });

  it('an execution stored without the reason (an earlier rule) shows the one its spans carry', async () => {
    const traceId = await failedTrace({ root: 'budget exhausted', first: true });
    await correctExecution(svc.stores.clickhouse, traceId, { error_message: '' });
    const stored = await svc.stores.clickhouse.query<{ m: string }>(
      "SELECT error_message AS m FROM executions FINAL WHERE project_id = 'default' AND trace_id = {t:String} AND sign = 1",
      { t: traceId },
    );
    expect(stored).toEqual([{ m: '' }]);
    expect((await call(`/executions/${traceId}`)).body).toMatchObject({ status: 'error', error_message: 'budget exhausted' });
  });

  it('the reason does not depend on the order the spans are read in', () => {
    const span = (id: string, parent: string, start: string, message: string) => ({
      span_id: id,
      parent_span_id: parent,
      start_time_ns: start,
      status_code: 'ERROR',
      status_message: message,
      error_message: '',
    });
    const spans = [span('b', 'r', '200', 'later'), span('a', 'r', '100', 'earlier'), span('c', 'r', '100', 'same instant, higher id')];
    expect(errorReason(spans)).toBe('earlier');
    expect(errorReason([...spans].reverse())).toBe('earlier');
    expect(errorReason([...spans, span('r', '', '300', '')])).toBe('earlier'); // the root failed without a reason
    expect(errorReason([...spans, span('r', '', '300', 'root')])).toBe('root');
    expect(errorReason([{ ...span('x', '', '1', 'not failed'), status_code: 'OK' }])).toBe('');
  });

  it("a direct record's error_message is its own; api_key_name names the key, kept when revoked, null when gone or keyless", async () => {
    const body = {
      trace_id: 'direct-failed',
      provider: 'openai',
      model: 'gpt-4o-mini',
      tokens_in: 10,
      tokens_out: 5,
      latency_ms: 100,
      status: 'error',
      error_message: 'context length exceeded',
      environment: 'staging',
    };
    expect((await call('/executions', { method: 'POST', body, key: key.key })).status).toBe(201);
    const e = (await call('/executions/direct-failed')).body;
    expect(e).toMatchObject({
      status: 'error',
      error_message: 'context length exceeded',
      api_key_id: key.key_id,
      api_key_name: 'checkout-service',
      environment: 'staging',
    });

    // Without a key (the dev caller): no key, no name.
    const keyless = { ...body, trace_id: 'direct-keyless', status: 'ok', error_message: undefined };
    expect((await call('/executions', { method: 'POST', body: keyless })).status).toBe(201);
    expect((await call('/executions/direct-keyless')).body).toMatchObject({ api_key_id: null, api_key_name: null, error_message: null });

    // Revoked: the name stays; the key row gone: null, the id kept.
    expect((await call(`/api-keys/${key.key_id}`, { method: 'DELETE' })).status).toBeLessThan(300);
    expect((await call('/executions/direct-failed')).body.api_key_name).toBe('checkout-service');
    await svc.stores.postgres.query('DELETE FROM api_keys WHERE key_id = $1', [key.key_id]);
    expect((await call('/executions/direct-failed')).body).toMatchObject({ api_key_id: key.key_id, api_key_name: null });
  });
});
