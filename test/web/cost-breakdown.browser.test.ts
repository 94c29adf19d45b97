// Issue 44 in Chromium: a project price with a per-type rate, a tier and a condition entered on the
// settings page; an execution's cost breakdown shown on its page, line by line (usage type,
// quantity, rate, exact cost, source and the rule that matched).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';

let t: ConsoleTest;
beforeAll(async () => {
  t = await startConsoleTest();
});
afterAll(async () => {
  await t?.close();
});

describe(`cost breakdown in the console (${mode} mode)`, () => {
  it('sets rates, tiers and conditions from the settings page', async () => {
    const { page } = t.browser;
    await t.open('settings');
    await page.fill('input[name=price_model]', 'cb-model');
    await page.fill('input[name=input_per_mtok]', '1');
    await page.fill('input[name=output_per_mtok]', '2');
    await page.fill('input[name=web_search_per_call]', '0.01');
    await page.fill('textarea[name=price_tiers]', 'not json');
    await page.click('button:has-text("Set price")');
    await expect(page.locator('.error').first().textContent()).resolves.toContain('tiers: not JSON');
    await page.fill('textarea[name=price_tiers]', '[{"above_input_tokens": 200000, "input_per_mtok": 2, "output_per_mtok": 4}]');
    await page.fill('textarea[name=price_conditions]', '[{"when": {"service_tier": "flex"}, "input_per_mtok": 0.5, "output_per_mtok": 1}]');
    await page.click('button:has-text("Set price")');
    const row = page.locator('table.prices tr[data-price-id^="project:"]');
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('1 tier(s)');
    const [stored] = (await t.api('/models?source=project')).body.items;
    expect(stored).toMatchObject({
      model: 'cb-model',
      web_search_per_call: 0.01,
      tiers: [{ above_input_tokens: 200_000, input_per_mtok: 2, output_per_mtok: 4 }],
      conditions: [{ when: { service_tier: 'flex' }, input_per_mtok: 0.5, output_per_mtok: 1 }],
    });
  });

  it("shows the execution's breakdown: each usage type, its rate, exact cost, source and rule", async () => {
    const started = new Date(Date.now() - 60_000).toISOString();
    await record(t, [
      { trace_id: 'cb-1', model: 'cb-model', started_at: started, tokens_in: 250_000, tokens_out: 1_000, usage_details: { web_search: 3 } },
      { trace_id: 'cb-2', model: 'cb-model', started_at: started, tokens_in: 1_000, tokens_out: 1_000, service_tier: 'flex' },
    ]);
    const { page } = t.browser;
    await t.open('executions/cb-1');
    const table = page.locator('table[data-cost-breakdown]');
    await table.waitFor();
    const cells = async (type: string) =>
      (await table.locator(`tr[data-usage-type="${type}"] td`).allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim());
    expect(await cells('input')).toEqual(['Input', '250,000', '2 / Mtok', '0.5', 'project price', 'tier above 200000 input tokens']);
    expect(await cells('output')).toEqual(['Output', '1,000', '4 / Mtok', '0.004', 'project price', 'tier above 200000 input tokens']);
    expect(await cells('web_search')).toEqual([
      'Web search',
      '3 calls',
      '0.01 / call',
      '0.03',
      'project price',
      'tier above 200000 input tokens',
    ]);
    await t.open('executions/cb-2');
    await page.locator('table[data-cost-breakdown] tr[data-usage-type="input"]').waitFor();
    expect(await cells('input')).toEqual(['Input', '1,000', '0.5 / Mtok', '0.0005', 'project price', 'condition service_tier=flex']);
    expect(t.errors).toEqual([]);
  });
});
