-- The users page's `sessions` (026) counted the set of session ids of every row of a user's day,
-- superseded and cancel rows included: after a correction that moves an execution to another
-- session (or user), the old session was counted while the rows stood unmerged, and not once the
-- engine had collapsed them (a figure that changed with the merges, and differed between the
-- view's rows and a copy). `session_nets` holds, per user and day, each session id's signed count
-- of executions (sumMap: merged rows add up per id); a user's sessions are the ids other than ''
-- whose count over the window is above zero, as with every other figure of the page, one sum.
-- `sessions` and `sessionless` stay, empty and unread: 026 must still run over this table.
ALTER TABLE user_days ADD COLUMN IF NOT EXISTS session_nets SimpleAggregateFunction(sumMap, Map(String, Int64));

DROP VIEW IF EXISTS user_days_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS user_days_mv TO user_days AS
SELECT project_id, user_id, d AS day, n AS executions, er AS errors, c AS cost_usd, ti AS tokens_in, tout AS tokens_out,
  f AS first_seen, l AS last_seen, s AS session_nets
FROM (
  SELECT project_id, user_id, toDate(started_at, 'UTC') AS d,
    sum(toInt64(sign)) AS n, sum(if(status = 'error', toInt64(sign), 0)) AS er, sum(toDecimal128(cost_usd, 9) * sign) AS c,
    sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    minIfOrNull(started_at, sign = 1) AS f, maxIfOrNull(started_at, sign = 1) AS l,
    sumMap(map(session_id, toInt64(sign))) AS s
  FROM executions
  WHERE user_id != ''
  GROUP BY project_id, user_id, d);

-- Every day again, from the executions (026's rows have no counts per session). The service does
-- not write while it migrates; a rerun empties the table and copies again.
TRUNCATE TABLE IF EXISTS user_days;

INSERT INTO user_days (project_id, user_id, day, executions, errors, cost_usd, tokens_in, tokens_out, first_seen, last_seen,
  session_nets)
SELECT project_id, user_id, toDate(started_at, 'UTC') AS d,
  sum(toInt64(sign)), sum(if(status = 'error', toInt64(sign), 0)), sum(toDecimal128(cost_usd, 9) * sign),
  sum(toInt64(tokens_in) * sign), sum(toInt64(tokens_out) * sign),
  minIfOrNull(started_at, sign = 1), maxIfOrNull(started_at, sign = 1),
  sumMap(map(session_id, toInt64(sign)))
FROM executions
WHERE user_id != ''
GROUP BY project_id, user_id, d
SETTINGS max_partitions_per_insert_block = 10000;
