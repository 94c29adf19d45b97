-- The trace index carries each execution's score stamp (docs/scores.md, "Storage"): the
-- dimensions a score of the trace is summed by in the score rollups (013_score_rollups.sql). Every
-- score write looks up the stamps of its traces; read from here they are a key read of a narrow
-- table (a few granules of `(project_id, trace_id)`), not a `FINAL` read of the executions rows.
-- `stamped` is 1 on every row the view below writes; rows indexed before this migration keep 0
-- and their stamps are read from `executions` (src/executions/execution-repository.ts,
-- `scoreStamps`). The view is replaced: between its drop and its creation the service is not
-- writing (migrations run before it starts).
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS stamped UInt8 DEFAULT 0;
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS provider LowCardinality(String) DEFAULT '';
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS model LowCardinality(String) DEFAULT '';
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS agent_id LowCardinality(String) DEFAULT '';
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS user_id String DEFAULT '';
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS session_id String DEFAULT '';
-- One entry per distinct prompt the execution used: its id, and the version and reference of its
-- first use (as the scores' `exec_prompt_*`).
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS prompt_ids Array(String) DEFAULT [];
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS prompt_versions Array(UInt32) DEFAULT [];
ALTER TABLE execution_traces ADD COLUMN IF NOT EXISTS prompt_refs Array(String) DEFAULT [];

DROP VIEW IF EXISTS execution_traces_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS execution_traces_mv TO execution_traces AS
SELECT project_id, trace_id, version, started_at, content_hash, toUInt8(1) AS stamped, provider, model, agent_id, user_id, session_id,
  arrayDistinct(`tu.prompt_id`) AS prompt_ids,
  arrayMap(id -> arrayFirst((v, x) -> x = id, `tu.version`, `tu.prompt_id`), prompt_ids) AS prompt_versions,
  arrayMap(id -> arrayFirst((r, x) -> x = id, `tu.version_ref`, `tu.prompt_id`), prompt_ids) AS prompt_refs
FROM executions WHERE sign = 1;
