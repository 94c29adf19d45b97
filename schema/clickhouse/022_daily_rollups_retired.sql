-- The daily rollups of 001 are no longer fed (docs/spend.md, "Where the figures come from"): the
-- day grain of the rollups by grain holds what they hold (`daily_spend`: spend_by_dims' days by
-- provider, model and agent; `daily_prompt_spend`: spend_by_attribute's days of attribute
-- 'prompt'), so stats, top prompts and budgets read those, and each write of executions feeds two
-- views fewer. Their tables stay, read by nothing.
--
-- The rollups by grain were filled from the executions stored when 018 ran (or, upgrading from
-- before it, are filled at the next boot); a project whose raw-data retention had removed older
-- executions keeps those days only in the daily rollups. For each day before a project's first
-- stored execution (every day of a project with none), what the daily rollup holds beyond the day
-- grain is added here to the day and its month; no hour of such a day is known, so a window that
-- splits one counts the whole day's difference with it. The boot's backfill from executions
-- (backfillIfEmpty) looks for rows at a rollup's finest grain, which these are not. Run again, the
-- difference is zero and nothing is added.
INSERT INTO spend_by_dims (project_id, grain, bucket, provider, model, agent_id, environment,
  cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
SELECT project_id, g.1 AS grain, g.2 AS bucket, provider, model, agent_id, '' AS environment, c, ti, tout, n, u
FROM (
  SELECT project_id, day, provider, model, agent_id,
    sum(cost_usd) AS c, sum(tokens_in) AS ti, sum(tokens_out) AS tout, sum(executions) AS n, sum(unpriced_executions) AS u
  FROM (
    SELECT project_id, day, provider, model, agent_id, cost_usd, tokens_in, tokens_out, executions, unpriced_executions
    FROM daily_spend
    UNION ALL
    SELECT project_id, toDate(bucket, 'UTC') AS day, provider, model, agent_id,
      -cost_usd, -tokens_in, -tokens_out, -executions, -unpriced_executions
    FROM spend_by_dims WHERE grain = 'day') AS d
  LEFT JOIN (SELECT project_id, min(toDate(started_at, 'UTC')) AS first_day FROM executions GROUP BY project_id) AS f
    ON d.project_id = f.project_id
  WHERE f.project_id = '' OR d.day < f.first_day
  GROUP BY project_id, day, provider, model, agent_id
  HAVING c != 0 OR ti != 0 OR tout != 0 OR n != 0 OR u != 0)
ARRAY JOIN [('day', toDateTime(day, 'UTC')), ('month', toDateTime(toStartOfMonth(day), 'UTC'))] AS g
SETTINGS max_partitions_per_insert_block = 10000;

INSERT INTO spend_by_attribute (project_id, attribute, grain, bucket, value, provider, model, agent_id, environment,
  cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
SELECT project_id, 'prompt', g.1 AS grain, g.2 AS bucket, prompt_id, '', '', '', '', c, 0, 0, n, 0
FROM (
  SELECT project_id, day, prompt_id, sum(cost_usd) AS c, sum(executions) AS n
  FROM (
    SELECT project_id, day, prompt_id, cost_usd, executions FROM daily_prompt_spend
    UNION ALL
    SELECT project_id, toDate(bucket, 'UTC') AS day, value AS prompt_id, -cost_usd, -executions
    FROM spend_by_attribute WHERE attribute = 'prompt' AND grain = 'day' AND value != '') AS d
  LEFT JOIN (SELECT project_id, min(toDate(started_at, 'UTC')) AS first_day FROM executions GROUP BY project_id) AS f
    ON d.project_id = f.project_id
  WHERE f.project_id = '' OR d.day < f.first_day
  GROUP BY project_id, day, prompt_id
  HAVING c != 0 OR n != 0)
ARRAY JOIN [('day', toDateTime(day, 'UTC')), ('month', toDateTime(toStartOfMonth(day), 'UTC'))] AS g
SETTINGS max_partitions_per_insert_block = 10000;

DROP VIEW IF EXISTS daily_spend_mv;

DROP VIEW IF EXISTS daily_prompt_spend_mv;
