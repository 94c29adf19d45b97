// The stored cost breakdown's text: lines summed over an execution's calls, in the JSON the
// `cost_lines` column has always held. The text is compared (content hashes, repricing), so its
// key order and number spelling are pinned here.
import { describe, expect, it } from 'vitest';
import { CostLines } from '../../src/executions/cost-lines.ts';
import { priceCall } from '../../src/executions/pricing.ts';
import type { PriceRow } from '../../src/pricing/cost.ts';
import type { PriceResolver } from '../../src/pricing/prices.ts';

const PRICE: PriceRow = {
  price_id: 'project:p1',
  provider: 'openai',
  model: 'm',
  input_per_mtok: '2.5',
  output_per_mtok: '10',
  cached_input_per_mtok: '1.25',
  tiers: [{ above_input_tokens: 1000, input_per_mtok: '5', output_per_mtok: '20' }],
};
const prices: PriceResolver = { resolve: async () => PRICE, invalidate: async () => undefined };
const at = new Date('2026-11-01T00:00:00Z');
const call = (tokensIn: number, tokensOut: number, cachedIn: number, provided?: string) =>
  priceCall(prices, 'p', { provider: 'openai', model: 'm', at, usage: { tokensIn, tokensOut, cachedIn, cacheWriteIn: 0 }, provided });

describe('cost lines', () => {
  it('sum calls of one price and rule, keep a stated cost apart, and write the text as stored before', async () => {
    const lines = new CostLines();
    lines.add(await call(900, 100, 300));
    lines.add(await call(700, 50, 0));
    lines.add(await call(2000, 10, 0, '0.0123'));
    const line = (type: string, quantity: number, rate: string, cost: string, rule: string, counted: boolean, calls: number) =>
      `{"type":"${type}","quantity":${quantity},"unit":"tokens","rate":"${rate}","cost_usd":"${cost}","source":"project",` +
      `"price_id":"project:p1","rule":"${rule}","counted":${counted},"calls":${calls}}`;
    expect(lines.toJson()).toBe(
      `[${[
        line('input', 1300, '2.5', '0.00325', 'base rates', true, 2),
        line('cache_read', 300, '1.25', '0.000375', 'base rates', true, 1),
        line('output', 150, '10', '0.0015', 'base rates', true, 2),
        '{"type":"provided","quantity":1,"unit":"calls","rate":null,"cost_usd":"0.0123","source":"caller","price_id":"",' +
          '"rule":"cost stated by the caller","counted":true,"calls":1}',
        line('input', 2000, '5', '0.01', 'tier above 1000 input tokens', false, 1),
        line('output', 10, '20', '0.0002', 'tier above 1000 input tokens', false, 1),
      ].join(',')}]`,
    );
    expect(new CostLines().toJson()).toBe('');
  });
});
