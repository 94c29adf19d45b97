// The ClickHouse topologies (docs/operations.md, "ClickHouse topologies"). Migrations are written
// once, for a single node; this renders each statement for the topology the service runs on:
//
// - single: as written.
// - cluster (self-managed, CLICKHOUSE_CLUSTER): each table `X` becomes `X_local`, a Replicated*
//   table on every shard (ON CLUSTER, {shard}/{replica} macros), and `X`, a Distributed table over
//   it. The service names only `X`: reads and inserts go through the Distributed tables. Materialized
//   views read the local source and write the local target, so a rollup row lives on the shard of
//   the executions (scores) it sums; readers re-aggregate across shards (sum/GROUP BY, -Merge).
// - cloud (ClickHouse Cloud): no ON CLUSTER, no Replicated engine names, no Distributed tables:
//   the service creates MergeTree tables and Cloud makes them SharedMergeTree.
//
// Sharding (cluster): a table with a `trace_id` column is sharded by cityHash64(project_id,
// trace_id): a trace's spans, log events, executions (every version and cancel row), template
// usages, scores and index rows are on one shard, so FINAL and collapsing in code stay shard-local
// and trace-keyed IN subqueries run shard-local (distributed_product_mode = 'local'). Rollups have
// no trace: their rows are written by views on the shard of their source rows, so no expression of
// their own columns says where a row is. Their Distributed key is rand(): it spreads the rows a
// backfill inserts through the Distributed table, and optimize_skip_unused_shards can never use it
// to skip a shard that holds rows of the project read.
import type { ClickHouseSettings } from '@clickhouse/client';

export type Topology = { kind: 'single' } | { kind: 'cluster'; cluster: string } | { kind: 'cloud' };
export type TopologyKind = Topology['kind'];

export const SHARD_BY_TRACE = 'cityHash64(project_id, trace_id)';
export const SHARD_AT_RANDOM = 'rand()';
/** Replicated deduplication kept per table (blocks) and for how long: a retried batch or an ingest log replayed within a week is stored once. */
const DEDUP_WINDOW = 10_000;
const DEDUP_WINDOW_SECONDS = 7 * 86_400;

export function topologyOf(ch: { topology: TopologyKind; cluster: string | undefined }): Topology {
  if (ch.topology === 'cluster') {
    if (!ch.cluster) throw new Error('the cluster topology needs a cluster name');
    return { kind: 'cluster', cluster: ch.cluster };
  }
  return { kind: ch.topology };
}

/** The table that holds the rows of `table`: its local table on a cluster. */
export function storageTable(table: string, topology: Topology): string {
  return topology.kind === 'cluster' ? localTable(table) : table;
}

export function localTable(table: string): string {
  return `${table}_local`;
}

/**
 * Settings of every query the service sends, per topology. On a cluster: inserts through a
 * Distributed table are synchronous (acknowledged once every shard stored its rows, so the batch
 * writer's retry with the same insert_deduplication_token is deduplicated on each shard: the rows
 * of a batch go to the same shards every time, their sharding key being a function of the rows);
 * reads that name a trace skip the other shards; IN/JOIN subqueries over Distributed tables run on
 * each shard against its local tables (every such subquery is trace-keyed: test/stores/topology-
 * queries.test.ts). No insert_quorum: a sequential quorum through a Distributed table fails or
 * blocks a batch while another is in flight.
 */
export function topologySettings(topology: Topology): ClickHouseSettings {
  if (topology.kind !== 'cluster') return {};
  return {
    distributed_foreground_insert: 1,
    optimize_skip_unused_shards: 1,
    distributed_product_mode: 'local',
  };
}

const NAME = '(?:`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)';
const CREATE_TABLE = new RegExp(`^\\s*CREATE\\s+TABLE\\s+(IF\\s+NOT\\s+EXISTS\\s+)?(${NAME})\\s*\\(`, 'i');
const CREATE_VIEW = new RegExp(
  `^\\s*CREATE\\s+MATERIALIZED\\s+VIEW\\s+(IF\\s+NOT\\s+EXISTS\\s+)?(${NAME})\\s+TO\\s+(${NAME})\\s+AS\\s+([\\s\\S]*)$`,
  'i',
);
const ALTER = new RegExp(`^\\s*ALTER\\s+TABLE\\s+(${NAME})\\s+([\\s\\S]*)$`, 'i');
const DROP = new RegExp(`^\\s*DROP\\s+(TABLE|VIEW)\\s+(IF\\s+EXISTS\\s+)?(${NAME})(\\s[\\s\\S]*)?$`, 'i');
const TRUNCATE = new RegExp(`^\\s*TRUNCATE\\s+TABLE\\s+(IF\\s+EXISTS\\s+)?(${NAME})\\s*$`, 'i');
const ENGINE = /(ENGINE\s*=\s*)((?!Replicated|Shared)[A-Za-z]*MergeTree)(\s*\(([^)]*)\))?/i;
/** ALTERs a Distributed table takes too (its columns mirror the local table's). */
const COLUMN_ALTER = /^(ADD|DROP|MODIFY|RENAME|COMMENT)\s+COLUMN\b/i;

function replicatedDedup(sql: string): string {
  return sql.replace(
    /\bnon_replicated_deduplication_window\s*=\s*\d+/i,
    `replicated_deduplication_window = ${DEDUP_WINDOW}, replicated_deduplication_window_seconds = ${DEDUP_WINDOW_SECONDS}`,
  );
}

/** The key a table is sharded by: a trace's rows together when the table has traces, else none that can skip shards. */
export function shardingKeyOf(createTable: string): string {
  return /[(,]\s*trace_id\s+[A-Za-z]/.test(createTable) ? SHARD_BY_TRACE : SHARD_AT_RANDOM;
}

/** The tables the statements create (what a view's FROM may name). */
export function tablesCreatedBy(statements: readonly string[]): Set<string> {
  const tables = new Set<string>();
  for (const s of statements) {
    const m = CREATE_TABLE.exec(s);
    if (m) tables.add(m[2]!);
  }
  return tables;
}

function fromLocal(select: string, tables: ReadonlySet<string>): string {
  return select.replace(
    new RegExp(`\\b(FROM|(?<!ARRAY\\s+)JOIN)(\\s+)(${NAME})\\b(?!\\s*\\()`, 'gi'),
    (whole, kw: string, ws: string, name: string) => (tables.has(name) ? `${kw}${ws}${localTable(name)}` : whole),
  );
}

/**
 * One migration statement as the topology runs it (one statement may become several: a table and
 * its Distributed table). `tables`: every table the migrations create, so a view's source is found.
 */
export function renderDDL(statement: string, topology: Topology, tables: ReadonlySet<string>): string[] {
  if (topology.kind === 'single') return [statement];
  if (topology.kind === 'cloud') return [ENGINE.test(statement) ? replicatedDedup(statement) : statement];
  const c = topology.cluster;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(c)) throw new Error(`invalid cluster name: ${c}`);
  const onCluster = `ON CLUSTER ${c}`;

  let m = CREATE_TABLE.exec(statement);
  if (m) {
    const name = m[2]!;
    const local = localTable(name);
    const ifNot = m[1] ? 'IF NOT EXISTS ' : '';
    const body = statement.slice(m[0].length - 1);
    const engined = body.replace(ENGINE, (_x, prefix: string, engine: string, _p: string | undefined, args: string | undefined) => {
      const rest = args && args.trim() ? `, ${args.trim()}` : '';
      return `${prefix}Replicated${engine}('/clickhouse/tables/{shard}/{database}/{table}', '{replica}'${rest})`;
    });
    return [
      `CREATE TABLE ${ifNot}${local} ${onCluster} ${replicatedDedup(engined)}`,
      `CREATE TABLE ${ifNot}${name} ${onCluster} AS ${local} ENGINE = Distributed(${c}, currentDatabase(), ${local}, ${shardingKeyOf(statement)})`,
    ];
  }
  m = CREATE_VIEW.exec(statement);
  if (m) {
    const [, ifNot, view, target, select] = m;
    const to = tables.has(target!) ? localTable(target!) : target!;
    return [`CREATE MATERIALIZED VIEW ${ifNot ?? ''}${view} ${onCluster} TO ${to} AS ${fromLocal(select!, tables)}`];
  }
  m = ALTER.exec(statement);
  if (m) {
    const [, table, action] = m;
    if (!tables.has(table!)) return [`ALTER TABLE ${table} ${onCluster} ${action}`];
    const local = `ALTER TABLE ${localTable(table!)} ${onCluster} ${action}`;
    // Indexes, TTLs, settings and mutations are the stored rows'; a column is both tables'.
    return COLUMN_ALTER.test(action!) ? [local, `ALTER TABLE ${table} ${onCluster} ${action}`] : [local];
  }
  m = DROP.exec(statement);
  if (m) {
    const [, kind, ifExists, name, rest] = m;
    const drop = (n: string) => `DROP ${kind!.toUpperCase()} ${ifExists ?? ''}${n} ${onCluster}${rest ?? ''}`;
    return kind!.toUpperCase() === 'TABLE' && tables.has(name!) ? [drop(name!), drop(localTable(name!))] : [drop(name!)];
  }
  m = TRUNCATE.exec(statement);
  if (m) return [`TRUNCATE TABLE ${m[1] ?? ''}${tables.has(m[2]!) ? localTable(m[2]!) : m[2]} ${onCluster}`];
  // INSERT … SELECT (a backfill) goes through the Distributed tables, read and written like the service's.
  if (/^\s*(INSERT|SELECT|WITH)\b/i.test(statement)) return [statement];
  throw new Error(`no cluster rendering for: ${statement.slice(0, 80)}`);
}
