-- The deployment environment of each record (docs/spend.md, "Breakdowns": the `environment`
-- dimension): on spans the OTel resource attribute `deployment.environment.name` (else the older
-- `deployment.environment`) as sent; on executions the root span's (else the earliest span's that
-- has one), or the `environment` field of a direct record; '' when none was given and for rows
-- stored before this migration. No rollup holds it: a breakdown by or filtered on it reads the
-- executions rows. Columns are appended (no AFTER): rows of `spans` are encoded in the table's
-- column order.
ALTER TABLE executions ADD COLUMN IF NOT EXISTS environment LowCardinality(String);

ALTER TABLE executions ADD INDEX IF NOT EXISTS idx_environment environment TYPE bloom_filter(0.01) GRANULARITY 4;

ALTER TABLE spans ADD COLUMN IF NOT EXISTS environment LowCardinality(String);
