-- Spend breakdowns (GET .../spend, docs/spend.md "Breakdowns"): hourly rollups of executions keyed
-- by every scalar dimension (provider, model, agent, user, session), fed like daily_spend: every
-- sum multiplies by sign, so a correction (cancel row repeating the old values, new version row)
-- moves the old group down and the new one up, exactly, without FINAL. A group whose sums all
-- reach zero is dropped by the next merge. Kept beyond raw-data retention, like daily_spend.
-- Tags and prompts are arrays on an execution: each has its own rollup where an execution counts
-- once per distinct value ('' for none), so a breakdown by tag or prompt is exact per value.
-- Executions stored before these views existed are copied in once at boot, before the node
-- ingests (backfillIfEmpty in src/spend/spend-rollup-repository.ts): migrations hold DDL only.
CREATE TABLE IF NOT EXISTS spend_hourly (
  project_id LowCardinality(String),
  hour DateTime('UTC'),
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  user_id String,
  session_id String,
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, provider, model, agent_id, user_id, session_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS spend_hourly_tags (
  project_id LowCardinality(String),
  tag String,
  hour DateTime('UTC'),
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  user_id String,
  session_id String,
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, tag, hour, provider, model, agent_id, user_id, session_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS spend_hourly_prompts (
  project_id LowCardinality(String),
  prompt_id String,
  hour DateTime('UTC'),
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  user_id String,
  session_id String,
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, prompt_id, hour, provider, model, agent_id, user_id, session_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_hourly_mv TO spend_hourly AS
SELECT project_id, toStartOfHour(started_at, 'UTC') AS hour, provider, model, agent_id, user_id, session_id,
  sum(toDecimal128(cost_usd, 9) * sign) AS cost_usd,
  sum(toInt64(tokens_in) * sign) AS tokens_in,
  sum(toInt64(tokens_out) * sign) AS tokens_out,
  sum(toInt64(sign)) AS executions,
  sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS unpriced_executions
FROM executions
GROUP BY project_id, hour, provider, model, agent_id, user_id, session_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_hourly_tags_mv TO spend_hourly_tags AS
SELECT project_id, tag, toStartOfHour(started_at, 'UTC') AS hour, provider, model, agent_id, user_id, session_id,
  sum(toDecimal128(cost_usd, 9) * sign) AS cost_usd,
  sum(toInt64(tokens_in) * sign) AS tokens_in,
  sum(toInt64(tokens_out) * sign) AS tokens_out,
  sum(toInt64(sign)) AS executions,
  sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS unpriced_executions
FROM executions
ARRAY JOIN if(empty(tags), [''], arrayDistinct(tags)) AS tag
GROUP BY project_id, tag, hour, provider, model, agent_id, user_id, session_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_hourly_prompts_mv TO spend_hourly_prompts AS
SELECT project_id, prompt_id, toStartOfHour(started_at, 'UTC') AS hour, provider, model, agent_id, user_id, session_id,
  sum(toDecimal128(cost_usd, 9) * sign) AS cost_usd,
  sum(toInt64(tokens_in) * sign) AS tokens_in,
  sum(toInt64(tokens_out) * sign) AS tokens_out,
  sum(toInt64(sign)) AS executions,
  sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS unpriced_executions
FROM executions
ARRAY JOIN if(empty(`tu.prompt_id`), [''], arrayDistinct(`tu.prompt_id`)) AS prompt_id
GROUP BY project_id, prompt_id, hour, provider, model, agent_id, user_id, session_id;
