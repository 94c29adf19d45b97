// The queue of traces whose scores are stamped again (src/scores/restamp-queue.ts): a first look
// after firstMs, a second againMs later, brought forward when written again, retried after a
// failure, and everything at once past the bound or on flush.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRestampQueue } from '../../src/scores/restamp-queue.ts';

describe('restamp queue', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function queue(fail?: () => boolean) {
    const looks: Array<{ at: number; projectId: string; traceIds: string[] }> = [];
    const errors: unknown[] = [];
    const q = createRestampQueue({
      restamp: async (projectId, traceIds) => {
        if (fail?.()) throw new Error('store down');
        looks.push({ at: Date.now() - 1_000_000, projectId, traceIds: [...traceIds].sort() });
      },
      timing: { firstMs: 100, againMs: 1_000 },
      onError: (err) => errors.push(err),
      now: () => Date.now(),
    });
    return { q, looks, errors };
  }

  it('looks at each trace twice: firstMs after its write, then againMs after that', async () => {
    const { q, looks } = queue();
    q.add('p', ['a', 'b']);
    await vi.advanceTimersByTimeAsync(50);
    q.add('p', ['c']);
    q.add('other', ['a']);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(looks).toEqual([
      { at: 100, projectId: 'p', traceIds: ['a', 'b'] },
      { at: 150, projectId: 'p', traceIds: ['c'] },
      { at: 150, projectId: 'other', traceIds: ['a'] },
      { at: 1_100, projectId: 'p', traceIds: ['a', 'b'] },
      { at: 1_150, projectId: 'p', traceIds: ['c'] },
      { at: 1_150, projectId: 'other', traceIds: ['a'] },
    ]);
    expect(q.size).toBe(0);
  });

  it('brings a trace waiting for its second look forward when its execution is written again, once', async () => {
    const { q, looks } = queue();
    q.add('p', ['a']);
    await vi.advanceTimersByTimeAsync(500); // first look at 100; the second is due at 1,100
    q.add('p', ['a']); // written again: looked at 100 ms later, and again 1,000 ms after that
    await vi.advanceTimersByTimeAsync(3_000);
    expect(looks.map((l) => l.at)).toEqual([100, 600, 1_600]);
  });

  it('tries traces whose restamp failed again after againMs', async () => {
    let failures = 1;
    const { q, looks, errors } = queue(() => failures-- > 0);
    q.add('p', ['a']);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(errors).toHaveLength(1);
    // Failed at 100; the second look (due 1,100) and the retry (due 1,100) are one look.
    expect(looks.map((l) => l.at)).toEqual([1_100]);
    expect(q.size).toBe(0);
  });

  it('flush stamps every waiting trace at once, without a second look', async () => {
    const { q, looks } = queue();
    q.add('p', ['a', 'b']);
    q.add('p', ['c']);
    await q.flush();
    expect(looks).toEqual([{ at: 0, projectId: 'p', traceIds: ['a', 'b', 'c'] }]);
    expect(q.size).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(looks).toHaveLength(1);
  });

  it('holds tens of thousands of traces and takes only the due ones each round', async () => {
    const { q, looks } = queue();
    for (let i = 0; i < 50; i++) {
      q.add(
        'p',
        Array.from({ length: 1_000 }, (_, j) => `t${i}-${j}`),
      );
      await vi.advanceTimersByTimeAsync(20);
    }
    await vi.advanceTimersByTimeAsync(5_000);
    const seen = new Map<string, number>();
    for (const l of looks) for (const t of l.traceIds) seen.set(t, (seen.get(t) ?? 0) + 1);
    expect(seen.size).toBe(50_000);
    expect([...seen.values()].every((n) => n === 2)).toBe(true);
  });
});
