-- Datasets and experiment runs (docs/datasets.md). A dataset holds items; an item's content
-- (input, expected output, metadata) lives in immutable versions: an edit writes the next version,
-- and a run's link keeps the version the run used. A run links each item it ran to the execution it
-- produced (a trace id), by API or by span attributes at ingest; the link is stored whether or not
-- the execution is assembled yet, and joins it by trace id when the run is read.
CREATE TABLE IF NOT EXISTS datasets (
  dataset_id uuid PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  description text CHECK (description IS NULL OR length(description) <= 2000),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS datasets_name ON datasets (project_id, name);

CREATE TABLE IF NOT EXISTS dataset_items (
  item_id uuid PRIMARY KEY,
  project_id text NOT NULL,
  dataset_id uuid NOT NULL REFERENCES datasets (dataset_id) ON DELETE CASCADE,
  -- The order of listings and exports (keyset pages): the order items were added in.
  seq bigserial NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  source_trace_id text,
  archived_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS dataset_items_seq ON dataset_items (project_id, dataset_id, seq);

CREATE TABLE IF NOT EXISTS dataset_item_versions (
  item_id uuid NOT NULL REFERENCES dataset_items (item_id) ON DELETE CASCADE,
  version integer NOT NULL CHECK (version >= 1),
  project_id text NOT NULL,
  input jsonb NOT NULL,
  expected_output jsonb,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (item_id, version)
);

CREATE TABLE IF NOT EXISTS dataset_runs (
  run_id uuid PRIMARY KEY,
  project_id text NOT NULL,
  dataset_id uuid NOT NULL REFERENCES datasets (dataset_id) ON DELETE CASCADE,
  seq bigserial NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  description text CHECK (description IS NULL OR length(description) <= 2000),
  -- [{"prompt_id": ..., "version": n}]: the prompt versions the run tests.
  prompts jsonb NOT NULL DEFAULT '[]'::jsonb,
  model text CHECK (model IS NULL OR length(model) <= 200),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS dataset_runs_name ON dataset_runs (project_id, dataset_id, name);
CREATE INDEX IF NOT EXISTS dataset_runs_seq ON dataset_runs (project_id, dataset_id, seq);

CREATE TABLE IF NOT EXISTS dataset_run_items (
  run_id uuid NOT NULL REFERENCES dataset_runs (run_id) ON DELETE CASCADE,
  item_id uuid NOT NULL REFERENCES dataset_items (item_id) ON DELETE CASCADE,
  project_id text NOT NULL,
  item_version integer NOT NULL,
  -- The item's order in its dataset (dataset_items.seq), copied: a run's items page by it.
  item_seq bigint NOT NULL,
  trace_id text CHECK (trace_id IS NULL OR length(trace_id) BETWEEN 1 AND 256),
  status text NOT NULL CHECK (status IN ('done', 'failed')),
  error text CHECK (error IS NULL OR length(error) <= 4000),
  -- How the link came: 'api' (POST …/runs/{id}/items) or 'otel' (span attributes at ingest).
  linked_by text NOT NULL CHECK (linked_by IN ('api', 'otel')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, item_id),
  CHECK (status = 'failed' OR trace_id IS NOT NULL)
);

CREATE INDEX IF NOT EXISTS dataset_run_items_seq ON dataset_run_items (run_id, item_seq);
