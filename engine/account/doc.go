// Package account holds the signed-in subscription accounts of oauth
// channels (design §9, docs/accounts.md): their credentials sealed in the
// database, the refresh that keeps them valid, their quota windows, and
// the Codex backend's request dialect.
//
// State table (what is stored where, encrypted how, refreshed when):
//
//	| what                              | where                         | protection                         |
//	|-----------------------------------|-------------------------------|------------------------------------|
//	| access, refresh and id tokens,    | accounts.credential           | AES-256-GCM under server.secret_key|
//	|   the provider's account id       |                               |   (Seal), channel+account as AAD   |
//	| access-token expiry, last refresh | accounts.access_expires_ms,   | plain (no secret)                  |
//	|                                   |   last_refresh_ms             |                                    |
//	| invalid and why                   | accounts.state, reason        | plain (provider's error code)      |
//	| quota windows, exhausted until    | accounts.quota (JSON),        | plain                              |
//	|                                   |   exhausted_until_ms          |                                    |
//	| fingerprint of the account id     | accounts.subject_fp           | fingerprint only                   |
//	| decrypted credential              | Pool memory only              | never logged, printed or exported  |
//
// Refresh: when an access token has less than RefreshMargin of its
// lifetime left (a fifth of it), at the request that needs it or, for an
// idle account, by the background refresher (idle.go); once per account
// in a process (the entry's mutex) and across processes (the claim of
// store.LockAccount: taken in a short transaction, the token request made
// outside any transaction, the rotated token written back only while the
// claim is still ours; a waiting instance then finds it and does not
// refresh again). A 401 from the provider forces one refresh and one
// retry of the same account.
package account
