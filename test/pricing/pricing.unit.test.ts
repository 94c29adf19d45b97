import { describe, expect, it } from 'vitest';
import { cataloguePrice } from '../../src/pricing/catalogue.ts';
import { computeCost, type PriceRow } from '../../src/pricing/cost.ts';
import { fromScaled, numberToDecimal, toScaled } from '../../src/decimal.ts';

const price: PriceRow = {
  price_id: 'p',
  provider: 'x',
  model: 'm',
  input_per_mtok: '2.5',
  output_per_mtok: '10',
  cached_input_per_mtok: '1.25',
  cache_write_per_mtok: '3.125',
};
const usage = (tokensIn: number, tokensOut: number, cachedIn = 0, cacheWriteIn = 0) => ({ tokensIn, tokensOut, cachedIn, cacheWriteIn });

describe('decimal', () => {
  it('parses, rounds half-up and formats without drift', () => {
    expect(toScaled('0.000123', 9)).toBe(123_000n);
    expect(toScaled('0.0000000015', 9)).toBe(2n);
    expect(toScaled(1e-7, 9)).toBe(100n);
    expect(numberToDecimal(1.5e-10)).toBe('0.00000000015');
    expect(numberToDecimal(2e21)).toBe('2000000000000000000000');
    let sum = 0n;
    for (let i = 0; i < 1000; i++) sum += toScaled('0.000123', 9);
    expect(fromScaled(sum, 9)).toBe('0.123');
    expect(fromScaled(-5n, 9)).toBe('-0.000000005');
  });
});

describe('cost', () => {
  it('prices input and output per million tokens', () => {
    expect(computeCost(usage(1000, 500), price).costUsd).toBe('0.0075');
  });

  it('prices cached and cache-write tokens inside tokens_in at their own rates', () => {
    // 600 uncached × 2.5 + 300 cached × 1.25 + 100 write × 3.125 + 50 out × 10 (per Mtok)
    expect(computeCost(usage(1000, 50, 300, 100), price).costUsd).toBe('0.0026875'); // (1500 + 375 + 312.5 + 500) / 1e6
  });

  it('falls back to the input price when a cached price is missing', () => {
    const p = { ...price, cached_input_per_mtok: undefined, cache_write_per_mtok: undefined };
    expect(computeCost(usage(1000, 0, 400, 100), p).costUsd).toBe(computeCost(usage(1000, 0), p).costUsd);
  });

  it('flags counts that cannot hold and never goes negative', () => {
    const c = computeCost(usage(100, 0, 150, 0), price);
    expect(c.warnings[0]).toMatch(/exceed tokens_in/);
    expect(c.costUsd).toBe('0.0001875'); // 150 cached × 1.25 / 1e6
  });
});

describe('catalogue', () => {
  it('knows common models, with their provider', () => {
    const p = cataloguePrice('openai', 'gpt-4o-mini', new Date('2026-11-01T00:00:00Z'), 1000);
    expect(p).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      input_per_mtok: '0.15',
      output_per_mtok: '0.6',
      cached_input_per_mtok: '0.075',
    });
    expect(p!.price_id).toBe('catalogue:openai/gpt-4o-mini');
  });

  it('returns nothing for an unknown model: unpriced, never a guess', () => {
    expect(cataloguePrice('acme', 'acme-llm-9000', new Date(), 10)).toBeUndefined();
    expect(cataloguePrice('', '', new Date(), 10)).toBeUndefined();
  });

  it('applies the tier of each call, not of the first call of the day', () => {
    const day = new Date('2026-11-02T10:00:00Z');
    const small = cataloguePrice('google', 'gemini-2.5-pro', day, 150_000);
    const large = cataloguePrice('google', 'gemini-2.5-pro', new Date('2026-11-02T11:00:00Z'), 250_000);
    expect(small).toMatchObject({ input_per_mtok: '1.25', output_per_mtok: '10' });
    expect(large).toMatchObject({ input_per_mtok: '2.5', output_per_mtok: '15' });
    expect(cataloguePrice('google', 'gemini-2.5-pro', day, 150_000)).toEqual(small); // cached: the same again
  });

  it('applies time-of-day prices (DeepSeek peak and off-peak) within one day', () => {
    const at = (t: string) => cataloguePrice('deepseek', 'deepseek-chat', new Date(`2026-11-03T${t}Z`), 1000);
    expect(at('10:00:00')).toMatchObject({ input_per_mtok: '0.27', output_per_mtok: '1.1' }); // standard: 00:30-16:30 UTC
    expect(at('17:00:00')).toMatchObject({ input_per_mtok: '0.135', output_per_mtok: '0.55' }); // off-peak
    expect(at('00:15:00')).toMatchObject({ input_per_mtok: '0.135' });
    expect(at('16:29:59')).toMatchObject({ input_per_mtok: '0.27' });
    expect(at('16:30:00')).toMatchObject({ input_per_mtok: '0.135' });
    expect(at('00:30:00')).toMatchObject({ input_per_mtok: '0.27' });
  });
});
