// The runner on Redis: one BullMQ queue per processor. Producers (the API) enqueue; consumers
// (`npm run worker`, and the API unless told otherwise) run the same processors.
import { Queue, Worker } from 'bullmq';
import type { RedisStore } from '../stores/redis.ts';
import type { Logger } from '../logger.ts';
import type { EnqueueOptions, JobProcessor, JobRunner } from './runner.ts';

export function createBullmqRunner(
  redis: RedisStore,
  processors: readonly JobProcessor[],
  logger: Logger,
  opts: { consume: boolean },
): JobRunner {
  const queues = new Map<string, Queue>();
  const workers: Worker[] = [];
  const byName = new Map(processors.map((p) => [p.name, p]));
  const stopping = new AbortController();

  const queueFor = (name: string): Queue => {
    const p = byName.get(name);
    if (!p) throw new Error(`no job processor named ${name}`);
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, {
        connection: redis.connect({ maxRetriesPerRequest: 1, enableOfflineQueue: false }),
        prefix: redis.prefix,
        defaultJobOptions: {
          attempts: p.attempts ?? 3,
          backoff: { type: 'exponential', delay: p.backoffMs ?? 1_000 },
          removeOnComplete: { count: 1_000 },
          removeOnFail: { count: 10_000 },
        },
      });
      queues.set(name, q);
    }
    return q;
  };

  function consume(p: JobProcessor): void {
    const worker = new Worker(
      p.name,
      async (job) => {
        await p.process(job.data, {
          logger: logger.child({ job: p.name, job_id: job.id }),
          attempt: job.attemptsMade + 1,
          signal: stopping.signal,
        });
      },
      // Blocking connections must not time out their commands (BullMQ requires maxRetriesPerRequest null).
      { connection: redis.connect({ maxRetriesPerRequest: null }), prefix: redis.prefix, concurrency: p.concurrency ?? 1 },
    );
    worker.on('failed', (job, err) =>
      logger.warn({ job: p.name, job_id: job?.id, attempt: job?.attemptsMade, err: { message: err.message } }, 'job attempt failed'),
    );
    worker.on('error', (err) => logger.warn({ job: p.name, err: { message: err.message } }, 'job worker error'));
    workers.push(worker);
  }
  if (opts.consume) for (const p of processors) consume(p);

  return {
    mode: 'bullmq',
    register(more: readonly JobProcessor[]): void {
      for (const p of more) {
        byName.set(p.name, p);
        if (opts.consume) consume(p);
      }
    },
    async enqueue<T>(name: string, data: T, o?: EnqueueOptions): Promise<void> {
      // keepLastIfActive: an add while the job with this id is active is kept (the latest data) and
      // becomes a new job when the active one finishes, as in the in-process runner.
      await queueFor(name).add(name, data, {
        deduplication: o?.jobId ? { id: o.jobId, keepLastIfActive: true } : undefined,
        delay: o?.delayMs,
      });
    },
    async every<T>(name: string, intervalMs: number, data: T): Promise<void> {
      // A job scheduler is one per id across every node: N API processes do not run it N times.
      await queueFor(name).upsertJobScheduler(`${name}:every`, { every: intervalMs }, { name, data });
    },
    async close(): Promise<void> {
      stopping.abort();
      await Promise.allSettled(workers.map((w) => w.close()));
      await Promise.allSettled([...queues.values()].map((q) => q.close()));
    },
  };
}
