-- Dataset imports (docs/datasets.md, "Import and export"): one row per import id, so an import cut
-- midway (a client gone, a proxy timeout, a restart) says what it stored and a retry of the same
-- file stores nothing twice. Each batch of items and the row's progress commit in one transaction:
-- every line up to last_line is settled (stored, or rejected and counted), none after it is.
CREATE TABLE IF NOT EXISTS dataset_imports (
  dataset_id uuid NOT NULL REFERENCES datasets (dataset_id) ON DELETE CASCADE,
  import_id text NOT NULL CHECK (length(import_id) BETWEEN 1 AND 128),
  project_id text NOT NULL,
  format text NOT NULL CHECK (format IN ('jsonl', 'csv')),
  status text NOT NULL CHECK (status IN ('running', 'completed', 'interrupted', 'failed')),
  -- The request writing the import now: a newer request for the same import id takes it over, and
  -- an older one still running stops at its next batch (409) instead of storing past the newer one.
  attempt uuid NOT NULL,
  attempts integer NOT NULL DEFAULT 1,
  last_line bigint NOT NULL DEFAULT 0,
  imported bigint NOT NULL DEFAULT 0,
  rejected_count bigint NOT NULL DEFAULT 0,
  -- The first 1,000 rejected lines: [{"line": n, "detail": "..."}].
  rejected jsonb NOT NULL DEFAULT '[]'::jsonb,
  error text CHECK (error IS NULL OR length(error) <= 2000),
  started_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (dataset_id, import_id)
);

CREATE INDEX IF NOT EXISTS dataset_imports_started ON dataset_imports (project_id, dataset_id, started_at DESC);
