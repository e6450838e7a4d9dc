-- 0005_shared_state for MySQL 8 / MariaDB 10.5+ (issue 14 items 1, 2, 6 and
-- issue 17's shared pins; docs/scale-out.md "Shared state"). Same rules as
-- 0001_init: every statement is idempotent (INSERT IGNORE for the seed).
--
-- shared_changes is the change feed of runtime state: every cooldown set,
-- extended or cleared, every pause or resume, every new session pin, one row
-- each, tagged with the instance that made it. Instances poll it from the
-- last version they saw, so deletes are seen too. Rows older than an hour
-- are pruned.
CREATE TABLE IF NOT EXISTS shared_changes (
    version    BIGINT      NOT NULL AUTO_INCREMENT,
    instance   VARCHAR(64) NOT NULL,
    kind       VARCHAR(16) NOT NULL,
    item       TEXT        NOT NULL,
    value      TEXT        NOT NULL,
    created_ms BIGINT      NOT NULL,
    PRIMARY KEY (version),
    INDEX idx_shared_changes_created (created_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- shared_spend holds the spend cost limits are checked against, incremented
-- atomically by every instance: a token's lifetime spend (day '') and a
-- channel's spend per UTC day. Every instance keeps it, shared or not, so
-- that turning storage.shared on later starts from the right totals. It
-- starts from usage_daily.
CREATE TABLE IF NOT EXISTS shared_spend (
    kind       VARCHAR(16)  NOT NULL,
    name       VARCHAR(128) NOT NULL,
    day        VARCHAR(10)  NOT NULL,
    usd        DOUBLE       NOT NULL DEFAULT 0,
    updated_ms BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, name, day),
    INDEX idx_shared_spend_day (day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT IGNORE INTO shared_spend (kind, name, day, usd, updated_ms)
    SELECT 'token', token, '', SUM(cost), 0 FROM usage_daily WHERE token <> '' GROUP BY token;
INSERT IGNORE INTO shared_spend (kind, name, day, usd, updated_ms)
    SELECT 'channel', channel, day, SUM(cost), 0 FROM usage_daily WHERE channel <> '' GROUP BY channel, day;
