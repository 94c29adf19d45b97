// The set of traces waiting for assembly, in the current mode (a Redis sorted set with leases and
// locks, or a map in the process): marks keep the earlier due time, a taken trace is leased to one
// taker, a mark during the assembly wins over the lease's end, and (Redis) a taker that dies
// loses nothing: the trace is due again when its lease ends.
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.ts';
import { createRedis } from '../../../src/stores/redis.ts';
import { createLocalPendingTraces, createRedisPendingTraces, type PendingTraces } from '../../../src/ingest/assembly/pending.ts';
import { mode, testEnv } from '../../helpers/env.ts';

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of closers) await c();
});

async function pendingOfMode(lockMs: number): Promise<PendingTraces> {
  const t = await testEnv();
  const redis = createRedis(t.config, createLogger({ logLevel: 'silent' }));
  if (!redis) return createLocalPendingTraces();
  closers.push(() => redis.close());
  expect(await redis.ping()).toBe(true); // connected (commands fail fast otherwise)
  return createRedisPendingTraces(redis, { lockMs, retryMs: 50 });
}

const T = (traceId: string) => ({ projectId: 'p1', traceId });
const ids = (l: { traces: Array<{ traceId: string }> }) => l.traces.map((t) => t.traceId).sort();

describe(`pending traces (${mode} mode: ${mode === 'server' ? 'Redis' : 'in process'})`, () => {
  it('a mark keeps the earlier due time; only due traces are taken; a taken trace is not taken twice', async () => {
    const p = await pendingOfMode(5_000);
    const now = Date.now();
    expect(await p.mark([T('a'), T('b')], now + 10_000)).toEqual([true, true]);
    expect(await p.mark([T('a')], now - 1)).toEqual([false]); // brought forward
    expect(await p.mark([T('b')], now + 60_000)).toEqual([false]); // not pushed back
    const first = await p.takeDue(now, 10);
    expect(ids(first)).toEqual(['a']);
    expect(ids(await p.takeDue(now + 20_000, 10))).toEqual(['b']);
    expect(ids(await p.takeDue(now + 20_000, 10))).toEqual([]); // both leased now
    await p.finish(first, first.traces, []);
  });

  it('a mark during the assembly wins over the end of the lease: the trace is due again', async () => {
    const p = await pendingOfMode(5_000);
    const now = Date.now();
    await p.mark([T('c')], now - 1);
    const lease = await p.takeDue(now, 10);
    expect(ids(lease)).toEqual(['c']);
    await p.mark([T('c')], now + 100); // new spans arrived while it was being assembled
    await p.finish(lease, lease.traces, []);
    expect(ids(await p.takeDue(now + 200, 10))).toEqual(['c']);
  });

  it('finish with a later time makes the trace due then, not before', async () => {
    const p = await pendingOfMode(5_000);
    const now = Date.now();
    await p.mark([T('d')], now - 1);
    const lease = await p.takeDue(now, 10);
    await p.finish(lease, [], [{ trace: T('d'), dueAt: now + 1_000 }]);
    expect(ids(await p.takeDue(now + 500, 10))).toEqual([]);
    expect(ids(await p.takeDue(now + 1_000, 10))).toEqual(['d']);
  });

  it(
    mode === 'server'
      ? 'a taker that dies loses nothing: the trace is due again when the lease ends, and the dead lease cannot end the new one'
      : "in process, a taken trace is the taker's until it finishes",
    async () => {
      const p = await pendingOfMode(300);
      const now = Date.now();
      await p.mark([T('e')], now - 1);
      const dead = await p.takeDue(Date.now(), 10);
      expect(ids(dead)).toEqual(['e']);
      if (mode !== 'server') {
        expect(await p.stillHeld(dead, dead.traces)).toEqual([true]);
        return;
      }
      expect(ids(await p.takeDue(Date.now(), 10))).toEqual([]); // leased
      await new Promise((r) => setTimeout(r, 400)); // the taker died: its lease and lock run out
      const again = await p.takeDue(Date.now(), 10);
      expect(ids(again)).toEqual(['e']);
      expect(await p.stillHeld(dead, dead.traces)).toEqual([false]);
      expect(await p.stillHeld(again, again.traces)).toEqual([true]);
      await p.finish(dead, dead.traces, []); // the dead taker's late finish changes nothing
      expect(await p.stillHeld(again, again.traces)).toEqual([true]);
      await p.finish(again, again.traces, []);
      await new Promise((r) => setTimeout(r, 400));
      expect(ids(await p.takeDue(Date.now(), 10))).toEqual([]); // done for good
    },
  );
});
