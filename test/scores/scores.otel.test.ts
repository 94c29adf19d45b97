// Scores from OpenTelemetry (docs/scores.md): the GenAI conventions' evaluation event
// (gen_ai.evaluation.result) sent by the real SDKs and exporters — as a span event over OTLP/HTTP
// and OTLP/gRPC, as a log record over OTLP/HTTP and OTLP/gRPC, and as a log record without span
// context joined through gen_ai.response.id — becomes one score (source otel) on that span's
// execution; an export sent again writes nothing new; explain shows the mapping.
import { Metadata } from '@grpc/grpc-js';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { exporting } from '../helpers/otel.ts';
import { logging } from '../helpers/otel-signals.ts';
import { until } from '../helpers/wait.ts';

let svc: TestService;
let grpcPort: number;
beforeAll(async () => {
  grpcPort = await closedPort();
  svc = await startTestService({ OTLP_GRPC_PORT: String(grpcPort) });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const scoresOf = async (traceId: string) =>
  (await getJson(`${svc.url}/api/projects/default/scores?trace_id=${traceId}`)).body.items as Array<Record<string, unknown>>;

/** A chat call (root) with its response id; the evaluation event on it when `evaluate`. */
function chat(tracer: Tracer, responseId: string, evaluate?: Record<string, string | number>): { traceId: string; spanId: string } {
  const span = tracer.startSpan('chat gpt-4o', {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.provider.name': 'openai',
      'gen_ai.response.id': responseId,
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 5,
    },
  });
  if (evaluate) span.addEvent('gen_ai.evaluation.result', evaluate);
  span.end();
  return { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
}

describe(`scores from OpenTelemetry evaluation events (${mode} mode)`, () => {
  it('a span event over OTLP/HTTP: one score on that span; sent again, still one', async () => {
    const ex = exporting(svc.url, { protocol: 'proto', gzip: false });
    const { traceId, spanId } = chat(ex.tracer, 'resp-http-1', {
      'gen_ai.evaluation.name': 'relevance',
      'gen_ai.evaluation.score.value': 0.87,
      'gen_ai.evaluation.score.label': 'relevant',
      'gen_ai.evaluation.explanation': 'answers the question',
    });
    await ex.flush();
    await ex.shutdown();
    const [score, ...more] = await until(async () => {
      const s = await scoresOf(traceId);
      return s.length ? s : undefined;
    }, 'the score');
    expect(more).toEqual([]);
    expect(score).toMatchObject({
      trace_id: traceId,
      span_id: spanId,
      name: 'relevance',
      data_type: 'NUMERIC',
      value: 0.87,
      comment: 'answers the question',
      source: 'otel',
      author: 'otel',
    });
    expect(score!.id).toMatch(/^otel-[0-9a-f]{32}$/);
    // The execution shows it once assembled.
    const e = await until(async () => {
      const r = await getJson(`${svc.url}/api/projects/default/executions/${traceId}`);
      return r.status === 200 ? r.body : undefined;
    }, 'the execution');
    expect(e.scores.map((s: { name: string }) => s.name)).toEqual(['relevance']);
  });

  it('explain shows the evaluation; the same export twice is one score; a label alone is CATEGORICAL', async () => {
    const now = BigInt(Date.now()) * 1_000_000n;
    const body = JSON.stringify({
      spans: [
        {
          trace_id: 'e'.repeat(32),
          span_id: 'e'.repeat(16),
          span_name: 'chat',
          attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' },
          start_time_ns: String(now),
          end_time_ns: String(now + 1_000_000n),
          events: [
            {
              name: 'gen_ai.evaluation.result',
              time_ns: String(now),
              attributes: { 'gen_ai.evaluation.name': 'tone', 'gen_ai.evaluation.score.label': 'polite' },
            },
            { name: 'gen_ai.evaluation.result', time_ns: String(now), attributes: { 'gen_ai.evaluation.score.value': 1 } },
          ],
        },
      ],
    });
    for (let i = 0; i < 2; i++) {
      const r = await getJson(`${svc.url}/api/v1/traces?explain=true`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(r.status).toBe(200);
      expect(r.body.scores_recorded).toBe(1);
      expect(r.body.explain.spans[0].evaluations).toEqual([
        { name: 'tone', value: null, label: 'polite' },
        { ignored: 'gen_ai.evaluation.result without gen_ai.evaluation.name' },
      ]);
    }
    const scores = await scoresOf('e'.repeat(32));
    expect(scores).toHaveLength(1);
    expect(scores[0]).toMatchObject({ name: 'tone', data_type: 'CATEGORICAL', value: 'polite', source: 'otel' });
  });

  it('a span event over OTLP/gRPC', async () => {
    const otlp = new GrpcTraceExporter({ url: `http://127.0.0.1:${grpcPort}`, metadata: new Metadata() });
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'grpc-judge' }),
      spanProcessors: [new SimpleSpanProcessor(otlp)],
    });
    const { traceId } = chat(provider.getTracer('t'), 'resp-grpc-1', {
      'gen_ai.evaluation.name': 'faithful',
      'gen_ai.evaluation.score.value': 0,
    });
    await provider.forceFlush();
    await provider.shutdown();
    const scores = await until(async () => {
      const s = await scoresOf(traceId);
      return s.length ? s : undefined;
    }, 'the gRPC score');
    expect(scores).toEqual([expect.objectContaining({ name: 'faithful', value: 0, source: 'otel' })]);
  });

  for (const protocol of ['proto', 'grpc'] as const) {
    it(`a log record over OTLP/${protocol === 'grpc' ? 'gRPC' : 'HTTP'}: with span context, or joined by gen_ai.response.id`, async () => {
      const ex = exporting(svc.url, { protocol: 'proto', gzip: false });
      const responseId = `resp-log-${protocol}`;
      const judged = chat(ex.tracer, responseId);
      const other = chat(ex.tracer, `${responseId}-b`);
      await ex.flush();
      await ex.shutdown();
      await svc.domain.flush(); // the spans are stored: the response id can be found
      const logs = logging(protocol === 'grpc' ? `http://127.0.0.1:${grpcPort}` : svc.url, { protocol });
      logs.event(
        'gen_ai.evaluation.result',
        undefined,
        { traceId: other.traceId, spanId: other.spanId, traceFlags: 1 },
        { 'gen_ai.evaluation.name': 'correct', 'gen_ai.evaluation.score.value': 1, 'gen_ai.evaluation.score.label': 'pass' },
      );
      logs.event('gen_ai.evaluation.result', undefined, undefined, {
        'gen_ai.evaluation.name': 'correct',
        'gen_ai.evaluation.score.value': 0.25,
        'gen_ai.response.id': responseId,
      });
      await logs.flush();
      await logs.shutdown();
      expect(await scoresOf(other.traceId)).toEqual([
        expect.objectContaining({ span_id: other.spanId, name: 'correct', value: 1, source: 'otel' }),
      ]);
      expect(await scoresOf(judged.traceId)).toEqual([expect.objectContaining({ span_id: judged.spanId, name: 'correct', value: 0.25 })]);
    });
  }

  it('explain of a log record: joined, or why not', async () => {
    const body = {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                {
                  eventName: 'gen_ai.evaluation.result',
                  timeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
                  attributes: [
                    { key: 'gen_ai.evaluation.name', value: { stringValue: 'correct' } },
                    { key: 'gen_ai.evaluation.score.value', value: { doubleValue: 0.5 } },
                    { key: 'gen_ai.response.id', value: { stringValue: 'never-seen' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const r = await getJson(`${svc.url}/api/v1/logs?explain=true`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ log_records: 1, scores_recorded: 0, log_records_ignored: 1 });
    expect(r.body.explain.records[0]).toMatchObject({ status: 'ignored', event_name: 'gen_ai.evaluation.result' });
    expect(r.body.explain.records[0].reason).toMatch(/^no stored span carries gen_ai.response.id never-seen/);
  });
});
