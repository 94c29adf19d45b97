// Budget check states are published last-writer-safe: an evaluation that read an older budget row,
// or read earlier, never replaces a newer state (in memory; in Redis with a compare-and-set).
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createBudgetStateStore, notOlder, type BudgetState } from '../../src/spend/budget-state.ts';
import { createLogger } from '../../src/logger.ts';
import type { RedisStore } from '../../src/stores/redis.ts';

const logger = createLogger({ logLevel: 'silent' });
const state = (over: Partial<BudgetState>): BudgetState => ({
  month: '2026-11',
  budgetNanos: '10000000000',
  spentNanos: '12000000000',
  thresholdPct: 80,
  mode: 'alert',
  status: 'exceeded',
  budgetVersion: 1_000,
  readAt: 5_000,
  ...over,
});

describe('budget state ordering', () => {
  it('a state replaces another only when it is not older (budget version, then read time)', () => {
    expect(notOlder(state({}), undefined)).toBe(true);
    expect(notOlder(state({ budgetVersion: 2_000, readAt: 1 }), state({}))).toBe(true); // newer budget row wins whatever the read time
    expect(notOlder(state({ budgetVersion: 500, readAt: 9_999 }), state({}))).toBe(false); // read the old row: stale
    expect(notOlder(state({ readAt: 6_000 }), state({}))).toBe(true);
    expect(notOlder(state({ readAt: 4_000 }), state({}))).toBe(false);
    expect(notOlder(state({}), state({}))).toBe(true);
    expect(notOlder(state({}), state({ budgetVersion: undefined, readAt: undefined }))).toBe(true); // a state written before the fields existed
  });

  it('in memory: a stale evaluation finishing last does not overwrite the block-mode state an admin just published', async () => {
    const store = createBudgetStateStore(undefined, 50, logger);
    // the scheduled evaluation read the budget row (version 1000) at t=5000 but publishes last
    const scheduled = state({ mode: 'alert', budgetVersion: 1_000, readAt: 5_000 });
    // the admin's PUT (row version 2000) and its evaluation publish first
    const afterPut = state({ mode: 'block', budgetVersion: 2_000, readAt: 5_100 });
    expect(await store.set('p', afterPut)).toBe(true);
    expect(await store.set('p', scheduled)).toBe(false);
    expect((await store.get('p'))?.mode).toBe('block');
    // a later evaluation of the same row replaces it
    expect(await store.set('p', { ...afterPut, spentNanos: '13000000000', readAt: 6_000 })).toBe(true);
    expect((await store.get('p'))?.spentNanos).toBe('13000000000');
  });
});

// The Redis store exists in server mode (REDIS_URL set, as .ci/run's second run does); the
// embedded run has no Redis, so the case is defined only when there is one to test against.
const redisUrl = process.env.REDIS_URL;
if (redisUrl)
  describe('budget state ordering in Redis (server mode)', () => {
    const client = redisUrl ? new Redis(redisUrl) : undefined;
    const prefix = `tl-test-${process.pid}-${Date.now()}`;
    const redis = { client, prefix } as unknown as RedisStore;
    afterAll(async () => {
      await client?.del(`${prefix}:budget-state:p`);
      client?.disconnect();
    });

    it('another node with an older state cannot overwrite the newer one (compare-and-set)', async () => {
      const nodeA = createBudgetStateStore(redis, 0, logger);
      const nodeB = createBudgetStateStore(redis, 0, logger);
      expect(await nodeA.set('p', state({ mode: 'block', budgetVersion: 2_000, readAt: 5_100 }))).toBe(true);
      expect(await nodeB.set('p', state({ mode: 'alert', budgetVersion: 1_000, readAt: 5_000 }))).toBe(false);
      expect((await nodeB.get('p'))?.mode).toBe('block');
      expect(JSON.parse((await client!.get(`${prefix}:budget-state:p`))!).mode).toBe('block');
      expect(await nodeB.set('p', state({ mode: 'block', spentNanos: '1', budgetVersion: 2_000, readAt: 7_000 }))).toBe(true);
      expect((await nodeA.get('p'))?.spentNanos).toBe('1');
    });
  });
