-- The API key that sent each record (docs/spend.md, "Budgets of an API key"): the key id of the
-- principal, '' when the caller was not an API key (JWT, dev, operator) or for rows stored before
-- this migration. On spans and log events as sent; on executions the key of the trace's root span
-- (else the first non-empty among its spans), or the key that posted a direct record. Columns are
-- appended (no AFTER): rows of `spans` are encoded in the table's column order.
ALTER TABLE executions ADD COLUMN IF NOT EXISTS api_key_id LowCardinality(String);

ALTER TABLE executions ADD INDEX IF NOT EXISTS idx_api_key_id api_key_id TYPE bloom_filter(0.01) GRANULARITY 4;

ALTER TABLE spans ADD COLUMN IF NOT EXISTS api_key_id LowCardinality(String);

ALTER TABLE span_log_events ADD COLUMN IF NOT EXISTS api_key_id LowCardinality(String);
