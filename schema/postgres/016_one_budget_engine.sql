-- One budget engine (docs/spend.md, "One budget engine"): the project's monthly budget (005) becomes
-- a budget of scoped_budgets (scope 'project', period 'month') that `GET/PUT …/budget` shows, marked
-- surface 'monthly'; the budgets of `…/budgets` are surface 'scoped'. Its alerts move to
-- scoped_budget_alerts with their kind ('threshold' at the configured percentage, 'exceeded' at
-- 100 %), each once per budget, period and alert_key (a scoped budget's key is its threshold, the
-- monthly budget's its kind: a threshold changed mid-month does not fire the month's alert again).
-- Rows are moved in place, webhook secrets and URLs and every alert with its delivery record kept;
-- `budgets` and `budget_alerts` stay as views over the new rows (an INSERT into `budgets` still
-- creates or replaces the monthly budget), so SQL an operator wrote against them keeps working.
ALTER TABLE scoped_budgets ADD COLUMN surface text NOT NULL DEFAULT 'scoped' CHECK (surface IN ('scoped', 'monthly'));

ALTER TABLE scoped_budgets DROP CONSTRAINT scoped_budgets_project_id_scope_kind_scope_value_period_key;

ALTER TABLE scoped_budgets ADD CONSTRAINT scoped_budgets_scope_period_surface_key
  UNIQUE (project_id, scope_kind, scope_value, period, surface);

ALTER TABLE scoped_budget_alerts
  ADD COLUMN kind text NOT NULL DEFAULT 'threshold' CHECK (kind IN ('threshold', 'exceeded')),
  ADD COLUMN alert_key text,
  -- the URL a delivery was last attempted to (the monthly budget's alerts recorded it)
  ADD COLUMN webhook_url text;

UPDATE scoped_budget_alerts SET alert_key = threshold_pct::text;

ALTER TABLE scoped_budget_alerts ALTER COLUMN alert_key SET NOT NULL;

ALTER TABLE scoped_budget_alerts DROP CONSTRAINT scoped_budget_alerts_budget_id_period_start_threshold_pct_key;

ALTER TABLE scoped_budget_alerts ADD CONSTRAINT scoped_budget_alerts_once_key UNIQUE (budget_id, period_start, alert_key);

INSERT INTO scoped_budgets (project_id, scope_kind, scope_value, period, amount_usd, thresholds_pct, enforcement_mode, webhook_url,
  webhook_format, webhook_secret, created_at, updated_at, surface)
SELECT project_id, 'project', '', 'month', budget_monthly_usd, ARRAY[alert_threshold_pct], enforcement_mode, webhook_url, 'signed',
  webhook_secret, created_at, updated_at, 'monthly'
FROM budgets;

INSERT INTO scoped_budget_alerts (budget_id, period_start, threshold_pct, pct, spent_usd, amount_usd, created_at, delivery_attempts,
  last_status, last_error, last_attempt_at, delivered_at, kind, alert_key, webhook_url)
SELECT s.budget_id, (a.month || '-01')::date, a.alert_threshold_pct, a.pct, a.spent_usd, a.budget_monthly_usd, a.created_at,
  a.delivery_attempts, a.last_status, a.last_error, a.last_attempt_at, a.delivered_at, a.kind, a.kind, a.webhook_url
FROM budget_alerts a JOIN scoped_budgets s ON s.project_id = a.project_id AND s.surface = 'monthly'
ORDER BY a.alert_id;

DROP TABLE budget_alerts;

DROP TABLE budgets;

CREATE VIEW budgets AS
SELECT project_id, amount_usd AS budget_monthly_usd, thresholds_pct[1] AS alert_threshold_pct, enforcement_mode, webhook_url,
  webhook_secret, created_at, updated_at
FROM scoped_budgets WHERE surface = 'monthly';

CREATE VIEW budget_alerts AS
SELECT a.alert_id, b.project_id, to_char(a.period_start, 'YYYY-MM') AS month, a.kind, a.pct, a.spent_usd,
  a.amount_usd AS budget_monthly_usd, a.threshold_pct AS alert_threshold_pct, a.created_at, a.webhook_url, a.delivery_attempts,
  a.last_status, a.last_error, a.last_attempt_at, a.delivered_at
FROM scoped_budget_alerts a JOIN scoped_budgets b ON b.budget_id = a.budget_id WHERE b.surface = 'monthly';

CREATE FUNCTION budgets_view_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO scoped_budgets (project_id, scope_kind, scope_value, period, amount_usd, thresholds_pct, enforcement_mode, webhook_url,
    webhook_format, webhook_secret, surface)
  VALUES (NEW.project_id, 'project', '', 'month', NEW.budget_monthly_usd, ARRAY[NEW.alert_threshold_pct], NEW.enforcement_mode,
    NEW.webhook_url, 'signed', NEW.webhook_secret, 'monthly')
  ON CONFLICT (project_id, scope_kind, scope_value, period, surface) DO UPDATE SET
    amount_usd = EXCLUDED.amount_usd, thresholds_pct = EXCLUDED.thresholds_pct, enforcement_mode = EXCLUDED.enforcement_mode,
    webhook_url = EXCLUDED.webhook_url, webhook_secret = EXCLUDED.webhook_secret, updated_at = now();
  RETURN NEW;
END
$$;

CREATE TRIGGER budgets_view_insert INSTEAD OF INSERT ON budgets FOR EACH ROW EXECUTE FUNCTION budgets_view_insert();
