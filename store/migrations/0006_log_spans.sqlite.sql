-- 0006_log_spans for SQLite: request_log_spans takes the place of the
-- token, channel and model indexes of request_logs (store/spans.go says
-- why). Rows already there get one span per value per block of 1024 IDs,
-- the blocks the Writer's spans keep to (spanIDs), so a value's spans
-- never overlap. On a large log the backfill reads the table once.

CREATE TABLE IF NOT EXISTS request_log_spans (
    field VARCHAR(16)  NOT NULL,
    value VARCHAR(128) NOT NULL,
    lo_id INTEGER      NOT NULL,
    hi_id INTEGER      NOT NULL,
    PRIMARY KEY (field, value, hi_id)
) WITHOUT ROWID;

INSERT INTO request_log_spans (field, value, lo_id, hi_id)
SELECT 'token', token, MIN(id), MAX(id) FROM request_logs WHERE token <> '' GROUP BY token, id / 1024;

INSERT INTO request_log_spans (field, value, lo_id, hi_id)
SELECT 'channel', channel, MIN(id), MAX(id) FROM request_logs WHERE channel <> '' GROUP BY channel, id / 1024;

INSERT INTO request_log_spans (field, value, lo_id, hi_id)
SELECT 'model', model, MIN(id), MAX(id) FROM request_logs WHERE model <> '' GROUP BY model, id / 1024;

DROP INDEX IF EXISTS idx_request_logs_token;
DROP INDEX IF EXISTS idx_request_logs_channel;
DROP INDEX IF EXISTS idx_request_logs_model;
