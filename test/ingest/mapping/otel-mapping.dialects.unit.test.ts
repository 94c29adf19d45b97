// Every dialect's fixtures (test/fixtures/dialects/): class, model, provider, usage (input
// inclusive, cached, cache write, reasoning, output), provided cost, message counts and tool
// fields; each priced fixture's cost equal to the hand computation written beside it, with the
// catalogue's own rates; explain accounting for every key of a namespace the mapper knows. Plus
// the inclusive/exclusive rule on the numbers alone, and a trace mixing an agent span with usage
// and its inference children, counted once.
import { describe, expect, it } from 'vitest';
import { mapSpan } from '../../../src/ingest/mapping/index.ts';
import { cataloguePrice } from '../../../src/pricing/catalogue.ts';
import { computeCost } from '../../../src/pricing/cost.ts';
import { countedSpans } from '../../../src/executions/span-builders.ts';
import type { MappedSpan } from '../../../src/executions/span.ts';
import { DIALECT_FIXTURES, type DialectFixture } from '../../fixtures/dialects/index.ts';
import { span } from '../../helpers/spans.ts';

const AT = new Date('2026-11-01T00:00:00Z');
const NAMESPACES = ['gen_ai.', 'llm.', 'ai.', 'langfuse.', 'genkit:', 'pydantic_ai.', 'traceloop.', 'flue.', 'openinference.'];

const mapFixture = (f: DialectFixture, explain = false) =>
  mapSpan(
    span(f.attributes, {
      name: f.spanName,
      ...(f.scope ? { scopeName: f.scope.name, scopeVersion: f.scope.version } : {}),
      ...(f.resource ? { resource: f.resource } : {}),
    }),
    { explain },
  );

/** The keys explain accounts for: those it names as a source of a mapped field, and those it lists as ignored. */
function accountedKeys(m: MappedSpan, keys: string[]): string[] {
  const sources = Object.values(m.explain.mapped).join(' | ');
  const ignored = new Set(m.explain.ignored.map((i) => i.key));
  return keys.filter((k) => {
    if (ignored.has(k)) return true;
    if (sources.includes(k)) return true;
    // families named with a wildcard: llm.input_messages.*, gen_ai.prompt.N.*, langfuse.observation.metadata.*
    return Object.values(m.explain.mapped).some((s) =>
      s.split(/[\s,()+]+/).some((t) => t.endsWith('.*') && k.startsWith(t.slice(0, -1).replace(/N\.$/, ''))),
    );
  });
}

for (const [dialect, fixtures] of Object.entries(DIALECT_FIXTURES)) {
  describe(dialect, () => {
    for (const f of fixtures) {
      it(f.name, () => {
        const m = mapFixture(f);
        const e = f.expected;
        expect({ spanClass: m.spanClass, model: m.model, provider: m.provider }).toEqual({
          spanClass: e.spanClass,
          model: e.model,
          provider: e.provider,
        });
        expect(m.usage).toEqual(e.usage);
        expect(m.providedCostUsd).toBe(e.providedCostUsd);
        expect({ input: m.inputMessages.length, output: m.outputMessages.length }).toEqual(e.messages);
        if (e.toolName !== undefined) expect(m.toolName).toBe(e.toolName);
        if (e.toolCallId !== undefined) expect(m.toolCallId).toBe(e.toolCallId);
        if (e.toolArguments !== undefined) expect(m.toolArguments).toEqual(e.toolArguments);
        if (e.toolResult !== undefined) expect(m.toolResult).toEqual(e.toolResult);
        if (e.spanClass === 'tool') expect(m.usage).toBeUndefined();
      });

      if (f.cost) {
        it(`${f.name}: cost = the hand computation`, () => {
          const m = mapFixture(f);
          const price = cataloguePrice(m.provider, m.model, AT, m.usage!.tokensIn);
          expect(price, `a catalogue price for ${m.provider} ${m.model}`).toBeDefined();
          const { rates } = f.cost!;
          expect({
            input: price!.input_per_mtok,
            output: price!.output_per_mtok,
            cached: price!.cached_input_per_mtok,
            write: price!.cache_write_per_mtok,
          }).toEqual({ input: rates.input, output: rates.output, cached: rates.cached, write: rates.write });
          expect(computeCost(m.usage!, price!).costUsd).toBe(f.cost!.usd);
        });
      }

      it(`${f.name}: explain accounts for every key of a known namespace`, () => {
        const m = mapFixture(f, true);
        const known = Object.keys(f.attributes).filter((k) => k === 'final_result' || NAMESPACES.some((ns) => k.startsWith(ns)));
        expect(accountedKeys(m, known)).toEqual(known);
        for (const i of m.explain.ignored) expect(i.reason).not.toBe('');
      });
    }
  });
}

describe('explain of unused keys', () => {
  it('lists each unused key of a known namespace with a reason, only when asked', () => {
    const attrs = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.temperature': 0.2,
      'gen_ai.response.id': 'r1',
      'gen_ai.usage.input_tokens': 5,
      'gen_ai.usage.output_tokens': 1,
      'gen_ai.usage.total_tokens': 6,
      'langfuse.trace.name': 'qa',
      'genkit:path': '/x',
      'app.custom': 'not a known namespace',
    };
    const quiet = mapSpan(span(attrs));
    expect(quiet.explain.ignored.map((i) => i.key)).not.toContain('gen_ai.request.temperature');
    const m = mapSpan(span(attrs), { explain: true });
    expect(m.explain.ignored).toEqual(
      expect.arrayContaining([
        { key: 'gen_ai.request.temperature', reason: 'a request parameter: not stored on the execution' },
        { key: 'gen_ai.response.id', reason: 'response details beside the model: not stored on the execution' },
        { key: 'gen_ai.usage.total_tokens', reason: 'a total: the execution stores input and output, not their sum' },
        { key: 'langfuse.trace.name', reason: 'a Langfuse trace field with no execution column (the execution is named by its agent)' },
        { key: 'genkit:path', reason: 'a Genkit field with no execution column' },
      ]),
    );
    const keys = m.explain.ignored.map((i) => i.key);
    expect(keys).not.toContain('app.custom');
    expect(keys).not.toContain('gen_ai.usage.input_tokens');
    expect(keys).not.toContain('gen_ai.request.model');
  });
});

describe('inclusive or exclusive, from the numbers', () => {
  const usageOf = (attributes: Record<string, string | number>) =>
    mapSpan(span({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'claude-sonnet-4-5', ...attributes }));
  const metadata = (u: Record<string, number>) => JSON.stringify({ anthropic: { usage: u } });

  it("the provider's uncached count decides: equal to input means the cache was left out, equal to input − cache means it was not", () => {
    const inclusive = usageOf({
      'gen_ai.usage.input_tokens': 1_000,
      'ai.response.providerMetadata': metadata({ input_tokens: 100, cache_read_input_tokens: 600, cache_creation_input_tokens: 300 }),
    });
    expect(inclusive.usage).toMatchObject({ tokensIn: 1_000, cachedIn: 600, cacheWriteIn: 300 });
    expect(inclusive.explain.mapped['usage.conversion']).toBeUndefined();
    const exclusive = usageOf({
      'gen_ai.usage.input_tokens': 1_000,
      'ai.response.providerMetadata': metadata({ input_tokens: 1_000, cache_read_input_tokens: 600, cache_creation_input_tokens: 300 }),
    });
    expect(exclusive.usage).toMatchObject({ tokensIn: 1_900, cachedIn: 600, cacheWriteIn: 300 });
    const writeOnly = usageOf({
      'gen_ai.usage.input_tokens': 700,
      'ai.response.providerMetadata': metadata({ input_tokens: 100, cache_read_input_tokens: 600, cache_creation_input_tokens: 300 }),
    });
    expect(writeOnly.usage).toMatchObject({ tokensIn: 1_000 });
    expect(writeOnly.explain.mapped['usage.conversion']).toContain('the cache write was excluded');
  });

  it('without a proof, the OTel sources are inclusive and Langfuse usage types disjoint', () => {
    expect(
      usageOf({
        'gen_ai.usage.input_tokens': 1_000,
        'gen_ai.usage.cache_read.input_tokens': 600,
        'ai.model.provider': 'anthropic.messages',
      }).usage,
    ).toMatchObject({ tokensIn: 1_000, cachedIn: 600 });
    const lf = mapSpan(
      span({
        'langfuse.observation.type': 'generation',
        'langfuse.observation.usage_details': JSON.stringify({
          input: 1_000,
          input_cache_read: 600,
          output: 10,
          output_reasoning_tokens: 5,
        }),
      }),
    );
    expect(lf.usage).toEqual({ tokensIn: 1_600, tokensOut: 15, cachedIn: 600, cacheWriteIn: 0, reasoning: 5 });
    expect(lf.explain.mapped['usage.conversion']).toContain('disjoint');
  });

  it('Langfuse usage_details outrank the attribute counts on the same span, which are listed as superseded', () => {
    const m = mapSpan(
      span({
        'langfuse.observation.type': 'generation',
        'langfuse.observation.usage_details': JSON.stringify({ input: 10, output: 2 }),
        'gen_ai.usage.input_tokens': 999,
      }),
    );
    expect(m.usage).toMatchObject({ tokensIn: 10, tokensOut: 2 });
    expect(m.explain.ignored).toContainEqual({
      key: 'gen_ai.usage.input_tokens',
      reason: 'superseded by langfuse.observation.usage_details',
    });
  });
});

describe('a trace mixing an agent span with usage and its inference children', () => {
  it('counts the children once: neither the agent nor a usage-only wrapper that sums them adds to them', () => {
    const agent = span(
      { 'langfuse.observation.type': 'agent', 'langfuse.observation.usage_details': JSON.stringify({ input: 300, output: 30 }) },
      { name: 'agent' },
    );
    const wrapper = span(
      { 'gen_ai.usage.input_tokens': 300, 'gen_ai.usage.output_tokens': 30 },
      { name: 'litellm_request', parentSpanId: agent.spanId },
    );
    const gen = (n: number) =>
      span(
        {
          'langfuse.observation.type': 'generation',
          'langfuse.observation.model.name': 'gpt-4o-mini',
          'langfuse.observation.usage_details': JSON.stringify({ input: 100 * n, output: 10 * n }),
        },
        { name: `gen ${n}`, parentSpanId: wrapper.spanId },
      );
    const spans = [agent, wrapper, gen(1), gen(2)];
    const mapped = spans.map((s) => mapSpan(s));
    expect(mapped.map((m) => m.spanClass)).toEqual(['agent', 'inference', 'inference', 'inference']);
    const rows = spans.map((s, i) => ({
      span_id: s.spanId,
      parent_span_id: s.parentSpanId,
      span_class: mapped[i]!.spanClass,
      has_usage: mapped[i]!.usage ? 1 : 0,
    }));
    const counted = countedSpans(rows);
    expect([...counted].sort()).toEqual([spans[2]!.spanId, spans[3]!.spanId].sort());
    const total = mapped.filter((_, i) => counted.has(spans[i]!.spanId)).reduce((n, m) => n + m.usage!.tokensIn, 0);
    expect(total).toBe(300);
  });
});
