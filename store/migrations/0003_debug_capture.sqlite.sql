-- 0003_debug_capture for SQLite (issue 13). Same rules as 0001_init.
-- request_debug holds the debug capture of a request (channel or token with
-- debug: true): the upstream requests and responses, as JSON opaque to the
-- store, keyed by the request_logs row it belongs to. It is a table of its
-- own so that scans of request_logs never read the bodies. ts copies the
-- log row's time, so that retention prunes both tables by time alone.

CREATE TABLE IF NOT EXISTS request_debug (
    log_id  INTEGER NOT NULL PRIMARY KEY,
    ts      INTEGER NOT NULL,
    capture TEXT    NOT NULL
);

CREATE INDEX IF NOT EXISTS idx_request_debug_ts ON request_debug (ts);
