-- Score configs (docs/scores.md): what a score of a given name may hold. A score whose name has a
-- live config is validated against it. A config's data type, range and categories never change
-- under the scores that used it: a change is a new config after archiving the old one.
CREATE TABLE IF NOT EXISTS score_configs (
  config_id uuid PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  data_type text NOT NULL CHECK (data_type IN ('NUMERIC', 'CATEGORICAL', 'BOOLEAN')),
  min_value double precision,
  max_value double precision,
  categories jsonb,
  description text CHECK (description IS NULL OR length(description) <= 2000),
  archived boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One live config per name in a project; archived ones stay for the scores that used them.
CREATE UNIQUE INDEX IF NOT EXISTS score_configs_live_name ON score_configs (project_id, name) WHERE NOT archived;
