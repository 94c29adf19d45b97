// PostgreSQL side of scoped budgets (schema/postgres/009, 010): the budgets, the alerts they raised
// (once per budget, period and threshold: the unique key decides) and their delivery outcome.
import type { Queryable } from '../stores/postgres.ts';
import type { DeliveryResult } from './webhooks.ts';

export type ScopeKind = 'project' | 'agent' | 'user' | 'tag' | 'api_key';
export type Period = 'day' | 'week' | 'month';
export type WebhookFormat = 'signed' | 'slack';

export type ScopedBudgetRow = {
  budget_id: string;
  project_id: string;
  scope_kind: ScopeKind;
  scope_value: string;
  period: Period;
  amount_usd: string;
  thresholds_pct: number[];
  enforcement_mode: 'alert' | 'block';
  webhook_url: string | null;
  webhook_format: WebhookFormat;
  webhook_secret: string;
  created_at: Date;
  updated_at: Date;
};

export type ScopedAlertRow = {
  alert_id: string;
  budget_id: string;
  period_start: string;
  threshold_pct: number;
  pct: string;
  spent_usd: string;
  amount_usd: string;
  created_at: Date;
  delivery_attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: Date | null;
};

export interface ScopedBudgetWrite {
  kind: ScopeKind;
  value: string;
  period: Period;
  amountText: string;
  thresholds: number[];
  mode: 'alert' | 'block';
  webhookUrl: string | null;
  format: WebhookFormat;
  secret: string;
}

const BUDGET = `budget_id::text AS budget_id, project_id, scope_kind, scope_value, period, amount_usd::text AS amount_usd, thresholds_pct,
  enforcement_mode, webhook_url, webhook_format, webhook_secret, created_at, updated_at`;
const ALERT = `alert_id::text AS alert_id, budget_id::text AS budget_id, to_char(period_start, 'YYYY-MM-DD') AS period_start, threshold_pct,
  pct::text AS pct, spent_usd::text AS spent_usd, amount_usd::text AS amount_usd, created_at, delivery_attempts, last_status, last_error, delivered_at`;

export function createScopedBudgetStore(pg: Queryable) {
  return {
    /** The new budget, or undefined when the project has one for this scope and period already. */
    async create(projectId: string, w: ScopedBudgetWrite): Promise<ScopedBudgetRow | undefined> {
      const rows = await pg.query<ScopedBudgetRow>(
        `INSERT INTO scoped_budgets (project_id, scope_kind, scope_value, period, amount_usd, thresholds_pct, enforcement_mode, webhook_url, webhook_format, webhook_secret)
         VALUES ($1, $2, $3, $4, $5::numeric, $6::integer[], $7, $8, $9, $10)
         ON CONFLICT (project_id, scope_kind, scope_value, period) DO NOTHING RETURNING ${BUDGET}`,
        [projectId, w.kind, w.value, w.period, w.amountText, w.thresholds, w.mode, w.webhookUrl, w.format, w.secret],
      );
      return rows[0];
    },
    /** PostgreSQL's clock (epoch ms): the version of what a list read after it sees (scoped-budget-state.ts). */
    async clock(): Promise<number> {
      const [r] = await pg.query<{ ms: string }>('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS ms');
      return Number(r!.ms);
    },
    async list(projectId: string): Promise<ScopedBudgetRow[]> {
      return pg.query<ScopedBudgetRow>(`SELECT ${BUDGET} FROM scoped_budgets WHERE project_id = $1 ORDER BY budget_id`, [projectId]);
    },
    async get(projectId: string, id: string): Promise<ScopedBudgetRow | undefined> {
      if (!/^\d{1,18}$/.test(id)) return undefined;
      return (
        await pg.query<ScopedBudgetRow>(`SELECT ${BUDGET} FROM scoped_budgets WHERE project_id = $1 AND budget_id = $2`, [projectId, id])
      )[0];
    },
    /** Changes the given fields (undefined: unchanged); undefined when there is no such budget. */
    async update(
      projectId: string,
      id: string,
      w: Partial<Pick<ScopedBudgetWrite, 'amountText' | 'thresholds' | 'mode' | 'webhookUrl' | 'format' | 'secret'>>,
    ): Promise<ScopedBudgetRow | undefined> {
      if (!/^\d{1,18}$/.test(id)) return undefined;
      const rows = await pg.query<ScopedBudgetRow>(
        `UPDATE scoped_budgets SET
           amount_usd = COALESCE($3::numeric, amount_usd), thresholds_pct = COALESCE($4::integer[], thresholds_pct),
           enforcement_mode = COALESCE($5, enforcement_mode), webhook_url = CASE WHEN $6 THEN $7 ELSE webhook_url END,
           webhook_format = COALESCE($8, webhook_format), webhook_secret = COALESCE($9, webhook_secret), updated_at = now()
         WHERE project_id = $1 AND budget_id = $2 RETURNING ${BUDGET}`,
        [
          projectId,
          id,
          w.amountText ?? null,
          w.thresholds ?? null,
          w.mode ?? null,
          w.webhookUrl !== undefined,
          w.webhookUrl ?? null,
          w.format ?? null,
          w.secret ?? null,
        ],
      );
      return rows[0];
    },
    async remove(projectId: string, id: string): Promise<boolean> {
      if (!/^\d{1,18}$/.test(id)) return false;
      return (
        (await pg.query('DELETE FROM scoped_budgets WHERE project_id = $1 AND budget_id = $2 RETURNING budget_id', [projectId, id]))
          .length > 0
      );
    },
    async projects(): Promise<string[]> {
      return (await pg.query<{ project_id: string }>('SELECT DISTINCT project_id FROM scoped_budgets ORDER BY project_id')).map(
        (r) => r.project_id,
      );
    },
    /** A new alert, or undefined when this threshold already fired in this period. */
    async fire(
      budgetId: string,
      periodStart: string,
      threshold: number,
      pct: string,
      spentText: string,
      amountText: string,
    ): Promise<string | undefined> {
      const rows = await pg.query<{ alert_id: string }>(
        `INSERT INTO scoped_budget_alerts (budget_id, period_start, threshold_pct, pct, spent_usd, amount_usd) VALUES ($1, $2::date, $3, $4::numeric, $5::numeric, $6::numeric)
         ON CONFLICT (budget_id, period_start, threshold_pct) DO NOTHING RETURNING alert_id::text AS alert_id`,
        [budgetId, periodStart, threshold, pct, spentText, amountText],
      );
      return rows[0]?.alert_id;
    },
    async alerts(budgetId: string): Promise<ScopedAlertRow[]> {
      return pg.query<ScopedAlertRow>(
        `SELECT ${ALERT} FROM scoped_budget_alerts WHERE budget_id = $1 ORDER BY period_start DESC, threshold_pct DESC`,
        [budgetId],
      );
    },
    async alertForDelivery(alertId: string): Promise<(ScopedAlertRow & { budget: ScopedBudgetRow }) | undefined> {
      const [a] = await pg.query<ScopedAlertRow>(`SELECT ${ALERT} FROM scoped_budget_alerts WHERE alert_id = $1`, [alertId]);
      if (!a) return undefined;
      const [b] = await pg.query<ScopedBudgetRow>(`SELECT ${BUDGET} FROM scoped_budgets WHERE budget_id = $1`, [a.budget_id]);
      return b ? { ...a, budget: b } : undefined;
    },
    /** Alerts of the last 7 days still owed a delivery (re-enqueued by the periodic evaluation). */
    async undelivered(maxAttempts: number): Promise<string[]> {
      const rows = await pg.query<{ alert_id: string }>(
        `SELECT a.alert_id::text AS alert_id FROM scoped_budget_alerts a JOIN scoped_budgets b USING (budget_id)
         WHERE a.delivered_at IS NULL AND b.webhook_url IS NOT NULL AND a.delivery_attempts < $1 AND a.created_at > now() - interval '7 days'`,
        [maxAttempts],
      );
      return rows.map((r) => r.alert_id);
    },
    async recordAttempt(alertId: string, r: DeliveryResult): Promise<void> {
      await pg.query(
        `UPDATE scoped_budget_alerts SET delivery_attempts = delivery_attempts + 1, last_status = $2, last_error = $3, last_attempt_at = now(),
           delivered_at = CASE WHEN $4 THEN now() ELSE delivered_at END WHERE alert_id = $1`,
        [alertId, r.status, r.error, r.ok],
      );
    },
  };
}

export type ScopedBudgetStore = ReturnType<typeof createScopedBudgetStore>;
