-- Experiments run by the service (docs/datasets.md, "Experiments run by the service"): a prompt
-- version × a dataset (the item versions pinned when it was created) × a model connection ×
-- evaluators and deterministic checks, run item by item into a dataset run of its own.
-- `lease_until` / `lease_owner`: the one process driving it now; an expired lease is taken over
-- (a restart resumes it). Money is exact: nano-dollars in numeric.
CREATE TABLE IF NOT EXISTS experiments (
  experiment_id uuid PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  dataset_id uuid NOT NULL REFERENCES datasets (dataset_id) ON DELETE CASCADE,
  run_id uuid NOT NULL REFERENCES dataset_runs (run_id) ON DELETE CASCADE,
  seq bigserial,
  name text NOT NULL,
  prompt_id text NOT NULL,
  prompt_version integer NOT NULL,
  connection_id uuid NOT NULL,
  evaluator_ids jsonb NOT NULL,
  checks jsonb NOT NULL,
  variables jsonb NOT NULL,
  config jsonb NOT NULL,
  dataset_as_of timestamptz,
  concurrency integer NOT NULL,
  max_attempts integer NOT NULL,
  timeout_ms integer NOT NULL,
  max_cost_usd numeric(20, 9) CHECK (max_cost_usd > 0),
  spent_usd numeric(20, 9) NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'capped', 'blocked', 'failed', 'cancelled')),
  status_detail text,
  created_by text NOT NULL,
  api_key_id text NOT NULL DEFAULT '',
  lease_owner text,
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS experiments_dataset ON experiments (project_id, dataset_id, seq);
CREATE INDEX IF NOT EXISTS experiments_unfinished ON experiments (status) WHERE status IN ('queued', 'running');

-- One row per pinned item: its state through the run. `trace_id` is set once the model call is
-- recorded (never made again); each evaluator judges it once (the evaluations table's key).
CREATE TABLE IF NOT EXISTS experiment_items (
  experiment_id uuid NOT NULL REFERENCES experiments (experiment_id) ON DELETE CASCADE,
  item_id uuid NOT NULL REFERENCES dataset_items (item_id) ON DELETE CASCADE,
  project_id text NOT NULL,
  item_version integer NOT NULL,
  item_seq bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
  trace_id text,
  output text,
  cost_usd numeric(20, 9) NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0,
  error text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (experiment_id, item_id)
);
CREATE INDEX IF NOT EXISTS experiment_items_order ON experiment_items (experiment_id, status, item_seq);
