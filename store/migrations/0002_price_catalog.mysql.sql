-- 0002_price_catalog for MySQL 8 / MariaDB 10.5+ (issue 19). Same rules as
-- 0001_init. price_catalog keeps the last good copy of the price catalog
-- fetched from url (LONGTEXT: the models.dev catalog is several MB), so a
-- restart with the catalog unreachable still prices its models.
-- request_logs.unpriced flags a request whose cost of 0 is unknown, not free.
-- MySQL 8 has no ADD COLUMN IF NOT EXISTS, so the ALTER is the last
-- statement: an interrupted run can fail only after every other statement
-- is done, in the moment between the ALTER and recording the version.

CREATE TABLE IF NOT EXISTS price_catalog (
    url        VARCHAR(400) NOT NULL PRIMARY KEY,
    body       LONGTEXT     NOT NULL,
    fetched_ms BIGINT       NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

ALTER TABLE request_logs ADD COLUMN unpriced BOOLEAN NOT NULL DEFAULT FALSE;
