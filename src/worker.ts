// `npm run worker`: a process that only runs job processors, for server mode (REDIS_URL).
// Without Redis the jobs run inside the API process and no worker is needed.
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { bootStores } from './service.ts';
import { onShutdownSignals } from './signals.ts';
import { createBroadcast } from './stores/broadcast.ts';
import { createDomain } from './compose/domain.ts';
import { createJobRunner, startJobs } from './jobs/index.ts';

let config;
try {
  config = loadConfig();
  if (!config.redisUrl)
    throw new ConfigError('REDIS_URL', 'must be set for `npm run worker`: without Redis, jobs run inside the API process (`npm start`)');
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`traceloom worker: invalid configuration: ${err.message}\n`);
    process.exit(78);
  }
  throw err;
}
const logger = createLogger(config).child({ role: 'worker' });
try {
  const stores = await bootStores(config, logger);
  const broadcast = createBroadcast(stores.redis, logger);
  const jobs = createJobRunner(stores, logger, { consume: true });
  const domain = createDomain(config, stores, broadcast, logger, jobs);
  await startJobs(jobs, domain);
  logger.info({ jobs: jobs.mode }, 'worker running');
  onShutdownSignals(logger, async () => {
    await jobs.close();
    await domain.close();
    broadcast.close();
    await stores.close();
  });
} catch (err) {
  logger.fatal({ err: { message: (err as Error).message } }, 'worker could not start');
  process.stderr.write(`traceloom worker could not start: ${(err as Error).message}\n`);
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100).unref();
}
