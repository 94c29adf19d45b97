-- Spend jobs. Repricing (POST .../reprice without dry_run): what was asked, and the progress the job
-- reports. One unfinished job per project at a time (the partial unique index decides).
CREATE TABLE IF NOT EXISTS reprice_jobs (
  reprice_id bigserial PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  provider text,
  model text,
  from_at timestamptz NOT NULL,
  to_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
  requested_by text NOT NULL,
  executions_total bigint NOT NULL DEFAULT 0,
  executions_scanned bigint NOT NULL DEFAULT 0,
  executions_changed bigint NOT NULL DEFAULT 0,
  spend_delta_usd numeric(30, 9) NOT NULL DEFAULT 0,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);

CREATE UNIQUE INDEX IF NOT EXISTS reprice_jobs_one_unfinished ON reprice_jobs (project_id) WHERE status IN ('queued', 'running');

-- Scheduled Parquet exports (docs/executions.md, "Scheduled exports"): one row per project and UTC
-- day written, with its manifest. The primary key makes each day's export happen once.
CREATE TABLE IF NOT EXISTS execution_exports (
  project_id text NOT NULL REFERENCES projects (project_id),
  day date NOT NULL,
  target text NOT NULL,
  manifest jsonb NOT NULL,
  exported_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, day)
);
