// Issue 44, without stores: every usage type priced at its own rate, per dialect, with exact
// decimal sums; no token counted twice (each span's token lines sum to its tokens_in +
// tokens_out); a tier crossing its boundary (199,999 / 200,000 / 200,001 input tokens); conditions
// by service tier (batch, flex, priority), the most specific winning; fallbacks of missing rates.
import { describe, expect, it } from 'vitest';
import { mapSpan } from '../../src/ingest/mapping/index.ts';
import { computeCost, type PriceRow } from '../../src/pricing/cost.ts';
import { fromScaled } from '../../src/decimal.ts';
import { cataloguePrice } from '../../src/pricing/catalogue.ts';
import { span } from '../helpers/spans.ts';
import { handCost, RATE_OF, USAGE_FIXTURES } from '../fixtures/usage-types.ts';

const DISTINCT: PriceRow = {
  price_id: 'project:test',
  provider: '',
  model: 'm',
  input_per_mtok: RATE_OF.input,
  output_per_mtok: RATE_OF.output,
  cached_input_per_mtok: RATE_OF.cache_read,
  cache_write_per_mtok: RATE_OF.cache_write_5m,
  cache_write_1h_per_mtok: RATE_OF.cache_write_1h,
  reasoning_per_mtok: RATE_OF.reasoning,
  input_audio_per_mtok: RATE_OF.input_audio,
  output_audio_per_mtok: RATE_OF.output_audio,
  input_image_per_mtok: RATE_OF.input_image,
  output_image_per_mtok: RATE_OF.output_image,
  web_search_per_call: RATE_OF.web_search,
};

const round9 = (exact18: bigint) => fromScaled((exact18 + 500_000_000n) / 1_000_000_000n, 9);

describe('every usage type of every dialect at its own rate', () => {
  for (const f of USAGE_FIXTURES) {
    it(`${f.dialect}: mapped once, each type priced at its rate, exact`, () => {
      const m = mapSpan(
        span(f.attributes, { name: f.spanName, ...(f.scope ? { scopeName: f.scope.name, scopeVersion: f.scope.version } : {}) }),
      );
      expect(m.spanClass).toBe('inference');
      expect(m.model).toBe(f.model);
      expect(m.usage).toEqual(f.usage);
      const cost = computeCost({ ...m.usage!, details: m.usageDetails }, DISTINCT, m.pricingContext);
      const quantities = Object.fromEntries(cost.lines.map((l) => [l.type, l.quantity]));
      expect(quantities).toEqual(f.lines);
      for (const l of cost.lines) expect(l.rate).toBe(RATE_OF[l.type]);
      // No double count: the token lines are a partition of tokens_in + tokens_out.
      const tokens = cost.lines.filter((l) => l.unit === 'tokens').reduce((s, l) => s + l.quantity, 0);
      expect(tokens).toBe(f.usage.tokensIn + f.usage.tokensOut);
      const exact = handCost(f.lines);
      expect(cost.lines.reduce((sum, l) => sum + l.exact, 0n)).toBe(exact);
      expect(cost.costUsd).toBe(round9(exact));
      expect(cost.warnings).toEqual([]);
      if (f.serviceTier) expect(m.pricingContext?.service_tier).toBe(f.serviceTier);
    });
  }

  it('lines are exact to 1e-18 and sum to the cost before its one rounding', () => {
    const c = computeCost({ tokensIn: 3, tokensOut: 7, cachedIn: 1, cacheWriteIn: 1, reasoning: 2, details: { web_search: 1 } }, DISTINCT);
    expect(c.lines.map((l) => [l.type, fromScaled(l.exact, 18)])).toEqual([
      ['input', '0.000001'],
      ['cache_read', '0.0000001'],
      ['cache_write_5m', '0.00000125'],
      ['output', '0.00001'],
      ['reasoning', '0.000006'],
      ['web_search', '0.01'],
    ]);
    expect(c.costUsd).toBe('0.01001835');
    // Rounded once: two lines of 0.6 nano-dollars make 1 nano-dollar (rounding each would make 2).
    const tiny = computeCost(
      { tokensIn: 1, tokensOut: 1, cachedIn: 0, cacheWriteIn: 0 },
      { price_id: 'p', provider: '', model: 'm', input_per_mtok: '0.0006', output_per_mtok: '0.0006' },
    );
    expect(tiny.lines.map((l) => fromScaled(l.exact, 18))).toEqual(['0.0000000006', '0.0000000006']);
    expect(tiny.costUsd).toBe('0.000000001');
  });

  it('missing rates fall back: 1h write → cache write → input; reasoning, audio, image → their side', () => {
    const base: PriceRow = {
      price_id: 'p',
      provider: '',
      model: 'm',
      input_per_mtok: '1',
      output_per_mtok: '2',
      cache_write_per_mtok: '1.25',
    };
    const c = computeCost(
      {
        tokensIn: 1_000_000,
        tokensOut: 1_000_000,
        cachedIn: 0,
        cacheWriteIn: 200_000,
        reasoning: 100_000,
        details: { cache_write_1h: 50_000, input_audio: 10_000, output_image: 20_000, web_search: 4 },
      },
      base,
    );
    expect(Object.fromEntries(c.lines.map((l) => [l.type, l.rate]))).toEqual({
      input: '1',
      cache_write_5m: '1.25',
      cache_write_1h: '1.25',
      input_audio: '1',
      output: '2',
      reasoning: '2',
      output_image: '2',
    });
    expect(c.warnings).toEqual(['web_search: 4 calls and no per-call price; not counted']);
    // Same figure as the old formula: (1,000,000 − 200,000) × 1 + 200,000 × 1.25 + 1,000,000 × 2 = 3,050,000 per 1e6
    expect(c.costUsd).toBe('3.05');
  });

  it('a detail larger than what is left of its total is cut, and said: never counted twice', () => {
    const c = computeCost({ tokensIn: 100, tokensOut: 10, cachedIn: 50, cacheWriteIn: 0, details: { input_audio: 80 } }, DISTINCT);
    expect(Object.fromEntries(c.lines.map((l) => [l.type, l.quantity]))).toEqual({ cache_read: 50, input_audio: 50, output: 10 });
    expect(c.warnings[0]).toMatch(/input audio tokens \(80\) exceeds what is left of the uncached input \(50\)/);
  });
});

const TIERED: PriceRow = {
  price_id: 'project:tiered',
  provider: '',
  model: 'long',
  input_per_mtok: '3',
  output_per_mtok: '15',
  cached_input_per_mtok: '0.3',
  tiers: [{ above_input_tokens: 200_000, input_per_mtok: '6', output_per_mtok: '22.5', cached_input_per_mtok: '0.6' }],
};

describe('tiers by input tokens per call', () => {
  it('199,999 and 200,000 input tokens: base rates; 200,001: every rate switches to the tier', () => {
    const at = (n: number) => computeCost({ tokensIn: n, tokensOut: 1_000, cachedIn: 100_000, cacheWriteIn: 0 }, TIERED);
    const below = at(199_999);
    expect(below.rule).toBe('base rates');
    // (99,999 × 3 + 100,000 × 0.3 + 1,000 × 15) / 1e6 = (299,997 + 30,000 + 15,000) / 1e6
    expect(below.costUsd).toBe('0.344997');
    expect(at(200_000).rule).toBe('base rates');
    const above = at(200_001);
    expect(above.rule).toBe('tier above 200000 input tokens');
    // (100,001 × 6 + 100,000 × 0.6 + 1,000 × 22.5) / 1e6 = (600,006 + 60,000 + 22,500) / 1e6
    expect(above.costUsd).toBe('0.682506');
    expect(above.lines.find((l) => l.type === 'cache_read')!.rate).toBe('0.6');
  });

  it('the tier is chosen by tokens_in including the cache (as Anthropic and Google count a long prompt)', () => {
    const c = computeCost({ tokensIn: 250_000, tokensOut: 0, cachedIn: 240_000, cacheWriteIn: 0 }, TIERED);
    expect(c.rule).toBe('tier above 200000 input tokens');
  });

  it("token rates a tier omits fall back within it; a per-call rate it omits is the price's own", () => {
    const p: PriceRow = { ...TIERED, web_search_per_call: '0.01' };
    const c = computeCost(
      { tokensIn: 300_000, tokensOut: 1_000, cachedIn: 0, cacheWriteIn: 0, reasoning: 500, details: { web_search: 2 } },
      p,
    );
    expect(Object.fromEntries(c.lines.map((l) => [l.type, l.rate]))).toEqual({
      input: '6',
      output: '22.5',
      reasoning: '22.5',
      web_search: '0.01',
    });
  });

  it('several tiers: the highest threshold passed applies', () => {
    const p: PriceRow = {
      ...TIERED,
      tiers: [
        { above_input_tokens: 128_000, input_per_mtok: '4', output_per_mtok: '16' },
        { above_input_tokens: 200_000, input_per_mtok: '6', output_per_mtok: '22.5' },
      ],
    };
    const rate = (n: number) => computeCost({ tokensIn: n, tokensOut: 0, cachedIn: 0, cacheWriteIn: 0 }, p).lines[0]!.rate;
    expect([rate(128_000), rate(128_001), rate(200_001)]).toEqual(['3', '4', '6']);
  });

  it('the catalogue applies its own published tiers and says so', () => {
    const at = new Date('2026-11-01T00:00:00Z');
    const small = cataloguePrice('google', 'gemini-2.5-pro', at, 1_000);
    const large = cataloguePrice('google', 'gemini-2.5-pro', at, 250_000);
    expect(small).toBeDefined();
    expect(Number(large!.input_per_mtok)).toBeGreaterThan(Number(small!.input_per_mtok));
    const c = computeCost({ tokensIn: 250_000, tokensOut: 10, cachedIn: 0, cacheWriteIn: 0 }, large!);
    expect(c.rule).toMatch(/^catalogue tier above 200000 input tokens$/);
  });
});

describe('conditions: service tier, region, batch', () => {
  const p: PriceRow = {
    price_id: 'project:cond',
    provider: '',
    model: 'gpt',
    input_per_mtok: '2',
    output_per_mtok: '8',
    conditions: [
      { when: { service_tier: 'flex' }, input_per_mtok: '1', output_per_mtok: '4' },
      { when: { service_tier: 'priority' }, input_per_mtok: '3.5', output_per_mtok: '14' },
      { when: { batch: true }, input_per_mtok: '1', output_per_mtok: '4' },
      { when: { batch: true, region: 'eu-west-1' }, input_per_mtok: '1.1', output_per_mtok: '4.4' },
      {
        when: { service_tier: 'batch' },
        input_per_mtok: '0.9',
        output_per_mtok: '3.6',
        tiers: [{ above_input_tokens: 200_000, input_per_mtok: '1.8', output_per_mtok: '7.2' }],
      },
    ],
  };
  const usage = { tokensIn: 1_000_000, tokensOut: 1_000_000, cachedIn: 0, cacheWriteIn: 0 };

  it('no match: the base rates; flex and priority: theirs', () => {
    expect(computeCost(usage, p, {}).costUsd).toBe('10');
    expect(computeCost(usage, p, { service_tier: 'default' }).rule).toBe('base rates');
    const flex = computeCost(usage, p, { service_tier: 'FLEX' });
    expect([flex.costUsd, flex.rule]).toEqual(['5', 'condition service_tier=flex']);
    expect(computeCost(usage, p, { service_tier: 'priority' }).costUsd).toBe('17.5');
  });

  it('the most specific matching condition wins; then the first listed', () => {
    const eu = computeCost(usage, p, { batch: true, region: 'EU-WEST-1' });
    expect([eu.costUsd, eu.rule]).toEqual(['5.5', 'condition batch=true, region=eu-west-1']);
    expect(computeCost(usage, p, { batch: true, region: 'us-east-1' }).rule).toBe('condition batch=true');
    // service_tier batch and batch=true both match with one field each: the first listed wins.
    expect(computeCost(usage, p, { batch: true, service_tier: 'batch' }).rule).toBe('condition batch=true');
  });

  it("a condition's own tiers apply to it", () => {
    const c = computeCost({ tokensIn: 200_001, tokensOut: 0, cachedIn: 0, cacheWriteIn: 0 }, p, { service_tier: 'batch' });
    expect(c.rule).toBe('condition service_tier=batch; tier above 200000 input tokens');
    expect(c.lines[0]!.rate).toBe('1.8');
  });
});
