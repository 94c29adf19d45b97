-- Users seen in verified JWTs (or the dev user), their project memberships, and API keys.
CREATE TABLE IF NOT EXISTS users (
  user_id text PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS memberships (
  project_id text NOT NULL REFERENCES projects (project_id),
  user_id text NOT NULL REFERENCES users (user_id),
  role text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, user_id)
);
CREATE INDEX IF NOT EXISTS memberships_user ON memberships (user_id);

-- Only the SHA-256 of a key is stored; `prefix` (tl_ + 8 characters) is kept for display.
CREATE TABLE IF NOT EXISTS api_keys (
  key_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id text NOT NULL REFERENCES projects (project_id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  scope text NOT NULL CHECK (scope IN ('full', 'ingest')),
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX IF NOT EXISTS api_keys_project ON api_keys (project_id, created_at DESC);
