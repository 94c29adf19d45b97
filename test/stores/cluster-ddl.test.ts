// With CLICKHOUSE_CLUSTER, every ClickHouse migration statement gets ON CLUSTER and replicated
// engines. chDB has no cluster, but its parser (formatQuery) proves the generated DDL is valid.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.ts';
import { clusterDDL } from '../../src/stores/cluster-ddl.ts';
import { CLICKHOUSE_MIGRATIONS_TABLE, loadMigrations, splitStatements } from '../../src/stores/migrate.ts';
import { testEnv } from '../helpers/env.ts';

const dirs = [path.resolve('schema/clickhouse'), fileURLToPath(new URL('../fixtures/schema/clickhouse/', import.meta.url))];
const statements = dirs.flatMap((d) =>
  loadMigrations(d).flatMap((m) =>
    splitStatements(m.sql).map((sql) => ({ file: `${path.basename(path.dirname(d))}/${m.version}_${m.name}`, sql })),
  ),
);

let ch: ClickHouseStore;
beforeAll(async () => {
  ch = createClickHouse((await testEnv()).config);
});
afterAll(() => ch.close());

async function format(sql: string): Promise<string> {
  const [row] = await ch.query<{ q: string }>('SELECT formatQuery({sql:String}) AS q', { sql });
  return row!.q;
}

describe('cluster DDL', () => {
  it('rewrites engines and adds ON CLUSTER', () => {
    expect(clusterDDL('CREATE TABLE IF NOT EXISTS t (x UInt8) ENGINE = ReplacingMergeTree(v) ORDER BY x', 'main')).toBe(
      "CREATE TABLE IF NOT EXISTS t ON CLUSTER main (x UInt8) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', v) ORDER BY x",
    );
    expect(clusterDDL('CREATE TABLE t (x UInt8) ENGINE = MergeTree ORDER BY x', 'main')).toContain(
      "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')",
    );
    expect(clusterDDL('ALTER TABLE db.t ADD COLUMN y UInt8', 'main')).toBe('ALTER TABLE db.t ON CLUSTER main ADD COLUMN y UInt8');
    expect(clusterDDL('CREATE MATERIALIZED VIEW IF NOT EXISTS mv TO d AS SELECT 1', 'main')).toBe(
      'CREATE MATERIALIZED VIEW IF NOT EXISTS mv ON CLUSTER main TO d AS SELECT 1',
    );
    // already replicated or already on a cluster: left alone
    const done = "CREATE TABLE t ON CLUSTER c (x UInt8) ENGINE = ReplicatedMergeTree('/p', '{replica}') ORDER BY x";
    expect(clusterDDL(done, 'main')).toBe(done);
    expect(() => clusterDDL('SELECT 1', 'bad name')).toThrow(/cluster name/);
  });

  it('covers the migrations table, the service migrations and representative fixtures', () => {
    expect(statements.length).toBeGreaterThanOrEqual(4);
  });

  it.each(statements)('$file: generated cluster DDL parses', async ({ sql }) => {
    const out = clusterDDL(sql, 'traceloom_cluster');
    const formatted = await format(out);
    // A data statement (015's one copy of a rollup) runs on the node that migrates: the replicated
    // engine carries its rows to the other replicas. Only schema statements go ON CLUSTER.
    if (/^INSERT\b/i.test(sql)) {
      expect(out).toBe(sql);
      return;
    }
    expect(formatted).toContain('ON CLUSTER traceloom_cluster');
    if (/ENGINE\s*=/.test(sql))
      expect(formatted).toMatch(
        /ENGINE = Replicated\w*MergeTree\('\/clickhouse\/tables\/\{shard\}\/\{database\}\/\{table\}', '\{replica\}'/,
      );
  });

  it('the migration record table parses as cluster DDL', async () => {
    expect(await format(clusterDDL(CLICKHOUSE_MIGRATIONS_TABLE, 'c1'))).toContain(
      "ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')",
    );
  });
});
