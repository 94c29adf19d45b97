// Sessions, users and finding a trace in Chromium: the sessions list, a session's executions in
// time order as one conversation, users linking to their executions, the trace-id search box,
// j/k/Enter on the executions list, user/session/tag filters in the URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { PROJECT, record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';

let t: ConsoleTest;
const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

beforeAll(async () => {
  t = await startConsoleTest();
  // A session's turns recorded out of order; another session; a run without a session.
  await record(t, [
    { trace_id: 'turn-3', session_id: 'chat-42', user_id: 'ada', started_at: ago(10), cost_usd: 0.003, tags: ['vip'] },
    { trace_id: 'turn-1', session_id: 'chat-42', user_id: 'ada', started_at: ago(30), cost_usd: 0.001 },
    { trace_id: 'turn-2', session_id: 'chat-42', user_id: 'ada', started_at: ago(20), cost_usd: 0.002, status: 'error' },
    { trace_id: 'other-1', session_id: 'chat-7', user_id: 'bob', started_at: ago(50), cost_usd: 0.5 },
    { trace_id: 'lonely', started_at: ago(5), agent_id: 'batch' },
  ]);
});
afterAll(async () => {
  await t?.close();
});

const ids = (sel: string, attr: string) => t.browser.page.locator(sel).evaluateAll((els, a) => els.map((e) => e.getAttribute(a)), attr);

describe(`sessions, users and search (${mode} mode)`, () => {
  it('lists the sessions and shows one as its executions in time order', async () => {
    const { page } = t.browser;
    await t.open('sessions');
    await page.locator('tr[data-session-id="chat-42"]').waitFor();
    expect(await ids('tr[data-session-id]', 'data-session-id')).toEqual(['chat-42', 'chat-7']);
    const cells = await page.locator('tr[data-session-id="chat-42"] td').allTextContents();
    expect(cells.slice(0, 5)).toEqual(['chat-42', 'ada', '3', '1', '$0.006']);
    await t.browser.screenshot('sessions');

    await page.click('tr[data-session-id="chat-42"] a:has-text("chat-42")');
    await page.waitForURL(`${t.svc.url}/projects/${PROJECT}/sessions/chat-42`);
    await page.locator('ol.conversation li').first().waitFor();
    expect(await ids('ol.conversation li', 'data-trace-id')).toEqual(['turn-1', 'turn-2', 'turn-3']);
    await t.browser.screenshot('session');
  });

  it('lists the users, linking to their executions filtered by user in the URL', async () => {
    const { page } = t.browser;
    await t.open('users');
    await page.locator('tr[data-user-id="ada"]').waitFor();
    expect(await ids('tr[data-user-id]', 'data-user-id')).toEqual(['ada', 'bob']);
    await t.browser.screenshot('users');
    await page.click('tr[data-user-id="ada"] td:first-child a');
    await page.waitForURL(/executions\?user_id=ada$/);
    await page.locator('tr[data-trace-id="turn-1"]').waitFor();
    expect((await ids('tr[data-trace-id]', 'data-trace-id')).sort()).toEqual(['turn-1', 'turn-2', 'turn-3']);
    await expect(page.inputValue('input[name=user_id]')).resolves.toBe('ada');
    await expect(page.locator('tr[data-trace-id="turn-3"] .badge.tag').textContent()).resolves.toBe('vip');
  });

  it('filters by tag from the form, and walks the rows with j / k and Enter', async () => {
    const { page } = t.browser;
    await t.open('executions');
    await page.locator('tr[data-trace-id="lonely"]').waitFor();
    await page.fill('input[name=tag]', 'vip');
    await page.click('form.filters button[type=submit]');
    await page.waitForURL(/tag=vip/);
    await page.locator('tr[data-trace-id="lonely"]').waitFor({ state: 'detached' });
    expect(await ids('tr[data-trace-id]', 'data-trace-id')).toEqual(['turn-3']);

    await t.open('executions');
    await page.locator('tr[data-trace-id="lonely"]').waitFor();
    const order = await ids('tr[data-trace-id]', 'data-trace-id');
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    await expect(page.locator('tr.selected').getAttribute('data-trace-id')).resolves.toBe(order[1]);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${t.svc.url}/projects/${PROJECT}/executions/${order[1]}`);
  });

  it('jumps to a trace id from the search box', async () => {
    const { page } = t.browser;
    await t.open('prompts');
    await page.fill('input[name=trace_search]', 'turn-2');
    await page.press('input[name=trace_search]', 'Enter');
    await page.waitForURL(`${t.svc.url}/projects/${PROJECT}/executions/turn-2`);
    await page.locator('h1:has-text("turn-2"), [data-trace-id="turn-2"], .card').first().waitFor();
    await expect(page.locator('main').textContent()).resolves.toContain('turn-2');
    expect(t.errors).toEqual([]);
  });
});
