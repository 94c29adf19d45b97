// The budget engine's published state (budget-state.ts) under the names the scoped budgets first
// had: `published` reads a project's state, `publish` offers one (false: a newer one is published).
import type { Logger } from '../logger.ts';
import type { RedisStore } from '../stores/redis.ts';
import { createBudgetStateStore, type PublishedState } from './budget-state.ts';

export type { PublishedBudget, PublishedState } from './budget-state.ts';

export function createScopedBudgetStateStore(redis: RedisStore | undefined, cacheMs: number, logger: Logger) {
  const store = createBudgetStateStore<PublishedState>(redis, cacheMs, logger);
  return {
    /** The project's state; undefined when none (or only one written by an earlier version, without budgets) is published. */
    published: async (projectId: string): Promise<PublishedState | undefined> => {
      const s = await store.get(projectId);
      return Array.isArray(s?.budgets) ? s : undefined;
    },
    publish: (projectId: string, state: PublishedState) => store.set(projectId, state),
  };
}

export type BudgetStatePublisher = ReturnType<typeof createScopedBudgetStateStore>;
