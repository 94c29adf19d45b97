// Decoding cost of POST /api/v1/traces, without HTTP or storage: a realistic 512-span export
// (the BatchSpanProcessor's default batch) built by the real OpenTelemetry serializers, decoded
// as protobuf and as OTLP/JSON, plus the cost of inflating it from gzip.
// Run: npx tsx -e "import('./bench/otlp-decode.ts').then((m) => m.benchOtlpDecode())"
import zlib from 'node:zlib';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { decodeJsonTraces } from '../src/ingest/otlp/decode-json.ts';
import { decodeProtobufTraces } from '../src/ingest/otlp/decode-protobuf.ts';
import { inflateBody } from '../src/ingest/otlp/inflate.ts';
import { mapSpan } from '../src/ingest/mapping/index.ts';
import { spanRow } from '../src/executions/span-rows.ts';

const SPANS = 512;
const SECONDS_PER_CASE = 3;

/** Traces of 1 agent span, `llm` LLM calls and `tools` tool calls; LLM spans carry ~1 KB of input messages. Default: 64 traces × 8 spans. */
export function buildSpans(count = SPANS, llmCalls = 4, toolCalls = 3): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': 'support-agent',
      'service.version': '2.3.1',
      'deployment.environment.name': 'production',
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.version': '2.12.1',
      'host.name': 'ip-10-0-3-17',
    }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('@traceloom/bench', '1.0.0');
  const question =
    'My order #48213 arrived damaged, the box was crushed and two of the glasses are broken. Can I get a replacement shipped before Friday? ';
  const messages = JSON.stringify([
    {
      role: 'system',
      parts: [
        {
          type: 'text',
          content:
            'You are a helpful support agent for an online kitchenware shop. Be concise, confirm order numbers, and never promise refunds above 200 USD without escalation.',
        },
      ],
    },
    { role: 'user', parts: [{ type: 'text', content: question.repeat(4) }] },
    { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'lookup_order', arguments: { order_id: '48213' } }] },
    { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: { status: 'delivered', items: 6, carrier: 'UPS' } }] },
  ]);
  const output = JSON.stringify([
    {
      role: 'assistant',
      parts: [
        {
          type: 'text',
          content: 'I am sorry about that. I have arranged a replacement for the two glasses; it ships tomorrow by express.',
        },
      ],
      finish_reason: 'stop',
    },
  ]);
  let t = 1_768_000_000;
  while (exporter.getFinishedSpans().length < count) {
    const agent = tracer.startSpan('invoke_agent support', {
      kind: SpanKind.INTERNAL,
      startTime: [t, 0],
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support', 'session.id': `s-${t}` },
    });
    const ctx = trace.setSpan(ROOT_CONTEXT, agent);
    for (let i = 0; i < llmCalls; i++) {
      const llm = tracer.startSpan(
        'chat gpt-4o',
        {
          kind: SpanKind.CLIENT,
          startTime: [t, 1_000_000 + i * 100_000_000],
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': 'openai',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.response.model': 'gpt-4o-2024-08-06',
            'gen_ai.request.temperature': 0.2,
            'gen_ai.request.max_tokens': 1024,
            'gen_ai.usage.input_tokens': 812 + i,
            'gen_ai.usage.output_tokens': 64,
            'gen_ai.response.finish_reasons': ['stop'],
            'gen_ai.response.id': `chatcmpl-${t}-${i}`,
            'gen_ai.input.messages': messages,
            'gen_ai.output.messages': output,
            'traceloom.prompt.id': 'support-triage',
            'traceloom.prompt.version': '7',
          },
        },
        ctx,
      );
      llm.addEvent('gen_ai.content.completion', { 'gen_ai.event.index': 0 }, [t, 90_000_000 + i * 100_000_000]);
      llm.end([t, 95_000_000 + i * 100_000_000]);
    }
    for (let i = 0; i < toolCalls; i++) {
      const tool = tracer.startSpan(
        'execute_tool lookup_order',
        {
          kind: SpanKind.INTERNAL,
          startTime: [t, 500_000_000 + i * 1000],
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'lookup_order',
            'gen_ai.tool.call.id': `call_${i}`,
            'gen_ai.tool.call.arguments': '{"order_id":"48213"}',
          },
        },
        ctx,
      );
      if (i === 2) tool.setStatus({ code: SpanStatusCode.ERROR, message: 'timeout' });
      tool.end([t, 600_000_000 + i * 1000]);
    }
    agent.end([t + 1, 0]);
    t += 2;
  }
  return exporter.getFinishedSpans().slice(0, count);
}

/** Runs fn repeatedly for about `seconds` after a warm-up; returns mean milliseconds per call. */
async function measure(fn: () => unknown, seconds = SECONDS_PER_CASE): Promise<number> {
  for (let i = 0; i < 20; i++) await fn();
  let n = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  while (performance.now() < until) {
    await fn();
    n++;
  }
  return (performance.now() - t0) / n;
}

export async function benchOtlpDecode(): Promise<void> {
  const spans = buildSpans();
  const proto = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
  const jsonText = Buffer.from(JsonTraceSerializer.serializeRequest(spans)!);
  const jsonDoc = JSON.parse(jsonText.toString('utf8')) as unknown;
  const protoGz = zlib.gzipSync(proto);
  const jsonGz = zlib.gzipSync(jsonText);
  const check = decodeProtobufTraces(proto);
  if (check.spans.length !== SPANS || decodeJsonTraces(jsonDoc).spans.length !== SPANS) throw new Error('bench payload did not decode');

  const MiB = 1024 * 1024;
  const rows: Array<[string, number, number]> = [];
  const row = async (what: string, bytes: number, fn: () => unknown) => rows.push([what, bytes, await measure(fn)]);
  await row('protobuf decode', proto.length, () => decodeProtobufTraces(proto));
  await row('OTLP/JSON: JSON.parse + decode', jsonText.length, () => decodeJsonTraces(JSON.parse(jsonText.toString('utf8'))));
  await row('OTLP/JSON: decode only (already parsed)', jsonText.length, () => decodeJsonTraces(jsonDoc));
  await row('gzip inflate, protobuf body', protoGz.length, () => inflateBody(protoGz, 'gzip', 64 * MiB));
  await row('gzip inflate + protobuf decode', protoGz.length, async () =>
    decodeProtobufTraces(await inflateBody(protoGz, 'gzip', 64 * MiB)),
  );
  await row('gzip inflate, JSON body', jsonGz.length, () => inflateBody(jsonGz, 'gzip', 64 * MiB));
  // What ingest does per span after decoding: map the conventions, build the row, and the
  // JSONEachRow text the writer hands to the engine.
  const decoded = check.spans;
  await row('mapSpan (conventions) for every span', proto.length, () => decoded.map((s) => mapSpan(s)));
  await row('mapSpan + spans row + JSONEachRow text', proto.length, () =>
    decoded.map((s) => JSON.stringify(spanRow('p', s, mapSpan(s), '2026-11-22 00:00:00.000', '{}'))).join('\n'),
  );

  console.log(
    `\n## OTLP decoding (${SPANS} spans per request, ~1 KB gen_ai.input.messages per LLM span; protobuf ${(proto.length / 1024).toFixed(0)} KiB, JSON ${(jsonText.length / 1024).toFixed(0)} KiB, gzip ${(protoGz.length / 1024).toFixed(0)} / ${(jsonGz.length / 1024).toFixed(0)} KiB; one core)`,
  );
  console.log('| what | body (KiB) | ms per request | spans per second | MiB/s of body |');
  console.log('|---|---|---|---|---|');
  for (const [what, bytes, ms] of rows) {
    console.log(
      `| ${what} | ${(bytes / 1024).toFixed(0)} | ${ms.toFixed(2)} | ${Math.round((SPANS * 1000) / ms).toLocaleString('en-US')} | ${(bytes / MiB / (ms / 1000)).toFixed(0)} |`,
    );
  }
}
