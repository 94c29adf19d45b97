-- Template analytics, pre-aggregated: one row per (project, prompt, UTC day, prompt version) plus
-- a row with prompt_version = 0 for "every version" (versions start at 1), where an execution that
-- used several versions of one prompt counts once. Fed from executions like daily_spend (never
-- from a table whose rows are replaced: invariant 7), so counts and sums multiply by sign and stay
-- exact through corrections (cancel row + new version) without FINAL.
-- Latency percentiles are sketches (quantiles: a reservoir of 8192 samples per state, linear
-- interpolation): a sketch cannot subtract, so it is fed from sign = +1 rows only. A corrected
-- execution's old latency therefore stays in the percentile sketch (the average, from sums of
-- sign, is exact). Kept beyond raw-data retention, like daily_spend.
CREATE TABLE IF NOT EXISTS prompt_daily_stats (
  project_id LowCardinality(String),
  prompt_id String,
  prompt_version UInt32,
  day Date,
  executions SimpleAggregateFunction(sum, Int64),
  cost_usd SimpleAggregateFunction(sum, Decimal(38, 9)),
  latency_ms_sum SimpleAggregateFunction(sum, Int64),
  tokens_in SimpleAggregateFunction(sum, Int64),
  tokens_out SimpleAggregateFunction(sum, Int64),
  latency_ms_quantiles AggregateFunction(quantiles(0.5, 0.95), UInt64)
) ENGINE = AggregatingMergeTree
ORDER BY (project_id, prompt_id, day, prompt_version)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS prompt_daily_stats_mv TO prompt_daily_stats AS
SELECT project_id, pv.1 AS prompt_id, pv.2 AS prompt_version, toDate(started_at, 'UTC') AS day,
  sum(toInt64(sign)) AS executions,
  sum(toDecimal128(cost_usd, 9) * sign) AS cost_usd,
  sum(toInt64(latency_ms) * sign) AS latency_ms_sum,
  sum(toInt64(tokens_in) * sign) AS tokens_in,
  sum(toInt64(tokens_out) * sign) AS tokens_out,
  quantilesStateIf(0.5, 0.95)(latency_ms, sign = 1) AS latency_ms_quantiles
FROM executions
ARRAY JOIN arrayConcat(
  arrayMap(p -> (p, toUInt32(0)), arrayDistinct(`tu.prompt_id`)),
  arrayDistinct(arrayZip(`tu.prompt_id`, `tu.version`))) AS pv
GROUP BY project_id, prompt_id, prompt_version, day;
