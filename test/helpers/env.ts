// Test configuration. The suite runs in the mode the environment names: embedded stores when
// DATABASE_URL / REDIS_URL / CLICKHOUSE_URL are unset, servers when set (.ci/run runs both).
// Each test file gets its own DATA_DIR, its own PostgreSQL database and its own Redis prefix.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createRequire } from 'node:module';
import { loadConfig, type Config } from '../../src/config.ts';
import { initdbInChild } from '../../src/stores/postgres.ts';

const require = createRequire(import.meta.url);

export const serverEnv = {
  databaseUrl: process.env.DATABASE_URL || undefined,
  redisUrl: process.env.REDIS_URL || undefined,
  clickhouseUrl: process.env.CLICKHOUSE_URL || undefined,
};

export const mode = serverEnv.databaseUrl ? 'server' : 'embedded';

export function tempDir(prefix = 'traceloom-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

const createdDatabases: string[] = [];

/** A new, empty database on the PostgreSQL server of DATABASE_URL (server mode only). */
export async function freshDatabaseUrl(): Promise<string | undefined> {
  if (!serverEnv.databaseUrl) return undefined;
  const name = `tl_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverEnv.databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  createdDatabases.push(name);
  const u = new URL(serverEnv.databaseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function dropTestDatabases(): Promise<void> {
  if (!serverEnv.databaseUrl) return;
  const admin = new pg.Client({ connectionString: serverEnv.databaseUrl });
  await admin.connect();
  try {
    for (const name of createdDatabases.splice(0)) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

// chDB binds one data directory per process, and vitest runs each test file in its own process:
// every service of a file shares this one; everything else (PGlite, the lock) gets a fresh DATA_DIR.
let chdbDir: string | undefined;
export const fileChdbDir = () => (chdbDir ??= tempDir('traceloom-chdb-'));

/**
 * An initialised PGlite database, made once per machine and PGlite version (initdb takes seconds
 * of each service start; a copy, a few hundred milliseconds). Made beside its place and renamed
 * into it, so a test process never copies a half-made one; two made at once: one wins.
 */
let pgTemplate: Promise<string> | undefined;
function pgliteTemplate(): Promise<string> {
  return (pgTemplate ??= (async () => {
    const { version } = JSON.parse(
      fs.readFileSync(path.join(path.dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8'),
    ) as { version: string };
    const dir = path.join(os.tmpdir(), `traceloom-pglite-template-${version}`);
    if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return dir;
    const making = `${dir}.${process.pid}.init`;
    fs.rmSync(making, { recursive: true, force: true });
    await initdbInChild(making);
    try {
      fs.renameSync(making, dir);
    } catch {
      fs.rmSync(making, { recursive: true, force: true }); // another process made it first
    }
    return dir;
  })());
}

export interface TestEnv {
  env: Record<string, string>;
  config: Config;
  dataDir: string;
}

/** The environment of one service under test, in the current mode, plus overrides. */
export async function testEnv(overrides: Record<string, string | undefined> = {}): Promise<TestEnv> {
  const dataDir = tempDir();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    CHDB_DIR: fileChdbDir(),
    PORT: '0',
    // Off unless a test asks for it (with a free port it picked): services of parallel test files
    // would otherwise all bind 4317.
    OTLP_GRPC_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    AUTH_REQUIRED: 'false',
    NODE_ENV: 'test',
    REDIS_PREFIX: `tltest_${crypto.randomBytes(4).toString('hex')}`,
    STORE_CONNECT_TIMEOUT_MS: '5000',
    // Tests send a few spans and read them back at once: the loader takes them after 200 ms, not
    // after the 1 s that makes batches large under load (a test that needs longer sets its own).
    INGEST_LOAD_INTERVAL_MS: '200',
    // Fixtures pin dates of the coming weeks (budget periods): spans and records may start up to a
    // year ahead here, one day in production.
    INGEST_SPAN_MAX_FUTURE_DAYS: '366',
  };
  const db = await freshDatabaseUrl();
  if (db) env.DATABASE_URL = db;
  // Embedded: this DATA_DIR's database starts as a copy of an initialised one (not initdb again).
  else if (overrides.DATA_DIR === undefined && overrides.DATABASE_URL === undefined)
    fs.cpSync(await pgliteTemplate(), path.join(dataDir, 'postgres'), { recursive: true });
  if (serverEnv.redisUrl) env.REDIS_URL = serverEnv.redisUrl;
  if (serverEnv.clickhouseUrl) env.CLICKHOUSE_URL = serverEnv.clickhouseUrl;
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return { env, config: loadConfig(env), dataDir };
}

/** A loopback port on which nothing listens: a store "that is down". */
export async function closedPort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
