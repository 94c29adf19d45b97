// The runner without Redis: jobs run in this process, one at a time per processor, with the same
// retry and backoff rules as the BullMQ runner. Jobs are derived work (budget evaluation, trace
// assembly) that is recomputed from the stores, so a job lost in a crash is redone by the next one.
import type { Logger } from '../src/logger.ts';
import { backoffDelay, type EnqueueOptions, type JobProcessor, type JobRunner } from './runner.ts';

interface Pending {
  data: unknown;
  jobId?: string;
}

export function createInProcessRunner(processors: readonly JobProcessor[], logger: Logger): JobRunner {
  const byName = new Map(processors.map((p) => [p.name, p]));
  const queues = new Map<string, Pending[]>();
  const waitingIds = new Set<string>();
  const running = new Map<string, Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  const processorFor = (name: string): JobProcessor => {
    const p = byName.get(name);
    if (!p) throw new Error(`no job processor named ${name}`);
    return p;
  };

  // A backoff wait ends early when the runner closes (its timer is cleared): close() must not wait forever.
  const sleepers = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        timers.delete(t);
        sleepers.delete(wake);
        resolve();
      };
      const t = setTimeout(wake, ms);
      t.unref();
      timers.add(t);
      sleepers.add(wake);
    });

  async function runOne(p: JobProcessor, job: Pending): Promise<void> {
    const attempts = p.attempts ?? 3;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        await p.process(job.data, { logger: logger.child({ job: p.name }), attempt });
        return;
      } catch (err) {
        const last = attempt === attempts || closing;
        logger[last ? 'error' : 'warn']({ job: p.name, attempt, err: { message: (err as Error).message } }, last ? 'job failed' : 'job attempt failed, retrying');
        if (last) return;
        await sleep(backoffDelay(p.backoffMs ?? 1_000, attempt));
        if (closing) return;
      }
    }
  }

  function drain(name: string): void {
    if (running.has(name)) return;
    const p = processorFor(name);
    const queue = queues.get(name) ?? [];
    const loop = (async () => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        try {
          await runOne(p, job);
        } finally {
          if (job.jobId) waitingIds.delete(`${name}:${job.jobId}`);
        }
      }
    })().finally(() => running.delete(name));
    running.set(name, loop);
  }

  /** Claims a deduplication key; false when a job with it is waiting, delayed or running. */
  function claim(name: string, jobId: string | undefined): boolean {
    if (!jobId) return true;
    const key = `${name}:${jobId}`;
    if (waitingIds.has(key)) return false;
    waitingIds.add(key);
    return true;
  }

  function add(name: string, data: unknown, jobId?: string): void {
    if (closing) {
      if (jobId) waitingIds.delete(`${name}:${jobId}`);
      return;
    }
    let q = queues.get(name);
    if (!q) queues.set(name, (q = []));
    q.push({ data, jobId });
    drain(name);
  }

  return {
    mode: 'in-process',
    register(more: readonly JobProcessor[]): void {
      for (const p of more) byName.set(p.name, p);
    },
    async enqueue<T>(name: string, data: T, opts?: EnqueueOptions): Promise<void> {
      processorFor(name);
      if (!claim(name, opts?.jobId)) return;
      if (opts?.delayMs) {
        const t = setTimeout(() => {
          timers.delete(t);
          add(name, data, opts.jobId);
        }, opts.delayMs);
        t.unref();
        timers.add(t);
      } else {
        add(name, data, opts?.jobId);
      }
    },
    async every<T>(name: string, intervalMs: number, data: T): Promise<void> {
      processorFor(name);
      // A tick that finds the previous run still going is skipped, like a BullMQ scheduler.
      const t = setInterval(() => claim(name, 'every') && add(name, data, 'every'), intervalMs);
      t.unref();
      timers.add(t);
    },
    async close(): Promise<void> {
      closing = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const wake of [...sleepers]) wake();
      await Promise.allSettled([...running.values()]);
    },
  };
}
