// Budgets in Chromium: a user's daily budget created from the console with a signed webhook (the
// secret shown once), then its alert shown after that user's spend crosses the threshold; and a
// repricing from the prices section: the dry run, then the job to its end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { until } from '../helpers/wait.ts';

let t: ConsoleTest;
const hook = new WebhookReceiver();
beforeAll(async () => {
  await hook.start();
  t = await startConsoleTest({ WEBHOOK_ALLOW_PRIVATE: 'true', BUDGET_EVAL_DEBOUNCE_MS: '10', WEBHOOK_BACKOFF_MS: '50' });
});
afterAll(async () => {
  await t?.close();
  await hook.stop();
});

describe(`budgets (${mode} mode)`, () => {
  it("creates a user's budget with a signed webhook, and shows its alert once the user's spend crosses it", async () => {
    const { page } = t.browser;
    await t.open('budgets');
    await page.locator('.empty h3:has-text("No budget yet")').waitFor();
    await page.selectOption('select[name=scope_kind]', 'user');
    await page.fill('input[name=scope_value]', 'ada');
    await page.selectOption('select[name=period]', 'day');
    await page.fill('input[name=amount_usd]', '0.001');
    await page.fill('input[name=thresholds_pct]', '50, 100');
    await page.fill('input[name=webhook_url]', hook.url);
    await page.click('button:has-text("Create budget")');
    const secret = (await page.locator('[data-secret]').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    hook.secret = secret;
    const card = page.locator('.budget-card:has([data-budget-scope="user:ada"])');
    await card.waitFor();
    await expect(card.locator('.badge').first().textContent()).resolves.toBe('ok');
    await expect(card.textContent()).resolves.toContain('No alert yet');
    const [budget] = (await t.api('/budgets')).body.items;
    expect([budget.scope, budget.period, budget.amount_usd, budget.thresholds_pct, budget.webhook_format]).toEqual([
      { kind: 'user', value: 'ada' },
      'day',
      0.001,
      [50, 100],
      'signed',
    ]);

    // Spend of another user moves nothing; ada's crosses 50 %, not 100 %.
    await record(t, [
      { trace_id: 'bob-1', user_id: 'bob', cost_usd: 0.5 },
      { trace_id: 'ada-1', user_id: 'ada', cost_usd: 0.0007 },
    ]);
    await until(async () => (await t.api(`/budgets/${budget.id}`)).body.alerts?.length === 1, 'the 50 % alert');
    await until(async () => hook.verified.length === 1, 'the signed delivery');
    await page.reload();
    await card.locator('tr[data-threshold="50"]').waitFor();
    await expect(card.locator('.badge').first().textContent()).resolves.toBe('alert');
    await expect(card.locator('tr[data-threshold="50"] td').last().textContent()).resolves.toBe('delivered');
    await expect(card.locator('svg.gauge').getAttribute('data-pct')).resolves.toBe('70');
    await t.browser.screenshot('budgets');
  });

  it('reprices from the prices section: the dry run shown, then the job followed to its end', async () => {
    const { page } = t.browser;
    await record(t, [{ trace_id: 'to-reprice', model: 'gpt-4o-mini', tokens_in: 1_000_000, tokens_out: 0 }]);
    const price = await t.api('/models/gpt-4o-mini', { method: 'PUT', body: { input_per_mtok: 7, output_per_mtok: 9 } });
    expect(price.status, JSON.stringify(price.body)).toBeLessThan(300);
    await t.open('settings');
    await page.click('.reprice button:has-text("Dry run")');
    await expect(page.locator('.reprice [data-field=executions_changed]').textContent()).resolves.toBe('1');
    const before = Number((await t.api('/executions/to-reprice')).body.cost_usd);
    await expect(page.locator('.reprice [data-field=spend_delta_usd]').textContent()).resolves.toBe(`$${7 - before}`);
    page.once('dialog', (d) => void d.accept());
    await page.click('.reprice button:has-text("Apply")');
    await page.locator('.reprice .job[data-status=done]').waitFor({ timeout: 45_000 });
    await expect(page.locator('.reprice .job').textContent()).resolves.toContain('1 changed');
    expect((await t.api('/executions/to-reprice')).body.cost_usd).toBe(7);
    await t.browser.screenshot('settings-reprice');
    expect(t.errors).toEqual([]);
  });
});
