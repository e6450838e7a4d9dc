-- 0001_init for MySQL 8 / MariaDB 10.5+. Applied under GET_LOCK('ccload_migrate').
-- MySQL DDL is not transactional, so every statement must be idempotent: a
-- migration interrupted halfway is simply run again. That is why the indexes
-- sit inside CREATE TABLE IF NOT EXISTS (MySQL has no CREATE INDEX IF NOT EXISTS).
-- Rules for every migration file: comments only on their own lines, and no
-- semicolon except at the end of a statement (files are split on ";").
-- Times are BIGINT unix milliseconds (UTC). VARCHAR sizes match the limits in
-- store/limits.go; the store truncates log text to fit. utf8mb4_bin compares
-- bytes like SQLite and PostgreSQL unique keys do (but it is PAD SPACE:
-- trailing spaces are ignored in comparisons). InnoDB keys are limited to 3072
-- bytes, 4 bytes a character: the cooldowns key is 736 characters.

CREATE TABLE IF NOT EXISTS request_logs (
    id                 BIGINT       NOT NULL AUTO_INCREMENT,
    ts                 BIGINT       NOT NULL,
    request_id         VARCHAR(128) NOT NULL DEFAULT '',
    token              VARCHAR(128) NOT NULL DEFAULT '',
    channel            VARCHAR(128) NOT NULL DEFAULT '',
    key_fp             VARCHAR(64)  NOT NULL DEFAULT '',
    url                VARCHAR(400) NOT NULL DEFAULT '',
    client_protocol    VARCHAR(32)  NOT NULL DEFAULT '',
    upstream_protocol  VARCHAR(32)  NOT NULL DEFAULT '',
    model              VARCHAR(128) NOT NULL DEFAULT '',
    upstream_model     VARCHAR(128) NOT NULL DEFAULT '',
    status             INTEGER      NOT NULL DEFAULT 0,
    failure_kind       VARCHAR(32)  NOT NULL DEFAULT '',
    failure_scope      VARCHAR(32)  NOT NULL DEFAULT '',
    attempts           INTEGER      NOT NULL DEFAULT 0,
    attempts_json      MEDIUMTEXT   NOT NULL,
    ttfb_ms            BIGINT       NOT NULL DEFAULT 0,
    duration_ms        BIGINT       NOT NULL DEFAULT 0,
    input_tokens       BIGINT       NOT NULL DEFAULT 0,
    output_tokens      BIGINT       NOT NULL DEFAULT 0,
    cache_read_tokens  BIGINT       NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT       NOT NULL DEFAULT 0,
    reasoning_tokens   BIGINT       NOT NULL DEFAULT 0,
    cost               DOUBLE       NOT NULL DEFAULT 0,
    stream             BOOLEAN      NOT NULL DEFAULT FALSE,
    incomplete         BOOLEAN      NOT NULL DEFAULT FALSE,
    client_ip          VARCHAR(64)  NOT NULL DEFAULT '',
    error_msg          TEXT         NOT NULL,
    PRIMARY KEY (id),
    INDEX idx_request_logs_ts (ts),
    INDEX idx_request_logs_token (token, id),
    INDEX idx_request_logs_channel (channel, id),
    INDEX idx_request_logs_model (model, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS cooldowns (
    scope      VARCHAR(16)   NOT NULL,
    channel    VARCHAR(128)  NOT NULL DEFAULT '',
    key_fp     VARCHAR(64)   NOT NULL DEFAULT '',
    model      VARCHAR(128)  NOT NULL DEFAULT '',
    url        VARCHAR(400)  NOT NULL DEFAULT '',
    until_ms   BIGINT        NOT NULL,
    strikes    INTEGER       NOT NULL DEFAULT 0,
    kind       VARCHAR(32)   NOT NULL DEFAULT '',
    reason     VARCHAR(1024) NOT NULL DEFAULT '',
    updated_ms BIGINT        NOT NULL,
    PRIMARY KEY (scope, channel, key_fp, model, url)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS usage_daily (
    day                VARCHAR(10)  NOT NULL,
    token              VARCHAR(128) NOT NULL,
    channel            VARCHAR(128) NOT NULL,
    model              VARCHAR(128) NOT NULL,
    requests           BIGINT       NOT NULL DEFAULT 0,
    errors             BIGINT       NOT NULL DEFAULT 0,
    input_tokens       BIGINT       NOT NULL DEFAULT 0,
    output_tokens      BIGINT       NOT NULL DEFAULT 0,
    cache_read_tokens  BIGINT       NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT       NOT NULL DEFAULT 0,
    cost               DOUBLE       NOT NULL DEFAULT 0,
    PRIMARY KEY (day, token, channel, model),
    INDEX idx_usage_daily_token (token),
    INDEX idx_usage_daily_channel (channel, day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS overrides (
    kind       VARCHAR(32)  NOT NULL,
    target     VARCHAR(255) NOT NULL,
    value      TEXT         NOT NULL,
    created_ms BIGINT       NOT NULL,
    PRIMARY KEY (kind, target)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
