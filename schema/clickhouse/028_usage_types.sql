-- Every usage type priced at its own rate (docs/spend.md, "Usage types"). Columns are appended (no
-- AFTER): rows of `spans` are encoded in the table's column order.
--  usage_details: the counts beyond the total columns, each a part of one of them (cache_write_1h
--    of tokens_cache_write_in; input_audio, input_image of the uncached input; output_audio,
--    output_image of tokens_out) — web_search counts calls. Only non-zero keys are stored.
--  pricing_context: what price conditions are matched against (service_tier, region, batch).
--  cost_lines (executions only): the cost breakdown, a JSON array of lines (usage type, quantity,
--    rate, exact cost, source, price_id, the rule that matched); '' for rows stored before this
--    migration. Listings never read it; cost_usd stays the one figure every rollup sums, once.
ALTER TABLE executions ADD COLUMN IF NOT EXISTS usage_details Map(LowCardinality(String), UInt64);
ALTER TABLE executions ADD COLUMN IF NOT EXISTS pricing_context Map(LowCardinality(String), String);
ALTER TABLE executions ADD COLUMN IF NOT EXISTS cost_lines String CODEC(ZSTD(3));

ALTER TABLE spans ADD COLUMN IF NOT EXISTS usage_details Map(LowCardinality(String), UInt64);
ALTER TABLE spans ADD COLUMN IF NOT EXISTS pricing_context Map(LowCardinality(String), String);
