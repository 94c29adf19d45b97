-- Spend by a metadata key (docs/spend.md, "Breakdowns") read every execution of the window: 2.2 s
-- over 90 days of a project of 100,000,000 executions, whatever the key's cardinality. The family
-- `metadata` of spend_by_attribute holds, per grain, bucket and key/value pair of the executions'
-- metadata, their signed sums, fed by the view that feeds the other families (a view per write
-- costs more than rows do: 021). `value` is the pair as `<bytes of the key>:<key><value>`, so a
-- key's rows are one prefix of the sort key and no key/value split is ambiguous. The low-cardinality
-- dimensions are not kept with it ('' in those columns): a pair with a provider or model per hour
-- would hold nearly a row per execution for a key of 500 values; a breakdown by a key with one of
-- them reads the executions rows, as before. Executions without the key are the project's total
-- (spend_by_dims) minus the key's rows: nothing is stored for them.
-- A key whose values differ per execution (a request id) costs this rollup about a row per
-- execution and grain: the view is the price of reading any key fast (figures in BENCHMARKS.md).
ALTER TABLE spend_by_attribute MODIFY COLUMN attribute Enum8('tag' = 1, 'prompt' = 2, 'api_key' = 3, 'metadata' = 4);

DROP VIEW IF EXISTS spend_by_attribute_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS spend_by_attribute_mv TO spend_by_attribute AS
SELECT project_id, a.1 AS attribute, g.1 AS grain, g.2 AS bucket, a.2 AS value, a.3 AS provider, a.4 AS model, a.5 AS agent_id,
  a.6 AS environment,
  sum(c) AS cost_usd, sum(ti) AS tokens_in, sum(tout) AS tokens_out, sum(n) AS executions, sum(u) AS unpriced_executions
FROM (
  SELECT project_id, toStartOfHour(started_at, 'UTC') AS h, a,
    sum(cost_usd * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
    sum(toInt64(sign)) AS n, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u
  FROM executions
  ARRAY JOIN arrayConcat(
    arrayMap(t -> ('tag', t, toString(provider), toString(model), toString(agent_id), toString(environment)),
      if(empty(tags), [''], arrayDistinct(tags))),
    arrayMap(p -> ('prompt', p, toString(provider), toString(model), toString(agent_id), toString(environment)),
      if(empty(`tu.prompt_id`), [''], arrayDistinct(`tu.prompt_id`))),
    [('api_key', toString(api_key_id), toString(provider), toString(model), toString(agent_id), toString(environment))],
    arrayMap((k, v) -> ('metadata', concat(toString(length(k)), ':', k, v), '', '', '', ''), mapKeys(metadata), mapValues(metadata))) AS a
  GROUP BY project_id, h, a)
ARRAY JOIN [('hour', h), ('day', toStartOfDay(h, 'UTC')), ('month', toDateTime(toStartOfMonth(h, 'UTC'), 'UTC'))] AS g
GROUP BY project_id, attribute, grain, bucket, value, provider, model, agent_id, environment;

-- The executions stored before this view, once (the service does not write while it migrates; a
-- rerun finds the family filled, or, without metadata stored, nothing to copy). What retention
-- removed before is not in it: a breakdown over such days reads the executions rows (none left).
INSERT INTO spend_by_attribute (project_id, attribute, grain, bucket, value, provider, model, agent_id, environment,
  cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
SELECT project_id, 'metadata', g.1 AS gr, g.2 AS bu, kv, '', '', '', '',
  sum(toDecimal128(cost_usd, 9) * sign), sum(toInt64(tokens_in) * sign), sum(toInt64(tokens_out) * sign), sum(toInt64(sign)),
  sum(if(cost_source = 'unpriced', toInt64(sign), 0))
FROM executions
ARRAY JOIN arrayMap((k, v) -> concat(toString(length(k)), ':', k, v), mapKeys(metadata), mapValues(metadata)) AS kv
ARRAY JOIN [('hour', toStartOfHour(started_at, 'UTC')), ('day', toDateTime(toStartOfDay(started_at, 'UTC'), 'UTC')),
  ('month', toDateTime(toStartOfMonth(started_at, 'UTC'), 'UTC'))] AS g
WHERE (SELECT count() FROM spend_by_attribute WHERE attribute = 'metadata') = 0
GROUP BY project_id, gr, bu, kv
SETTINGS max_partitions_per_insert_block = 10000;
