-- Per-usage-type rates, tiers and conditions of a project price (docs/spend.md, "Prices").
-- A missing rate falls back (src/pricing/cost.ts): the 1-hour cache write to the cache write,
-- reasoning and output audio/image to output, input audio/image to input. Web searches are priced
-- per call (USD per call), only with a rate. `tiers` and `conditions` hold rates as decimal
-- strings inside jsonb (exact: never a binary float), validated on PUT:
--   tiers:      [{"above_input_tokens": 200000, "input_per_mtok": "6", "output_per_mtok": "22.5", ...}]
--   conditions: [{"when": {"service_tier": "batch"}, "input_per_mtok": "1.5", ..., "tiers": [...]}]
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS cache_write_1h_per_mtok numeric(30, 12) CHECK (cache_write_1h_per_mtok >= 0);
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS reasoning_per_mtok numeric(30, 12) CHECK (reasoning_per_mtok >= 0);
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS input_audio_per_mtok numeric(30, 12) CHECK (input_audio_per_mtok >= 0);
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS output_audio_per_mtok numeric(30, 12) CHECK (output_audio_per_mtok >= 0);
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS input_image_per_mtok numeric(30, 12) CHECK (input_image_per_mtok >= 0);
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS output_image_per_mtok numeric(30, 12) CHECK (output_image_per_mtok >= 0);
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS web_search_per_call numeric(30, 12) CHECK (web_search_per_call >= 0);
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS tiers jsonb;
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS conditions jsonb;
