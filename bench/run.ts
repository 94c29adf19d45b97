// `npm run bench`: benchmark scripts that print figures (BENCHMARKS.md records them).
// Each later area (prompts, executions, ingest, spend) adds its module here.
import os from 'node:os';
// Each bench is imported when it runs: the ingest bench's process holds the API it measures (its peak RSS
// is the figure), not the console bench's browser driver or the other benches' modules.

const only = process.argv[2];
const benches: Record<string, () => Promise<unknown>> = {
  boot: async () => {
    const { benchBoot } = await import('./boot.ts');
    const rows = await benchBoot();
    console.log('\n## boot and idle memory');
    console.log('| mode | boot to healthy (ms) | idle RSS (MiB) | GET /api/health p50 (ms) |');
    console.log('|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.mode} | ${r.bootMs} | ${r.idleRssMiB} | ${r.healthP50Ms} |`);
  },
  auth: async () => {
    const { benchAuth } = await import('./auth.ts');
    const rows = await benchAuth();
    console.log('\n## authentication cost per request');
    console.log('| what | n | p50 (µs) | p99 (µs) |');
    console.log('|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.what} | ${r.n} | ${r.p50Us} | ${r.p99Us} |`);
  },
  prompts: async () => {
    const { benchPrompts } = await import('./prompts.ts');
    const modes: Array<[string, Record<string, string>]> = [
      ['embedded', { DATABASE_URL: '', REDIS_URL: '' }],
      [
        'PostgreSQL + Redis',
        {
          DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
          REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
          REDIS_PREFIX: 'tlbench',
        },
      ],
    ];
    console.log('\n## prompt reads and writes');
    console.log('| stores | what | n | p50 (µs) | p99 (µs) | per second |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, env] of modes) {
      try {
        for (const r of await benchPrompts(env))
          console.log(`| ${name} | ${r.what} | ${r.n} | ${r.p50Us || ''} | ${r.p99Us || ''} | ${r.perSecond ?? ''} |`);
      } catch (err) {
        console.log(`| ${name} | not measured: ${(err as Error).message} | | | | |`);
      }
    }
  },
  executions: async () => {
    const { benchExecutions } = await import('./executions.ts');
    const rows = Number(process.env.BENCH_EXECUTIONS ?? 10_000_000);
    console.log(`\n## executions (${rows.toLocaleString('en-US')} rows, embedded chDB)`);
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchExecutions(rows)) console.log(`| ${f.what} | ${f.value} |`);
  },
  spend: async () => {
    const { benchSpend } = await import('./spend.ts');
    await benchSpend();
  },
  decode: async () => {
    const { benchOtlpDecode } = await import('./otlp-decode.ts');
    console.log('\n## OTLP decoding (one core, no HTTP, no storage)');
    await benchOtlpDecode();
  },
  console: async () => {
    const { benchConsole } = await import('./console.ts');
    const explorerExecutions = Number(process.env.BENCH_EXECUTIONS ?? 10_000_000);
    console.log(
      `\n## web console (bundle; executions page with 10,000 executions and the spend explorer over ${explorerExecutions.toLocaleString('en-US')} more, headless Chromium, embedded stores)`,
    );
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchConsole({ reloads: Number(process.env.BENCH_CONSOLE_RELOADS ?? 10), explorerExecutions }))
      console.log(`| ${f.what} | ${f.value} |`);
  },
  'console-pages': async () => {
    const { benchConsolePages } = await import('./console-pages.ts');
    const executions = Number(process.env.BENCH_EXECUTIONS ?? 100_000);
    console.log(
      `\n## console pages, first render (${executions.toLocaleString('en-US')} executions in one project, headless Chromium, embedded stores)`,
    );
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchConsolePages(executions, Number(process.env.BENCH_CONSOLE_RELOADS ?? 5)))
      console.log(`| ${f.what} | ${f.value} |`);
  },
  'spend-views': async () => {
    const { benchSpendViews } = await import('./spend-views.ts');
    console.log('\n## the rollups by grain at insert time (embedded chDB)');
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const [what, value] of await benchSpendViews()) console.log(`| ${what} | ${value} |`);
  },
  tenant: async () => {
    const { benchTenant } = await import('./tenant.ts');
    await benchTenant();
  },
  quality: async () => {
    const { benchQuality } = await import('./quality.ts');
    const rows = Number(process.env.BENCH_EXECUTIONS ?? 10_000_000);
    console.log(
      `\n## quality beside cost (${rows.toLocaleString('en-US')} executions, ${(rows * 2).toLocaleString('en-US')} scores, embedded chDB)`,
    );
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchQuality(rows)) console.log(`| ${f.what} | ${f.value} |`);
    await benches.datasets!();
    await benches.evaluators!();
  },
  datasets: async () => {
    const { benchDatasetImport } = await import('./datasets.ts');
    const items = Number(process.env.BENCH_IMPORT_ITEMS ?? 100_000);
    console.log(`\n## dataset import (${items.toLocaleString('en-US')} items, JSON Lines, embedded stores)`);
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchDatasetImport(items)) console.log(`| ${f.what} | ${f.value} |`);
  },
  // Issue 39: an import far past the old 120 s request timeout (1,300,000 lines by default), as one
  // request. Run on its own (`npm run bench import`): minutes long, so not part of the full run.
  'scores-dense': async () => {
    const { benchScoresDense } = await import('./scores-dense.ts');
    const seconds = Number(process.env.BENCH_SECONDS ?? 60);
    console.log('\n## score writes on dense traces (8 clients × 1,000-score batches, embedded stores)');
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchScoresDense(seconds)) console.log(`| ${f.what} | ${f.value} |`);
  },
  import: async () => {
    const { benchDatasetImport } = await import('./datasets.ts');
    const lines = Number(process.env.BENCH_IMPORT_LINES ?? 1_300_000);
    console.log(`\n## large dataset import (${lines.toLocaleString('en-US')} lines, one JSON Lines request, embedded stores)`);
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchDatasetImport(lines, 'lines')) console.log(`| ${f.what} | ${f.value} |`);
  },
  evaluators: async () => {
    const { benchEvaluators } = await import('./evaluators.ts');
    console.log('\n## LLM-as-judge evaluators (embedded stores, loopback judge)');
    console.log('| what | figure |');
    console.log('|---|---|');
    const n = Number(process.env.BENCH_JUDGEMENTS ?? 2_000);
    for (const f of await benchEvaluators(n, Number(process.env.BENCH_JUDGE_LATENCY_MS ?? 0))) console.log(`| ${f.what} | ${f.value} |`);
  },
  experiments: async () => {
    const { benchExperiments } = await import('./experiments.ts');
    console.log('\n## experiments run by the service (embedded stores, loopback model)');
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchExperiments(Number(process.env.BENCH_EXPERIMENT_ITEMS ?? 1_000))) console.log(`| ${f.what} | ${f.value} |`);
  },
  monitors: async () => {
    const { benchMonitors } = await import('./monitors.ts');
    const rows = Number(process.env.BENCH_MONITOR_EXECUTIONS ?? 10_000_000);
    console.log(`\n## monitor evaluation (${rows.toLocaleString('en-US')} executions in one project over 30 days, embedded chDB)`);
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchMonitors(rows, Number(process.env.BENCH_MONITOR_SAMPLES ?? 5))) console.log(`| ${f.what} | ${f.value} |`);
  },
  'span-bytes': async () => {
    const { benchSpanBytes } = await import('./span-bytes.ts');
    console.log('\n## bytes on disk per span and per execution (GenAI traces with real prose as messages, embedded stores)');
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchSpanBytes()) console.log(`| ${f.what} | ${f.value} |`);
  },
  poison: async () => {
    const { benchPoison } = await import('./poison.ts');
    console.log('\n## ingest resuming after a poison record (embedded stores)');
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchPoison()) console.log(`| ${f.what} | ${f.value} |`);
  },
  fuzz: async () => {
    const { benchFuzz } = await import('./fuzz.ts');
    const f = await benchFuzz(
      Number(process.env.BENCH_FUZZ_CASES ?? 100_000),
      process.env.BENCH_FUZZ_SEED ? Number(process.env.BENCH_FUZZ_SEED) : undefined,
    );
    console.log(
      `\n## request fuzzing (${f.cases.toLocaleString('en-US')} requests over every route, seed ${f.seed}, embedded stores, 10 at a time)`,
    );
    console.log('| status | requests |');
    console.log('|---|---|');
    for (const [status, n] of f.histogram) console.log(`| ${status || 'no answer'} | ${n.toLocaleString('en-US')} |`);
    console.log(`\n5xx: ${f.serverErrors}; ${f.seconds.toFixed(1)} s (${Math.round(f.cases / f.seconds)} requests/s)`);
    console.log(`time by route (s): ${f.slowestRoutes.map(([r, ms]) => `${r} ${(ms / 1000).toFixed(1)}`).join('; ')}`);
    for (const p of f.problems) console.log(`problem: ${p}`);
    if (f.problems.length > 0) process.exitCode = 1;
  },
  sdk: async () => {
    const { benchSdk } = await import('./sdk.ts');
    console.log('\n## SDK prompt reads (embedded stores)');
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchSdk()) console.log(`| ${f.what} | ${f.value} |`);
  },
  ingest: async () => {
    const { benchIngest } = await import('./ingest.ts');
    console.log('\n## OTLP ingest over HTTP (embedded chDB; load from a separate process)');
    console.log('| what | figure |');
    console.log('|---|---|');
    for (const f of await benchIngest()) console.log(`| ${f.what} | ${f.value} |`);
  },
};

console.log(
  `# Traceloom benchmarks — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
);
for (const [name, run] of Object.entries(benches)) {
  if (only && only !== name) continue;
  if (!only && name === 'datasets') continue; // part of quality
  if (!only && (name === 'import' || name === 'scores-dense' || name === 'tenant')) continue; // minutes long: run by name
  await run();
}
