// The composition of experiments run by the service (docs/datasets.md, "Experiments run by the
// service"; part of the one root, src/compose/): their repository, the driver (the jobs that run
// them: model calls, checks, judges through the evaluators), and the service the routes call.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { PostgresStore } from '../stores/postgres.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import type { ExecutionRecorder } from '../executions/record.ts';
import type { PromptService } from '../prompts/service.ts';
import type { ScoreConfigs } from '../scores/score-config-repository.ts';
import type { ScoreService } from '../scores/service.ts';
import type { DatasetRepository } from '../datasets/dataset-repository.ts';
import type { Runs } from '../datasets/runs.ts';
import { createExperimentRepository } from '../datasets/experiment-repository.ts';
import { createExperimentDriver } from '../datasets/experiment-driver.ts';
import { createExperiments, type Experiments } from '../datasets/experiments.ts';
import type { Evaluators } from './evaluators.ts';

export function createExperimentArea(
  config: Config,
  postgres: PostgresStore,
  logger: Logger,
  deps: {
    jobs: Pick<JobRunner, 'enqueue'>;
    prompts: PromptService;
    recorder: ExecutionRecorder;
    scoreConfigs: ScoreConfigs;
    scores: ScoreService;
    datasets: DatasetRepository;
    runs: Runs;
    evaluators: Evaluators;
    /** Throws 402 while the project's budget blocks. */
    enforceBudget(projectId: string): Promise<void>;
  },
): { experiments: Experiments; processors(): JobProcessor[]; schedule(runner: JobRunner): Promise<void> } {
  const repository = createExperimentRepository(postgres);
  const driver = createExperimentDriver({
    repository,
    prompts: deps.prompts,
    connections: deps.evaluators.connections,
    recorder: deps.recorder,
    runs: deps.runs,
    items: deps.datasets,
    scores: deps.scores,
    judgeItem: deps.evaluators.jobs.judgeItem,
    allowPrivate: config.evaluators.allowPrivate,
    jobs: deps.jobs,
    logger: logger.child({ area: 'experiments' }),
    config: config.experiments,
  });
  const experiments = createExperiments({
    repository,
    driver,
    prompts: deps.prompts,
    connections: deps.evaluators.connections,
    evaluators: deps.evaluators.service,
    scoreConfigs: deps.scoreConfigs,
    datasets: deps.datasets,
    runs: deps.runs,
    enforceBudget: deps.enforceBudget,
  });
  return { experiments, processors: () => driver.processors(), schedule: (runner) => driver.schedule(runner) };
}
