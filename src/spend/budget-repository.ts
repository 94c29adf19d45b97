// PostgreSQL side of budgets (schema/postgres/009, 010, 016): every budget of a project — the
// monthly one `…/budget` shows (surface 'monthly') and the scoped ones of `…/budgets` — the alerts
// they raised (once per budget, period and alert key: the unique key decides, whatever the number
// of workers) and their delivery outcome. The one alert ledger of the budget engine.
import type { Queryable } from '../stores/postgres.ts';
import type { DeliveryResult } from './webhooks.ts';

export type ScopeKind = 'project' | 'agent' | 'user' | 'tag' | 'api_key';
export type Period = 'day' | 'week' | 'month';
export type WebhookFormat = 'signed' | 'slack';
export type EnforcementMode = 'alert' | 'block';
/** Which API shows a budget: `…/budget` (the project's monthly budget) or `…/budgets`. */
export type Surface = 'monthly' | 'scoped';
export type AlertKind = 'threshold' | 'exceeded';

export type BudgetRow = {
  budget_id: string;
  project_id: string;
  scope_kind: ScopeKind;
  scope_value: string;
  period: Period;
  amount_usd: string;
  thresholds_pct: number[];
  enforcement_mode: EnforcementMode;
  webhook_url: string | null;
  webhook_format: WebhookFormat;
  webhook_secret: string;
  surface: Surface;
  created_at: Date;
  updated_at: Date;
};

export type AlertRow = {
  alert_id: string;
  budget_id: string;
  period_start: string;
  kind: AlertKind;
  threshold_pct: number;
  pct: string;
  spent_usd: string;
  amount_usd: string;
  created_at: Date;
  delivery_attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
};

export interface BudgetWrite {
  kind: ScopeKind;
  value: string;
  period: Period;
  amountText: string;
  thresholds: number[];
  mode: EnforcementMode;
  webhookUrl: string | null;
  format: WebhookFormat;
  secret: string;
}

/** An alert due: fired once per budget, period and key. */
export interface AlertDue {
  key: string;
  kind: AlertKind;
  thresholdPct: number;
}

const BUDGET = `budget_id::text AS budget_id, project_id, scope_kind, scope_value, period, amount_usd::text AS amount_usd, thresholds_pct,
  enforcement_mode, webhook_url, webhook_format, webhook_secret, surface, created_at, updated_at`;
const ALERT = `alert_id::text AS alert_id, budget_id::text AS budget_id, to_char(period_start, 'YYYY-MM-DD') AS period_start, kind, threshold_pct,
  pct::text AS pct, spent_usd::text AS spent_usd, amount_usd::text AS amount_usd, created_at, delivery_attempts, last_status, last_error,
  last_attempt_at, delivered_at`;
const isId = (id: string) => /^\d{1,18}$/.test(id);

export function createBudgetStore(pg: Queryable) {
  return {
    /** The new budget, or undefined when the project has one for this scope, period and surface already. */
    async create(projectId: string, w: BudgetWrite): Promise<BudgetRow | undefined> {
      const rows = await pg.query<BudgetRow>(
        `INSERT INTO scoped_budgets (project_id, scope_kind, scope_value, period, amount_usd, thresholds_pct, enforcement_mode, webhook_url, webhook_format, webhook_secret)
         VALUES ($1, $2, $3, $4, $5::numeric, $6::integer[], $7, $8, $9, $10)
         ON CONFLICT (project_id, scope_kind, scope_value, period, surface) DO NOTHING RETURNING ${BUDGET}`,
        [projectId, w.kind, w.value, w.period, w.amountText, w.thresholds, w.mode, w.webhookUrl, w.format, w.secret],
      );
      return rows[0];
    },
    /**
     * Sets the project's monthly budget (created with `secret` the first time; `webhookUrl`
     * undefined keeps the URL, `rotateSecret` replaces the secret). `inserted`: it was created.
     */
    async upsertMonthly(
      projectId: string,
      w: {
        amountText: string;
        thresholdPct: number;
        mode: EnforcementMode;
        webhookUrl: string | null | undefined;
        secret: string;
        rotateSecret: boolean;
      },
    ): Promise<BudgetRow & { inserted: boolean }> {
      const [row] = await pg.query<BudgetRow & { inserted: boolean }>(
        `INSERT INTO scoped_budgets (project_id, scope_kind, scope_value, period, amount_usd, thresholds_pct, enforcement_mode, webhook_url, webhook_format, webhook_secret, surface)
         VALUES ($1, 'project', '', 'month', $2::numeric, ARRAY[$3::integer], $4, $5, 'signed', $6, 'monthly')
         ON CONFLICT (project_id, scope_kind, scope_value, period, surface) DO UPDATE SET
           amount_usd = EXCLUDED.amount_usd, thresholds_pct = EXCLUDED.thresholds_pct, enforcement_mode = EXCLUDED.enforcement_mode,
           webhook_url = CASE WHEN $7 THEN EXCLUDED.webhook_url ELSE scoped_budgets.webhook_url END,
           webhook_secret = CASE WHEN $8 THEN EXCLUDED.webhook_secret ELSE scoped_budgets.webhook_secret END,
           updated_at = now()
         RETURNING ${BUDGET}, (xmax = 0) AS inserted`,
        [projectId, w.amountText, w.thresholdPct, w.mode, w.webhookUrl ?? null, w.secret, w.webhookUrl !== undefined, w.rotateSecret],
      );
      return row!;
    },
    /** PostgreSQL's clock (epoch ms): the version of what a list read after it sees (budget-state.ts). */
    async clock(): Promise<number> {
      const [r] = await pg.query<{ ms: string }>('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS ms');
      return Number(r!.ms);
    },
    /** Every budget of the project (both surfaces), or those of one surface. */
    async list(projectId: string, surface?: Surface): Promise<BudgetRow[]> {
      return pg.query<BudgetRow>(
        `SELECT ${BUDGET} FROM scoped_budgets WHERE project_id = $1 AND ($2::text IS NULL OR surface = $2) ORDER BY budget_id`,
        [projectId, surface ?? null],
      );
    },
    async monthly(projectId: string): Promise<BudgetRow | undefined> {
      return (
        await pg.query<BudgetRow>(`SELECT ${BUDGET} FROM scoped_budgets WHERE project_id = $1 AND surface = 'monthly'`, [projectId])
      )[0];
    },
    /** A budget of `…/budgets` (the monthly one is not reachable by id). */
    async get(projectId: string, id: string): Promise<BudgetRow | undefined> {
      if (!isId(id)) return undefined;
      return (
        await pg.query<BudgetRow>(`SELECT ${BUDGET} FROM scoped_budgets WHERE project_id = $1 AND budget_id = $2 AND surface = 'scoped'`, [
          projectId,
          id,
        ])
      )[0];
    },
    /** Changes the given fields of a budget of `…/budgets` (undefined: unchanged); undefined when there is no such budget. */
    async update(
      projectId: string,
      id: string,
      w: Partial<Pick<BudgetWrite, 'amountText' | 'thresholds' | 'mode' | 'webhookUrl' | 'format' | 'secret'>>,
    ): Promise<BudgetRow | undefined> {
      if (!isId(id)) return undefined;
      const rows = await pg.query<BudgetRow>(
        `UPDATE scoped_budgets SET
           amount_usd = COALESCE($3::numeric, amount_usd), thresholds_pct = COALESCE($4::integer[], thresholds_pct),
           enforcement_mode = COALESCE($5, enforcement_mode), webhook_url = CASE WHEN $6 THEN $7 ELSE webhook_url END,
           webhook_format = COALESCE($8, webhook_format), webhook_secret = COALESCE($9, webhook_secret), updated_at = now()
         WHERE project_id = $1 AND budget_id = $2 AND surface = 'scoped' RETURNING ${BUDGET}`,
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
      if (!isId(id)) return false;
      return (
        (
          await pg.query("DELETE FROM scoped_budgets WHERE project_id = $1 AND budget_id = $2 AND surface = 'scoped' RETURNING budget_id", [
            projectId,
            id,
          ])
        ).length > 0
      );
    },
    async projects(): Promise<string[]> {
      return (await pg.query<{ project_id: string }>('SELECT DISTINCT project_id FROM scoped_budgets ORDER BY project_id')).map(
        (r) => r.project_id,
      );
    },
    /** The new alert's id, or undefined when this alert already fired for the budget and period. */
    async fire(budgetId: string, periodStart: string, due: AlertDue, figures: { pct: string; spentText: string; amountText: string }) {
      const rows = await pg.query<{ alert_id: string }>(
        `INSERT INTO scoped_budget_alerts (budget_id, period_start, alert_key, kind, threshold_pct, pct, spent_usd, amount_usd)
         VALUES ($1, $2::date, $3, $4, $5, $6::numeric, $7::numeric, $8::numeric)
         ON CONFLICT (budget_id, period_start, alert_key) DO NOTHING RETURNING alert_id::text AS alert_id`,
        [budgetId, periodStart, due.key, due.kind, due.thresholdPct, figures.pct, figures.spentText, figures.amountText],
      );
      return rows[0]?.alert_id;
    },
    /** A budget's alerts: `byPeriod` newest period then highest threshold first; else the 50 newest. */
    async alerts(budgetId: string, order: 'byPeriod' | 'newest'): Promise<AlertRow[]> {
      return pg.query<AlertRow>(
        order === 'byPeriod'
          ? `SELECT ${ALERT} FROM scoped_budget_alerts WHERE budget_id = $1 ORDER BY period_start DESC, threshold_pct DESC, alert_key DESC`
          : `SELECT ${ALERT} FROM scoped_budget_alerts WHERE budget_id = $1 ORDER BY created_at DESC, alert_id DESC LIMIT 50`,
        [budgetId],
      );
    },
    async alertForDelivery(alertId: string): Promise<(AlertRow & { budget: BudgetRow }) | undefined> {
      if (!isId(alertId)) return undefined;
      const [a] = await pg.query<AlertRow>(`SELECT ${ALERT} FROM scoped_budget_alerts WHERE alert_id = $1`, [alertId]);
      if (!a) return undefined;
      const [b] = await pg.query<BudgetRow>(`SELECT ${BUDGET} FROM scoped_budgets WHERE budget_id = $1`, [a.budget_id]);
      return b ? { ...a, budget: b } : undefined;
    },
    /** Alerts of the last 7 days still owed a delivery (re-enqueued by the periodic evaluation). */
    async undelivered(maxAttempts: number): Promise<string[]> {
      const rows = await pg.query<{ alert_id: string }>(
        `SELECT a.alert_id::text AS alert_id FROM scoped_budget_alerts a JOIN scoped_budgets b USING (budget_id)
         WHERE a.delivered_at IS NULL AND b.webhook_url IS NOT NULL AND a.delivery_attempts < $1 AND a.created_at > now() - interval '7 days'
         ORDER BY a.alert_id LIMIT 1000`,
        [maxAttempts],
      );
      return rows.map((r) => r.alert_id);
    },
    async recordAttempt(alertId: string, url: string, r: DeliveryResult): Promise<void> {
      await pg.query(
        `UPDATE scoped_budget_alerts SET delivery_attempts = delivery_attempts + 1, last_status = $2, last_error = $3, last_attempt_at = now(),
           webhook_url = $4, delivered_at = CASE WHEN $5 THEN now() ELSE delivered_at END WHERE alert_id = $1`,
        [alertId, r.status, r.error, url, r.ok],
      );
    },
  };
}

export type BudgetStore = ReturnType<typeof createBudgetStore>;
