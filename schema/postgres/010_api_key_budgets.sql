-- Budgets of an API key (docs/spend.md): scope_kind 'api_key', scope_value the key's key_id. The
-- key is checked to exist in the project when the budget is created; the budget is kept (with its
-- alerts) if the key is revoked or expires later: its spend stays readable.
ALTER TABLE scoped_budgets DROP CONSTRAINT IF EXISTS scoped_budgets_scope_kind_check;

ALTER TABLE scoped_budgets ADD CONSTRAINT scoped_budgets_scope_kind_check
  CHECK (scope_kind IN ('project', 'agent', 'user', 'tag', 'api_key'));
