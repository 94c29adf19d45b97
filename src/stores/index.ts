// The one place that knows whether Traceloom runs on embedded stores or on servers.
import fs from 'node:fs';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { createClickHouse, type ClickHouseStore } from './clickhouse.ts';
import { createPostgres, type PostgresStore } from './postgres.ts';
import { createRedis, type RedisStore } from './redis.ts';
import { DataDirLock, dataDirLockFile } from './data-dir-lock.ts';
import { createDiskSpace, type DiskSpace } from './disk-space.ts';
import type { WriteRefusal, Writer } from './errors.ts';
import { WriteRefusals } from './write-refusals.ts';

export type { ClickHouseStore, PostgresStore, RedisStore };

export type StoreStatus = 'ok' | 'down';

export interface StoreHealth {
  /** degraded: a store is down, a store refused a write lately, or DATA_DIR is under its free-space floor */
  status: 'ok' | 'degraded';
  /** Whether each store answers a ping (a store out of disk space still does: see refusing_writes). */
  clickhouse: StoreStatus;
  postgres: StoreStatus;
  redis: StoreStatus | 'disabled';
  /** Stores (and the ingest log) whose last write failed for lack of space, memory or connections, or read-only (write-refusals.ts). */
  refusing_writes: Array<{ store: Writer; reason: WriteRefusal; at: string }>;
  /** The filesystem of DATA_DIR (or INGEST_LOG_DIR when it has less room). */
  data_dir: { free_bytes: number; total_bytes: number; min_free_bytes: number };
}

export interface Stores {
  readonly clickhouse: ClickHouseStore;
  /**
   * Where dashboards and exports read (stats, template analytics, spend breakdowns, Parquet
   * exports): CLICKHOUSE_READ_URL (a replica, a read-only compute group), else `clickhouse` itself.
   * Nothing that must see a write just made (ingest, scores, evaluator scans, budgets) reads here.
   */
  readonly clickhouseReads: ClickHouseStore;
  readonly postgres: PostgresStore;
  readonly redis: RedisStore | undefined;
  /** Writes the stores (and the ingest log) refused lately, for /api/health. */
  readonly refusals: WriteRefusals;
  /** Free space of DATA_DIR and INGEST_LOG_DIR, against DISK_MIN_FREE_BYTES. */
  readonly disk: DiskSpace;
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
  const refusals = new WriteRefusals();
  const disk = createDiskSpace([config.dataDir, config.ingest.logDir], config.diskMinFreeBytes);
  let clickhouse: ClickHouseStore | undefined;
  let clickhouseReads: ClickHouseStore | undefined;
  let postgres: PostgresStore | undefined;
  try {
    clickhouse = createClickHouse(config, refusals);
    clickhouseReads = config.clickhouse.readUrl ? createClickHouse(config, undefined, config.clickhouse.readUrl) : clickhouse;
    postgres = await createPostgres(config, logger, refusals);
  } catch (err) {
    await clickhouse?.close().catch(() => undefined);
    if (clickhouseReads !== clickhouse) await clickhouseReads?.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
  const redis = createRedis(config, logger);
  const ch = clickhouse;
  const chReads = clickhouseReads;
  const pg = postgres;
  let closed = false;
  return {
    clickhouse: ch,
    clickhouseReads: chReads,
    postgres: pg,
    redis,
    refusals,
    disk,
    holdsDataDir: lock !== undefined,
    async health(timeoutMs = 2_000): Promise<StoreHealth> {
      const [c, p, r] = await Promise.all([
        within(() => ch.ping(), timeoutMs),
        within(() => pg.ping(), timeoutMs),
        redis ? within(() => redis.ping(), timeoutMs) : Promise.resolve('disabled' as const),
      ]);
      const refusing = refusals.current().map((x) => ({ store: x.store, reason: x.reason, at: new Date(x.at).toISOString() }));
      let space: StoreHealth['data_dir'];
      try {
        const s = disk.sample(0);
        space = { free_bytes: s.freeBytes, total_bytes: s.totalBytes, min_free_bytes: disk.minFreeBytes };
      } catch {
        space = { free_bytes: 0, total_bytes: 0, min_free_bytes: disk.minFreeBytes }; // DATA_DIR cannot be read: nothing can be written there
      }
      const ok = c === 'ok' && p === 'ok' && r !== 'down' && refusing.length === 0 && space.free_bytes >= space.min_free_bytes;
      return { status: ok ? 'ok' : 'degraded', clickhouse: c, postgres: p, redis: r, refusing_writes: refusing, data_dir: space };
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const results = await Promise.allSettled([ch.close(), chReads === ch ? undefined : chReads.close(), pg.close(), redis?.close()]);
      lock?.release();
      for (const r of results) if (r.status === 'rejected') logger.warn({ err: { message: String(r.reason) } }, 'store close failed');
    },
  };
}
