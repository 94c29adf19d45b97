-- One score rollup (docs/scores.md, "Storage"): `score_hourly_prompts` also holds, under
-- prompt_id '' (version 0, reference ''), every stamped score once, whatever prompts its execution
-- used: what `score_hourly` held. An insert into `scores` then feeds two views (the id index and
-- this rollup), not three: each view writes a part per insert, and the third part was a fifth of a
-- score write's insert (measured in BENCHMARKS.md, "Quality beside cost"). Readers of what
-- `score_hourly` held read prompt_id = '' (a prefix of the rollup's key); readers of a prompt's
-- scores name the prompt, which is never ''.
--
-- `score_hourly` is copied in once (the copy is skipped when rows under prompt_id '' exist: a run
-- interrupted after the copy does not copy twice) and kept, no longer written or read.
DROP VIEW IF EXISTS score_hourly_mv;

DROP VIEW IF EXISTS score_hourly_prompts_mv;

INSERT INTO score_hourly_prompts (project_id, prompt_id, name, hour, prompt_version, version_ref, provider, model, agent_id, user_id,
  session_id, data_type, label, scores, scored, value_sum, value_squares)
SELECT project_id, '', name, hour, 0, '', provider, model, agent_id, user_id, session_id, data_type, label, scores, scored, value_sum,
  value_squares
FROM score_hourly
WHERE (SELECT count() FROM score_hourly_prompts WHERE prompt_id = '') = 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS score_rollup_mv TO score_hourly_prompts AS
SELECT project_id, p.1 AS prompt_id, name, exec_hour AS hour, p.2 AS prompt_version, p.3 AS version_ref,
  exec_provider AS provider, exec_model AS model, exec_agent_id AS agent_id, exec_user_id AS user_id, exec_session_id AS session_id,
  data_type, if(data_type = 'CATEGORICAL', label, '') AS label,
  sum(toInt64(sign)) AS scores,
  sum(toInt64(sign) * counted) AS scored,
  sum(sign * value) AS value_sum,
  sum(sign * value * value) AS value_squares
FROM scores
ARRAY JOIN arrayConcat([('', toUInt32(0), '')], arrayZip(exec_prompt_ids, exec_prompt_versions, exec_prompt_refs)) AS p
WHERE exec_version > 0
GROUP BY project_id, prompt_id, name, hour, prompt_version, version_ref, provider, model, agent_id, user_id, session_id, data_type, label;
