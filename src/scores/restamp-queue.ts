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

export function createRestampQueue(deps: {
  restamp: (projectId: string, traceIds: string[]) => Promise<void>;
  timing: StampTiming;
  onError?: (err: unknown) => void;
  now: () => number;
}) {
  const { timing, now } = deps;
  const waiting = new Map<string, Entry>();
  let timer: NodeJS.Timeout | undefined;
  let timerDue = Infinity;
  let stamping: Promise<void> | undefined;

  async function stampDue(all: boolean): Promise<void> {
    const byProject = new Map<string, string[]>();
    for (const [k, e] of waiting) {
      if (!all && e.dueAt > now()) continue;
      waiting.delete(k);
      if (e.again && !all) waiting.set(k, { ...e, dueAt: now() + timing.againMs, again: false });
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
          for (const traceId of chunk) {
            const k = key(projectId, traceId);
            if (!waiting.has(k)) waiting.set(k, { projectId, traceId, dueAt: now() + timing.againMs, again: false });
          }
          deps.onError?.(err);
        }
      }
  }

  function schedule(): void {
    if (stamping || waiting.size === 0) return;
    let next = Infinity;
    for (const e of waiting.values()) if (e.dueAt < next) next = e.dueAt;
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
        const k = key(projectId, traceId);
        const e = waiting.get(k);
        if (!e || e.dueAt > dueAt) waiting.set(k, { projectId, traceId, dueAt, again: true });
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
  };
}

const key = (projectId: string, traceId: string) => `${projectId}\u0000${traceId}`;
