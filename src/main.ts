// `npm start`: the API on embedded stores by default, on servers when the URLs are set.
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { startService } from './service.ts';
import { onShutdownSignals } from './signals.ts';

const started = Date.now();
let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`traceloom: invalid configuration: ${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  throw err;
}
const logger = createLogger(config);
try {
  const service = await startService(config, { logger });
  logger.info({ boot_ms: Date.now() - started }, 'ready');
  onShutdownSignals(logger, () => service.close());
} catch (err) {
  logger.fatal({ err: { message: (err as Error).message } }, 'could not start');
  // Also on stderr whatever LOG_LEVEL says: the one line a newcomer needs to read.
  process.stderr.write(`traceloom could not start: ${(err as Error).message}\n`);
  setTimeout(() => process.exit(1), 100).unref();
  process.exitCode = 1;
}
