// Migrations apply in order, once, are recorded, refuse edited history, and are safe when two
// runners start at once (advisory lock).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { createStores, type Stores } from '../../src/stores/index.ts';
import { loadMigrations, migrate, splitStatements } from '../../src/stores/migrate.ts';
import { dropTestDatabases, mode, tempDir, testEnv } from '../helpers/env.ts';

const logger = createLogger({ logLevel: 'silent' });
const FIXTURES = fileURLToPath(new URL('../fixtures/schema/', import.meta.url));

let open: Stores[] = [];
afterEach(async () => {
  for (const s of open) await s.close();
  open = [];
});
afterAll(() => dropTestDatabases());

async function stores(overrides: Record<string, string> = {}) {
  const t = await testEnv(overrides, { migrated: false });
  const s = await createStores(t.config, logger);
  open.push(s);
  return { stores: s, env: t };
}

/** chDB is shared by the test file: each test gets its own copy of the fixture ClickHouse tables. */
function fixtureDir(suffix: string): string {
  const dir = tempDir('traceloom-schema-');
  fs.cpSync(FIXTURES, dir, { recursive: true });
  for (const f of fs.readdirSync(path.join(dir, 'clickhouse'))) {
    const p = path.join(dir, 'clickhouse', f);
    fs.writeFileSync(p, fs.readFileSync(p, 'utf8').replaceAll('fx_widget', `fx_${suffix}_widget`));
  }
  return dir;
}

async function clearClickHouseRecord(s: Stores) {
  // The chDB directory is shared by this file's tests: start each from no recorded migrations.
  await s.clickhouse.command('DROP TABLE IF EXISTS schema_migrations');
}

describe(`migrations (${mode} mode)`, () => {
  it('apply in order, are recorded, and a second run applies nothing', async () => {
    const { stores: s } = await stores();
    await clearClickHouseRecord(s);
    const dir = fixtureDir('a');
    const first = await migrate(s, logger, dir);
    expect(first).toEqual({ postgres: [1, 2], clickhouse: [1, 2] });
    expect(await s.postgres.query('SELECT id, name, colour FROM widgets')).toEqual([{ id: 1, name: 'first', colour: 'blue' }]);
    const recorded = await s.postgres.query<{ version: number; name: string }>(
      'SELECT version, name FROM schema_migrations ORDER BY version',
    );
    expect(recorded).toEqual([
      { version: 1, name: 'widgets' },
      { version: 2, name: 'widget_colour' },
    ]);
    const chRecorded = await s.clickhouse.query<{ version: number }>('SELECT version FROM schema_migrations FINAL ORDER BY version');
    expect(chRecorded.map((r) => Number(r.version))).toEqual([1, 2]);

    const second = await migrate(s, logger, dir);
    expect(second).toEqual({ postgres: [], clickhouse: [] });
    expect(await s.postgres.query('SELECT count(*)::int AS n FROM widgets')).toEqual([{ n: 1 }]);

    // the materialized chain the fixtures build works: a cancel row nets out
    await s.clickhouse.insert('fx_a_widget_events', [
      { project_id: 'p', widget_id: 1, at: '2026-11-01 10:00:00.000', cost: '0.000123', sign: 1, version: 1 },
      { project_id: 'p', widget_id: 1, at: '2026-11-01 10:00:00.000', cost: '0.000123', sign: -1, version: 1 },
      { project_id: 'p', widget_id: 1, at: '2026-11-01 10:00:00.000', cost: '0.5', sign: 1, version: 2 },
    ]);
    expect(await s.clickhouse.query('SELECT toString(sum(cost)) AS c FROM fx_a_widget_daily')).toEqual([{ c: '0.5' }]);
  });

  it('the service migrations apply on a fresh store and again without change', async () => {
    const { stores: s } = await stores();
    await clearClickHouseRecord(s);
    const first = await migrate(s, logger);
    expect(first.postgres).toEqual(loadMigrations(path.resolve('schema/postgres')).map((m) => m.version));
    expect(await migrate(s, logger)).toEqual({ postgres: [], clickhouse: [] });
  });

  it('the wide tables merge column by column (what bounds the engine memory of a merge)', async () => {
    const { stores: s } = await stores();
    await clearClickHouseRecord(s);
    await migrate(s, logger);
    for (const table of ['spans', 'executions']) {
      const [row] = await s.clickhouse.query<{ ddl: string }>(
        'SELECT create_table_query AS ddl FROM system.tables WHERE database = currentDatabase() AND name = {t:String}',
        { t: table },
      );
      expect(row?.ddl, table).toMatch(/vertical_merge_algorithm_min_rows_to_activate = 1\b/);
    }
  });

  it('refuse a migration edited after it was applied', async () => {
    const { stores: s } = await stores();
    await clearClickHouseRecord(s);
    const dir = fixtureDir('b');
    await migrate(s, logger, dir);
    fs.appendFileSync(path.join(dir, 'postgres', '001_widgets.sql'), '\n-- edited\n');
    await expect(migrate(s, logger, dir)).rejects.toThrow(/postgres migration 1_widgets changed after it was applied/);
  });

  it('refuse badly named files', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'init.sql'), 'SELECT 1');
    expect(() => loadMigrations(dir)).toThrow(/NNN_snake_name\.sql/);
  });

  it('split statements at line-ending semicolons and drop comments', () => {
    expect(splitStatements("-- c\nCREATE TABLE a (x String DEFAULT ';');\n\nSELECT 1;\n")).toEqual([
      "CREATE TABLE a (x String DEFAULT ';')",
      'SELECT 1',
    ]);
  });

  it('two runners at once apply each migration exactly once', async () => {
    const dir = fixtureDir('c');
    if (mode === 'server') {
      // Two processes against one PostgreSQL server: the advisory lock serialises them. The
      // non-idempotent 002 (ALTER + INSERT) would fail or duplicate if both applied it.
      const { env } = await stores();
      await open.pop()?.close();
      const run = (chdb: string) =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/migrate-runner.ts', dir], {
            env: { ...process.env, ...env.env, CHDB_DIR: chdb, DATA_DIR: tempDir() },
          });
          let out = '';
          child.stdout.on('data', (d) => (out += d));
          child.stderr.on('data', (d) => (out += d));
          child.on('exit', (code) => resolve({ code, out }));
        });
      // each process has its own chDB (the engine is per process); PostgreSQL is shared
      const [a, b] = await Promise.all([run(tempDir()), run(tempDir())]);
      expect(a.code, a.out).toBe(0);
      expect(b.code, b.out).toBe(0);
      const applied = [JSON.parse(a.out.trim().split('\n').pop()!), JSON.parse(b.out.trim().split('\n').pop()!)];
      expect(
        applied
          .map((r) => r.postgres)
          .flat()
          .sort(),
      ).toEqual([1, 2]);
      const { stores: s } = await stores({ DATABASE_URL: env.env.DATABASE_URL! });
      expect(await s.postgres.query('SELECT count(*)::int AS n FROM widgets')).toEqual([{ n: 1 }]);
      expect(await s.postgres.query('SELECT count(*)::int AS n FROM schema_migrations')).toEqual([{ n: 2 }]);
    } else {
      // Embedded: one process owns the store; two concurrent runners in it are serialised.
      const { stores: s } = await stores();
      await clearClickHouseRecord(s);
      const [a, b] = await Promise.all([migrate(s, logger, dir), migrate(s, logger, dir)]);
      expect([...a.postgres, ...b.postgres].sort()).toEqual([1, 2]);
      expect([...a.clickhouse, ...b.clickhouse].sort()).toEqual([1, 2]);
      expect(await s.postgres.query('SELECT count(*)::int AS n FROM widgets')).toEqual([{ n: 1 }]);
    }
  });
});
