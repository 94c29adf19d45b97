// The composition of the evaluators area (docs/evaluators.md; part of the one root, src/compose/),
// wired from the stores and the domain services it uses:
// model connections, evaluators and their jobs. Experiment runs (a dataset_run target) come from src/datasets.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Queryable } from '../stores/postgres.ts';
import type { JobRunner } from '../jobs/runner.ts';
import { createConnections, type Connections } from '../evaluators/connection-repository.ts';
import { createEvaluatorRepository } from '../evaluators/evaluator-repository.ts';
import { createEvaluatorService, type EvaluatorService, type EvaluatorServiceDeps } from '../evaluators/evaluator-service.ts';
import { createEvaluationJobs, type EvaluationJobs } from '../evaluators/evaluation-jobs.ts';
import type { JudgementDeps } from '../evaluators/judgement.ts';
import type { RunTargets } from '../evaluators/evaluator.ts';
import { createLimiter } from '../evaluators/limiter.ts';
import { createJudgeBudget } from '../evaluators/judge-budget.ts';
import { createSecretBox, keyFile } from '../evaluators/secrets.ts';

export interface Evaluators {
  connections: Connections;
  service: EvaluatorService;
  jobs: EvaluationJobs;
}

export function createEvaluators(
  config: Config,
  postgres: Queryable,
  logger: Logger,
  jobs: Pick<JobRunner, 'enqueue'>,
  domain: Omit<JudgementDeps, 'connections' | 'limiter' | 'allowPrivate' | 'budget'> & {
    runs: RunTargets;
    listing: EvaluatorServiceDeps['queries'];
    /** What an evaluator's judge calls of the current UTC day cost (exact USD decimal). */
    judgeSpendToday(projectId: string, evaluatorId: string): Promise<string>;
  },
): Evaluators {
  // Embedded stores without SECRETS_KEY: a key made once in DATA_DIR (secrets.ts says why not with servers).
  const key = config.evaluators.secretsKey ?? (config.databaseUrl ? undefined : keyFile(config.dataDir));
  const connections = createConnections(postgres, createSecretBox(key));
  const repository = createEvaluatorRepository(postgres);
  const evaluationJobs = createEvaluationJobs({
    ...domain,
    connections,
    limiter: createLimiter(),
    budget: createJudgeBudget(domain.judgeSpendToday),
    allowPrivate: config.evaluators.allowPrivate,
    repository,
    jobs,
    logger: logger.child({ area: 'evaluators' }),
    config: config.evaluators,
  });
  const service = createEvaluatorService({
    repository,
    connections,
    prompts: domain.prompts,
    scoreConfigs: domain.scoreConfigs,
    queries: domain.listing,
    runs: domain.runs,
    jobs: evaluationJobs,
  });
  return { connections, service, jobs: evaluationJobs };
}
