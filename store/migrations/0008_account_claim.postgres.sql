-- 0008_account_claim for PostgreSQL: a refresh claims its account's row
-- for a while (claim, claimed_until_ms) instead of holding a row lock and
-- a transaction open over the provider's token endpoint. The rotated
-- token is written back only while the claim is still the writer's
-- (store/accounts.go LockAccount).

ALTER TABLE accounts ADD COLUMN IF NOT EXISTS claim VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS claimed_until_ms BIGINT NOT NULL DEFAULT 0;
