// Every ClickHouse query the service sends, as it is sent on each topology (src/stores/topology.ts):
// the same text, with the topology's settings. The SQL is read from the source (every string and
// template literal of a module that talks to ClickHouse), so a query added later is checked too.
// On a cluster the service names only the Distributed tables (never a `_local` one); FINAL, which
// collapses within a shard, reads only tables whose versions of a row share a shard (keyed by
// trace); and an IN or JOIN subquery, which distributed_product_mode = 'local' runs on each shard
// against its local tables, reads tables keyed by trace and matches on trace_id, so each shard
// holds both sides of every pair it matches.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CLICKHOUSE_MIGRATIONS_TABLE, loadMigrations, splitStatements } from '../../src/stores/migrate.ts';
import { SHARD_BY_TRACE, renderDDL, tablesCreatedBy, topologySettings, type Topology } from '../../src/stores/topology.ts';

const migrations = [
  CLICKHOUSE_MIGRATIONS_TABLE,
  ...loadMigrations(path.resolve('schema/clickhouse')).flatMap((m) => splitStatements(m.sql)),
];
const tables = tablesCreatedBy(migrations);
const TOPOLOGIES: Topology[] = [{ kind: 'single' }, { kind: 'cluster', cluster: 'traceloom' }, { kind: 'cloud' }];

/** Per topology: the tables and views its rendered migrations create, and each Distributed table's sharding key. */
function schemaOf(topology: Topology) {
  const created = new Set<string>();
  const keys = new Map<string, string>();
  for (const sql of migrations)
    for (const s of renderDDL(sql, topology, tables)) {
      const m = /^\s*CREATE\s+(?:TABLE|MATERIALIZED\s+VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/i.exec(s);
      if (m) created.add(m[1]!);
      const d = /^CREATE TABLE IF NOT EXISTS (\w+) .* ENGINE = Distributed\(\w+, currentDatabase\(\), \w+, (.+)\)$/.exec(s);
      if (d) keys.set(d[1]!, d[2]!);
    }
  return { created, keys };
}

function* sourceFiles(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* sourceFiles(p);
    else if (p.endsWith('.ts')) yield p;
  }
}

/**
 * The SQL literals of the modules that talk to ClickHouse; `${…}` stands for an interpolation, but
 * for a constant of the module (`${AGG}`), which is put in.
 */
function serviceQueries(): Array<{ file: string; sql: string }> {
  const out: Array<{ file: string; sql: string }> = [];
  for (const file of sourceFiles(path.resolve('src'))) {
    const text = fs.readFileSync(file, 'utf8');
    if (!/ClickHouseStore/.test(text) || file.endsWith(path.join('stores', 'topology.ts'))) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const constants = new Map<string, string>();
    for (const st of source.statements)
      if (ts.isVariableStatement(st))
        for (const d of st.declarationList.declarations)
          if (
            ts.isIdentifier(d.name) &&
            d.initializer &&
            (ts.isStringLiteral(d.initializer) || ts.isNoSubstitutionTemplateLiteral(d.initializer))
          )
            constants.set(d.name.text, d.initializer.text);
    const visit = (node: ts.Node): void => {
      let sql: string | undefined;
      if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isStringLiteral(node)) sql = node.text;
      else if (ts.isTemplateExpression(node))
        sql =
          node.head.text +
          node.templateSpans
            .map((s) => (ts.isIdentifier(s.expression) ? (constants.get(s.expression.text) ?? '${…}') : '${…}') + s.literal.text)
            .join('');
      if (sql !== undefined && /\b(SELECT|INSERT INTO|ALTER TABLE)\b/.test(sql))
        out.push({ file: path.relative(process.cwd(), file), sql });
      if (!ts.isTemplateExpression(node)) ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

/** The tables a statement names (after FROM, JOIN, INTO, TABLE), interpolations and table functions aside. */
function tablesNamed(sql: string): string[] {
  return [...sql.matchAll(/\b(?:FROM|(?<!ARRAY\s+)JOIN|INTO|TABLE)\s+(\w+)\b(?!\s*\()/gi)]
    .map((m) => m[1]!)
    .filter((t) => !/^(SELECT|FUNCTION)$/i.test(t));
}

const queries = serviceQueries();
const clickhouseQueries = queries.filter((q) => tablesNamed(q.sql).some((t) => tables.has(t) || t.endsWith('_local')));

describe('service queries per topology', () => {
  it('finds the service queries (reads, inserts, backfills)', () => {
    expect(clickhouseQueries.length).toBeGreaterThan(60);
    const files = new Set(clickhouseQueries.map((q) => q.file));
    for (const f of [
      'src/executions/execution-listing-repository.ts',
      'src/scores/score-repository.ts',
      'src/spend/analytics-repository.ts',
    ])
      expect(files).toContain(f);
  });

  for (const topology of TOPOLOGIES) {
    const schema = schemaOf(topology);
    it(`${topology.kind}: every query names tables of the rendered schema, and none of their local tables`, () => {
      for (const { file, sql } of clickhouseQueries) {
        for (const t of tablesNamed(sql)) {
          if (!tables.has(t) && !t.endsWith('_local')) continue; // a subquery alias, a CTE, system.*
          expect(t, `${file}: ${sql.slice(0, 120)}`).not.toMatch(/_local$/);
          expect(schema.created, `${file} reads ${t}`).toContain(t);
        }
      }
      // The text is the same on every topology; what differs is what the client sends with it.
      expect(Object.keys(topologySettings(topology)).length > 0).toBe(topology.kind === 'cluster');
    });
  }

  const cluster = schemaOf({ kind: 'cluster', cluster: 'traceloom' });
  it('cluster: FINAL reads only tables whose rows of a key share a shard (sharded by trace, trace_id in the sort key)', () => {
    // A table sharded by trace whose sort key has no trace_id (score_ids: a score moved to another
    // trace has rows of one id on two shards) is settled in code, never with FINAL.
    const orderBy = new Map<string, string>();
    for (const sql of migrations) {
      const m = /^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)[\s\S]*\bORDER\s+BY\s+\(([^)]*)\)/i.exec(sql);
      if (m) orderBy.set(m[1]!, m[2]!);
    }
    expect(orderBy.get('score_ids')).not.toMatch(/trace_id/);
    let finals = 0;
    for (const { file, sql } of clickhouseQueries) {
      for (const m of sql.matchAll(/\bFROM\s+(\w+)(?:\s+AS\s+\w+)?\s+FINAL\b/gi)) {
        finals++;
        expect(cluster.keys.get(m[1]!), `${file}: ${m[0]}`).toBe(SHARD_BY_TRACE);
        expect(orderBy.get(m[1]!), `${file}: ${m[0]}`).toMatch(/\btrace_id\b/);
      }
    }
    expect(finals).toBeGreaterThan(10);
  });

  it('cluster: every IN or JOIN subquery reads tables keyed by trace and matches on trace_id (distributed_product_mode = local)', () => {
    let subqueries = 0;
    for (const { file, sql } of clickhouseQueries) {
      for (const m of sql.matchAll(/\bIN\s*\(\s*SELECT\s+([\s\S]*?)\s+FROM\s+(\w+)/gi)) {
        subqueries++;
        expect(cluster.keys.get(m[2]!), `${file}: ${m[0]}`).toBe(SHARD_BY_TRACE);
        expect(m[1], `${file}: ${m[0]}`).toMatch(/\btrace_id\b/);
        // the left side of IN names trace_id too
        expect(sql.slice(Math.max(0, m.index - 40), m.index), `${file}: ${m[0]}`).toMatch(/trace_id/);
      }
      for (const m of sql.matchAll(/(?<!ARRAY\s+)\bJOIN\s+(\(|\w+)([\s\S]*?)\bON\s+([^\n]+)/gi)) {
        subqueries++;
        expect(m[3], `${file}: ${m[0].slice(0, 200)}`).toMatch(/\b\w+\.trace_id\s*=\s*\w+\.trace_id\b/);
        const main = /\bFROM\s+(\w+)(?:\s+AS\s+\w+)?(?:\s+FINAL)?\s+(?:INNER\s+|LEFT\s+)?$/i.exec(sql.slice(0, m.index));
        expect(main && cluster.keys.get(main[1]!), `${file}: the table joined from`).toBe(SHARD_BY_TRACE);
      }
    }
    expect(subqueries).toBeGreaterThanOrEqual(4);
  });

  it('cluster: reads of a rollup (rows of a key on several shards) add them up rather than take one row', () => {
    const rollups = [...cluster.keys].filter(([, k]) => k !== SHARD_BY_TRACE).map(([t]) => t);
    let reads = 0;
    for (const { file, sql } of clickhouseQueries) {
      if (/^\s*INSERT\b/i.test(sql)) continue;
      const read = tablesNamed(sql).filter((t) => rollups.includes(t) && t !== 'schema_migrations');
      if (read.length === 0) continue;
      reads++;
      expect(sql, `${file} reads ${read.join()}`).toMatch(/\b(sum|sumMap|min|max|count|\w+Merge)\s*\(|\bGROUP BY\b|\bLIMIT 1\b/i);
      expect(sql, `${file}: FINAL on a rollup would settle each shard apart`).not.toMatch(new RegExp(`\\b(${read.join('|')})\\s+FINAL\\b`));
    }
    expect(reads).toBeGreaterThan(5);
  });
});
