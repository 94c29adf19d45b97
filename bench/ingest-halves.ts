// The two halves of the write path measured apart, in the same run as the ingest cases: the
// front half (HTTP, decoding and encoding, the log's group fsync) with the loader paused, then the
// back half (the loader: spans insert, assembly, executions insert with its views, the engine's
// merges) draining the backlog the front half left, with no request coming in. Their CPU per span,
// added, is what a span costs with no contention between them: on two cores, 2 s of CPU per second
// divided by it is the most any overlap of the halves could sustain. (The backlog outgrows the
// log's 32 MiB kept in memory, so the back half reads most records from the page cache: a few
// tenths of a µs per span more than under steady load.)
import type { IngestLog } from '../src/ingest/span-loader.ts';
import { countThreadCpu, type CpuShares } from './thread-cpu.ts';
import type { Figure } from './ingest.ts';

interface Load {
  spans: number;
  spansPerS: number;
  p99: number;
}

export interface HalvesDeps {
  log: IngestLog;
  /** The load generator at 512 spans/request, 8 clients, for `seconds`. */
  load(seconds: number): Promise<Load>;
  /** Distinct traces stored, and executions (sum of sign): the back half is done when they match. */
  traces(): Promise<number>;
  executions(): Promise<number>;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const total = (c: CpuShares) => c.api + c.worker + c.engine + c.other;

export async function measureHalves(deps: HalvesDeps, seconds: number): Promise<Figure[]> {
  const { log } = deps;
  // The loader asks the log for its next batch: held until the front half is measured. Requests
  // are not refused meanwhile (the lag bound would refuse them after 3 s).
  const take = log.take.bind(log);
  const refusal = log.refusal.bind(log);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  log.take = async (...a: Parameters<typeof take>) => {
    await released;
    return take(...a);
  };
  log.refusal = () => undefined;
  let front: { load: Load; cpu: CpuShares };
  try {
    // The one batch the loader had already asked for (at most 8 MiB) is loaded meanwhile.
    const frontCpu = countThreadCpu();
    const load = await deps.load(seconds);
    front = { load, cpu: frontCpu() };
  } finally {
    log.take = take;
    log.refusal = refusal;
    release();
  }
  const backCpu = countThreadCpu();
  const started = performance.now();
  const sent = await deps.traces();
  while (!(log.pendingRows === 0 && (await deps.executions()) >= sent)) await new Promise((r) => setTimeout(r, 50));
  const back = { s: (performance.now() - started) / 1000, cpu: backCpu() };

  const spans = front.load.spans;
  const us = (s: number) => (s / spans) * 1e6;
  const frontUs = us(total(front.cpu));
  const backUs = us(total(back.cpu));
  return [
    {
      what: `front half alone at 512 spans/request, 8 clients, ${seconds} s (HTTP, decoding and encoding, the log's fsync; loader paused, nothing refused)`,
      value: `${fmt(front.load.spansPerS)} spans/s, p99 ${front.load.p99.toFixed(0)} ms; CPU per span ${frontUs.toFixed(1)} µs (API thread ${us(front.cpu.api).toFixed(1)}, encoding worker ${us(front.cpu.worker).toFixed(1)}, engine ${us(front.cpu.engine).toFixed(1)}, GC and other helpers ${us(front.cpu.other).toFixed(1)}), ${(total(front.cpu) / front.cpu.elapsed).toFixed(2)} cores busy`,
    },
    {
      what: 'back half alone: the loader drains that backlog, no requests (spans insert, assembly, executions insert and views, merges)',
      value: `${fmt(spans / back.s)} spans/s (${fmt(spans)} spans in ${back.s.toFixed(1)} s); CPU per span ${backUs.toFixed(1)} µs (API thread ${us(back.cpu.api).toFixed(1)}, engine ${us(back.cpu.engine).toFixed(1)}, GC and other helpers ${us(back.cpu.other + back.cpu.worker).toFixed(1)}), ${(total(back.cpu) / back.cpu.elapsed).toFixed(2)} cores busy`,
    },
    {
      what: 'both halves, added (a span with no contention between them)',
      value: `${(frontUs + backUs).toFixed(1)} µs per span: at most ${fmt((2 * 1e6) / (frontUs + backUs))} spans/s with both cores busy all the time`,
    },
  ];
}
