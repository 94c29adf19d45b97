// Where budget checks are answered from: the evaluation writes each project's state here, in this
// node's memory and (with Redis) under a key every node reads, so `check` never touches
// ClickHouse or PostgreSQL on the hot path. With Redis a node serves its own copy for
// BUDGET_CHECK_CACHE_MS, then reads Redis again; a Redis that is down leaves the last known state
// in force (fail-open for a project never seen: ingest and agents keep working).
import type { Logger } from '../logger.ts';
import type { RedisStore } from '../stores/redis.ts';
import type { EnforcementMode } from './budget-store.ts';

export type BudgetStatus = 'ok' | 'alert' | 'exceeded';

export interface BudgetState {
  /** 'YYYY-MM' the figures belong to; a state of an earlier month reads as a clean new month */
  month: string;
  /** null: the project has no budget */
  budgetNanos: string | null;
  spentNanos: string;
  thresholdPct: number | null;
  mode: EnforcementMode | null;
  status: BudgetStatus;
}

export function createBudgetStateStore(redis: RedisStore | undefined, cacheMs: number, logger: Logger) {
  const local = new Map<string, { state: BudgetState; at: number }>();
  const key = (projectId: string) => `${redis?.prefix ?? 'traceloom'}:budget-state:${projectId}`;
  return {
    /** The last evaluated state, or undefined when no node has evaluated this project yet. */
    async get(projectId: string): Promise<BudgetState | undefined> {
      const hit = local.get(projectId);
      if (hit && (!redis || performance.now() - hit.at < cacheMs)) return hit.state;
      if (!redis) return undefined;
      try {
        const raw = await redis.client.get(key(projectId));
        if (!raw) return undefined;
        const state = JSON.parse(raw) as BudgetState;
        local.set(projectId, { state, at: performance.now() });
        return state;
      } catch (err) {
        logger.warn({ project_id: projectId, err: { message: (err as Error).message } }, 'budget state unavailable in Redis; using the last known state');
        return hit?.state;
      }
    },
    async set(projectId: string, state: BudgetState): Promise<void> {
      local.set(projectId, { state, at: performance.now() });
      if (!redis) return;
      try {
        await redis.client.set(key(projectId), JSON.stringify(state));
      } catch (err) {
        logger.warn({ project_id: projectId, err: { message: (err as Error).message } }, 'budget state not written to Redis; other nodes keep the previous one');
      }
    },
  };
}

export type BudgetStateStore = ReturnType<typeof createBudgetStateStore>;
