// The job runner of the current mode (BullMQ on Redis, or in-process) runs processors with the
// same interface: jobs run, failures retry with backoff, a waiting job id is not added twice,
// schedules fire, close waits for the running job.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createJobRunner, type JobProcessor, type JobRunner } from '../jobs/index.ts';
import { createLogger } from '../src/logger.ts';
import { createStores, type Stores } from '../src/stores/index.ts';
import { dropTestDatabases, mode, testEnv } from './helpers/env.ts';

const logger = createLogger({ logLevel: 'silent' });
let stores: Stores | undefined;
let runner: JobRunner | undefined;
afterEach(async () => {
  await runner?.close();
  await stores?.close();
  runner = stores = undefined;
});
afterAll(() => dropTestDatabases());

async function start(processors: JobProcessor[]) {
  stores = await createStores((await testEnv()).config, logger);
  runner = createJobRunner(stores, logger, { consume: true, processors });
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
      { name: 'gate', process: async () => { await gate; } },
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
