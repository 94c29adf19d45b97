// GET /api/health checks each store for real: 200 when all answer, 503 naming what is down,
// and any route whose store is down answers 503 with Retry-After, never 500, never a hang.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/http/app.ts';
import { createIdentity } from '../../src/auth/identity.ts';
import { createBroadcast } from '../../src/stores/broadcast.ts';
import { createDomain } from '../../src/compose/domain.ts';
import { createLogger } from '../../src/logger.ts';
import { createStores, type Stores } from '../../src/stores/index.ts';
import type { RouteDef } from '../../src/http/routes/types.ts';
import { closedPort, dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { getJson, healthyBody, startTestService } from '../helpers/service.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const logger = createLogger({ logLevel: 'silent' });
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});
afterAll(() => dropTestDatabases());

/** Routes that touch each store, to see how a request behaves when that store is down. */
const probeRoutes = (stores: Stores): RouteDef[] =>
  (['clickhouse', 'postgres'] as const).map((store) => ({
    method: 'GET' as const,
    path: `/api/test/${store}`,
    operationId: `probe_${store}`,
    summary: store,
    tag: 'test',
    access: 'public' as const,
    responses: { 200: { description: 'ok' } },
    async handler(ctx) {
      ctx.body = store === 'clickhouse' ? await stores.clickhouse.query('SELECT 1 AS one') : await stores.postgres.query('SELECT 1 AS one');
    },
  }));

/** Serves the app over stores built from `overrides`, without waiting for them or migrating. */
async function serveOver(overrides: Record<string, string>): Promise<{ url: string; stores: Stores }> {
  const t = await testEnv({ ...overrides, STORE_TIMEOUT_MS: '2000' });
  const stores = await createStores(t.config, logger);
  // Authentication is not under test here (and its bootstrap would need the store that is down).
  const broadcast = createBroadcast(stores.redis, logger);
  const identity = await createIdentity({ ...t.config, authRequired: true }, stores, broadcast, logger);
  const domain = createDomain(t.config, stores, broadcast, logger, { enqueue: async () => {} }); // no jobs here
  const app = createApp({ config: t.config, stores, logger, identity, domain, extraRoutes: () => probeRoutes(stores) });
  const server = http.createServer(app.koa.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await domain.close();
    await identity.close();
    broadcast.close();
    await stores.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stores };
}

describe(`health (${mode} mode)`, () => {
  it('200 with every store ok', async () => {
    const svc = await startTestService();
    cleanups.push(() => svc.close());
    const r = await getJson(`${svc.url}/api/health`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(healthyBody(mode));
    expect(r.body.data_dir.free_bytes).toBeGreaterThan(r.body.data_dir.min_free_bytes); // the full disk: test/stores/disk-full.test.ts
    // An idle connection is kept longer than clients keep one (fetch: the hint less 1 s; load
    // balancers: 60 s), so a client never sends on a connection the server is closing (ECONNRESET).
    const keepAlive = await new Promise<string | undefined>((resolve, reject) =>
      http
        .get(`${svc.url}/api/health`, { agent: new http.Agent({ keepAlive: true }) }, (res) => {
          res.resume();
          resolve(res.headers['keep-alive'] as string | undefined);
        })
        .on('error', reject),
    );
    expect(keepAlive).toBe('timeout=65');
  });

  it('503 naming postgres when it stops, and 503 (not 500) for a route that needs it', async () => {
    const svc = await startTestService();
    cleanups.push(() => svc.close());
    await svc.stores.postgres.close(); // the store goes away under a running service
    const r = await getJson(`${svc.url}/api/health`);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(r.body).toMatchObject({ status: 'degraded', postgres: 'down', clickhouse: 'ok', detail: 'postgres is down' });
  });

  it('503 naming clickhouse when its server is unreachable; its routes answer 503 quickly', async () => {
    const { url } = await serveOver({ CLICKHOUSE_URL: `http://127.0.0.1:${await closedPort()}` });
    const h = await getJson(`${url}/api/health`);
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({ clickhouse: 'down', postgres: 'ok', detail: 'clickhouse is down' });
    const started = Date.now();
    const r = await getJson(`${url}/api/test/clickhouse`);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(r.body).toEqual({ detail: 'clickhouse is unavailable; retry later' });
    expect(Date.now() - started).toBeLessThan(10_000); // a bound on hanging, not a speed claim
  });

  it('503 naming postgres when its server is unreachable; its routes answer 503', async () => {
    const { url } = await serveOver({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await closedPort()}/postgres` });
    const h = await getJson(`${url}/api/health`);
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({ postgres: 'down', clickhouse: 'ok' });
    const r = await getJson(`${url}/api/test/postgres`);
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ detail: 'postgres is unavailable; retry later' });
  });

  it('503 naming redis when REDIS_URL points at nothing', async () => {
    const { url } = await serveOver({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    const h = await getJson(`${url}/api/health`);
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({ redis: 'down', postgres: 'ok', clickhouse: 'ok', detail: 'redis is down' });
  });

  it('names several stores when several are down', async () => {
    const { url } = await serveOver({
      CLICKHOUSE_URL: `http://127.0.0.1:${await closedPort()}`,
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
    });
    const h = await getJson(`${url}/api/health`);
    expect(h.status).toBe(503);
    expect(h.body.detail).toBe('clickhouse, redis are down');
  });
});
