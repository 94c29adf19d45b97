// Key locks of score writes (docs/scores.md, "Storage"): one read-then-write at a time per score
// id and per trace on this node, so two concurrent writes cannot both cancel the same row, nor
// both count a trace's first score of a name. Held by project, then by the id or trace as it came
// (no key string built per score).

/** Runs `work` once no other work holding one of these ids or traces of the project runs; holds them meanwhile. */
export type KeyLocks = <T>(projectId: string, ids: readonly string[], traces: readonly string[], work: () => Promise<T>) => Promise<T>;

export function createKeyLocks(): KeyLocks {
  const inFlight = new Map<string, { ids: Map<string, Promise<unknown>>; traces: Map<string, Promise<unknown>> }>();
  return async function exclusive<T>(
    projectId: string,
    ids: readonly string[],
    traces: readonly string[],
    work: () => Promise<T>,
  ): Promise<T> {
    let held = inFlight.get(projectId);
    if (!held) inFlight.set(projectId, (held = { ids: new Map(), traces: new Map() }));
    const locks = held;
    for (;;) {
      const busy = new Set<Promise<unknown>>();
      for (const id of ids) {
        const p = locks.ids.get(id);
        if (p) busy.add(p);
      }
      for (const t of traces) {
        const p = locks.traces.get(t);
        if (p) busy.add(p);
      }
      if (busy.size === 0) break;
      await Promise.allSettled(busy);
    }
    const done = work();
    const settled = done.catch(() => undefined);
    for (const id of ids) locks.ids.set(id, settled);
    for (const t of traces) locks.traces.set(t, settled);
    try {
      return await done;
    } finally {
      for (const id of ids) if (locks.ids.get(id) === settled) locks.ids.delete(id);
      for (const t of traces) if (locks.traces.get(t) === settled) locks.traces.delete(t);
      if (locks.ids.size === 0 && locks.traces.size === 0 && inFlight.get(projectId) === locks) inFlight.delete(projectId);
    }
  };
}
