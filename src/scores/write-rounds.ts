// Score writes in rounds (docs/scores.md, "Storage"): the writes that arrive while a round is
// being stored are stored together in the next one. A write's reads (where its ids are, the live
// scores of its traces, their executions' stamps) cost about as much for a thousand keys as for
// several thousand (the keys are scattered over the same granules), so a round pays them once for
// all its writes, and its rows go out as one insert. A round holds one project's writes, none of
// them sharing an id (a later write of an id waits for a later round, so writes of one id keep
// their order), at most `maxScores` scores; a write is never split.

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
export function createWriteRounds<W extends RoundWrite, R>(store: (projectId: string, writes: W[]) => Promise<R[]>, maxScores: number) {
  const waiting: Array<Waiting<W, R>> = [];
  let storing = false;

  /** The next round: the first waiting write's project, in order, skipping writes that share an id with one before them. */
  function nextRound(): Array<Waiting<W, R>> {
    const projectId = waiting[0]!.write.projectId;
    const round: Array<Waiting<W, R>> = [];
    const seen = new Set<string>();
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
    return round;
  }

  function kick(): void {
    if (storing || waiting.length === 0) return;
    storing = true;
    const round = nextRound();
    const projectId = round[0]!.write.projectId;
    void store(
      projectId,
      round.map((w) => w.write),
    )
      .then(
        (results) => round.forEach((w, i) => w.resolve(results[i]!)),
        (err: unknown) => round.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        storing = false;
        kick();
      });
  }

  return {
    /** Resolves with the write's result once its round is stored. */
    write(write: W): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        waiting.push({ write, resolve, reject });
        kick();
      });
    },
    /** Writes that wait together: none of them starts a round before the others are queued. */
    writeAll(writes: readonly W[]): Array<Promise<R>> {
      const results = writes.map((write) => new Promise<R>((resolve, reject) => waiting.push({ write, resolve, reject })));
      kick();
      return results;
    },
  };
}
