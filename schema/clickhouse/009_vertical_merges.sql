-- The wide tables merge column by column (the vertical algorithm) whatever the number of rows.
-- The default horizontal merge reads blocks of every column of every part at once; for a
-- `spans` row of ~2 KB (messages, attributes), that made each background merge hold about
-- 200 MiB, and the embedded engine's peak memory came from those merges, not from inserts.
-- Columns merged one at a time need a fraction of it (BENCHMARKS.md, "Peak memory").
-- The result is the same data. Replacing and collapsing merges support the vertical algorithm.
ALTER TABLE spans MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1;

ALTER TABLE executions MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1;
