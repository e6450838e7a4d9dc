-- 0004_cluster for MySQL 8 / MariaDB 10.5+ (issue 14). Same rules as
-- 0001_init: every statement idempotent, indexes inside CREATE TABLE.
-- admin_sessions holds the admin API's login sessions so that every
-- instance on one database accepts them. id_sha256 is the sha256 of the
-- session token (the cookie value), never the token itself; password_tag
-- is sha256(token, sha256(admin_password)), so a session ends when the
-- password changes and the row tells nothing about the password without
-- the token.
-- instances is the cluster view: each `ccload serve` upserts its row every
-- few seconds; rows whose heartbeat is older than 30 s are not listed and
-- are later deleted.

CREATE TABLE IF NOT EXISTS admin_sessions (
    id_sha256    VARCHAR(64) NOT NULL,
    password_tag VARCHAR(64) NOT NULL,
    created_ms   BIGINT      NOT NULL,
    expires_ms   BIGINT      NOT NULL,
    PRIMARY KEY (id_sha256),
    INDEX idx_admin_sessions_expires (expires_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS instances (
    id           VARCHAR(128) NOT NULL,
    hostname     VARCHAR(255) NOT NULL DEFAULT '',
    address      VARCHAR(255) NOT NULL DEFAULT '',
    version      VARCHAR(64)  NOT NULL DEFAULT '',
    started_ms   BIGINT       NOT NULL,
    heartbeat_ms BIGINT       NOT NULL,
    in_flight    BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
