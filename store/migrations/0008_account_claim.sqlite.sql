-- 0008_account_claim for SQLite: a refresh claims its account's row for a
-- while (claim, claimed_until_ms) instead of holding a transaction open
-- over the provider's token endpoint, which on SQLite held the database's
-- one write lock and stalled every other write (request logs). The
-- rotated token is written back only while the claim is still the
-- writer's (store/accounts.go LockAccount).

ALTER TABLE accounts ADD COLUMN claim VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN claimed_until_ms BIGINT NOT NULL DEFAULT 0;
