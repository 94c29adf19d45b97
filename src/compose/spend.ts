// The composition of the spend area (part of the one root, src/compose/): stats, template
// analytics, budgets (evaluation, alerts, webhooks, checks) and retention, with the job processors
// that run them. Built once per process by createDomain (domain.ts).
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Stores } from '../stores/index.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import { createStats } from '../spend/stats.ts';
import { createDailySpendRepository } from '../spend/daily-spend-repository.ts';
import { createRetentionSettings } from '../spend/retention-settings-repository.ts';
import { countActivePrompts } from '../prompts/prompt-repository.ts';
import { createAnalytics } from '../spend/analytics-repository.ts';
import { createBudgetStore } from '../spend/budget-repository.ts';
import { createBudgetEngine, type BudgetMetrics } from '../spend/budget-engine.ts';
import { createBudgets, type Clock } from '../spend/budgets.ts';
import { createRetention, RETENTION_JOB } from '../spend/retention.ts';
import { createBreakdowns } from '../spend/breakdowns.ts';
import type { ExecutionBreakdowns } from '../executions/execution-breakdown-repository.ts';
import { createSpendRollupRepository } from '../spend/spend-rollup-repository.ts';
import { grainedScoresByGroup, rollupScoresByGroup, scoresByGroup } from '../scores/score-aggregate-repository.ts';
import { createScopedBudgets } from '../spend/scoped-budgets.ts';
import { getApiKey } from '../auth/api-key-repository.ts';

export type { Clock };

export function createSpend(
  config: Config,
  stores: Stores,
  logger: Logger,
  jobs: Pick<JobRunner, 'enqueue'>,
  metrics: BudgetMetrics,
  executionBreakdowns: ExecutionBreakdowns,
) {
  const log = logger.child({ area: 'spend' });
  // Replaceable (tests move it to the next month); everything in spend reads time through it.
  const clock: Clock = { now: () => new Date() };
  const now = () => clock.now();
  const dailySpend = createDailySpendRepository(stores.clickhouse);
  const rollups = createSpendRollupRepository(stores.clickhouse);
  // Dashboards read where CLICKHOUSE_READ_URL points (stores.clickhouseReads); budgets, which must
  // see the spend just stored, read the primary.
  const dashboardReads = stores.clickhouseReads;
  const dashboardRollups = createSpendRollupRepository(dashboardReads);
  const budgetStore = createBudgetStore(stores.postgres);
  // One engine evaluates every budget of a project; `…/budget` and `…/budgets` are views of it.
  const engine = createBudgetEngine({
    store: budgetStore,
    rollups,
    dailySpend,
    redis: stores.redis,
    jobs,
    config: config.spend,
    now,
    logger: log,
    metrics,
  });
  const budgets = createBudgets({ engine, store: budgetStore, dailySpend, clock });
  const scopedBudgets = createScopedBudgets({
    engine,
    store: budgetStore,
    apiKeyExists: async (projectId, keyId) => (await getApiKey(stores.postgres, projectId, keyId)) !== undefined,
    now,
  });
  const retention = createRetention(stores.clickhouse, createRetentionSettings(stores.postgres), log);

  return {
    clock,
    stats: createStats(createDailySpendRepository(dashboardReads), (projectId) => countActivePrompts(stores.postgres, projectId), now),
    analytics: createAnalytics(dashboardReads, now),
    breakdowns: createBreakdowns(
      dashboardRollups,
      executionBreakdowns,
      now,
      // A score rollup by grain when one holds the breakdown's dimensions; else the hourly one, keyed
      // like spend_hourly; else the scores joined to the executions rows.
      async (read, names) =>
        (await grainedScoresByGroup(dashboardReads, read, names)) ??
        (read.source === 'spend_hourly'
          ? rollupScoresByGroup(dashboardReads, read, names)
          : scoresByGroup(stores.clickhouse, executionBreakdowns.keys({ ...read, source: 'executions' }), read.groups.length, names)),
    ),
    scopedBudgets,
    budgets,
    retention,

    /**
     * Ingest calls this after it stored rows that move a project's spend (direct executions,
     * OTLP trace assembly): the project's budget is evaluated soon, once per debounce window
     * whatever the number of writes. Never throws and never waits: ingest does not depend on it.
     */
    spendMoved(projectId: string): void {
      engine.requestEvaluation(projectId, config.spend.budgetEvalDebounceMs);
    },

    /** Applies retention settings soon (after a change), besides the daily run. */
    retentionChanged(): void {
      jobs
        .enqueue(RETENTION_JOB, {}, { jobId: 'changed' })
        .catch((err: Error) => log.warn({ err: { message: err.message } }, 'retention job not enqueued; the daily one will apply it'));
    },

    processors(): JobProcessor[] {
      return [
        {
          name: RETENTION_JOB,
          attempts: 3,
          backoffMs: 10_000,
          async process() {
            await retention.apply();
          },
        } as JobProcessor,
        ...engine.processors(),
      ];
    },

    async schedule(runner: JobRunner): Promise<void> {
      await engine.schedule(runner);
      await runner.every(RETENTION_JOB, config.spend.retentionIntervalMs, {});
      await runner.enqueue(RETENTION_JOB, {}, { jobId: 'boot' });
    },
  };
}

export type Spend = ReturnType<typeof createSpend>;
