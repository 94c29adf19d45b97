// Score writes in rounds (src/scores/write-rounds.ts): writes that come while a round is stored go
// together in the next one; a round is one project's, its writes share no id (a later write of an
// id waits, so writes of one id keep their order), bounded in scores; a failed round fails its writes.
import { describe, expect, it } from 'vitest';
import { createWriteRounds, type RoundWrite } from '../../src/scores/write-rounds.ts';

type W = RoundWrite & { name: string };
const w = (name: string, projectId: string, ...ids: string[]): W => ({ name, projectId, ids });

function recorder(fail?: (round: W[]) => boolean) {
  const rounds: string[][] = [];
  let release: (() => void) | undefined;
  const first = new Promise<void>((r) => (release = r));
  const rs = createWriteRounds<W, string>(async (projectId, writes) => {
    rounds.push(writes.map((x) => `${projectId}:${x.name}`));
    if (rounds.length === 1) await first; // the first round is held while the others queue
    if (fail?.(writes)) throw new Error('store down');
    return writes.map((x) => `stored ${x.name}`);
  }, 5);
  return { rounds, rs, release: () => release!() };
}

describe('score write rounds', () => {
  it('writes queued behind a round go together, by project, a shared id waiting for a later round', async () => {
    const { rounds, rs, release } = recorder();
    const done = [
      rs.write(w('a', 'p1', 'x')),
      rs.write(w('b', 'p1', 'y')),
      rs.write(w('c', 'p2', 'y')), // another project: the same id is another score
      rs.write(w('d', 'p1', 'x', 'z')), // x was a's, whose round is under way: d goes in the next
      rs.write(w('e', 'p1', 'z')), // shares z with d: the next round
      rs.write(w('f', 'p1', 'q')),
    ];
    release();
    expect(await Promise.all(done)).toEqual(['stored a', 'stored b', 'stored c', 'stored d', 'stored e', 'stored f']);
    expect(rounds).toEqual([['p1:a'], ['p1:b', 'p1:d', 'p1:f'], ['p2:c'], ['p1:e']]);
  });

  it('a round holds at most the bound of scores, never splitting a write', async () => {
    const { rounds, rs, release } = recorder();
    const done = [
      rs.write(w('a', 'p', '0')),
      rs.write(w('b', 'p', '1', '2', '3')),
      rs.write(w('c', 'p', '4', '5')),
      rs.write(w('d', 'p', '6', '7', '8', '9', '10', '11')),
    ];
    release();
    await Promise.all(done);
    // b (3) + c (2) fill the bound of 5; d (6) is over it alone and is stored alone.
    expect(rounds).toEqual([['p:a'], ['p:b', 'p:c'], ['p:d']]);
  });

  it('a failed round fails each of its writes; the next round goes on', async () => {
    const { rounds, rs, release } = recorder((round) => round.some((x) => x.name === 'b'));
    const done = [rs.write(w('a', 'p', '1')), rs.write(w('b', 'p', '2')), rs.write(w('c', 'p', '3')), rs.write(w('d', 'p', '2'))];
    release();
    const results = await Promise.allSettled(done);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(rounds).toEqual([['p:a'], ['p:b', 'p:c'], ['p:d']]);
  });

  it('writes queued together start one round between them, not a round of the first alone', async () => {
    const rounds: string[][] = [];
    const rs = createWriteRounds<W, string>(async (projectId, writes) => {
      rounds.push(writes.map((x) => `${projectId}:${x.name}`));
      return writes.map((x) => `stored ${x.name}`);
    }, 5);
    const done = rs.writeAll([w('a', 'p', '1'), w('b', 'p', '2'), w('c', 'p', '3', '4', '5', '6')]);
    expect(await Promise.all(done)).toEqual(['stored a', 'stored b', 'stored c']);
    // rs.write() one by one would give [a], [b, ...]: the first would start a round alone.
    expect(rounds).toEqual([['p:a', 'p:b'], ['p:c']]);
  });
});

describe('score write rounds, two at once', () => {
  it('a second round starts beside the first only while a full round waits, and never with an id of a round being stored', async () => {
    const started: string[][] = [];
    const release = new Map<string, () => void>();
    const rs = createWriteRounds<W, string>(
      async (projectId, writes) => {
        const names = writes.map((x) => x.name);
        started.push(names);
        await new Promise<void>((r) => release.set(names.join(), r));
        return writes.map((x) => `stored ${x.name}`);
      },
      4,
      2,
    );
    const a = rs.write(w('a', 'p', '1', '2'));
    const b = rs.write(w('b', 'p', '3')); // 1 score waits: no second round
    expect(started).toEqual([['a']]);
    const later = rs.writeAll([w('c', 'p', '4', '5'), w('d', 'p', '1', '6'), w('e', 'p', '7')]);
    // 6 scores wait (b, c, d, e), a full round: the second starts beside a, with what shares no id
    // with a's round up to the bound. d holds 1, which a is storing: it is skipped, not stored
    // beside a (were it only over the bound, the round would stop there, without e).
    expect(started).toEqual([['a'], ['b', 'c', 'e']]);
    release.get('b,c,e')!();
    await Promise.all([b, later[0], later[2]]);
    expect(started).toHaveLength(2); // d alone is no full round: it waits for a's round to end
    release.get('a')!();
    await a;
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([['a'], ['b', 'c', 'e'], ['d']]);
    release.get('d')!();
    expect(await later[1]).toBe('stored d');
  });
});
