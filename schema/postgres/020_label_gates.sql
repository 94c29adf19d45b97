-- Release gates on prompt labels (docs/prompts.md, "Release gates"). A protected (prompt, label)
-- moves only to a version whose dataset-run evidence shows no significant regression against the
-- version holding the label (and, if asked, that another admin approved); an admin may override
-- with a reason. Every label move, approval, override and gate change is an event, kept.
-- Rerunnable: every statement is IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS prompt_label_gates (
  project_id text NOT NULL,
  prompt_id text NOT NULL,
  label text NOT NULL,
  -- No foreign key: a dataset deleted later leaves a gate that finds no evidence (and refuses).
  dataset_id uuid NOT NULL,
  -- Score names that must not regress significantly, and those of them where lower is better.
  scores text[] NOT NULL DEFAULT '{}',
  lower_is_better text[] NOT NULL DEFAULT '{}',
  alpha double precision NOT NULL DEFAULT 0.05 CHECK (alpha > 0 AND alpha < 1),
  -- Bound on the increase of the mean cost per item, in percent of the current version's; null: none.
  max_cost_increase_pct double precision CHECK (max_cost_increase_pct IS NULL OR max_cost_increase_pct >= 0),
  require_approval boolean NOT NULL DEFAULT false,
  updated_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, prompt_id, label),
  FOREIGN KEY (project_id, prompt_id) REFERENCES prompts (project_id, prompt_id)
);

-- An approval of one version for one label, by one admin (never the version's author).
CREATE TABLE IF NOT EXISTS prompt_label_approvals (
  project_id text NOT NULL,
  prompt_id text NOT NULL,
  label text NOT NULL,
  version integer NOT NULL,
  approved_by text NOT NULL,
  comment text CHECK (comment IS NULL OR length(comment) <= 2000),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, prompt_id, label, version, approved_by),
  FOREIGN KEY (project_id, prompt_id, version) REFERENCES prompt_versions (project_id, prompt_id, version)
);

-- The audit trail: append-only, paged by seq (newest first).
CREATE TABLE IF NOT EXISTS prompt_label_events (
  seq bigserial PRIMARY KEY,
  project_id text NOT NULL,
  prompt_id text NOT NULL,
  label text NOT NULL,
  action text NOT NULL CHECK (action IN ('moved', 'overridden', 'removed', 'approved', 'gate_set', 'gate_removed')),
  from_version integer,
  to_version integer,
  -- Who: the principal id (JWT sub, api_key:<id>, dev, operator) and the API key id when a key called.
  actor text NOT NULL,
  api_key_id text,
  -- Why: an override's reason, an approval's comment, a version's commit message.
  reason text CHECK (reason IS NULL OR length(reason) <= 2000),
  -- What the gate said (its conditions) for gated moves and overrides; the config for gate changes.
  details jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS prompt_label_events_prompt ON prompt_label_events (project_id, prompt_id, seq);
