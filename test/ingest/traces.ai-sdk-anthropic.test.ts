// Issue 31 with the real packages: `ai@6` and `@ai-sdk/anthropic@3` against a fake Anthropic
// Messages API on loopback (node:http; the one third party we cannot run here), exporting through
// the real OTLP protobuf exporter. Anthropic reports input without the cache (input_tokens 7 beside
// cache reads and writes); the AI SDK's own count already holds it (18,495): the execution must
// count the cache once, and price it at the cache rates. The same spans, posted again with
// ?explain=true, are classified and explained as the SDK's users expect.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { installContextManager } from '../helpers/fake-openai.ts';

let svc: TestService;
let uninstallContext: (() => void) | undefined;
beforeAll(async () => {
  uninstallContext = installContextManager();
  svc = await startTestService({ TRACE_DEBOUNCE_MS: '50' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
  uninstallContext?.();
});

interface Usage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  output_tokens: number;
}

/** A fake Anthropic Messages API: answers POST /v1/messages with the scripted messages, in order. */
async function fakeAnthropic(answers: Array<{ content: object[]; stop_reason: string; usage: Usage }>) {
  const requests: any[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push(JSON.parse(body));
      const a = answers[requests.length - 1];
      res.setHeader('content-type', 'application/json');
      if (!a || req.url !== '/v1/messages') {
        res.statusCode = 500;
        res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'unexpected request' } }));
        return;
      }
      res.end(
        JSON.stringify({
          id: `msg_${requests.length}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-20250514',
          stop_sequence: null,
          ...a,
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { baseURL: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const flat = (s: ReadableSpan, traceId: string) => ({
  trace_id: traceId,
  span_id: s.spanContext().spanId,
  parent_span_id: s.parentSpanContext?.spanId ?? '',
  span_name: s.name,
  span_kind: 'INTERNAL',
  attributes: s.attributes,
  start_time_ns: (BigInt(s.startTime[0]) * 1_000_000_000n + BigInt(s.startTime[1])).toString(),
  end_time_ns: (BigInt(s.endTime[0]) * 1_000_000_000n + BigInt(s.endTime[1])).toString(),
  status_code: 'OK',
});

describe(`ai@6 + @ai-sdk/anthropic, fake Anthropic API, OTLP protobuf (${mode} mode)`, () => {
  it('a two-step generateText with cache reads and writes: the cache counted once and priced at its rates', async () => {
    const fake = await fakeAnthropic([
      {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 7, cache_read_input_tokens: 16_399, cache_creation_input_tokens: 2_089, output_tokens: 445 },
      },
      {
        content: [{ type: 'text', text: 'It is 18°C and sunny in Paris.' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 30, cache_read_input_tokens: 18_488, cache_creation_input_tokens: 0, output_tokens: 12 },
      },
    ]);
    const memory = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({
      spanProcessors: [
        new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${svc.url}/api/v1/traces`, timeoutMillis: 10_000 })),
        new SimpleSpanProcessor(memory),
      ],
    });
    let spans: ReadableSpan[];
    try {
      const anthropic = createAnthropic({ baseURL: fake.baseURL, apiKey: 'sk-ant-test' });
      const result = await generateText({
        model: anthropic('claude-sonnet-4-20250514'),
        system: 'You answer weather questions.',
        prompt: 'Weather in Paris?',
        tools: {
          get_weather: tool({
            description: 'Current weather in a city',
            inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
            execute: async ({ city }) => `18°C, sunny in ${city}`,
          }),
        },
        stopWhen: stepCountIs(3),
        experimental_telemetry: { isEnabled: true, functionId: 'weather-agent', tracer: provider.getTracer('weather-app') },
      });
      expect(result.text).toBe('It is 18°C and sunny in Paris.');
      await provider.forceFlush();
      spans = memory.getFinishedSpans();
    } finally {
      await provider.shutdown();
      await fake.close();
    }
    expect(fake.requests).toHaveLength(2);
    const traceId = spans[0]!.spanContext().traceId;

    const e = await until(async () => {
      const r = await getJson(`${svc.url}/api/projects/default/executions/${traceId}`);
      return r.status === 200 && r.body.span_count === spans.length ? r.body : undefined;
    }, `execution ${traceId}`);
    expect(e).toMatchObject({
      provider: 'anthropic',
      model: 'claude-sonnet-4-20250514',
      agent_id: 'weather-agent',
      tokens_in: 37_013, // (7 + 16,399 + 2,089) + (30 + 18,488 + 0): each step's input already holds its cache
      tokens_cached_in: 34_887,
      tokens_cache_write_in: 2_089,
      tokens_out: 457,
      cost_source: 'computed',
    });
    // (7 + 30) × 3 + 34,887 × 0.3 + 2,089 × 3.75 + 457 × 15 = 111 + 10,466.1 + 7,833.75 + 6,855 = 25,265.85 per Mtok
    expect(e.cost_usd).toBe(0.02526585);

    // The same spans with ?explain=true (another trace id, so nothing above is touched).
    const again = 'ab'.repeat(16);
    const r = await getJson(`${svc.url}/api/v1/traces?explain=true`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ spans: spans.map((s) => flat(s, again)) }),
    });
    expect(r.status).toBe(200);
    const byName = (name: string) => r.body.explain.spans.filter((s: { name: string }) => s.name === name);
    expect(byName('ai.generateText').map((s: { class: string; usage: unknown }) => [s.class, s.usage])).toEqual([['agent', null]]);
    const steps = byName('ai.generateText.doGenerate');
    expect(steps.map((s: { usage: unknown }) => s.usage)).toEqual([
      { tokensIn: 18_495, tokensOut: 445, cachedIn: 16_399, cacheWriteIn: 2_089, reasoning: 0 },
      { tokensIn: 18_518, tokensOut: 12, cachedIn: 18_488, cacheWriteIn: 0, reasoning: 0 },
    ]);
    expect(steps[0].mapped['usage.conversion']).toBeUndefined();
    expect(steps.map((s: { messages: unknown }) => s.messages)).toEqual([
      { input: 2, output: 1 },
      { input: 4, output: 1 },
    ]);
    const [toolSpan] = byName('ai.toolCall');
    expect(toolSpan).toMatchObject({ class: 'tool', usage: null });
    // every ai.* / gen_ai.* key the SDK sent is mapped or listed as ignored
    for (const s of r.body.explain.spans) {
      const sources = Object.values(s.mapped as Record<string, string>).join(' ');
      const ignored = new Set((s.ignored as Array<{ key: string }>).map((i) => i.key));
      const sent = spans.find((x) => x.spanContext().spanId === s.span_id)!;
      for (const key of Object.keys(sent.attributes).filter((k) => k.startsWith('ai.') || k.startsWith('gen_ai.')))
        expect(ignored.has(key) || sources.includes(key), `${s.name}: ${key}`).toBe(true);
    }
  });
});
