-- An API key carries a role in its project (docs/identity.md): `member` as before unless chosen,
-- so a project without an identity provider can have an admin (budget, prices, retention).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS role text NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member', 'viewer'));
