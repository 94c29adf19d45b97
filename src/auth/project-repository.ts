// Projects, users and memberships in PostgreSQL. Projects and memberships named by a valid
// token are created on first sight.
import type { Queryable } from '../stores/postgres.ts';
import type { Role } from './principal.ts';
import { conflict } from '../errors.ts';

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
  const rows = await db.query<{ project_id: string; name: string }>(
    'SELECT project_id, name FROM projects WHERE project_id = ANY($1::text[])',
    [projectIds],
  );
  return new Map(rows.map((r) => [r.project_id, r.name]));
}

export async function projectExists(db: Queryable, projectId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM projects WHERE project_id = $1', [projectId]);
  return rows.length > 0;
}

export interface ProjectRow {
  project_id: string;
  name: string;
  created_at: Date;
}

const PROJECT_COLUMNS = 'project_id, name, created_at';

/** Creates a project; 409 when one with this id exists already. */
export async function createProject(db: Queryable, projectId: string, name: string): Promise<ProjectRow> {
  const [row] = await db.query<ProjectRow & Record<string, unknown>>(
    `INSERT INTO projects (project_id, name) VALUES ($1, $2) ON CONFLICT (project_id) DO NOTHING RETURNING ${PROJECT_COLUMNS}`,
    [projectId, name],
  );
  if (!row) throw conflict(`Project ${projectId} already exists`);
  return row;
}

/** The projects named (in that order, those that exist), or every project by id when `ids` is 'all'. */
export async function listProjects(db: Queryable, ids: readonly string[] | 'all'): Promise<ProjectRow[]> {
  if (ids === 'all') return db.query<ProjectRow & Record<string, unknown>>(`SELECT ${PROJECT_COLUMNS} FROM projects ORDER BY project_id`);
  if (ids.length === 0) return [];
  const rows = await db.query<ProjectRow & Record<string, unknown>>(
    `SELECT ${PROJECT_COLUMNS} FROM projects WHERE project_id = ANY($1::text[])`,
    [ids],
  );
  const byId = new Map(rows.map((r) => [r.project_id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** Sets a project's display name (the bootstrap variables are authoritative for theirs). */
export async function renameProject(db: Queryable, projectId: string, name: string): Promise<void> {
  await db.query('UPDATE projects SET name = $2 WHERE project_id = $1 AND name <> $2', [projectId, name]);
}

/** The public shape of a project, with the caller's role in it. */
export function presentProject(row: ProjectRow, role: Role) {
  return { project_id: row.project_id, name: row.name, created_at: row.created_at.toISOString(), role };
}
