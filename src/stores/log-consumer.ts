// The consumer of a write-ahead log (write-ahead-log.ts): the one loop behind the span loader
// (ingest/span-loader.ts) and the score loader (scores/score-log.ts). It takes the log's records in
// batches and loads each in two stages: the first (storing) may run while earlier batches are in
// their second (settling, marking loaded), and second stages run in the order the batches were
// taken, so a log is marked loaded in order. A stage that fails hands its batch to `recover`, which
// tries again as long as it takes and throws only when the consumer stops: what is not loaded stays
// in the log for the next start.
import type { Logger } from '../logger.ts';
import type { LogRecord, WriteAheadLog } from './write-ahead-log.ts';

export interface LogConsumerDeps<H, S> {
  log: Pick<WriteAheadLog<H>, 'drain' | 'close'>;
  /** The next batch; empty once the log is closed and drained. */
  take(): Promise<LogRecord<H>[]>;
  /** A batch's first stage; its result goes to `second`. */
  first(records: LogRecord<H>[]): Promise<S>;
  /** A batch's second stage, after every earlier batch's. */
  second(records: LogRecord<H>[], stored: S): Promise<void>;
  /** After a stage of `records` failed with `err` (and every earlier batch settled): loads them, or throws when stopping. */
  recover(records: LogRecord<H>[], err: unknown): Promise<void>;
  /**
   * Batches in flight at most. `sequentialFirsts`: a batch's first stage starts only after the one
   * before it is done (and recovered, if it failed).
   */
  maxInFlight: number;
  sequentialFirsts: boolean;
  /** Whether everything appended so far is loaded (a flush then returns). */
  loaded(): boolean;
  /** Called whenever a batch settles (or fails while the store cannot take it). */
  onSettled?: () => void;
  /** Names the log in the line written if the loop stops on an error. */
  what: string;
  logger: Logger;
}

export function createLogConsumer<H, S>(deps: LogConsumerDeps<H, S>) {
  let running: Promise<void> | undefined;
  let stopping = false;
  let inFlight = 0;
  const idle: Array<() => void> = [];
  let room: (() => void) | undefined;

  function settled(): void {
    deps.onSettled?.();
    if (inFlight === 0 && deps.loaded()) for (const f of idle.splice(0)) f();
  }

  async function run(): Promise<void> {
    let chain: Promise<void> = Promise.resolve();
    for (;;) {
      while (inFlight >= deps.maxInFlight) await new Promise<void>((resolve) => (room = resolve));
      const records = await deps.take();
      if (records.length === 0) break; // closed and drained
      inFlight++;
      const firstDone = deps.first(records).then(
        (stored) => ({ ok: true as const, stored }),
        (err: unknown) => ({ ok: false as const, err }),
      );
      const before = chain;
      chain = (async () => {
        const r = await firstDone;
        await before;
        if (r.ok) await deps.second(records, r.stored).catch((err: unknown) => deps.recover(records, err));
        else await deps.recover(records, r.err);
      })().finally(() => {
        inFlight--;
        settled();
        room?.();
      });
      chain.catch(() => undefined); // awaited by the next batch's chain, or below
      if (deps.sequentialFirsts && !(await firstDone).ok) await chain;
    }
    await chain;
  }

  return {
    get stopping() {
      return stopping;
    },
    /** Wakes the flushes waiting (a batch failed while its store cannot take it: they wait for what can be loaded now). */
    wakeFlushes(): void {
      for (const f of idle.splice(0)) f();
    },
    start(): void {
      running ??= run().catch((err: Error) =>
        deps.logger.error({ err: { message: err.message } }, `${deps.what} loader stopped; the log keeps the records for the next start`),
      );
    },
    /** Resolves once every record appended so far is loaded (or a load failed while its store cannot take it: it stays in the log). */
    async flush(): Promise<void> {
      await deps.log.drain();
      if (deps.loaded()) return;
      await new Promise<void>((resolve) => {
        idle.push(resolve);
        settled();
      });
    },
    /** Loads what is queued, then stops and closes the log. */
    async stop(): Promise<void> {
      stopping = true;
      await deps.log.close();
      await running;
    },
  };
}

export type LogConsumer = ReturnType<typeof createLogConsumer>;
