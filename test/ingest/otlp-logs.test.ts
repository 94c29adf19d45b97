// POST /api/v1/logs with the real OpenTelemetry logs SDK and OTLP exporters (protobuf, JSON,
// gzip): GenAI events sent as log records join their span's messages, so the execution's timeline
// and conversation hold their content, whether the span arrived before or after its events (a
// correction when after: still one execution, counted once). Other logs are accepted and counted
// as ignored; explain says per record why. Bad bodies are 4xx naming the problem.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import { SpanKind } from '@opentelemetry/api';
import { dropTestDatabases } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { exporting } from '../helpers/otel.ts';
import { logging } from '../helpers/otel-signals.ts';
import { toClickHouseTime } from '../../src/time.ts';

let svc: TestService;
const P = 'default';
beforeAll(async () => {
  svc = await startTestService({ TRACE_DEBOUNCE_MS: '50' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const api = (rest: string) => `${svc.url}/api/projects/${P}${rest}`;

/** A chat span the way the official JS OpenAI instrumentation (semconv 1.36) sends it: no content on the span. */
function chatSpan(protocol: 'proto' | 'json') {
  const ex = exporting(svc.url, { protocol, gzip: false, service: 'openai-app' });
  const span = ex.tracer.startSpan('chat gpt-4o-mini', {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.system': 'openai',
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 4,
    },
    startTime: new Date(Date.now() - 2_000),
  });
  return {
    ctx: span.spanContext(),
    async send() {
      span.end(new Date(Date.now() - 1_000));
      await ex.flush();
      await ex.shutdown();
    },
  };
}

const timelineOf = (traceId: string) =>
  until(async () => {
    const r = await getJson(api(`/executions/${traceId}/timeline`));
    return r.status === 200 && r.body.events.length >= 3 ? r.body.events : undefined;
  }, `timeline of ${traceId} with the log events' messages`);

describe('GenAI events as logs join their spans', () => {
  it('span first, then its events (protobuf, gzip): the execution is corrected with their content, counted once', async () => {
    const chat = chatSpan('proto');
    await chat.send();
    const traceId = chat.ctx.traceId;
    const first = await until(async () => {
      const r = await getJson(api(`/executions/${traceId}?include_messages=true`));
      return r.status === 200 ? r.body : undefined;
    }, 'execution before the logs');
    expect(first.conversation_history).toEqual([]);

    const logs = logging(svc.url, { protocol: 'proto', gzip: true });
    logs.event('gen_ai.system.message', { content: 'You are terse.' }, chat.ctx);
    logs.event('gen_ai.user.message', { content: 'Capital of France?' }, chat.ctx);
    logs.event('gen_ai.choice', { index: 0, finish_reason: 'stop', message: { content: 'Paris.' } }, chat.ctx);
    await logs.flush();
    await logs.shutdown();

    const events = await timelineOf(traceId);
    expect(events.map((e: any) => [e.type, e.role, e.content, e.span_id])).toEqual([
      ['message', 'system', 'You are terse.', chat.ctx.spanId],
      ['message', 'user', 'Capital of France?', chat.ctx.spanId],
      ['message', 'assistant', 'Paris.', chat.ctx.spanId],
    ]);
    const detail = await until(async () => {
      const r = await getJson(api(`/executions/${traceId}?include_messages=true`));
      return r.body.conversation_history?.length === 3 ? r.body : undefined;
    }, 'conversation with the log content');
    expect(detail.conversation_history[2]).toEqual({ role: 'assistant', content: 'Paris.' });
    expect(detail.tokens_in).toBe(12);
    const listed = await getJson(api(`/executions?model=gpt-4o-mini&limit=1000`));
    expect(listed.body.items.filter((i: any) => i.trace_id === traceId)).toHaveLength(1);
    const [spend] = await svc.stores.clickhouse.query<{ n: string }>(
      "SELECT sum(executions) AS n FROM spend_by_dims WHERE project_id = {p:String} AND grain = 'day' AND model = 'gpt-4o-mini'",
      { p: P },
    );
    expect(Number(spend!.n)).toBe(listed.body.items.length);
  });

  it('events first, then their span (JSON): operation details and per-message events, tool calls included', async () => {
    const chat = chatSpan('json');
    const logs = logging(svc.url, { protocol: 'json' });
    logs.event('gen_ai.client.inference.operation.details', undefined, chat.ctx, {
      'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }],
      'gen_ai.output.messages': [
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'call_9', name: 'get_weather', arguments: { city: 'Paris' } }],
          finish_reason: 'tool_call',
        },
      ],
    });
    await logs.flush();
    await logs.shutdown();
    await chat.send();

    const events = await until(async () => {
      const r = await getJson(api(`/executions/${chat.ctx.traceId}/timeline`));
      return r.status === 200 && r.body.events.length >= 2 ? r.body.events : undefined;
    }, 'timeline from events sent before their span');
    expect(events.map((e: any) => [e.type, e.role ?? e.name, e.content ?? e.arguments])).toEqual([
      ['message', 'user', 'Weather in Paris?'],
      ['tool_call', 'get_weather', { city: 'Paris' }],
    ]);
    const tree = await getJson(api(`/executions/${chat.ctx.traceId}/hierarchy`));
    expect(tree.body.spans[0].messages.input).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
  });

  it("the span's own content wins; events fill only what the span lacks", async () => {
    const ex = exporting(svc.url, { protocol: 'proto', gzip: false });
    const span = ex.tracer.startSpan('chat', {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'from the span' }] }]),
      },
    });
    const logs = logging(svc.url, { protocol: 'proto' });
    logs.event('gen_ai.user.message', { content: 'from a log' }, span.spanContext());
    logs.event('gen_ai.choice', { index: 0, message: { content: 'answer from a log' } }, span.spanContext());
    await logs.flush();
    span.end();
    await ex.flush();
    const events = await until(async () => {
      const r = await getJson(api(`/executions/${span.spanContext().traceId}/timeline`));
      return r.status === 200 && r.body.events.length >= 2 ? r.body.events : undefined;
    }, 'merged timeline');
    expect(events.map((e: any) => e.content)).toEqual(['from the span', 'answer from a log']);
  });
});

describe('after a restart', () => {
  it('a trace whose events were stored after its execution, and not yet assembled again, is found and corrected', async () => {
    const chat = chatSpan('proto');
    await chat.send();
    const traceId = chat.ctx.traceId;
    await until(async () => (await getJson(api(`/executions/${traceId}`))).status === 200, 'execution');
    // Stored, then the process died before the trace was marked: the mark (in memory) is lost.
    await new Promise((r) => setTimeout(r, 20)); // a later received_at than the execution's
    await svc.stores.clickhouse.insert('span_log_events', [
      {
        project_id: P,
        trace_id: traceId,
        span_id: chat.ctx.spanId,
        time_ns: String(Date.now() * 1e6),
        received_at: toClickHouseTime(new Date()),
        seq: 0,
        event_name: 'gen_ai.user.message',
        record_hash: 'h1',
        attributes: JSON.stringify({ content: 'found again' }),
      },
    ]);
    expect(await svc.domain.traces.assembler.recover(Date.now() - 3_600_000)).toBeGreaterThanOrEqual(1);
    const e = await until(async () => {
      const r = await getJson(api(`/executions/${traceId}?include_messages=true`));
      return r.body.conversation_history?.length === 1 ? r.body : undefined;
    }, 'the recovered trace assembled with its events');
    expect(e.conversation_history).toEqual([{ role: 'user', content: 'found again' }]);
  });
});

describe('other logs, explain, errors', () => {
  const post = (body: unknown, headers: Record<string, string> = { 'Content-Type': 'application/json' }, qs = '') =>
    getJson(`${svc.url}/api/v1/logs${qs}`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' || Buffer.isBuffer(body) ? (body as never) : JSON.stringify(body),
    });
  const record = (over: object) => ({ timeUnixNano: '1700000000000000000', ...over });
  const doc = (records: object[]) => ({
    resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 's' }, logRecords: records }] }],
  });

  it('plain logs and other events are accepted and counted as ignored; explain says why, per record', async () => {
    const body = doc([
      record({ body: { stringValue: 'server started' }, severityNumber: 9 }),
      record({ eventName: 'app.clicked' }),
      record({
        attributes: [{ key: 'event.name', value: { stringValue: 'gen_ai.user.message' } }],
        body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'hi' } }] } },
      }),
      record({ eventName: 'gen_ai.client.operation.exception', traceId: '5'.repeat(32), spanId: '6'.repeat(16) }),
      record({
        eventName: 'gen_ai.choice',
        traceId: '5'.repeat(32),
        spanId: '6'.repeat(16),
        body: {
          kvlistValue: {
            values: [{ key: 'message', value: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'ok' } }] } } }],
          },
        },
      }),
    ]);
    const r = await post(body, { 'Content-Type': 'application/json' }, '?explain=true');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ log_records: 5, events_mapped: 1, log_records_ignored: 4 });
    const byIndex = r.body.explain.records.map((x: any) => [x.status, x.reason]);
    expect(byIndex[0]).toEqual(['ignored', expect.stringMatching(/not an event/)]);
    expect(byIndex[1]).toEqual(['ignored', expect.stringMatching(/not a GenAI event/)]);
    expect(byIndex[2]).toEqual(['ignored', expect.stringMatching(/cannot be joined to a span.*trace_id/)]);
    expect(byIndex[3]).toEqual(['ignored', expect.stringMatching(/carries no message content/)]);
    expect(byIndex[4]).toEqual(['mapped', expect.stringMatching(/joined to span 6{16}.*1 output/)]);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/traceloom_ingest_log_records_total\{outcome="ignored"[^}]*\} [4-9]/);
  });

  it('an empty request is a success; a protobuf request gets an empty ExportLogsServiceResponse', async () => {
    expect((await post({})).body).toEqual({ log_records: 0, events_mapped: 0, log_records_ignored: 0, scores_recorded: 0 });
    const res = await fetch(`${svc.url}/api/v1/logs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: new Uint8Array(0),
    });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it('refuses what is not a logs request, with a detail naming the problem', async () => {
    const notLogs = await post({ resourceSpans: [] });
    expect(notLogs.status).toBe(400);
    expect(notLogs.body.detail).toMatch(/ExportLogsServiceRequest/);
    expect((await post('{"resourceLogs": [', { 'Content-Type': 'application/json' })).body.detail).toMatch(/not valid JSON/);
    const badProto = await post(Buffer.from([0x0a, 0x05, 0x01]), { 'Content-Type': 'application/x-protobuf' });
    expect(badProto.status).toBe(400);
    expect(badProto.body.detail).toMatch(/not a valid OTLP ExportLogsServiceRequest/);
    expect((await post('x', { 'Content-Type': 'text/plain' })).status).toBe(415);
    expect((await post(zlib.gzipSync('{}'), { 'Content-Type': 'application/json', 'Content-Encoding': 'br' })).status).toBe(415);
    const gz = await post(zlib.gzipSync(JSON.stringify(doc([record({})]))), {
      'Content-Type': 'application/json',
      'Content-Encoding': 'gzip',
    });
    expect(gz.body).toMatchObject({ log_records: 1, log_records_ignored: 1 });
  });
});
