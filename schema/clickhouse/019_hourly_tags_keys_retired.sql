-- The hourly rollups by tag and by API key (006, 008) are no longer fed (docs/spend.md, "Rollups by
-- grain"): they keep one row per tag (key), user, session and hour, so each execution wrote about a
-- row to each, the two costliest views of a write (bench/spend-views.ts). What they served is read
-- from the rollups by grain (018: spend_by_tag, spend_by_api_key; budgets by tag and API key too),
-- and what those do not hold (a tag or an API key with a user or session) from the executions
-- rows. Their tables are kept as they are and read by nothing; the views go.
DROP VIEW IF EXISTS spend_hourly_tags_mv;

DROP VIEW IF EXISTS spend_hourly_api_keys_mv;
