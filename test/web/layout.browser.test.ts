// Every console page at a desktop (1440×900) and a phone (390×844) size, on a seeded project: the
// page never scrolls sideways (wide tables scroll in their own box), no script error, and an axe
// audit (axe-core, in the page) finds no serious or critical accessibility violation; the same
// again at desktop size in the dark theme (the console follows the system's colour scheme). Then the
// shell on a phone (menu button, search in reach), the skip link, the sign-in key field, and the
// console's one clock: local time labelled with its zone, a UTC switch that datetime filters honour.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { mode } from '../helpers/env.ts';
import { collectPageErrors, launchBrowser, type TestBrowser } from '../helpers/browser.ts';
import { PROJECT, record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';
import { startFakeJudge, type FakeJudge } from '../helpers/fake-judge.ts';
import { until } from '../helpers/wait.ts';

const TEST_MS = 600_000;
// Evaluated over the DevTools protocol: the console's CSP (script-src 'self') refuses an inline script tag.
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

let t: ConsoleTest;
let model: FakeJudge;
let datasetId: string;
let experimentId: string;
// A fixed instant two hours ago (whole minutes), recorded as one execution's start.
const STARTED = new Date(Math.floor((Date.now() - 2 * 3_600_000) / 60_000) * 60_000);

const post = async (path: string, body: unknown) => {
  const r = await t.api(path, { method: 'POST', body });
  expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return r.body;
};

beforeAll(async () => {
  model = await startFakeJudge(() => ({ kind: 'judgement', content: '4', promptTokens: 100, completionTokens: 10 }), 'layout-model');
  t = await startConsoleTest({
    EVALUATOR_ALLOW_PRIVATE: 'true', // the model is on loopback
    EXPERIMENT_SCAN_INTERVAL_MS: '200',
    ...(mode === 'server' ? { SECRETS_KEY: crypto.randomBytes(32).toString('hex') } : {}),
  });
  await post('/prompts', { prompt_id: 'greet', type: 'text', template: 'Hello {{name}}, n={{n}}', labels: ['production'] });
  await post('/prompts/greet/versions', { template: 'Hi {{name}}! n={{n}}', commit_message: 'shorter' });
  await record(t, [
    {
      trace_id: 'clock-run',
      started_at: STARTED.toISOString(),
      agent_id: 'support-bot-with-a-rather-long-agent-name',
      session_id: 'chat-1',
      user_id: 'ada@example.com',
      tags: ['vip', 'layout'],
      tokens_in: 1200,
      tokens_out: 300,
      latency_ms: 900,
      template_usages: [{ prompt_id: 'greet', version: 'production', inputs: { name: 'Ada', n: 2 } }],
    },
    {
      trace_id: 'turn-2',
      session_id: 'chat-1',
      user_id: 'ada@example.com',
      status: 'error',
      model: 'a-model-with-a-very-long-name-2026-11-01',
    },
    { trace_id: 'other', user_id: 'bob', agent_id: 'batch', tokens_in: 10, tokens_out: 5 },
  ]);
  await post('/score-configs', { name: 'helpful', data_type: 'NUMERIC', min_value: 0, max_value: 1 });
  await post('/scores', { trace_id: 'clock-run', name: 'helpful', value: 0.8, comment: 'a fair answer with a long comment to wrap' });
  const connection = await post('/model-connections', {
    name: 'layout model',
    base_url: model.baseURL,
    model: 'layout-model',
    api_key: 'sk-x',
  });
  const ds = await post('/datasets', { name: 'numbers' });
  datasetId = ds.dataset_id;
  await post(
    `/datasets/${datasetId}/items`,
    [1, 2].map((n) => ({ input: { name: 'Ada', n }, expected_output: String(2 * n) })),
  );
  const exp = await post(`/datasets/${datasetId}/experiments`, {
    name: 'layout run',
    prompt: { prompt_id: 'greet', version: 'production' },
    connection_id: connection.connection_id,
  });
  experimentId = exp.experiment_id;
  await until(
    async () => !['queued', 'running'].includes((await t.api(`/datasets/${datasetId}/experiments/${experimentId}`)).body.status),
    'the experiment to end',
    60_000,
  );
  await post('/evaluators', {
    name: 'helpfulness',
    prompt_id: 'greet',
    prompt_label: 'production',
    variables: { name: 'output', n: 'output' },
    connection_id: connection.connection_id,
    score_name: 'helpful',
    target: { kind: 'executions', filter: { agent_id: ['nobody'] } },
    paused: true,
  });
  await post('/monitors', {
    name: 'errors',
    metric: { kind: 'error_rate' },
    window_minutes: 60,
    condition: { kind: 'threshold', op: '>', value: 0.5 },
  });
  await post('/budgets', { scope: { kind: 'user', value: 'ada@example.com' }, period: 'day', amount_usd: 1, thresholds_pct: [50, 100] });
}, TEST_MS);

afterAll(async () => {
  await t?.close();
  await model?.close();
});

/** Every route of the console (web/src/app.tsx), with the tabs a query string opens. */
const routes = () => [
  'executions',
  `executions?user_id=ada%40example.com&start=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}`,
  'executions/clock-run',
  'executions/clock-run?tab=spans',
  'executions/clock-run?tab=templates',
  'prompts',
  'prompts/greet',
  'prompts/greet?tab=edit',
  'prompts/greet?tab=render',
  'prompts/greet?tab=diff',
  'prompts/greet?tab=analytics',
  'prompts/greet?tab=compare',
  'playground',
  'datasets',
  `datasets/${datasetId}`,
  `datasets/${datasetId}?tab=runs`,
  `datasets/${datasetId}?tab=experiments`,
  `datasets/${datasetId}/experiments/${experimentId}`,
  'experiments',
  'evaluators',
  'monitors',
  'sessions',
  'sessions/chat-1',
  'users',
  'spend',
  'explorer',
  'explorer?group_by=model,time&granularity=hour',
  'budgets',
  'settings',
  'no-such-page',
  '/sign-in',
];

/** Opens a path and waits until its data is drawn (no spinner left). */
async function openSettled(path: string) {
  const { page } = t.browser;
  await t.open(path);
  await page.locator('main').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout: 20_000 });
}

/** What sticks out past the viewport's right edge, when the page scrolls sideways. */
const overflow = () =>
  t.browser.page.evaluate(() => {
    const root = document.documentElement;
    if (root.scrollWidth <= root.clientWidth) return null;
    const wide = [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > root.clientWidth + 0.5)
      .filter((e) => !e.parentElement || e.parentElement.getBoundingClientRect().right <= root.clientWidth + 0.5)
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).trim().replace(/\s+/g, '.')}` : ''}`);
    return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wide };
  });

type AxeViolation = { id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[]; failureSummary?: string }> };

/** axe-core's serious and critical violations on the page as it is now. */
async function audit(): Promise<string[]> {
  const { page } = t.browser;
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

describe(`console layout and accessibility on every page (${mode} mode)`, () => {
  // The dark theme (styles.css, prefers-color-scheme: dark) has colours of its own: its contrast is
  // audited on every page too, at one size (its layout is the light theme's).
  for (const [name, viewport, colorScheme] of [
    ['desktop 1440×900', DESKTOP, 'light'],
    ['phone 390×844', PHONE, 'light'],
    ['dark theme, desktop 1440×900', DESKTOP, 'dark'],
  ] as const) {
    it(
      `${name}: no page scrolls sideways, no script error, no serious axe violation`,
      async () => {
        const { page } = t.browser;
        await page.setViewportSize(viewport);
        await page.emulateMedia({ colorScheme });
        onTestFinished(() => page.emulateMedia({ colorScheme: 'light' }));
        const problems: string[] = [];
        for (const path of routes()) {
          const before = t.errors.length;
          await openSettled(path);
          // Drawn in the theme under audit: the dark block sets color-scheme: dark on the root.
          const scheme = await page.evaluate(() => getComputedStyle(document.documentElement).colorScheme);
          if ((scheme === 'dark') !== (colorScheme === 'dark')) problems.push(`${path}: drawn with color-scheme ${scheme}`);
          const wide = await overflow();
          if (wide) problems.push(`${path}: the page is ${wide.scrollWidth} px wide in ${wide.clientWidth} (${wide.wide.join(', ')})`);
          for (const v of await audit()) problems.push(`${path}: ${v}`);
          for (const e of t.errors.slice(before)) problems.push(`${path}: ${e}`);
          if (viewport === PHONE && ['executions', 'executions/clock-run', 'prompts/greet', 'spend', 'explorer', 'settings'].includes(path))
            await t.browser.screenshot(`phone-${path.replace(/[/?=&%]+/g, '-')}`);
        }
        expect(problems).toEqual([]);
      },
      TEST_MS,
    );
  }

  it('on a phone the navigation folds behind a menu button; the search stays in reach', async () => {
    const { page } = t.browser;
    await page.setViewportSize(PHONE);
    await openSettled('executions');
    const nav = page.locator('aside nav');
    const menu = page.locator('button.menu-button');
    expect(await nav.isVisible()).toBe(false);
    expect(await page.locator('input[name=trace_search]').isVisible()).toBe(true);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await menu.click();
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('true');
    expect(await overflow()).toBeNull();
    await t.browser.screenshot('phone-menu-open');
    await nav.locator('a:has-text("Sessions")').click();
    await page.waitForURL(/\/sessions$/);
    // The menu closes on the route change, a render after the URL moved: wait for it.
    await expect.poll(() => nav.isVisible()).toBe(false);
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
    expect(await overflow()).toBeNull();

    await page.fill('input[name=trace_search]', 'clock-run');
    await page.press('input[name=trace_search]', 'Enter');
    await page.waitForURL(/\/executions\/clock-run$/);
    await page.setViewportSize(DESKTOP);
    await expect.poll(() => page.locator('aside nav').isVisible()).toBe(true);
    await expect.poll(() => page.locator('button.menu-button').isVisible()).toBe(false);
  });

  it('the first tab stop skips to the content; every field has a label', async () => {
    const { page } = t.browser;
    await page.setViewportSize(DESKTOP);
    await openSettled('executions');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    // The next tab stop is in the page (its first control), not the navigation.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => !!document.activeElement?.closest('main'))).toBe(true);
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea')]
        .filter((e) => !(e as HTMLInputElement).labels?.length && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
        .map((e) => e.outerHTML.slice(0, 80)),
    );
    expect(unlabelled).toEqual([]);
  });

  it('sign-in: the key is a password field with a show / hide switch', async () => {
    const { page } = t.browser;
    await openSettled('/sign-in');
    const field = page.locator('input[name=credential]');
    expect([await field.getAttribute('type'), await field.getAttribute('autocomplete')]).toEqual(['password', 'off']);
    await page.click('button:has-text("Show key")');
    await expect.poll(() => field.getAttribute('type')).toBe('text');
    await page.click('button:has-text("Hide key")');
    await expect.poll(() => field.getAttribute('type')).toBe('password');
    expect(await page.locator('label[for=credential]').textContent()).toBe('API key or token');
  });

  it('one clock: local time with its zone by default, a remembered UTC switch that the datetime filters honour', async () => {
    // The viewer is in India (UTC+05:30 all year: no daylight saving to move the offset).
    const india: TestBrowser = await launchBrowser({ timezoneId: 'Asia/Kolkata' });
    const errors = collectPageErrors(india.page);
    const { page } = india;
    const openSettled = async (path: string) => {
      await page.goto(`${t.svc.url}/projects/${PROJECT}/${path}`);
      await page.waitForFunction(() => document.querySelector('main') && document.querySelectorAll('.loading').length === 0);
    };
    const shifted = (d: Date, minutes: number) => new Date(d.getTime() + minutes * 60_000).toISOString().replace('T', ' ').slice(0, 19);
    const started = () => page.locator('tr[data-trace-id="clock-run"] td').first().textContent();
    // The first column's header, without the sort arrow the list draws beside it.
    const header = async () => ((await page.locator('table.executions th').first().textContent()) ?? '').replace(/[▲▼]/g, '').trim();
    try {
      await openSettled('executions');
      await expect(header()).resolves.toBe('Started (local, UTC+05:30)');
      await expect(started()).resolves.toBe(shifted(STARTED, 330));
      await expect(page.locator('label:has(input[name=start])').textContent()).resolves.toBe('From (local, UTC+05:30)');

      // A datetime filter is read on the clock; the URL keeps the instant in UTC.
      const local = shifted(STARTED, 330 - 60)
        .replace(' ', 'T')
        .slice(0, 16);
      await page.click('details.more-filters > summary'); // the time window sits behind "More filters"
      await page.fill('input[name=start]', local);
      await page.click('button:has-text("Apply")');
      const oneHourBefore = new Date(STARTED.getTime() - 3_600_000).toISOString().replace('.000Z', 'Z');
      await page.waitForURL((u) => u.searchParams.get('start') === oneHourBefore);
      await page.locator('tr[data-trace-id="clock-run"]').waitFor();

      // Switched to UTC: the same instant in the field, read in UTC, everything labelled UTC.
      await page.click('.clock-toggle button:has-text("UTC")');
      await expect(header()).resolves.toBe('Started (UTC)');
      await expect(started()).resolves.toBe(shifted(STARTED, 0));
      expect(await page.inputValue('input[name=start]')).toBe(oneHourBefore.slice(0, 16));
      expect(await page.evaluate(() => localStorage.getItem('traceloom.clock'))).toBe('utc');
      await page.fill('input[name=start]', shifted(STARTED, -120).replace(' ', 'T').slice(0, 16));
      await page.click('button:has-text("Apply")');
      const twoHoursBefore = new Date(STARTED.getTime() - 2 * 3_600_000).toISOString().replace('.000Z', 'Z');
      await page.waitForURL((u) => u.searchParams.get('start') === twoHoursBefore);

      // Remembered: a reload keeps UTC; the other pages follow it (spend days stay UTC days, said so).
      await page.reload();
      await page.locator('tr[data-trace-id="clock-run"]').waitFor();
      await expect(header()).resolves.toBe('Started (UTC)');
      await openSettled('executions/clock-run?tab=templates');
      await openSettled('spend');
      await expect(page.locator('.card h2:has-text("UTC days")').count()).resolves.toBe(1);
      await page.click('.clock-toggle button:has-text("Local")');
      expect(await page.evaluate(() => localStorage.getItem('traceloom.clock'))).toBeNull();
      expect(errors).toEqual([]);
    } finally {
      await india.close();
    }
  });
});
