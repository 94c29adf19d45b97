// The TypeScript SDK (sdk/js, its source run as is) against the real service: prompt cache hits
// make no request, a stale prompt is served while one refresh runs for 100 concurrent gets,
// compile agrees with the server's render on the shared fixtures, budget checks are cached,
// scores are written, spans stamped by the helper become template usages, and with the service
// stopped a get serves the cached version, then the fallback, then a clear error.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  Traceloom,
  TraceloomApiError,
  TraceloomCompileError,
  TraceloomPromptUnavailableError,
  type TraceloomOptions,
} from '../../sdk/js/src/index.ts';
import { PromptSpanProcessor, withPrompt } from '../../sdk/js/src/otel.ts';
import { mode } from '../helpers/env.ts';
import { getJson, serviceForFile } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import type { CompileCase } from '../prompts/chat.test.ts';

const fixtures = JSON.parse(fs.readFileSync(new URL('../fixtures/prompt-compile.json', import.meta.url), 'utf8')) as {
  cases: CompileCase[];
};
const svc = serviceForFile();
const api = (method: string, path: string, body?: unknown) =>
  getJson(`${svc().url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** A client whose requests are counted (the real fetch underneath) and whose clock the test moves. */
function client(options: TraceloomOptions = {}) {
  const requests: string[] = [];
  let nowMs = 1_000_000;
  const c = new Traceloom({
    baseUrl: svc().url,
    projectId: 'default',
    now: () => nowMs,
    fetch: (input, init) => {
      requests.push(String(input));
      return fetch(input, init);
    },
    ...options,
  });
  return { c, requests, advance: (ms: number) => (nowMs += ms) };
}

const servers: http.Server[] = [];
afterAll(() => servers.forEach((s) => s.close()));
/** A loopback server answering every request with `status` (or never, for null). */
async function answering(status: number | null): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    if (status !== null) res.writeHead(status, { 'Content-Type': 'application/json' }).end('{"detail":"down for maintenance"}');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

describe(`TypeScript SDK (${mode} mode)`, () => {
  it('configured from TRACELOOM_BASE_URL and TRACELOOM_API_KEY: the key names the project', async () => {
    const key = await api('POST', '/api-keys', { name: 'sdk', scope: 'full' });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    await api('POST', '/prompts', { prompt_id: 'env-check', type: 'text', template: 'from env' });
    process.env.TRACELOOM_BASE_URL = svc().url;
    process.env.TRACELOOM_API_KEY = key.body.key;
    try {
      const p = await new Traceloom().prompts.get('env-check');
      expect(p).toMatchObject({ name: 'env-check', version: 1, isFallback: false });
    } finally {
      delete process.env.TRACELOOM_BASE_URL;
      delete process.env.TRACELOOM_API_KEY;
    }
    expect(() => new Traceloom()).toThrow('baseUrl: pass it in the options or set TRACELOOM_BASE_URL');
    const bad = new Traceloom({ baseUrl: svc().url, apiKey: 'tl_wrong' });
    await expect(bad.prompts.get('env-check')).rejects.toBeInstanceOf(TraceloomApiError);
  });

  it('a cache hit makes no request; label and version are cached apart', async () => {
    await api('POST', '/prompts', { prompt_id: 'greet', type: 'text', template: 'Hello {{name}}', labels: ['production'] });
    const { c, requests } = client();
    const first = await c.prompts.get('greet');
    expect(first).toMatchObject({ name: 'greet', version: 1, type: 'text', template: 'Hello {{name}}', variables: ['name'] });
    expect(requests).toHaveLength(1);
    expect(await c.prompts.get('greet')).toBe(first);
    expect(requests).toHaveLength(1);
    expect((await c.prompts.get('greet', { label: 'production' })).version).toBe(1);
    expect((await c.prompts.get('greet', { version: 1 })).version).toBe(1);
    expect(requests).toHaveLength(3);
    await c.prompts.get('greet', { label: 'production' });
    expect(requests).toHaveLength(3);
    expect(first.compile({ name: 'Ann' })).toBe('Hello Ann');
    await expect(c.prompts.get('nope')).rejects.toMatchObject({ status: 404, kind: 'api' });
  });

  it('after the TTL, 100 concurrent gets are served the stale version at once while one request refreshes it', async () => {
    await api('POST', '/prompts', { prompt_id: 'stale', type: 'text', template: 'v1' });
    const { c, requests, advance } = client();
    const cold = await Promise.all(Array.from({ length: 100 }, () => c.prompts.get('stale', { cacheTtlSeconds: 30 })));
    expect(new Set(cold).size).toBe(1); // one request for the 100 cold gets too
    expect(requests).toHaveLength(1);
    expect((await api('POST', '/prompts/stale/versions', { template: 'v2' })).status).toBe(201);
    advance(31_000);
    const stale = await Promise.all(Array.from({ length: 100 }, () => c.prompts.get('stale', { cacheTtlSeconds: 30 })));
    expect(stale.every((p) => p.version === 1)).toBe(true);
    await c.prompts.settled();
    expect(requests).toHaveLength(2);
    const fresh = await c.prompts.get('stale', { cacheTtlSeconds: 30 });
    expect(fresh).toMatchObject({ version: 2, template: 'v2' });
    expect(requests).toHaveLength(2);
  });

  it('compile equals the server’s render on every shared fixture, errors included', async () => {
    const { c } = client();
    for (const [i, f] of fixtures.cases.entries()) {
      const id = `sdk-fixture-${i}`;
      expect((await api('POST', '/prompts', { prompt_id: id, type: f.type, template: f.template })).status).toBe(201);
      const server = await api('POST', `/prompts/${id}/render`, {
        inputs: f.inputs,
        ...(f.placeholders ? { placeholders: f.placeholders } : {}),
      });
      const prompt = await c.prompts.get(id);
      let local: unknown;
      try {
        local = { status: 200, body: prompt.compile(f.inputs, f.placeholders) };
      } catch (e) {
        expect(e, f.name).toBeInstanceOf(TraceloomCompileError);
        local = { status: (e as TraceloomCompileError).status, body: { detail: (e as TraceloomCompileError).detail } };
      }
      const expected = server.status === 200 ? { status: 200, body: server.body.text ?? server.body.messages } : server;
      expect(local, f.name).toEqual({ status: expected.status, body: expected.body });
    }
  });

  it('a chat prompt: placeholders and config come with it; compile fills the history', async () => {
    await api('POST', '/prompts', {
      prompt_id: 'support',
      type: 'chat',
      template: [
        { role: 'system', content: 'Help with {{product}}.' },
        { type: 'placeholder', name: 'history' },
      ],
      config: { model: 'gpt-4o', temperature: 0 },
    });
    const p = await client().c.prompts.get('support');
    expect(p).toMatchObject({
      type: 'chat',
      placeholders: ['history'],
      variables: ['product'],
      config: { model: 'gpt-4o', temperature: 0 },
    });
    expect(p.compile({ product: 'Loom' }, { history: [{ role: 'user', content: 'hi' }] })).toEqual([
      { role: 'system', content: 'Help with Loom.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(() => p.compile({ product: 'Loom' })).toThrow('Missing placeholders: history');
  });

  it('budget.check is cached briefly per question; scores.create writes scores', async () => {
    const { c, requests, advance } = client({ budgetCacheTtlSeconds: 5 });
    const a = await c.budget.check({ agentId: 'agent-1', tags: ['b', 'a'] });
    expect(a).toMatchObject({ allowed: true, status: 'ok' });
    await c.budget.check({ agentId: 'agent-1', tags: ['a', 'b'] });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toContain('/budget/check?agent_id=agent-1&tag=a&tag=b');
    await c.budget.check({ agentId: 'agent-2' });
    expect(requests).toHaveLength(2);
    advance(5_001);
    await c.budget.check({ agentId: 'agent-1', tags: ['a', 'b'] });
    expect(requests).toHaveLength(3);

    const one = await c.scores.create({ traceId: 'sdk-trace', name: 'helpfulness', value: 0.75, comment: 'ok' });
    expect(one).toMatchObject({ trace_id: 'sdk-trace', name: 'helpfulness', value: 0.75, source: 'api' });
    const many = await c.scores.create([
      { id: 'sdk-s1', traceId: 'sdk-trace', name: 'correct', value: true },
      { id: 'sdk-s2', traceId: 'sdk-trace', name: 'tone', value: 'polite' },
    ]);
    expect(many.map((s) => s.id)).toEqual(['sdk-s1', 'sdk-s2']);
    expect((await api('GET', '/scores?trace_id=sdk-trace')).body.items).toHaveLength(3);
  });

  it('spans stamped by the helper, exported over OTLP, become template usages on the execution', async () => {
    const c = client().c;
    const prompt = await c.prompts.get('support');
    const provider = new NodeTracerProvider({
      spanProcessors: [
        new PromptSpanProcessor(),
        new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${svc().url}/api/v1/traces`, timeoutMillis: 10_000 })),
      ],
    });
    provider.register();
    const tracer = provider.getTracer('sdk-test');
    const variables = { product: 'Loom' };
    const messages = prompt.compile(variables, { history: [{ role: 'user', content: 'Is it fast?' }] });
    const traceIds: string[] = [];
    withPrompt(prompt, variables, () => {
      const span = tracer.startSpan('chat gpt-4o', {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.usage.input_tokens': 12,
          'gen_ai.usage.output_tokens': 3,
          'gen_ai.input.messages': JSON.stringify(
            (messages as Array<{ role: string; content: string }>).map((m) => ({
              role: m.role,
              parts: [{ type: 'text', content: m.content }],
            })),
          ),
        },
      });
      traceIds.push(span.spanContext().traceId);
      const plain = tracer.startSpan('http get'); // no GenAI attribute: not stamped
      expect((plain as unknown as { attributes: Record<string, unknown> }).attributes['traceloom.prompt.id']).toBeUndefined();
      plain.end();
      span.end();
    });
    // The helper without the processor: attributes set on the span by hand.
    const manual = tracer.startSpan('chat manual', {
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', ...prompt.spanAttributes({ product: 'X' }) },
    });
    traceIds.push(manual.spanContext().traceId);
    manual.end();
    await provider.forceFlush();
    for (const [i, traceId] of traceIds.entries()) {
      const e = await until(async () => {
        const r = await api('GET', `/executions/${traceId}`);
        return r.status === 200 && r.body.template_usages?.length ? r.body : undefined;
      }, `execution ${traceId} with its template usage`);
      expect(e.template_usages).toEqual([
        expect.objectContaining({ prompt_id: 'support', version: 1, inputs: i === 0 ? variables : { product: 'X' } }),
      ]);
      if (i === 0) expect(e.template_usages[0]).toMatchObject({ message_index: 0, role: 'system' });
    }
    await provider.shutdown();
  });

  it('5xx and timeouts: retried with backoff, then the fallback; the whole get stays within timeoutMs', async () => {
    const failing = await answering(503);
    const { c } = client({ baseUrl: failing.url, retries: 2, backoffMs: 1, timeoutMs: 5_000 });
    const fb = await c.prompts.get('greet', { fallback: 'Hi {{name}}' });
    expect(fb).toMatchObject({ isFallback: true, version: null, type: 'text' });
    expect(fb.compile({ name: 'Bo' })).toBe('Hi Bo');
    expect(fb.spanAttributes({ name: 'Bo' })).toEqual({});
    expect(failing.hits()).toBe(3);
    const err = await c.prompts.get('greet').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TraceloomPromptUnavailableError);
    expect((err as Error).message).toBe(
      'prompt "greet" (latest) could not be served: no cached version, no fallback given, and GET /api/projects/default/prompts/greet/versions/latest failed after 3 attempt(s): HTTP 503: down for maintenance',
    );

    const silent = await answering(null);
    const slow = client({ baseUrl: silent.url, timeoutMs: 300, retries: 5, now: Date.now }).c;
    const timedOut = await slow.prompts.get('greet').catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(TraceloomPromptUnavailableError);
    // One deadline for the whole get: the first attempt uses it up, no retry is started after it.
    expect((timedOut as Error).message).toBe(
      'prompt "greet" (latest) could not be served: no cached version, no fallback given, and GET /api/projects/default/prompts/greet/versions/latest failed after 1 attempt(s) within 300 ms: no answer by the deadline',
    );
  });

  it('service stopped: the cached version (even stale), then the fallback, then an error that says which', async () => {
    const { c, requests, advance } = client({ retries: 1, backoffMs: 1 });
    const cached = await c.prompts.get('greet');
    await svc().close();
    advance(120_000); // past the TTL: a refresh is tried and fails, the cached copy is served
    expect(await c.prompts.get('greet')).toBe(cached);
    await c.prompts.settled();
    expect(await c.prompts.get('greet')).toBe(cached);
    const fb = await c.prompts.get('never-fetched', { fallback: [{ role: 'system', content: 'Be brief.' }] });
    expect(fb).toMatchObject({ isFallback: true, type: 'chat', name: 'never-fetched' });
    const err = await c.prompts.get('never-fetched').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TraceloomPromptUnavailableError);
    expect((err as Error).message).toMatch(
      /^prompt "never-fetched" \(latest\) could not be served: no cached version, no fallback given, and GET .* failed after 2 attempt\(s\): unreachable \(/,
    );
    expect(requests.length).toBeGreaterThan(1);
  });
});
