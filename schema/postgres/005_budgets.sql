-- Budgets (one per project), the alerts they raised, and raw-data retention per project.
CREATE TABLE IF NOT EXISTS budgets (
  project_id text PRIMARY KEY REFERENCES projects (project_id),
  budget_monthly_usd numeric(20, 9) NOT NULL CHECK (budget_monthly_usd > 0),
  alert_threshold_pct integer NOT NULL CHECK (alert_threshold_pct BETWEEN 1 AND 100),
  enforcement_mode text NOT NULL CHECK (enforcement_mode IN ('alert', 'block')),
  webhook_url text CHECK (webhook_url IS NULL OR length(webhook_url) <= 2048),
  -- HMAC-SHA256 key of the webhook signature. Kept in clear: it signs, it does not authenticate us.
  webhook_secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Each kind fires once per project and UTC month: the unique key is the guarantee, whatever the
-- number of workers, restarts or late rows (INSERT ... ON CONFLICT DO NOTHING RETURNING).
CREATE TABLE IF NOT EXISTS budget_alerts (
  alert_id bigserial PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  month text NOT NULL CHECK (month ~ '^\d{4}-\d{2}$'),
  kind text NOT NULL CHECK (kind IN ('threshold', 'exceeded')),
  pct numeric(30, 4) NOT NULL,
  spent_usd numeric(20, 9) NOT NULL,
  budget_monthly_usd numeric(20, 9) NOT NULL,
  alert_threshold_pct integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  webhook_url text,
  delivery_attempts integer NOT NULL DEFAULT 0,
  last_status integer,
  last_error text,
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  UNIQUE (project_id, month, kind)
);

CREATE TABLE IF NOT EXISTS project_retention (
  project_id text PRIMARY KEY REFERENCES projects (project_id),
  days integer CHECK (days IS NULL OR days BETWEEN 1 AND 3650),
  updated_at timestamptz NOT NULL DEFAULT now()
);
