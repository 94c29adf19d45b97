// The spend domain: stats, template analytics, budgets (evaluation, alerts, webhooks, checks) and
// retention, with the job processors that run them. Built once per process by createDomain.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Stores } from '../stores/index.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import { createStats } from './stats.ts';
import { createDailySpendRepository } from './daily-spend.ts';
import { createRetentionSettings } from './retention-settings.ts';
import { countActivePrompts } from '../prompts/repository.ts';
import { createAnalytics } from './analytics.ts';
import { createBudgetStore } from './budget-store.ts';
import { createBudgetStateStore } from './budget-state.ts';
import { createBudgets, EVALUATE_JOB, WEBHOOK_JOB, type BudgetMetrics, type Clock } from './budgets.ts';
import { createRetention, RETENTION_JOB } from './retention.ts';
import { createBreakdowns } from './breakdowns.ts';
import { createExecutionBreakdowns } from '../executions/execution-repository.ts';
import { createSpendRollupRepository } from './spend-rollup-repository.ts';
import { rollupScoresByGroup, scoresByGroup } from '../scores/score-repository.ts';
import { createScopedBudgets, SCOPED_EVALUATE_JOB } from './scoped-budgets.ts';
import { createScopedBudgetStore } from './scoped-budget-store.ts';
import { getApiKey } from '../auth/api-keys.ts';

export type { Clock };

export function createSpend(config: Config, stores: Stores, logger: Logger, jobs: Pick<JobRunner, 'enqueue'>, metrics: BudgetMetrics) {
  const log = logger.child({ area: 'spend' });
  // Replaceable (tests move it to the next month); everything in spend reads time through it.
  const clock: Clock = { now: () => new Date() };
  const now = () => clock.now();
  const dailySpend = createDailySpendRepository(stores.clickhouse);
  const budgets = createBudgets({
    store: createBudgetStore(stores.postgres),
    state: createBudgetStateStore(stores.redis, config.spend.budgetCheckCacheMs, log),
    spend: dailySpend,
    jobs,
    config: config.spend,
    clock,
    logger: log,
    metrics,
  });
  const retention = createRetention(stores.clickhouse, createRetentionSettings(stores.postgres), log);
  const rollups = createSpendRollupRepository(stores.clickhouse);
  const scopedBudgets = createScopedBudgets({
    store: createScopedBudgetStore(stores.postgres),
    apiKeyExists: async (projectId, keyId) => (await getApiKey(stores.postgres, projectId, keyId)) !== undefined,
    rollups,
    redis: stores.redis,
    jobs,
    config: config.spend,
    now,
    logger: log,
  });

  const executionBreakdowns = createExecutionBreakdowns(stores.clickhouse);
  return {
    clock,
    stats: createStats(dailySpend, (projectId) => countActivePrompts(stores.postgres, projectId), now),
    analytics: createAnalytics(stores.clickhouse, now),
    breakdowns: createBreakdowns(rollups, executionBreakdowns, now, (read, names) =>
      // The spend rollups' keys are the score rollups': their breakdowns read scores summed alike.
      read.source === 'spend_hourly' || read.source === 'spend_hourly_prompts'
        ? rollupScoresByGroup(stores.clickhouse, read, names)
        : scoresByGroup(stores.clickhouse, executionBreakdowns.keys({ ...read, source: 'executions' }), read.groups.length, names),
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
      budgets.requestEvaluation(projectId, config.spend.budgetEvalDebounceMs);
      jobs
        .enqueue(SCOPED_EVALUATE_JOB, { projectId }, { jobId: `scoped-${projectId}`, delayMs: config.spend.budgetEvalDebounceMs })
        .catch((err: Error) =>
          log.warn(
            { project_id: projectId, err: { message: err.message } },
            'scoped budget evaluation not enqueued; the periodic one will catch up',
          ),
        );
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
          name: EVALUATE_JOB,
          attempts: 3,
          backoffMs: 1_000,
          async process(data: { projectId?: string }) {
            if (data?.projectId) await budgets.evaluate(data.projectId);
            else await budgets.evaluateAll();
          },
        } as JobProcessor,
        {
          name: WEBHOOK_JOB,
          attempts: config.spend.webhookAttempts,
          backoffMs: config.spend.webhookBackoffMs,
          concurrency: 4,
          async process(data: { alertId: string }) {
            await budgets.deliverAlert(String(data.alertId));
          },
        } as JobProcessor,
        {
          name: RETENTION_JOB,
          attempts: 3,
          backoffMs: 10_000,
          async process() {
            await retention.apply();
          },
        } as JobProcessor,
        ...scopedBudgets.processors(),
      ];
    },

    async schedule(runner: JobRunner): Promise<void> {
      await runner.every(EVALUATE_JOB, config.spend.budgetEvalIntervalMs, {});
      await runner.every(RETENTION_JOB, config.spend.retentionIntervalMs, {});
      // At boot: warm this node's budget states and catch up on deliveries owed, then retention.
      await runner.enqueue(EVALUATE_JOB, {}, { jobId: 'boot' });
      await runner.enqueue(RETENTION_JOB, {}, { jobId: 'boot' });
      await scopedBudgets.schedule(runner);
    },
  };
}

export type Spend = ReturnType<typeof createSpend>;
