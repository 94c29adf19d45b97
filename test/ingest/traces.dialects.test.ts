// Issue 31 end to end: every dialect fixture (test/fixtures/dialects/) posted with
// ?explain=true, the answer checked field by field, and each trace with a counted inference span
// checked in its stored execution: usage as mapped, cost equal to the hand computation (or the
// cost the span provided). A trace mixing an agent span with usage, a usage-only wrapper and
// their inference children stores the children's usage once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { DIALECT_FIXTURES, type DialectFixture } from '../fixtures/dialects/index.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ TRACE_DEBOUNCE_MS: '50' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

let seq = 0x3100;
const hex = (n: number) => (++seq).toString(16).padStart(n, '0');
const ns = (ms: number) => (BigInt(ms) * 1_000_000n).toString();

const executionOf = (traceId: string) =>
  until(async () => {
    const r = await getJson(`${svc.url}/api/projects/default/executions/${traceId}`);
    return r.status === 200 ? r.body : undefined;
  }, `execution ${traceId}`);

const post = (spans: object[]) =>
  getJson(`${svc.url}/api/v1/traces?explain=true`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ spans }),
  });

interface Sent {
  fixture: DialectFixture;
  traceId: string;
}

describe(`spans of every dialect, mapped and priced (${mode} mode)`, () => {
  const all = Object.entries(DIALECT_FIXTURES).flatMap(([dialect, list]) => list.map((f) => ({ dialect, f })));
  const sent: Sent[] = [];
  let explained: any[] = [];

  beforeAll(async () => {
    const base = Date.now() - 60_000;
    const spans = all.map(({ f }, i) => {
      const traceId = hex(32);
      sent.push({ fixture: f, traceId });
      return {
        trace_id: traceId,
        span_id: hex(16),
        span_name: f.spanName,
        span_kind: 'INTERNAL',
        attributes: f.attributes,
        ...(f.scope ? { scope_name: f.scope.name, scope_version: f.scope.version } : {}),
        ...(f.resource ? { resource: f.resource } : {}),
        start_time_ns: ns(base + i),
        end_time_ns: ns(base + i + 500),
        status_code: 'OK',
      };
    });
    const r = await post(spans);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ spans_ingested: spans.length, spans_rejected: 0 });
    explained = r.body.explain.spans;
  });

  it('explain answers each fixture as expected', () => {
    expect(explained).toHaveLength(all.length);
    for (const [i, { dialect, f }] of all.entries()) {
      const x = explained[i];
      const e = f.expected;
      expect(
        {
          class: x.class,
          model: x.model,
          provider: x.provider,
          usage: x.usage,
          provided_cost_usd: x.provided_cost_usd,
          messages: x.messages,
        },
        `${dialect}: ${f.name}`,
      ).toEqual({
        class: e.spanClass,
        model: e.model || null,
        provider: e.provider || null,
        usage: e.usage ?? null,
        provided_cost_usd: e.providedCostUsd !== undefined ? Number(e.providedCostUsd) : null,
        messages: e.messages,
      });
      // every key of a known namespace is mapped or ignored: none silently dropped
      const sources = Object.values(x.mapped as Record<string, string>).join(' ');
      const ignored = new Set((x.ignored as Array<{ key: string }>).map((k) => k.key));
      for (const key of Object.keys(f.attributes)) {
        if (!/^(gen_ai\.|llm\.|ai\.|langfuse\.|genkit:|pydantic_ai\.|traceloop\.|flue\.)/.test(key)) continue;
        const family = /^(llm\.(input|output)_messages\.|gen_ai\.(prompt|completion)\.\d|langfuse\.observation\.metadata\.)/.test(key);
        expect(ignored.has(key) || sources.includes(key) || family, `${dialect}: ${f.name}: ${key}`).toBe(true);
      }
    }
  });

  it('each counted inference is stored with its usage and the hand-computed (or provided) cost', async () => {
    const priced = sent.filter(({ fixture: f }) => f.expected.spanClass === 'inference' && f.expected.usage);
    expect(priced.length).toBeGreaterThanOrEqual(12);
    for (const { fixture: f, traceId } of priced) {
      const e = await executionOf(traceId);
      const u = f.expected.usage!;
      expect(
        {
          tokens_in: e.tokens_in,
          tokens_out: e.tokens_out,
          tokens_cached_in: e.tokens_cached_in,
          tokens_cache_write_in: e.tokens_cache_write_in,
          tokens_reasoning: e.tokens_reasoning,
        },
        f.name,
      ).toEqual({
        tokens_in: u.tokensIn,
        tokens_out: u.tokensOut,
        tokens_cached_in: u.cachedIn,
        tokens_cache_write_in: u.cacheWriteIn,
        tokens_reasoning: u.reasoning,
      });
      if (f.expected.providedCostUsd !== undefined) {
        expect({ source: e.cost_source, cost: e.cost_usd }, f.name).toEqual({
          source: 'provided',
          cost: Number(f.expected.providedCostUsd),
        });
        if (f.cost) expect(e.cost_computed_usd, f.name).toBe(Number(f.cost.usd));
      } else if (f.cost) {
        expect({ source: e.cost_source, cost: e.cost_usd }, f.name).toEqual({ source: 'computed', cost: Number(f.cost.usd) });
      } else {
        expect(e.cost_source, f.name).toBe('unpriced');
      }
    }
  });

  it('an agent span with usage, a usage-only wrapper and two generations: the generations counted once', async () => {
    const traceId = hex(32);
    const [agentId, wrapperId] = [hex(16), hex(16)];
    const base = Date.now() - 30_000;
    const span = (spanId: string, parent: string, name: string, attributes: Record<string, unknown>, at: number) => ({
      trace_id: traceId,
      span_id: spanId,
      parent_span_id: parent,
      span_name: name,
      span_kind: 'INTERNAL',
      attributes,
      start_time_ns: ns(base + at),
      end_time_ns: ns(base + at + 400),
      status_code: 'OK',
    });
    const generation = (n: number) =>
      span(
        hex(16),
        wrapperId,
        `generation ${n}`,
        {
          'langfuse.observation.type': 'generation',
          'langfuse.observation.model.name': 'gpt-4o-mini',
          'langfuse.observation.usage_details': JSON.stringify({ input: 100 * n, output: 10 * n }),
        },
        100 * n,
      );
    const r = await post([
      span(
        agentId,
        '',
        'support-agent',
        { 'langfuse.observation.type': 'agent', 'langfuse.observation.usage_details': '{"input":300,"output":30}' },
        0,
      ),
      span(wrapperId, agentId, 'litellm_request', { 'gen_ai.usage.input_tokens': 300, 'gen_ai.usage.output_tokens': 30 }, 10),
      generation(1),
      generation(2),
    ]);
    expect(r.status).toBe(200);
    expect(r.body.explain.spans.map((s: { class: string }) => s.class)).toEqual(['agent', 'inference', 'inference', 'inference']);
    const e = await executionOf(traceId);
    // (100 + 200) × 0.15 + (10 + 20) × 0.6 = 45 + 18 = 63 per Mtok
    expect(e).toMatchObject({ tokens_in: 300, tokens_out: 30, cost_source: 'computed', cost_usd: 0.000063, span_count: 4 });
  });
});
