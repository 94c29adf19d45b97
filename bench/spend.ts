// Spend at scale on the embedded engine: N executions generated inside ClickHouse by the
// executions benchmark's generator (through the same materialized views as real writes), then
// stats over a 30-day window, template analytics, and the budget check in process and over HTTP.
// Run: `npx tsx -e "import('./bench/spend.ts').then((m) => m.benchSpend())"` (BENCH_EXECUTIONS
// sets the row count, default 10,000,000).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { generateExecutions } from './executions.ts';
import { quantile, timeEach } from './timing.ts';

const ms = (n: number) => n.toFixed(1);
const us = (n: number) => Math.round(n * 1000);

export async function benchSpend(): Promise<void> {
  const rows = Number(process.env.BENCH_EXECUTIONS ?? 10_000_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-spend-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', OTLP_GRPC_PORT: '0', AUTH_REQUIRED: 'false', LOG_LEVEL: 'silent', DATABASE_URL: '', REDIS_URL: '' });
  const svc = await startService(config, { logger: createLogger({ logLevel: 'silent' }) });
  const figures: Array<[string, string]> = [];
  try {
    const t0 = performance.now();
    await generateExecutions(svc.stores.clickhouse, rows);
    figures.push([`generated ${rows.toLocaleString('en-US')} executions (50 projects, 90 days) in the engine`, `${((performance.now() - t0) / 1000).toFixed(1)} s`]);
    const base = `${svc.url}/api/projects/default`;
    const send = async (url: string, init?: RequestInit) => {
      const r = await fetch(url, init);
      const body = await r.text();
      if (r.status !== 200 && r.status !== 201) throw new Error(`${url}: ${r.status} ${body}`);
      return body;
    };
    await send(`${base}/prompts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ prompt_id: 'support', type: 'text', template: 'x' }) });
    const window = 'start=2026-10-01T00:00:00Z&end=2026-10-31T00:00:00Z';
    const first = JSON.parse(await send(`${base}/stats?${window}`)) as { total_executions: number };

    const stats = (await timeEach(50, () => send(`${base}/stats?${window}`))).samples;
    figures.push([`stats, 30-day window, one project (${first.total_executions.toLocaleString('en-US')} executions in it) over HTTP (p50 / p95)`, `${ms(quantile(stats, 0.5))} / ${ms(quantile(stats, 0.95))} ms`]);
    const analytics = (await timeEach(50, () => send(`${base}/prompts/support/analytics?${window}`))).samples;
    figures.push(['template analytics, 30-day window, over HTTP (p50 / p95)', `${ms(quantile(analytics, 0.5))} / ${ms(quantile(analytics, 0.95))} ms`]);

    await send(`${base}/budget`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ budget_monthly_usd: 1000, alert_threshold_pct: 80, enforcement_mode: 'block' }) });
    const budgets = svc.domain.spend.budgets;
    await budgets.check('default');
    const inProcess = (await timeEach(20_000, () => budgets.check('default'))).samples;
    figures.push(['budget check, in process (p50 / p99)', `${us(quantile(inProcess, 0.5))} / ${us(quantile(inProcess, 0.99))} µs`]);
    const overHttp = (await timeEach(2_000, () => send(`${base}/budget/check`))).samples;
    figures.push(['budget check over HTTP, loopback, keep-alive (p50 / p99)', `${ms(quantile(overHttp, 0.5))} / ${ms(quantile(overHttp, 0.99))} ms`]);
  } finally {
    await svc.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n## spend (${rows.toLocaleString('en-US')} executions, embedded chDB)`);
  console.log('| what | figure |');
  console.log('|---|---|');
  for (const [what, value] of figures) console.log(`| ${what} | ${value} |`);
}
