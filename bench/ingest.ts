// OTLP ingest throughput on the embedded stores: the API in this process, the load from a
// separate process (bench/ingest-load.ts: 8 keep-alive clients, protobuf exports of 100 and 512
// spans, gzip on and off). Prints sustained spans/s, request latency, the API process's RSS, how
// long trace assembly takes to catch up, and the ratio to the engine's own insert rate for the
// same rows (INSERT ... SELECT of the stored spans into a table of the same structure).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';

export interface Figure {
  what: string;
  value: string;
}

interface LoadResult {
  spans: number;
  requests: number;
  wallS: number;
  spansPerS: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  bytesPerRequest: number;
}

function runLoad(url: string, spans: number, gzip: boolean, clients: number, seconds: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/ingest-load.ts', url, String(spans), gzip ? '1' : '0', String(clients), String(seconds)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as LoadResult) : reject(new Error(`load generator exited with ${code}`))));
  });
}

const mib = (b: number) => Math.round(b / 2 ** 20);

export async function benchIngest(): Promise<Figure[]> {
  const seconds = Number(process.env.BENCH_INGEST_SECONDS ?? 60);
  const clients = 8;
  const figures: Figure[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-ingest-'));
  // INGEST_* and TRACE_* from the environment tune the writer and assembly under test.
  const tuning = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(INGEST|TRACE)_/.test(k)));
  const config = loadConfig({ ...tuning, DATA_DIR: dir, PORT: '0', AUTH_REQUIRED: 'false', LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '' });
  const svc = await startService(config, { logger: createLogger({ logLevel: 'warn' }) });
  const ch = svc.stores.clickhouse;
  // BENCH_TIMINGS=1: time spent in each ClickHouse call, by caller (query comment or insert table).
  const timings = process.env.BENCH_TIMINGS ? new Map<string, { n: number; ms: number }>() : undefined;
  if (timings) {
    const track = (key: string, t0: number) => {
      const e = timings.get(key) ?? { n: 0, ms: 0 };
      e.n++;
      e.ms += performance.now() - t0;
      timings.set(key, e);
    };
    const { query, insert } = ch;
    Object.assign(ch, {
      query: async (sql: string, params?: Record<string, unknown>, comment?: string) => {
        const t0 = performance.now();
        try { return await query(sql, params, comment); } finally { track(`query ${comment ?? '?'}`, t0); }
      },
      insert: async (table: string, rows: readonly object[], settings?: object) => {
        const t0 = performance.now();
        try { return await insert(table, rows, settings as never); } finally { track(`insert ${table}`, t0); }
      },
    });
  }
  const count = async (sql: string) => Number((await ch.query<{ n: string }>(sql))[0]?.n ?? 0);
  try {
    let totalSpans = 0;
    const cases = ([[512, false], [512, true], [100, false], [100, true]] as Array<[number, boolean]>).filter(
      ([n, gz]) => !process.env.BENCH_INGEST_CASES || process.env.BENCH_INGEST_CASES.split(',').includes(`${n}${gz ? 'gz' : ''}`),
    );
    for (const [spans, gzip] of cases) {
      let peakRss = 0;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
      const r = await runLoad(`${svc.url}/api/v1/traces`, spans, gzip, clients, seconds);
      clearInterval(sampler);
      totalSpans += r.spans;
      const refused = Object.entries(r.statuses).filter(([s]) => s !== '200').map(([s, n]) => `${n}×${s}`).join(', ');
      figures.push({
        what: `${spans} spans/request, gzip ${gzip ? 'on' : 'off'}, ${clients} clients, ${seconds} s`,
        value: `${Math.round(r.spansPerS).toLocaleString('en-US')} spans/s; p50 ${r.p50.toFixed(0)} ms, p99 ${r.p99.toFixed(0)} ms; peak RSS ${mib(peakRss)} MiB; ${r.requests} requests of ${Math.round(r.bytesPerRequest / 1024)} KiB${refused ? `; refused ${refused}` : ''}`,
      });
      console.error(`  ${figures.at(-1)!.what}: ${figures.at(-1)!.value}`);
    }

    if (timings) console.error(Object.fromEntries([...timings].map(([k, v]) => [k, { n: v.n, avgMs: Math.round(v.ms / v.n), totalS: Math.round(v.ms / 1000) }])));
    // Assembly catching up: every trace with an LLM span becomes one execution.
    const drainStart = performance.now();
    const traces = await count("SELECT uniqExact(trace_id) AS n FROM spans WHERE project_id = 'default'");
    const atEnd = await count("SELECT sum(sign) AS n FROM executions WHERE project_id = 'default'");
    let executions = atEnd;
    const drainCapMs = Number(process.env.BENCH_DRAIN_SECONDS ?? 300) * 1000;
    while (performance.now() - drainStart < drainCapMs) {
      executions = await count("SELECT sum(sign) AS n FROM executions WHERE project_id = 'default'");
      if (executions >= traces) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const drainS = (performance.now() - drainStart) / 1000;
    figures.push({
      what: 'trace assembly: traces sent; executions when the load stopped; after the load',
      value: `${traces.toLocaleString('en-US')}; ${atEnd.toLocaleString('en-US')}; ${executions.toLocaleString('en-US')} after ${drainS.toFixed(0)} s more (${Math.round((executions - atEnd) / drainS).toLocaleString('en-US')} traces/s with no load)`,
    });

    // The engine's own insert rate for the same rows.
    const stored = await count("SELECT count() AS n FROM spans WHERE project_id = 'default'");
    await ch.command('DROP TABLE IF EXISTS spans_raw_bench');
    await ch.command('CREATE TABLE spans_raw_bench AS spans');
    const t0 = performance.now();
    await ch.command('INSERT INTO spans_raw_bench SELECT * FROM spans');
    const rawS = (performance.now() - t0) / 1000;
    const rawRate = stored / rawS;
    // The same rows through the path ingest uses (JSONEachRow text parsed by the engine), without
    // HTTP, decoding or mapping: what the text format costs the engine.
    await ch.command('TRUNCATE TABLE spans_raw_bench');
    const sample = await ch.query<Record<string, unknown>>('SELECT * FROM spans LIMIT 50000');
    const t1 = performance.now();
    for (let i = 0; i < sample.length; i += 5_000) await ch.insert('spans_raw_bench', sample.slice(i, i + 5_000));
    const jsonRate = sample.length / ((performance.now() - t1) / 1000);
    figures.push({ what: `the same rows inserted as JSONEachRow batches of 5,000 (${sample.length.toLocaleString('en-US')} rows, no HTTP, no mapping)`, value: `${Math.round(jsonRate).toLocaleString('en-US')} rows/s` });
    await ch.command('DROP TABLE spans_raw_bench');
    figures.push({ what: `engine's own INSERT ... SELECT of the ${stored.toLocaleString('en-US')} stored spans`, value: `${Math.round(rawRate).toLocaleString('en-US')} rows/s` });
    const best = Math.max(...figures.slice(0, cases.length).map((f) => Number(/^([\d,]+) spans/.exec(f.value)![1]!.replace(/,/g, ''))));
    figures.push({ what: 'ratio of the best HTTP rate to the raw engine insert rate', value: (best / rawRate).toFixed(2) });
    figures.push({ what: 'spans stored in all (HTTP 200s)', value: `${totalSpans.toLocaleString('en-US')}` });
  } finally {
    await svc.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
