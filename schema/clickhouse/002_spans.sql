-- Spans: an append-only log of what OTLP exporters sent. A retried batch may store a span twice;
-- every reader deduplicates by (trace_id, span_id) (LIMIT 1 BY), and the ReplacingMergeTree
-- folds the copies away in merges. Nothing sums money over this table: executions do that.
-- The sort key serves the only hot read, "every span of these traces" (trace assembly,
-- hierarchy, timeline). Mapped fields (class, model, usage...) are computed once at ingest so
-- assembly reads light columns; heavy content (attributes, events, messages) is compressed and
-- read only for one trace at a time.
CREATE TABLE IF NOT EXISTS spans (
  project_id LowCardinality(String),
  trace_id String,
  span_id String,
  parent_span_id String,
  start_time_ns UInt64,
  end_time_ns UInt64,
  start_time DateTime64(9, 'UTC') MATERIALIZED fromUnixTimestamp64Nano(toInt64(start_time_ns)),
  received_at DateTime64(3, 'UTC'),
  name String,
  kind LowCardinality(String),
  status_code LowCardinality(String),
  status_message String,
  service_name LowCardinality(String),
  scope_name LowCardinality(String),
  scope_version LowCardinality(String),
  span_class LowCardinality(String),
  operation LowCardinality(String),
  provider LowCardinality(String),
  model LowCardinality(String),
  agent_id String,
  session_id String,
  has_usage UInt8,
  tokens_in UInt64,
  tokens_out UInt64,
  tokens_cached_in UInt64,
  tokens_cache_write_in UInt64,
  tokens_reasoning UInt64,
  cost_provided Nullable(Decimal(18, 9)),
  tool_name String,
  tool_call_id String,
  error_message String,
  prompt_usages String,
  truncated Array(String),
  attributes String CODEC(ZSTD(1)),
  resource String CODEC(ZSTD(1)),
  events String CODEC(ZSTD(1)),
  links String CODEC(ZSTD(1)),
  messages String CODEC(ZSTD(1))
) ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(start_time)
ORDER BY (project_id, trace_id, span_id)
SETTINGS non_replicated_deduplication_window = 10000;
