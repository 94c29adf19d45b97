// PostgreSQL side of scheduled exports: which (project, day) were written, with their manifest
// (schema/postgres/008, execution_exports). The primary key makes each day's export happen once.
import type { Queryable } from '../stores/postgres.ts';
import { listProjects } from '../auth/project-repository.ts';

export function createExportStore(pg: Queryable) {
  return {
    async projects(): Promise<string[]> {
      return (await listProjects(pg, 'all')).map((r) => r.project_id);
    },
    /** Days of [from, to] ('YYYY-MM-DD') already exported for the project. */
    async exported(projectId: string, from: string, to: string): Promise<Set<string>> {
      const rows = await pg.query<{ day: string }>(
        "SELECT to_char(day, 'YYYY-MM-DD') AS day FROM execution_exports WHERE project_id = $1 AND day BETWEEN $2::date AND $3::date",
        [projectId, from, to],
      );
      return new Set(rows.map((r) => r.day));
    },
    /** Records a written day; false when another worker recorded it first. */
    async record(projectId: string, day: string, target: string, manifest: object): Promise<boolean> {
      const rows = await pg.query(
        'INSERT INTO execution_exports (project_id, day, target, manifest) VALUES ($1, $2::date, $3, $4) ON CONFLICT DO NOTHING RETURNING day',
        [projectId, day, target, JSON.stringify(manifest)],
      );
      return rows.length > 0;
    },
    async manifest(projectId: string, day: string): Promise<object | undefined> {
      const rows = await pg.query<{ manifest: object }>('SELECT manifest FROM execution_exports WHERE project_id = $1 AND day = $2::date', [
        projectId,
        day,
      ]);
      return rows[0]?.manifest;
    },
  };
}

export type ExportStore = ReturnType<typeof createExportStore>;
