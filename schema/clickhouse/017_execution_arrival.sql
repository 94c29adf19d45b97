-- Executions by arrival (docs/evaluators.md, "Jobs"): the evaluators' scan selects the rows stored
-- since its last scan by `received_at` (the service's clock when it stored the row), not by
-- `started_at` (a client's clock: a trace started before an evaluator existed may arrive after it).
-- `received_at` is not in the sort key; this index lets each scan skip the granules whose rows all
-- arrived before its window instead of reading the column of the project's whole history (parts
-- are written in arrival order; a merged part's granules mostly keep narrow arrival ranges). Parts
-- written before this migration are indexed as they merge.
ALTER TABLE executions ADD INDEX IF NOT EXISTS idx_received_at received_at TYPE minmax GRANULARITY 1;
