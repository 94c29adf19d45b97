-- The users page (GET …/users, docs/executions.md) summed each user's executions of the window:
-- with 100,000 users, every granule of a month holds rows of most of a page's 50 users, so a page
-- read the whole window (398-490 ms over 30 days of a project of 100,000,000 executions). This
-- table holds one row per user and UTC day, in user order: a page reads its users' days, and the
-- executions of the partial days at the window's ends. Sums are signed (every row of every version,
-- as the page sums them); first and last seen are of the `sign = 1` rows; `sessions` is the set of
-- session ids ('' included when an execution has none: `sessionless` says so, and it is not
-- counted). Executions without a user are not kept (the page leaves them out). A granule holds 256
-- rows, not 8,192: a user's 30 days are a few rows, and a page of 50 users read 187 granules of
-- 8,192 rows (sets of sessions included) in a month of 100,000 users, 80-111 ms, against 25-33 ms.
CREATE TABLE IF NOT EXISTS user_days (
  project_id LowCardinality(String),
  user_id String,
  day Date,
  executions SimpleAggregateFunction(sum, Int64),
  errors SimpleAggregateFunction(sum, Int64),
  cost_usd SimpleAggregateFunction(sum, Decimal(38, 9)),
  tokens_in SimpleAggregateFunction(sum, Int64),
  tokens_out SimpleAggregateFunction(sum, Int64),
  first_seen SimpleAggregateFunction(min, Nullable(DateTime64(3, 'UTC'))),
  last_seen SimpleAggregateFunction(max, Nullable(DateTime64(3, 'UTC'))),
  sessions AggregateFunction(uniqExact, String),
  sessionless SimpleAggregateFunction(max, UInt8)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, user_id, day)
SETTINGS non_replicated_deduplication_window = 10000, index_granularity = 256;

CREATE MATERIALIZED VIEW IF NOT EXISTS user_days_mv TO user_days AS
SELECT project_id, user_id, d AS day, n AS executions, er AS errors, c AS cost_usd, ti AS tokens_in, tout AS tokens_out,
  f AS first_seen, l AS last_seen, s AS sessions, z AS sessionless
FROM (
  SELECT project_id, user_id, toDate(started_at, 'UTC') AS d,
    sum(toInt64(sign)) AS n, sum(if(status = 'error', toInt64(sign), 0)) AS er, sum(toDecimal128(cost_usd, 9) * sign) AS c,
    sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    minIfOrNull(started_at, sign = 1) AS f, maxIfOrNull(started_at, sign = 1) AS l,
    uniqExactState(session_id) AS s, max(session_id = '') AS z
  FROM executions
  WHERE user_id != ''
  GROUP BY project_id, user_id, d);

-- The executions stored before this view, once (the service does not write while it migrates; a
-- rerun finds the table filled, or no execution with a user to copy).
INSERT INTO user_days (project_id, user_id, day, executions, errors, cost_usd, tokens_in, tokens_out, first_seen, last_seen,
  sessions, sessionless)
SELECT project_id, user_id, toDate(started_at, 'UTC') AS d,
  sum(toInt64(sign)), sum(if(status = 'error', toInt64(sign), 0)), sum(toDecimal128(cost_usd, 9) * sign),
  sum(toInt64(tokens_in) * sign), sum(toInt64(tokens_out) * sign),
  minIfOrNull(started_at, sign = 1), maxIfOrNull(started_at, sign = 1),
  uniqExactState(session_id), max(session_id = '')
FROM executions
WHERE user_id != '' AND (SELECT count() FROM user_days) = 0
GROUP BY project_id, user_id, d
SETTINGS max_partitions_per_insert_block = 10000;
