// SQL of release gates (schema/postgres/020): gate configs per (prompt, label), approvals and the
// label events. Every statement is scoped by project_id.
import type { Queryable } from '../stores/postgres.ts';

export interface GateConfig {
  dataset_id: string;
  scores: string[];
  lower_is_better: string[];
  alpha: number;
  max_cost_increase_pct: number | null;
  require_approval: boolean;
}

export type GateRow = GateConfig & { label: string; updated_by: string; created_at: Date; updated_at: Date };

export type LabelAction = 'moved' | 'overridden' | 'removed' | 'approved' | 'gate_set' | 'gate_removed';

export interface LabelEvent {
  label: string;
  action: LabelAction;
  fromVersion: number | null;
  toVersion: number | null;
  actor: string;
  apiKeyId: string | null;
  reason: string | null;
  details: unknown;
}

export type LabelEventRow = {
  seq: string;
  label: string;
  action: LabelAction;
  from_version: number | null;
  to_version: number | null;
  actor: string;
  api_key_id: string | null;
  reason: string | null;
  details: unknown;
  created_at: Date;
};

export interface ApprovalRow {
  version: number;
  approved_by: string;
  comment: string | null;
  created_at: Date;
}

const GATE_COLUMNS = `label, dataset_id::text AS dataset_id, scores, lower_is_better, alpha, max_cost_increase_pct, require_approval,
  updated_by, created_at, updated_at`;

export async function findGate(db: Queryable, projectId: string, promptId: string, label: string): Promise<GateRow | undefined> {
  const [row] = await db.query<GateRow & Record<string, unknown>>(
    `SELECT ${GATE_COLUMNS} FROM prompt_label_gates WHERE project_id = $1 AND prompt_id = $2 AND label = $3`,
    [projectId, promptId, label],
  );
  return row;
}

/** Every gate of a prompt's labels, by label. */
export async function gatesOf(db: Queryable, projectId: string, promptId: string): Promise<GateRow[]> {
  return db.query<GateRow & Record<string, unknown>>(
    `SELECT ${GATE_COLUMNS} FROM prompt_label_gates WHERE project_id = $1 AND prompt_id = $2 ORDER BY label`,
    [projectId, promptId],
  );
}

/** Of these labels, those protected by a gate. */
export async function protectedLabels(db: Queryable, projectId: string, promptId: string, labels: readonly string[]): Promise<string[]> {
  if (labels.length === 0) return [];
  const rows = await db.query<{ label: string }>(
    'SELECT label FROM prompt_label_gates WHERE project_id = $1 AND prompt_id = $2 AND label = ANY($3::text[]) ORDER BY label',
    [projectId, promptId, [...labels]],
  );
  return rows.map((r) => r.label);
}

export async function upsertGate(
  db: Queryable,
  projectId: string,
  promptId: string,
  label: string,
  gate: GateConfig,
  updatedBy: string,
): Promise<GateRow> {
  const [row] = await db.query<GateRow & Record<string, unknown>>(
    `INSERT INTO prompt_label_gates (project_id, prompt_id, label, dataset_id, scores, lower_is_better, alpha, max_cost_increase_pct,
       require_approval, updated_by)
     VALUES ($1, $2, $3, $4::uuid, $5::text[], $6::text[], $7, $8, $9, $10)
     ON CONFLICT (project_id, prompt_id, label) DO UPDATE SET dataset_id = EXCLUDED.dataset_id, scores = EXCLUDED.scores,
       lower_is_better = EXCLUDED.lower_is_better, alpha = EXCLUDED.alpha, max_cost_increase_pct = EXCLUDED.max_cost_increase_pct,
       require_approval = EXCLUDED.require_approval, updated_by = EXCLUDED.updated_by, updated_at = clock_timestamp()
     RETURNING ${GATE_COLUMNS}`,
    [
      projectId,
      promptId,
      label,
      gate.dataset_id,
      gate.scores,
      gate.lower_is_better,
      gate.alpha,
      gate.max_cost_increase_pct,
      gate.require_approval,
      updatedBy,
    ],
  );
  return row!;
}

export async function deleteGate(db: Queryable, projectId: string, promptId: string, label: string): Promise<GateRow | undefined> {
  const [row] = await db.query<GateRow & Record<string, unknown>>(
    `DELETE FROM prompt_label_gates WHERE project_id = $1 AND prompt_id = $2 AND label = $3 RETURNING ${GATE_COLUMNS}`,
    [projectId, promptId, label],
  );
  return row;
}

/** Records an approval; false when this admin approved this version for this label already. */
export async function insertApproval(
  db: Queryable,
  projectId: string,
  promptId: string,
  a: { label: string; version: number; approvedBy: string; comment: string | null },
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO prompt_label_approvals (project_id, prompt_id, label, version, approved_by, comment) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT DO NOTHING RETURNING version`,
    [projectId, promptId, a.label, a.version, a.approvedBy, a.comment],
  );
  return rows.length === 1;
}

export async function approvalsOf(
  db: Queryable,
  projectId: string,
  promptId: string,
  label: string,
  version: number,
): Promise<ApprovalRow[]> {
  return db.query<ApprovalRow & Record<string, unknown>>(
    `SELECT version, approved_by, comment, created_at FROM prompt_label_approvals
     WHERE project_id = $1 AND prompt_id = $2 AND label = $3 AND version = $4 ORDER BY created_at, approved_by`,
    [projectId, promptId, label, version],
  );
}

export async function insertEvent(db: Queryable, projectId: string, promptId: string, e: LabelEvent): Promise<void> {
  await db.query(
    `INSERT INTO prompt_label_events (project_id, prompt_id, label, action, from_version, to_version, actor, api_key_id, reason, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)`,
    [
      projectId,
      promptId,
      e.label,
      e.action,
      e.fromVersion,
      e.toVersion,
      e.actor,
      e.apiKeyId,
      e.reason,
      e.details === undefined || e.details === null ? null : JSON.stringify(e.details),
    ],
  );
}

/** A page of a prompt's label events, newest first, before seq `beforeSeq`; of one label when given. */
export async function listEvents(
  db: Queryable,
  projectId: string,
  promptId: string,
  q: { limit: number; beforeSeq?: string; label?: string },
): Promise<LabelEventRow[]> {
  return db.query<LabelEventRow & Record<string, unknown>>(
    `SELECT seq::text AS seq, label, action, from_version, to_version, actor, api_key_id, reason, details, created_at
     FROM prompt_label_events
     WHERE project_id = $1 AND prompt_id = $2 AND ($3::bigint IS NULL OR prompt_label_events.seq < $3::bigint)
       AND ($4::text IS NULL OR label = $4)
     ORDER BY prompt_label_events.seq DESC LIMIT $5`,
    [projectId, promptId, q.beforeSeq ?? null, q.label ?? null, q.limit],
  );
}
