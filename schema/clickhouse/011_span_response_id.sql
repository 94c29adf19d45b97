-- The response id of a generative-AI call (`gen_ai.response.id`) on its span: an evaluation event
-- sent without span context names the response it judges, and is joined to the span through it
-- (docs/scores.md, "Scores from OpenTelemetry"). Appended (no AFTER): rows of `spans` are encoded in
-- the table's column order.
ALTER TABLE spans ADD COLUMN IF NOT EXISTS response_id String;

ALTER TABLE spans ADD INDEX IF NOT EXISTS idx_response_id response_id TYPE bloom_filter(0.01) GRANULARITY 4;
