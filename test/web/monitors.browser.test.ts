// Monitors in Chromium: a monitor of the default project breached by a made error-rate regression
// shows its state, the figures of its last evaluation and, on demand, its alert history; "Evaluate
// now" after the recovery shows it resolved with both alerts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { record, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';

let t: ConsoleTest;
const MIN = 60_000;
const T0 = new Date(Math.floor(Date.now() / MIN) * MIN);
beforeAll(async () => {
  t = await startConsoleTest({ MONITOR_INTERVAL_MS: '3600000' });
  t.svc.domain.spend.clock.now = () => T0;
});
afterAll(async () => {
  await t?.close();
});

const runs = (n: number, errors: number, from: Date, prefix: string) =>
  Array.from({ length: n }, (_x, i) => ({
    trace_id: `${prefix}-${i}`,
    agent_id: 'checkout',
    status: i < errors ? 'error' : 'ok',
    started_at: new Date(from.getTime() + i * MIN).toISOString(),
  }));

describe(`monitors page (${mode} mode)`, () => {
  it('lists a monitor with its state and figures, its history, and evaluates it now', async () => {
    await record(t, runs(10, 9, new Date(T0.getTime() - 30 * MIN), 'bad'));
    const created = await t.api('/monitors', {
      method: 'POST',
      body: {
        name: 'checkout errors',
        metric: { kind: 'error_rate' },
        filter: { agent_id: ['checkout'] },
        window_minutes: 30,
        condition: { kind: 'threshold', op: '>', value: 0.5 },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.monitor_id;
    expect((await t.api(`/monitors/${id}/evaluate`, { method: 'POST' })).body).toMatchObject({ state: 'breached' });

    const { page } = t.browser;
    await t.open('monitors');
    const card = page.locator('.monitor-card:has([data-monitor="checkout errors"])');
    await card.waitFor();
    await expect(card.locator('.badge').first().textContent()).resolves.toBe('breached');
    await expect(card.locator('[data-field=last_evaluation]').textContent()).resolves.toContain('error rate 0.9 (n=10) is > 0.5');
    await card.locator('button:has-text("History")').click();
    await card.locator('tr[data-alert=triggered]').waitFor();
    await expect(card.locator('tr[data-alert]').count()).resolves.toBe(1);

    // The errors stop: half an hour later the window holds only successes.
    await record(t, runs(10, 0, T0, 'good'));
    t.svc.domain.spend.clock.now = () => new Date(T0.getTime() + 30 * MIN);
    await card.locator('button:has-text("Evaluate now")').click();
    await card.locator('.badge:has-text("ok")').first().waitFor();
    // the open history is read again: the resolution is listed above the trigger
    await card.locator('tr[data-alert=resolved]').waitFor();
    await expect(card.locator('tr[data-alert]').count()).resolves.toBe(2);
    expect(t.errors).toEqual([]);
  });
});
