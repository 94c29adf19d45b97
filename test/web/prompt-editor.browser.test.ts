// Prompt editing in Chromium: a prompt created from the console (variables detected as typed, a
// render preview before saving), a new version saved from it appearing in the history, and a
// label move that asks first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { PROJECT, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';

let t: ConsoleTest;
beforeAll(async () => {
  t = await startConsoleTest();
});
afterAll(async () => {
  await t?.close();
});

describe(`prompt editing (${mode} mode)`, () => {
  it('creates a text prompt: variables detected as typed, the preview rendered before saving', async () => {
    const { page } = t.browser;
    await t.open('prompts');
    await page.locator('.empty h3:has-text("No prompts yet")').waitFor();
    await page.click('button:has-text("New prompt")');
    await page.fill('input[name=prompt_id]', 'welcome');
    await page.fill('textarea[name=template]', 'Hello {{name}}, your plan is {{ plan }}.');
    await expect(page.locator('.variables').getAttribute('data-variables')).resolves.toBe('name,plan');
    await page.fill('input[name=preview-name]', 'Ada');
    await expect(page.locator('pre.preview').textContent()).resolves.toBe('Hello Ada, your plan is {{ plan }}.');
    await page.fill('input[name=preview-plan]', 'pro');
    await expect(page.locator('pre.preview').textContent()).resolves.toBe('Hello Ada, your plan is pro.');
    await page.fill('input[name=labels]', 'production');
    await t.browser.screenshot('prompt-editor');
    await page.click('button:has-text("Create prompt")');
    await page.waitForURL(`${t.svc.url}/projects/${PROJECT}/prompts/welcome`);
    const stored = (await t.api('/prompts/welcome/versions/1')).body;
    expect([stored.template, stored.variables, stored.labels]).toEqual([
      'Hello {{name}}, your plan is {{ plan }}.',
      ['name', 'plan'],
      ['production'],
    ]);
  });

  it('saves a new version from the console, which appears in the history', async () => {
    const { page } = t.browser;
    await page.click('button[role=tab]:has-text("New version")');
    await expect(page.inputValue('textarea[name=template]')).resolves.toBe('Hello {{name}}, your plan is {{ plan }}.');
    await page.fill('textarea[name=template]', 'Hi {{name}}! Plan: {{plan}}. Region: {{region}}.');
    await expect(page.locator('.variables').getAttribute('data-variables')).resolves.toBe('name,plan,region');
    await page.fill('input[name=commit_message]', 'shorter greeting');
    await page.click('button:has-text("Save new version")');
    await page.locator('.version-list li[data-version="2"]:has-text("shorter greeting")').waitFor();
    await expect(page.locator('.card h2:has-text("Version 2")').textContent()).resolves.toBe('Version 2 (latest)');
    const history = (await t.api('/prompts/welcome/versions')).body.items.map((v: { version: number }) => v.version);
    expect(history.sort()).toEqual([1, 2]);
    expect((await t.api('/prompts/welcome/versions/2')).body.template).toBe('Hi {{name}}! Plan: {{plan}}. Region: {{region}}.');
    await t.browser.screenshot('prompt-versions');
  });

  it('moves a label only after the confirmation', async () => {
    const { page } = t.browser;
    await page.selectOption('select[name=label-production]', '2');
    page.once('dialog', (d) => void d.dismiss());
    await page.click('tr[data-label=production] button:has-text("Move")');
    await expect(page.locator('tr[data-label=production]').textContent()).resolves.toContain('→ v1');
    expect((await t.api('/prompts/welcome')).body.labels).toEqual({ production: 1 });
    page.once('dialog', (d) => {
      expect(d.message()).toContain('Move "production" from v1 to v2');
      void d.accept();
    });
    await page.click('tr[data-label=production] button:has-text("Move")');
    await page.locator('tr[data-label=production]:has-text("→ v2")').waitFor();
    expect((await t.api('/prompts/welcome')).body.labels).toEqual({ production: 2 });
    expect(t.errors).toEqual([]);
  });
});
