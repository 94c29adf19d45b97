// Traces waiting to be assembled into executions, each with the time it is due. Ingest marks the
// traces of every stored batch; the assembly job takes the due ones in bulk (one ClickHouse read
// for many traces, not one job per trace). A mark keeps the earlier of the two due times: a busy
// trace is still assembled every debounce window, and a root arriving for a trace that waits out
// its quiet period brings it forward. A mark after the trace was taken makes it due again, so
// every stored span is followed by an assembly that reads it.
// Two implementations behind one interface: a map in this process, or a Redis sorted set shared
// by every node. In Redis a taken trace is leased, not removed: it stays in the set, due again
// when the lease ends (a worker that dies mid-assembly loses nothing), and a lock with the
// taker's token keeps other workers off it until the taker finishes or the lease ends.
import crypto from 'node:crypto';
import type { RedisStore } from '../../stores/redis.ts';
import { StoreUnavailableError } from '../../stores/errors.ts';

export interface TraceRef {
  projectId: string;
  traceId: string;
}

/** What a take holds: the traces, and the token that proves it still holds them. */
export interface Lease {
  traces: TraceRef[];
  token: string;
}

export interface PendingTraces {
  /** Marks traces due at `dueAt`, or sooner if already due sooner; for each, whether it was new to the set. */
  mark(traces: readonly TraceRef[], dueAt: number): Promise<boolean[]>;
  /** Takes up to `limit` traces due by `now` and leases them to the caller. */
  takeDue(now: number, limit: number): Promise<Lease>;
  /** Which of the lease's traces it still holds (extending the lease of those). */
  stillHeld(lease: Lease, traces: readonly TraceRef[]): Promise<boolean[]>;
  /**
   * Ends a lease: `done` traces leave the set, `later` ones are due again at their time — unless
   * a mark came in meanwhile, which wins (its spans have not been read).
   */
  finish(lease: Lease, done: readonly TraceRef[], later: ReadonlyArray<{ trace: TraceRef; dueAt: number }>): Promise<void>;
  /** The earliest due time waiting, or undefined when none. */
  nextDue(): Promise<number | undefined>;
  /**
   * Leases the traces that are not waiting in the set (nothing of them is pending elsewhere), to be
   * assembled by the caller from spans it holds; the others are left out of the lease. A leased
   * trace sits in the set due at the lease's end, so if the caller dies it is read back then.
   */
  lockFresh(traces: readonly TraceRef[], now: number): Promise<Lease>;
  /**
   * Records that a trace holds a generative-AI span; true the first time it is seen (for
   * `executions_created`). Claims are remembered for a while (the most recent ones in memory, an
   * hour in Redis), not forever.
   */
  claimGenAi(traces: readonly TraceRef[]): Promise<boolean[]>;
}

/** Claims remembered by a process without Redis. */
const LOCAL_CLAIMS = 200_000;
const CLAIM_TTL_S = 3_600;

const SEP = '\u0000';
const member = (t: TraceRef) => `${t.projectId}${SEP}${t.traceId}`;
const parse = (m: string): TraceRef => {
  const i = m.indexOf(SEP);
  return { projectId: m.slice(0, i), traceId: m.slice(i + 1) };
};

export function createLocalPendingTraces(): PendingTraces {
  const due = new Map<string, number>();
  let claims = new Set<string>();
  let olderClaims = new Set<string>();
  return {
    async mark(traces, dueAt) {
      return traces.map((t) => {
        const m = member(t);
        const at = due.get(m);
        due.set(m, at === undefined ? dueAt : Math.min(at, dueAt));
        return at === undefined;
      });
    },
    // One assembly run at a time in this process (the in-process runner runs a processor's jobs
    // one after another), so taking a trace out of the map is its lease.
    async takeDue(now, limit) {
      const traces: TraceRef[] = [];
      for (const [m, at] of due) {
        if (traces.length >= limit) break;
        if (at <= now) {
          due.delete(m);
          traces.push(parse(m));
        }
      }
      return { traces, token: 'local' };
    },
    async stillHeld(_lease, traces) {
      return traces.map(() => true);
    },
    async finish(_lease, _done, later) {
      for (const { trace, dueAt } of later) {
        const m = member(trace);
        const at = due.get(m); // a mark that came in during the assembly
        due.set(m, at === undefined ? dueAt : Math.min(at, dueAt));
      }
    },
    async nextDue() {
      let min: number | undefined;
      for (const at of due.values()) if (min === undefined || at < min) min = at;
      return min;
    },
    async lockFresh(traces) {
      // One loader and one assembly run at a time in this process: a trace not in the map is
      // neither waiting nor (the caller checked the store) assembled from stored spans.
      return { traces: traces.filter((t) => !due.has(member(t))), token: 'local' };
    },
    async claimGenAi(traces) {
      return traces.map((t) => {
        const m = member(t);
        if (claims.has(m) || olderClaims.has(m)) return false;
        claims.add(m);
        // Two generations: the memory holds between LOCAL_CLAIMS / 2 and LOCAL_CLAIMS claims.
        if (claims.size >= LOCAL_CLAIMS / 2) {
          olderClaims = claims;
          claims = new Set();
        }
        return true;
      });
    },
  };
}

// KEYS: due set, lock prefix. ARGV: now, limit, lease ms, retry ms, token.
// Takes due members whose lock is free: lock them with the token and push their score to the end
// of the lease. A member locked by another worker is pushed back by `retry ms`.
const TAKE_DUE = `
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local leaseEnd = tonumber(ARGV[1]) + tonumber(ARGV[3])
local taken = {}
for _, m in ipairs(members) do
  if redis.call('SET', KEYS[2] .. m, ARGV[5], 'NX', 'PX', tonumber(ARGV[3])) then
    redis.call('ZADD', KEYS[1], leaseEnd, m)
    table.insert(taken, m)
  else
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[4]), m)
  end
end
return taken`;

// KEYS: lock prefix. ARGV: token, lock ms, members... Returns 1/0 per member: whether the token
// still holds its lock; held locks are extended.
const STILL_HELD = `
local out = {}
for i = 3, #ARGV do
  local key = KEYS[1] .. ARGV[i]
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, tonumber(ARGV[2]))
    table.insert(out, 1)
  else
    table.insert(out, 0)
  end
end
return out`;

// KEYS: due set, lock prefix. ARGV: token, pairs (member, next due or '' for done), lease floor.
// Only a member still leased to this token (its lock holds the token) is removed or rescheduled;
// a member whose score a mark lowered meanwhile keeps that earlier time.
const FINISH = `
for i = 2, #ARGV - 1, 2 do
  local m = ARGV[i]
  local nxt = ARGV[i + 1]
  if redis.call('GET', KEYS[2] .. m) == ARGV[1] then
    redis.call('DEL', KEYS[2] .. m)
    local score = redis.call('ZSCORE', KEYS[1], m)
    if nxt == '' then
      if score and tonumber(score) >= tonumber(ARGV[#ARGV]) then redis.call('ZREM', KEYS[1], m) end
    else
      if score and tonumber(score) >= tonumber(ARGV[#ARGV]) then redis.call('ZADD', KEYS[1], tonumber(nxt), m) end
    end
  end
end
return 0`;

// KEYS: due set, lock prefix. ARGV: lease end, lease ms, token, members... Leases each member that
// is not in the due set and whose lock is free; a leased member enters the set due at the lease end.
const LOCK_FRESH = `
local taken = {}
for i = 4, #ARGV do
  local m = ARGV[i]
  if not redis.call('ZSCORE', KEYS[1], m) and redis.call('SET', KEYS[2] .. m, ARGV[3], 'NX', 'PX', tonumber(ARGV[2])) then
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), m)
    table.insert(taken, m)
  end
end
return taken`;

/** Redis failures are a store that is down (503, retry), not a bug. */
async function redisCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new StoreUnavailableError('redis', err);
  }
}

export function createRedisPendingTraces(redis: RedisStore, opts: { lockMs: number; retryMs: number }): PendingTraces {
  const r = redis.client;
  const dueKey = `${redis.prefix}:assembly:due`;
  const lockPrefix = `${redis.prefix}:assembly:lock:`;
  const genAiPrefix = `${redis.prefix}:assembly:genai:`;
  /** The earliest lease end a take of this process may have set (lease scores are at least this). */
  const leaseFloor = new Map<string, number>();
  return {
    mark: (traces, dueAt) =>
      redisCall(async () => {
        if (traces.length === 0) return [];
        const p = r.pipeline();
        for (const t of traces) p.zadd(dueKey, 'LT', dueAt, member(t));
        const res = (await p.exec()) ?? [];
        return res.map(([err, added]) => {
          if (err) throw err;
          return Number(added) === 1;
        });
      }),
    takeDue: (now, limit) =>
      redisCall(async () => {
        const token = crypto.randomUUID();
        const taken = (await r.eval(TAKE_DUE, 2, dueKey, lockPrefix, now, limit, opts.lockMs, opts.retryMs, token)) as string[];
        leaseFloor.set(token, now + opts.lockMs);
        return { traces: taken.map(parse), token };
      }),
    stillHeld: (lease, traces) =>
      redisCall(async () => {
        if (traces.length === 0) return [];
        const held = (await r.eval(STILL_HELD, 1, lockPrefix, lease.token, opts.lockMs, ...traces.map(member))) as number[];
        return held.map((h) => Number(h) === 1);
      }),
    finish: (lease, done, later) =>
      redisCall(async () => {
        const floor = leaseFloor.get(lease.token) ?? 0;
        leaseFloor.delete(lease.token);
        const pairs = [...done.map((t) => [member(t), '']), ...later.map((l) => [member(l.trace), String(l.dueAt)])].flat();
        if (pairs.length === 0) return;
        // The last argument is the lease floor: a score below it was lowered by a mark.
        await r.eval(FINISH, 2, dueKey, lockPrefix, lease.token, ...pairs, String(floor));
      }),
    nextDue: () =>
      redisCall(async () => {
        const first = await r.zrange(dueKey, '0', '0', 'WITHSCORES');
        return first.length === 2 ? Number(first[1]) : undefined;
      }),
    lockFresh: (traces, now) =>
      redisCall(async () => {
        const token = crypto.randomUUID();
        if (traces.length === 0) return { traces: [], token };
        const taken = (await r.eval(
          LOCK_FRESH,
          2,
          dueKey,
          lockPrefix,
          now + opts.lockMs,
          opts.lockMs,
          token,
          ...traces.map(member),
        )) as string[];
        leaseFloor.set(token, now + opts.lockMs);
        return { traces: taken.map(parse), token };
      }),
    claimGenAi: (traces) =>
      redisCall(async () => {
        if (traces.length === 0) return [];
        const p = r.pipeline();
        for (const t of traces) p.set(genAiPrefix + member(t), '1', 'EX', CLAIM_TTL_S, 'NX');
        const res = (await p.exec()) ?? [];
        return res.map(([err, added]) => {
          if (err) throw err;
          return added === 'OK';
        });
      }),
  };
}
