// Turns single-node ClickHouse DDL into cluster DDL: `ON CLUSTER <name>` on every schema
// statement and Replicated* engines for every *MergeTree, with the usual {shard}/{replica}
// macros. Migrations are written once, for a single node; this is applied when
// CLICKHOUSE_CLUSTER is set.

const NAME = '(?:`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)(?:\\.(?:`[^`]+`|[A-Za-z_][A-Za-z0-9_]*))?';

const SCHEMA_STATEMENT = new RegExp(
  `^(\\s*(?:CREATE\\s+(?:OR\\s+REPLACE\\s+)?(?:TABLE|(?:MATERIALIZED\\s+)?VIEW|DICTIONARY|DATABASE)(?:\\s+IF\\s+NOT\\s+EXISTS)?` +
    `|ALTER\\s+TABLE|DROP\\s+(?:TABLE|VIEW|DICTIONARY|DATABASE)(?:\\s+IF\\s+EXISTS)?|TRUNCATE\\s+TABLE(?:\\s+IF\\s+EXISTS)?|RENAME\\s+TABLE)` +
    `\\s+${NAME})`,
  'i',
);

const ENGINE = /(ENGINE\s*=\s*)((?!Replicated)[A-Za-z]*MergeTree)(\s*\(([^)]*)\))?/i;

export function clusterDDL(statement: string, cluster: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(cluster)) throw new Error(`invalid cluster name: ${cluster}`);
  let out = statement;
  if (SCHEMA_STATEMENT.test(out) && !/\bON\s+CLUSTER\b/i.test(out)) {
    out = out.replace(SCHEMA_STATEMENT, `$1 ON CLUSTER ${cluster}`);
  }
  out = out.replace(ENGINE, (_m, prefix: string, engine: string, _parens: string | undefined, args: string | undefined) => {
    const replicaArgs = `'/clickhouse/tables/{shard}/{database}/{table}', '{replica}'`;
    const rest = args && args.trim() ? `, ${args.trim()}` : '';
    return `${prefix}Replicated${engine}(${replicaArgs}${rest})`;
  });
  return out;
}
