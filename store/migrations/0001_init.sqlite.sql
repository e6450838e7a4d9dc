-- 0001_init for SQLite. Applied inside one BEGIN IMMEDIATE transaction.
-- Rules for every migration file: comments only on their own lines, and no
-- semicolon except at the end of a statement (files are split on ";").
-- Times are BIGINT unix milliseconds (UTC). VARCHAR sizes match the limits in
-- store/limits.go (SQLite does not enforce them, the store does).

CREATE TABLE IF NOT EXISTS request_logs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
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
    attempts_json      TEXT         NOT NULL DEFAULT '',
    ttfb_ms            BIGINT       NOT NULL DEFAULT 0,
    duration_ms        BIGINT       NOT NULL DEFAULT 0,
    input_tokens       BIGINT       NOT NULL DEFAULT 0,
    output_tokens      BIGINT       NOT NULL DEFAULT 0,
    cache_read_tokens  BIGINT       NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT       NOT NULL DEFAULT 0,
    reasoning_tokens   BIGINT       NOT NULL DEFAULT 0,
    cost               REAL         NOT NULL DEFAULT 0,
    stream             INTEGER      NOT NULL DEFAULT 0,
    incomplete         INTEGER      NOT NULL DEFAULT 0,
    client_ip          VARCHAR(64)  NOT NULL DEFAULT '',
    error_msg          TEXT         NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS idx_request_logs_ts ON request_logs (ts);
CREATE INDEX IF NOT EXISTS idx_request_logs_token ON request_logs (token, id);
CREATE INDEX IF NOT EXISTS idx_request_logs_channel ON request_logs (channel, id);
CREATE INDEX IF NOT EXISTS idx_request_logs_model ON request_logs (model, id);

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
);

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
    cost               REAL         NOT NULL DEFAULT 0,
    PRIMARY KEY (day, token, channel, model)
);
CREATE INDEX IF NOT EXISTS idx_usage_daily_token ON usage_daily (token);
CREATE INDEX IF NOT EXISTS idx_usage_daily_channel ON usage_daily (channel, day);

CREATE TABLE IF NOT EXISTS overrides (
    kind       VARCHAR(32)  NOT NULL,
    target     VARCHAR(255) NOT NULL,
    value      TEXT         NOT NULL DEFAULT '',
    created_ms BIGINT       NOT NULL,
    PRIMARY KEY (kind, target)
);
