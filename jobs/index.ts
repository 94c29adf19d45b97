// Chooses the job runner once at boot, and lists the processors that exist.
import type { Logger } from '../src/logger.ts';
import type { Stores } from '../src/stores/index.ts';
import { createBullmqRunner } from './bullmq.ts';
import { createInProcessRunner } from './in-process.ts';
import type { JobProcessor, JobRunner } from './runner.ts';

export type { JobProcessor, JobRunner };

/**
 * Every processor of the service. Later work adds here: budget evaluation, trace assembly,
 * webhooks, retention. Processors receive the stores and call domain code, never routes.
 */
export function createProcessors(_stores: Stores): JobProcessor[] {
  return [];
}

export function createJobRunner(
  stores: Stores,
  logger: Logger,
  opts: { consume: boolean; processors?: readonly JobProcessor[] },
): JobRunner {
  const processors = opts.processors ?? createProcessors(stores);
  return stores.redis
    ? createBullmqRunner(stores.redis, processors, logger, { consume: opts.consume })
    : createInProcessRunner(processors, logger);
}
