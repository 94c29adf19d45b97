-- Spend rollups by dimension family and time grain (docs/spend.md, "How a breakdown is read"): the
-- hourly rollups of 006 and 008 keep one row per user-hour (and session), so for a tenant with
-- many users they are as large as its executions and a breakdown's cost grew with its volume.
-- Each table here holds one family of dimensions (src/executions/spend-dimensions.ts, SPEND_ROLLUPS)
-- at several grains: `grain` 'hour', 'day' or 'month', `bucket` the grain's start (UTC). A breakdown
-- over [start, end) reads whole months, days and hours that cover the window exactly, or a month
-- (day) minus the days (hours) of it outside the window when that reads fewer buckets: every sum
-- is signed, so subtracting is exact. The families of high-cardinality dimensions (users) hold no
-- hour grain: their hours are read from spend_hourly, which holds those dimensions per hour; and
-- users × models only months (a day of it has nearly as many rows as the day has executions).
-- Each view sums an insert's executions per hour first, then adds each hour's sums to its day and
-- month: the grains cost one aggregation of the executions, not one per grain.
-- Fed from executions like 006 (every sum multiplies by sign: corrections, repricing and late
-- spans move the old group down and the new one up); kept beyond raw-data retention. Executions
-- stored before these views existed are copied in once at boot (backfillIfEmpty in
-- src/spend/spend-rollup-repository.ts).

CREATE TABLE IF NOT EXISTS spend_by_dims (
  project_id LowCardinality(String),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  environment LowCardinality(String),
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, grain, bucket, provider, model, agent_id, environment)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_by_dims_mv TO spend_by_dims AS
SELECT project_id, g.1 AS grain, g.2 AS bucket, provider, model, agent_id, environment,
  sum(c) AS cost_usd, sum(ti) AS tokens_in, sum(tout) AS tokens_out, sum(n) AS executions, sum(u) AS unpriced_executions
FROM (
  SELECT project_id, toStartOfHour(started_at, 'UTC') AS h, provider, model, agent_id, environment,
    sum(cost_usd * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    sum(toInt64(sign)) AS n, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u
  FROM executions
  GROUP BY project_id, h, provider, model, agent_id, environment)
ARRAY JOIN [('hour', h), ('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, grain, bucket, provider, model, agent_id, environment;

CREATE TABLE IF NOT EXISTS spend_by_tag (
  project_id LowCardinality(String),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  tag String,
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  environment LowCardinality(String),
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, grain, bucket, tag, provider, model, agent_id, environment)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_by_tag_mv TO spend_by_tag AS
SELECT project_id, g.1 AS grain, g.2 AS bucket, tag, provider, model, agent_id, environment,
  sum(c) AS cost_usd, sum(ti) AS tokens_in, sum(tout) AS tokens_out, sum(n) AS executions, sum(u) AS unpriced_executions
FROM (
  SELECT project_id, toStartOfHour(started_at, 'UTC') AS h, tag, provider, model, agent_id, environment,
    sum(cost_usd * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    sum(toInt64(sign)) AS n, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u
  FROM executions
  ARRAY JOIN if(empty(tags), [''], arrayDistinct(tags)) AS tag
  GROUP BY project_id, h, tag, provider, model, agent_id, environment)
ARRAY JOIN [('hour', h), ('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, grain, bucket, tag, provider, model, agent_id, environment;

CREATE TABLE IF NOT EXISTS spend_by_prompt (
  project_id LowCardinality(String),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  prompt_id String,
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  environment LowCardinality(String),
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, grain, bucket, prompt_id, provider, model, agent_id, environment)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_by_prompt_mv TO spend_by_prompt AS
SELECT project_id, g.1 AS grain, g.2 AS bucket, prompt_id, provider, model, agent_id, environment,
  sum(c) AS cost_usd, sum(ti) AS tokens_in, sum(tout) AS tokens_out, sum(n) AS executions, sum(u) AS unpriced_executions
FROM (
  SELECT project_id, toStartOfHour(started_at, 'UTC') AS h, prompt_id, provider, model, agent_id, environment,
    sum(cost_usd * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    sum(toInt64(sign)) AS n, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u
  FROM executions
  ARRAY JOIN if(empty(`tu.prompt_id`), [''], arrayDistinct(`tu.prompt_id`)) AS prompt_id
  GROUP BY project_id, h, prompt_id, provider, model, agent_id, environment)
ARRAY JOIN [('hour', h), ('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, grain, bucket, prompt_id, provider, model, agent_id, environment;

CREATE TABLE IF NOT EXISTS spend_by_api_key (
  project_id LowCardinality(String),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  api_key_id LowCardinality(String),
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  environment LowCardinality(String),
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, grain, bucket, api_key_id, provider, model, agent_id, environment)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_by_api_key_mv TO spend_by_api_key AS
SELECT project_id, g.1 AS grain, g.2 AS bucket, api_key_id, provider, model, agent_id, environment,
  sum(c) AS cost_usd, sum(ti) AS tokens_in, sum(tout) AS tokens_out, sum(n) AS executions, sum(u) AS unpriced_executions
FROM (
  SELECT project_id, toStartOfHour(started_at, 'UTC') AS h, api_key_id, provider, model, agent_id, environment,
    sum(cost_usd * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    sum(toInt64(sign)) AS n, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u
  FROM executions
  GROUP BY project_id, h, api_key_id, provider, model, agent_id, environment)
ARRAY JOIN [('hour', h), ('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, grain, bucket, api_key_id, provider, model, agent_id, environment;

CREATE TABLE IF NOT EXISTS spend_by_user (
  project_id LowCardinality(String),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  user_id String,
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, grain, bucket, user_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_by_user_mv TO spend_by_user AS
SELECT project_id, g.1 AS grain, g.2 AS bucket, user_id,
  sum(c) AS cost_usd, sum(ti) AS tokens_in, sum(tout) AS tokens_out, sum(n) AS executions, sum(u) AS unpriced_executions
FROM (
  SELECT project_id, toStartOfHour(started_at, 'UTC') AS h, user_id,
    sum(cost_usd * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    sum(toInt64(sign)) AS n, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u
  FROM executions
  GROUP BY project_id, h, user_id)
ARRAY JOIN [('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, grain, bucket, user_id;

CREATE TABLE IF NOT EXISTS spend_by_user_model (
  project_id LowCardinality(String),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  user_id String,
  provider LowCardinality(String),
  model LowCardinality(String),
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, grain, bucket, user_id, provider, model)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_by_user_model_mv TO spend_by_user_model AS
SELECT project_id, g.1 AS grain, g.2 AS bucket, user_id, provider, model,
  sum(c) AS cost_usd, sum(ti) AS tokens_in, sum(tout) AS tokens_out, sum(n) AS executions, sum(u) AS unpriced_executions
FROM (
  SELECT project_id, toStartOfHour(started_at, 'UTC') AS h, user_id, provider, model,
    sum(cost_usd * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    sum(toInt64(sign)) AS n, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u
  FROM executions
  GROUP BY project_id, h, user_id, provider, model)
ARRAY JOIN [('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, grain, bucket, user_id, provider, model;