// Migrations: numbered files in schema/postgres and schema/clickhouse, applied at boot in order
// and recorded in a schema_migrations table in each store. Safe to run twice (applied versions
// are skipped) and from several processes at once (a PostgreSQL advisory lock serialises them;
// ClickHouse migrations run under the same lock).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.ts';
import type { ClickHouseStore } from './clickhouse.ts';
import type { PostgresStore } from './postgres.ts';
import { renderDDL, tablesCreatedBy } from './topology.ts';

export const SCHEMA_DIR = fileURLToPath(new URL('../../schema/', import.meta.url));

/** An arbitrary constant that names "Traceloom migrations" among advisory locks. */
const MIGRATION_LOCK_KEY = 727_465_001;

export const CLICKHOUSE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version UInt32,
  name String,
  checksum String,
  applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree ORDER BY version`;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export function loadMigrations(dir: string): Migration[] {
  if (!fs.existsSync(dir)) return [];
  const migrations = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const m = /^(\d+)_([a-z0-9_]+)\.sql$/.exec(file);
      if (!m) throw new MigrationError(`${dir}/${file}: migration files are named NNN_snake_name.sql`);
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      return { version: Number(m[1]), name: m[2] as string, sql, checksum: crypto.createHash('sha256').update(sql).digest('hex') };
    })
    .sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version)
      throw new MigrationError(`${dir}: two migrations numbered ${migrations[i]!.version}`);
  }
  return migrations;
}

/** Split a file into statements at semicolons that end a line (no semicolons inside literals at line end). */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\r?\n|$)/)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter((s) => s.length > 0);
}

function checkApplied(store: string, applied: Map<number, string>, migrations: Migration[]): Migration[] {
  for (const m of migrations) {
    const sum = applied.get(m.version);
    if (sum !== undefined && sum !== m.checksum) {
      throw new MigrationError(
        `${store} migration ${m.version}_${m.name} changed after it was applied: migrations are immutable, add a new one`,
      );
    }
  }
  return migrations.filter((m) => !applied.has(m.version));
}

export interface MigrateResult {
  postgres: number[];
  clickhouse: number[];
}

export async function migrate(
  stores: { postgres: PostgresStore; clickhouse: ClickHouseStore },
  logger: Logger,
  schemaDir: string = SCHEMA_DIR,
): Promise<MigrateResult> {
  const pgMigrations = loadMigrations(path.join(schemaDir, 'postgres'));
  const chMigrations = loadMigrations(path.join(schemaDir, 'clickhouse'));
  return stores.postgres.withClient(async (client) => {
    // Session-level lock on this one connection: a second process blocks here until the first is done.
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const postgres = await migratePostgres(client, pgMigrations, logger);
      const clickhouse = await migrateClickHouse(stores.clickhouse, chMigrations, logger);
      return { postgres, clickhouse };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  });
}

type PgClient = { query: (sql: string, params?: unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }> };

async function migratePostgres(client: PgClient, migrations: Migration[], logger: Logger): Promise<number[]> {
  await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const { rows } = await client.query('SELECT version, checksum FROM schema_migrations');
  const applied = new Map(rows.map((r) => [Number(r.version), String(r.checksum)]));
  const pending = checkApplied('postgres', applied, migrations);
  for (const m of pending) {
    await client.query('BEGIN');
    try {
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw new MigrationError(`postgres migration ${m.version}_${m.name} failed: ${(err as Error).message}`);
    }
    logger.info({ store: 'postgres', version: m.version, migration: m.name }, 'migration applied');
  }
  return pending.map((m) => m.version);
}

async function migrateClickHouse(ch: ClickHouseStore, migrations: Migration[], logger: Logger): Promise<number[]> {
  // Every table of every migration, applied or not: a view created now may read a table of an earlier one.
  const tables = tablesCreatedBy([CLICKHOUSE_MIGRATIONS_TABLE, ...migrations.flatMap((m) => splitStatements(m.sql))]);
  const ddl = async (sql: string) => {
    for (const statement of renderDDL(sql, ch.topology, tables)) await ch.command(statement);
  };
  await ddl(CLICKHOUSE_MIGRATIONS_TABLE);
  const rows = await ch.query<{ version: number; checksum: string }>(
    'SELECT version, any(checksum) AS checksum FROM schema_migrations GROUP BY version',
  );
  const applied = new Map(rows.map((r) => [Number(r.version), r.checksum]));
  const pending = checkApplied('clickhouse', applied, migrations);
  for (const m of pending) {
    // ClickHouse DDL is not transactional: every statement must be idempotent (IF NOT EXISTS),
    // so a migration interrupted half way is simply run again.
    for (const statement of splitStatements(m.sql)) {
      try {
        await ddl(statement);
      } catch (err) {
        throw new MigrationError(`clickhouse migration ${m.version}_${m.name} failed: ${(err as Error).message}`);
      }
    }
    await ch.insert('schema_migrations', [{ version: m.version, name: m.name, checksum: m.checksum }]);
    logger.info({ store: 'clickhouse', version: m.version, migration: m.name }, 'migration applied');
  }
  return pending.map((m) => m.version);
}
