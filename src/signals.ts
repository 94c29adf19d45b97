// SIGTERM/SIGINT: the first one starts a graceful shutdown; a second one forces exit.
import type { Logger } from './logger.ts';

export function onShutdownSignals(logger: Logger, shutdown: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      logger.flush();
      process.exit(130);
    }
    stopping = true;
    logger.info({ signal }, 'signal received: graceful shutdown (send again to force)');
    shutdown().then(
      () => {
        logger.flush();
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err: { message: (err as Error).message } }, 'shutdown failed');
        logger.flush();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
