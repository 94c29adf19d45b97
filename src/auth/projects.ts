// Projects, users and memberships in PostgreSQL. Projects and memberships named by a valid
// token are created on first sight.
import type { Queryable } from '../stores/postgres.ts';
import type { Role } from './principal.ts';

export async function ensureProject(db: Queryable, projectId: string, name = projectId): Promise<void> {
  await db.query('INSERT INTO projects (project_id, name) VALUES ($1, $2) ON CONFLICT (project_id) DO NOTHING', [projectId, name]);
}

/** The user, each project and the membership with the token's role (the token is authoritative). */
export async function ensureMemberships(db: Queryable, userId: string, projects: ReadonlyMap<string, Role>): Promise<void> {
  await db.query('INSERT INTO users (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING', [userId]);
  for (const [projectId, role] of projects) {
    await ensureProject(db, projectId);
    await db.query(
      `INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role, updated_at = now()
       WHERE memberships.role <> EXCLUDED.role`,
      [projectId, userId, role],
    );
  }
}

export async function projectNames(db: Queryable, projectIds: readonly string[]): Promise<Map<string, string>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db.query<{ project_id: string; name: string }>('SELECT project_id, name FROM projects WHERE project_id = ANY($1::text[])', [projectIds]);
  return new Map(rows.map((r) => [r.project_id, r.name]));
}

export async function projectExists(db: Queryable, projectId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM projects WHERE project_id = $1', [projectId]);
  return rows.length > 0;
}
