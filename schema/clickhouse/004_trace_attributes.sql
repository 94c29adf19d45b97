-- The user an execution ran for, beside its session, tags and metadata (001): kept from every
-- convention that carries them (docs/traces.md, "Attributes kept"), filterable in listings. On
-- spans, the same per span, mapped at ingest so assembly reads light columns. Columns are
-- appended (no AFTER): rows of `spans` are encoded in the table's column order.
ALTER TABLE executions ADD COLUMN IF NOT EXISTS user_id String;

ALTER TABLE executions ADD INDEX IF NOT EXISTS idx_user_id user_id TYPE bloom_filter(0.01) GRANULARITY 4;

ALTER TABLE executions ADD INDEX IF NOT EXISTS idx_session_id session_id TYPE bloom_filter(0.01) GRANULARITY 4;

ALTER TABLE executions ADD INDEX IF NOT EXISTS idx_tags tags TYPE bloom_filter(0.01) GRANULARITY 4;

ALTER TABLE spans ADD COLUMN IF NOT EXISTS user_id String;

ALTER TABLE spans ADD COLUMN IF NOT EXISTS tags Array(String);

ALTER TABLE spans ADD COLUMN IF NOT EXISTS metadata Map(String, String) CODEC(ZSTD(1));
