// Traces whose scores are stamped again a little later (docs/scores.md, "Storage"): executions
// just written, and scores written while their execution was unknown. A score and its execution
// written at the same moment may each miss the other; a second look once both writes are done
// finds the pair. Held in memory: what a crash loses here, the stamp sweep (stamp-sweep.ts) finds
// again from the stores. Bounded: beyond the bound, the waiting traces are stamped at once.

const MAX_WAITING_TRACES = 100_000;

/** Traces restamped at once at most (one restamp's reads). */
const CHUNK = 1_000;

/** How long after a write its traces are stamped again, and again after that. */
export interface StampTiming {
  firstMs: number;
  againMs: number;
}

interface Entry {
  projectId: string;
  traceId: string;
  dueAt: number;
  /** Whether a second look follows this one. */
  again: boolean;
}

/**
 * Entries in the order they were queued. Every entry of one queue waits the same time, so the
 * order is the order they fall due: what is due is taken from the front, never found by scanning
 * every waiting trace (at thousands of executions a second, tens of thousands wait for their
 * second look). An entry replaced meanwhile (brought forward) stays behind and is skipped.
 */
class DueQueue {
  private items: Entry[] = [];
  private head = 0;

  push(e: Entry): void {
    this.items.push(e);
  }

  /** The first entry still waiting (`current`), stale ones dropped from the front. */
  peek(current: (e: Entry) => boolean): Entry | undefined {
    while (this.head < this.items.length && !current(this.items[this.head]!)) this.head++;
    this.compact();
    return this.items[this.head];
  }

  shift(): Entry | undefined {
    const e = this.items[this.head];
    if (e) this.head++;
    this.compact();
    return e;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

export function createRestampQueue(deps: {
  restamp: (projectId: string, traceIds: string[]) => Promise<void>;
  timing: StampTiming;
  onError?: (err: unknown) => void;
  now: () => number;
}) {
  const { timing, now } = deps;
  /** Each waiting trace's entry: the one its queue holds for it. */
  const waiting = new Map<string, Entry>();
  /** First looks (due `firstMs` after a write), and second looks and retries (`againMs`). */
  const first = new DueQueue();
  const second = new DueQueue();
  const current = (e: Entry) => waiting.get(key(e.projectId, e.traceId)) === e;
  let timer: NodeJS.Timeout | undefined;
  let timerDue = Infinity;
  let stamping: Promise<void> | undefined;

  function wait(e: Entry, queue: DueQueue): void {
    waiting.set(key(e.projectId, e.traceId), e);
    queue.push(e);
  }

  /** The entries due now (every entry, with `all`), taken off their queues. */
  function takeDue(all: boolean): Entry[] {
    const due: Entry[] = [];
    const t = now();
    for (const queue of [first, second])
      for (let e = queue.peek(current); e && (all || e.dueAt <= t); e = queue.peek(current)) {
        queue.shift();
        waiting.delete(key(e.projectId, e.traceId));
        due.push(e);
      }
    return due;
  }

  async function stampDue(all: boolean): Promise<void> {
    const byProject = new Map<string, string[]>();
    for (const e of takeDue(all)) {
      if (e.again && !all) wait({ ...e, dueAt: now() + timing.againMs, again: false }, second);
      // Pushed, not spread into a new array: a hundred thousand waiting traces took minutes.
      const list = byProject.get(e.projectId);
      if (list) list.push(e.traceId);
      else byProject.set(e.projectId, [e.traceId]);
    }
    for (const [projectId, traces] of byProject)
      for (let i = 0; i < traces.length; i += CHUNK) {
        const chunk = traces.slice(i, i + CHUNK);
        try {
          await deps.restamp(projectId, chunk);
        } catch (err) {
          // A store that failed: these traces wait for the next round.
          for (const traceId of chunk)
            if (!waiting.has(key(projectId, traceId))) wait({ projectId, traceId, dueAt: now() + timing.againMs, again: false }, second);
          deps.onError?.(err);
        }
      }
  }

  function schedule(): void {
    if (stamping || waiting.size === 0) return;
    const next = Math.min(first.peek(current)?.dueAt ?? Infinity, second.peek(current)?.dueAt ?? Infinity);
    // A timer set for later than the earliest entry is set again: an execution written while its
    // trace waits for the second look is stamped at once, not at the second look.
    if (timer && timerDue <= next) return;
    if (timer) clearTimeout(timer);
    timerDue = next;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerDue = Infinity;
        stamping = stampDue(waiting.size > MAX_WAITING_TRACES)
          .catch((err: unknown) => deps.onError?.(err))
          .finally(() => {
            stamping = undefined;
            schedule();
          });
      },
      Math.max(0, next - now()),
    );
    timer.unref();
  }

  return {
    /**
     * These traces are stamped again after `timing.firstMs` and once more `timing.againMs` later;
     * a trace already waiting for a later look is brought forward.
     */
    add(projectId: string, traceIds: readonly string[]): void {
      const dueAt = now() + timing.firstMs;
      for (const traceId of traceIds) {
        const e = waiting.get(key(projectId, traceId));
        if (!e || e.dueAt > dueAt) wait({ projectId, traceId, dueAt, again: true }, first);
      }
      schedule();
    },

    /** Stamps every waiting trace now (shutdown, tests). */
    async flush(): Promise<void> {
      if (timer) clearTimeout(timer);
      timer = undefined;
      timerDue = Infinity;
      await stamping;
      await stampDue(true);
    },

    /** Traces waiting for a look. */
    get size(): number {
      return waiting.size;
    },
  };
}

const key = (projectId: string, traceId: string) => `${projectId}\u0000${traceId}`;
