// The `project_retention` table (PostgreSQL): every SQL statement that reads or writes it.
import type { Queryable } from '../stores/postgres.ts';

export interface RetentionSetting {
  project_id: string;
  days: number;
}

export function createRetentionSettings(pg: Queryable) {
  return {
    async get(projectId: string): Promise<{ days: number | null; updated_at: Date } | undefined> {
      const [row] = await pg.query<{ days: number | null; updated_at: Date }>(
        'SELECT days, updated_at FROM project_retention WHERE project_id = $1',
        [projectId],
      );
      return row;
    },

    /** Sets (or clears, with null) a project's retention. */
    async put(projectId: string, days: number | null): Promise<{ days: number | null; updated_at: Date }> {
      const [row] = await pg.query<{ days: number | null; updated_at: Date }>(
        `INSERT INTO project_retention (project_id, days) VALUES ($1, $2)
         ON CONFLICT (project_id) DO UPDATE SET days = EXCLUDED.days, updated_at = now()
         RETURNING days, updated_at`,
        [projectId, days],
      );
      return row!;
    },

    /** Every project with a retention, by project id. */
    async all(): Promise<RetentionSetting[]> {
      return pg.query<RetentionSetting & Record<string, unknown>>(
        'SELECT project_id, days FROM project_retention WHERE days IS NOT NULL ORDER BY project_id',
      );
    },
  };
}

export type RetentionSettings = ReturnType<typeof createRetentionSettings>;
