// The loader of accepted scores (src/scores/score-log.ts) on a real write-ahead log: it takes the
// next batches while earlier ones are stored, and marks a take stored only once every take before
// it is, so a restart after a later take was stored, and before an earlier one was, stores the
// earlier one again (never loses it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteAheadLog } from '../../src/stores/write-ahead-log.ts';
import { createScoreLoader, type ScoreLogHeader } from '../../src/scores/score-log.ts';
import { createLogger } from '../../src/logger.ts';
import type { CheckedScore } from '../../src/scores/service.ts';
import type { ScoreInput } from '../../src/scores/score.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const openLog = (dir: string) =>
  new WriteAheadLog<ScoreLogHeader>(
    dir,
    { segmentBytes: 1 << 20, maxPendingBytes: 1 << 24, maxPendingRows: 100_000, maxMemoryBytes: 1 << 24 },
    (h) => h.n,
  );

function loaderOn(dir: string) {
  const log = openLog(dir);
  /** Each storeChecked call: the ids it stores, and how to let it finish. */
  const calls: Array<{ ids: string[]; finish: () => void }> = [];
  let called: (() => void) | undefined;
  const loader = createScoreLoader({
    log,
    retryMs: 10,
    logger: createLogger({ logLevel: 'silent' }),
    scores: {
      check: async (_p: string, inputs: ScoreInput[]) =>
        inputs.map((s) => ({ ...s, id: s.id!, trace_id: s.trace_id ?? '' }) as unknown as CheckedScore),
      storeChecked: (batches) =>
        new Promise<void>((resolve) => {
          calls.push({ ids: batches.flatMap((b) => b.scores.map((s) => s.id)), finish: resolve });
          called?.();
        }),
    },
  });
  const nextCall = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (calls.length >= n ? resolve() : (called = check));
      check();
    });
  return { log, loader, calls, nextCall };
}

const batch = (id: string): ScoreInput[] => [{ id, trace_id: 't', name: 'n', value: 1 }];

describe('accepted scores loader', () => {
  it('takes the next batches while a take is stored, and marks takes stored in order', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-score-log-'));
    dirs.push(dir);
    const first = loaderOn(dir);
    expect(first.loader.start()).toBe(0);
    await first.loader.accept('p', batch('a'), 'u', () => '');
    await first.nextCall(1);
    await first.loader.accept('p', batch('b'), 'u', () => '');
    await first.nextCall(2); // taken while the first take is being stored
    expect(first.calls.map((c) => c.ids)).toEqual([['a'], ['b']]);
    first.calls[1]!.finish(); // the later take is stored first...
    await new Promise((r) => setTimeout(r, 20));
    expect(first.log.pendingRows).toBe(2); // ...and not marked stored before the earlier one
    // A process that stops here (the earlier take not stored) leaves both to the next one.
    const replayed = openLog(dir);
    // The log is held by this process's loader: read what the next start would find after it ends.
    first.calls[0]!.finish();
    await first.loader.flush();
    expect(first.log.pendingRows).toBe(0);
    await first.loader.stop();
    expect(replayed.open()).toBe(0); // both marked stored: nothing to store again
  });

  it('a later take stored while an earlier one is not: the log as a crash leaves it stores both again', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-score-log-'));
    dirs.push(dir);
    const first = loaderOn(dir);
    first.loader.start();
    await first.loader.accept('p', batch('a'), 'u', () => '');
    await first.nextCall(1);
    await first.loader.accept('p', batch('b'), 'u', () => '');
    await first.nextCall(2);
    first.calls[1]!.finish();
    await new Promise((r) => setTimeout(r, 20));
    // The files as a process that died now would leave them (its lock file aside).
    const crashed = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-score-log-crash-'));
    dirs.push(crashed);
    fs.cpSync(dir, crashed, { recursive: true, filter: (f) => path.basename(f) !== '.lock' });
    const next = loaderOn(crashed);
    expect(next.loader.start()).toBe(2); // a's record was never stored: it and b's are stored again
    await next.nextCall(1);
    expect(next.calls[0]!.ids).toEqual(['a', 'b']);
    next.calls[0]!.finish();
    await next.loader.flush();
    await next.loader.stop();
    first.calls[0]!.finish();
    await first.loader.stop();
  });
});
