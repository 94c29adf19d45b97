-- Score id → the trace its live row is under (docs/scores.md, "Storage"): `scores` is ordered by
-- (project_id, trace_id, id), so a lookup by id alone (every upsert asks whether its ids exist)
-- would read a project's scores; this index answers it from its own key. Fed by a view from every
-- row written to `scores`: the newest version of an id wins (an update's new row; a delete's cancel
-- row repeats the version it cancels and, inserted after it, replaces it with sign -1). Scores and
-- this index came in one release: no earlier score needs indexing.
CREATE TABLE IF NOT EXISTS score_ids (
  project_id LowCardinality(String),
  id String,
  trace_id String,
  version UInt64,
  sign Int8
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS score_ids_mv TO score_ids AS
SELECT project_id, id, trace_id, version, sign FROM scores;
