// OTLP/gRPC with the real exporters (@opentelemetry/exporter-trace-otlp-grpc and the gRPC logs
// exporter) against a service with authentication on, on a free port the test picked: the same
// mapping as OTLP/HTTP (an agent run becomes the same execution), the same auth (x-api-key; a
// missing or wrong credential is UNAUTHENTICATED, another project PERMISSION_DENIED), the same
// limits (a message over MAX_INFLATED_BYTES is RESOURCE_EXHAUSTED), bad bytes INVALID_ARGUMENT,
// metrics accepted and ignored; and the server stops with the service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metadata, credentials, makeGenericClientConstructor, status as Code, type ServiceError } from '@grpc/grpc-js';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import protobuf from 'protobufjs/minimal.js';
import { closedPort, dropTestDatabases } from '../helpers/env.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { agentRun } from '../helpers/otel.ts';
import { logging } from '../helpers/otel-signals.ts';
import { createApiKey } from '../../src/auth/api-key-repository.ts';
import { ensureProject } from '../../src/auth/project-repository.ts';

let svc: TestService;
let grpcPort: number;
let key: string;
let keyId: string;
beforeAll(async () => {
  grpcPort = await closedPort();
  svc = await startTestService({
    AUTH_REQUIRED: 'true',
    OTLP_GRPC_PORT: String(grpcPort),
    TRACE_DEBOUNCE_MS: '50',
    MAX_BODY_BYTES: '65536',
    MAX_INFLATED_BYTES: '65536',
  });
  for (const p of ['grpc-a', 'grpc-b']) await ensureProject(svc.stores.postgres, p);
  const created = await createApiKey(svc.stores.postgres, {
    projectId: 'grpc-a',
    name: 'agent',
    expiresInDays: 1,
    scope: 'ingest',
    role: 'member',
    createdBy: null,
  });
  key = created.key;
  keyId = created.row.key_id;
  await createApiKey(svc.stores.postgres, {
    projectId: 'grpc-b',
    name: 'reader',
    expiresInDays: 1,
    scope: 'full',
    role: 'member',
    createdBy: null,
  });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const target = () => `http://127.0.0.1:${grpcPort}`;

/** The real gRPC trace exporter with this metadata; `flush` rejects with the gRPC error when the export failed. */
function grpcTracing(meta: Record<string, string>, gzip = false) {
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(meta)) metadata.set(k, v);
  const otlp = new GrpcTraceExporter({ url: target(), metadata, compression: (gzip ? 'gzip' : 'none') as never });
  const failures: unknown[] = [];
  const checked: SpanExporter = {
    export: (spans, done) =>
      otlp.export(spans, (r) => {
        if (r.code !== 0) failures.push(r.error);
        done(r);
      }),
    shutdown: () => otlp.shutdown(),
    forceFlush: () => otlp.forceFlush(),
  };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'grpc-agent' }),
    spanProcessors: [new SimpleSpanProcessor(checked)],
  });
  return {
    tracer: provider.getTracer('grpc-test'),
    failures,
    async flush() {
      await provider.forceFlush();
      await otlp.forceFlush();
    },
    shutdown: () => provider.shutdown(),
  };
}

/** A raw unary call to one of the three Export methods, with our bytes: the error or the response bytes. */
function rawExport(service: string, body: Uint8Array, meta: Record<string, string>): Promise<{ err?: ServiceError; response?: Buffer }> {
  const Client = makeGenericClientConstructor(
    {
      Export: {
        path: `/opentelemetry.proto.collector.${service}/Export`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (b: Buffer) => b,
        requestDeserialize: (b: Buffer) => b,
        responseSerialize: (b: Buffer) => b,
        responseDeserialize: (b: Buffer) => b,
      },
    },
    service,
  );
  const client = new Client(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(meta)) metadata.set(k, v);
  return new Promise((resolve) => {
    (client as any).Export(Buffer.from(body), metadata, (err: ServiceError | null, response: Buffer) => {
      client.close();
      resolve(err ? { err } : { response });
    });
  });
}

/** ExportTraceServiceRequest with one span per id given (name padded to `nameBytes`). */
function traceRequest(spanIds: string[], nameBytes = 8): Uint8Array {
  const w = protobuf.Writer.create();
  w.uint32(0x0a).fork().uint32(0x12).fork(); // resource_spans, scope_spans
  for (const id of spanIds) {
    w.uint32(0x12)
      .fork()
      .uint32(0x0a)
      .bytes(Buffer.from('ab'.repeat(16), 'hex'))
      .uint32(0x12)
      .bytes(Buffer.from(id, 'hex'))
      .uint32(0x2a)
      .string('x'.repeat(nameBytes))
      .ldelim();
  }
  return w.ldelim().ldelim().finish();
}

describe('OTLP/gRPC', () => {
  it('an agent run through the real gRPC trace exporter (gzip) becomes the same execution as over HTTP', async () => {
    const t = grpcTracing({ 'x-api-key': key }, true);
    const run = agentRun(t.tracer, { model: 'gpt-4o-2024-08-06' });
    run.endRoot();
    await t.flush();
    await t.shutdown();
    expect(t.failures).toEqual([]);
    const e = await until(async () => {
      const x = await readExecution(run.traceId);
      return x?.span_count === 4 ? x : undefined;
    }, 'execution from gRPC spans');
    expect(e).toMatchObject({
      tokens_in: 250,
      tokens_out: 50,
      span_count: 4,
      agent_id: 'weather-agent',
      model: 'gpt-4o-2024-08-06',
      provider: 'openai',
      source: 'otlp',
      api_key_id: keyId, // the key that sent the spans, as over HTTP
    });
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/traceloom_grpc_requests_total\{method="TraceService\/Export",code="OK"[^}]*\} 4/);
  });

  it("the gRPC logs exporter's GenAI events join their span (its key sent as a bearer token)", async () => {
    const t = grpcTracing({ 'x-api-key': key });
    const span = t.tracer.startSpan('chat', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' } });
    // `authorization: Bearer tl_…` is the API key too (collectors that only speak bearer auth).
    const logs = logging(target(), { protocol: 'grpc', headers: { authorization: `Bearer ${key}` } });
    logs.event('gen_ai.user.message', { content: 'over gRPC?' }, span.spanContext());
    logs.event('gen_ai.choice', { index: 0, message: { content: 'yes' } }, span.spanContext());
    await logs.flush();
    await logs.shutdown();
    span.end();
    await t.flush();
    await t.shutdown();
    const e = await until(async () => {
      const x = await readExecution(span.spanContext().traceId);
      return x?.conversation_history?.length === 2 ? x : undefined;
    }, 'conversation from gRPC log events');
    expect(e.conversation_history).toEqual([
      { role: 'user', content: 'over gRPC?' },
      { role: 'assistant', content: 'yes' },
    ]);
    expect(e.api_key_id).toBe(keyId);
    // the log events record the key that sent them too
    const events = await svc.stores.clickhouse.query<{ api_key_id: string }>(
      'SELECT DISTINCT api_key_id FROM span_log_events WHERE project_id = {p:String} AND trace_id = {t:String}',
      { p: 'grpc-a', t: span.spanContext().traceId },
    );
    expect(events).toEqual([{ api_key_id: keyId }]);
  });

  it('same auth: no credential or a wrong one is UNAUTHENTICATED, another project PERMISSION_DENIED', async () => {
    for (const meta of [{}, { 'x-api-key': 'tl_wrong' }, { authorization: 'Bearer not-a-jwt' }] as Array<Record<string, string>>) {
      const t = grpcTracing(meta);
      t.tracer.startSpan('s').end();
      await t.flush().catch(() => undefined);
      await t.shutdown();
      expect((t.failures[0] as ServiceError | undefined)?.code, JSON.stringify(meta)).toBe(Code.UNAUTHENTICATED);
    }
    const denied = await rawExport('trace.v1.TraceService', traceRequest(['0102030405060708']), {
      'x-api-key': key,
      'x-project-id': 'grpc-b',
    });
    expect(denied.err?.code).toBe(Code.PERMISSION_DENIED);
    // The HTTP logs and metrics endpoints ask the same: 401 without a key, 403 for another project, 200 with the ingest key.
    for (const signal of ['logs', 'metrics']) {
      const post = (headers: Record<string, string>) =>
        fetch(`${svc.url}/api/v1/${signal}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: '{}' });
      expect((await post({})).status, signal).toBe(401);
      expect((await post({ 'X-API-Key': key, 'X-Project-Id': 'grpc-b' })).status, signal).toBe(403);
      expect((await post({ 'X-API-Key': key })).status, signal).toBe(200);
    }
  });

  it('same limits and validation: too large is RESOURCE_EXHAUSTED, bad bytes and id-less spans INVALID_ARGUMENT', async () => {
    const big = await rawExport('trace.v1.TraceService', traceRequest(['0102030405060708'], 70_000), { 'x-api-key': key });
    expect(big.err?.code).toBe(Code.RESOURCE_EXHAUSTED);
    const garbage = await rawExport('trace.v1.TraceService', Buffer.from([0x0a, 0x7f, 0x01]), { 'x-api-key': key });
    expect(garbage.err?.code).toBe(Code.INVALID_ARGUMENT);
    expect(garbage.err?.details).toMatch(/not a valid OTLP ExportTraceServiceRequest/);
    const noIds = await rawExport('trace.v1.TraceService', traceRequest(['0000000000000000']), { 'x-api-key': key });
    expect(noIds.err?.code).toBe(Code.INVALID_ARGUMENT);
    expect(noIds.err?.details).toMatch(/span_id/);
  });

  it('metrics over gRPC are accepted and ignored', async () => {
    // resource_metrics → scope_metrics → metric { name, sum { data_points ×2 } }
    const w = protobuf.Writer.create();
    w.uint32(0x0a).fork().uint32(0x12).fork().uint32(0x12).fork().uint32(0x0a).string('requests');
    w.uint32(0x3a).fork().uint32(0x0a).fork().ldelim().uint32(0x0a).fork().ldelim().ldelim();
    const r = await rawExport('metrics.v1.MetricsService', w.ldelim().ldelim().ldelim().finish(), { 'x-api-key': key });
    expect(r.err).toBeUndefined();
    expect(r.response?.length).toBe(0);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/traceloom_ingest_metric_points_ignored_total\{[^}]*\} 2/);
  });

  it('listens on the port it was given, and stops with the service', async () => {
    expect(svc.grpcPort).toBe(grpcPort);
    await svc.close();
    const after = await rawExport('trace.v1.TraceService', traceRequest(['0102030405060708']), { 'x-api-key': key });
    expect(after.err?.code).toBe(Code.UNAVAILABLE); // nothing listens any more
  });
});

/** The execution as stored (the API needs a member of grpc-a; the test reads through the domain). */
async function readExecution(traceId: string): Promise<any> {
  return svc.domain.executions.detail.get('grpc-a', traceId, true);
}
