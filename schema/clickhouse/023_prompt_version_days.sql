-- What a version comparison reads of a prompt's executions (docs/scores.md, "Comparing versions"),
-- by day: per prompt, UTC day, and the version and reference of the execution's first use of the
-- prompt (the group a comparison puts it in, by version or by label): signed count, exact cost,
-- the sum of squared costs (the cost's variance for Welch's test), tokens, and sketches of cost and
-- latency per execution for p50 and p95. A comparison over 90 days reads at most 90 rows per
-- version and reference, whatever the prompt's volume, instead of every execution of the window.
-- Fed from executions like the spend rollups (sums multiplied by sign: exact through corrections
-- without FINAL). The sketches (a reservoir of 8,192 values per state: every value while a group
-- has no more) cannot subtract, so they take sign = +1 rows only; a comparison of groups this
-- small reads the executions themselves and is exact (src/quality/compare.ts). Executions stored
-- before this table existed are copied in once at boot. Kept beyond raw-data retention.
CREATE TABLE IF NOT EXISTS prompt_version_days (
  project_id LowCardinality(String),
  prompt_id String,
  day Date,
  prompt_version UInt32,
  version_ref String,
  executions SimpleAggregateFunction(sum, Int64),
  cost_usd SimpleAggregateFunction(sum, Decimal(38, 9)),
  cost_squares SimpleAggregateFunction(sum, Float64),
  tokens_in SimpleAggregateFunction(sum, Int64),
  tokens_out SimpleAggregateFunction(sum, Int64),
  cost_quantiles AggregateFunction(quantiles(0.5, 0.95), Float64),
  latency_quantiles AggregateFunction(quantiles(0.5, 0.95), UInt64)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, prompt_id, day, prompt_version, version_ref)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS prompt_version_days_mv TO prompt_version_days AS
SELECT project_id, u.1 AS prompt_id, day, u.2 AS prompt_version, u.3 AS version_ref,
  sum(toInt64(sign)) AS executions,
  sum(cost * sign) AS cost_usd,
  sum(cost_f * cost_f * sign) AS cost_squares,
  sum(toInt64(ti) * sign) AS tokens_in,
  sum(toInt64(tout) * sign) AS tokens_out,
  quantilesStateIf(0.5, 0.95)(cost_f, sign = 1) AS cost_quantiles,
  quantilesStateIf(0.5, 0.95)(latency, sign = 1) AS latency_quantiles
FROM (
  SELECT project_id, toDate(started_at, 'UTC') AS day, sign, toDecimal128(cost_usd, 9) AS cost, toFloat64(cost_usd) AS cost_f,
    tokens_in AS ti, tokens_out AS tout, latency_ms AS latency,
    arrayFilter((t, i) -> indexOf(`tu.prompt_id`, t.1) = i, arrayZip(`tu.prompt_id`, `tu.version`, `tu.version_ref`),
      arrayEnumerate(`tu.prompt_id`)) AS firsts
  FROM executions)
ARRAY JOIN firsts AS u
GROUP BY project_id, prompt_id, day, prompt_version, version_ref;
