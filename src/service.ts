// Boot and shutdown of the API: config → stores → migrations → jobs → HTTP. main.ts adds the
// process concerns (signals, exit codes); tests start the same service on a loopback port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { createLogger, redactUrl, type Logger } from './logger.ts';
import { createStores, type Stores } from './stores/index.ts';
import { migrate } from './stores/migrate.ts';
import { createApp, type AppDeps, type TraceloomApp } from './http/app.ts';
import { createJobRunner, startJobs, type JobRunner } from './jobs/index.ts';
import { createIdentity, type Identity } from './auth/identity.ts';
import { createBroadcast } from './stores/broadcast.ts';
import { createDomain, type Domain } from './compose/domain.ts';
import { listenAdminSocket, type AdminSocket } from './http/admin-socket.ts';
import { startOtlpGrpc, type OtlpGrpcServer } from './grpc/otlp-server.ts';

export interface Service {
  readonly url: string;
  readonly port: number;
  /** The OTLP/gRPC port, or undefined when OTLP_GRPC_PORT=0. */
  readonly grpcPort: number | undefined;
  readonly stores: Stores;
  readonly jobs: JobRunner;
  readonly app: TraceloomApp;
  readonly logger: Logger;
  readonly identity: Identity;
  readonly domain: Domain;
  /** Stop accepting, drain in-flight requests, stop jobs, close stores. Idempotent. */
  close(): Promise<void>;
}

/** Stores that are servers may still be starting (docker compose): wait for them, then name what is down. */
export async function waitForStores(stores: Stores, config: Config, logger: Logger): Promise<void> {
  const deadline = Date.now() + config.timeouts.storeConnectMs;
  for (let attempt = 1; ; attempt++) {
    const h = await stores.health();
    const down = (['clickhouse', 'postgres', 'redis'] as const).filter((s) => h[s] === 'down');
    if (down.length === 0) return;
    if (Date.now() >= deadline) throw new Error(`cannot reach ${down.join(', ')} (waited ${config.timeouts.storeConnectMs} ms)`);
    logger.warn({ down, attempt }, 'waiting for stores');
    await new Promise((r) => setTimeout(r, Math.min(500 * attempt, 3_000)));
  }
}

export async function bootStores(config: Config, logger: Logger): Promise<Stores> {
  logger.info(
    {
      clickhouse: config.clickhouse.url ? redactUrl(config.clickhouse.url) : `embedded (${config.chdbDir})`,
      postgres: config.databaseUrl ? redactUrl(config.databaseUrl) : `embedded (${config.dataDir}/postgres)`,
      redis: config.redisUrl ? redactUrl(config.redisUrl) : 'disabled (jobs in-process)',
      clickhouse_topology: config.clickhouse.topology,
      cluster: config.clickhouse.cluster,
      clickhouse_reads: config.clickhouse.readUrl ? redactUrl(config.clickhouse.readUrl) : undefined,
    },
    'opening stores',
  );
  const stores = await createStores(config, logger);
  try {
    await waitForStores(stores, config, logger);
    await migrate(stores, logger);
  } catch (err) {
    await stores.close();
    throw err;
  }
  return stores;
}

export async function startService(
  config: Config,
  opts: { logger?: Logger; extraRoutes?: AppDeps['extraRoutes']; validator?: AppDeps['validator'] } = {},
): Promise<Service> {
  const logger = opts.logger ?? createLogger(config);
  if (!config.authRequired) {
    logger.warn(
      '!!! AUTH_REQUIRED=false: every endpoint is public and acts as user "dev" (admin) in project "default". ' +
        'For local development only. !!!',
    );
  }
  if (config.clickhouse.url && !config.redisUrl) {
    logger.warn(
      'CLICKHOUSE_URL is set without REDIS_URL: trace assembly keeps its pending traces in this process, so run one API process only ' +
        '(several would assemble a trace on each node); set REDIS_URL to run several',
    );
  }
  const stores = await bootStores(config, logger);
  const broadcast = createBroadcast(stores.redis, logger);
  let identity: Identity;
  try {
    identity = await createIdentity(config, stores, broadcast, logger);
  } catch (err) {
    broadcast.close();
    await stores.close();
    throw err;
  }
  const jobs = createJobRunner(stores, logger, { consume: config.jobsInApi });
  const domain = createDomain(config, stores, broadcast, logger, jobs);
  await startJobs(jobs, domain);
  await domain.startIngest();
  const app = createApp({ config, stores, logger, identity, domain, extraRoutes: opts.extraRoutes, validator: opts.validator });

  const server = http.createServer(app.koa.callback());
  // Node's requestTimeout holds every route to one deadline and cannot spare one, so it is off and
  // app.ts keeps the deadline (REQUEST_TIMEOUT_MS) for every request but the streamed imports, which
  // it cuts when idle instead. Headers still have to arrive within 30 s.
  server.requestTimeout = 0;
  server.headersTimeout = 30_000;
  // An idle connection is kept 65 s: longer than a client's pool or a load balancer keeps one
  // (fetch: 4 s from the server's hint; AWS ALB: 60 s), so the client always closes first. With
  // Node's 5 s a pooled connection reused as the server closed it failed with ECONNRESET.
  server.keepAliveTimeout = 65_000;
  let grpc: OtlpGrpcServer | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    if (config.otlpGrpcPort !== 0) grpc = await startOtlpGrpc({ config, identity, domain, logger });
  } catch (err) {
    if (server.listening) await new Promise((resolve) => server.close(resolve));
    await domain.close();
    await jobs.close();
    await identity.close();
    broadcast.close();
    await stores.close();
    throw err;
  }
  // With embedded stores no other process can open them: `npm run admin` reaches this one instead.
  let adminSocket: AdminSocket | undefined;
  if (stores.holdsDataDir) {
    adminSocket = await listenAdminSocket(app.koa.callback(), config.dataDir, logger).catch((err: Error) => {
      logger.warn({ err: { message: err.message } }, 'admin socket not served: npm run admin needs the API stopped');
      return undefined;
    });
  }
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  logger.info(
    { url, mode: { clickhouse: stores.clickhouse.mode, postgres: stores.postgres.mode, jobs: jobs.mode } },
    'traceloom listening',
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      logger.info('shutting down: no new connections, draining requests');
      const drained = Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        grpc?.close(config.timeouts.shutdownMs),
      ]).then(() => undefined);
      server.closeIdleConnections();
      const adminClosed = adminSocket?.close();
      // Flush the writers now, so requests waiting for their rows to be stored complete without
      // waiting on a flush timer.
      const flushed = domain.flush();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), config.timeouts.shutdownMs);
      });
      if ((await Promise.race([drained, timedOut])) === 'timeout') {
        logger.warn({ after_ms: config.timeouts.shutdownMs }, 'requests still running at the shutdown deadline: closing their connections');
        server.closeAllConnections();
        await drained;
      }
      clearTimeout(timer);
      await adminClosed;
      await flushed;
      // Jobs stop first (a running trace assembly finishes its writes), then the writers close:
      // everything acknowledged is stored before the stores close.
      await jobs.close();
      await domain.close();
      await identity.close();
      broadcast.close();
      await stores.close();
      logger.info('shutdown complete');
    })());

  return { url, port, grpcPort: grpc?.port, stores, jobs, app, logger, identity, domain, close };
}
