-- Per-project model prices (api.md part 5): they take precedence over the built-in catalogue.
-- Rows of one (project, model) with different effective_from are that model's price history: the
-- row in force at a call's started_at (the latest effective_from at or before it) prices the call.
-- Rates are US dollars per million tokens, NUMERIC (never float), kept to 12 decimal places: the
-- scale the cost arithmetic uses (src/pricing/cost.ts RATE_SCALE).
CREATE TABLE IF NOT EXISTS model_prices (
  price_id uuid PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  -- The path key of PUT/DELETE .../models/{model}; also the exact model id it prices.
  model text NOT NULL CHECK (length(model) BETWEEN 1 AND 256),
  -- When set, the price applies only to calls reporting this provider (compared case-insensitively).
  provider text CHECK (length(provider) BETWEEN 1 AND 64),
  -- An optional JavaScript regular expression over the model id, widening the key's exact match.
  match text CHECK (length(match) BETWEEN 1 AND 200),
  input_per_mtok numeric(30, 12) NOT NULL CHECK (input_per_mtok >= 0),
  output_per_mtok numeric(30, 12) NOT NULL CHECK (output_per_mtok >= 0),
  cached_input_per_mtok numeric(30, 12) CHECK (cached_input_per_mtok >= 0),
  cache_write_per_mtok numeric(30, 12) CHECK (cache_write_per_mtok >= 0),
  effective_from timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text,
  -- A PUT naming an existing effective_from replaces that row; the index also serves every read
  -- (all of a project's rows, one key's rows).
  UNIQUE (project_id, model, effective_from)
);
