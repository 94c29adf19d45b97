// The job runner of the current mode (BullMQ on Redis, or in-process) runs processors with the
// same interface: jobs run, failures retry with backoff, a waiting job id is not added twice,
// schedules fire, close waits for the running job.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createJobRunner, type JobProcessor, type JobRunner } from '../../src/jobs/index.ts';
import { createLogger } from '../../src/logger.ts';
import { createRedis, type RedisStore } from '../../src/stores/redis.ts';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';

const logger = createLogger({ logLevel: 'silent' });
let redis: RedisStore | undefined;
let runner: JobRunner | undefined;
afterEach(async () => {
  await runner?.close();
  await redis?.close();
  runner = redis = undefined;
});
afterAll(() => dropTestDatabases());

async function start(processors: JobProcessor[]) {
  // The runner needs Redis only (none: in-process), not the other stores.
  redis = createRedis((await testEnv()).config, logger);
  runner = createJobRunner({ redis }, logger, { consume: true, processors });
  return runner;
}

const until = async (cond: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe(`job runner (${mode} mode)`, () => {
  it('is BullMQ with Redis and in-process without', async () => {
    const r = await start([]);
    expect(r.mode).toBe(mode === 'server' ? 'bullmq' : 'in-process');
  });

  it('runs enqueued jobs with their data', async () => {
    const seen: number[] = [];
    const r = await start([{ name: 'collect', process: async (d: { n: number }) => void seen.push(d.n) } as JobProcessor]);
    for (let n = 1; n <= 5; n++) await r.enqueue('collect', { n });
    await until(() => seen.length === 5);
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('retries a failing job with backoff until it succeeds', async () => {
    const attempts: number[] = [];
    const r = await start([
      {
        name: 'flaky',
        attempts: 3,
        backoffMs: 50,
        async process(_d, ctx) {
          attempts.push(ctx.attempt);
          if (ctx.attempt < 3) throw new Error('not yet');
        },
      },
    ]);
    await r.enqueue('flaky', {});
    await until(() => attempts.length === 3);
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('does not add a job whose id is still waiting', async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const r = await start([
      {
        name: 'gate',
        process: async () => {
          await gate;
        },
      },
      { name: 'debounced', process: async () => void runs++ },
    ]);
    // hold the debounced job back by enqueueing with a delay, three times with one id
    await r.enqueue('debounced', {}, { jobId: 'same', delayMs: 300 });
    await r.enqueue('debounced', {}, { jobId: 'same', delayMs: 300 });
    await r.enqueue('debounced', {}, { jobId: 'same', delayMs: 300 });
    release();
    await until(() => runs >= 1);
    await new Promise((res) => setTimeout(res, 700));
    expect(runs).toBe(1);
  });

  it('an enqueue with the id of a job that is running runs it once more afterwards, never alongside', async () => {
    const seen: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const r = await start([
      {
        name: 'rerun',
        concurrency: 4,
        async process(d: { n: number }) {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          seen.push(d.n);
          if (d.n === 1) await gate;
          inFlight--;
        },
      } as JobProcessor,
    ]);
    await r.enqueue('rerun', { n: 1 }, { jobId: 'same' });
    await until(() => seen.length === 1);
    // while it runs: two more with its id; the latest one runs after it
    await r.enqueue('rerun', { n: 2 }, { jobId: 'same' });
    await r.enqueue('rerun', { n: 3 }, { jobId: 'same' });
    await new Promise((res) => setTimeout(res, 200));
    expect(seen).toEqual([1]);
    release();
    await until(() => seen.length === 2);
    await new Promise((res) => setTimeout(res, 300));
    expect(seen).toEqual([1, 3]);
    expect(maxInFlight).toBe(1);
  });

  it('a failing job in backoff does not hold back another job of the same processor', async () => {
    const done: string[] = [];
    const r = await start([
      {
        name: 'mixed',
        attempts: 2,
        backoffMs: 3_000,
        async process(d: { id: string }, ctx) {
          if (d.id === 'bad' && ctx.attempt === 1) throw new Error('receiver down');
          done.push(`${d.id}@${ctx.attempt}`);
        },
      } as JobProcessor,
    ]);
    const t0 = Date.now();
    await r.enqueue('mixed', { id: 'bad' });
    await r.enqueue('mixed', { id: 'good' });
    await until(() => done.includes('good@1'), 10_000);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(done).toEqual(['good@1']);
    await until(() => done.includes('bad@2'), 10_000);
  });

  it('runs up to `concurrency` jobs of one processor at once', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let finished = 0;
    const r = await start([
      {
        name: 'parallel',
        concurrency: 3,
        async process() {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((res) => setTimeout(res, 200));
          inFlight--;
          finished++;
        },
      } as JobProcessor,
    ]);
    for (let i = 0; i < 6; i++) await r.enqueue('parallel', { i });
    await until(() => finished === 6);
    expect(maxInFlight).toBe(3);
  });

  it('runs a schedule repeatedly', async () => {
    let ticks = 0;
    const r = await start([{ name: 'tick', process: async () => void ticks++ }]);
    await r.every('tick', 100, {});
    await until(() => ticks >= 3);
  });

  it('close waits for the running job to finish', async () => {
    let finished = false;
    let started = false;
    const r = await start([
      {
        name: 'slow',
        async process() {
          started = true;
          await new Promise((res) => setTimeout(res, 400));
          finished = true;
        },
      },
    ]);
    await r.enqueue('slow', {});
    await until(() => started);
    await r.close();
    expect(finished).toBe(true);
    runner = undefined;
  });

  it('refuses a job for a processor that does not exist', async () => {
    const r = await start([]);
    await expect(r.enqueue('nope', {})).rejects.toThrow(/no job processor named nope/);
  });
});
