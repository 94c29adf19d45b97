// Per-evaluator limits on this node: at most `concurrency` judge calls at once and call starts
// spaced by 60 s / max_calls_per_minute. With several worker nodes each applies them (so N nodes
// allow N times the rate): docs/evaluators.md says so.
export interface CallLimits {
  concurrency: number;
  maxCallsPerMinute: number;
}

interface Gate {
  active: number;
  waiting: Array<() => void>;
  nextStartMs: number;
}

export function createLimiter(now: () => number = Date.now) {
  const gates = new Map<string, Gate>();
  const gateOf = (key: string): Gate => {
    let g = gates.get(key);
    if (!g) gates.set(key, (g = { active: 0, waiting: [], nextStartMs: 0 }));
    return g;
  };
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

  return {
    /** Runs `call` within the limits of `key`. */
    async run<T>(key: string, limits: CallLimits, call: () => Promise<T>): Promise<T> {
      const g = gateOf(key);
      while (g.active >= Math.max(1, limits.concurrency)) await new Promise<void>((r) => g.waiting.push(r));
      g.active++;
      try {
        const spacing = 60_000 / Math.max(1, limits.maxCallsPerMinute);
        const start = Math.max(now(), g.nextStartMs);
        g.nextStartMs = start + spacing;
        if (start > now()) await sleep(start - now());
        return await call();
      } finally {
        g.active--;
        g.waiting.shift()?.();
        if (g.active === 0 && g.waiting.length === 0 && g.nextStartMs <= now()) gates.delete(key);
      }
    },
  };
}

export type Limiter = ReturnType<typeof createLimiter>;
