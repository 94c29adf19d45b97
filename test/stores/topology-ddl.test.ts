// Every ClickHouse migration statement, rendered for each topology (src/stores/topology.ts), is
// accepted by the engine's parser (chDB's formatQuery: chDB has no cluster and no Keeper, so the
// cluster and Cloud DDL is proved at the parser), and the cluster layout holds together: every
// table has its replicated local table and a Distributed one, every view reads and writes local
// tables, and a view's target keyed by trace is fed from a source keyed by trace.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.ts';
import { CLICKHOUSE_MIGRATIONS_TABLE, loadMigrations, splitStatements } from '../../src/stores/migrate.ts';
import { SHARD_AT_RANDOM, SHARD_BY_TRACE, renderDDL, tablesCreatedBy, topologySettings, type Topology } from '../../src/stores/topology.ts';
import { testEnv } from '../helpers/env.ts';

const dirs = [path.resolve('schema/clickhouse'), fileURLToPath(new URL('../fixtures/schema/clickhouse/', import.meta.url))];
const statements = [
  { file: 'schema_migrations', sql: CLICKHOUSE_MIGRATIONS_TABLE },
  ...dirs.flatMap((d) =>
    loadMigrations(d).flatMap((m) =>
      splitStatements(m.sql).map((sql) => ({ file: `${path.basename(path.dirname(d))}/${m.version}_${m.name}`, sql })),
    ),
  ),
];
const tables = tablesCreatedBy(statements.map((s) => s.sql));
const CLUSTER: Topology = { kind: 'cluster', cluster: 'traceloom' };
const TOPOLOGIES: Topology[] = [{ kind: 'single' }, CLUSTER, { kind: 'cloud' }];

let ch: ClickHouseStore;
beforeAll(async () => {
  ch = createClickHouse((await testEnv()).config);
});
afterAll(() => ch.close());

async function format(sql: string): Promise<string> {
  const [row] = await ch.query<{ q: string }>('SELECT formatQuery({sql:String}) AS q', { sql });
  return row!.q;
}

const render = (sql: string, t: Topology) => renderDDL(sql, t, tables);

describe('topology DDL', () => {
  it('renders a table, a view, an ALTER, a TRUNCATE and a DROP per topology', () => {
    const table =
      'CREATE TABLE IF NOT EXISTS t (project_id String, trace_id String) ENGINE = ReplacingMergeTree(v) ORDER BY x SETTINGS non_replicated_deduplication_window = 10000';
    const known = new Set(['t', 'r']);
    expect(renderDDL(table, { kind: 'single' }, known)).toEqual([table]);
    expect(renderDDL(table, CLUSTER, known)).toEqual([
      "CREATE TABLE IF NOT EXISTS t_local ON CLUSTER traceloom (project_id String, trace_id String) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', v) ORDER BY x SETTINGS replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 604800",
      'CREATE TABLE IF NOT EXISTS t ON CLUSTER traceloom AS t_local ENGINE = Distributed(traceloom, currentDatabase(), t_local, cityHash64(project_id, trace_id))',
    ]);
    expect(renderDDL(table, { kind: 'cloud' }, known)).toEqual([
      'CREATE TABLE IF NOT EXISTS t (project_id String, trace_id String) ENGINE = ReplacingMergeTree(v) ORDER BY x SETTINGS replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 604800',
    ]);
    expect(renderDDL('CREATE TABLE r (project_id String, day Date) ENGINE = SummingMergeTree ORDER BY x', CLUSTER, known)[1]).toContain(
      'Distributed(traceloom, currentDatabase(), r_local, rand())',
    );
    expect(
      renderDDL('CREATE MATERIALIZED VIEW IF NOT EXISTS mv TO r AS SELECT a FROM (SELECT a FROM t) JOIN t USING a', CLUSTER, known),
    ).toEqual([
      'CREATE MATERIALIZED VIEW IF NOT EXISTS mv ON CLUSTER traceloom TO r_local AS SELECT a FROM (SELECT a FROM t_local) JOIN t_local USING a',
    ]);
    expect(renderDDL('ALTER TABLE t ADD COLUMN IF NOT EXISTS y UInt8', CLUSTER, known)).toEqual([
      'ALTER TABLE t_local ON CLUSTER traceloom ADD COLUMN IF NOT EXISTS y UInt8',
      'ALTER TABLE t ON CLUSTER traceloom ADD COLUMN IF NOT EXISTS y UInt8',
    ]);
    expect(renderDDL('ALTER TABLE t ADD INDEX IF NOT EXISTS i y TYPE minmax', CLUSTER, known)).toEqual([
      'ALTER TABLE t_local ON CLUSTER traceloom ADD INDEX IF NOT EXISTS i y TYPE minmax',
    ]);
    expect(renderDDL('ALTER TABLE t MODIFY TTL toDateTime(x) + INTERVAL 1 DAY', CLUSTER, known)).toEqual([
      'ALTER TABLE t_local ON CLUSTER traceloom MODIFY TTL toDateTime(x) + INTERVAL 1 DAY',
    ]);
    expect(renderDDL('TRUNCATE TABLE IF EXISTS t', CLUSTER, known)).toEqual(['TRUNCATE TABLE IF EXISTS t_local ON CLUSTER traceloom']);
    expect(renderDDL('DROP VIEW IF EXISTS mv', CLUSTER, known)).toEqual(['DROP VIEW IF EXISTS mv ON CLUSTER traceloom']);
    expect(renderDDL('DROP TABLE IF EXISTS t', CLUSTER, known)).toEqual([
      'DROP TABLE IF EXISTS t ON CLUSTER traceloom',
      'DROP TABLE IF EXISTS t_local ON CLUSTER traceloom',
    ]);
    const insert = 'INSERT INTO r SELECT * FROM t';
    expect(renderDDL(insert, CLUSTER, known)).toEqual([insert]);
    expect(() => renderDDL('SELECT 1', { kind: 'cluster', cluster: 'bad name' }, known)).toThrow(/cluster name/);
    expect(() => renderDDL('OPTIMIZE TABLE t', CLUSTER, known)).toThrow(/no cluster rendering/);
  });

  it('covers the migrations table, the service migrations and representative fixtures', () => {
    expect(statements.length).toBeGreaterThanOrEqual(100);
    expect(tables.has('executions') && tables.has('spans') && tables.has('fx_widget_events')).toBe(true);
  });

  for (const topology of TOPOLOGIES) {
    it.each(statements)(`${topology.kind}: $file: every rendered statement parses`, async ({ sql }) => {
      const out = render(sql, topology);
      for (const s of out) {
        const formatted = await format(s);
        if (topology.kind !== 'cluster') {
          expect(formatted).not.toMatch(/ON CLUSTER|Replicated\w*MergeTree|Distributed\(|_local\b/);
          continue;
        }
        if (/^INSERT\b/i.test(s)) {
          // A backfill reads and writes the Distributed tables, as the service does.
          expect(s).toBe(sql);
          expect(s).not.toMatch(/_local\b/);
          continue;
        }
        expect(formatted).toContain('ON CLUSTER traceloom');
        if (/ENGINE = \w*MergeTree/.test(formatted))
          expect(formatted).toMatch(
            /ENGINE = Replicated\w*MergeTree\('\/clickhouse\/tables\/\{shard\}\/\{database\}\/\{table\}', '\{replica\}'/,
          );
      }
      if (topology.kind === 'cloud' && /non_replicated_deduplication_window/.test(sql))
        expect(out.join()).toContain('replicated_deduplication_window = 10000');
    });
  }

  it('cluster: every table is a replicated local table behind a Distributed one of the same name', () => {
    const created = statements.filter((s) => /^\s*CREATE\s+TABLE/i.test(s.sql));
    expect(created.length).toBe(tables.size);
    for (const { sql } of created) {
      const [local, distributed] = render(sql, CLUSTER);
      const name = /CREATE TABLE IF NOT EXISTS (\w+) ON CLUSTER/.exec(distributed!)![1]!;
      expect(local).toContain(`CREATE TABLE IF NOT EXISTS ${name}_local ON CLUSTER traceloom`);
      expect(distributed).toContain(`AS ${name}_local ENGINE = Distributed(traceloom, currentDatabase(), ${name}_local, `);
      // A table with traces keeps each trace on one shard; the others never let a read skip a shard.
      expect(distributed).toContain(/[(,]\s*trace_id\s+[A-Za-z]/.test(sql) ? SHARD_BY_TRACE : SHARD_AT_RANDOM);
    }
  });

  it('cluster: views read and write local tables; a target keyed by trace is fed from sources keyed by trace', () => {
    const keyOf = new Map<string, string>();
    for (const { sql } of statements.filter((s) => /^\s*CREATE\s+TABLE/i.test(s.sql))) {
      const d = render(sql, CLUSTER)[1]!;
      keyOf.set(/AS (\w+)_local/.exec(d)![1]!, /, ([^,]+\))\)$/.exec(d)![1]!);
    }
    const views = statements.filter((s) => /^\s*CREATE\s+MATERIALIZED\s+VIEW/i.test(s.sql));
    expect(views.length).toBeGreaterThan(10);
    for (const { sql } of views) {
      const [view] = render(sql, CLUSTER);
      const target = /\bTO (\w+)/.exec(view!)![1]!;
      expect(target).toMatch(/_local$/);
      const sources = [...view!.matchAll(/\b(?:FROM|(?<!ARRAY\s+)JOIN)\s+(\w+)\b(?!\s*\()/g)].map((m) => m[1]!);
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) {
        expect(source).toMatch(/_local$/);
        if (keyOf.get(target.replace(/_local$/, '')) === SHARD_BY_TRACE) {
          expect(keyOf.get(source.replace(/_local$/, ''))).toBe(SHARD_BY_TRACE);
          expect(view).toMatch(/\btrace_id\b/);
        }
      }
    }
  });

  it('the settings of each topology exist in the engine', async () => {
    for (const topology of TOPOLOGIES) {
      const settings = topologySettings(topology);
      const names = Object.keys(settings);
      if (topology.kind !== 'cluster') {
        expect(names).toEqual([]);
        continue;
      }
      expect(settings).toMatchObject({
        distributed_foreground_insert: 1,
        optimize_skip_unused_shards: 1,
        distributed_product_mode: 'local',
      });
      expect(settings).not.toHaveProperty('insert_quorum');
      const known = await ch.query<{ name: string }>('SELECT name FROM system.settings WHERE name IN {n:Array(String)}', { n: names });
      expect(known.map((k) => k.name).sort()).toEqual(names.sort());
    }
  });
});
