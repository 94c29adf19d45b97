-- GenAI events that arrived as OTLP log records (POST /api/v1/logs, gRPC LogsService): kept per
-- (trace, span), in the span-event form the message mapper reads, and merged into their span's
-- messages wherever a trace is read (assembly, timeline, hierarchy), whichever of the span and
-- its events arrived first. Append-only like spans: a retried export stores an event again;
-- readers take one copy per (trace_id, span_id, record_hash) and merges fold copies away.
CREATE TABLE IF NOT EXISTS span_log_events (
  project_id LowCardinality(String),
  trace_id String,
  span_id String,
  time_ns UInt64,
  received_at DateTime64(3, 'UTC'),
  seq UInt32,
  event_name LowCardinality(String),
  record_hash String,
  attributes String CODEC(ZSTD(1))
) ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(received_at)
ORDER BY (project_id, trace_id, span_id, record_hash)
SETTINGS non_replicated_deduplication_window = 10000;
