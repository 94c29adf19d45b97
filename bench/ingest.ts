// OTLP ingest throughput on the embedded stores: the API in this process, the load from a
// separate process (bench/ingest-load.ts: keep-alive clients sending protobuf exports of 512, 100,
// 10 and 1 spans, gzip on and off for 512). Prints sustained spans/s, request latency, the API
// process's peak RSS, the assembly lag during the load and the catch-up after it, and the ratio
// to the engine's own RowBinary insert of the same rows, measured in the same run; the write
// path's two halves measured apart (bench/ingest-halves.ts); then what encoding and assembly alone
// cost per span on an idle core.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { decodeTraceBody, encodeSpans } from '../src/ingest/span-encoding.ts';
import { ByteSink, type RowEncoder } from '../src/stores/row-binary.ts';
import { buildSpans } from './otlp-decode.ts';
import { summarizeTrace, type SummarizeDeps } from '../src/executions/from-spans.ts';
import { STORED_SPAN_COLUMNS, type StoredSpan } from '../src/executions/span-rows.ts';
import type { PriceResolver } from '../src/pricing/prices.ts';
import type { RowDecoder } from '../src/stores/row-binary-decoder.ts';
import { countThreadCpu } from './thread-cpu.ts';
import { formatCount as fmt, runJsonChild, waitUntil } from './timing.ts';
import { measureHalves } from './ingest-halves.ts';
import { removeDataDir } from './data-dir.ts';

export interface Figure {
  what: string;
  value: string;
}

export interface LoadResult {
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
  return runJsonChild<LoadResult>('bench/ingest-load.ts', [url, String(spans), gzip ? '1' : '0', String(clients), String(seconds)]);
}

/** An inspector session on this thread, its `post` as a promise. */
async function inspectorSession() {
  const inspector = await import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  return { post, disconnect: () => session.disconnect() };
}

/** BENCH_CPU_PROFILE=dir: a CPU profile of the API's thread during each case and each "alone" figure (open it in Chrome's DevTools). */
async function startProfile(): Promise<(file: string) => Promise<void>> {
  const { post, disconnect } = await inspectorSession();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 500 });
  await post('Profiler.start');
  return async (file) => {
    const { profile } = (await post('Profiler.stop')) as { profile: object };
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(profile));
    disconnect();
  };
}

/**
 * BENCH_HEAP_PROFILE=dir: what the API's thread allocated during each case, by function (a sample
 * every 16 KiB, objects the collector freed included; open it in DevTools' Memory tab).
 */
async function startHeapProfile(): Promise<(file: string) => Promise<void>> {
  const { post, disconnect } = await inspectorSession();
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async (file) => {
    const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: object };
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(profile));
    disconnect();
  };
}

/** The 512-span export both "alone" figures measure, as a request body. */
const SPANS_ALONE = 512;
const exportBody = () => Buffer.from(ProtobufTraceSerializer.serializeRequest(buildSpans(SPANS_ALONE, 2, 1))!);
const encodeExport = (body: Buffer, encoder: RowEncoder) =>
  encodeSpans('default', decodeTraceBody({ format: 'protobuf', body }), encoder, '2026-01-01 00:00:00.000');

/**
 * The API thread's CPU time (µs) per span of the export for `once`, over 3 s after a warm-up
 * (the API thread's own: the engine's merges are not counted).
 */
async function cpuPerSpanUs(name: string, once: () => unknown): Promise<number> {
  for (let i = 0; i < 50; i++) await once();
  let n = 0;
  const profiling = process.env.BENCH_CPU_PROFILE ? await startProfile() : undefined;
  const cpuOf = countThreadCpu();
  const started = performance.now();
  while (performance.now() - started < 3_000) {
    await once();
    n++;
  }
  const cpu = cpuOf();
  if (profiling) await profiling(path.join(process.env.BENCH_CPU_PROFILE!, `${name}-alone.cpuprofile`));
  return (cpu.api * 1e6) / (n * SPANS_ALONE);
}

/** What the encoding worker does per span: decode, map and encode the export. */
function encodingCostUs(encoder: RowEncoder): Promise<number> {
  const body = exportBody();
  return cpuPerSpanUs('encoding', () => encodeExport(body, encoder));
}

/**
 * What assembling a fresh trace costs the API thread per span: the export's rows decoded as the
 * loader decodes them (RowBinary, the columns assembly reads), grouped by trace, and each trace
 * summarised into its execution (prices, conversation, content hash).
 */
function assemblyCostUs(encoder: RowEncoder, decoder: RowDecoder, prices: PriceResolver): Promise<number> {
  const payload = Buffer.from(encodeExport(exportBody(), encoder).payload);
  const deps: SummarizeDeps = { prices, resolvePrompt: async () => 1 };
  return cpuPerSpanUs('assembly', async () => {
    const byTrace = new Map<string, StoredSpan[]>();
    for (const s of decoder.decode(payload) as unknown as StoredSpan[]) {
      const spans = byTrace.get(s.trace_id);
      if (spans) spans.push(s);
      else byTrace.set(s.trace_id, [s]);
    }
    for (const spans of byTrace.values()) await summarizeTrace('default', spans, deps);
  });
}

const mib = (b: number) => Math.round(b / 2 ** 20);

/**
 * The cases of the issue: spans per request, gzip, clients. BENCH_INGEST_CASES=512,512gz,100,10,1,halves
 * picks some (`halves`: the write path's two halves measured apart, bench/ingest-halves.ts).
 */
const CASES: Array<[number, boolean, number]> = [
  [512, false, 8],
  [512, true, 8],
  [100, false, 8],
  [10, false, 64],
  [1, false, 64],
];

export async function benchIngest(): Promise<Figure[]> {
  const seconds = Number(process.env.BENCH_INGEST_SECONDS ?? 60);
  const figures: Figure[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-ingest-'));
  // INGEST_* and TRACE_* from the environment tune the writer and assembly under test.
  const tuning = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(INGEST|TRACE)_/.test(k)));
  const config = loadConfig({
    ...tuning,
    DATA_DIR: dir,
    PORT: '0',
    OTLP_GRPC_PORT: '0',
    AUTH_REQUIRED: 'false',
    LOG_LEVEL: 'warn',
    DATABASE_URL: '',
    REDIS_URL: '',
  });
  const svc = await startService(config, { logger: createLogger({ logLevel: 'warn' }) });
  const ch = svc.stores.clickhouse;
  const { log } = svc.domain.traces;
  const count = async (sql: string) => Number((await ch.query<{ n: string }>(sql))[0]?.n ?? 0);
  const traces = () => count("SELECT uniqExact(trace_id) AS n FROM spans WHERE project_id = 'default'");
  const executions = () => count("SELECT sum(sign) AS n FROM executions WHERE project_id = 'default'");
  /** Acknowledged work not yet assembled: the oldest record not loaded, plus how overdue the most overdue waiting trace is. */
  const lagMs = async () => {
    const next = await svc.domain.traces.pending.nextDue();
    return log.oldestUnloadedMs() + (next === undefined ? 0 : Math.max(0, Date.now() - next) + config.traces.debounceMs);
  };
  /**
   * Nothing waits in the log, and every trace stored is one execution. The traces are counted once
   * the log is loaded: counted before, the last batches' traces would be missed.
   */
  const caughtUp = async () => log.pendingRows === 0 && (await executions()) >= (await traces());
  /** Until the engine runs no merge, or `ms` passed; false if it still does. */
  const quietEngine = (ms: number) => waitUntil(async () => (await count('SELECT count() AS n FROM system.merges')) === 0, ms, 250);
  const wanted = (name: string) => !process.env.BENCH_INGEST_CASES || process.env.BENCH_INGEST_CASES.split(',').includes(name);
  try {
    let totalSpans = 0;
    const rates: number[] = [];
    const cases = CASES.filter(([n, gz]) => wanted(`${n}${gz ? 'gz' : ''}`));
    for (const [spans, gzip, clients] of cases) {
      let peakRss = 0;
      let peakAt: NodeJS.MemoryUsage | undefined;
      let maxLag = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const m = process.memoryUsage();
          if (m.rss > peakRss) {
            peakRss = m.rss;
            peakAt = m;
          }
          maxLag = Math.max(maxLag, await lagMs());
          await new Promise((r) => setTimeout(r, 250));
        }
      })();
      // How late the API thread's timers ran during the load: what a request waits per turn of its event loop.
      const loopDelay = monitorEventLoopDelay({ resolution: 5 });
      loopDelay.enable();
      const phasesBefore = { ...svc.domain.traces.loader.stats.phaseMs };
      const profiling = process.env.BENCH_CPU_PROFILE ? await startProfile() : undefined;
      const heapProfiling = process.env.BENCH_HEAP_PROFILE ? await startHeapProfile() : undefined;
      const cpuOf = countThreadCpu();
      const r = await runLoad(`${svc.url}/api/v1/traces`, spans, gzip, clients, seconds);
      const name = `ingest-${spans}${gzip ? 'gz' : ''}`;
      if (heapProfiling) await heapProfiling(path.join(process.env.BENCH_HEAP_PROFILE!, `${name}.heapprofile`));
      if (profiling) await profiling(path.join(process.env.BENCH_CPU_PROFILE!, `${name}.cpuprofile`));
      const cpu = cpuOf();
      sampling = false;
      loopDelay.disable();
      const loopMs = (p: number) => (loopDelay.percentile(p) / 1e6).toFixed(1);
      await sampler;
      // Catch-up: until every trace sent is one execution and nothing waits in the log.
      const stopped = performance.now();
      await waitUntil(caughtUp, 300_000);
      const catchUpS = (performance.now() - stopped) / 1000;
      const phases = Object.entries(svc.domain.traces.loader.stats.phaseMs)
        .map(([k, v]) => `${k} ${((v - phasesBefore[k as keyof typeof phasesBefore]) / 1000).toFixed(1)} s`)
        .join(', ');
      if (process.env.BENCH_MEMORY && peakAt) {
        const engine = await ch.query<{ metric: string; value: string }>(
          "SELECT metric, value FROM system.metrics WHERE metric IN ('MemoryTracking', 'MergesMutationsMemoryTracking')",
        );
        console.error(
          `    at peak: heap ${mib(peakAt.heapUsed)}/${mib(peakAt.heapTotal)} MiB, external ${mib(peakAt.external)} MiB (array buffers ${mib(peakAt.arrayBuffers)}); engine now ${engine.map((e) => `${e.metric} ${mib(Number(e.value))} MiB`).join(', ')}`,
        );
      }
      totalSpans += r.spans;
      rates.push(r.spansPerS);
      const refused = Object.entries(r.statuses)
        .filter(([st]) => st !== '200')
        .map(([st, n]) => `${n}×${st}`)
        .join(', ');
      // CPU per acknowledged span, by thread: what the two cores pay for each span.
      const us = (s: number) => ((s / r.spans) * 1e6).toFixed(0);
      const cpuTotal = cpu.api + cpu.worker + cpu.engine + cpu.other;
      const cpuFigure = `CPU per span ${us(cpuTotal)} µs (API thread ${us(cpu.api)}, encoding worker ${us(cpu.worker)}, engine ${us(cpu.engine)}, GC and other helpers ${us(cpu.other)}), ${(cpuTotal / cpu.elapsed).toFixed(2)} cores busy`;
      figures.push({
        what: `${spans} span${spans > 1 ? 's' : ''}/request, gzip ${gzip ? 'on' : 'off'}, ${clients} clients, ${seconds} s`,
        value: `${fmt(r.spansPerS)} spans/s; p50 ${r.p50.toFixed(0)} ms, p99 ${r.p99.toFixed(0)} ms; peak RSS ${mib(peakRss)} MiB; assembly lag ≤ ${(maxLag / 1000).toFixed(1)} s during the load, caught up ${catchUpS.toFixed(1)} s after; loader busy: ${phases}; event-loop delay p50 ${loopMs(50)} / p99 ${loopMs(99)} ms; ${cpuFigure}; ${fmt(r.requests)} requests of ${Math.round(r.bytesPerRequest / 1024)} KiB${refused ? `; refused ${refused}` : ''}`,
      });
      console.error(`  ${figures.at(-1)!.what}: ${figures.at(-1)!.value}`);
      // BENCH_THREADS=1: the CPU per span of each group of threads by name (the engine's pipelines, merges, pools).
      if (process.env.BENCH_THREADS)
        console.error(
          `    threads: ${Object.entries(cpu.byName)
            .filter(([, s]) => s > 0)
            .sort((a, b) => b[1] - a[1])
            .map(([n, s]) => `${n} ${us(s)} µs`)
            .join(', ')}`,
        );
    }

    if (wanted('halves')) {
      const halves = await measureHalves(
        {
          log,
          load: (s) => runLoad(`${svc.url}/api/v1/traces`, 512, false, 8, s),
          traces,
          executions,
          caughtUp,
          quietEngine,
        },
        Number(process.env.BENCH_INGEST_HALVES_SECONDS ?? 20),
      );
      for (const f of halves) console.error(`  ${f.what}: ${f.value}`);
      figures.push(...halves);
    }

    // The engine's own rate for the same rows, measured in this run: stored spans read back,
    // encoded as RowBinary beforehand, inserted in batches of 20,000 into a table like `spans`.
    const sample = await ch.query<Record<string, unknown>>('SELECT * FROM spans LIMIT 200000');
    await ch.command('DROP TABLE IF EXISTS spans_raw_bench');
    await ch.command('CREATE TABLE spans_raw_bench AS spans');
    const encoder = await ch.encoderOf('spans');
    const batches: Buffer[] = [];
    for (let i = 0; i < sample.length; i += 20_000) {
      const sink = new ByteSink();
      for (const row of sample.slice(i, i + 20_000)) encoder.encode(sink, row);
      batches.push(Buffer.from(sink.view()));
    }
    // On a quiet engine: the merges the cases left behind finish first (a minute at most).
    await quietEngine(60_000);
    const t0 = performance.now();
    const rawCpuOf = countThreadCpu();
    for (const [i, b] of batches.entries()) await ch.insertRowBinary('spans_raw_bench', [b], { insert_deduplication_token: `raw-${i}` });
    const rawRate = sample.length / ((performance.now() - t0) / 1000);
    const rawCpu = rawCpuOf();
    await ch.command('DROP TABLE spans_raw_bench');
    figures.push({
      what: `raw RowBinary insert of ${fmt(sample.length)} of the same rows (encoded beforehand, batches of 20,000, no HTTP, no mapping)`,
      value: `${fmt(rawRate)} rows/s; CPU per row ${(((rawCpu.api + rawCpu.worker + rawCpu.engine + rawCpu.other) / sample.length) * 1e6).toFixed(0)} µs`,
    });
    // What the encoding worker does per span, alone on an idle core: decode, map, RowBinary rows.
    const encodeUs = await encodingCostUs(encoder);
    figures.push({
      what: 'encoding alone (protobuf decode, mapping, RowBinary rows) of the 512-span export, one idle core',
      value: `${encodeUs.toFixed(1)} µs per span: at most ${fmt((2 * 1e6) / encodeUs)} spans/s if both cores did nothing else`,
    });
    // What settling a batch costs the API thread per span, beside the engine's executions insert.
    const assemblyUs = await assemblyCostUs(encoder, await ch.decoderOf('spans', STORED_SPAN_COLUMNS), svc.domain.prices.resolver);
    figures.push({
      what: 'assembly alone (RowBinary rows decoded, grouped by trace, summarised into executions) of the 512-span export, one idle core',
      value: `${assemblyUs.toFixed(1)} µs per span`,
    });
    figures.push({
      what: 'ratio of each case to the raw RowBinary insert',
      value: cases.map(([n, gz], i) => `${n}${gz ? ' gzip' : ''}: ${(rates[i]! / rawRate).toFixed(2)}`).join('; '),
    });
    figures.push({ what: 'spans acknowledged in all (HTTP 200s)', value: fmt(totalSpans) });
  } finally {
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}
