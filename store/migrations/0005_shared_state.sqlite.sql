-- 0005_shared_state for SQLite (issue 14 items 1, 2, 6 and issue 17's
-- shared pins; docs/scale-out.md "Shared state"). Same rules as 0001_init.
--
-- shared_changes is the change feed of runtime state: every cooldown set,
-- extended or cleared, every pause or resume, every new session pin, one row
-- each, tagged with the instance that made it. SQLite refuses
-- storage.shared, so nothing follows the feed here; the tables exist so that
-- one schema serves every dialect.
CREATE TABLE IF NOT EXISTS shared_changes (
    version    INTEGER PRIMARY KEY AUTOINCREMENT,
    instance   VARCHAR(64) NOT NULL,
    kind       VARCHAR(16) NOT NULL,
    item       TEXT        NOT NULL,
    value      TEXT        NOT NULL,
    created_ms BIGINT      NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_shared_changes_created ON shared_changes (created_ms);

-- shared_spend holds the spend cost limits are checked against, incremented
-- atomically by every instance: a token's lifetime spend (day '') and a
-- channel's spend per UTC day. Every instance keeps it, shared or not, so
-- that turning storage.shared on later starts from the right totals. It
-- starts from usage_daily.
CREATE TABLE IF NOT EXISTS shared_spend (
    kind       VARCHAR(16)  NOT NULL,
    name       VARCHAR(128) NOT NULL,
    day        VARCHAR(10)  NOT NULL,
    usd        REAL NOT NULL DEFAULT 0,
    updated_ms BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, name, day)
);
CREATE INDEX IF NOT EXISTS idx_shared_spend_day ON shared_spend (day);
INSERT INTO shared_spend (kind, name, day, usd, updated_ms)
    SELECT 'token', token, '', SUM(cost), 0 FROM usage_daily WHERE token <> '' GROUP BY token
    ON CONFLICT (kind, name, day) DO NOTHING;
INSERT INTO shared_spend (kind, name, day, usd, updated_ms)
    SELECT 'channel', channel, day, SUM(cost), 0 FROM usage_daily WHERE channel <> '' GROUP BY channel, day
    ON CONFLICT (kind, name, day) DO NOTHING;
