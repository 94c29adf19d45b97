// PostgreSQL side of the scheduled chargeback statements (schema/postgres/023, statement_exports):
// which (project, month, dimension) were written, with their manifest; the primary key makes each
// one happen once, as execution_exports does for days.
import type { Queryable } from '../stores/postgres.ts';

export function createStatementExportStore(pg: Queryable) {
  return {
    /** 'YYYY-MM dimension' of the months in [first, last] ('YYYY-MM-01') already exported. */
    async exported(projectId: string, first: string, last: string): Promise<Set<string>> {
      const rows = await pg.query<{ month: string; dimension: string }>(
        `SELECT to_char(month, 'YYYY-MM') AS month, dimension FROM statement_exports
         WHERE project_id = $1 AND month BETWEEN $2::date AND $3::date`,
        [projectId, first, last],
      );
      return new Set(rows.map((r) => `${r.month} ${r.dimension}`));
    },
    /** Records a written statement; false when another worker recorded it first. */
    async record(projectId: string, month: string, dimension: string, target: string, manifest: object): Promise<boolean> {
      const rows = await pg.query(
        `INSERT INTO statement_exports (project_id, month, dimension, target, manifest) VALUES ($1, $2::date, $3, $4, $5)
         ON CONFLICT DO NOTHING RETURNING month`,
        [projectId, `${month}-01`, dimension, target, JSON.stringify(manifest)],
      );
      return rows.length > 0;
    },
    async manifest(projectId: string, month: string, dimension: string): Promise<object | undefined> {
      const rows = await pg.query<{ manifest: object }>(
        'SELECT manifest FROM statement_exports WHERE project_id = $1 AND month = $2::date AND dimension = $3',
        [projectId, `${month}-01`, dimension],
      );
      return rows[0]?.manifest;
    },
  };
}

export type StatementExportStore = ReturnType<typeof createStatementExportStore>;
