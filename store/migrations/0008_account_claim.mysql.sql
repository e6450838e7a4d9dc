-- 0008_account_claim for MySQL 8 / MariaDB 10.5+: a refresh claims its
-- account's row for a while (claim, claimed_until_ms) instead of holding a
-- row lock and a transaction open over the provider's token endpoint. The
-- rotated token is written back only while the claim is still the
-- writer's (store/accounts.go LockAccount). One ALTER adds both columns,
-- so an interrupted run cannot leave one of them behind.

ALTER TABLE accounts ADD COLUMN claim VARCHAR(64) NOT NULL DEFAULT '', ADD COLUMN claimed_until_ms BIGINT NOT NULL DEFAULT 0;
