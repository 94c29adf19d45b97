// The two halves of the write path measured apart, in the same run as the ingest cases: the
// front half (HTTP, decoding and encoding, the log's group fsync) with the loader held, then the
// back half (the loader: spans insert, assembly, executions insert with its views, and the merges
// those inserts start) draining the backlog the front half left, with no request coming in. Their
// CPU per span, added, is what a span costs with no contention between them: on two cores, 2 s of
// CPU per second divided by it is the most any overlap of the halves could sustain. (The backlog
// outgrows the log's 32 MiB kept in memory, so the back half reads most records from the page
// cache: a few tenths of a µs per span more than under steady load. The one batch the loader had
// already asked for, at most 8 MiB, is loaded during the front half.)
import type { IngestLog } from '../src/ingest/span-loader.ts';
import { countThreadCpu, type CpuShares } from './thread-cpu.ts';
import type { Figure, LoadResult as Load } from './ingest.ts';
import { formatCount as fmt, waitUntil } from './timing.ts';

export interface HalvesDeps {
  log: IngestLog;
  /** The load generator at 512 spans/request, 8 clients, for `seconds`. */
  load(seconds: number): Promise<Load>;
  /** Distinct traces stored, and executions (sum of sign). */
  traces(): Promise<number>;
  executions(): Promise<number>;
  /** Nothing waits in the log, and every trace stored is one execution. */
  caughtUp(): Promise<boolean>;
  /** Until the engine runs no merge (or `ms` passed); false if it still does. */
  quietEngine(ms: number): Promise<boolean>;
}

/** How long the back half may take before the step gives up and says so. */
const DRAIN_LIMIT_MS = 300_000;

export async function measureHalves(deps: HalvesDeps, seconds: number): Promise<Figure[]> {
  const { log } = deps;
  // Measured from a caught-up loader and a quiet engine: nothing of the cases is charged to the halves.
  await waitUntil(deps.caughtUp, 60_000);
  await deps.quietEngine(60_000);
  const tracesBefore = await deps.traces();
  const executionsBefore = await deps.executions();

  // The loader asks the log for its next batch: held until the front half is measured. Requests
  // are not refused meanwhile, neither for the lag this makes nor for the log's size bounds (1 GiB
  // by default: ~15 s of this load); 20 s of it is ~2 GB of log on disk.
  const take = log.take.bind(log);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  log.take = async (...a: Parameters<typeof take>) => {
    await released;
    return take(...a);
  };
  log.refusal = () => undefined;
  let front: { load: Load; cpu: CpuShares };
  try {
    const frontCpu = countThreadCpu();
    const load = await deps.load(seconds);
    front = { load, cpu: frontCpu() };
  } finally {
    delete (log as Partial<IngestLog>).take;
    delete (log as Partial<IngestLog>).refusal;
    release();
  }

  // The back half: until the log is loaded and every trace is one execution, then until the merges
  // those inserts started are done (their CPU is part of the half; their time is not).
  const backCpu = countThreadCpu();
  const started = performance.now();
  // Traces are counted (a scan of `spans`) only once the log is loaded, not while it drains.
  const drained =
    (await waitUntil(() => log.pendingRows === 0, DRAIN_LIMIT_MS, 50)) &&
    (await waitUntil(deps.caughtUp, DRAIN_LIMIT_MS - (performance.now() - started), 50));
  const backS = (performance.now() - started) / 1000;
  const whileDraining = backCpu();
  const merged = drained && (await deps.quietEngine(60_000));
  const back = backCpu();

  const spans = front.load.spans;
  const refused = Object.entries(front.load.statuses)
    .filter(([status]) => status !== '200')
    .map(([status, n]) => `${n}×${status}`)
    .join(', ');
  const traces = (await deps.traces()) - tracesBefore;
  const executions = (await deps.executions()) - executionsBefore;
  const us = (s: number) => ((s / spans) * 1e6).toFixed(1);
  const frontUs = (front.cpu.process / spans) * 1e6;
  const backUs = (back.process / spans) * 1e6;
  const figures: Figure[] = [
    {
      what: `front half alone at 512 spans/request, 8 clients, ${seconds} s (HTTP, decoding and encoding, the log's fsync; loader held, nothing refused)`,
      value: `${fmt(front.load.spansPerS)} spans/s, p99 ${front.load.p99.toFixed(0)} ms${refused ? ` (refused: ${refused})` : ''}; CPU per span ${frontUs.toFixed(1)} µs (API thread ${us(front.cpu.api)}, encoding worker ${us(front.cpu.worker)}, engine ${us(front.cpu.engine)}, GC and other helpers ${us(front.cpu.other)}), ${(front.cpu.process / front.cpu.elapsed).toFixed(2)} cores busy`,
    },
  ];
  if (!drained) {
    figures.push({
      what: 'back half alone',
      value: `not measured: after ${backS.toFixed(0)} s, ${log.pendingRows} rows still in the log and ${fmt(executions)} executions for ${fmt(traces)} traces`,
    });
    return figures;
  }
  figures.push(
    {
      what: 'back half alone: the loader drains that backlog, no requests (spans insert, assembly, executions insert and views, their merges)',
      value: `${fmt(spans / backS)} spans/s (${fmt(spans)} spans, ${fmt(traces)} executions, in ${backS.toFixed(1)} s); CPU per span ${backUs.toFixed(1)} µs (API thread ${us(back.api)}, engine ${us(back.engine)}, GC and other helpers ${us(back.other + back.worker)})${merged ? '' : ', merges still running after a minute not counted'}; ${(whileDraining.process / whileDraining.elapsed).toFixed(2)} cores busy while draining`,
    },
    {
      what: 'both halves, added (a span with no contention between them)',
      value: `${(frontUs + backUs).toFixed(1)} µs per span: at most ${fmt((2 * 1e6) / (frontUs + backUs))} spans/s with both cores busy all the time`,
    },
  );
  return figures;
}
