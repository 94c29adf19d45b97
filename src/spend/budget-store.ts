// PostgreSQL side of budgets: the budget rows, the alerts they raised (once per project, month and
// kind: the unique key decides, whatever the number of workers) and their delivery outcome.
import type { Queryable } from '../stores/postgres.ts';

export type EnforcementMode = 'alert' | 'block';
export type AlertKind = 'threshold' | 'exceeded';

export interface BudgetRow {
  project_id: string;
  budget_monthly_usd: string;
  alert_threshold_pct: number;
  enforcement_mode: EnforcementMode;
  webhook_url: string | null;
  webhook_secret: string;
  created_at: Date;
  updated_at: Date;
  inserted?: boolean;
}

export interface AlertRow {
  alert_id: string;
  project_id: string;
  month: string;
  kind: AlertKind;
  pct: string;
  spent_usd: string;
  budget_monthly_usd: string;
  alert_threshold_pct: number;
  created_at: Date;
  delivery_attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
}

export interface BudgetWrite {
  budgetNanosText: string;
  thresholdPct: number;
  mode: EnforcementMode;
  /** undefined: keep the current URL */
  webhookUrl: string | null | undefined;
  newSecret: string;
  rotateSecret: boolean;
}

export function createBudgetStore(db: Queryable) {
  return {
    async get(projectId: string): Promise<BudgetRow | undefined> {
      const [row] = await db.query<BudgetRow & Record<string, unknown>>('SELECT * FROM budgets WHERE project_id = $1', [projectId]);
      return row;
    },

    async upsert(projectId: string, w: BudgetWrite): Promise<BudgetRow> {
      const [row] = await db.query<BudgetRow & Record<string, unknown>>(
        `INSERT INTO budgets (project_id, budget_monthly_usd, alert_threshold_pct, enforcement_mode, webhook_url, webhook_secret)
         VALUES ($1, $2::numeric, $3, $4, $5, $6)
         ON CONFLICT (project_id) DO UPDATE SET
           budget_monthly_usd = EXCLUDED.budget_monthly_usd,
           alert_threshold_pct = EXCLUDED.alert_threshold_pct,
           enforcement_mode = EXCLUDED.enforcement_mode,
           webhook_url = CASE WHEN $7 THEN EXCLUDED.webhook_url ELSE budgets.webhook_url END,
           webhook_secret = CASE WHEN $8 THEN EXCLUDED.webhook_secret ELSE budgets.webhook_secret END,
           updated_at = now()
         RETURNING *, (xmax = 0) AS inserted`,
        [
          projectId,
          w.budgetNanosText,
          w.thresholdPct,
          w.mode,
          w.webhookUrl ?? null,
          w.newSecret,
          w.webhookUrl !== undefined,
          w.rotateSecret,
        ],
      );
      return row!;
    },

    async projectsWithBudgets(): Promise<string[]> {
      const rows = await db.query<{ project_id: string }>('SELECT project_id FROM budgets ORDER BY project_id');
      return rows.map((r) => r.project_id);
    },

    /** The new alert's id, or undefined when this kind already fired for the project and month. */
    async fire(
      projectId: string,
      month: string,
      kind: AlertKind,
      a: { pctText: string; spentText: string; budgetText: string; thresholdPct: number },
    ): Promise<string | undefined> {
      const [row] = await db.query<{ alert_id: string }>(
        `INSERT INTO budget_alerts (project_id, month, kind, pct, spent_usd, budget_monthly_usd, alert_threshold_pct)
         VALUES ($1, $2, $3, $4::numeric, $5::numeric, $6::numeric, $7)
         ON CONFLICT (project_id, month, kind) DO NOTHING RETURNING alert_id`,
        [projectId, month, kind, a.pctText, a.spentText, a.budgetText, a.thresholdPct],
      );
      return row?.alert_id;
    },

    async alerts(projectId: string, limit = 50): Promise<AlertRow[]> {
      return db.query<AlertRow & Record<string, unknown>>(
        'SELECT * FROM budget_alerts WHERE project_id = $1 ORDER BY created_at DESC, alert_id DESC LIMIT $2',
        [projectId, limit],
      );
    },

    async alertForDelivery(
      alertId: string,
    ): Promise<(AlertRow & { webhook_url: string | null; webhook_secret: string; enforcement_mode: EnforcementMode }) | undefined> {
      const [row] = await db.query<
        AlertRow & { webhook_url: string | null; webhook_secret: string; enforcement_mode: EnforcementMode } & Record<string, unknown>
      >(
        `SELECT a.*, b.webhook_url, b.webhook_secret, b.enforcement_mode
         FROM budget_alerts a JOIN budgets b ON b.project_id = a.project_id WHERE a.alert_id = $1`,
        [alertId],
      );
      return row;
    },

    async recordAttempt(alertId: string, url: string, r: { ok: boolean; status: number | null; error: string | null }): Promise<void> {
      await db.query(
        `UPDATE budget_alerts SET delivery_attempts = delivery_attempts + 1, last_status = $2, last_error = $3, last_attempt_at = now(),
           webhook_url = $4, delivered_at = CASE WHEN $5 THEN now() ELSE delivered_at END
         WHERE alert_id = $1`,
        [alertId, r.status, r.error, url, r.ok],
      );
    },

    /** Alerts still owed a delivery (recent, attempts left, a URL to send to): re-enqueued by the periodic evaluation. */
    async undelivered(maxAttempts: number): Promise<string[]> {
      const rows = await db.query<{ alert_id: string }>(
        `SELECT a.alert_id FROM budget_alerts a JOIN budgets b ON b.project_id = a.project_id
         WHERE a.delivered_at IS NULL AND a.delivery_attempts < $1 AND b.webhook_url IS NOT NULL
           AND a.created_at > now() - interval '7 days'
         ORDER BY a.alert_id LIMIT 1000`,
        [maxAttempts],
      );
      return rows.map((r) => r.alert_id);
    },
  };
}

export type BudgetStore = ReturnType<typeof createBudgetStore>;
