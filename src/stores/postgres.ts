// PostgreSQL: projects, keys, prompts, budgets, prices. Always reached through `pg`: either a
// server (DATABASE_URL) or embedded PGlite in DATA_DIR/postgres, served on loopback by
// @electric-sql/pglite-socket so the same SQL and driver run in both modes.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { asStoreError } from './errors.ts';
import type { WriteRefusals } from './write-refusals.ts';

export type Row = Record<string, unknown>;

/** What domain code sees: bound-parameter queries, inside or outside a transaction. */
export interface Queryable {
  query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

export interface PostgresStore extends Queryable {
  readonly mode: 'embedded' | 'server';
  /** Runs `fn` in one transaction on one connection; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** A connection held for a session-level operation (advisory locks). */
  withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

// int8 and numeric arrive as strings by default; keep them so (exact money, ids beyond 2^53).

/** A statement that writes: its success ends a refusal /api/health reports (a read succeeds on a full disk too). */
const WRITES = /^\s*(?:INSERT|UPDATE|DELETE|MERGE|COPY|CREATE|ALTER|DROP|TRUNCATE)\b|^\s*WITH\b[\s\S]*\b(?:INSERT|UPDATE|DELETE)\b/i;

function wrap(client: pg.Pool | pg.PoolClient, refusals: WriteRefusals | undefined): Queryable {
  return {
    async query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
      try {
        const res = await client.query<T>(sql, params as unknown[] | undefined);
        if (refusals && WRITES.test(sql)) refusals.wrote('postgres');
        return res.rows;
      } catch (err) {
        refusals?.failed('postgres', err);
        throw asStoreError('postgres', err);
      }
    },
  };
}

/** Creates the PGlite database in `dir` from another process (the tests copy one made once: test/helpers/env.ts). */
export async function initdbInChild(dir: string): Promise<void> {
  const entry = pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')).href;
  const script = `const { PGlite } = await import(${JSON.stringify(entry)}); const db = await PGlite.create(process.argv[1]); await db.query('SELECT 1'); await db.close();`;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`PGlite could not create ${dir} (exit ${code}): ${err.slice(-2000)}`)),
    );
  });
}

/** `refusals`: where a refused write (a full disk, no memory, too many connections, read-only) is recorded for /api/health. */
export async function createPostgres(config: Config, logger: Logger, refusals?: WriteRefusals): Promise<PostgresStore> {
  let connectionString: string;
  let mode: PostgresStore['mode'];
  let embedded: { db: PGlite; server: PGLiteSocketServer } | undefined;

  if (config.databaseUrl) {
    mode = 'server';
    connectionString = config.databaseUrl;
  } else {
    mode = 'embedded';
    const dir = path.join(config.dataDir, 'postgres');
    fs.mkdirSync(dir, { recursive: true });
    // initdb grows PGlite's WebAssembly heap to ~750 MiB, and a heap never shrinks: a new
    // directory is initialised by a short-lived child process, so this one opens it like any
    // restart does (BENCHMARKS.md, boot and idle memory).
    // It is made beside its place and renamed into it: a start killed during initdb leaves no
    // half-made database behind.
    if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
      const making = `${dir}.init`;
      fs.rmSync(making, { recursive: true, force: true });
      await initdbInChild(making);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(making, dir);
    }
    // Metadata only (projects, keys, prompts, budgets, prices): 16 MB of shared buffers instead
    // of PostgreSQL's 128 MB keeps ~100 MiB of WebAssembly heap out of the API process.
    const db = await PGlite.create(dir, {
      postgresqlconf: ['shared_buffers=16MB', 'work_mem=2MB', 'maintenance_work_mem=16MB', 'temp_buffers=2MB'],
    });
    // Loopback only, random port: nothing outside this process is meant to connect.
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
    await server.start();
    embedded = { db, server };
    connectionString = `postgres://postgres@${server.getServerConn()}/postgres`;
  }

  const pool = new pg.Pool({
    connectionString,
    // PGlite is one backend: two pooled connections would interleave two transactions in one
    // session. A single connection serialises them, which keeps transactions isolated.
    max: mode === 'embedded' ? 1 : 10,
    connectionTimeoutMillis: config.timeouts.storeMs,
    idleTimeoutMillis: 30_000,
    query_timeout: config.timeouts.storeMs,
    statement_timeout: mode === 'server' ? config.timeouts.storeMs : undefined,
    idle_in_transaction_session_timeout: mode === 'server' ? config.timeouts.storeMs * 3 : undefined,
    application_name: 'traceloom',
  });
  // An idle connection that dies (server restart) emits here; without a listener it would crash the process.
  pool.on('error', (err) =>
    logger.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'postgres idle connection error'),
  );

  const base = wrap(pool, refusals);
  return {
    mode,
    query: base.query,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        refusals?.failed('postgres', err); // too many connections
        throw asStoreError('postgres', err);
      }
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client, refusals));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        refusals?.failed('postgres', err);
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw asStoreError('postgres', err);
      } finally {
        client.release(broken);
      }
    },
    async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        refusals?.failed('postgres', err); // too many connections
        throw asStoreError('postgres', err);
      }
      try {
        return await fn(client);
      } finally {
        client.release();
      }
    },
    async ping(): Promise<boolean> {
      try {
        await pool.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    async close(): Promise<void> {
      await pool.end();
      if (embedded) {
        await embedded.server.stop();
        await embedded.db.close();
      }
    },
  };
}
