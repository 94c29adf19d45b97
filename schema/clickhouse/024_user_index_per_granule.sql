-- A user's executions (the list filtered by user_id, docs/executions.md) read every granule the
-- user's bloom filter cannot rule out. At GRANULARITY 4 (004) one filter covers four granules,
-- 32,768 rows, which in a project with many users nearly always hold the user somewhere; at
-- GRANULARITY 1 it covers one. Measured on one project of 100,000,000 executions and 100,000
-- users (bench/tenant.ts, BENCHMARKS.md): a user's first page 200 ms p50 against 449-517 ms.
-- The new index is built for the parts already stored by a background mutation (the migration
-- does not wait; until it ends, those parts are read as before, answers unchanged); then the
-- coarse one goes.
ALTER TABLE executions ADD INDEX IF NOT EXISTS idx_user_id_fine user_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE executions MATERIALIZE INDEX idx_user_id_fine;

ALTER TABLE executions DROP INDEX IF EXISTS idx_user_id;
