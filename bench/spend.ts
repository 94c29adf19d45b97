// Spend at scale on the embedded engine: N executions generated inside ClickHouse by the
// executions benchmark's generator (through the same materialized views as real writes), then
// stats over a 30-day window, template analytics, spend breakdowns (by user with 100,000 distinct
// users, by tag), the repricing rate, and the budget check in process and over HTTP.
// Run: `npx tsx -e "import('./bench/spend.ts').then((m) => m.benchSpend())"` (BENCH_EXECUTIONS
// sets the row count, default 10,000,000).
import { generateExecutions, startEmbeddedService } from './executions.ts';
import { quantile, timeEach } from './timing.ts';
import { removeDataDir } from './data-dir.ts';

const ms = (n: number) => n.toFixed(1);
const us = (n: number) => Math.round(n * 1000);

export async function benchSpend(): Promise<void> {
  const rows = Number(process.env.BENCH_EXECUTIONS ?? 10_000_000);
  const { svc, dir } = await startEmbeddedService('traceloom-bench-spend-');
  const figures: Array<[string, string]> = [];
  try {
    const t0 = performance.now();
    await generateExecutions(svc.stores.clickhouse, rows, { attribution: true });
    figures.push([
      `generated ${rows.toLocaleString('en-US')} executions (50 projects, 90 days) in the engine`,
      `${((performance.now() - t0) / 1000).toFixed(1)} s`,
    ]);
    const base = `${svc.url}/api/projects/default`;
    const send = async (url: string, init?: RequestInit) => {
      const r = await fetch(url, init);
      const body = await r.text();
      if (r.status !== 200 && r.status !== 201 && r.status !== 202) throw new Error(`${url}: ${r.status} ${body}`);
      return body;
    };
    await send(`${base}/prompts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt_id: 'support', type: 'text', template: 'x' }),
    });
    const window = 'start=2026-10-01T00:00:00Z&end=2026-10-31T00:00:00Z';
    const first = JSON.parse(await send(`${base}/stats?${window}`)) as { total_executions: number };

    const stats = (await timeEach(50, () => send(`${base}/stats?${window}`))).samples;
    figures.push([
      `stats, 30-day window, one project (${first.total_executions.toLocaleString('en-US')} executions in it) over HTTP (p50 / p95)`,
      `${ms(quantile(stats, 0.5))} / ${ms(quantile(stats, 0.95))} ms`,
    ]);
    const analytics = (await timeEach(50, () => send(`${base}/prompts/support/analytics?${window}`))).samples;
    figures.push([
      'template analytics, 30-day window, over HTTP (p50 / p95)',
      `${ms(quantile(analytics, 0.5))} / ${ms(quantile(analytics, 0.95))} ms`,
    ]);

    // Breakdowns (GET .../spend) from the hourly rollups: by user (100,000 distinct users in the
    // project over the 90 days), by tag (an execution once per tag), by day × model.
    const all = 'start=2026-08-03T00:00:00Z&end=2026-11-01T00:00:00Z';
    for (const [what, query] of [
      ['by user, 90 days', `${all}&group_by=user`],
      ['by user, 30 days', `${window}&group_by=user`],
      ['by tag, 90 days', `${all}&group_by=tag`],
      ['by day and model, 30 days', `${window}&group_by=day,model`],
      ['by user, one tag, 30 days', `${window}&group_by=user&tag=prod`],
    ] as const) {
      const firstAnswer = JSON.parse(await send(`${base}/spend?${query}`)) as { groups: number; source: string };
      const samples = (await timeEach(30, () => send(`${base}/spend?${query}`))).samples;
      figures.push([
        `breakdown ${what} (${firstAnswer.groups.toLocaleString('en-US')} groups, top 100 + other; ${firstAnswer.source}) over HTTP (p50 / p95)`,
        `${ms(quantile(samples, 0.5))} / ${ms(quantile(samples, 0.95))} ms`,
      ]);
    }

    // Repricing: a price for model-3, then a dry run and the job over the project's 90 days.
    const json = { 'Content-Type': 'application/json' };
    await send(`${base}/models/model-3`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ input_per_mtok: 1.25, output_per_mtok: 10 }),
    });
    const scope = { from: '2026-08-03T00:00:00Z', to: '2026-11-01T00:00:00Z', model: 'model-3' };
    const t1 = performance.now();
    const dry = JSON.parse(
      await send(`${base}/reprice`, { method: 'POST', headers: json, body: JSON.stringify({ ...scope, dry_run: true }) }),
    ) as { executions_scanned: number; executions_changed: number };
    const dryS = (performance.now() - t1) / 1000;
    figures.push([
      `repricing dry run (${dry.executions_scanned.toLocaleString('en-US')} executions of one model)`,
      `${dryS.toFixed(1)} s (${Math.round(dry.executions_scanned / dryS).toLocaleString('en-US')} executions/s)`,
    ]);
    const t2 = performance.now();
    const job = JSON.parse(await send(`${base}/reprice`, { method: 'POST', headers: json, body: JSON.stringify(scope) })) as { id: string };
    let state: { status: string; executions_changed: number } = { status: 'queued', executions_changed: 0 };
    while (state.status === 'queued' || state.status === 'running') {
      await new Promise((r) => setTimeout(r, 100));
      state = JSON.parse(await send(`${base}/reprice/${job.id}`));
    }
    const applyS = (performance.now() - t2) / 1000;
    if (state.status !== 'done' || state.executions_changed !== dry.executions_changed)
      throw new Error(`repricing job ended ${JSON.stringify(state)}; the dry run said ${dry.executions_changed}`);
    figures.push([
      `repricing job, applied (${state.executions_changed.toLocaleString('en-US')} executions rewritten as corrections)`,
      `${applyS.toFixed(1)} s (${Math.round(state.executions_changed / applyS).toLocaleString('en-US')} executions/s)`,
    ]);

    await send(`${base}/budget`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ budget_monthly_usd: 1000, alert_threshold_pct: 80, enforcement_mode: 'block' }),
    });
    const budgets = svc.domain.spend.budgets;
    await budgets.check('default');
    const inProcess = (await timeEach(20_000, () => budgets.check('default'))).samples;
    figures.push(['budget check, in process (p50 / p99)', `${us(quantile(inProcess, 0.5))} / ${us(quantile(inProcess, 0.99))} µs`]);
    const overHttp = (await timeEach(2_000, () => send(`${base}/budget/check`))).samples;
    figures.push([
      'budget check over HTTP, loopback, keep-alive (p50 / p99)',
      `${ms(quantile(overHttp, 0.5))} / ${ms(quantile(overHttp, 0.99))} ms`,
    ]);
  } finally {
    await svc.close();
    removeDataDir(dir);
  }
  console.log(`\n## spend (${rows.toLocaleString('en-US')} executions, embedded chDB)`);
  console.log('| what | figure |');
  console.log('|---|---|');
  for (const [what, value] of figures) console.log(`| ${what} | ${value} |`);
}
