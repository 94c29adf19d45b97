// The composition of monitors (docs/monitors.md; part of the one root, src/compose/): their
// repository, the ClickHouse reads of a window (executions, and the scores of its executions),
// the prompts a monitor may name, the jobs, the delivery settings of the budget alerts.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { Stores } from '../stores/index.ts';
import type { JobRunner } from '../jobs/runner.ts';
import type { PromptService } from '../prompts/service.ts';
import { createExecutionWindows } from '../executions/execution-window-repository.ts';
import { windowScores } from '../scores/score-aggregate-repository.ts';
import { createMonitorRepository } from '../monitors/monitor-repository.ts';
import { createMonitors, type Monitors } from '../monitors/monitors.ts';

export function createMonitorArea(
  config: Config,
  stores: Stores,
  logger: Logger,
  deps: { jobs: Pick<JobRunner, 'enqueue'>; metrics: Metrics; prompts: PromptService; now: () => Date },
): Monitors {
  const windows = createExecutionWindows(stores.clickhouse);
  return createMonitors({
    repository: createMonitorRepository(stores.postgres),
    reads: {
      executions: (r) => windows.figures(r),
      latencyP95: (r) => windows.latencyP95(r),
      slowerThan: (r, ms) => windows.slowerThan(r, ms),
      scores: (r, name, value) => windowScores(stores.clickhouse, windows.liveTraces(r), name, value),
    },
    prompts: deps.prompts,
    jobs: deps.jobs,
    config,
    metrics: deps.metrics,
    logger: logger.child({ area: 'monitors' }),
    now: deps.now,
  });
}
