// Datasets, runs and evaluators in Chromium: a dataset created and a CSV with one bad line
// imported (the kept count and the bad line's number shown, the export downloaded); "Add to
// dataset" from an execution's page, the item then on the dataset's page; two runs compared item
// by item with the same figures and tests as the API's compare answer; and the evaluators page
// with its status counts, last error, pause and resume (against the loopback judge).
import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';
import { connectJudge, startFakeJudge, verdict, type FakeJudge } from '../helpers/fake-judge.ts';
import { until } from '../helpers/wait.ts';
import { figure, pText, signedDuration, signedFigure, signedUsd } from '../../web/src/format.ts';

let t: ConsoleTest;
let judge: FakeJudge;
beforeAll(async () => {
  // A judgement for every execution, except a malformed answer for the one that asks for it.
  judge = await startFakeJudge((req) =>
    req.text.includes('malformed') ? { kind: 'judgement', content: 'rather good, I think' } : verdict(0.75, 'clear answer'),
  );
  t = await startConsoleTest({
    EVALUATOR_ALLOW_PRIVATE: 'true', // the judge is on loopback
    EVALUATOR_SCAN_INTERVAL_MS: '250',
    ...(mode === 'server' ? { SECRETS_KEY: crypto.randomBytes(32).toString('hex') } : {}),
  });
});
afterAll(async () => {
  await judge?.close();
  await t?.close();
});

const post = async (path: string, body: unknown) => {
  const r = await t.api(path, { method: 'POST', body });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};
const text = async (selector: string) => (await t.browser.page.locator(selector).first().textContent())?.trim();

describe(`datasets, runs and evaluators in the console (${mode} mode)`, () => {
  it('creates a dataset, imports a CSV with one bad line: the kept count and the bad line number shown', async () => {
    const { page } = t.browser;
    await t.open('datasets');
    await page.locator('.empty h3:has-text("No datasets yet")').waitFor();
    await page.fill('input[name=name]', 'capitals');
    await page.click('button:has-text("Create dataset")');
    await page.locator('h1:has-text("capitals")').waitFor();
    await page.locator('.empty h3:has-text("No items yet")').waitFor();
    const csv = 'input,expected_output\nFrance,Paris\nItaly,Rome,extra\nSpain,Madrid\n';
    await page.setInputFiles('.import input[type=file]', { name: 'items.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.click('.import button:has-text("Import")');
    await page.locator('.import-result').waitFor();
    expect(await text('.import-result [data-field=imported]')).toBe('2');
    expect(await text('.import-result [data-field=rejected_count]')).toBe('1');
    expect(await page.locator('.import-result tr[data-line]').count()).toBe(1);
    expect(await text('.import-result tr[data-line="3"] td:last-child')).toBe('3 fields where the header has 2');
    await page.locator('table.dataset-items tbody tr').nth(1).waitFor();
    expect(await page.locator('table.dataset-items [data-field=input]').allTextContents()).toEqual(['France', 'Spain']);
    expect(await page.locator('table.dataset-items [data-field=expected_output]').allTextContents()).toEqual(['Paris', 'Madrid']);
    await t.browser.screenshot('dataset-import');

    // The export: the two items as JSON Lines.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Export JSON Lines")')]);
    const lines = fs
      .readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.input, l.expected_output])).toEqual([
      ['France', 'Paris'],
      ['Spain', 'Madrid'],
    ]);
    expect(t.errors).toEqual([]);
  });

  it("adds an execution to a dataset from the execution's page; the item is then on the dataset's page", async () => {
    const { page } = t.browser;
    await record(t, [
      {
        trace_id: 'exec-peru',
        conversation_history: [
          { role: 'user', content: 'What is the capital of Peru?' },
          { role: 'assistant', content: 'Lima' },
        ],
      },
    ]);
    await t.open('executions/exec-peru');
    await page.locator('.add-to-dataset select').waitFor();
    await page.selectOption('.add-to-dataset select', { label: 'capitals' });
    await page.click('.add-to-dataset button:has-text("Add to dataset")');
    const itemId = await page.locator('[data-added-item]').getAttribute('data-added-item');
    expect(itemId).toBeTruthy();
    await t.browser.screenshot('execution-add-to-dataset');
    await page.click('[data-added-item] a:has-text("capitals")');
    const row = page.locator(`table.dataset-items tr[data-item-id="${itemId}"]`);
    await row.waitFor();
    expect(await row.locator('[data-field=input]').textContent()).toContain('What is the capital of Peru?');
    expect(await row.locator('[data-field=expected_output]').textContent()).toBe('Lima');
    expect(await row.locator('a.mono').textContent()).toBe('exec-peru');
    expect(t.errors).toEqual([]);
  });

  it("compares two runs item by item with the API's compare answer: the same figures, the test named", async () => {
    const { page } = t.browser;
    const ds = await post('/datasets', { name: 'compared' });
    const items = (await post(`/datasets/${ds.dataset_id}/items`, [{ input: 'q1' }, { input: 'q2' }, { input: 'q3' }])).items;
    const runs = [
      await post(`/datasets/${ds.dataset_id}/runs`, { name: 'v7' }),
      await post(`/datasets/${ds.dataset_id}/runs`, { name: 'v8' }),
    ];
    const costs = [
      ['0.0012', '0.0009'],
      ['0.0031', '0.0022'],
      ['0.0007', '0.0008'],
    ];
    const quality = [
      [0.5, 0.75],
      [0.25, 0.5],
      [0.75, 0.75],
    ];
    for (const [i, item] of items.entries())
      for (const r of [0, 1]) {
        const traceId = `cmp-${i}-${r}`;
        await record(t, [
          {
            trace_id: traceId,
            cost_usd: Number(costs[i]![r]),
            latency_ms: 100 + 40 * i + 25 * r * (i + 1),
            conversation_history: [
              { role: 'user', content: `q${i + 1}` },
              { role: 'assistant', content: `answer ${i}-${r}` },
            ],
          },
        ]);
        await post(`/datasets/${ds.dataset_id}/runs/${runs[r].run_id}/items`, { item_id: item.item_id, trace_id: traceId });
        await post('/scores', { trace_id: traceId, name: 'quality', value: quality[i]![r] });
      }
    const compare = `/datasets/${ds.dataset_id}/runs/compare?runs=${runs[0].run_id},${runs[1].run_id}`;
    const api = (await until(async () => {
      const r = (await t.api(compare)).body;
      return r.comparison?.paired_items === 3 && Object.keys(r.comparison.scores).length === 1 && r;
    }, 'the runs joined to their executions and scores')) as any;

    // From the runs table: tick both, compare.
    await t.open(`datasets/${ds.dataset_id}?tab=runs`);
    await page.check('tr[data-run="v7"] input[type=checkbox]');
    await page.check('tr[data-run="v8"] input[type=checkbox]');
    await page.click('button.compare-runs');
    await page.locator('[data-test=cost_per_item]').waitFor();
    expect(await text('[data-field=paired_items]')).toContain('3 items ran in both');
    // Shown with the console's helpers (web/src/format.ts): signed money, durations, figures; p with two digits.
    const tests: Array<[string, any, (v: number) => string, string]> = [
      ['cost_per_item', api.comparison.cost_per_item, signedUsd, 'the difference in cost per item'],
      ['latency_ms', api.comparison.latency_ms, signedDuration, 'the difference in latency'],
      ['score:quality', api.comparison.scores.quality, signedFigure, 'the difference of means'],
    ];
    for (const [name, expected, show, of] of tests) {
      const box = `[data-test="${name}"]`;
      expect(expected.test).toBe('paired_t');
      expect(await page.locator(`${box} [data-field=test]`).getAttribute('data-test-name')).toBe('paired_t');
      expect(await text(`${box} [data-field=test]`)).toBe('paired t-test, n = 3');
      expect(await text(`${box} [data-field=difference]`)).toBe(show(expected.difference));
      expect(expected.ci, name).not.toBeNull();
      expect(await text(`${box} [data-field=ci]`)).toBe(`95 % interval of ${of}: ${show(expected.ci.low)} to ${show(expected.ci.high)}`);
      expect(await text(`${box} [data-field=p_value]`)).toMatch(new RegExp(`^${pText(expected.p_value).replace('.', '\\.')} `));
      expect(await text(`${box} [data-field=verdict]`)).toBe(expected.verdict);
    }
    // The totals of each side and every item's cost, latency and scores, as the API sent them.
    const totals = page.locator('.run-totals');
    for (const [i, side] of api.runs.entries()) {
      expect(await totals.nth(i).locator('[data-field=total_usd]').textContent()).toBe(`$${side.totals.cost.total_usd}`);
      expect(await totals.nth(i).locator('[data-score=quality]').textContent()).toContain(
        `mean ${figure(side.totals.scores.quality.mean)}`,
      );
    }
    for (const row of api.items) {
      const cells = page.locator(`table.compare-items tr[data-item-id="${row.item_id}"]`);
      expect(await cells.locator('[data-field=cost_usd]').allTextContents()).toEqual([
        `$${row.a.execution.cost_usd}`,
        `$${row.b.execution.cost_usd}`,
      ]);
      expect(await cells.locator('[data-field=output]').allTextContents()).toEqual([row.a.execution.output, row.b.execution.output]);
      expect(await cells.locator('[data-field=scores]').allTextContents()).toEqual([
        `quality: ${figure(row.a.scores.quality.value)}`,
        `quality: ${figure(row.b.scores.quality.value)}`,
      ]);
    }
    await t.browser.screenshot('dataset-runs-compare');

    // One run's page: its items with their execution links and totals.
    await page.click('a.back:has-text("Runs")');
    await page.click('tr[data-run="v8"] a:has-text("v8")');
    await page.locator('table.run-items tbody tr').nth(2).waitFor();
    const run = (await t.api(`/datasets/${ds.dataset_id}/runs/${runs[1].run_id}`)).body;
    expect(await text('.run-totals [data-field=total_usd]')).toBe(`$${run.totals.cost.total_usd}`);
    expect(await page.locator('table.run-items [data-field=cost_usd]').allTextContents()).toEqual(
      run.items.map((i: any) => `$${i.execution.cost_usd}`),
    );
    expect(await page.locator('table.run-items a.mono').allTextContents()).toEqual(['cmp-0-1', 'cmp-1-1', 'cmp-2-1']);
    await t.browser.screenshot('dataset-run');
    expect(t.errors).toEqual([]);
  });

  it('shows each evaluator with its status counts and last error; pauses and resumes it', async () => {
    const { page } = t.browser;
    await t.open('evaluators');
    await page.locator('.empty h3:has-text("No evaluators yet")').waitFor();
    await post('/prompts', { prompt_id: 'judge', type: 'text', template: 'Rate this answer: {{output}}', labels: ['production'] });
    await post('/score-configs', { name: 'helpfulness', data_type: 'NUMERIC', min_value: 0, max_value: 1 });
    const connectionId = await connectJudge((method, path, body) => t.api(path, { method, body }), judge, 'sk-console-judge');
    const ev = await post('/evaluators', {
      name: 'helpful',
      prompt_id: 'judge',
      connection_id: connectionId,
      score_name: 'helpfulness',
      target: { kind: 'executions', filter: { agent_id: ['judged-bot'] }, sampling_rate: 1 },
      max_daily_cost_usd: 5,
    });
    const answers = ['Lima', 'Paris', 'malformed on purpose'];
    await record(
      t,
      answers.map((a, i) => ({
        trace_id: `judged-${i}`,
        agent_id: 'judged-bot',
        conversation_history: [
          { role: 'user', content: `question ${i}` },
          { role: 'assistant', content: a },
        ],
      })),
    );
    const status = await until(async () => {
      const s = (await t.api(`/evaluators/${ev.evaluator_id}`)).body.status;
      return s.done + s.failed === 3 && s;
    }, 'the three judgements');
    expect(status).toMatchObject({ queued: 0, done: 2, failed: 1 });

    await page.reload();
    const row = page.locator('tr[data-evaluator="helpful"]');
    await row.waitFor();
    expect(await row.locator('[data-field=queued]').textContent()).toBe('0');
    expect(await row.locator('[data-field=done]').textContent()).toBe('2');
    expect(await row.locator('[data-field=failed]').textContent()).toBe('1');
    expect(await row.locator('[data-field=last_error] .error-text').textContent()).toBe(status.last_error);
    expect(status.last_error).toMatch(/^malformed judge output/);
    expect(await row.locator('.badge').textContent()).toBe('active');
    expect(await row.locator('text=daily judge budget').textContent()).toBe('daily judge budget $5');
    await t.browser.screenshot('evaluators');

    await row.locator('button:has-text("Pause")').click();
    await row.locator('.badge:has-text("paused")').waitFor();
    expect((await t.api(`/evaluators/${ev.evaluator_id}`)).body.paused).toBe(true);
    await row.locator('button:has-text("Resume")').click();
    await row.locator('.badge:has-text("active")').waitFor();
    expect((await t.api(`/evaluators/${ev.evaluator_id}`)).body.paused).toBe(false);
    expect(t.errors).toEqual([]);
  });
});
