// Admin screens in Chromium (issue 43, point 9 and its "also" list): score configs, model
// connections and evaluators created from the console (then read back from the API); the Create
// key button only where the API allows it, and each key's role; authors shown by key name; the
// explorer's chart on an axis of its own buckets with its last bar whole and a ranked "other";
// unpriced models shown as unpriced, not $0.00; a budget without a webhook shows no secret; the
// project's budget on the Budgets page; the prompt editor's model parameters. Every page touched
// has no horizontal overflow at 1440 and 390 px.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { PROJECT, record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';
import { getJson } from '../helpers/service.ts';

let t: ConsoleTest;
const DAY_MS = 86_400_000;
const startOfDay = (daysAgo: number) => new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - daysAgo * DAY_MS);

beforeAll(async () => {
  t = await startConsoleTest(mode === 'server' ? { SECRETS_KEY: crypto.randomBytes(32).toString('hex') } : {});
});
afterAll(async () => {
  await t?.close();
});

const ok = async (method: string, path: string, body?: unknown) => {
  const r = await t.api(path, { method, body });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};

/**
 * Every select labelled, and no horizontal scrollbar on the page at 1440 and 390 px (wide tables scroll in their own
 * overflow-x box). The navigation sidebar is the shell's, not these pages' (the global responsive
 * layout is its own change), so it is measured without it: what is left is the page.
 */
async function noOverflow(path: string, ready: string) {
  const { page } = t.browser;
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await t.open(path);
    await page.locator(ready).first().waitFor();
    const [scroll, client] = await page.evaluate(async (): Promise<[number, number]> => {
      const aside = document.querySelector<HTMLElement>('.shell > aside');
      const display = aside?.style.display ?? '';
      if (aside) aside.style.display = 'none';
      // Charts follow their box's width (ResizeObserver): let them redraw at the page's own width.
      for (let i = 0; i < 3; i++) await new Promise((r) => requestAnimationFrame(r));
      const sizes: [number, number] = [document.documentElement.scrollWidth, document.documentElement.clientWidth];
      if (aside) aside.style.display = display;
      return sizes;
    });
    expect(scroll, `${path} at ${width} px`).toBeLessThanOrEqual(client);
    // Every select of the page says what it picks (a <label> or an aria-label).
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLSelectElement>('main select')]
        .filter((s) => s.labels.length === 0 && !s.getAttribute('aria-label'))
        .map((s) => s.name || s.outerHTML.slice(0, 80)),
    );
    expect(unlabelled, `${path}: selects without a label`).toEqual([]);
  }
  await page.setViewportSize({ width: 1360, height: 900 });
}

describe(`admin screens (${mode} mode)`, () => {
  it('creates a score config, a model connection and an evaluator from the console', async () => {
    const { page } = t.browser;
    await ok('POST', '/prompts', { prompt_id: 'judge', type: 'text', template: 'Rate {{output}}', labels: ['production'] });

    await t.open('evaluators');
    await page.locator('.empty h3:has-text("No evaluators yet")').waitFor();
    await expect(page.locator('.empty a[href$="/settings#score-configs"]').count()).resolves.toBe(1);
    await expect(page.locator('.empty a[href$="/settings#model-connections"]').count()).resolves.toBe(1);

    await t.open('settings#score-configs');
    await page.fill('input[name=score_config_name]', 'correctness');
    await page.selectOption('select[name=score_config_type]', 'NUMERIC');
    await page.fill('input[name=score_config_min]', '0');
    await page.fill('input[name=score_config_max]', '1');
    await page.fill('input[name=score_config_description]', 'is the answer right');
    await page.click('button:has-text("Add score config")');
    await page.locator('tr[data-score-config=correctness]').waitFor();
    const [config] = (await ok('GET', '/score-configs')).items;
    expect([config.name, config.data_type, config.min_value, config.max_value, config.description]).toEqual([
      'correctness',
      'NUMERIC',
      0,
      1,
      'is the answer right',
    ]);
    // A rule never changes: the API's refusal is shown as it comes; archiving is offered.
    await page.fill('input[name=score_config_name]', 'correctness');
    await page.click('button:has-text("Add score config")');
    await page.locator('.score-configs .error:has-text("Score config not added")').waitFor();
    // The browser logs the refused request (409): expected here, not a page error.
    t.errors.splice(0, t.errors.length, ...t.errors.filter((e) => !e.includes('409 (Conflict)')));

    await page.fill('input[name=connection_name]', 'judge-mini');
    await page.fill('input[name=connection_model]', 'gpt-4o-mini');
    await page.fill('input[name=connection_base_url]', 'https://judge.example.com/v1');
    await page.fill('input[name=connection_api_key]', 'sk-secret-never-shown-123');
    await page.click('button:has-text("Add connection")');
    const row = page.locator('tr[data-connection="judge-mini"]');
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('set (sealed)');
    expect(await page.content()).not.toContain('sk-secret-never-shown-123');
    const [connection] = (await ok('GET', '/model-connections')).items;
    expect([connection.name, connection.model, connection.base_url, connection.api_key_set]).toEqual([
      'judge-mini',
      'gpt-4o-mini',
      'https://judge.example.com/v1',
      true,
    ]);
    expect(JSON.stringify(connection)).not.toContain('sk-secret');
    // An edit leaves the key field empty: the sealed key stays.
    await row.locator('button:has-text("Edit")').click();
    await expect(page.inputValue('input[name=connection_api_key]')).resolves.toBe('');
    await page.fill('input[name=connection_model]', 'gpt-4o');
    await page.click('button:has-text("Save connection")');
    await page.locator('tr[data-connection="judge-mini"]:has-text("gpt-4o")').waitFor();
    // "gpt-4o" is also a part of the old "gpt-4o-mini": wait for the saved model itself.
    await expect.poll(async () => (await ok('GET', `/model-connections/${connection.connection_id}`)).model).toBe('gpt-4o');
    await t.browser.screenshot('settings-admin-screens');

    await t.open('evaluators');
    await page.click('button:has-text("New evaluator")');
    await page.fill('input[name=evaluator_name]', 'correctness judge');
    await page.selectOption('select[name=evaluator_prompt]', 'judge');
    await page.selectOption('select[name=evaluator_connection]', connection.connection_id);
    await page.selectOption('select[name=evaluator_score]', 'correctness');
    await page.fill('input[name=evaluator_filter_agent_id]', 'support-bot, sales-bot');
    await page.fill('input[name=evaluator_sampling]', '25');
    await page.fill('input[name=evaluator_max_daily_cost_usd]', '2.5');
    await t.browser.screenshot('evaluator-form');
    await page.click('button:has-text("Create evaluator")');
    await page.locator('tr[data-evaluator="correctness judge"]').waitFor();
    const [ev] = (await ok('GET', '/evaluators')).items;
    expect([ev.name, ev.prompt_id, ev.prompt_label, ev.connection_id, ev.score_name, ev.max_daily_cost_usd, ev.target]).toEqual([
      'correctness judge',
      'judge',
      'production',
      connection.connection_id,
      'correctness',
      2.5,
      { kind: 'executions', filter: { agent_id: ['support-bot', 'sales-bot'] }, sampling_rate: 0.25 },
    ]);
    await noOverflow('evaluators', 'tr[data-evaluator]');
    await noOverflow('settings', 'tr[data-connection]');
    expect(t.errors).toEqual([]);
  });

  it('offers Create key only where the API allows it, lists roles, and names authors by their key', async () => {
    const { page } = t.browser;
    // Dev mode (no authentication) is admin and no API key: the API lets it create keys.
    await t.open('settings');
    await page.locator('button:has-text("Create key")').waitFor();
    await page.fill('input[name=key_name]', 'ci-bot');
    await page.selectOption('select[name=role]', 'admin');
    await page.click('button:has-text("Create key")');
    const key = (await page.locator('[data-secret]').textContent())!;
    expect(key).toMatch(/^tl_/);
    const keys = (await ok('GET', '/api-keys')).items;
    const ci = keys.find((k: { name: string }) => k.name === 'ci-bot');
    expect(ci.role).toBe('admin');
    await expect(page.locator(`tr[data-key-id="${ci.key_id}"] td[data-field=role]`).textContent()).resolves.toBe('admin');

    // The key (an admin's) writes a version: its author is the key's name.
    const asKey = await getJson(`${t.svc.url}/api/projects/${PROJECT}/prompts/judge/versions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ template: 'Rate {{output}} from 0 to 1' }),
    });
    expect(asKey.status, JSON.stringify(asKey.body)).toBe(201);
    expect(asKey.body.created_by).toBe(`api_key:${ci.key_id}`);
    await t.open('prompts/judge');
    // The names come with the key list, read after the page: the id is shown until they arrive.
    await page.locator('.version-list li[data-version="2"] [data-author]:text-is(\'API key "ci-bot"\')').waitFor();
    await expect(page.locator('.version-list li[data-version="2"] [data-author]').getAttribute('title')).resolves.toBe(
      `api_key:${ci.key_id}`,
    );
    expect(await page.locator('.version-list').textContent()).not.toContain(ci.key_id);
    await page.click('.version-list li[data-version="2"] button');
    await page.locator('dd [data-author]:text-is(\'API key "ci-bot"\')').waitFor();

    // Signed in with that admin key: the API answers 403 to key creation, so no button.
    const refused = await getJson(`${t.svc.url}/api/projects/${PROJECT}/api-keys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ name: 'nope' }),
    });
    expect(refused.status).toBe(403);
    await page.evaluate((k) => sessionStorage.setItem('traceloom.credential', k), key);
    await t.open('settings');
    await page.locator('[data-keys-readonly]').waitFor();
    await expect(page.locator('button:has-text("Create key")').count()).resolves.toBe(0);
    await expect(page.locator('button:has-text("Revoke")').count()).resolves.toBe(0);
    await expect(page.locator(`tr[data-key-id="${ci.key_id}"] td[data-field=role]`).textContent()).resolves.toBe('admin');
    await t.browser.screenshot('settings-keys-api-key');
    await page.evaluate(() => sessionStorage.removeItem('traceloom.credential'));
    expect(t.errors).toEqual([]);
  });

  it("draws the explorer's day buckets on a day axis, the last bar whole, and ranks one dimension for the chart", async () => {
    const { page } = t.browser;
    const users = ['u01', 'u02', 'u03', 'u04', 'u05', 'u06', 'u07', 'u08', 'u09', 'u10'];
    await record(
      t,
      users.flatMap((user, i) =>
        [0, 1, 2].map((d) => ({
          trace_id: `day-${user}-${d}`,
          model: i % 2 ? 'gpt-4o' : 'gpt-4o-mini',
          user_id: user,
          cost_usd: 0.01 * (i + 1),
          started_at: new Date(startOfDay(d).getTime() + 3_600_000).toISOString(),
        })),
      ),
    );
    await t.open('explorer?group_by=user,model&window=7d&granularity=day');
    const chart = page.locator('.chart.stacked');
    await chart.locator('canvas').first().waitFor();
    await expect(chart.getAttribute('data-granularity')).resolves.toBe('day');
    const days = [2, 1, 0].map((d) => startOfDay(d).toISOString().slice(5, 10));
    await expect(chart.getAttribute('data-ticks')).resolves.toBe(days.join(','));
    const [min, max] = (await chart.getAttribute('data-range'))!.split(',').map(Number);
    expect([min, max]).toEqual([startOfDay(2).getTime() / 1000 - 43_200, startOfDay(0).getTime() / 1000 + 43_200]);
    // Charted by the first dimension (user): its top 8 and "other" naming how many more.
    const legend = await page.locator('.chart.stacked .u-legend .u-series .u-label').allTextContents();
    expect(legend).toContain('other (2 more groups)');
    expect(legend).toContain('u10');
    await expect(chart.getAttribute('data-series')).resolves.toBe('9');
    await page.selectOption('select[name=chart_by]', 'model');
    await page.locator('.chart.stacked[data-series="2"]').waitFor();
    // The legend is redrawn after the chart's series change: wait for it, not for the attribute.
    const labels = page.locator('.chart.stacked .u-legend .u-series .u-label');
    await expect.poll(async () => (await labels.allTextContents()).filter((l) => l.startsWith('other'))).toEqual([]);
    await expect.poll(async () => (await labels.allTextContents()).filter((l) => l.startsWith('gpt-4o'))).toHaveLength(2);
    await t.browser.screenshot('explorer-day-axis');
    await noOverflow('explorer?group_by=user,model&window=7d&granularity=day', '.chart.stacked canvas');
    expect(t.errors).toEqual([]);
  });

  it('shows an unpriced model as unpriced, linking to the prices, never as $0.00', async () => {
    const { page } = t.browser;
    await record(t, [{ trace_id: 'mystery-1', provider: 'acme', model: 'mystery-model', tokens_in: 500, tokens_out: 50 }]);
    const stored = (await ok('GET', '/executions/mystery-1')) as { cost_source: string };
    expect(stored.cost_source).toBe('unpriced');
    const stats = await ok('GET', '/stats');
    const mystery = stats.by_model.find((m: { model: string }) => m.model === 'mystery-model');
    expect([mystery.cost, mystery.execution_count, mystery.unpriced_executions]).toEqual([0, 1, 1]);

    await t.open('spend');
    const row = page.locator('tr[data-model="mystery-model"]');
    await row.waitFor();
    await expect(row.locator('td[data-field=cost]').textContent()).resolves.toBe('unpriced');
    await expect(row.locator('a.unpriced').getAttribute('href')).resolves.toBe(`/projects/${PROJECT}/settings#prices`);
    expect(await row.textContent()).not.toContain('$0.00');
    await noOverflow('spend', 'tr[data-model="mystery-model"]');

    await t.open('explorer?group_by=model&window=7d&model=mystery-model');
    await page.locator('table.breakdown tr[data-row] td.cost a.unpriced').waitFor();
    await expect(page.locator('table.breakdown tr[data-row] td.cost').textContent()).resolves.toBe('unpriced');
    expect(t.errors).toEqual([]);
  });

  it("shows no signing secret for a budget without a webhook, and the project's budget on the Budgets page", async () => {
    const { page } = t.browser;
    await t.open('budgets');
    await page.locator('.project-budget .empty h3:has-text("No budget set")').waitFor();
    await page.selectOption('select[name=scope_kind]', 'agent');
    await page.fill('input[name=scope_value]', 'support-bot');
    await page.fill('input[name=amount_usd]', '5');
    await page.click('button:has-text("Create budget")');
    await page.locator('.budget-card:has([data-budget-scope="agent:support-bot"])').waitFor();
    await expect(page.locator('[data-secret]').count()).resolves.toBe(0);
    expect(await page.textContent('body')).not.toContain('copy it now');

    // The monthly project budget, saved in Settings without a webhook: no secret there either.
    await t.open('settings');
    await page.locator('#budget p.muted:has-text("no budget set")').waitFor();
    await page.fill('input[name=budget_monthly_usd]', '40');
    await page.click('button:has-text("Save budget")');
    await page.locator('.saved:has-text("Saved")').waitFor();
    await expect(page.locator('[data-secret]').count()).resolves.toBe(0);
    expect((await ok('GET', '/budget')).budget_monthly_usd).toBe(40);

    await t.open('budgets');
    const project = page.locator('.project-budget');
    await project.locator('svg.gauge').waitFor();
    await expect(project.textContent()).resolves.toContain('$40.00');
    await page.locator('.budget-card:has([data-budget-scope="agent:support-bot"])').waitFor();
    await t.browser.screenshot('budgets-with-project');
    await noOverflow('budgets', '.project-budget svg.gauge');
    expect(t.errors).toEqual([]);
  });

  it("edits a version's model parameters in the prompt editor", async () => {
    const { page } = t.browser;
    await ok('POST', '/prompts/judge/versions', { template: 'Rate {{output}}', config: { model: 'gpt-4o-mini', seed: 7 } });
    await t.open('prompts/judge?tab=edit');
    await expect(page.inputValue('input[name=config_model]')).resolves.toBe('gpt-4o-mini');
    await expect(page.inputValue('textarea[name=config_other]')).resolves.toBe('{\n  "seed": 7\n}');
    await page.fill('input[name=config_model]', 'gpt-4o');
    await page.fill('input[name=config_temperature]', '0.2');
    await page.fill('input[name=config_max_tokens]', '300');
    await page.fill('textarea[name=template]', 'Rate {{output}} strictly');
    await page.click('button:has-text("Save new version")');
    await page.locator('.version-list li[data-version="4"]').waitFor();
    expect((await ok('GET', '/prompts/judge/versions/4')).config).toEqual({ model: 'gpt-4o', temperature: 0.2, max_tokens: 300, seed: 7 });
    await noOverflow('prompts/judge?tab=edit', 'input[name=config_model]');
    expect(t.errors).toEqual([]);
  });
});
