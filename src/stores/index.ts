// The one place that knows whether Traceloom runs on embedded stores or on servers.
import fs from 'node:fs';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { createClickHouse, type ClickHouseStore } from './clickhouse.ts';
import { createPostgres, type PostgresStore } from './postgres.ts';
import { createRedis, type RedisStore } from './redis.ts';
import { DataDirLock, dataDirLockFile } from './data-dir-lock.ts';

export type { ClickHouseStore, PostgresStore, RedisStore };

export type StoreStatus = 'ok' | 'down';

export interface StoreHealth {
  status: 'ok' | 'degraded';
  clickhouse: StoreStatus;
  postgres: StoreStatus;
  redis: StoreStatus | 'disabled';
}

export interface Stores {
  readonly clickhouse: ClickHouseStore;
  readonly postgres: PostgresStore;
  readonly redis: RedisStore | undefined;
  /** Whether this process holds DATA_DIR (an embedded store is open): then it serves the admin socket. */
  readonly holdsDataDir: boolean;
  health(timeoutMs?: number): Promise<StoreHealth>;
  close(): Promise<void>;
}

async function within(check: () => Promise<boolean>, timeoutMs: number): Promise<StoreStatus> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
  });
  try {
    return (await Promise.race([check(), timeout])) ? 'ok' : 'down';
  } finally {
    clearTimeout(timer);
  }
}

export async function createStores(config: Config, logger: Logger): Promise<Stores> {
  const embedded = !config.clickhouse.url || !config.databaseUrl;
  // chDB and PGlite each own their directory: a second process on the same DATA_DIR would corrupt it.
  const lock = embedded ? DataDirLock.acquire(dataDirLockFile(config.dataDir)) : undefined;
  if (embedded) fs.mkdirSync(config.dataDir, { recursive: true });
  let clickhouse: ClickHouseStore | undefined;
  let postgres: PostgresStore | undefined;
  try {
    clickhouse = createClickHouse(config);
    postgres = await createPostgres(config, logger);
  } catch (err) {
    await clickhouse?.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
  const redis = createRedis(config, logger);
  const ch = clickhouse;
  const pg = postgres;
  let closed = false;
  return {
    clickhouse: ch,
    postgres: pg,
    redis,
    holdsDataDir: lock !== undefined,
    async health(timeoutMs = 2_000): Promise<StoreHealth> {
      const [c, p, r] = await Promise.all([
        within(() => ch.ping(), timeoutMs),
        within(() => pg.ping(), timeoutMs),
        redis ? within(() => redis.ping(), timeoutMs) : Promise.resolve('disabled' as const),
      ]);
      const ok = c === 'ok' && p === 'ok' && r !== 'down';
      return { status: ok ? 'ok' : 'degraded', clickhouse: c, postgres: p, redis: r };
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const results = await Promise.allSettled([ch.close(), pg.close(), redis?.close()]);
      lock?.release();
      for (const r of results) if (r.status === 'rejected') logger.warn({ err: { message: String(r.reason) } }, 'store close failed');
    },
  };
}
