// The comparison pages in Chromium (issue 43, points 5–7): the version comparison opens on the
// production version against the newest version with executions (a newer one nobody ran is
// skipped), formats p, rates, durations and money with the console's helpers, speaks of cost as
// cost and says "not significant" and why, and links each group to its executions; with one
// version of data it says so and waits for a pick. The run comparison shows the same formats, the
// not-significant McNemar case with an interval excluding 0 explained, and long outputs collapsed.
// "Roll back" confirms first, says what it does, can move production (a gate's 409 shown), and
// says the outcome. At 1440 and 390 px wide no page scrolls sideways.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';
import { until } from '../helpers/wait.ts';
import { duration, figure, pText, rate, signedPoints, signedUsd, usd } from '../../web/src/format.ts';

let t: ConsoleTest;
beforeAll(async () => {
  t = await startConsoleTest();
});
afterAll(async () => {
  await t?.close();
});

const ok = async (path: string, body: unknown, method = 'POST') => {
  const r = await t.api(path, { method, body });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};
const text = async (selector: string) => (await t.browser.page.locator(selector).first().textContent())?.trim();
/** Page errors other than the refusal the rollback test provokes on purpose (the gate's 409). */
const unexpected = () => t.errors.filter((e) => !/Failed to load resource: the server responded with a status of 409/.test(e));

/**
 * At 1440 and 390 px wide, the page does not scroll sideways (wide tables scroll inside their
 * wrapper). The navigation's own narrow layout belongs to the shell (styles' layout, tested with
 * it): it is hidden here, so what is measured is this page's content against the viewport.
 */
async function noSidewaysScroll(ready: string) {
  const { page } = t.browser;
  // Through the CSSOM: the console's CSP refuses inline style sheets.
  await page.evaluate(() => document.querySelector<HTMLElement>('.shell > aside')?.style.setProperty('display', 'none'));
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.locator(ready).first().waitFor();
    const [scroll, client, wide] = await page.evaluate(() => {
      const c = document.documentElement.clientWidth;
      // The outermost elements reaching past the right edge, to name the culprit when this fails.
      const past = [...document.querySelectorAll('body *')].filter(
        (e) => e.getBoundingClientRect().right > c + 1 && !(e.parentElement && e.parentElement.getBoundingClientRect().right > c + 1),
      );
      return [
        document.documentElement.scrollWidth,
        c,
        past
          .slice(0, 5)
          .map((e) => `${e.tagName.toLowerCase()}.${e.className}`)
          .join(', '),
      ];
    });
    expect(scroll, `scrollWidth at ${width} px (${wide})`).toBeLessThanOrEqual(client as number);
  }
  await page.setViewportSize({ width: 1360, height: 900 });
}

describe(`comparison pages (${mode} mode)`, () => {
  it('opens on production against the newest version with executions, formats figures, speaks of cost as cost, links the groups', async () => {
    const { page } = t.browser;
    // v1..v4; production on v2; executions of v1, v2 and v3; v4 has none.
    await ok('/prompts', { prompt_id: 'reply', type: 'text', template: 'Reply v1 to {{q}}', labels: ['production'] });
    for (const v of [2, 3, 4]) await ok('/prompts/reply/versions', { template: `Reply v${v} to {{q}}` });
    await ok('/prompts/reply/labels/production', { version: 2 }, 'PUT');
    const scores: object[] = [];
    const plan: Array<[number, number[], number[], boolean[]]> = [
      // version, costs (close means, wide spread: the cost test finds nothing), quality, helpful
      [1, [0.00002, 0.00003], [0.5, 0.6], [true, false]],
      [2, [0.00002, 0.00006, 0.00001, 0.00005], [0.4, 0.5, 0.45, 0.5], [true, true, false, true]],
      [3, [0.00003, 0.00005, 0.00002, 0.00006], [0.8, 0.85, 0.9, 0.82], [true, false, true, false]],
    ];
    for (const [version, costs, quality, helpful] of plan)
      for (const [i, cost] of costs.entries()) {
        const id = `reply-v${version}-${i}`;
        await record(t, [{ trace_id: id, cost_usd: cost, latency_ms: 1262 + 10 * i, template_usages: [{ prompt_id: 'reply', version }] }]);
        scores.push({ trace_id: id, name: 'quality', value: quality[i] }, { trace_id: id, name: 'helpful', value: helpful[i] });
        // "tone" only on v3: v2 has no scores of it.
        if (version === 3) scores.push({ trace_id: id, name: 'tone', value: 0.7 });
      }
    await ok('/scores', scores);
    const expected = (await until(async () => {
      const r = (await t.api('/prompts/reply/compare?versions=2,3')).body;
      return r.groups?.[1]?.scores?.tone && r.groups[0].scores.helpful && r;
    }, 'the scores in the comparison')) as any;

    // A dataset run that tested v3: the group links to it.
    const ds = await ok('/datasets', { name: 'replies' });
    const run = await ok(`/datasets/${ds.dataset_id}/runs`, { name: 'v3 on replies', prompts: [{ prompt_id: 'reply', version: 3 }] });

    await t.open('prompts/reply?tab=compare');
    await page.locator('.group-b h2').waitFor();
    expect(await text('.group-a h2')).toBe('a: v2');
    expect(await text('.group-b h2')).toBe('b: v3');
    const url = new URL(page.url());
    expect([url.searchParams.get('a'), url.searchParams.get('b')]).toEqual([null, null]);
    // v4, newer but never run, is offered with its count, not opened on.
    expect(await page.locator('select[name=compare-b] option[value="4"]').textContent()).toBe('v4 (0 executions)');
    expect(await page.locator('select[name=compare-a] option[value="2"]').textContent()).toBe('v2 · production (4 executions)');

    // Figures with the console's helpers: rates as %, durations, p with two significant digits.
    const [ga, gb] = expected.groups;
    expect(await text('.group-a tr[data-score=helpful] td.mean')).toBe(rate(ga.scores.helpful.rate));
    expect(await text('.group-a tr[data-score=helpful] td.mean')).toBe('75 %');
    expect(await text('.group-b tr[data-score=quality] td.mean')).toBe(figure(gb.scores.quality.mean));
    expect(await text('.group-a [data-field=latency]')).toBe(`p50 ${duration(ga.latency_ms.p50)} · p95 ${duration(ga.latency_ms.p95)}`);
    expect(await text('.group-a [data-field=latency]')).toMatch(/^p50 1\.2\d s/);
    const quality = expected.comparison.scores.quality;
    expect(await text('.difference[data-score=quality] [data-field=p_value]')).toMatch(new RegExp(`^${pText(quality.p_value)} `));
    expect(await text('.difference[data-score=quality] [data-field=p_value]')).not.toMatch(/\d{5}/);
    const helpful = expected.comparison.scores.helpful;
    expect(await text('.difference[data-score=helpful] [data-field=difference]')).toBe(signedPoints(helpful.difference));
    expect(await text('.difference[data-score=helpful] [data-field=ci]')).toMatch(/^95 % interval of the difference of rates: .+ points$/);

    // Verdicts: cost as cost, never "scores … higher"; no "costs N % more" beside a cost test that finds nothing.
    const cost = expected.comparison.cost_per_execution;
    expect(cost.significant).toBe(false);
    expect(cost.verdict).toMatch(
      /^v3 costs \$[\d.]+ (more|less) per execution \(95 % CI .+, Welch's t-test p = [\d.]+\), not significant: p ≥ 0\.05/,
    );
    expect(await text('.difference[data-score=cost] [data-field=verdict]')).toBe(cost.verdict);
    expect(await text('.difference[data-score=cost] [data-field=difference]')).toBe(signedUsd(cost.difference));
    expect(await text('.difference[data-score=cost] [data-field=p_value]')).toContain('not significant');
    expect(quality.verdict).toMatch(/; the cost difference is not significant$/);
    expect(quality.verdict).not.toMatch(/costs \d+ %/);
    expect(await text('.difference[data-score=quality] .verdict')).toBe(`quality: ${quality.verdict}`);
    expect(expected.comparison.scores.tone.verdict).toBe('v3 cannot be compared with v2: v2 has no scores');
    expect(await text('.difference[data-score=tone] .verdict')).toBe('tone: v3 cannot be compared with v2: v2 has no scores');
    if (!helpful.significant) expect(helpful.verdict).toMatch(/not significant: p ≥ 0\.05/);
    await t.browser.screenshot('compare-pages-prompt-compare');
    await noSidewaysScroll('.group-b h2');

    // Each group links to the dataset runs that tested its version, and to its executions.
    await page.locator('.group-b [data-field=runs] a.run-link').waitFor();
    expect(await text('.group-a [data-field=runs]')).toBe('none yet');
    expect(await page.locator('.group-b [data-field=runs] a.run-link').allTextContents()).toEqual(['v3 on replies']);
    expect(await page.locator('.group-b [data-field=runs] a.run-link').getAttribute('href')).toBe(
      `/projects/default/datasets/${ds.dataset_id}?tab=runs&run=${run.run_id}`,
    );
    // The executions: the list filtered by prompt and version over the window.
    expect(await text('.group-b a.executions-link')).toBe('4 executions →');
    await page.click('.group-b a.executions-link');
    await page.locator('tr[data-trace-id="reply-v3-0"]').waitFor();
    const listed = new URL(page.url()).searchParams;
    expect([listed.get('prompt_id'), listed.get('prompt_version')]).toEqual(['reply', '3']);
    expect(await page.inputValue('form.filters input[name=prompt_version]')).toBe('3');
    expect(
      (await page.locator('tr[data-trace-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id')))).sort(),
    ).toEqual(['reply-v3-0', 'reply-v3-1', 'reply-v3-2', 'reply-v3-3']);
    // The API's filter itself: the version needs its prompt.
    expect((await t.api('/executions?prompt_id=reply&prompt_version=2')).body.items).toHaveLength(4);
    expect((await t.api('/executions?prompt_version=2')).status).toBe(400);
    expect(unexpected()).toEqual([]);
  });

  it('with one version of data it says so and waits for a pick; a pick compares', async () => {
    const { page } = t.browser;
    await ok('/prompts', { prompt_id: 'lonely', type: 'text', template: 'one', labels: ['production'] });
    await ok('/prompts/lonely/versions', { template: 'two' });
    await record(t, [{ trace_id: 'lonely-1', cost_usd: 0.00001, latency_ms: 40, template_usages: [{ prompt_id: 'lonely', version: 1 }] }]);
    await until(async () => (await t.api('/prompts/lonely/analytics')).body.total_executions === 1, 'the execution counted');
    await t.open('prompts/lonely?tab=compare');
    await page.locator('.empty h3:has-text("Only one version has executions")').waitFor();
    expect(await text('.too-few')).toContain('Only v1 has executions in the last 30 days');
    expect(await page.locator('.group-a').count()).toBe(0);
    await page.selectOption('select[name=compare-a]', '1');
    await page.locator('.group-b h2').waitFor();
    expect(await text('.group-a h2')).toBe('a: v1');
    expect(await text('.group-b h2')).toBe('b: v2');
    expect(await text('.group-b [data-field=executions]')).toBe('0');
    expect(unexpected()).toEqual([]);
  });

  it('compares runs with the same formats: p, points, durations, cost as cost, the interval explained; long text collapses', async () => {
    const { page } = t.browser;
    const ds = await ok('/datasets', { name: 'pairs' });
    const items = (
      await ok(
        `/datasets/${ds.dataset_id}/items`,
        Array.from({ length: 6 }, (_, k) => ({ input: `question ${k + 1}` })),
      )
    ).items;
    const runs = [
      await ok(`/datasets/${ds.dataset_id}/runs`, { name: 'v3-base' }),
      await ok(`/datasets/${ds.dataset_id}/runs`, { name: 'v4-candidate' }),
    ];
    // correct: both true on items 1 and 6, true under b only on items 2–5 (McNemar p = 0.125; the Wald interval excludes 0).
    const correct = [
      [true, true],
      [false, true],
      [false, true],
      [false, true],
      [false, true],
      [true, true],
    ];
    const long = `${'A long answer line that goes on. '.repeat(12)}\n`.repeat(20);
    for (const [i, item] of items.entries())
      for (const r of [0, 1]) {
        const id = `pair-${i}-${r}`;
        await record(t, [
          {
            trace_id: id,
            cost_usd: [0.00021, 0.00023][r]! + i * 0.000001 * (r + 1),
            latency_ms: 1262 + 30 * i + 50 * r,
            conversation_history: [
              { role: 'user', content: `question ${i + 1}` },
              { role: 'assistant', content: i === 0 && r === 1 ? long : `answer ${i}-${r}` },
            ],
          },
        ]);
        await ok(`/datasets/${ds.dataset_id}/runs/${runs[r].run_id}/items`, { item_id: item.item_id, trace_id: id });
        await ok('/scores', { trace_id: id, name: 'correct', value: correct[i]![r] });
      }
    const compare = `/datasets/${ds.dataset_id}/runs/compare?runs=${runs[0].run_id},${runs[1].run_id}`;
    const api = (await until(async () => {
      const r = (await t.api(compare)).body;
      return r.comparison?.paired_items === 6 && r.comparison.scores.correct?.n === 6 && r;
    }, 'the runs joined')) as any;
    const c = api.comparison.scores.correct;
    expect([c.test, c.p_value, c.significant]).toEqual(['mcnemar_exact', 0.125, false]);
    expect(c.ci.low).toBeGreaterThan(0);
    expect(c.verdict).toMatch(
      /McNemar's exact test p = 0\.13\), not significant: p ≥ 0\.05 by the test, which decides \(its approximate interval excludes 0\)(;|$)/,
    );
    expect(api.comparison.cost_per_item.verdict).toMatch(/^v4-candidate costs \$[\d.]+ more per item/);

    await t.open(`datasets/${ds.dataset_id}?tab=runs&compare=${runs[0].run_id},${runs[1].run_id}`);
    const box = '[data-test="score:correct"]';
    await page.locator(`${box} [data-field=verdict]`).waitFor();
    expect(await text(`${box} [data-field=verdict]`)).toBe(c.verdict);
    expect(await text(`${box} [data-field=p_value]`)).toMatch(/^p = 0\.13 not significant p ≥ 0\.05$/);
    expect(await text(`${box} [data-field=difference]`)).toBe('+66.7 points');
    expect(await text(`${box} [data-field=ci]`)).toMatch(/^95 % interval of the difference of rates: \+\d+(\.\d)? to \+\d+(\.\d)? points$/);
    expect(await text('[data-test=cost_per_item] [data-field=verdict]')).toBe(api.comparison.cost_per_item.verdict);
    expect(await text('[data-test=cost_per_item] [data-field=difference]')).toBe(signedUsd(api.comparison.cost_per_item.difference));
    expect(await text('[data-test=latency_ms] [data-field=difference]')).toBe('+50 ms');
    // Durations as durations, rates as percentages, in the totals and the items.
    const totals = page.locator('.run-totals');
    expect(await totals.nth(0).locator('[data-field=latency]').textContent()).toBe(
      `p50 ${duration(api.runs[0].totals.latency_ms.p50)} · p95 ${duration(api.runs[0].totals.latency_ms.p95)}`,
    );
    expect(await totals.nth(0).locator('[data-score=correct]').textContent()).toMatch(/^rate 33\.3 % \(95 % interval of the rate: /);
    const first = page.locator(`table.compare-items tr[data-item-id="${items[0].item_id}"]`);
    expect(await first.locator('[data-field=latency_ms]').allTextContents()).toEqual(['1.26 s', '1.31 s']);
    expect(await first.locator('[data-field=cost_usd]').first().textContent()).toBe(`$${api.items[0].a.execution.cost_usd}`);
    expect(usd(api.items[0].a.execution.cost_usd)).toBe('$0.00021');
    await t.browser.screenshot('compare-pages-run-compare');
    // The long output is collapsed behind a toggle, and opens.
    const toggle = first.locator('button.toggle-cell');
    expect(await toggle.textContent()).toMatch(/^show all \([\d,]+ characters, 21 lines\)$/);
    expect(await first.locator('.cell-wrap.collapsed').count()).toBe(1);
    await toggle.click();
    await expect.poll(() => first.locator('.cell-wrap.collapsed').count()).toBe(0);
    await expect.poll(() => toggle.textContent()).toBe('show less');
    // Input and output columns keep a readable width.
    const outputWidth = await first
      .locator('pre[data-field=output]')
      .first()
      .evaluate((e) => e.getBoundingClientRect().width);
    expect(outputWidth).toBeGreaterThanOrEqual(150);
    await noSidewaysScroll('[data-test=cost_per_item]');
    expect(unexpected()).toEqual([]);
  });

  it('rolls back after a confirmation that says what happens; moves production on request; a gate refusal shown', async () => {
    const { page } = t.browser;
    await ok('/prompts', { prompt_id: 'rb', type: 'text', template: 'first', labels: ['production'] });
    await ok('/prompts/rb/versions', { template: 'second' });
    await ok('/prompts/rb/versions', { template: 'third' });
    await ok('/prompts/rb/labels/production', { version: 3 }, 'PUT');

    // Without the checkbox: v4 with v1's content; production stays on v3, and the message says so.
    await t.open('prompts/rb?version=1');
    await page.click('button.rollback');
    const dialog = page.locator('dialog.rollback-dialog');
    await dialog.waitFor();
    expect(await dialog.locator('[data-field=what]').textContent()).toContain("This creates v4 with v1's template and config");
    expect(await dialog.locator('[data-field=labels]').textContent()).toContain('Labels stay where they are: production → v3');
    await t.browser.screenshot('compare-pages-rollback-confirm');
    await noSidewaysScroll('dialog.rollback-dialog');
    await dialog.locator('button.confirm-rollback').click();
    await page.locator('.rollback-message').waitFor();
    expect(await text('.rollback-message')).toContain("Created v4 with v1's content. Labels: production → v3.");
    expect(await text('.rollback-message')).toContain('No label moved: to serve v4, move a label in Labels below.');
    let p = (await t.api('/prompts/rb')).body;
    expect([p.latest_version, p.labels.production]).toEqual([4, 3]);

    // Cancel does nothing.
    await t.open('prompts/rb?version=2');
    await page.click('button.rollback');
    await dialog.locator('button:has-text("Cancel")').click();
    await dialog.waitFor({ state: 'detached' });
    expect((await t.api('/prompts/rb')).body.latest_version).toBe(4);

    // With the checkbox: v5 with v2's content, production moved to it.
    await page.click('button.rollback');
    await dialog.locator('input[name=move-label]').check();
    expect(await text('dialog.rollback-dialog button.confirm-rollback')).toBe('Create v5 and move production');
    await dialog.locator('button.confirm-rollback').click();
    await page.locator('.rollback-message').waitFor();
    expect(await text('.rollback-message')).toContain("Created v5 with v2's content. production now points to v5");
    p = (await t.api('/prompts/rb')).body;
    expect([p.latest_version, p.labels.production]).toEqual([5, 5]);
    await page.locator('tr[data-label=production] td:has-text("→ v5")').waitFor();
    await t.browser.screenshot('compare-pages-rollback-moved');

    // A release gate on production refuses the move: v6 is created, production stays, the 409's detail shown.
    const ds = await ok('/datasets', { name: 'rb-gate' });
    await ok('/prompts/rb/labels/production/gate', { dataset_id: ds.dataset_id }, 'PUT');
    await t.open('prompts/rb?version=1');
    await page.click('button.rollback');
    await dialog.locator('input[name=move-label]').check();
    await dialog.locator('[data-field=gated]').waitFor();
    await dialog.locator('button.confirm-rollback').click();
    await page.locator('.rollback-message.warn').waitFor();
    p = (await t.api('/prompts/rb')).body;
    expect([p.latest_version, p.labels.production]).toEqual([6, 5]);
    const refused = await t.api('/prompts/rb/labels/production', { method: 'PUT', body: { version: 6 } });
    expect(refused.status).toBe(409);
    expect(await text('.rollback-message [data-field=refused] .detail')).toBe(refused.body.detail);
    expect(await text('.rollback-message [data-field=refused]')).toContain('production was not moved (still → v5)');
    expect(await text('.rollback-message [data-field=refused] .status')).toBe('(HTTP 409)');
    await t.browser.screenshot('compare-pages-rollback-refused');
    await noSidewaysScroll('.rollback-message');
    expect(unexpected()).toEqual([]);
  });
});
