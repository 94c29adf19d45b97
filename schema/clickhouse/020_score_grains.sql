-- Score rollups by grain (docs/scores.md, "Storage"; docs/spend.md, "Rollups by grain"): what a
-- spend breakdown with `scores=` reads beside the spend rollups by grain (018). The hourly score
-- rollup (`score_hourly_prompts`, 013/015) keeps a row per user, session and hour, so a tenant's
-- breakdown with scores read about a row per score. Each table here holds a family of the stamp's
-- dimensions at several grains (`grain` 'hour', 'day' or 'month', `bucket` its start, UTC), summed
-- like 015 (every sum signed, unstamped rows add nothing), so a window is read as whole months,
-- days and hours, added or subtracted (src/executions/spend-grains.ts). `score_by_dims` holds every
-- stamped score under prompt_id '' and again under each distinct prompt its execution used;
-- `score_by_user` holds every stamped score once, by user, and reads its hours from
-- score_hourly_prompts (prompt_id ''). Each view sums an insert per hour first, then adds each
-- hour to its day and month. Scores stored before these views existed are copied in once at boot
-- (backfillIfEmpty in src/scores/score-repository.ts).
CREATE TABLE IF NOT EXISTS score_by_dims (
  project_id LowCardinality(String),
  prompt_id String,
  name LowCardinality(String),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  data_type LowCardinality(String),
  label String,
  scores Int64,
  scored Int64,
  value_sum Float64,
  value_squares Float64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, prompt_id, name, grain, bucket, provider, model, agent_id, data_type, label)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS score_by_dims_mv TO score_by_dims AS
SELECT project_id, prompt_id, name, g.1 AS grain, g.2 AS bucket, provider, model, agent_id, data_type, label,
  sum(s) AS scores, sum(c) AS scored, sum(v) AS value_sum, sum(v2) AS value_squares
FROM (
  SELECT project_id, p AS prompt_id, name, exec_hour AS h, exec_provider AS provider, exec_model AS model, exec_agent_id AS agent_id,
    data_type, if(data_type = 'CATEGORICAL', label, '') AS label,
    sum(toInt64(sign)) AS s, sum(toInt64(sign) * counted) AS c, sum(sign * value) AS v, sum(sign * value * value) AS v2
  FROM scores
  ARRAY JOIN arrayConcat([''], arrayDistinct(exec_prompt_ids)) AS p
  WHERE exec_version > 0
  GROUP BY project_id, prompt_id, name, h, provider, model, agent_id, data_type, label)
ARRAY JOIN [('hour', h), ('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, prompt_id, name, grain, bucket, provider, model, agent_id, data_type, label;

CREATE TABLE IF NOT EXISTS score_by_user (
  project_id LowCardinality(String),
  name LowCardinality(String),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  user_id String,
  data_type LowCardinality(String),
  label String,
  scores Int64,
  scored Int64,
  value_sum Float64,
  value_squares Float64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, name, grain, bucket, user_id, data_type, label)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS score_by_user_mv TO score_by_user AS
SELECT project_id, name, g.1 AS grain, g.2 AS bucket, user_id, data_type, label,
  sum(s) AS scores, sum(c) AS scored, sum(v) AS value_sum, sum(v2) AS value_squares
FROM (
  SELECT project_id, name, exec_hour AS h, exec_user_id AS user_id, data_type, if(data_type = 'CATEGORICAL', label, '') AS label,
    sum(toInt64(sign)) AS s, sum(toInt64(sign) * counted) AS c, sum(sign * value) AS v, sum(sign * value * value) AS v2
  FROM scores
  WHERE exec_version > 0
  GROUP BY project_id, name, h, user_id, data_type, label)
ARRAY JOIN [('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, name, grain, bucket, user_id, data_type, label;
