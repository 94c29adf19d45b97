-- Executions: one logical row per (project_id, trace_id). Rows are never updated: a correction
-- (a later OTLP span changing a trace's summary) writes a cancel row (sign -1, same version and
-- key as the row it cancels) and a new row (sign +1, higher version). Readers use FINAL (or
-- sum(sign)); every materialized sum multiplies by sign, so totals stay exact without FINAL.
-- Heavy columns (messages, template inputs) are compressed and never read by listings.
CREATE TABLE IF NOT EXISTS executions (
  project_id LowCardinality(String),
  started_at DateTime64(3, 'UTC'),
  trace_id String,
  version UInt64,
  sign Int8,
  ended_at DateTime64(3, 'UTC'),
  received_at DateTime64(3, 'UTC'),
  source LowCardinality(String),
  agent_id LowCardinality(String),
  provider LowCardinality(String),
  model LowCardinality(String),
  status LowCardinality(String),
  error_message String,
  tokens_in UInt64,
  tokens_out UInt64,
  tokens_cached_in UInt64,
  tokens_cache_write_in UInt64,
  tokens_reasoning UInt64,
  latency_ms UInt64,
  cost_usd Decimal(18, 9),
  cost_source LowCardinality(String),
  cost_computed_usd Nullable(Decimal(18, 9)),
  price_id LowCardinality(String),
  usage_warnings Array(String),
  session_id String,
  tags Array(String),
  metadata Map(String, String),
  span_count UInt32,
  content_hash String,
  `tu.prompt_id` Array(String),
  `tu.version` Array(UInt32),
  `tu.version_ref` Array(String),
  `tu.role` Array(String),
  `tu.source` Array(String),
  `tu.message_index` Array(Int32),
  template_inputs String CODEC(ZSTD(3)),
  conversation_history String CODEC(ZSTD(3)),
  INDEX idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
  INDEX idx_prompt `tu.prompt_id` TYPE bloom_filter(0.01) GRANULARITY 4
) ENGINE = VersionedCollapsingMergeTree(sign, version)
PARTITION BY toYYYYMM(started_at)
ORDER BY (project_id, started_at, trace_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Trace id → where its row lives, so a lookup by id reads a few granules, not a project's history.
CREATE TABLE IF NOT EXISTS execution_traces (
  project_id LowCardinality(String),
  trace_id String,
  version UInt64,
  started_at DateTime64(3, 'UTC'),
  content_hash String
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, trace_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS execution_traces_mv TO execution_traces AS
SELECT project_id, trace_id, version, started_at, content_hash FROM executions WHERE sign = 1;

-- One row per template usage, for per-template analytics (signed like its execution).
CREATE TABLE IF NOT EXISTS template_usages (
  project_id LowCardinality(String),
  prompt_id String,
  started_at DateTime64(3, 'UTC'),
  trace_id String,
  usage_index UInt16,
  version UInt64,
  sign Int8,
  prompt_version UInt32,
  version_ref String,
  role LowCardinality(String),
  source LowCardinality(String),
  message_index Int32,
  cost_usd Decimal(18, 9),
  latency_ms UInt64,
  tokens_in UInt64,
  tokens_out UInt64
) ENGINE = VersionedCollapsingMergeTree(sign, version)
PARTITION BY toYYYYMM(started_at)
ORDER BY (project_id, prompt_id, started_at, trace_id, usage_index)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS template_usages_mv TO template_usages AS
SELECT project_id, u.1 AS prompt_id, started_at, trace_id, toUInt16(u.7) AS usage_index, version, sign,
  u.2 AS prompt_version, u.3 AS version_ref, u.4 AS role, u.5 AS source, u.6 AS message_index,
  cost_usd, latency_ms, tokens_in, tokens_out
FROM executions
ARRAY JOIN arrayZip(`tu.prompt_id`, `tu.version`, `tu.version_ref`, `tu.role`, `tu.source`, `tu.message_index`, arrayEnumerate(`tu.prompt_id`)) AS u;

-- Daily spend, summed from executions only, signed: a cancel row subtracts what its row added.
-- Kept beyond raw-data retention; budgets and stats read it, never raw rows.
CREATE TABLE IF NOT EXISTS daily_spend (
  project_id LowCardinality(String),
  day Date,
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id LowCardinality(String),
  cost_usd Decimal(38, 9),
  tokens_in Int64,
  tokens_out Int64,
  executions Int64,
  unpriced_executions Int64
) ENGINE = SummingMergeTree
ORDER BY (project_id, day, provider, model, agent_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS daily_spend_mv TO daily_spend AS
SELECT project_id, toDate(started_at, 'UTC') AS day, provider, model, agent_id,
  sum(toDecimal128(cost_usd, 9) * sign) AS cost_usd,
  sum(toInt64(tokens_in) * sign) AS tokens_in,
  sum(toInt64(tokens_out) * sign) AS tokens_out,
  sum(toInt64(sign)) AS executions,
  sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS unpriced_executions
FROM executions
GROUP BY project_id, day, provider, model, agent_id;

-- Daily spend per prompt: an execution's cost counts once for each distinct prompt it used, so
-- sums across prompts may exceed the project total when one execution used several prompts.
CREATE TABLE IF NOT EXISTS daily_prompt_spend (
  project_id LowCardinality(String),
  day Date,
  prompt_id String,
  cost_usd Decimal(38, 9),
  executions Int64
) ENGINE = SummingMergeTree
ORDER BY (project_id, day, prompt_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS daily_prompt_spend_mv TO daily_prompt_spend AS
SELECT project_id, toDate(started_at, 'UTC') AS day, prompt_id,
  sum(toDecimal128(cost_usd, 9) * sign) AS cost_usd,
  sum(toInt64(sign)) AS executions
FROM executions
ARRAY JOIN arrayDistinct(`tu.prompt_id`) AS prompt_id
GROUP BY project_id, day, prompt_id;
