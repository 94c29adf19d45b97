-- Money that cannot overflow (docs/spend.md, "Money range"). A period's spend is a sum of
-- executions of at most $999,999,999.999999999 each, which ClickHouse sums as Decimal(38, 9);
-- numeric(20, 9) stopped at $99,999,999,999.999999999, so a project past ~$1e11 in a month had
-- every budget evaluation fail when it stored an alert. Every money column of budgets and their
-- alerts now takes what ClickHouse can sum (38 digits, 9 decimals), and a percentage of it
-- (spent / amount, amounts from $0.000000001) is unconstrained numeric: exact at any size.
ALTER TABLE budgets ALTER COLUMN budget_monthly_usd TYPE numeric(38, 9);

ALTER TABLE budget_alerts
  ALTER COLUMN spent_usd TYPE numeric(38, 9),
  ALTER COLUMN budget_monthly_usd TYPE numeric(38, 9),
  ALTER COLUMN pct TYPE numeric;

ALTER TABLE scoped_budgets ALTER COLUMN amount_usd TYPE numeric(38, 9);

ALTER TABLE scoped_budget_alerts
  ALTER COLUMN spent_usd TYPE numeric(38, 9),
  ALTER COLUMN amount_usd TYPE numeric(38, 9),
  ALTER COLUMN pct TYPE numeric;
