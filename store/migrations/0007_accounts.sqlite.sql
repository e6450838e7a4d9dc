-- 0007_accounts for SQLite: subscription accounts signed in with
-- `ccload login` (docs/accounts.md). credential is the only column that
-- holds secrets: access, refresh and id tokens sealed with AES-256-GCM
-- under server.secret_key (nonce || ciphertext, the channel and account
-- bound as additional data). The other columns are state every instance
-- reads: expiry, last refresh, invalid reason, quota windows. version
-- grows on every write, so an instance polling the table sees a login, a
-- refresh or a logout made elsewhere.

CREATE TABLE IF NOT EXISTS accounts (
    channel            VARCHAR(128) NOT NULL,
    account            VARCHAR(128) NOT NULL,
    provider           VARCHAR(16)  NOT NULL,
    credential         BLOB         NOT NULL,
    subject_fp         VARCHAR(64)  NOT NULL DEFAULT '',
    access_expires_ms  BIGINT       NOT NULL DEFAULT 0,
    last_refresh_ms    BIGINT       NOT NULL DEFAULT 0,
    state              VARCHAR(16)  NOT NULL DEFAULT 'ok',
    reason             TEXT         NOT NULL DEFAULT '',
    exhausted_until_ms BIGINT       NOT NULL DEFAULT 0,
    quota              TEXT         NOT NULL DEFAULT '',
    version            BIGINT       NOT NULL DEFAULT 1,
    updated_ms         BIGINT       NOT NULL,
    PRIMARY KEY (channel, account)
);
