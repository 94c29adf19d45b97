-- An evaluator's daily judge budget (docs/evaluators.md, "Daily judge budget"): once its judge
-- calls of the UTC day cost this much, it starts no more judgements that day. NULL: no limit.
ALTER TABLE evaluators ADD COLUMN IF NOT EXISTS max_daily_cost_usd numeric(20, 9) CHECK (max_daily_cost_usd > 0);
