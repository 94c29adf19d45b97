// Scores accepted before they are stored (docs/scores.md, "Accepted writes"). A batch sent with
// `Prefer: respond-async` is checked whole as every write is (400 or 422 naming the item and field,
// nothing kept), appended to the scores' write-ahead log and answered 202 once an fsync covers it.
// A loader stores the log's records in the background: everything waiting is handed to the write
// rounds at once (write-rounds.ts), so rounds run full (10,000 scores) whatever the clients'
// concurrency, and each round's reads and insert are paid once for ten batches; the next records
// are taken while earlier ones are stored. A record is marked stored only once its round and every
// record before it are; after a crash the records past that point are stored again,
// which writes nothing twice (a batch's ids are fixed when it is accepted, and a write of a score
// as it is stored is no write).
import { LogFullError, LogWriteError, type LogRecord, type WriteAheadLog } from '../stores/write-ahead-log.ts';
import { createLogConsumer } from '../stores/log-consumer.ts';
import { Unavailable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { CheckedScore, ScoreService } from './service.ts';
import type { ScoreInput } from './score.ts';

/** A record's header: the project, the author, and how many scores the payload (JSON) holds. */
export interface ScoreLogHeader {
  p: string;
  a: string;
  n: number;
}

export type ScoreLog = WriteAheadLog<ScoreLogHeader>;

/** Bytes of records taken at once: about ten batches of a thousand scores (a write round's worth). */
const TAKE_BYTES = 4 << 20;

/** Takes being stored at once: the next is read and queued while one is stored. */
const MAX_TAKES = 2;

/**
 * Scores accepted and not yet stored beyond which a new batch is held until the loader makes room
 * (a few seconds of work): clients slow down to the rate scores are stored, without errors.
 */
const MAX_WAITING_SCORES = 50_000;
/** How long a batch is held for room, or a request for an accepted id, before it is refused (503, to retry). */
const MAX_HOLD_MS = 30_000;

export function createScoreLoader(deps: {
  log: ScoreLog;
  scores: Pick<ScoreService, 'check' | 'storeChecked'>;
  /** How long to wait before storing again records a store refused (they stay in the log meanwhile). */
  retryMs: number;
  logger: Logger;
}) {
  let started = false;
  /** Batches held for room, woken whenever records are stored. */
  const held: Array<() => void> = [];
  /**
   * Takes what the log holds (about a round's worth) and stores it; takes the next while it is
   * stored (at most MAX_TAKES at once, so the engine has the next round's reads to do while a
   * round's rows are built); marks each take stored once it and every take before it are
   * (stores/log-consumer.ts). A take fails only when stopping: the loader stops there.
   */
  const consumer = createLogConsumer<ScoreLogHeader, void>({
    log: deps.log,
    take: () => deps.log.take(TAKE_BYTES),
    first: storeRecords,
    second: async (records) => deps.log.markLoaded(records[records.length - 1]!.seq),
    recover: async (_records, err) => {
      throw err;
    },
    maxInFlight: MAX_TAKES,
    sequentialFirsts: false,
    // Pending: appended and not yet marked stored (taken ones included).
    loaded: () => deps.log.pendingRows === 0,
    onSettled: () => {
      for (const f of held.splice(0)) f();
    },
    what: 'scores',
    logger: deps.logger,
  });
  /**
   * Ids of accepted scores not yet stored, by project (with how many waiting batches hold each), so
   * that a write of one of them sent without the preference, or its delete, comes after it.
   * Batches read back after a restart are not in it: they are stored first thing.
   */
  const waitingIds = new Map<string, Map<string, number>>();
  function hold(projectId: string, ids: readonly string[], n: 1 | -1): void {
    let byId = waitingIds.get(projectId);
    if (!byId) waitingIds.set(projectId, (byId = new Map()));
    for (const id of ids) {
      const left = (byId.get(id) ?? 0) + n;
      if (left > 0) byId.set(id, left);
      else byId.delete(id);
    }
    if (byId.size === 0) waitingIds.delete(projectId);
  }
  async function room(scores: number): Promise<void> {
    const until = Date.now() + MAX_HOLD_MS;
    while (deps.log.pendingRows > 0 && deps.log.pendingRows + scores > MAX_WAITING_SCORES) {
      if (Date.now() >= until)
        throw new Unavailable(`The scores write queue is full (${deps.log.pendingRows} scores are not yet stored); retry later`, 1);
      await new Promise<void>((resolve) => {
        held.push(resolve);
        setTimeout(resolve, until - Date.now()).unref();
      });
    }
  }

  async function storeRecords(records: LogRecord<ScoreLogHeader>[]): Promise<void> {
    const batches = records.map((r) => ({
      projectId: r.header.p,
      author: r.header.a,
      scores: JSON.parse(r.payload!.toString('utf8')) as CheckedScore[],
    }));
    for (;;) {
      try {
        await deps.scores.storeChecked(batches);
        for (const b of batches)
          hold(
            b.projectId,
            b.scores.map((x) => x.id),
            -1,
          );
        return;
      } catch (err) {
        // Checked when accepted, they are refused only by a store that cannot serve now: they stay
        // in the log and are tried again until stored.
        if (consumer.stopping) throw err;
        deps.logger.warn({ err: { message: (err as Error).message } }, 'accepted scores not stored yet; trying again shortly');
        await new Promise((resolve) => setTimeout(resolve, deps.retryMs).unref());
      }
    }
  }

  return {
    /**
     * Checks a batch and appends it to the log; resolves once it is durable, with the ids of its
     * scores in the order sent. 503 while the log is full or cannot be written.
     */
    async accept(projectId: string, inputs: ScoreInput[], author: string, prefix: (i: number) => string): Promise<string[]> {
      if (!started)
        throw new Unavailable('Scores are not accepted for later storage by this process; send them without Prefer: respond-async', 5);
      const scores = await deps.scores.check(projectId, inputs, prefix);
      await room(scores.length);
      const ids = scores.map((s) => s.id);
      // Held before the append: the loader may store the record before the append's answer comes.
      hold(projectId, ids, 1);
      try {
        await deps.log.append({ p: projectId, a: author, n: scores.length }, Buffer.from(JSON.stringify(scores)));
      } catch (err) {
        hold(projectId, ids, -1);
        if (err instanceof LogFullError) throw new Unavailable(`The scores write queue is full (${err.message}); retry later`, 1);
        if (err instanceof LogWriteError)
          throw new Unavailable('The scores could not be made durable (the scores log cannot be written); retry later', 5);
        throw err;
      }
      return ids;
    },

    /** Resolves once no accepted batch still to store holds one of these ids (503 after 30 s: a store is down). */
    async settled(projectId: string, ids: readonly string[]): Promise<void> {
      const until = Date.now() + MAX_HOLD_MS;
      for (;;) {
        const byId = waitingIds.get(projectId);
        if (!byId || !ids.some((id) => byId.has(id))) return;
        if (Date.now() >= until) throw new Unavailable('A score accepted earlier with this id is not stored yet; retry later', 1);
        await new Promise<void>((resolve) => {
          held.push(resolve);
          setTimeout(resolve, until - Date.now()).unref();
        });
      }
    },

    /** Opens the log and stores what it holds from before, then what comes; returns the records replayed. */
    start(): number {
      const replayed = deps.log.open();
      started = true;
      consumer.start();
      return replayed;
    },

    /** Resolves once every score accepted so far is stored (or its store failed: it stays in the log). */
    flush: consumer.flush,

    /** Stores what is queued, then stops and closes the log. */
    async stop(): Promise<void> {
      if (started) await consumer.stop();
    },
  };
}

export type ScoreLoader = ReturnType<typeof createScoreLoader>;
