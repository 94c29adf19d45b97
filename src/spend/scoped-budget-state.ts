// Where scoped budget checks are answered from: the evaluation publishes each project's state
// (every scoped budget with its current period's spend) in this node's memory and, with Redis,
// under a key every node reads (each node keeps its copy BUDGET_CHECK_CACHE_MS). Published like
// the project budget's state (budget-state.ts): a state replaces the published one only when it
// is not older, in memory and in Redis with one compare-and-set, so an evaluation finishing out of
// order cannot put back figures an evaluation started after it already published.
//
// Its version is PostgreSQL's clock read just before the evaluation listed the project's budgets:
// every change (create, update, delete) committed before that instant is in the state, and the
// evaluation after a change reads a later instant. One clock for every node: no skew between
// workers decides which state wins.
import type { Logger } from '../logger.ts';
import type { RedisStore } from '../stores/redis.ts';
import { createPublishedStateStore, type VersionedState } from './budget-state.ts';
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

export interface PublishedState extends VersionedState {
  /** PostgreSQL's clock (epoch ms) just before the budgets were listed. */
  budgetVersion: number;
  /** When the evaluation started (epoch ms, this node's clock): orders states of one version. */
  readAt: number;
  budgets: PublishedBudget[];
}

export function createScopedBudgetStateStore(redis: RedisStore | undefined, cacheMs: number, logger: Logger) {
  const store = createPublishedStateStore<PublishedState>('scoped-budget-state', redis, cacheMs, logger);
  return {
    published: (projectId: string) => store.get(projectId),
    /** Whether the state was published (false: a newer one is). */
    publish: (projectId: string, state: PublishedState) => store.set(projectId, state),
  };
}
