// Test configuration. The suite runs in the mode the environment names: embedded stores when
// DATABASE_URL / REDIS_URL / CLICKHOUSE_URL are unset, servers when set (.ci/run runs both).
// Each service under test gets its own DATA_DIR, its own PostgreSQL database and its own Redis
// prefix; each test file its own chDB folder. They start migrated: copies of stores migrated once
// per machine and schema (a service's boot then finds every migration applied), unless a test asks
// for empty ones (`migrated: false`: the migration tests).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createRequire } from 'node:module';
import { loadConfig, type Config } from '../../src/config.ts';
import { initdbInChild } from '../../src/stores/postgres.ts';
import { SCHEMA_DIR } from '../../src/stores/migrate.ts';

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

const databaseUrl = (name: string) => {
  const u = new URL(serverEnv.databaseUrl!);
  u.pathname = `/${name}`;
  return u.toString();
};

async function asAdmin<T>(run: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: serverEnv.databaseUrl });
  await admin.connect();
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}

/** A new database on the PostgreSQL server of DATABASE_URL (server mode only): empty, or a copy of the migrated template. */
export async function freshDatabaseUrl(opts: { migrated?: boolean } = {}): Promise<string | undefined> {
  if (!serverEnv.databaseUrl) return undefined;
  const template = opts.migrated ? (await storeTemplate()).database : undefined;
  const name = `tl_test_${crypto.randomBytes(6).toString('hex')}`;
  await asAdmin((admin) => admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`));
  createdDatabases.push(name);
  return databaseUrl(name);
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

// chDB binds one data directory per process at a time, and a worker process runs one test file at
// a time: every service of a file shares this one (a new one per file, beginTestFile); everything
// else (PGlite, the lock) gets a fresh DATA_DIR.
// Its first user decides whether it starts migrated (a copy of the template) or empty.
let chdbDir: { dir: string; migrated: boolean } | undefined;
async function fileChdbDir(migrated: boolean): Promise<string> {
  if (!chdbDir) {
    const dir = tempDir('traceloom-chdb-');
    if (migrated) fs.cpSync(path.join((await storeTemplate()).dir, 'chdb'), dir, { recursive: true });
    chdbDir = { dir, migrated };
  }
  if (chdbDir.migrated && !migrated) throw new Error('this file asked for migrated stores first: ask for migrated: false before any other');
  return chdbDir.dir;
}

/**
 * A new test file begins (test/file-setup.ts): its services get a chDB folder of their own. The
 * worker process outlives the file (isolate: false), and the previous file's services are closed,
 * so the engine binds the new folder.
 */
export function beginTestFile(): void {
  chdbDir = undefined;
}

/** A chDB folder of its own, migrated: for a child process (chDB binds one folder per process). */
export async function migratedChdbDir(): Promise<string> {
  const dir = tempDir('traceloom-chdb-child-');
  fs.cpSync(path.join((await storeTemplate()).dir, 'chdb'), dir, { recursive: true });
  return dir;
}

function packageVersion(name: string): string {
  const main = require.resolve(name);
  for (let dir = path.dirname(main); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version: string };
      if (pkg.name === name) return pkg.version;
    }
  }
  throw new Error(`no package.json of ${name}`);
}

/**
 * Stores migrated once per machine, mode, schema and engine versions (a boot's migrations take
 * ~1.2 s on a new chDB folder; a copy, tens of milliseconds): a chDB folder, and a PGlite folder
 * (embedded) or a template database (servers). Made by a child process (chDB binds one folder per
 * process) beside its place and renamed into it, so no test copies a half-made one; two made at
 * once: one wins.
 */
let storeTemplatePromise: Promise<{ dir: string; database?: string }> | undefined;
function storeTemplate(): Promise<{ dir: string; database?: string }> {
  return (storeTemplatePromise ??= (async () => {
    const hash = crypto.createHash('sha256');
    for (const store of ['postgres', 'clickhouse']) {
      const dir = path.join(SCHEMA_DIR, store);
      for (const f of fs.readdirSync(dir).sort()) hash.update(`${store}/${f}\0`).update(fs.readFileSync(path.join(dir, f)));
    }
    hash.update(`chdb ${packageVersion('chdb')} pglite ${packageVersion('@electric-sql/pglite')}`);
    const key = hash.digest('hex').slice(0, 16);
    const dir = path.join(os.tmpdir(), `traceloom-store-template-${mode}-${key}`);
    const database = serverEnv.databaseUrl ? `tl_template_${key}` : undefined;
    if (fs.existsSync(path.join(dir, 'chdb'))) return { dir, database };
    const making = `${dir}.${process.pid}.making`;
    fs.rmSync(making, { recursive: true, force: true });
    fs.mkdirSync(path.join(making, 'data'), { recursive: true });
    const env: Record<string, string> = { DATA_DIR: path.join(making, 'data'), CHDB_DIR: path.join(making, 'chdb') };
    const ownDatabase = database && `${database}_${process.pid}`;
    if (ownDatabase) {
      await asAdmin(async (admin) => {
        await admin.query(`DROP DATABASE IF EXISTS ${ownDatabase}`);
        await admin.query(`CREATE DATABASE ${ownDatabase}`);
      });
      env.DATABASE_URL = databaseUrl(ownDatabase);
    } else fs.cpSync(await pgliteTemplate(), path.join(making, 'data', 'postgres'), { recursive: true });
    await migrateInChild(env);
    if (ownDatabase) {
      // The template may exist (another run made it, or this machine kept it): then this one goes.
      // Two workers may make it at once: the one whose rename finds the name taken drops its own.
      await asAdmin(async (admin) => {
        const { rows } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
        if (rows.length) await admin.query(`DROP DATABASE ${ownDatabase}`);
        else
          await admin.query(`ALTER DATABASE ${ownDatabase} RENAME TO ${database}`).catch(async (err: { code?: string }) => {
            if (err.code !== '42P04' && err.code !== '23505') throw err; // duplicate_database, or the catalogue's unique index
            await admin.query(`DROP DATABASE ${ownDatabase}`);
          });
      });
    }
    try {
      fs.renameSync(making, dir);
    } catch {
      fs.rmSync(making, { recursive: true, force: true }); // another process made it first
    }
    return { dir, database };
  })());
}

/** Migrates the stores `env` names in a child process: chDB would bind this process to its folder. */
async function migrateInChild(env: Record<string, string>): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '..', 'fixtures', 'migrate-runner.ts')], {
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`migrating the store template failed (exit ${code}): ${err.slice(-2000)}`)),
    );
  });
}

/**
 * An initialised PGlite database, made once per machine and PGlite version (initdb takes seconds
 * of each service start; a copy, a few hundred milliseconds). Made beside its place and renamed
 * into it, so a test process never copies a half-made one; two made at once: one wins.
 */
let pgTemplate: Promise<string> | undefined;
function pgliteTemplate(): Promise<string> {
  return (pgTemplate ??= (async () => {
    const dir = path.join(os.tmpdir(), `traceloom-pglite-template-${packageVersion('@electric-sql/pglite')}`);
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

/**
 * The environment of one service under test, in the current mode, plus overrides. Its stores start
 * migrated unless `migrated: false` (then empty: initialised, no table).
 */
export async function testEnv(overrides: Record<string, string | undefined> = {}, opts: { migrated?: boolean } = {}): Promise<TestEnv> {
  const migrated = opts.migrated ?? true;
  const dataDir = tempDir();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    CHDB_DIR: overrides.CHDB_DIR ?? (await fileChdbDir(migrated)),
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
  const db = overrides.DATABASE_URL === undefined ? await freshDatabaseUrl({ migrated }) : undefined;
  if (db) env.DATABASE_URL = db;
  // Embedded: this DATA_DIR's database starts as a copy of a migrated one, or of an initialised one (not initdb again).
  else if (overrides.DATA_DIR === undefined && overrides.DATABASE_URL === undefined)
    fs.cpSync(
      migrated ? path.join((await storeTemplate()).dir, 'data', 'postgres') : await pgliteTemplate(),
      path.join(dataDir, 'postgres'),
      {
        recursive: true,
      },
    );
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
