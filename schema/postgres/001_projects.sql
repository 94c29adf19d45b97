-- Projects: the unit of tenancy. Every other table refers to one; every query is scoped by one.
CREATE TABLE IF NOT EXISTS projects (
  project_id text PRIMARY KEY CHECK (project_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
