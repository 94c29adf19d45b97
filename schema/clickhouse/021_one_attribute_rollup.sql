-- Fewer views per write of executions (docs/spend.md, "Rollups by grain"; bench/spend-views.ts):
-- each materialized view costs every insert a pipeline and a part of its own, whatever it sums,
-- so the three families of 018 that add one attribute to the low-cardinality dimensions (a tag, a
-- prompt, an API key) become one table, told apart by `attribute`, fed by one view; and the hourly
-- rollup by prompt (006), which kept a row per prompt, user, session and hour, is no longer fed: a
-- prompt with a user or a session is read from the executions rows, as a tag with them is (019).
-- `value` is the tag, the prompt id or the API key id ('' for an execution without one); an
-- execution counts once per distinct tag and prompt, and once under its API key.
CREATE TABLE IF NOT EXISTS spend_by_attribute (
  project_id LowCardinality(String),
  attribute Enum8('tag' = 1, 'prompt' = 2, 'api_key' = 3),
  grain Enum8('hour' = 1, 'day' = 2, 'month' = 3),
  bucket DateTime('UTC'),
  value String,
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
ORDER BY (project_id, attribute, grain, bucket, value, provider, model, agent_id, environment)
SETTINGS non_replicated_deduplication_window = 10000;

-- What the three tables of 018 hold moves here as it is (their rows are already signed sums, and
-- kept beyond raw-data retention), before the views change (the service does not write while it
-- migrates); each copy only while its family is absent, so a migration run again does not add it
-- twice. The old tables stay, read by nothing.
INSERT INTO spend_by_attribute (project_id, attribute, grain, bucket, value, provider, model, agent_id, environment,
  cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
SELECT project_id, 'tag', grain, bucket, tag, provider, model, agent_id, environment,
  sum(cost_usd), sum(tokens_in), sum(tokens_out), sum(executions), sum(unpriced_executions)
FROM spend_by_tag
WHERE (SELECT count() FROM spend_by_attribute WHERE attribute = 'tag') = 0
GROUP BY project_id, grain, bucket, tag, provider, model, agent_id, environment
SETTINGS max_partitions_per_insert_block = 10000;

INSERT INTO spend_by_attribute (project_id, attribute, grain, bucket, value, provider, model, agent_id, environment,
  cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
SELECT project_id, 'prompt', grain, bucket, prompt_id, provider, model, agent_id, environment,
  sum(cost_usd), sum(tokens_in), sum(tokens_out), sum(executions), sum(unpriced_executions)
FROM spend_by_prompt
WHERE (SELECT count() FROM spend_by_attribute WHERE attribute = 'prompt') = 0
GROUP BY project_id, grain, bucket, prompt_id, provider, model, agent_id, environment
SETTINGS max_partitions_per_insert_block = 10000;

INSERT INTO spend_by_attribute (project_id, attribute, grain, bucket, value, provider, model, agent_id, environment,
  cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
SELECT project_id, 'api_key', grain, bucket, api_key_id, provider, model, agent_id, environment,
  sum(cost_usd), sum(tokens_in), sum(tokens_out), sum(executions), sum(unpriced_executions)
FROM spend_by_api_key
WHERE (SELECT count() FROM spend_by_attribute WHERE attribute = 'api_key') = 0
GROUP BY project_id, grain, bucket, api_key_id, provider, model, agent_id, environment
SETTINGS max_partitions_per_insert_block = 10000;

DROP VIEW IF EXISTS spend_by_tag_mv;

DROP VIEW IF EXISTS spend_by_prompt_mv;

DROP VIEW IF EXISTS spend_by_api_key_mv;

DROP VIEW IF EXISTS spend_hourly_prompts_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_by_attribute_mv TO spend_by_attribute AS
SELECT project_id, a.1 AS attribute, g.1 AS grain, g.2 AS bucket, a.2 AS value, provider, model, agent_id, environment,
  sum(c) AS cost_usd, sum(ti) AS tokens_in, sum(tout) AS tokens_out, sum(n) AS executions, sum(u) AS unpriced_executions
FROM (
  SELECT project_id, toStartOfHour(started_at, 'UTC') AS h, a, provider, model, agent_id, environment,
    sum(cost_usd * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    sum(toInt64(sign)) AS n, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u
  FROM executions
  ARRAY JOIN arrayConcat(
    arrayMap(t -> ('tag', t), if(empty(tags), [''], arrayDistinct(tags))),
    arrayMap(p -> ('prompt', p), if(empty(`tu.prompt_id`), [''], arrayDistinct(`tu.prompt_id`))),
    [('api_key', toString(api_key_id))]) AS a
  GROUP BY project_id, h, a, provider, model, agent_id, environment)
ARRAY JOIN [('hour', h), ('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, attribute, grain, bucket, value, provider, model, agent_id, environment;
