-- Budgets at every level (docs/spend.md, "Scoped budgets"): besides the project's monthly budget
-- (005), any number of budgets scoped to the project, an agent, a user or a tag, each with its own
-- period (UTC day, ISO week from Monday, UTC month), thresholds and alert channel.
CREATE TABLE IF NOT EXISTS scoped_budgets (
  budget_id bigserial PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  scope_kind text NOT NULL CHECK (scope_kind IN ('project', 'agent', 'user', 'tag')),
  scope_value text NOT NULL CHECK (length(scope_value) <= 256),
  period text NOT NULL CHECK (period IN ('day', 'week', 'month')),
  amount_usd numeric(20, 9) NOT NULL CHECK (amount_usd > 0),
  thresholds_pct integer[] NOT NULL,
  enforcement_mode text NOT NULL CHECK (enforcement_mode IN ('alert', 'block')),
  webhook_url text CHECK (webhook_url IS NULL OR length(webhook_url) <= 2048),
  webhook_format text NOT NULL CHECK (webhook_format IN ('signed', 'slack')),
  webhook_secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, scope_kind, scope_value, period)
);

-- Each threshold fires once per budget and period: the unique key decides, whatever the number
-- of workers, restarts or late rows (INSERT ... ON CONFLICT DO NOTHING RETURNING).
CREATE TABLE IF NOT EXISTS scoped_budget_alerts (
  alert_id bigserial PRIMARY KEY,
  budget_id bigint NOT NULL REFERENCES scoped_budgets (budget_id) ON DELETE CASCADE,
  period_start date NOT NULL,
  threshold_pct integer NOT NULL,
  pct numeric(30, 4) NOT NULL,
  spent_usd numeric(20, 9) NOT NULL,
  amount_usd numeric(20, 9) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivery_attempts integer NOT NULL DEFAULT 0,
  last_status integer,
  last_error text,
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  UNIQUE (budget_id, period_start, threshold_pct)
);
