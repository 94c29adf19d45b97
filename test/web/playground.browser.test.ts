// The playground in Chromium (docs/playground.md): a saved chat version picked, its variable filled,
// two loopback models ticked and run: each answer streams into its column with its exact cost and a
// link to the execution recorded; then the template edited, run unsaved, and saved as a new version.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { startConsoleTest, type ConsoleTest } from '../helpers/console.ts';
import { startFakeJudge, type FakeJudge } from '../helpers/fake-judge.ts';

let t: ConsoleTest;
let model: FakeJudge;
beforeAll(async () => {
  // echoes the last line it was sent
  model = await startFakeJudge(
    (req) => ({ kind: 'judgement', content: `You said: ${req.text.split('\n').pop()}`, promptTokens: 1_000, completionTokens: 500 }),
    'pg-model',
  );
  t = await startConsoleTest({
    EVALUATOR_ALLOW_PRIVATE: 'true', // the model is on loopback
    ...(mode === 'server' ? { SECRETS_KEY: crypto.randomBytes(32).toString('hex') } : {}),
  });
});
afterAll(async () => {
  await model?.close();
  await t?.close();
});

const ok = async (method: string, path: string, body: unknown) => {
  const r = await t.api(path, { method, body });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};

describe(`the playground in the console (${mode} mode)`, () => {
  it('runs a version on two models side by side, streamed and priced, then saves an edit as a new version', async () => {
    const { page } = t.browser;
    await ok('PUT', '/models/pg-model', { provider: 'openai', input_per_mtok: 3, output_per_mtok: 12 });
    await ok('POST', '/prompts', {
      prompt_id: 'greeter',
      type: 'chat',
      template: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello {{name}}' },
      ],
    });
    for (const name of ['fast model', 'other model'])
      await ok('POST', '/model-connections', { name, base_url: model.baseURL, model: 'pg-model', api_key: 'sk-test-key-1234567890' });

    await t.open('playground?prompt=greeter');
    await page.locator('textarea[name=message-1]').waitFor();
    expect(await page.inputValue('textarea[name=message-1]')).toBe('Hello {{name}}');
    await page.fill('input[name=var-name]', 'Ada');
    await page.check('label.connection:has-text("fast model") input');
    await page.check('label.connection:has-text("other model") input');
    await page.click('button[type=submit]:has-text("Run")');
    for (const name of ['fast model', 'other model']) {
      const col = page.locator(`[data-connection="${name}"]`);
      await col.locator('.result').waitFor();
      expect(await col.locator('pre.output').textContent()).toBe('You said: Hello Ada');
      // 1,000 in at $3 and 500 out at $12 per million: $0.003 + $0.006
      expect(await col.locator('[data-field=cost_usd]').textContent()).toBe('$0.009');
    }
    const executions = (await t.api('/executions?limit=10')).body.items as Array<{ source: string; template_count: number }>;
    expect(executions.filter((e) => e.source === 'playground' && e.template_count === 1)).toHaveLength(2);
    await t.browser.screenshot('playground');

    // an edit runs unsaved (no template usage), then is saved as version 2
    await page.fill('textarea[name=message-1]', 'Goodbye {{name}}');
    await page.locator('.badge:has-text("edited")').waitFor();
    await page.click('button[type=submit]:has-text("Run")');
    await page.locator('[data-connection="fast model"] pre.output:has-text("You said: Goodbye Ada")').waitFor();
    await page.click('button.save-version');
    await page.locator('.saved:has-text("version 2")').waitFor();
    const v2 = (await t.api('/prompts/greeter/versions/2')).body;
    expect(v2.template).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Goodbye {{name}}' },
    ]);
    expect(t.errors).toEqual([]);
  });
});
