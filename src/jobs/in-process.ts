// The runner without Redis: jobs run in this process, up to `concurrency` at once per processor
// (default 1), with the same retry, backoff and deduplication rules as the BullMQ runner. A retry
// is a delayed re-add (a timer), never a sleep in a loop: a failing job in backoff does not hold
// back the other jobs of its processor. Jobs are derived work (budget evaluation, trace assembly)
// that is recomputed from the stores, so a job lost in a crash is redone by the next one.
import type { Logger } from '../logger.ts';
import { backoffDelay, type EnqueueOptions, type JobProcessor, type JobRunner } from './runner.ts';

interface Pending {
  data: unknown;
  jobId?: string;
  /** The attempt this run is (1 for a new job). */
  attempt: number;
}

export function createInProcessRunner(processors: readonly JobProcessor[], logger: Logger): JobRunner {
  const byName = new Map(processors.map((p) => [p.name, p]));
  const queues = new Map<string, Pending[]>();
  const active = new Map<string, number>();
  // Deduplication keys (`<name>:<jobId>`): 'waiting' while the job is queued or delayed (another
  // enqueue is dropped), 'running' from its first attempt until it finished (retries included):
  // another enqueue then is kept, the latest one only, and added once the running one finished.
  const keys = new Map<string, 'waiting' | 'running'>();
  const followUps = new Map<string, { data: unknown; delayMs?: number }>();
  const running = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;
  const stopping = new AbortController();

  const processorFor = (name: string): JobProcessor => {
    const p = byName.get(name);
    if (!p) throw new Error(`no job processor named ${name}`);
    return p;
  };
  const keyOf = (name: string, jobId: string | undefined) => (jobId === undefined ? undefined : `${name}:${jobId}`);

  function later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    t.unref();
    timers.add(t);
  }

  function finished(name: string, job: Pending): void {
    const key = keyOf(name, job.jobId);
    if (!key) return;
    keys.delete(key);
    const next = followUps.get(key);
    if (!next) return;
    followUps.delete(key);
    if (!closing) submit(name, next.data, job.jobId, next.delayMs);
  }

  async function attempt(name: string, p: JobProcessor, job: Pending): Promise<void> {
    const attempts = p.attempts ?? 3;
    try {
      await p.process(job.data, { logger: logger.child({ job: p.name }), attempt: job.attempt, signal: stopping.signal });
    } catch (err) {
      const last = job.attempt >= attempts || closing;
      logger[last ? 'error' : 'warn'](
        { job: p.name, attempt: job.attempt, err: { message: (err as Error).message } },
        last ? 'job failed' : 'job attempt failed, retrying',
      );
      if (!last) {
        // The key stays 'running' through the backoff: the job is not finished.
        later(backoffDelay(p.backoffMs ?? 1_000, job.attempt), () =>
          closing ? finished(name, job) : add(name, { ...job, attempt: job.attempt + 1 }),
        );
        return;
      }
    }
    finished(name, job);
  }

  /** Starts queued jobs of `name` while fewer than its concurrency run. */
  function pump(name: string): void {
    const p = processorFor(name);
    const limit = Math.max(1, p.concurrency ?? 1);
    const queue = queues.get(name) ?? [];
    while ((active.get(name) ?? 0) < limit && queue.length > 0) {
      const job = queue.shift()!;
      const key = keyOf(name, job.jobId);
      if (key) keys.set(key, 'running'); // from now on an enqueue with this id queues one more run
      active.set(name, (active.get(name) ?? 0) + 1);
      const run: Promise<void> = attempt(name, p, job)
        .catch(() => undefined)
        .finally(() => {
          running.delete(run);
          active.set(name, (active.get(name) ?? 1) - 1);
          pump(name);
        });
      running.add(run);
    }
  }

  function add(name: string, job: Pending): void {
    let q = queues.get(name);
    if (!q) queues.set(name, (q = []));
    q.push(job);
    pump(name);
  }

  /** Adds a new job (attempt 1), now or after a delay; its key must already be claimed when it has one. */
  function submit(name: string, data: unknown, jobId: string | undefined, delayMs: number | undefined): void {
    const key = keyOf(name, jobId);
    if (key) keys.set(key, 'waiting');
    const job: Pending = { data, jobId, attempt: 1 };
    if (delayMs) later(delayMs, () => (closing ? key && keys.delete(key) : add(name, job)));
    else add(name, job);
  }

  return {
    mode: 'in-process',
    register(more: readonly JobProcessor[]): void {
      for (const p of more) byName.set(p.name, p);
    },
    async enqueue<T>(name: string, data: T, opts?: EnqueueOptions): Promise<void> {
      processorFor(name);
      if (closing) return;
      const key = keyOf(name, opts?.jobId);
      const state = key ? keys.get(key) : undefined;
      if (state === 'waiting') return; // debounced: the waiting job will see the same stores
      if (state === 'running') {
        followUps.set(key!, { data, delayMs: opts?.delayMs });
        return;
      }
      submit(name, data, opts?.jobId, opts?.delayMs);
    },
    async every<T>(name: string, intervalMs: number, data: T): Promise<void> {
      processorFor(name);
      // A tick that finds the previous scheduled run still waiting or running is skipped, like a
      // BullMQ scheduler.
      const t = setInterval(() => {
        if (!closing && !keys.has(`${name}:every`)) submit(name, data, 'every', undefined);
      }, intervalMs);
      t.unref();
      timers.add(t);
    },
    async close(): Promise<void> {
      closing = true;
      stopping.abort();
      for (const t of timers) clearTimeout(t);
      timers.clear();
      followUps.clear();
      // Jobs already queued still run (as before); no retry or new job starts once closing.
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
