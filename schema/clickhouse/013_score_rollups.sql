-- Score rollups (docs/scores.md, "Storage"): the version comparison and spend breakdowns with
-- scores read hourly sums of scores by their execution's dimensions, not a join of every score to
-- every execution of the window.
--
-- Each score row carries a stamp: the dimensions of its execution when it was written (`exec_*`,
-- `exec_version` 0 when the execution was not known yet), and `counted` (1 on exactly one live
-- score per trace and name, so "executions scored" is a sum). A score whose execution arrives or
-- changes later is stamped again like an update (a cancel row repeating the old stamp, a new row
-- with the new one), by src/scores/score-stamps.ts. The views below are fed by every row written to
-- `scores`, signed like the spend rollups: a cancel row subtracts what its row added, so the sums
-- stay exact through updates, deletes and new stamps without FINAL. Unstamped rows add nothing.
-- Scores and these rollups came in one release: no earlier score needs stamping.
ALTER TABLE scores ADD COLUMN IF NOT EXISTS counted UInt8 DEFAULT 0;
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_version UInt64 DEFAULT 0;
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_hour DateTime('UTC') DEFAULT toDateTime(0, 'UTC');
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_provider LowCardinality(String) DEFAULT '';
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_model LowCardinality(String) DEFAULT '';
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_agent_id LowCardinality(String) DEFAULT '';
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_user_id String DEFAULT '';
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_session_id String DEFAULT '';
-- One entry per distinct prompt the execution used: its id, and the version and reference of its
-- first use (as the version comparison groups an execution).
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_prompt_ids Array(String) DEFAULT [];
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_prompt_versions Array(UInt32) DEFAULT [];
ALTER TABLE scores ADD COLUMN IF NOT EXISTS exec_prompt_refs Array(String) DEFAULT [];

-- Keyed like spend_hourly (src/spend/spend-rollup-repository.ts), plus the score's name, its data
-- type and, for a CATEGORICAL score, its label ('' otherwise).
CREATE TABLE IF NOT EXISTS score_hourly (
  project_id LowCardinality(String),
  name LowCardinality(String),
  hour DateTime('UTC'),
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  user_id String,
  session_id String,
  data_type LowCardinality(String),
  label String,
  scores Int64,
  scored Int64,
  value_sum Float64,
  value_squares Float64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, name, hour, provider, model, agent_id, user_id, session_id, data_type, label)
SETTINGS non_replicated_deduplication_window = 10000;

-- Keyed like spend_hourly_prompts plus the prompt's version and reference: an execution counts once
-- per distinct prompt it used.
CREATE TABLE IF NOT EXISTS score_hourly_prompts (
  project_id LowCardinality(String),
  prompt_id String,
  name LowCardinality(String),
  hour DateTime('UTC'),
  prompt_version UInt32,
  version_ref String,
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  user_id String,
  session_id String,
  data_type LowCardinality(String),
  label String,
  scores Int64,
  scored Int64,
  value_sum Float64,
  value_squares Float64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, prompt_id, name, hour, prompt_version, version_ref, provider, model, agent_id, user_id, session_id, data_type, label)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS score_hourly_mv TO score_hourly AS
SELECT project_id, name, exec_hour AS hour, exec_provider AS provider, exec_model AS model, exec_agent_id AS agent_id,
  exec_user_id AS user_id, exec_session_id AS session_id, data_type, if(data_type = 'CATEGORICAL', label, '') AS label,
  sum(toInt64(sign)) AS scores,
  sum(toInt64(sign) * counted) AS scored,
  sum(sign * value) AS value_sum,
  sum(sign * value * value) AS value_squares
FROM scores
WHERE exec_version > 0
GROUP BY project_id, name, hour, provider, model, agent_id, user_id, session_id, data_type, label;

CREATE MATERIALIZED VIEW IF NOT EXISTS score_hourly_prompts_mv TO score_hourly_prompts AS
SELECT project_id, p.1 AS prompt_id, name, exec_hour AS hour, p.2 AS prompt_version, p.3 AS version_ref,
  exec_provider AS provider, exec_model AS model, exec_agent_id AS agent_id, exec_user_id AS user_id, exec_session_id AS session_id,
  data_type, if(data_type = 'CATEGORICAL', label, '') AS label,
  sum(toInt64(sign)) AS scores,
  sum(toInt64(sign) * counted) AS scored,
  sum(sign * value) AS value_sum,
  sum(sign * value * value) AS value_squares
FROM scores
ARRAY JOIN arrayZip(exec_prompt_ids, exec_prompt_versions, exec_prompt_refs) AS p
WHERE exec_version > 0
GROUP BY project_id, prompt_id, name, hour, prompt_version, version_ref, provider, model, agent_id, user_id, session_id, data_type, label;
