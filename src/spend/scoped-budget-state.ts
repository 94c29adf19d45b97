// Where scoped budget checks are answered from: the evaluation publishes each project's state
// (every scoped budget with its current period's spend) in this node's memory and, with Redis,
// under a key every node reads (each node keeps its copy BUDGET_CHECK_CACHE_MS). Redis is
// last-writer-wins here (docs/spend.md, "Scoped budgets"); memory keeps the latest read.
import type { Logger } from '../logger.ts';
import type { RedisStore } from '../stores/redis.ts';
import type { Period, ScopeKind } from './scoped-budget-store.ts';

export interface PublishedBudget {
  id: string;
  kind: ScopeKind;
  value: string;
  period: Period;
  /** ISO start of the period the figures belong to: a state of an earlier period reads as a clean new one */
  periodStart: string;
  amountNanos: string;
  spentNanos: string;
  thresholds: number[];
  mode: 'alert' | 'block';
}

export interface PublishedState {
  readAt: number;
  budgets: PublishedBudget[];
}

export function createScopedBudgetStateStore(redis: RedisStore | undefined, cacheMs: number, logger: Logger) {
  const local = new Map<string, { state: PublishedState; at: number }>();
  const key = (projectId: string) => `${redis?.prefix ?? 'traceloom'}:scoped-budget-state:${projectId}`;
  async function published(projectId: string): Promise<PublishedState | undefined> {
    const hit = local.get(projectId);
    if (hit && (!redis || performance.now() - hit.at < cacheMs)) return hit.state;
    if (!redis) return undefined;
    try {
      const raw = await redis.client.get(key(projectId));
      if (!raw) return hit?.state;
      const state = JSON.parse(raw) as PublishedState;
      local.set(projectId, { state, at: performance.now() });
      return state;
    } catch (err) {
      logger.warn(
        { project_id: projectId, err: { message: (err as Error).message } },
        'scoped budget state unavailable in Redis; using the last known state',
      );
      return hit?.state;
    }
  }

  async function publish(projectId: string, state: PublishedState): Promise<void> {
    const prev = local.get(projectId)?.state;
    if (!prev || prev.readAt <= state.readAt) local.set(projectId, { state, at: performance.now() });
    if (!redis) return;
    try {
      await redis.client.set(key(projectId), JSON.stringify(state));
    } catch (err) {
      logger.warn({ project_id: projectId, err: { message: (err as Error).message } }, 'scoped budget state not published to Redis');
    }
  }
  return { published, publish };
}
