// The web console: the size of what a browser downloads (raw and gzip, as served), the time to
// first render of the executions page (navigation start → the first page of rows in the DOM) with
// 10,000 executions in the project, and of the spend explorer (navigation → the breakdown table in
// the DOM) over `explorerExecutions` more (default 10M, 90 days, 100,000 users), in a real headless
// Chromium against the API on embedded stores.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { buildConsole } from '../web/build.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { generateExecutions } from './executions.ts';
import { quantile } from './timing.ts';
import { removeDataDir } from './data-dir.ts';

export interface Figure {
  what: string;
  value: string;
}

const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
const RENDERED = 'traceloom:executions-rendered';
const EXPLORER_RENDERED = 'traceloom:explorer-rendered';
/** The explorer's view of a finance user: cost by model and user per day over the 90 days of data. */
const EXPLORER_QUERY = 'group_by=model,user&granularity=day&start=2026-08-03T00:00:00Z&end=2026-11-01T00:00:00Z';

export async function benchConsole(opts: { reloads?: number; explorerExecutions?: number } = {}): Promise<Figure[]> {
  const reloads = opts.reloads ?? 10;
  const explorerRows = opts.explorerExecutions ?? 10_000_000;
  const figures: Figure[] = [];
  const build = await buildConsole();
  const assets = build.files.filter((f) => f.name.startsWith('assets/'));
  for (const f of build.files)
    figures.push({ what: `bundle: ${f.name.replace(/-[A-Z0-9]+\./, '.')}`, value: `${kib(f.bytes)} raw, ${kib(f.gzipBytes)} gzip` });
  figures.push({
    what: 'bundle: JS + CSS, as served (gzip)',
    value: `${kib(assets.reduce((s, f) => s + f.gzipBytes, 0))} (${kib(assets.reduce((s, f) => s + f.bytes, 0))} raw)`,
  });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-console-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', AUTH_REQUIRED: 'false', LOG_LEVEL: 'silent', DATABASE_URL: '', REDIS_URL: '' });
  const svc = await startService(config, { logger: createLogger({ logLevel: 'silent' }) });
  const browser = await launchBrowser();
  try {
    // 500,000 executions over 50 projects: 10,000 of them in "default", the project the page shows.
    await generateExecutions(svc.stores.clickhouse, 500_000);
    const list = (await (await fetch(`${svc.url}/api/projects/default/executions?limit=1`)).json()) as { total: number };
    if (list.total !== 10_000) throw new Error(`expected 10,000 executions in the project, found ${list.total}`);

    const url = `${svc.url}/projects/default/executions`;
    const load = async (reload: boolean) => {
      if (reload) await browser.page.reload();
      else await browser.page.goto(url);
      await browser.page.locator('tr[data-trace-id]').first().waitFor();
      return browser.page.evaluate((name) => {
        const mark = performance.getEntriesByName(name)[0]!;
        const api = performance
          .getEntriesByType('resource')
          .find((r) => r.name.includes('/api/projects/default/executions?')) as PerformanceResourceTiming;
        const rows = document.querySelectorAll('tr[data-trace-id]').length;
        return { renderMs: mark.startTime, apiMs: api.duration, rows };
      }, RENDERED);
    };
    const cold = await load(false);
    figures.push({
      what: `executions page, first visit (empty cache): navigation → ${cold.rows} rows rendered`,
      value: `${cold.renderMs.toFixed(0)} ms (list API call ${cold.apiMs.toFixed(0)} ms)`,
    });
    const warm: Array<{ renderMs: number; apiMs: number }> = [];
    for (let i = 0; i < reloads; i++) warm.push(await load(true));
    const r = warm.map((w) => w.renderMs);
    const a = warm.map((w) => w.apiMs);
    figures.push({
      what: `executions page, reloads (bundle cached), p50 / max of ${reloads}`,
      value: `${quantile(r, 0.5).toFixed(0)} / ${Math.max(...r).toFixed(0)} ms (list API call p50 ${quantile(a, 0.5).toFixed(0)} ms)`,
    });
    figures.push(
      ...(await explorer(svc.url, browser, explorerRows, reloads, () =>
        generateExecutions(svc.stores.clickhouse, explorerRows, { project: 'default', attribution: true }),
      )),
    );
  } finally {
    await browser.close();
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}

/** The explorer's first render over the generated spend: a first visit, then p50 / p95 of reloads. */
async function explorer(
  base: string,
  browser: Awaited<ReturnType<typeof launchBrowser>>,
  rows: number,
  reloads: number,
  generate: () => Promise<void>,
): Promise<Figure[]> {
  await generate();
  const url = `${base}/projects/default/explorer?${EXPLORER_QUERY}`;
  const load = async (reload: boolean) => {
    if (reload) await browser.page.reload();
    else await browser.page.goto(url);
    await browser.page.locator('table.breakdown tr[data-row]').first().waitFor({ timeout: 120_000 });
    return browser.page.evaluate((name) => {
      const mark = performance.getEntriesByName(name)[0]!;
      const api = performance
        .getEntriesByType('resource')
        .find((r) => r.name.includes('/api/projects/default/spend?') && !r.name.includes('limit=10000')) as PerformanceResourceTiming;
      return { renderMs: mark.startTime, apiMs: api.duration, rows: document.querySelectorAll('table.breakdown tr[data-row]').length };
    }, EXPLORER_RENDERED);
  };
  const n = rows.toLocaleString('en-US');
  const cold = await load(false);
  const warm: Array<{ renderMs: number; apiMs: number }> = [];
  for (let i = 0; i < reloads; i++) warm.push(await load(true));
  const r = warm.map((w) => w.renderMs);
  const a = warm.map((w) => w.apiMs);
  return [
    {
      what: `spend explorer over ${n} executions (${EXPLORER_QUERY}), first visit: navigation → ${cold.rows} rows rendered`,
      value: `${cold.renderMs.toFixed(0)} ms (breakdown API call ${cold.apiMs.toFixed(0)} ms)`,
    },
    {
      what: `spend explorer over ${n} executions, reloads, p50 / p95 of ${reloads}`,
      value: `${quantile(r, 0.5).toFixed(0)} / ${quantile(r, 0.95).toFixed(0)} ms (breakdown API call p50 ${quantile(a, 0.5).toFixed(0)} / p95 ${quantile(a, 0.95).toFixed(0)} ms)`,
    },
  ];
}
