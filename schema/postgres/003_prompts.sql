-- Prompt templates: a prompt per (project, prompt_id); every change an immutable version.
CREATE TABLE IF NOT EXISTS prompts (
  project_id text NOT NULL REFERENCES projects (project_id),
  prompt_id text NOT NULL CHECK (prompt_id ~ '^[a-z0-9][a-z0-9._-]{0,127}$'),
  type text NOT NULL CHECK (type IN ('text', 'chat')),
  description text,
  -- Incremented under the row lock of the writer: versions are gap-free and never shared.
  latest_version integer NOT NULL DEFAULT 0,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  archived_at timestamptz,
  PRIMARY KEY (project_id, prompt_id)
);

CREATE TABLE IF NOT EXISTS prompt_versions (
  project_id text NOT NULL,
  prompt_id text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  template jsonb NOT NULL,
  variables text[] NOT NULL,
  config jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- SHA-256 of the canonical (template, config): an edit that changes nothing is not a version.
  content_hash text NOT NULL,
  commit_message text,
  rolled_back_from integer,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, prompt_id, version),
  FOREIGN KEY (project_id, prompt_id) REFERENCES prompts (project_id, prompt_id)
);

CREATE TABLE IF NOT EXISTS prompt_labels (
  project_id text NOT NULL,
  prompt_id text NOT NULL,
  label text NOT NULL,
  version integer NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, prompt_id, label),
  FOREIGN KEY (project_id, prompt_id, version) REFERENCES prompt_versions (project_id, prompt_id, version)
);
