// Where budget checks are answered from: the budget engine (budget-engine.ts) publishes each
// project's state — every budget, the monthly one and the scoped ones, with its current period's
// spend — in this node's memory and (with Redis) under a key every node reads, so a check never
// touches ClickHouse or PostgreSQL on the hot path. With Redis a node serves its own copy for
// BUDGET_CHECK_CACHE_MS, then reads Redis again; a Redis that is down leaves the last known state
// in force (fail-open for a project never seen: ingest and agents keep working).
//
// Evaluations can finish out of order (the scheduled one listed the budgets before an admin's PUT,
// whose own evaluation published first). A state therefore carries a version — PostgreSQL's clock
// read just before the evaluation listed the project's budgets: every change committed before that
// instant is in the state; one clock for every node, so no skew between workers decides — and when
// its reads started, and replaces a published state only when it is not older: a later version, or
// the same version read no earlier. Memory compares in process; Redis compares and sets in one Lua
// script.
import type { Logger } from '../logger.ts';
import type { RedisStore } from '../stores/redis.ts';
import type { EnforcementMode, Period, ScopeKind, Surface } from './budget-repository.ts';

export type BudgetStatus = 'ok' | 'alert' | 'exceeded';

/** The project's monthly budget as `…/budget` and its evaluation show it (a view of the published state). */
export interface BudgetState extends VersionedState {
  /** 'YYYY-MM' the figures belong to; a state of an earlier month reads as a clean new month */
  month: string;
  /** null: the project has no budget */
  budgetNanos: string | null;
  spentNanos: string;
  thresholdPct: number | null;
  mode: EnforcementMode | null;
  status: BudgetStatus;
}

/** Whether `next` may replace `prev`: it was computed from a budget row no older and read no earlier. */
export function notOlder(next: VersionedState, prev: VersionedState | undefined): boolean {
  if (!prev) return true;
  const nv = next.budgetVersion ?? 0;
  const pv = prev.budgetVersion ?? 0;
  if (nv !== pv) return nv > pv;
  return (next.readAt ?? 0) >= (prev.readAt ?? 0);
}

// KEYS[1] the state; ARGV[1] the new state (JSON), ARGV[2] its budgetVersion, ARGV[3] its readAt.
// 1 when written, 0 when the stored state is newer.
const COMPARE_AND_SET = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, c = pcall(cjson.decode, cur)
  if ok and type(c) == 'table' then
    local cv = tonumber(c.budgetVersion) or 0
    local cr = tonumber(c.readAt) or 0
    local nv = tonumber(ARGV[2]) or 0
    local nr = tonumber(ARGV[3]) or 0
    if nv < cv or (nv == cv and nr < cr) then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`;

/** What orders published states: the version of the budgets they were computed from, then when their reads started. */
export interface VersionedState {
  /** PostgreSQL's clock (epoch ms) just before the budgets were listed; absent in states of old versions (0). */
  budgetVersion?: number;
  /** When the evaluation started reading (epoch ms, this node's clock): orders states of one version. */
  readAt?: number;
}

/** One budget as the published state carries it. */
export interface PublishedBudget {
  id: string;
  kind: ScopeKind;
  value: string;
  period: Period;
  /** absent in states of earlier versions: 'scoped' */
  surface?: Surface;
  /** ISO start of the period the figures belong to: a state of an earlier period reads as a clean new one */
  periodStart: string;
  amountNanos: string;
  spentNanos: string;
  thresholds: number[];
  mode: EnforcementMode;
}

/** A project's published state: every budget with its current period's spend. */
export interface PublishedState extends VersionedState {
  budgetVersion: number;
  readAt: number;
  budgets: PublishedBudget[];
}

/**
 * A store of published states under `<prefix>:<name>:<project>`, each replaced only by a state
 * not older (`notOlder`): in memory, and in Redis with one compare-and-set.
 */
export function createPublishedStateStore<S extends VersionedState>(
  name: string,
  redis: RedisStore | undefined,
  cacheMs: number,
  logger: Logger,
) {
  const local = new Map<string, { state: S; at: number }>();
  const key = (projectId: string) => `${redis?.prefix ?? 'traceloom'}:${name}:${projectId}`;
  return {
    /** The last evaluated state, or undefined when no node has evaluated this project yet. */
    async get(projectId: string): Promise<S | undefined> {
      const hit = local.get(projectId);
      if (hit && (!redis || performance.now() - hit.at < cacheMs)) return hit.state;
      if (!redis) return undefined;
      try {
        const raw = await redis.client.get(key(projectId));
        if (!raw) return undefined;
        const state = JSON.parse(raw) as S;
        local.set(projectId, { state, at: performance.now() });
        return state;
      } catch (err) {
        logger.warn(
          { project_id: projectId, err: { message: (err as Error).message } },
          `${name} unavailable in Redis; using the last known state`,
        );
        return hit?.state;
      }
    },
    /** Publishes the state unless a newer one is already published; whether it was (here, and in Redis when there is one). */
    async set(projectId: string, state: S): Promise<boolean> {
      const hit = local.get(projectId);
      if (!notOlder(state, hit?.state)) return false;
      local.set(projectId, { state, at: performance.now() });
      if (!redis) return true;
      try {
        const written = await redis.client.eval(
          COMPARE_AND_SET,
          1,
          key(projectId),
          JSON.stringify(state),
          String(state.budgetVersion ?? 0),
          String(state.readAt ?? 0),
        );
        if (Number(written) === 1) return true;
        // Another node published a newer state: this node serves that one from its next read.
        local.delete(projectId);
        return false;
      } catch (err) {
        logger.warn(
          { project_id: projectId, err: { message: (err as Error).message } },
          `${name} not written to Redis; other nodes keep the previous one`,
        );
        return true;
      }
    },
  };
}

/** The budget engine's state store (`<prefix>:budget-state:<project>`); typed by what it holds. */
export function createBudgetStateStore<S extends VersionedState = BudgetState>(
  redis: RedisStore | undefined,
  cacheMs: number,
  logger: Logger,
) {
  return createPublishedStateStore<S>('budget-state', redis, cacheMs, logger);
}
