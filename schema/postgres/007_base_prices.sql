-- An undated project price is the model's base price (docs/executions.md, "Effective dates"): it
-- prices every call of its key, past and future, until a dated row of the key supersedes it from
-- that row's date. It is stored with effective_from NULL; one base row per (project, model).
ALTER TABLE model_prices ALTER COLUMN effective_from DROP NOT NULL;
ALTER TABLE model_prices ALTER COLUMN effective_from DROP DEFAULT;
CREATE UNIQUE INDEX IF NOT EXISTS model_prices_base ON model_prices (project_id, model) WHERE effective_from IS NULL;
