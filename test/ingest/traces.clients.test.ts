// OTLP ingest end to end with real LLM clients, no network: the Vercel AI SDK (`ai@6`, a mock
// model) and `openai@6` instrumented by OpenInference (against a fake OpenAI server on loopback)
// each run an agent with two LLM calls and a tool call; their spans go through the real OTLP
// exporters (protobuf and JSON, gzip on and off) to the service. The execution (usage counted
// once, model, provider, agent, span count, exact cost), its hierarchy and its timeline come out
// right. A second, in-memory exporter on the same provider records what the client emitted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import OpenAI from 'openai';
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { cataloguePrice } from '../../src/pricing/catalogue.ts';
import { computeCost } from '../../src/pricing/cost.ts';
import { fromScaled, NANOS } from '../../src/decimal.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { installContextManager, startFakeOpenAI } from '../helpers/fake-openai.ts';

type Protocol = 'proto' | 'json';

let svc: TestService;
let uninstallContext: (() => void) | undefined;
const P = 'default';
beforeAll(async () => {
  uninstallContext = installContextManager();
  svc = await startTestService({ TRACE_DEBOUNCE_MS: '50' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
  uninstallContext?.();
});

const api = (traceId: string, rest = '') => `${svc.url}/api/projects/${P}/executions/${traceId}${rest}`;

/**
 * The execution once it exists and holds `spans` spans (each span is its own export request, so
 * the root may be assembled before the last child arrives). If the count never gets there the
 * last execution seen is returned, for the assertions to show what is wrong.
 */
async function settledExecution(traceId: string, spans: number): Promise<any> {
  let last: any;
  const end = Date.now() + 8_000;
  return until(async () => {
    const r = await getJson(api(traceId));
    if (r.status === 200) last = r.body;
    if (last && (last.span_count >= spans || Date.now() > end)) return last;
    return undefined;
  }, `execution ${traceId}`);
}

function expectedCost(model: string, calls: Array<[number, number]>, at: Date): string {
  const price = cataloguePrice('openai', model, at, 0)!;
  expect(price, `catalogue price of ${model}`).toBeDefined();
  const nanos = calls.reduce(
    (n, [i, o]) => n + computeCost({ tokensIn: i, tokensOut: o, cachedIn: 0, cacheWriteIn: 0 }, price).costNanos,
    0n,
  );
  return fromScaled(nanos, NANOS);
}

const hrMs = ([s, ns]: [number, number]) => s * 1_000 + ns / 1e6;

/**
 * An exporter error as text: OTLPExporterError carries the HTTP status in `code` and the body in
 * `data`; forceFlush rejects with an array of them.
 */
function describeError(err: unknown): string {
  if (Array.isArray(err)) return err.map(describeError).join('; ');
  if (err && typeof err === 'object') {
    const e = err as { name?: string; message?: string; code?: unknown; data?: unknown; error?: unknown };
    if (e.error !== undefined && e.message === undefined) return describeError(e.error);
    const parts = [
      e.message || e.name || 'error',
      e.code !== undefined ? `status ${String(e.code)}` : '',
      e.data ? `body ${String(e.data).slice(0, 300)}` : '',
    ];
    return parts.filter(Boolean).join(', ');
  }
  return String(err);
}

/**
 * A tracer provider the way an application builds one: the OTLP exporter to the service, plus an
 * in-memory exporter that keeps what was emitted. Export failures (a non-2xx answer) are recorded:
 * SimpleSpanProcessor hands an export that already failed to the global error handler, not to
 * forceFlush, so `flush` checks both.
 */
function clientProvider(opts: { protocol: Protocol; gzip: boolean; service: string }) {
  const config = {
    url: `${svc.url}/api/v1/traces`,
    headers: {},
    compression: (opts.gzip ? 'gzip' : 'none') as never,
    timeoutMillis: 10_000,
  };
  const otlp: SpanExporter = opts.protocol === 'proto' ? new ProtoExporter(config) : new JsonExporter(config);
  const failures: string[] = [];
  const checked: SpanExporter = {
    export: (spans, done) =>
      otlp.export(spans, (result) => {
        if (result.code !== 0) failures.push(result.error ? describeError(result.error) : `export of ${spans.length} span(s) failed`);
        done(result);
      }),
    shutdown: () => otlp.shutdown(),
    forceFlush: () => otlp.forceFlush?.() ?? Promise.resolve(),
  };
  const memory = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.service }),
    spanProcessors: [new SimpleSpanProcessor(checked), new SimpleSpanProcessor(memory)],
  });
  let kept: ReadableSpan[] = [];
  return {
    provider,
    /** Every span the client ended, in end order (kept across shutdown, which empties the memory). */
    emitted: (): ReadableSpan[] => [...kept, ...memory.getFinishedSpans()],
    async flush(): Promise<void> {
      try {
        await provider.forceFlush();
      } catch (err) {
        throw new Error(`OTLP export to the service failed: ${describeError(err)}`);
      }
      if (failures.length) throw new Error(`OTLP export to the service failed: ${failures.join('; ')}`);
    },
    async shutdown(): Promise<void> {
      kept = [...kept, ...memory.getFinishedSpans()];
      memory.reset();
      await provider.shutdown();
    },
  };
}

/** The spans one client run emitted: all of one trace, the root last. */
function oneTrace(spans: ReadableSpan[]) {
  const traceIds = new Set(spans.map((s) => s.spanContext().traceId));
  expect(traceIds.size, 'the client emitted one trace (context propagated)').toBe(1);
  const roots = spans.filter((s) => !s.parentSpanContext);
  expect(roots).toHaveLength(1);
  return { traceId: [...traceIds][0]!, root: roots[0]!, ids: new Set(spans.map((s) => s.spanContext().spanId)) };
}

const flatten = (nodes: any[]): any[] => nodes.flatMap((n) => [n, ...flatten(n.children ?? [])]);

/** Timeline checks common to both clients; returns the compact tool event. */
async function checkTimeline(
  traceId: string,
  ids: Set<string>,
  expected: { callId: string; result: string; answerSpanId: string; toolDurationMs: number },
) {
  const t = await getJson(api(traceId, '/timeline'));
  expect(t.status).toBe(200);
  expect(t.body.trace_id).toBe(traceId);
  const events: any[] = t.body.events;
  expect(events.map((ev) => [ev.type, ev.role ?? ev.name, ev.content ?? ev.arguments ?? null])).toEqual([
    ['message', 'system', 'You answer weather questions.'],
    ['message', 'user', 'Weather in Paris?'],
    ['tool_call', 'get_weather', { city: 'Paris' }],
    ['tool_result', 'get_weather', expected.result],
    ['message', 'assistant', 'It is 18°C and sunny in Paris.'],
  ]);
  expect(events[2]).toMatchObject({ call_id: expected.callId });
  expect(events[3]).toMatchObject({ call_id: expected.callId, is_error: false });
  expect(events.map((ev) => ev.index)).toEqual(events.map((_, i) => i));
  for (const ev of events) {
    expect(typeof ev.timestamp, `timestamp of event ${ev.index}`).toBe('string');
    expect(ids.has(ev.span_id), `span_id ${ev.span_id} of event ${ev.index} is one of the trace's spans`).toBe(true);
  }
  expect(events[4].span_id, 'the final answer comes from the second LLM call').toBe(expected.answerSpanId);
  const messages = events.filter((ev) => ev.type === 'message').map((ev) => `${ev.role}: ${ev.content}`);
  expect(new Set(messages).size, 'no message repeated').toBe(messages.length);

  const c = await getJson(api(traceId, '/timeline?compact_tools=true'));
  expect(c.status).toBe(200);
  expect(c.body.events.map((ev: any) => ev.type)).toEqual(['message', 'message', 'tool', 'message']);
  expect(c.body.events.map((ev: any) => ev.index)).toEqual([0, 1, 2, 3]);
  const tools = c.body.events.filter((ev: any) => ev.type === 'tool');
  expect(tools).toEqual([
    expect.objectContaining({
      call_id: expected.callId,
      name: 'get_weather',
      arguments: { city: 'Paris' },
      result: expected.result,
      is_error: false,
    }),
  ]);
  expect(typeof tools[0].duration_ms, 'tool duration known from the tool span').toBe('number');
  expect(Math.abs(tools[0].duration_ms - expected.toolDurationMs)).toBeLessThanOrEqual(1);
  expect(c.body.events[3]).toMatchObject({ role: 'assistant', content: 'It is 18°C and sunny in Paris.', span_id: expected.answerSpanId });
}

const modelUsage = (inputTokens: number, outputTokens: number) => ({
  inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
});

describe(`Vercel AI SDK (ai@6, mock model) through the OTLP exporters (${mode} mode)`, () => {
  const cases: Array<[Protocol, boolean]> = [
    ['proto', false],
    ['proto', true],
    ['json', false],
    ['json', true],
  ];
  it.each(cases)(
    '%s exporter, gzip %s: generateText with a tool → one execution, usage counted once, hierarchy, timeline',
    async (protocol, gzip) => {
      const client = clientProvider({ protocol, gzip, service: 'weather-app' });
      const tracer = client.provider.getTracer('weather-app', '1.0.0');
      const model = new MockLanguageModelV3({
        provider: 'openai.chat',
        modelId: 'gpt-4o-mini',
        doGenerate: [
          {
            content: [{ type: 'tool-call', toolCallId: 'call_w1', toolName: 'get_weather', input: JSON.stringify({ city: 'Paris' }) }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage: modelUsage(100, 20),
            warnings: [],
          },
          {
            content: [{ type: 'text', text: 'It is 18°C and sunny in Paris.' }],
            finishReason: { unified: 'stop', raw: 'stop' },
            usage: modelUsage(150, 30),
            warnings: [],
          },
        ],
      });
      let result;
      try {
        result = await generateText({
          model,
          system: 'You answer weather questions.',
          prompt: 'Weather in Paris?',
          tools: {
            get_weather: tool({
              description: 'Current weather in a city',
              inputSchema: jsonSchema<{ city: string }>({
                type: 'object',
                properties: { city: { type: 'string' } },
                required: ['city'],
                additionalProperties: false,
              }),
              execute: async ({ city }) => {
                await new Promise((r) => setTimeout(r, 20));
                return `18°C, sunny in ${city}`;
              },
            }),
          },
          stopWhen: stepCountIs(3),
          experimental_telemetry: { isEnabled: true, functionId: 'weather-agent', tracer },
        });
        await client.flush();
      } finally {
        await client.shutdown();
      }
      expect(result.text).toBe('It is 18°C and sunny in Paris.');
      expect(result.steps).toHaveLength(2);

      const spans = client.emitted();
      const { traceId, root, ids } = oneTrace(spans);
      expect(root.name).toBe('ai.generateText');
      const byName = (n: string) => spans.filter((s) => s.name === n).sort((a, b) => hrMs(a.startTime) - hrMs(b.startTime));
      const [gen1, gen2] = byName('ai.generateText.doGenerate');
      const [toolSpan] = byName('ai.toolCall');
      expect([gen1, gen2, toolSpan].every(Boolean), 'two doGenerate spans and one ai.toolCall span emitted').toBe(true);

      const e = await settledExecution(traceId, spans.length);
      expect(e).toMatchObject({
        trace_id: traceId,
        source: 'otlp',
        status: 'ok',
        provider: 'openai', // `ai.model.provider` 'openai.chat' (also sent as gen_ai.system): the prefix
        model: 'gpt-4o-mini',
        agent_id: 'weather-agent', // ai.telemetry.functionId
        tokens_in: 250, // 100 + 150: the outer ai.generateText span repeats the totals, not counted again
        tokens_out: 50,
        span_count: spans.length,
        cost_source: 'computed',
      });
      expect(e.cost_usd).toBeGreaterThan(0);
      expect(e.cost_usd).toBe(
        Number(
          expectedCost(
            'gpt-4o-mini',
            [
              [100, 20],
              [150, 30],
            ],
            new Date(e.started_at),
          ),
        ),
      );
      // From the root's start to the latest end of the trace's spans (docs/traces.md): on a loaded
      // machine a span may end a few ms after the root does.
      const lastEnd = Math.max(...spans.map((s) => hrMs(s.endTime)));
      expect(Math.abs(e.latency_ms - (lastEnd - hrMs(root.startTime)))).toBeLessThanOrEqual(1);

      const h = await getJson(api(traceId, '/hierarchy'));
      expect(h.status).toBe(200);
      expect(h.body.spans).toHaveLength(1);
      const top = h.body.spans[0];
      expect(top).toMatchObject({
        span_id: root.spanContext().spanId,
        name: 'ai.generateText',
        parent_span_id: null,
        span_class: 'agent',
        usage_counted: false,
      });
      expect(top.children.map((c: any) => [c.span_id, c.name, c.span_class, c.usage_counted])).toEqual([
        [gen1!.spanContext().spanId, 'ai.generateText.doGenerate', 'inference', true],
        [toolSpan!.spanContext().spanId, 'ai.toolCall', 'tool', false],
        [gen2!.spanContext().spanId, 'ai.generateText.doGenerate', 'inference', true],
      ]);
      expect(top.children[0]).toMatchObject({ tokens_in: 100, tokens_out: 20, model: 'gpt-4o-mini', provider: 'openai' });
      expect(top.children[2]).toMatchObject({ tokens_in: 150, tokens_out: 30 });
      const all = flatten(h.body.spans);
      expect(all).toHaveLength(spans.length);
      expect(all.filter((n) => n.orphan)).toEqual([]);
      expect(all.filter((n) => n.usage_counted).map((n) => n.span_id)).toEqual([gen1!.spanContext().spanId, gen2!.spanContext().spanId]);

      await checkTimeline(traceId, ids, {
        callId: 'call_w1',
        result: '18°C, sunny in Paris',
        answerSpanId: gen2!.spanContext().spanId,
        toolDurationMs: top.children[1].duration_ms,
      });
    },
    20_000,
  );
});

describe(`openai@6 with OpenInference instrumentation, fake OpenAI server (${mode} mode)`, () => {
  const served = 'gpt-4o-mini-2024-07-18'; // what the server reports; the request asks for gpt-4o-mini
  const cases: Array<[Protocol, boolean]> = [
    ['proto', true],
    ['json', false],
  ];
  it.each(cases)(
    '%s exporter, gzip %s: an agent span, two chat completions and a tool span → one execution, hierarchy, timeline',
    async (protocol, gzip) => {
      const client = clientProvider({ protocol, gzip, service: 'weather-app' });
      const tracer = client.provider.getTracer('weather-app', '1.0.0');
      const instrumentation = new OpenAIInstrumentation({ tracerProvider: client.provider });
      const fake = await startFakeOpenAI([
        {
          model: served,
          toolCalls: [{ id: 'call_oi1', name: 'get_weather', arguments: { city: 'Paris' } }],
          usage: { prompt_tokens: 100, completion_tokens: 20 },
        },
        { model: served, content: 'It is 18°C and sunny in Paris.', usage: { prompt_tokens: 150, completion_tokens: 30 } },
      ]);
      let answer: string | null | undefined;
      try {
        instrumentation.manuallyInstrument(OpenAI); // the ESM default export; its static `OpenAI` is the class patched
        const openai = new OpenAI({ apiKey: 'sk-test', baseURL: fake.baseURL, maxRetries: 0 });
        const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Current weather in a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ];
        const agent = tracer.startSpan('weather-agent', {
          attributes: { 'openinference.span.kind': 'AGENT', 'agent.name': 'weather-agent', 'input.value': 'Weather in Paris?' },
        });
        answer = await context.with(trace.setSpan(context.active(), agent), async () => {
          const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
            { role: 'system', content: 'You answer weather questions.' },
            { role: 'user', content: 'Weather in Paris?' },
          ];
          const first = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
          const ask = first.choices[0]!.message;
          messages.push(ask);
          for (const call of ask.tool_calls ?? []) {
            if (call.type !== 'function') continue;
            const span = tracer.startSpan(call.function.name, {
              attributes: {
                'openinference.span.kind': 'TOOL',
                'tool.name': call.function.name,
                'tool.id': call.id,
                'input.value': call.function.arguments,
                'input.mime_type': 'application/json',
              },
            });
            await new Promise((r) => setTimeout(r, 20));
            const { city } = JSON.parse(call.function.arguments) as { city: string };
            const output = city === 'Paris' ? '18°C, sunny' : 'unknown';
            span.setAttributes({ 'output.value': output, 'output.mime_type': 'text/plain' });
            span.end();
            messages.push({ role: 'tool', tool_call_id: call.id, content: output });
          }
          const second = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
          return second.choices[0]!.message.content;
        });
        agent.setAttribute('output.value', answer ?? '');
        agent.end();
        await client.flush();
      } finally {
        instrumentation.disable();
        await client.shutdown();
        await fake.close();
      }
      expect(answer).toBe('It is 18°C and sunny in Paris.');
      expect(fake.requests).toHaveLength(2);
      expect(fake.requests[1].messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_oi1', content: '18°C, sunny' });

      const spans = client.emitted();
      expect(spans).toHaveLength(4);
      const { traceId, root, ids } = oneTrace(spans);
      expect(root.name).toBe('weather-agent');
      const llm = spans.filter((s) => s.name === 'OpenAI Chat Completions').sort((a, b) => hrMs(a.startTime) - hrMs(b.startTime));
      expect(llm, 'two OpenInference LLM spans').toHaveLength(2);
      expect(llm.every((s) => s.parentSpanContext?.spanId === root.spanContext().spanId)).toBe(true);
      const toolSpan = spans.find((s) => s.name === 'get_weather')!;

      const e = await settledExecution(traceId, spans.length);
      expect(e).toMatchObject({
        trace_id: traceId,
        source: 'otlp',
        status: 'ok',
        provider: 'openai', // llm.system; llm.provider is omitted for a 127.0.0.1 base URL
        model: served, // llm.model_name, overwritten with the response's model
        agent_id: 'weather-agent', // agent.name on the AGENT span
        tokens_in: 250,
        tokens_out: 50,
        span_count: 4,
        cost_source: 'computed',
      });
      expect(e.cost_usd).toBeGreaterThan(0);
      expect(e.cost_usd).toBe(
        Number(
          expectedCost(
            served,
            [
              [100, 20],
              [150, 30],
            ],
            new Date(e.started_at),
          ),
        ),
      );

      const h = await getJson(api(traceId, '/hierarchy'));
      expect(h.status).toBe(200);
      expect(h.body.spans).toHaveLength(1);
      const top = h.body.spans[0];
      expect(top).toMatchObject({
        span_id: root.spanContext().spanId,
        name: 'weather-agent',
        parent_span_id: null,
        span_class: 'agent',
        usage_counted: false,
      });
      expect(top.children.map((c: any) => [c.span_id, c.name, c.span_class, c.usage_counted])).toEqual([
        [llm[0]!.spanContext().spanId, 'OpenAI Chat Completions', 'inference', true],
        [toolSpan.spanContext().spanId, 'get_weather', 'tool', false],
        [llm[1]!.spanContext().spanId, 'OpenAI Chat Completions', 'inference', true],
      ]);
      expect(top.children[0]).toMatchObject({ tokens_in: 100, tokens_out: 20, model: served, provider: 'openai' });
      expect(top.children[2]).toMatchObject({ tokens_in: 150, tokens_out: 30 });
      expect(flatten(h.body.spans).filter((n) => n.orphan)).toEqual([]);

      await checkTimeline(traceId, ids, {
        callId: 'call_oi1',
        result: '18°C, sunny',
        answerSpanId: llm[1]!.spanContext().spanId,
        toolDurationMs: top.children[1].duration_ms,
      });
    },
    20_000,
  );
});
