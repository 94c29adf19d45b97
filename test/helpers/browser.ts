// A real headless Chromium (Debian's `chromium` package, which `npm test`'s pretest installs) driven by
// playwright-core: a fresh profile per launch, no network but loopback in practice (no first-run,
// sync, component updates or background fetches), and screenshots under .tmp/console/.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { mode, tempDir } from './env.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = fileURLToPath(new URL('../../.tmp/console/', import.meta.url));

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Full-page PNGs at .tmp/console/<store mode>-<name>.png and …-<name>-dark.png (the dark theme); returns the first path. */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/** `timezoneId`: the viewer's time zone (default UTC), for the console's local clock. */
export async function launchBrowser(opts: { timezoneId?: string } = {}): Promise<TestBrowser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium package (apt-get update && apt-get install -y chromium), as npm test's pretest does (bin/ensure-chromium)`,
    );
  }
  const profile = tempDir('traceloom-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1360, height: 900 },
    acceptDownloads: true,
    timezoneId: opts.timezoneId ?? 'UTC',
    locale: 'en-US',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context,
    page,
    async screenshot(name) {
      const file = path.join(SCREENSHOTS, `${mode}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: path.join(SCREENSHOTS, `${mode}-${name}-dark.png`), fullPage: true });
      await page.emulateMedia({ colorScheme: 'light' });
      return file;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Errors the page threw or logged: a console page must have none. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  return errors;
}
