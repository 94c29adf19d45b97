-- LLM-as-judge evaluators (docs/evaluators.md).
--
-- model_connections: an OpenAI-compatible chat completions endpoint per project. The API key is
-- stored only as AES-256-GCM ciphertext (src/evaluators/secrets.ts: iv, tag and ciphertext
-- together, base64), sealed with SECRETS_KEY; no API reads it back.
CREATE TABLE IF NOT EXISTS model_connections (
  connection_id uuid PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  base_url text NOT NULL,
  model text NOT NULL,
  provider text NOT NULL,
  api_key_sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS model_connections_name ON model_connections (project_id, name);

-- evaluators: a judge prompt (by name and label), its variables, a connection, the score it
-- writes, a target (jsonb, a discriminated union on "kind") and its limits. `scanned_to` is how
-- far the scan for new executions has looked (started_at).
CREATE TABLE IF NOT EXISTS evaluators (
  evaluator_id uuid PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  prompt_id text NOT NULL,
  prompt_label text NOT NULL,
  variables jsonb NOT NULL,
  connection_id uuid NOT NULL REFERENCES model_connections (connection_id),
  score_name text NOT NULL,
  agent_id text NOT NULL,
  target jsonb NOT NULL,
  concurrency integer NOT NULL,
  max_calls_per_minute integer NOT NULL,
  timeout_ms integer NOT NULL,
  paused boolean NOT NULL DEFAULT false,
  scanned_to timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS evaluators_name ON evaluators (project_id, name);

-- evaluations: one per (evaluator, execution) — the primary key is what makes an execution
-- judged at most once by an evaluator, whatever scans, backfills or retries do.
CREATE TABLE IF NOT EXISTS evaluations (
  project_id text NOT NULL,
  evaluator_id uuid NOT NULL REFERENCES evaluators (evaluator_id),
  trace_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  score_id text,
  judge_trace_id text,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, evaluator_id, trace_id)
);
CREATE INDEX IF NOT EXISTS evaluations_status ON evaluations (project_id, evaluator_id, status, updated_at);
