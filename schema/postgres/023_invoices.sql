-- Invoices and chargeback (docs/spend.md, "Invoices and reconciliation", "Chargeback statements").
-- An invoice is a provider's usage/cost export imported into a project (OpenAI, Anthropic or a
-- generic CSV); its lines are kept per UTC day and model with the cost exactly as the file gave it
-- (numeric without a scale: OpenAI's float noise and Anthropic's fractional cents are kept whole;
-- the reconciliation rounds a day's sum half-up to the nano-dollar). The same file imported twice
-- is one invoice: (project_id, content_sha256) is unique. Written so a second run changes nothing.
CREATE TABLE IF NOT EXISTS invoices (
  invoice_id uuid PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (project_id),
  -- 'openai', 'anthropic' or 'generic': how the file was read
  format text NOT NULL CHECK (format IN ('openai', 'anthropic', 'generic')),
  -- the provider its lines are billed by ('' for a generic file that names none)
  provider text NOT NULL CHECK (length(provider) <= 256),
  name text NOT NULL CHECK (length(name) <= 200),
  content_sha256 text NOT NULL CHECK (length(content_sha256) = 64),
  bytes bigint NOT NULL,
  first_day date NOT NULL,
  last_day date NOT NULL,
  line_count integer NOT NULL,
  total_usd numeric NOT NULL,
  imported_by text NOT NULL,
  imported_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS invoices_content ON invoices (project_id, content_sha256);
CREATE INDEX IF NOT EXISTS invoices_days ON invoices (project_id, first_day, last_day);

CREATE TABLE IF NOT EXISTS invoice_lines (
  invoice_id uuid NOT NULL REFERENCES invoices (invoice_id) ON DELETE CASCADE,
  project_id text NOT NULL,
  line_no integer NOT NULL,
  day date NOT NULL,
  provider text NOT NULL,
  -- the model as the file names it, and the key it is matched to ours by (docs/spend.md, "Models")
  model text NOT NULL,
  model_key text NOT NULL,
  cost_usd numeric NOT NULL,
  -- where the line came from in the file: "line 14" (CSV) or "data[3].results[2]" (JSON)
  raw_ref text NOT NULL,
  -- what the provider calls the line (line_item, description, token_type, ...)
  description text NOT NULL DEFAULT '',
  PRIMARY KEY (invoice_id, line_no)
);
CREATE INDEX IF NOT EXISTS invoice_lines_days ON invoice_lines (project_id, day);

-- Scheduled chargeback statements (as execution_exports for days): one row per project, month and
-- dimension written, with its manifest. The primary key makes each month's export happen once.
CREATE TABLE IF NOT EXISTS statement_exports (
  project_id text NOT NULL REFERENCES projects (project_id),
  month date NOT NULL,
  dimension text NOT NULL,
  target text NOT NULL,
  manifest jsonb NOT NULL,
  exported_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, month, dimension)
);
