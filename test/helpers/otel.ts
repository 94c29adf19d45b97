// Real OpenTelemetry SDK and OTLP exporters (protobuf and JSON), pointed at the service on
// loopback: spans built with exact attributes, exported the way any Node application exports.
import { context, trace, SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';

export type Protocol = 'proto' | 'json';

export interface Exporting {
  tracer: Tracer;
  /** Exports every ended span; rejects when the server refused them. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function exporting(
  baseUrl: string,
  opts: { protocol: Protocol; gzip: boolean; headers?: Record<string, string>; service?: string },
): Exporting {
  const config = {
    url: `${baseUrl}/api/v1/traces`,
    headers: opts.headers ?? {},
    compression: (opts.gzip ? 'gzip' : 'none') as never,
    timeoutMillis: 10_000,
  };
  const exporter = opts.protocol === 'proto' ? new ProtoExporter(config) : new JsonExporter(config);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.service ?? 'weather-service' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return {
    tracer: provider.getTracer('traceloom-test', '1.0.0'),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

const ms = (base: number, offset: number) => new Date(base + offset);

function child(tracer: Tracer, parent: Span, name: string, kind: SpanKind, attributes: Attributes, start: Date): Span {
  return tracer.startSpan(name, { kind, attributes, startTime: start }, trace.setSpan(context.active(), parent));
}

const text = (role: string, content: string) => ({ role, parts: [{ type: 'text', content }] });

/**
 * An agent run in the current OpenTelemetry GenAI conventions: an `invoke_agent` root, a chat call
 * that asks for a tool, the tool's `execute_tool` span, and a second chat call that answers.
 * Usage: 100 + 20 tokens, then 150 + 30. Returns the trace id. `endRoot: false` leaves the root
 * open (it is ended by the returned `endRoot` function), to send it in a later request.
 */
export function agentRun(tracer: Tracer, opts: { base?: number; model?: string; failTool?: boolean } = {}) {
  const base = opts.base ?? Date.now() - 10_000;
  const model = opts.model ?? 'gpt-4o-2024-08-06';
  const root = tracer.startSpan('invoke_agent weather-agent', {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'weather-agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': 250,
      'gen_ai.usage.output_tokens': 50,
    },
    startTime: ms(base, 0),
  });
  const common = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.response.model': model,
  };
  const system = JSON.stringify([{ type: 'text', content: 'You answer weather questions.' }]);
  const user = text('user', 'Weather in Paris?');
  const call = {
    role: 'assistant',
    parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
    finish_reason: 'tool_call',
  };
  const llm1 = child(
    tracer,
    root,
    `chat ${model}`,
    SpanKind.CLIENT,
    {
      ...common,
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.system_instructions': system,
      'gen_ai.input.messages': JSON.stringify([user]),
      'gen_ai.output.messages': JSON.stringify([call]),
    },
    ms(base, 10),
  );
  llm1.end(ms(base, 1_010));
  const tool = child(
    tracer,
    root,
    'execute_tool get_weather',
    SpanKind.INTERNAL,
    {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'call_1',
    },
    ms(base, 1_020),
  );
  if (opts.failTool) tool.setStatus({ code: SpanStatusCode.ERROR, message: 'weather service down' });
  tool.end(ms(base, 1_270));
  const result = { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: '18°C, sunny' }] };
  const llm2 = child(
    tracer,
    root,
    `chat ${model}`,
    SpanKind.CLIENT,
    {
      ...common,
      'gen_ai.usage.input_tokens': 150,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.system_instructions': system,
      'gen_ai.input.messages': JSON.stringify([user, call, result]),
      'gen_ai.output.messages': JSON.stringify([{ ...text('assistant', 'It is 18°C and sunny in Paris.'), finish_reason: 'stop' }]),
    },
    ms(base, 1_280),
  );
  llm2.end(ms(base, 2_280));
  const traceId = root.spanContext().traceId;
  return { traceId, rootSpanId: root.spanContext().spanId, endRoot: () => root.end(ms(base, 2_300)) };
}
