-- 0002_price_catalog for SQLite (issue 19). Same rules as 0001_init.
-- price_catalog keeps the last good copy of the price catalog fetched from
-- url, so a restart with the catalog unreachable still prices its models.
-- request_logs.unpriced flags a request whose cost of 0 is unknown, not free.

CREATE TABLE IF NOT EXISTS price_catalog (
    url        VARCHAR(400) NOT NULL PRIMARY KEY,
    body       TEXT         NOT NULL,
    fetched_ms BIGINT       NOT NULL
);

ALTER TABLE request_logs ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 0;
