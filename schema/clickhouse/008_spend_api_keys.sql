-- Spend per API key (docs/spend.md, "Budgets of an API key" and "Breakdowns"): an hourly rollup of
-- executions keyed by the key that sent them (007) and the scalar dimensions of spend_hourly (006),
-- fed the same way: every sum multiplies by sign, so a correction moves spend between keys exactly,
-- without FINAL; kept beyond raw-data retention. A new table and view rather than a column added
-- to spend_hourly: that would change a live view's query (MODIFY QUERY, or a drop and re-create
-- that loses the executions inserted meanwhile) and a rollup's sort key. Executions stored before this view existed are copied in
-- once at boot (backfillIfEmpty in src/spend/spend-rollup-repository.ts), under the key ''.
CREATE TABLE IF NOT EXISTS spend_hourly_api_keys (
  project_id LowCardinality(String),
  api_key_id LowCardinality(String),
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
ORDER BY (project_id, api_key_id, hour, provider, model, agent_id, user_id, session_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_hourly_api_keys_mv TO spend_hourly_api_keys AS
SELECT project_id, api_key_id, toStartOfHour(started_at, 'UTC') AS hour, provider, model, agent_id, user_id, session_id,
  sum(toDecimal128(cost_usd, 9) * sign) AS cost_usd,
  sum(toInt64(tokens_in) * sign) AS tokens_in,
  sum(toInt64(tokens_out) * sign) AS tokens_out,
  sum(toInt64(sign)) AS executions,
  sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS unpriced_executions
FROM executions
GROUP BY project_id, api_key_id, hour, provider, model, agent_id, user_id, session_id;
