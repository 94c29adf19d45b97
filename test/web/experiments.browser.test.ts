// Experiments and release gates in Chromium (docs/console.md): an experiment started from a
// dataset's page against a loopback OpenAI-compatible model, followed to `done` with its progress
// and items as the API answers them; a second one started from a prompt version ("Run on a
// dataset"), then the two compared on the run comparison page; a slow one cancelled, then resumed
// with a new cost cap; and a protected label: its gate set, a move refused with the API's 409
// detail, an override with its reason, the override in the label history.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { startConsoleTest, type ConsoleTest } from '../helpers/console.ts';
import { startFakeJudge, type FakeJudge } from '../helpers/fake-judge.ts';
import { until } from '../helpers/wait.ts';

const TEST_MS = 180_000;

let t: ConsoleTest;
let model: FakeJudge;
let datasetId: string;
let slowId: string;

// The model doubles the number it is asked about; questions tagged [slow] take a while.
const double = (text: string) => {
  const q = /\[(\w+)] n=(-?\d+)/.exec(text);
  return {
    kind: 'judgement' as const,
    content: String(Number(q?.[2]) * 2),
    promptTokens: 1_000,
    completionTokens: 100,
    delayMs: q?.[1] === 'slow' ? 1_500 : 0,
  };
};

const post = async (path: string, body: unknown) => {
  const r = await t.api(path, { method: 'POST', body });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};
const text = async (selector: string) => (await t.browser.page.locator(selector).first().textContent())?.trim();
/** Page errors other than the refusals the tests provoke on purpose (the gate's 409). */
const unexpected = () => t.errors.filter((e) => !/Failed to load resource: the server responded with a status of 409/.test(e));

async function dataset(name: string, tag: string, n: number): Promise<string> {
  const ds = await post('/datasets', { name });
  await post(
    `/datasets/${ds.dataset_id}/items`,
    Array.from({ length: n }, (_, k) => ({ input: { n: k + 1, tag }, expected_output: String(2 * (k + 1)) })),
  );
  return ds.dataset_id;
}

beforeAll(async () => {
  model = await startFakeJudge((req) => double(req.text), 'exp-model');
  t = await startConsoleTest({
    EVALUATOR_ALLOW_PRIVATE: 'true', // the model is on loopback
    EXPERIMENT_SCAN_INTERVAL_MS: '200',
    EXPERIMENT_BACKOFF_MS: '20',
    ...(mode === 'server' ? { SECRETS_KEY: crypto.randomBytes(32).toString('hex') } : {}),
  });
  const price = await t.api('/models/exp-model', { method: 'PUT', body: { provider: 'openai', input_per_mtok: 2.5, output_per_mtok: 10 } });
  expect(price.status, JSON.stringify(price.body)).toBeLessThan(300);
  await post('/prompts', { prompt_id: 'doubler', type: 'text', template: 'Double [{{tag}}] n={{n}}', labels: ['production'] });
  await post('/model-connections', { name: 'doubling model', base_url: model.baseURL, model: 'exp-model', api_key: 'sk-console-model' });
  datasetId = await dataset('numbers', 'fast', 3);
  slowId = await dataset('slow numbers', 'slow', 4);
}, TEST_MS);

afterAll(async () => {
  await t?.close();
  await model?.close();
});

/** The experiment the page shows, as the API answers it. */
const shown = async () => {
  const m = /\/datasets\/([^/]+)\/experiments\/([^/?]+)/.exec(t.browser.page.url());
  expect(m, t.browser.page.url()).not.toBeNull();
  return (await t.api(`/datasets/${m![1]}/experiments/${m![2]}`)).body;
};

describe(`experiments and release gates in the console (${mode} mode)`, () => {
  it(
    "runs an experiment from a dataset's page to done: its progress, spend and items as the API's",
    async () => {
      const { page } = t.browser;
      await t.open(`datasets/${datasetId}?tab=experiments`);
      await page.locator('.empty h3:has-text("No experiments on this dataset yet")').waitFor();
      await page.fill('.experiment-form input[name=experiment_name]', 'first');
      await page.selectOption('.experiment-form select[name=prompt]', 'doubler');
      await page.selectOption('.experiment-form select[name=version]', 'production');
      await page.click('.experiment-form button.add-check[data-kind=exact_match]');
      await page.click('.experiment-form button.add-check[data-kind=numeric_tolerance]');
      await page.fill('.experiment-form [data-check=numeric_tolerance] input[name=tolerance]', '0.5');
      await page.fill('.experiment-form input[name=max_cost_usd]', '1');
      await page.click('button.start-experiment');
      await page.locator('h1:has-text("first")').waitFor();
      await page.locator('.experiment-status [data-field=status]:has-text("done")').waitFor({ timeout: 60_000 });
      const e = await shown();
      expect(e).toMatchObject({ status: 'done', prompt: { prompt_id: 'doubler', version: 1 }, max_cost_usd: '1' });
      expect(e.checks).toEqual([{ kind: 'exact_match' }, { kind: 'numeric_tolerance', tolerance: 0.5 }]);
      expect(e.progress).toMatchObject({ items: 3, done: 3, failed: 0, pending: 0 });
      expect(await text('.experiment-progress [data-field=progress]')).toBe('3 done · 0 failed · 0 pending of 3');
      expect(await text('.experiment-progress [data-field=spent]')).toBe(`spent $${e.progress.spent_usd} of the $1 cap`);
      expect(e.progress.spent_usd).toBe('0.0105'); // 3 calls of 1,000 in and 100 out at 2.5 / 10 USD per million
      expect(await page.locator('.experiment-status :text("Refreshing every second")').count()).toBe(0);
      const items = (await t.api(`/datasets/${datasetId}/experiments/${e.experiment_id}/items`)).body.items;
      await page.locator('table.experiment-items tr[data-state=done]').nth(2).waitFor();
      expect(await page.locator('table.experiment-items [data-field=output]').allTextContents()).toEqual(['2', '4', '6']);
      expect(await page.locator('table.experiment-items [data-field=cost_usd]').allTextContents()).toEqual(
        items.map((i: any) => `$${i.cost_usd}`),
      );
      await t.browser.screenshot('experiment');

      // Its run: the same run page as any run, with the checks' scores.
      await page.click('a.run-link');
      await page.locator('table.run-items tbody tr').nth(2).waitFor();
      expect(await page.locator('table.run-items [data-field=scores]').first().textContent()).toContain('exact_match: true');
      expect(unexpected()).toEqual([]);
    },
    TEST_MS,
  );

  it(
    'runs a second one from a prompt version (Run on a dataset) and compares the two on the run comparison page',
    async () => {
      const { page } = t.browser;
      await t.open('prompts/doubler');
      await page.click('a.run-on-dataset');
      await page.locator('h1:has-text("Experiments")').waitFor();
      // the pickers fill as their lists load
      await expect.poll(() => page.locator('.experiment-form select[name=prompt]').inputValue(), { timeout: 20_000 }).toBe('doubler');
      await expect.poll(() => page.locator('.experiment-form select[name=version]').inputValue(), { timeout: 20_000 }).toBe('1');
      await page.selectOption('.experiment-form select[name=dataset]', { label: 'numbers (3 items)' });
      await page.fill('.experiment-form input[name=experiment_name]', 'second');
      await page.click('.experiment-form button.add-check[data-kind=contains]');
      await page.click('button.start-experiment');
      await page.locator('h1:has-text("second")').waitFor();
      await page.locator('.experiment-status [data-field=status]:has-text("done")').waitFor({ timeout: 60_000 });
      const second = await shown();

      // The project's list names both, with their dataset.
      await page.click('aside nav a:has-text("Experiments")');
      await page.locator('table.experiments tr[data-experiment=first]').waitFor();
      expect(await page.locator('table.experiments tr[data-experiment=second] td').nth(1).textContent()).toBe('numbers');

      // Compare with…: the first experiment's run, on the run comparison page.
      await page.click('table.experiments tr[data-experiment=second] a:has-text("second")');
      await page.locator('.compare-with select').waitFor();
      await page.selectOption('.compare-with select', { label: 'first · doubler v1 · exp-model' });
      await page.click('button.compare-experiment');
      await page.locator('[data-test=cost_per_item]').waitFor();
      expect(page.url()).toContain(`compare=${second.run_id},`);
      expect(await text('[data-field=paired_items]')).toContain('3 items ran in both');
      await t.browser.screenshot('experiments-compared');
      expect(unexpected()).toEqual([]);
    },
    TEST_MS,
  );

  it(
    'cancels a slow experiment (items left pending), then resumes it with a new cost cap to done',
    async () => {
      const { page } = t.browser;
      await t.open(`datasets/${slowId}?tab=experiments`);
      await page.fill('.experiment-form input[name=experiment_name]', 'slow one');
      await page.selectOption('.experiment-form select[name=prompt]', 'doubler');
      await page.fill('.experiment-form input[name=concurrency]', '1');
      await page.click('button.start-experiment');
      await page.locator('h1:has-text("slow one")').waitFor();
      page.once('dialog', (d) => void d.accept());
      await page.click('button.cancel-experiment');
      await page.locator('.experiment-status [data-field=status]:has-text("cancelled")').waitFor({ timeout: 30_000 });
      const cancelled = await until(async () => {
        const e = await shown();
        return e.status === 'cancelled' && e.progress.pending + e.progress.done + e.progress.failed === 4 && e;
      }, 'the cancelled experiment');
      expect(cancelled.progress.pending).toBeGreaterThan(0);
      await page.locator(`.experiment-progress [data-field=progress]:has-text("${cancelled.progress.pending} pending of 4")`).waitFor();
      await t.browser.screenshot('experiment-cancelled');

      await page.fill('.resume input[name=new_cap]', '2');
      await page.click('button.resume-experiment');
      await page.locator('.experiment-status [data-field=status]:has-text("done")').waitFor({ timeout: 60_000 });
      const done = await shown();
      expect(done).toMatchObject({ status: 'done', max_cost_usd: '2', progress: { items: 4, done: 4, pending: 0 } });
      expect(await text('.experiment-progress [data-field=progress]')).toBe('4 done · 0 failed · 0 pending of 4');
      expect(await text('.experiment-progress [data-field=spent]')).toBe(`spent $${done.progress.spent_usd} of the $2 cap`);
      expect(unexpected()).toEqual([]);
    },
    TEST_MS,
  );

  it('protects a label, shows a refused move with the 409 detail, overrides it with a reason, and lists it in the history', async () => {
    const { page } = t.browser;
    await post('/prompts/doubler/versions', { template: 'Twice [{{tag}}] n={{n}}' });
    await t.open('prompts/doubler');
    const row = page.locator('tr[data-label=production]');
    await row.waitFor();
    expect(await row.getAttribute('data-protected')).toBe('false');
    await row.locator('button.edit-gate').click();
    await page.selectOption('.gate-form select[name=gate_dataset]', { label: 'numbers' });
    await page.fill('.gate-form input[name=gate_scores]', 'exact_match');
    await page.fill('.gate-form input[name=gate_cost]', '10');
    await page.click('button.save-gate');
    await page.locator('tr[data-label=production][data-protected=true]').waitFor();
    // The dataset is named once the page's list of datasets is read (the id shows until then).
    await expect
      .poll(() => text('tr[data-label=production] [data-field=gate]'))
      .toBe('protected evidence from numbers · scores exact_match ↑ · alpha 0.05 · cost per item at most +10 %');

    // Moving it to v2: the check first (no run names v2), then the refusal with the API's detail.
    await page.selectOption('select[name=label-production]', '2');
    await row.locator('button:has-text("Check and move")').click();
    await page.locator('.gate-move [data-field=gate_verdict]:has-text("the gate refuses")').waitFor();
    const check = (await t.api('/prompts/doubler/labels/production/gate/check?version=2')).body;
    expect(check.passed).toBe(false);
    for (const c of check.conditions) {
      const sel = `.gate-conditions tr[data-condition="${c.score ? `${c.condition}:${c.score}` : c.condition}"]`;
      expect(await page.locator(sel).getAttribute('data-status')).toBe(c.status);
      expect(await page.locator(`${sel} td`).nth(2).textContent()).toContain(c.detail);
    }
    expect(await page.locator('.gate-move button.approve').count()).toBe(0); // dev mode: the caller wrote the version
    await page.click('button.gated-move');
    await page.locator('.gate-move .error:has-text("Move refused")').waitFor();
    const refused = await t.api('/prompts/doubler/labels/production', { method: 'PUT', body: { version: 2 } });
    expect(refused.status).toBe(409);
    expect(await text('.gate-move .error .detail')).toBe(refused.body.detail);
    expect(await text('.gate-move .error .status')).toBe('(HTTP 409)');
    await t.browser.screenshot('label-gate-refused');

    // The override, with its reason: the label moves, the history says so.
    expect(await page.locator('button.override-move').isDisabled()).toBe(true);
    await page.fill('.override input[name=override_reason]', 'hotfix: evidence run tomorrow');
    await page.click('button.override-move');
    await page.locator('tr[data-label=production] td:has-text("→ v2")').waitFor();
    const event = page.locator('.label-history tr[data-event=overridden]');
    await event.waitFor();
    expect(await event.locator('[data-field=reason]').textContent()).toBe('hotfix: evidence run tomorrow');
    expect(await event.locator('td').nth(3).textContent()).toBe('v1 → v2');
    await page.locator('.label-history tr[data-event=gate_set]').waitFor();
    const events = (await t.api('/prompts/doubler/label-events')).body.items;
    expect(events[0]).toMatchObject({ action: 'overridden', from_version: 1, to_version: 2, reason: 'hotfix: evidence run tomorrow' });
    expect(await page.locator('.label-history tr[data-event]').count()).toBe(events.length);
    await t.browser.screenshot('label-history');
    expect(unexpected()).toEqual([]);
  });
});
