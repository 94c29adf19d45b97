// The domain services of one process, built once at boot from the stores: what routes and jobs
// call. Owns the batching writers, so it is closed (flushed) before the stores.
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Stores } from './stores/index.ts';
import type { Broadcast } from './stores/broadcast.ts';
import { BatchWriter } from './ingest/batch-writer.ts';
import { createPromptCache } from './prompts/cache.ts';
import { createPromptService, type PromptService } from './prompts/service.ts';
import { createExecutionQueries, type ExecutionQueries } from './executions/queries.ts';
import { createExecutionRecorder, type ExecutionRecorder } from './executions/record.ts';
import { createPriceResolver } from './pricing/prices.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';

export interface Domain {
  prompts: PromptService;
  executions: { queries: ExecutionQueries; recorder: ExecutionRecorder; writer: BatchWriter };
  /** The job processors that call this domain (registered on the runner at boot, API and worker alike). */
  processors(): JobProcessor[];
  /** Starts the recurring jobs (idempotent across nodes: one schedule per name). */
  schedule(runner: JobRunner): Promise<void>;
  /** Flushes the writers. */
  close(): Promise<void>;
}

export function createDomain(config: Config, stores: Stores, broadcast: Broadcast, logger: Logger, jobs: Pick<JobRunner, 'enqueue'>): Domain {
  void jobs;
  const prompts = createPromptService(stores.postgres, createPromptCache(broadcast));
  const writer = new BatchWriter(
    (table, rows, settings) => stores.clickhouse.insert(table, rows, settings),
    {
      table: 'executions',
      maxQueueRows: config.ingest.maxQueueRows,
      maxQueueBytes: config.ingest.maxQueueBytes,
      maxBatchRows: config.ingest.batchRows,
      flushIntervalMs: config.ingest.flushMs,
      maxAttempts: config.ingest.attempts,
      backoffMs: 200,
    },
    logger,
  );
  const queries = createExecutionQueries(stores.clickhouse);
  const recorder = createExecutionRecorder({ writer, prompts, prices: createPriceResolver(), queries });
  return {
    prompts,
    executions: { queries, recorder, writer },
    processors: () => [],
    schedule: async () => {},
    close: () => writer.close(),
  };
}
