// Executions at scale on the embedded engine: N rows generated inside ClickHouse
// (INSERT ... SELECT FROM numbers(), through the same materialized views as real writes), plus a
// real HTTP ingest run; then the read paths of the API.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService, type Service } from '../src/service.ts';
import { quantile, timeEach } from './timing.ts';
import type { ClickHouseStore } from '../src/stores/clickhouse.ts';
import { removeDataDir } from './data-dir.ts';

export interface Figure {
  what: string;
  value: string;
}

const pct = quantile;
const ms = (n: number) => n.toFixed(1);
const timed = async (n: number, fn: (i: number) => Promise<unknown>) => (await timeEach(n, fn)).samples;

/** The columns of the generated execution `number`, as SQL over `number` (shared with the scores the quality bench generates). */
export const GENERATED = {
  projectId: "if(number % 50 = 7, 'default', concat('p-', toString(number % 50)))",
  startedAt: "toDateTime64('2026-11-01 00:00:00', 3, 'UTC') - toIntervalMillisecond((number * 7919) % (90 * 86400000))",
  traceId: "concat('tr-', toString(number))",
  agentId: "concat('agent-', toString(number % 20))",
  provider: "['openai', 'anthropic', 'google'][number % 3 + 1]",
  model: "concat('model-', toString(number % 12))",
  /** With two prompt versions: whether the execution uses prompt "support", and which version. */
  usesPrompt: 'number % 4 = 3',
  version: (versions: [number, number]) => `[${versions[0]}, ${versions[1]}][intDiv(number, 4) % 2 + 1]`,
};

/**
 * Generates `rows` executions inside the engine (INSERT ... SELECT FROM numbers(), through the same
 * materialized views as real writes): 50 projects × 90 days before 2026-11-01; project p-7 is
 * stored as "default". Shared by the executions and spend benchmarks.
 */
export async function generateExecutions(
  ch: ClickHouseStore,
  rows: number,
  opts: {
    attribution?: boolean;
    promptVersions?: [number, number];
    /** every row in this project (default: 50 projects) */ project?: string;
    /** the first row's number (default 0): a later call adds rows to those of an earlier one */
    from?: number;
    /** with `attribution`: a session per 10 executions and metadata `customer` (500 values) and `region` (3) */
    sessions?: boolean;
    /** SQL over `number` instead of GENERATED's: when each started, and (with `attribution`) whose it is */
    startedAt?: string;
    userId?: string;
  } = {},
): Promise<void> {
  // A quarter of the executions use prompt "support": version 1; or, for the quality bench, two
  // versions alternating, on a quarter that holds executions of the project the API reads.
  const version = opts.promptVersions ? GENERATED.version(opts.promptVersions) : '1';
  const uses = opts.promptVersions ? GENERATED.usesPrompt : 'number % 4 = 0';
  // Spend breakdowns: 100,000 distinct users in the "default" project, two tags per execution (of 3 and 7).
  const attribution = opts.attribution
    ? {
        columns: ', user_id, tags',
        values: `, ${opts.userId ?? "concat('user-', toString(intDiv(number, 50) % 100000))"}, [['prod', 'staging', 'dev'][number % 3 + 1], concat('team-', toString(number % 7))]`,
      }
    : { columns: '', values: '' };
  if (opts.attribution && opts.sessions) {
    attribution.columns += ', session_id, metadata';
    attribution.values +=
      ", concat('s-', toString(intDiv(number, 10))), map('customer', concat('c-', toString(number % 500)), 'region', ['eu', 'us', 'ap'][number % 3 + 1])";
  }
  const chunk = 2_000_000;
  const first = opts.from ?? 0;
  for (let offset = first; offset < first + rows; offset += chunk) {
    const n = Math.min(chunk, first + rows - offset);
    await ch.command(
      `INSERT INTO executions (project_id, started_at, trace_id, version, sign, ended_at, received_at, source, agent_id, provider, model, status,
         tokens_in, tokens_out, latency_ms, cost_usd, cost_source, price_id, content_hash, \`tu.prompt_id\`, \`tu.version\`, \`tu.version_ref\`, \`tu.role\`, \`tu.source\`, \`tu.message_index\`, conversation_history${attribution.columns})
       SELECT ${opts.project ? `'${opts.project.replace(/[^a-z0-9-]/g, '')}'` : GENERATED.projectId} AS project_id, ${opts.startedAt ?? GENERATED.startedAt} AS started_at,
         ${GENERATED.traceId} AS trace_id, 1, 1, started_at + toIntervalMillisecond(800), started_at + toIntervalMillisecond(900), 'api',
         ${GENERATED.agentId}, ${GENERATED.provider}, ${GENERATED.model},
         if(number % 37 = 0, 'error', 'ok'), 500 + number % 4000, 50 + number % 900, 200 + number % 5000,
         toDecimal64((number % 1000) / 100000, 9), 'computed', 'bench', 'h',
         if(${uses}, ['support'], []), if(${uses}, [${version}], []), if(${uses}, ['latest'], []), if(${uses}, [''], []), if(${uses}, [''], []), if(${uses}, [-1], []),
         '[{"role":"user","content":"hello there, this is a benchmark message"}]'${attribution.values}
       FROM numbers(${offset}, ${n})`,
    );
  }
}

/**
 * The API on embedded stores in a new temporary DATA_DIR (the caller removes it), or in `keptDir`
 * (created if absent, kept), no authentication, silent.
 */
export async function startEmbeddedService(
  prefix: string,
  env: Record<string, string> = {},
  keptDir?: string,
): Promise<{ svc: Service; dir: string }> {
  if (keptDir) fs.mkdirSync(keptDir, { recursive: true });
  const dir = keptDir ?? fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const config = loadConfig({
    DATA_DIR: dir,
    PORT: '0',
    OTLP_GRPC_PORT: '0',
    AUTH_REQUIRED: 'false',
    LOG_LEVEL: 'silent',
    DATABASE_URL: '',
    REDIS_URL: '',
    ...env,
  });
  return { svc: await startService(config, { logger: createLogger({ logLevel: 'silent' }) }), dir };
}

export async function benchExecutions(rows: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  const { svc, dir } = await startEmbeddedService('traceloom-bench-exec-');
  const ch = svc.stores.clickhouse;
  try {
    // 50 projects × 90 days; project p-7 is the one the API reads (as "default").
    const t0 = performance.now();
    await generateExecutions(ch, rows);
    figures.push({
      what: `generated ${rows.toLocaleString('en-US')} executions (50 projects, 90 days) in the engine`,
      value: `${((performance.now() - t0) / 1000).toFixed(1)} s`,
    });
    await ch.command('OPTIMIZE TABLE execution_traces FINAL');

    const base = `${svc.url}/api/projects/default/executions`;
    const get = (url: string) =>
      fetch(url).then(async (r) => {
        if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
        return r.json() as Promise<{ items: Array<{ trace_id: string }>; next_cursor: string | null; total: number }>;
      });
    const filters = 'provider=openai,anthropic&start=2026-09-01T00:00:00Z&end=2026-10-15T00:00:00Z';
    const page1 = await timed(30, () => get(`${base}?limit=50&${filters}`));
    figures.push({ what: 'list page 1, filtered, with total (p50 / p95)', value: `${ms(pct(page1, 0.5))} / ${ms(pct(page1, 0.95))} ms` });
    const plain = await timed(30, () => get(`${base}?limit=50`));
    figures.push({ what: 'list page 1, no filter, with total (p50 / p95)', value: `${ms(pct(plain, 0.5))} / ${ms(pct(plain, 0.95))} ms` });
    // walk to page 1,000 by cursor, then time that page
    let cursor: string | null = null;
    let page = await get(`${base}?limit=50&${filters}`);
    const total = page.total;
    let pages = 1;
    while (pages < 1000 && page.next_cursor) {
      cursor = page.next_cursor;
      page = await get(`${base}?limit=50&${filters}&cursor=${cursor}`);
      pages++;
    }
    const deep = await timed(30, () => get(`${base}?limit=50&${filters}${cursor ? `&cursor=${cursor}` : ''}`));
    figures.push({
      what: `list page ${pages.toLocaleString('en-US')} by cursor, filtered (of ${total.toLocaleString('en-US')} matching) (p50 / p95)`,
      value: `${ms(pct(deep, 0.5))} / ${ms(pct(deep, 0.95))} ms`,
    });
    const traces = (await get(`${base}?limit=200`)).items.map((i) => i.trace_id);
    const detail = await timed(100, (i) => get(`${base}/${traces[i % traces.length]}`));
    figures.push({ what: 'detail by trace id (p50 / p95)', value: `${ms(pct(detail, 0.5))} / ${ms(pct(detail, 0.95))} ms` });
    const spend = await timed(30, () =>
      ch.query(
        "SELECT toDate(bucket) AS day, toString(sum(cost_usd)) AS cost FROM spend_by_dims WHERE project_id = 'default' AND grain = 'day' AND bucket >= '2026-10-01' AND bucket < '2026-11-01' GROUP BY day ORDER BY day",
      ),
    );
    figures.push({
      what: 'daily spend for a month, one project (p50 / p95)',
      value: `${ms(pct(spend, 0.5))} / ${ms(pct(spend, 0.95))} ms`,
    });

    // Export: 1,000,000 executions of one project streamed over HTTP as CSV
    const extra =
      1_000_000 - Number((await ch.query<{ n: string }>("SELECT count() AS n FROM executions WHERE project_id = 'default'"))[0]!.n);
    if (extra > 0) {
      await ch.command(
        `INSERT INTO executions (project_id, started_at, trace_id, version, sign, ended_at, received_at, source, agent_id, provider, model, status, tokens_in, tokens_out, latency_ms, cost_usd, cost_source, content_hash)
         SELECT 'default', toDateTime64('2025-06-01 00:00:00', 3, 'UTC') - toIntervalMillisecond(number * 997), concat('old-', toString(number)), 1, 1,
           toDateTime64('2025-06-01 00:00:01', 3, 'UTC'), toDateTime64('2025-06-01 00:00:01', 3, 'UTC'), 'api', 'agent-x', 'openai', 'model-x', 'ok',
           100, 10, 300, toDecimal64(0.0001, 9), 'computed', 'h'
         FROM numbers(${extra})`,
      );
    }
    const baseRss = process.memoryUsage().rss;
    let peakRss = baseRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
    const exportStart = performance.now();
    const res = await fetch(`${base}/export?format=csv`);
    let lines = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) for (const b of chunk) if (b === 10) lines++;
    clearInterval(sampler);
    figures.push({
      what: `export ${(lines - 1).toLocaleString('en-US')} executions as CSV over HTTP (time; RSS growth of the process during it)`,
      value: `${((performance.now() - exportStart) / 1000).toFixed(1)} s; +${Math.round((peakRss - baseRss) / 2 ** 20)} MiB (from ${Math.round(baseRss / 2 ** 20)} MiB)`,
    });

    // HTTP ingest: 64 concurrent clients (agents) posting single records
    const N = 8000;
    let next = 0;
    const lat: number[] = [];
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < N; i = next++) {
          const t = performance.now();
          const r = await fetch(base, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({
              trace_id: `http-${i}`,
              provider: 'openai',
              model: 'gpt-4o-mini',
              tokens_in: 1200,
              tokens_out: 300,
              latency_ms: 900,
              conversation_history: [{ role: 'user', content: 'hi' }],
            }),
          });
          await r.text();
          if (r.status !== 201) throw new Error(`ingest ${r.status}`);
          lat.push(performance.now() - t);
        }
      }),
    );
    const wall = (performance.now() - start) / 1000;
    figures.push({
      what: 'direct ingest over HTTP, 64 concurrent clients (executions/s; p50 / p99)',
      value: `${Math.round(N / wall)}/s; ${ms(pct(lat, 0.5))} / ${ms(pct(lat, 0.99))} ms`,
    });
  } finally {
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}
