// SQL of the prompt tables. Every statement is scoped by project_id.
import type { Queryable } from '../stores/postgres.ts';
import type { PromptType, Template } from './template.ts';

export interface PromptRow {
  project_id: string;
  prompt_id: string;
  type: PromptType;
  description: string | null;
  latest_version: number;
  created_at: Date;
  updated_at: Date;
  archived_at: Date | null;
  labels: Record<string, number>;
}

export interface VersionRow {
  prompt_id: string;
  version: number;
  type: PromptType;
  template: Template;
  variables: string[];
  config: Record<string, unknown>;
  content_hash: string;
  commit_message: string | null;
  rolled_back_from: number | null;
  created_by: string | null;
  created_at: Date;
  labels: string[];
}

type R<T> = T & Record<string, unknown>;

const PROMPT_COLUMNS = `p.project_id, p.prompt_id, p.type, p.description, p.latest_version, p.created_at, p.updated_at, p.archived_at,
  coalesce((SELECT jsonb_object_agg(l.label, l.version) FROM prompt_labels l
            WHERE l.project_id = p.project_id AND l.prompt_id = p.prompt_id), '{}'::jsonb) AS labels`;

const VERSION_COLUMNS = `v.prompt_id, v.version, p.type, v.template, v.variables, v.config, v.content_hash, v.commit_message,
  v.rolled_back_from, v.created_by, v.created_at,
  coalesce((SELECT array_agg(l.label ORDER BY l.label) FROM prompt_labels l
            WHERE l.project_id = v.project_id AND l.prompt_id = v.prompt_id AND l.version = v.version), '{}'::text[]) AS labels`;

/** How many prompts of the project are not archived. */
export async function countActivePrompts(db: Queryable, projectId: string): Promise<number> {
  const [row] = await db.query<{ n: string }>('SELECT count(*) AS n FROM prompts WHERE project_id = $1 AND archived_at IS NULL', [
    projectId,
  ]);
  return Number(row?.n ?? 0);
}

export async function findPrompt(db: Queryable, projectId: string, promptId: string, forUpdate = false): Promise<PromptRow | undefined> {
  const [row] = await db.query<R<PromptRow>>(
    forUpdate
      ? `SELECT p.*, '{}'::jsonb AS labels FROM prompts p WHERE p.project_id = $1 AND p.prompt_id = $2 FOR UPDATE`
      : `SELECT ${PROMPT_COLUMNS} FROM prompts p WHERE p.project_id = $1 AND p.prompt_id = $2`,
    [projectId, promptId],
  );
  return row;
}

export async function insertPrompt(
  db: Queryable,
  p: { projectId: string; promptId: string; type: PromptType; description: string | null; createdBy: string },
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO prompts (project_id, prompt_id, type, description, created_by) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (project_id, prompt_id) DO NOTHING RETURNING prompt_id`,
    [p.projectId, p.promptId, p.type, p.description, p.createdBy],
  );
  return rows.length === 1;
}

export interface NewVersion {
  version: number;
  template: Template;
  variables: string[];
  config: Record<string, unknown>;
  contentHash: string;
  commitMessage: string | null;
  rolledBackFrom: number | null;
  createdBy: string;
}

export async function insertVersion(db: Queryable, projectId: string, promptId: string, v: NewVersion): Promise<void> {
  await db.query(
    `INSERT INTO prompt_versions (project_id, prompt_id, version, template, variables, config, content_hash, commit_message, rolled_back_from, created_by)
     VALUES ($1, $2, $3, $4::jsonb, $5::text[], $6::jsonb, $7, $8, $9, $10)`,
    [
      projectId,
      promptId,
      v.version,
      JSON.stringify(v.template),
      v.variables,
      JSON.stringify(v.config),
      v.contentHash,
      v.commitMessage,
      v.rolledBackFrom,
      v.createdBy,
    ],
  );
  await db.query('UPDATE prompts SET latest_version = $3, updated_at = now() WHERE project_id = $1 AND prompt_id = $2', [
    projectId,
    promptId,
    v.version,
  ]);
}

export async function findVersion(db: Queryable, projectId: string, promptId: string, version: number): Promise<VersionRow | undefined> {
  const [row] = await db.query<R<VersionRow>>(
    `SELECT ${VERSION_COLUMNS} FROM prompt_versions v JOIN prompts p USING (project_id, prompt_id)
     WHERE v.project_id = $1 AND v.prompt_id = $2 AND v.version = $3`,
    [projectId, promptId, version],
  );
  return row;
}

export async function listVersions(db: Queryable, projectId: string, promptId: string): Promise<VersionRow[]> {
  return db.query<R<VersionRow>>(
    `SELECT ${VERSION_COLUMNS} FROM prompt_versions v JOIN prompts p USING (project_id, prompt_id)
     WHERE v.project_id = $1 AND v.prompt_id = $2 ORDER BY v.version DESC`,
    [projectId, promptId],
  );
}

export async function findLabel(db: Queryable, projectId: string, promptId: string, label: string): Promise<number | undefined> {
  const [row] = await db.query<{ version: number }>(
    'SELECT version FROM prompt_labels WHERE project_id = $1 AND prompt_id = $2 AND label = $3',
    [projectId, promptId, label],
  );
  return row?.version;
}

export async function upsertLabel(db: Queryable, projectId: string, promptId: string, label: string, version: number): Promise<void> {
  await db.query(
    `INSERT INTO prompt_labels (project_id, prompt_id, label, version) VALUES ($1, $2, $3, $4)
     ON CONFLICT (project_id, prompt_id, label) DO UPDATE SET version = EXCLUDED.version, updated_at = now()`,
    [projectId, promptId, label, version],
  );
  await db.query('UPDATE prompts SET updated_at = now() WHERE project_id = $1 AND prompt_id = $2', [projectId, promptId]);
}

export async function deleteLabel(db: Queryable, projectId: string, promptId: string, label: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM prompt_labels WHERE project_id = $1 AND prompt_id = $2 AND label = $3 RETURNING label', [
    projectId,
    promptId,
    label,
  ]);
  return rows.length === 1;
}

export async function archivePrompt(db: Queryable, projectId: string, promptId: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE prompts SET archived_at = coalesce(archived_at, now()), updated_at = now()
     WHERE project_id = $1 AND prompt_id = $2 RETURNING prompt_id`,
    [projectId, promptId],
  );
  return rows.length === 1;
}

export async function listPrompts(
  db: Queryable,
  projectId: string,
  q: { search?: string; includeArchived: boolean; limit: number; offset: number },
): Promise<{ items: PromptRow[]; total: number }> {
  const where = `p.project_id = $1 AND ($2::text IS NULL OR strpos(p.prompt_id, lower($2)) > 0) AND ($3 OR p.archived_at IS NULL)`;
  const params = [projectId, q.search ?? null, q.includeArchived];
  const [{ total }] = (await db.query<{ total: string }>(`SELECT count(*) AS total FROM prompts p WHERE ${where}`, params)) as [
    { total: string },
  ];
  const items = await db.query<R<PromptRow>>(
    `SELECT ${PROMPT_COLUMNS} FROM prompts p WHERE ${where} ORDER BY p.prompt_id LIMIT $4 OFFSET $5`,
    [...params, q.limit, q.offset],
  );
  return { items, total: Number(total) };
}
