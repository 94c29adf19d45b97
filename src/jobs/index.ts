// Chooses the job runner once at boot, and lists the processors that exist.
import type { Logger } from '../logger.ts';
import type { Stores } from '../stores/index.ts';
import { createBullmqRunner } from './bullmq.ts';
import { createInProcessRunner } from './in-process.ts';
import type { JobProcessor, JobRunner } from './runner.ts';

export type { JobProcessor, JobRunner };

/**
 * Every processor of the service (trace assembly, budget evaluation, webhooks, retention) and the
 * schedules they run on. Processors call domain code, never routes. The runner is built before
 * the domain (the domain enqueues through it), so processors are registered once both exist.
 */
export async function startJobs(
  runner: JobRunner,
  domain: { processors(): JobProcessor[]; schedule(runner: JobRunner): Promise<void> },
): Promise<void> {
  runner.register(domain.processors());
  await domain.schedule(runner);
}

export function createJobRunner(
  stores: Pick<Stores, 'redis'>,
  logger: Logger,
  opts: { consume: boolean; processors?: readonly JobProcessor[] },
): JobRunner {
  const processors = opts.processors ?? [];
  return stores.redis
    ? createBullmqRunner(stores.redis, processors, logger, { consume: opts.consume })
    : createInProcessRunner(processors, logger);
}
