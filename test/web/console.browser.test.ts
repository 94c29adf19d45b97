// The web console in a real headless Chromium, against the real service (either store mode) on
// loopback: sign in with an API key, see the execution a real OTel exporter sent, open its
// timeline and span tree, keep filters in the URL, move a prompt label, export CSV; then as an
// admin (a JWT from a real JWKS endpoint) set a budget and see the gauge, create and revoke a key.
// A screenshot of each main page goes to .tmp/console/ for review.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { TestIdp } from '../helpers/idp.ts';
import { agentRun, exporting } from '../helpers/otel.ts';
import { until } from '../helpers/wait.ts';
import { collectPageErrors, launchBrowser, type TestBrowser } from '../helpers/browser.ts';

const P = 'acme';
let idp: TestIdp;
let svc: TestService;
let browser: TestBrowser;
let errors: string[];
let key: string;
let adminJwt: string;
let traceId: string;

const json = { 'Content-Type': 'application/json' };
const api = (path: string, init: RequestInit & { as?: 'key' | 'admin' } = {}) =>
  getJson(`${svc.url}/api/projects/${P}${path}`, {
    ...init,
    headers: {
      ...json,
      ...(init.as === 'admin' ? { Authorization: `Bearer ${adminJwt}` } : { 'X-API-Key': key }),
      ...(init.headers as Record<string, string>),
    },
  });

beforeAll(async () => {
  idp = await new TestIdp().start();
  svc = await startTestService({ AUTH_REQUIRED: 'true', TRACE_DEBOUNCE_MS: '50', ...idp.env() });
  adminJwt = await idp.token({ sub: 'ada@acme.test', project_id: P, role: 'admin' });
  const created = await api('/api-keys', { method: 'POST', as: 'admin', body: JSON.stringify({ name: 'console-test' }) });
  expect(created.status).toBe(201);
  key = created.body.key;

  // A real OTLP exporter (protobuf, gzip) sends an agent run with the key, as an application would.
  const exp = exporting(svc.url, { protocol: 'proto', gzip: true, headers: { 'x-api-key': key } });
  const run = agentRun(exp.tracer);
  run.endRoot();
  await exp.flush();
  await exp.shutdown();
  traceId = run.traceId;
  await until(async () => (await api(`/executions/${traceId}`)).body?.span_count === 4, 'the exported trace as an execution');

  // A prompt with two versions, `production` on v1.
  expect(
    (
      await api('/prompts', {
        method: 'POST',
        body: JSON.stringify({
          prompt_id: 'support-reply',
          type: 'text',
          template: 'Hello {{name}},\nthanks for writing.',
          labels: ['production'],
        }),
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await api('/prompts/support-reply/versions', {
        method: 'POST',
        body: JSON.stringify({ template: 'Hi {{name}},\nthanks for writing to us.', commit_message: 'warmer' }),
      })
    ).status,
  ).toBe(201);

  // A direct record that used the prompt through its label (resolved to v1 at ingest).
  const direct = await api('/executions', {
    method: 'POST',
    body: JSON.stringify({
      trace_id: 'direct-1',
      agent_id: 'support-bot',
      provider: 'openai',
      model: 'gpt-4o-mini',
      tokens_in: 1200,
      tokens_out: 300,
      latency_ms: 900,
      template_usages: [{ prompt_id: 'support-reply', version: 'production', inputs: { name: 'Ada' } }],
    }),
  });
  expect(direct.status).toBe(201);

  browser = await launchBrowser();
  errors = collectPageErrors(browser.page);
});

afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await idp?.stop();
  await dropTestDatabases();
});

/** Page errors other than the failed requests the tests provoke on purpose. */
const unexpectedErrors = () =>
  errors.filter((e) => !/Failed to load resource: the server responded with a status of (400|401|422)/.test(e));

describe('web console, signed in with an API key', () => {
  it('refuses a wrong key with the API detail, then signs in with a key kept in session storage only', async () => {
    const { page } = browser;
    await page.goto(`${svc.url}/`);
    await page.fill('input[name=credential]', 'tl_0000000000000000000000000000000000000000');
    await page.click('button[type=submit]');
    await expect(page.locator('.error .detail').textContent()).resolves.toBe('Unauthorized - No valid authentication provided');

    // A password field (the key is not shown), and Enter signs in.
    expect(await page.getAttribute('input[name=credential]', 'type')).toBe('password');
    await page.fill('input[name=credential]', key);
    await page.press('input[name=credential]', 'Enter');
    await page.waitForURL(`${svc.url}/projects/${P}/executions`);
    // The shell names the key in use by its name, never by its secret.
    await expect(page.locator('.who').first().textContent()).resolves.toContain('API key "console-test"');
    expect(await page.locator('.who').first().textContent()).not.toContain(key.slice(3, 12));
    const row = page.locator(`tr[data-trace-id="${traceId}"]`);
    await expect(row.textContent()).resolves.toContain('gpt-4o-2024-08-06');
    await expect(row.textContent()).resolves.toContain('weather-agent');
    await expect(page.locator('.table-head').first().textContent()).resolves.toContain('2 executions');
    await expect(page.locator('tr[data-trace-id="direct-1"]').textContent()).resolves.toContain('gpt-4o-mini');
    expect(await page.evaluate(() => [sessionStorage.getItem('traceloom.credential'), localStorage.length])).toEqual([key, 0]);
    await browser.screenshot('executions');
  });

  it('opens the execution: cost with its price_id, the timeline with compact tools, the span waterfall', async () => {
    const { page } = browser;
    const stored = (await api(`/executions/${traceId}`)).body;
    await page.click(`tr[data-trace-id="${traceId}"] a`);
    await page.waitForURL(`${svc.url}/projects/${P}/executions/${traceId}`);
    await expect(page.locator('[data-price-id]').textContent()).resolves.toBe(stored.price_id);
    expect(stored.price_id).toMatch(/^catalogue:/);

    const events = page.locator('ol.timeline > li');
    await page.locator('li[data-type=tool_result]').waitFor();
    expect(await events.evaluateAll((els) => els.map((e) => e.getAttribute('data-type')))).toEqual([
      'message',
      'message',
      'tool_call',
      'tool_result',
      'message',
    ]);
    await expect(events.nth(1).textContent()).resolves.toContain('Weather in Paris?');
    await expect(page.locator('li[data-type=tool_call]').textContent()).resolves.toContain('get_weather');
    await browser.screenshot('execution-timeline');

    await page.check('input[name=compact_tools]');
    await page.locator('li[data-type=tool]').waitFor();
    const tool = await page.locator('li[data-type=tool]').textContent();
    expect(tool).toContain('get_weather');
    expect(tool).toContain('18°C, sunny');
    expect(page.url()).toContain('compact=true');
    await expect(page.locator('li[data-type=tool_result]').count()).resolves.toBe(0);

    await page.click('button[role=tab]:has-text("Spans")');
    await page.locator('.wf-row[data-span-name]').first().waitFor();
    const names = await page.locator('.wf-row[data-span-name]').evaluateAll((els) => els.map((e) => e.getAttribute('data-span-name')));
    expect(names).toEqual(['invoke_agent weather-agent', 'chat gpt-4o-2024-08-06', 'execute_tool get_weather', 'chat gpt-4o-2024-08-06']);
    await page.click('.wf-row[data-span-name="execute_tool get_weather"]');
    await expect(page.locator('.span-detail [data-attribute="gen_ai.tool.name"]').textContent()).resolves.toBe('get_weather');
    await browser.screenshot('execution-spans');
  });

  it('keeps the filters in the URL: a shared link shows the same list', async () => {
    const { page } = browser;
    await page.goto(`${svc.url}/projects/${P}/executions?status=error`);
    await expect(page.locator('.empty h3').textContent()).resolves.toBe('No execution matches these filters');
    await page.fill('input[name=model]', 'gpt-4o-2024-08-06');
    await page.selectOption('select[name=status]', 'ok');
    await page.click('form.filters button[type=submit]');
    await page.locator(`tr[data-trace-id="${traceId}"]`).waitFor();
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toEqual({ model: 'gpt-4o-2024-08-06', status: 'ok' });
    await page.reload();
    await page.locator(`tr[data-trace-id="${traceId}"]`).waitFor();
    await expect(page.inputValue('input[name=model]')).resolves.toBe('gpt-4o-2024-08-06');
  });

  it('exports the filtered executions as CSV through the export endpoint', async () => {
    const { page } = browser;
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('.export button:has-text("CSV")')]);
    expect(download.suggestedFilename()).toBe(`executions-${P}.csv`);
    const csv = fs
      .readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]).toBe(
      'trace_id,started_at,agent_id,provider,model,status,tokens_in,tokens_out,latency_ms,cost_usd,cost_source,has_templates,template_count,span_count,source',
    );
    expect(csv).toHaveLength(2);
    expect(csv[1]!.startsWith(`${traceId},`)).toBe(true);
  });

  it('moves a label, shows the render 422 inline, diffs two versions side by side', async () => {
    const { page } = browser;
    await page.click('nav a:has-text("Prompts")');
    await page.click('tr[data-prompt-id="support-reply"] a');
    await page.waitForURL(`${svc.url}/projects/${P}/prompts/support-reply`);
    await expect(page.locator('tr[data-label=production]').textContent()).resolves.toContain('→ v1');
    await page.selectOption('select[name=label-production]', '2');
    page.once('dialog', (d) => void d.accept()); // a move asks first (test/web/prompt-editor.browser.test.ts)
    await page.click('tr[data-label=production] button:has-text("Move")');
    await page.locator('tr[data-label=production]:has-text("→ v2")').waitFor();
    expect((await api('/prompts/support-reply')).body.labels).toEqual({ production: 2 });
    await browser.screenshot('prompt');

    await page.click('button[role=tab]:has-text("Render preview")');
    await page.click('button:has-text("Render v2")');
    await expect(page.locator('.error .detail').textContent()).resolves.toMatch(/name/);
    await page.fill('textarea[name=input-name]', 'Ada');
    await page.click('button:has-text("Render v2")');
    await expect(page.locator('.rendered pre').textContent()).resolves.toBe('Hi Ada,\nthanks for writing to us.');

    await page.click('button[role=tab]:has-text("Diff")');
    await page.locator('table.diff').first().waitFor();
    const removed = await page.locator('table.diff td.d-remove').allTextContents();
    const added = await page.locator('table.diff td.d-add').allTextContents();
    expect(removed).toEqual(['Hello {{name}},', 'thanks for writing.']);
    expect(added).toEqual(['Hi {{name}},', 'thanks for writing to us.']);
    await browser.screenshot('prompt-diff');

    // Rollback appends a version with v1's content; history is kept.
    await page.click('button[role=tab]:has-text("Versions")');
    await page.click('.version-list li[data-version="1"] button');
    await page.click('button:has-text("Roll back to v1")');
    await page.click('dialog.rollback-dialog button.confirm-rollback'); // confirmed first (compare-pages.browser.test.ts)
    await page.locator('.version-list li[data-version="3"]:has-text("rollback to v1")').waitFor();
    await expect(page.locator('.card h2:has-text("Version 3")').textContent()).resolves.toBe('Version 3 (latest)');
    const v3 = (await api('/prompts/support-reply/versions/3')).body;
    expect([v3.template, v3.rolled_back_from]).toEqual(['Hello {{name}},\nthanks for writing.', 1]);
  });
  it('links a template usage to the prompt version it used, whose analytics count the execution', async () => {
    const { page } = browser;
    await page.goto(`${svc.url}/projects/${P}/executions/direct-1?tab=templates`);
    const usage = page.locator('a:has-text("support-reply")');
    await expect(usage.getAttribute('href')).resolves.toBe(`/projects/${P}/prompts/support-reply?version=1`);
    await usage.click();
    await expect(page.locator('.card h2:has-text("Version 1")').textContent()).resolves.toBe('Version 1');
    await page.click('button[role=tab]:has-text("Analytics")');
    const v1 = page.locator('tr[data-version="1"]');
    await v1.waitFor();
    const cells = await v1.locator('td').allTextContents();
    expect(cells.slice(0, 2)).toEqual(['v1', '1']);
    expect(cells[4]).toBe('900 ms'); // p50 latency
    await browser.screenshot('prompt-analytics');
  });
});

describe('web console: scores beside cost', () => {
  const fig = (x: number) => String(Number(x.toPrecision(4)));
  const scoresOf = async (trace: string) => (await api(`/scores?trace_id=${trace}`)).body.items;

  it("annotates an execution: the config's range refused with the API's 422 detail, then a score added and deleted", async () => {
    const { page } = browser;
    const config = {
      name: 'helpfulness',
      data_type: 'NUMERIC',
      min_value: 0,
      max_value: 1,
      description: 'How much the answer helped, 0 to 1',
    };
    expect((await api('/score-configs', { method: 'POST', as: 'admin', body: JSON.stringify(config) })).status).toBe(201);
    // An evaluator's score on one span: the list names the span.
    type Node = { span_id: string; name: string; children: Node[] };
    const all = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...all(n.children)]);
    const tool = all((await api(`/executions/${traceId}/hierarchy`)).body.spans).find((n) => n.name === 'execute_tool get_weather');
    const onSpan = { trace_id: traceId, span_id: tool!.span_id, name: 'tool_ok', value: true, source: 'eval' };
    expect((await api('/scores', { method: 'POST', body: JSON.stringify(onSpan) })).status).toBe(201);

    await page.goto(`${svc.url}/projects/${P}/executions/${traceId}`);
    const spanRow = page.locator('tr[data-score-name=tool_ok]');
    await spanRow.locator('td:has-text("span execute_tool get_weather")').waitFor();
    await expect(spanRow.locator('td.value').textContent()).resolves.toBe('true');

    await page.fill('input[name=score_name]', 'helpfulness');
    const value = page.locator('input[name=score_value][type=number]');
    expect([await value.getAttribute('min'), await value.getAttribute('max')]).toEqual(['0', '1']);
    await value.fill('1.5');
    await page.click('form.add-score button[type=submit]');
    const refused = await api('/scores', {
      method: 'POST',
      body: JSON.stringify({ trace_id: traceId, name: 'helpfulness', value: 1.5, source: 'annotation' }),
    });
    expect(refused.status).toBe(422);
    await expect(page.locator('form.add-score .error .detail').textContent()).resolves.toBe(refused.body.detail);
    await expect(page.locator('form.add-score .error .status').textContent()).resolves.toContain('422');

    await value.fill('0.8');
    await page.fill('input[name=score_comment]', 'clear and correct');
    await page.click('form.add-score button[type=submit]');
    const row = page.locator('tr[data-score-name=helpfulness]');
    await row.waitFor();
    // The author is the signed-in key, shown by its name (the recorded api_key:<id> in the title).
    await row.locator(`[data-author]:text-is('API key "console-test"')`).waitFor();
    await expect(row.locator('[data-author]').getAttribute('title')).resolves.toMatch(/^api_key:/);
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(1, 6)).toEqual(['0.8', 'execution', 'annotation', 'API key "console-test"', 'clear and correct']);
    await expect(page.locator('form.add-score .error').count()).resolves.toBe(0);
    const stored = (await scoresOf(traceId)).find((s: { name: string }) => s.name === 'helpfulness');
    expect(stored).toMatchObject({ value: 0.8, source: 'annotation', comment: 'clear and correct', data_type: 'NUMERIC' });
    expect(stored.config_id).toBeTruthy();
    await browser.screenshot('execution-scores');

    page.once('dialog', (d) => void d.accept());
    await row.locator('button:has-text("Delete")').click();
    await page.locator('tr[data-score-name=helpfulness]').waitFor({ state: 'detached' });
    expect((await scoresOf(traceId)).map((s: { name: string }) => s.name)).toEqual(['tool_ok']);
  });

  it('filters the executions by score: the URL carries score.<name>.gte, a reload and the export keep it', async () => {
    const { page } = browser;
    const judged = [
      { trace_id: traceId, name: 'helpfulness', value: 0.9 },
      { trace_id: 'direct-1', name: 'helpfulness', value: 0.2 },
    ];
    expect((await api('/scores', { method: 'POST', body: JSON.stringify(judged) })).status).toBe(201);
    await page.goto(`${svc.url}/projects/${P}/executions`);
    await page.locator('tr[data-trace-id="direct-1"]').waitFor();
    await page.click('details.more-filters > summary'); // score filters sit behind "More filters"
    await page.fill('input[name=filter_score_name]', 'helpfulness');
    await page.selectOption('select[name=filter_score_op]', 'gte');
    await page.fill('input[name=filter_score_value]', '0.5');
    await page.click('form.filters button[type=submit]');
    await page.locator('.chip:has-text("helpfulness ≥ 0.5")').waitFor();
    await page.locator('tr[data-trace-id="direct-1"]').waitFor({ state: 'detached' });
    expect(await page.locator('tr[data-trace-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id')))).toEqual([
      traceId,
    ]);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ 'score.helpfulness.gte': '0.5' });
    await browser.screenshot('executions-score-filter');

    await page.reload();
    await page.locator(`tr[data-trace-id="${traceId}"]`).waitFor();
    await expect(page.locator('tr[data-trace-id]').count()).resolves.toBe(1);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('.export button:has-text("CSV")')]);
    const csv = fs
      .readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv.map((l) => l.split(',')[0])).toEqual(['trace_id', traceId]);

    // "Has score": both judged executions, whatever the value.
    await page.click('.chip button');
    await page.fill('input[name=has_score]', 'helpfulness');
    await page.click('form.filters button[type=submit]');
    await page.locator('.chip:has-text("has score helpfulness")').waitFor();
    await page.locator('tr[data-trace-id="direct-1"]').waitFor();
    await expect(page.locator('tr[data-trace-id]').count()).resolves.toBe(2);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ has_score: 'helpfulness' });
  });

  it('compares two versions: both groups side by side with their means, the tested difference and the verdict', async () => {
    const { page } = browser;
    // Three executions of v1 and three of v2, each judged by a person (small costs: the budget
    // the admin tests set stays at its alert threshold, not exceeded).
    const judged: object[] = [];
    for (const [version, cost, quality] of [
      [1, [0.00002, 0.000021, 0.000019], [0.4, 0.5, 0.45]],
      [2, [0.00003, 0.000032, 0.000031], [0.8, 0.85, 0.9]],
    ] as const) {
      for (let i = 0; i < 3; i++) {
        const id = `cmp-v${version}-${i}`;
        const r = await api('/executions', {
          method: 'POST',
          body: JSON.stringify({
            trace_id: id,
            agent_id: 'support-bot',
            provider: 'openai',
            model: 'gpt-4o-mini',
            cost_usd: cost[i],
            latency_ms: 500 * version + 10 * i,
            template_usages: [{ prompt_id: 'support-reply', version }],
          }),
        });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        judged.push({ trace_id: id, name: 'quality', value: quality[i], source: 'annotation' });
      }
    }
    expect((await api('/scores', { method: 'POST', body: JSON.stringify(judged) })).status).toBe(201);
    const expected = (await api('/prompts/support-reply/compare?versions=1,2&scores=quality')).body;
    expect(expected.groups.map((g: { executions: number }) => g.executions)).toEqual([4, 3]); // direct-1 used v1 too
    const verdict = expected.comparison.scores.quality.verdict;
    expect(verdict).toMatch(/^v2 scores 0\.4\d* higher/);

    await page.goto(`${svc.url}/projects/${P}/prompts/support-reply`);
    await page.click('button[role=tab]:has-text("Compare")');
    await page.selectOption('select[name=compare-a]', '1');
    await page.selectOption('select[name=compare-b]', '2');
    const quality = (side: string) => page.locator(`.group-${side} tr[data-score=quality]`);
    await quality('b').locator('td.mean').waitFor();
    for (const [i, side] of [
      [0, 'a'],
      [1, 'b'],
    ] as const) {
      const g = expected.groups[i];
      await expect(page.locator(`.group-${side} h2`).textContent()).resolves.toBe(`${side}: v${i + 1}`);
      await expect(page.locator(`.group-${side} [data-field=executions]`).textContent()).resolves.toBe(String(g.executions));
      await expect(quality(side).locator('td.mean').textContent()).resolves.toBe(fig(g.scores.quality.mean));
      await expect(quality(side).locator('td').nth(2).textContent()).resolves.toBe(
        `${fig(g.scores.quality.ci.low)} to ${fig(g.scores.quality.ci.high)}`,
      );
    }
    const diff = page.locator('.difference[data-score=quality]');
    await expect(diff.locator('.verdict').textContent()).resolves.toBe(`quality: ${verdict}`);
    await expect(diff.textContent()).resolves.toContain("Welch's t-test");
    await expect(diff.locator('.badge').textContent()).resolves.toBe(
      expected.comparison.scores.quality.significant ? 'significant' : 'not significant',
    );
    const relative = expected.comparison.cost_per_execution.relative;
    await expect(page.locator('.difference[data-score=cost] .relative').textContent()).resolves.toBe(
      `(${relative > 0 ? '+' : ''}${fig(relative * 100).replace('-', '−')} %)`,
    );
    const url = new URL(page.url());
    expect([url.searchParams.get('tab'), url.searchParams.get('a'), url.searchParams.get('b')]).toEqual(['compare', '1', '2']);
    await browser.screenshot('prompt-compare');
    await page.reload();
    await expect(page.locator('.difference[data-score=quality] .verdict').textContent()).resolves.toBe(`quality: ${verdict}`);
  });
});

describe('web console, signed in as an admin with a JWT', () => {
  it('signs out, signs in with a pasted token, and sets a budget that the spend gauge shows', async () => {
    const { page } = browser;
    await page.click('aside button:has-text("Sign out")');
    await page.locator('input[name=credential]').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('traceloom.credential'))).toBeNull();
    await page.fill('input[name=credential]', adminJwt);
    await page.click('button[type=submit]');
    await page.click('nav a:has-text("Settings")');
    await page.locator('.card p.muted:has-text("no budget set")').waitFor();
    await page.fill('input[name=budget_monthly_usd]', '0.002');
    await page.fill('input[name=alert_threshold_pct]', '50');
    await page.click('button:has-text("Save budget")');
    await page.locator('.saved').waitFor();
    const budget = (await api('/budget', { as: 'admin' })).body;
    expect([budget.budget_monthly_usd, budget.alert_threshold_pct, budget.enforcement_mode]).toEqual([0.002, 50, 'alert']);
    await browser.screenshot('settings');

    await page.click('nav a:has-text("Spend")');
    const gauge = page.locator('svg.gauge');
    await gauge.waitFor();
    const now = (await api('/budget', { as: 'admin' })).body;
    expect(Number(await gauge.getAttribute('data-pct'))).toBeCloseTo(now.pct_used, 6);
    await expect(gauge.textContent()).resolves.toContain('of $0.002');
    await expect(page.locator('.chart').getAttribute('data-days')).resolves.toBe('30');
    await browser.screenshot('spend');
  });

  it("sets a project price (a refused one shows the API's detail) and the retention", async () => {
    const { page } = browser;
    await page.click('nav a:has-text("Settings")');
    await page.fill('input[name=price_model]', 'gpt-4o-mini');
    await page.fill('input[name=price_match]', '(');
    await page.fill('input[name=input_per_mtok]', '0.2');
    await page.fill('input[name=output_per_mtok]', '0.8');
    await page.click('button:has-text("Set price")');
    const refused = await getJson(`${svc.url}/api/projects/${P}/models/gpt-4o-mini`, {
      method: 'PUT',
      headers: { ...json, Authorization: `Bearer ${adminJwt}` },
      body: JSON.stringify({ match: '(', input_per_mtok: 0.2, output_per_mtok: 0.8 }),
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    await expect(page.locator('.error .detail').first().textContent()).resolves.toBe(refused.body.detail);

    await page.fill('input[name=price_match]', '');
    await page.click('button:has-text("Set price")');
    const row = page.locator('table.prices tr[data-price-id^="project:"]');
    await row.waitFor();
    expect((await row.textContent())!).toContain('gpt-4o-mini');
    const own = (await api('/models?source=project', { as: 'admin' })).body.items;
    expect(
      own.map((r: { model: string; input_per_mtok: number; output_per_mtok: number }) => [r.model, r.input_per_mtok, r.output_per_mtok]),
    ).toEqual([['gpt-4o-mini', 0.2, 0.8]]);

    await page.fill('input[name=retention_days]', '30');
    await page.click('button:has-text("Save retention")');
    await page.locator('p:has-text("Raw data older than 30 days is deleted.")').waitFor();
    expect((await api('/retention', { as: 'admin' })).body.days).toBe(30);
  });

  it('creates an API key whose secret is shown once, and revokes it', async () => {
    const { page } = browser;
    await page.click('nav a:has-text("Settings")');
    await page.fill('input[name=key_name]', 'billing-agent');
    await page.click('button:has-text("Create key")');
    const secret = (await page.locator('[data-secret]').textContent())!;
    expect(secret).toMatch(/^tl_[0-9A-Za-z]{40}$/);
    expect((await getJson(`${svc.url}/api/me/context`, { headers: { 'X-API-Key': secret } })).status).toBe(200);
    const keyId = (await api('/api-keys')).body.items.find((k: { name: string }) => k.name === 'billing-agent').key_id;
    page.once('dialog', (d) => void d.accept());
    await page.click(`tr[data-key-id="${keyId}"] button:has-text("Revoke")`);
    await page.locator(`tr[data-key-id="${keyId}"]:has-text("revoked")`).waitFor();
    expect((await getJson(`${svc.url}/api/me/context`, { headers: { 'X-API-Key': secret } })).status).toBe(401);
    await page.reload();
    await expect(page.locator('[data-secret]').count()).resolves.toBe(0);
  });

  it('goes back to sign-in, saying why, when the key in use is revoked mid-session', async () => {
    const { page } = browser;
    const temp = (await api('/api-keys', { method: 'POST', as: 'admin', body: JSON.stringify({ name: 'short-lived' }) })).body;
    await page.click('aside button:has-text("Sign out")');
    await page.fill('input[name=credential]', temp.key);
    await page.click('button[type=submit]');
    await page.locator(`tr[data-trace-id="${traceId}"]`).waitFor();
    expect((await api(`/api-keys/${temp.key_id}`, { method: 'DELETE', as: 'admin' })).status).toBe(204);
    // The next read of the API finds the key revoked: the page's own refresh may get there first
    // (the shell then leaves, the link with it), else opening Prompts does.
    await page.click('nav a:has-text("Prompts")', { timeout: 5_000 }).catch(() => undefined);
    await expect(page.locator('.error .detail').textContent()).resolves.toContain('expired or was revoked');
    expect(await page.evaluate(() => sessionStorage.getItem('traceloom.credential'))).toBeNull();
    expect(unexpectedErrors()).toEqual([]);
  });
});
