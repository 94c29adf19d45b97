-- Monitors (docs/monitors.md): a metric of a project's executions (or of their scores) over a
-- filter and a sliding window, and a condition (a threshold, or a significant change against the
-- previous window or a baseline prompt label). The jobs runner evaluates each enabled monitor when
-- `next_evaluation_at` is due; `state` says whether its condition holds ('breached') or not ('ok').
-- Written so a second run changes nothing (IF NOT EXISTS throughout).
CREATE TABLE IF NOT EXISTS monitors (
  monitor_id uuid PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- {kind, score_name?, value?}; the filter: the evaluators' ExecutionFilter; the condition:
  -- {kind: 'threshold', op, value, min_samples} or {kind: 'change', against, direction, alpha, min_samples}
  metric jsonb NOT NULL,
  filter jsonb NOT NULL,
  window_minutes integer NOT NULL CHECK (window_minutes BETWEEN 5 AND 10080),
  condition jsonb NOT NULL,
  interval_minutes integer NOT NULL CHECK (interval_minutes BETWEEN 1 AND 1440),
  enabled boolean NOT NULL DEFAULT true,
  webhook_url text CHECK (webhook_url IS NULL OR length(webhook_url) <= 2048),
  webhook_format text NOT NULL CHECK (webhook_format IN ('signed', 'slack')),
  webhook_secret text NOT NULL,
  state text NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'breached')),
  state_since timestamptz NOT NULL DEFAULT now(),
  last_evaluated_at timestamptz,
  -- the figures of the last evaluation (what `…/evaluate` answers)
  last_evaluation jsonb,
  next_evaluation_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS monitors_name ON monitors (project_id, name);
CREATE INDEX IF NOT EXISTS monitors_due ON monitors (next_evaluation_at) WHERE enabled;

-- One row per state change: 'triggered' (ok → breached) and 'resolved' (breached → ok), written
-- in the statement that changes the state (a conditional UPDATE), so two evaluations at once
-- record one. Delivery as the budget alerts' (attempts, last outcome, delivered_at).
CREATE TABLE IF NOT EXISTS monitor_alerts (
  alert_id bigserial PRIMARY KEY,
  monitor_id uuid NOT NULL REFERENCES monitors (monitor_id) ON DELETE CASCADE,
  project_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('triggered', 'resolved')),
  -- a 'resolved' alert names the 'triggered' one it closes
  resolves_alert_id bigint,
  evaluation jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  webhook_url text,
  delivery_attempts integer NOT NULL DEFAULT 0,
  last_status integer,
  last_error text,
  last_attempt_at timestamptz,
  delivered_at timestamptz
);
CREATE INDEX IF NOT EXISTS monitor_alerts_by_monitor ON monitor_alerts (monitor_id, alert_id);
CREATE INDEX IF NOT EXISTS monitor_alerts_undelivered ON monitor_alerts (alert_id) WHERE delivered_at IS NULL;
