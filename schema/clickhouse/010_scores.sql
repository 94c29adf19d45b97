-- Scores: judgements of an execution (a trace), one of its spans, or a session, by people, code or
-- LLM judges (docs/scores.md). Rows are never updated: a change to a score writes a cancel row
-- (sign -1, the same key and version as the row it cancels) and a new row (sign +1, a higher
-- version), as executions do; a delete writes the cancel row only. Readers use FINAL (or sum(sign)),
-- so counts and means stay exact through updates and deletes. A score of a trace not assembled yet
-- is stored all the same: it joins the execution by trace_id when the execution is read.
CREATE TABLE IF NOT EXISTS scores (
  project_id LowCardinality(String),
  trace_id String,
  id String,
  version UInt64,
  sign Int8,
  span_id String,
  session_id String,
  name LowCardinality(String),
  data_type LowCardinality(String),
  value Float64,
  label String,
  comment String CODEC(ZSTD(3)),
  source LowCardinality(String),
  author String,
  config_id String,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  INDEX idx_id id TYPE bloom_filter(0.001) GRANULARITY 1,
  INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4
) ENGINE = VersionedCollapsingMergeTree(sign, version)
PARTITION BY toYYYYMM(created_at)
ORDER BY (project_id, trace_id, id)
SETTINGS non_replicated_deduplication_window = 10000;
