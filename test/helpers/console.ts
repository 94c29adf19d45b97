// The console's browser tests (test/web/): the real service in dev mode (AUTH_REQUIRED=false, the
// `default` project, admin) and a real headless Chromium, plus the API for the same answers.
import { expect } from 'vitest';
import { dropTestDatabases } from './env.ts';
import { getJson, startTestService, type TestService } from './service.ts';
import { collectPageErrors, launchBrowser, type TestBrowser } from './browser.ts';

export const PROJECT = 'default';

export interface ConsoleTest {
  svc: TestService;
  browser: TestBrowser;
  /** Script errors the pages threw or logged. */
  errors: string[];
  /** The API under /api/projects/default. */
  api(path: string, init?: { method?: string; body?: unknown }): Promise<{ status: number; body: any }>;
  /** Opens a console path (under /projects/default when it starts without a slash). */
  open(path: string): Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleTest(env: Record<string, string> = {}): Promise<ConsoleTest> {
  const svc = await startTestService({ AUTH_REQUIRED: 'false', ...env });
  const browser = await launchBrowser();
  const errors = collectPageErrors(browser.page);
  return {
    svc,
    browser,
    errors,
    api: (path, init = {}) =>
      getJson(`${svc.url}/api/projects/${PROJECT}${path}`, {
        method: init.method ?? 'GET',
        headers: init.body === undefined ? {} : { 'Content-Type': 'application/json' },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      }),
    open: async (path) => {
      await browser.page.goto(`${svc.url}${path.startsWith('/') ? path : `/projects/${PROJECT}/${path}`}`);
    },
    async close() {
      await browser?.close();
      await svc?.close();
      await dropTestDatabases();
    },
  };
}

/** Records direct executions (201 each). */
export async function record(t: ConsoleTest, runs: object[]): Promise<void> {
  for (const r of runs) {
    const res = await t.api('/executions', { method: 'POST', body: { provider: 'openai', model: 'gpt-4o-mini', ...r } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}
