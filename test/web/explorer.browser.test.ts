// The spend explorer in Chromium: the page's URL is the API's query, and the table shows exactly
// the API's answer for it (exact decimal strings, the `other` row, the total); the form rewrites
// the URL; the CSV is the table.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';

let t: ConsoleTest;
const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

beforeAll(async () => {
  t = await startConsoleTest();
  const runs: object[] = [];
  const users = ['ada', 'bob', 'cyd', ''];
  const models = ['gpt-4o-mini', 'claude-3-5-haiku'];
  let i = 0;
  for (const model of models)
    for (const user of users)
      for (let k = 0; k < 2; k++, i++)
        runs.push({
          trace_id: `x-${i}`,
          model,
          provider: model.startsWith('gpt') ? 'openai' : 'anthropic',
          ...(user ? { user_id: user } : {}),
          cost_usd: Number(`0.${String(i + 1).padStart(9, '0')}`) + i * 0.01,
          tokens_in: 100 + i,
          tokens_out: 10 + i,
          started_at: ago(30 + i * 90),
          metadata: { plan: i % 2 ? 'pro' : 'free' },
        });
  await record(t, runs);
});
afterAll(async () => {
  await t?.close();
});

type Measures = { cost_usd: string; executions: number; tokens_in: number; tokens_out: number; unpriced_executions: number };
const figures = (m: Measures) => [
  `$${m.cost_usd}`,
  m.executions.toLocaleString('en-US'),
  m.tokens_in.toLocaleString('en-US'),
  m.tokens_out.toLocaleString('en-US'),
  String(m.unpriced_executions),
];

describe(`spend explorer (${mode} mode)`, () => {
  it("shows the API's answer for the URL's query: rows, other and total, cost as exact strings", async () => {
    const q = 'group_by=model,user&window=7d&limit=3&granularity=hour';
    const expected = (await t.api(`/spend?${q}`)).body;
    expect(expected.groups).toBe(8);
    await t.open(`explorer?${q}`);
    await t.browser.page.locator('table.breakdown tr[data-row]').first().waitFor();
    const rows = await t.browser.page
      .locator('table.breakdown tr[data-row]')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual(
      expected.rows.map((r: Measures & { model: string; user: string }) => [r.model, r.user === '' ? '(none)' : r.user, ...figures(r)]),
    );
    const cells = (sel: string) => t.browser.page.locator(sel).locator('td').allTextContents();
    expect(await cells('tr[data-other]')).toEqual([`other (${expected.other.groups} groups)`, ...figures(expected.other)]);
    expect(await cells('tr[data-total]')).toEqual(['total (each execution once)', ...figures(expected.total)]);
    await t.browser.page.locator('.chart.stacked canvas').first().waitFor();
    // The chart stacks the first dimension (2 models), or on request every combination: the top 8 of
    // the chart's own answer (here all 8, so no "other"), whatever the table's limit.
    expect(Number(await t.browser.page.locator('.chart.stacked').getAttribute('data-series'))).toBe(2);
    await t.browser.page.selectOption('select[name=chart_by]', '*');
    await t.browser.page.locator('.chart.stacked[data-series="8"]').waitFor();
    await expect(t.browser.page.locator('.chart.stacked').getAttribute('data-granularity')).resolves.toBe('hour');
    await t.browser.screenshot('explorer');
  });

  it('rewrites the URL from the form, filters on metadata, and exports the table as CSV', async () => {
    const { page } = t.browser;
    await page.uncheck('input[name=group_user]');
    await page.fill('input[name=metadata]', 'plan=pro');
    await page.click('.explorer-form button[type=submit]');
    await page.waitForURL(/metadata\.plan=pro/);
    const params = new URL(page.url()).searchParams;
    expect(Object.fromEntries(params)).toEqual({
      group_by: 'model',
      window: '7d',
      limit: '3',
      granularity: 'hour',
      'metadata.plan': 'pro',
    });
    const expected = (await t.api(`/spend?${params}`)).body;
    expect(expected.total.executions).toBe(8);
    await page.locator(`tr[data-total] td.cost:text-is("$${expected.total.cost_usd}")`).waitFor();

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Export CSV")')]);
    expect(download.suggestedFilename()).toBe('spend-default.csv');
    const csv = fs
      .readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv).toEqual([
      'model,cost_usd,executions,tokens_in,tokens_out,unpriced_executions',
      ...expected.rows.map((r: Measures & { model: string }) =>
        [r.model, r.cost_usd, r.executions, r.tokens_in, r.tokens_out, r.unpriced_executions].join(','),
      ),
      ['total', expected.total.cost_usd, expected.total.executions, expected.total.tokens_in, expected.total.tokens_out, 0].join(','),
    ]);
    expect(t.errors).toEqual([]);
  });
});
