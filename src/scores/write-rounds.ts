// Score writes in rounds (docs/scores.md, "Storage"): the writes that arrive while a round is
// being stored are stored together in the next one. A write's reads (where its ids are, the live
// scores of its traces, their executions' stamps) cost about as much for a thousand keys as for
// several thousand (the keys are scattered over the same granules), so a round pays them once for
// all its writes, and its rows go out as one insert. A round holds one project's writes, none of
// them sharing an id (a later write of an id waits for a later round, so writes of one id keep
// their order), at most `maxScores` scores; a write is never split. Up to `maxRounds` rounds are
// stored at once, a second only while a full round waits (so rounds stay full) and never with an
// id of a round being stored: one round's reads run in the engine while another's rows are built.

export interface RoundWrite {
  projectId: string;
  /** The score ids the write upserts. */
  ids: readonly string[];
}

interface Waiting<W, R> {
  write: W;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * `store` stores one round (writes of one project) and returns each write's result in order; when
 * it throws, every write of the round fails with that error.
 */
export function createWriteRounds<W extends RoundWrite, R>(
  store: (projectId: string, writes: W[]) => Promise<R[]>,
  maxScores: number,
  maxRounds = 1,
) {
  const waiting: Array<Waiting<W, R>> = [];
  let waitingScores = 0;
  /** The rounds being stored: their project and ids. */
  const storing = new Set<{ projectId: string; ids: Set<string> }>();

  /**
   * The next round: the first waiting write's project, in order, skipping writes that share an id
   * with one before them or with a round being stored.
   */
  function nextRound(): Array<Waiting<W, R>> {
    const projectId = waiting[0]!.write.projectId;
    const round: Array<Waiting<W, R>> = [];
    const seen = new Set<string>();
    for (const r of storing) if (r.projectId === projectId) for (const id of r.ids) seen.add(id);
    let scores = 0;
    for (const w of waiting) {
      if (w.write.projectId !== projectId) continue;
      const clash = w.write.ids.some((id) => seen.has(id));
      for (const id of w.write.ids) seen.add(id); // a skipped write still holds its ids back from later ones
      if (clash) continue;
      if (round.length > 0 && scores + w.write.ids.length > maxScores) break;
      round.push(w);
      scores += w.write.ids.length;
    }
    for (const w of round) waiting.splice(waiting.indexOf(w), 1);
    waitingScores -= scores;
    return round;
  }

  /**
   * Starts rounds: one when none is stored; another beside it (up to `maxRounds`) only while a
   * full round waits, so rounds stay full.
   */
  function kick(): void {
    while (waiting.length > 0 && (storing.size === 0 || (storing.size < maxRounds && waitingScores >= maxScores))) {
      const round = nextRound();
      if (round.length === 0) return; // every waiting write shares an id with a round being stored
      const projectId = round[0]!.write.projectId;
      const entry = { projectId, ids: new Set(round.flatMap((w) => w.write.ids)) };
      storing.add(entry);
      void store(
        projectId,
        round.map((w) => w.write),
      )
        .then(
          (results) => round.forEach((w, i) => w.resolve(results[i]!)),
          (err: unknown) => round.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          storing.delete(entry);
          kick();
        });
    }
  }

  const queue = (write: W) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ write, resolve, reject });
      waitingScores += write.ids.length;
    });

  return {
    /** Resolves with the write's result once its round is stored. */
    write(write: W): Promise<R> {
      const result = queue(write);
      kick();
      return result;
    },
    /** Writes that wait together: none of them starts a round before the others are queued. */
    writeAll(writes: readonly W[]): Array<Promise<R>> {
      const results = writes.map(queue);
      kick();
      return results;
    },
  };
}
