-- 0003_debug_capture for MySQL 8 / MariaDB 10.5+ (issue 13). Same rules as
-- 0001_init. request_debug holds the debug capture of a request (channel or
-- token with debug: true): the upstream requests and responses, as JSON
-- opaque to the store, keyed by the request_logs row it belongs to. It is a
-- table of its own so that scans of request_logs never read the bodies. ts
-- copies the log row's time, so that retention prunes both tables by time
-- alone. LONGTEXT: several attempts with bodies of server.debug_max_bytes
-- each outgrow MEDIUMTEXT's 16 MB only with extreme settings, but TEXT's
-- 64 KB would not hold one.

CREATE TABLE IF NOT EXISTS request_debug (
    log_id  BIGINT   NOT NULL PRIMARY KEY,
    ts      BIGINT   NOT NULL,
    capture LONGTEXT NOT NULL,
    INDEX idx_request_debug_ts (ts)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
