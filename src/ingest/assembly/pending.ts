// Traces waiting to be assembled into executions, each with the time it is due. Ingest marks the
// traces of every stored batch; the assembly job takes the due ones in bulk (one ClickHouse read
// for many traces, not one job per trace). A mark keeps the earlier of the two due times: a busy
// trace is still assembled every debounce window, and a root arriving for a trace that waits out
// its quiet period brings it forward. A mark after the trace was taken adds it again, so every
// stored span is followed by an assembly that reads it.
// Two implementations behind one interface: a map in this process, or a Redis sorted set shared
// by every node, with a lock per trace so two workers never assemble one trace at once.
import type { RedisStore } from '../../stores/redis.ts';

export interface TraceRef {
  projectId: string;
  traceId: string;
}

export interface PendingTraces {
  /** Marks traces due at `dueAt`, or sooner if already due sooner; for each, whether it was new to the set. */
  mark(traces: readonly TraceRef[], dueAt: number): Promise<boolean[]>;
  /** Marks traces due at `dueAt` even when already waiting (a later re-check). */
  defer(traces: readonly TraceRef[], dueAt: number): Promise<void>;
  /** Takes up to `limit` traces due by `now` and locks them; `release` unlocks them after assembly. */
  takeDue(now: number, limit: number): Promise<TraceRef[]>;
  release(traces: readonly TraceRef[]): Promise<void>;
  /** The earliest due time waiting, or undefined when none. */
  nextDue(): Promise<number | undefined>;
  /** Records that a trace holds a generative-AI span; true the first time (for `executions_created`). */
  claimGenAi(traces: readonly TraceRef[]): Promise<boolean[]>;
  /** Forgets the claim once the trace's execution exists. */
  forgetGenAi(traces: readonly TraceRef[]): Promise<void>;
}

const SEP = '\u0000';
const member = (t: TraceRef) => `${t.projectId}${SEP}${t.traceId}`;
const parse = (m: string): TraceRef => {
  const i = m.indexOf(SEP);
  return { projectId: m.slice(0, i), traceId: m.slice(i + 1) };
};

export function createLocalPendingTraces(): PendingTraces {
  const due = new Map<string, number>();
  const genAi = new Set<string>();
  return {
    async mark(traces, dueAt) {
      return traces.map((t) => {
        const m = member(t);
        const at = due.get(m);
        due.set(m, at === undefined ? dueAt : Math.min(at, dueAt));
        return at === undefined;
      });
    },
    async defer(traces, dueAt) {
      for (const t of traces) due.set(member(t), Math.max(dueAt, due.get(member(t)) ?? 0));
    },
    // One assembly run at a time in this process (the in-process runner runs a processor's jobs
    // one after another), so taking a trace out of the map is its lock.
    async takeDue(now, limit) {
      const out: TraceRef[] = [];
      for (const [m, at] of due) {
        if (out.length >= limit) break;
        if (at <= now) {
          due.delete(m);
          out.push(parse(m));
        }
      }
      return out;
    },
    async release() {},
    async nextDue() {
      let min: number | undefined;
      for (const at of due.values()) if (min === undefined || at < min) min = at;
      return min;
    },
    async claimGenAi(traces) {
      return traces.map((t) => {
        const m = member(t);
        if (genAi.has(m)) return false;
        genAi.add(m);
        return true;
      });
    },
    async forgetGenAi(traces) {
      for (const t of traces) genAi.delete(member(t));
    },
  };
}

// Takes due members and locks each; a member whose lock is held (another worker is assembling it)
// goes back with a short delay instead.
const TAKE_DUE = `
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local taken = {}
for _, m in ipairs(members) do
  redis.call('ZREM', KEYS[1], m)
  if redis.call('SET', KEYS[2] .. m, '1', 'NX', 'PX', tonumber(ARGV[3])) then
    table.insert(taken, m)
  else
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[4]), m)
  end
end
return taken`;

export function createRedisPendingTraces(redis: RedisStore, opts: { lockMs: number; retryMs: number }): PendingTraces {
  const r = redis.client;
  const dueKey = `${redis.prefix}:assembly:due`;
  const lockPrefix = `${redis.prefix}:assembly:lock:`;
  const genAiKey = `${redis.prefix}:assembly:genai`;
  return {
    async mark(traces, dueAt) {
      if (traces.length === 0) return [];
      const p = r.pipeline();
      for (const t of traces) p.zadd(dueKey, 'LT', dueAt, member(t));
      const res = (await p.exec()) ?? [];
      return res.map(([err, added]) => {
        if (err) throw err;
        return Number(added) === 1;
      });
    },
    async defer(traces, dueAt) {
      if (traces.length === 0) return;
      const p = r.pipeline();
      for (const t of traces) p.zadd(dueKey, "GT", String(dueAt), member(t));
      await p.exec();
    },
    async takeDue(now, limit) {
      const taken = (await r.eval(TAKE_DUE, 2, dueKey, lockPrefix, now, limit, opts.lockMs, opts.retryMs)) as string[];
      return taken.map(parse);
    },
    async release(traces) {
      if (traces.length === 0) return;
      await r.del(...traces.map((t) => lockPrefix + member(t)));
    },
    async nextDue() {
      const first = await r.zrange(dueKey, '0', '0', 'WITHSCORES');
      return first.length === 2 ? Number(first[1]) : undefined;
    },
    async claimGenAi(traces) {
      if (traces.length === 0) return [];
      const p = r.pipeline();
      for (const t of traces) p.hsetnx(genAiKey, member(t), '1');
      const res = (await p.exec()) ?? [];
      return res.map(([err, added]) => {
        if (err) throw err;
        return Number(added) === 1;
      });
    },
    async forgetGenAi(traces) {
      if (traces.length === 0) return;
      await r.hdel(genAiKey, ...traces.map(member));
    },
  };
}
