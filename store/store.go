// Package store keeps ccload's durable state in SQLite, MySQL/MariaDB or
// PostgreSQL: request logs, daily usage aggregates, cooldowns shared between
// instances, and runtime overrides from the dashboard (design §8).
//
// One Store interface covers the three dialects. The SQL differences are few
// and listed in dialect.go; the schema lives in migrations/, one file per
// dialect, embedded and applied by Open. Request handlers never write logs
// directly: they hand rows to a Writer, which batches them on one goroutine.
//
// Conventions shared by every method:
//   - Times are stored as UTC unix milliseconds and come back in UTC, so
//     sub-millisecond precision is lost.
//   - A day is a UTC calendar day written "2006-01-02".
//   - Log text longer than the column it goes to is cut (see limits.go);
//     invalid UTF-8 and NUL bytes are replaced, because PostgreSQL and MySQL
//     refuse them and one such row would otherwise fail its whole batch.
//     Identity fields (cooldown keys, override kind/target) are never cut:
//     an over-long one is an error.
package store

import (
	"context"
	"errors"
	"time"
)

// Store is ccload's durable state. All methods are safe for concurrent use,
// also by several ccload instances sharing one MySQL or PostgreSQL database.
type Store interface {
	// InsertLogs writes rows and adds them to usage_daily in one transaction:
	// either every row and its aggregate is stored, or nothing is. Row IDs are
	// assigned by the database; the ID field of rows is ignored.
	InsertLogs(ctx context.Context, rows []LogRow) error
	// QueryLogs returns the rows matching q, newest (highest ID) first.
	// Their Debug field is always "": only GetLog reads captures.
	QueryLogs(ctx context.Context, q LogQuery) ([]LogRow, error)
	// GetLog returns the request log with ID id, with its debug capture in
	// Debug ("" when it has none), or ErrLogNotFound.
	GetLog(ctx context.Context, id int64) (LogRow, error)
	// EachLogPoint calls fn for every request log with since <= Time < until,
	// oldest first, reading them with one query and without a row limit (for
	// time series and rankings). An error from fn stops the scan and is
	// returned as it is. fn must not call the Store.
	EachLogPoint(ctx context.Context, since, until time.Time, fn func(LogPoint) error) error
	// EachLogPointAfter is EachLogPoint restricted to rows with ID > afterID,
	// in ID order (a cursor for incremental readers).
	EachLogPointAfter(ctx context.Context, since, until time.Time, afterID int64, fn func(LogPoint) error) error
	// LogPointDigest returns the number and the sum of the IDs of the request
	// logs with since <= Time < until and ID <= maxID, so that an incremental
	// reader can check that the rows below its cursor are still the ones it saw
	// (none pruned, none committed late below the cursor).
	LogPointDigest(ctx context.Context, since, until time.Time, maxID int64) (n, idSum int64, err error)
	// PruneLogs deletes request logs and their debug captures older than
	// before, in batches so that a large prune does not hold a long write
	// lock, and returns how many request logs it deleted (captures are not
	// counted). usage_daily is kept, but for the rows of requests no
	// upstream saw (no channel, no cost): lifetime token costs are read
	// from it.
	PruneLogs(ctx context.Context, before time.Time) (int64, error)

	// UpsertCooldown creates or replaces the cooldown with c's key; the last
	// writer wins.
	UpsertCooldown(ctx context.Context, c Cooldown) error
	// DeleteCooldown removes the cooldown with key k. Deleting a key that does
	// not exist is not an error.
	DeleteCooldown(ctx context.Context, k CooldownKey) error
	// ListCooldowns returns the cooldowns with Until after now, ordered by key.
	// Expired rows stay in the table until they are upserted or deleted.
	ListCooldowns(ctx context.Context, now time.Time) ([]Cooldown, error)

	// TokenCost returns the lifetime cost of token, summed over usage_daily
	// (0 for a token never seen).
	TokenCost(ctx context.Context, token string) (float64, error)
	// ChannelCostOn returns the cost of channel on one UTC day ("2006-01-02").
	ChannelCostOn(ctx context.Context, channel string, day string) (float64, error)
	// UsageDaily returns the aggregates of day since and later (all days when
	// since is ""), ordered by day, token, channel, model.
	UsageDaily(ctx context.Context, since string) ([]UsageDay, error)

	// SetOverride creates or replaces the override (Kind, Target). A zero
	// CreatedAt is set to the current time.
	SetOverride(ctx context.Context, o Override) error
	// DeleteOverride removes the override (kind, target); a missing one is
	// not an error.
	DeleteOverride(ctx context.Context, kind, target string) error
	// ListOverrides returns every override, ordered by kind and target.
	ListOverrides(ctx context.Context) ([]Override, error)

	// Admin sessions and the instance list of a cluster (sessions.go,
	// instances.go).
	Sessions
	Instances
	// Subscription accounts of oauth channels (accounts.go).
	Accounts

	// SchemaVersion returns the highest migration version applied.
	SchemaVersion(ctx context.Context) (int, error)
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Driver returns "sqlite", "mysql" or "postgres".
	Driver() string
	// Close closes the database handle. Calls after Close fail.
	Close() error
}

// LogRow is one client request as recorded in request_logs (design §5 step 7).
type LogRow struct {
	ID        int64     // assigned by the database
	Time      time.Time // when the request arrived
	RequestID string

	Token, Channel, KeyFP, URL       string
	ClientProtocol, UpstreamProtocol string
	Model, UpstreamModel             string

	Status                    int // status returned to the client
	FailureKind, FailureScope string
	Attempts                  int
	AttemptsJSON              string // JSON array of the attempts, opaque to the store but for one case (attempts.go)
	TTFBMs, DurationMs        int64
	InputTokens, OutputTokens int64
	CacheReadTokens           int64
	CacheWriteTokens          int64
	ReasoningTokens           int64
	Cost                      float64 // USD; NaN and ±Inf are stored as 0
	Stream, Incomplete        bool
	ClientIP, Error           string
	// Unpriced marks a request with usage whose model has no price: its
	// Cost of 0 is unknown, not free.
	Unpriced bool
	// Debug is the request's debug capture (a channel or token
	// with debug: true), JSON opaque to the store, "" for none. InsertLogs
	// stores it in request_debug beside the row; only GetLog reads it back.
	Debug string

	// OverheadMs is the gateway's own share of DurationMs (everything but
	// waiting on upstreams). It feeds /metrics as the row passes and is
	// not stored.
	OverheadMs int64
}

// IsError reports whether the request counts as an error in usage_daily:
// any final status outside 200–399, including 0 (no status was sent).
func (r LogRow) IsError() bool { return r.Status < 200 || r.Status >= 400 }

// LogQuery selects request logs. Zero fields do not filter.
type LogQuery struct {
	Since, Until time.Time // Since inclusive, Until exclusive
	Token        string
	Channel      string
	Model        string // the client-visible model
	FailureScope string
	StatusClass  int   // 1–5 keeps statuses 100·c … 100·c+99; 0 keeps all
	BeforeID     int64 // cursor: only rows with ID < BeforeID; 0 starts at the newest
	Limit        int   // 0 means DefaultLogLimit; capped at MaxLogLimit
}

// ErrLogNotFound is GetLog's error for an ID with no request log (never
// written, or pruned).
var ErrLogNotFound = errors.New("store: no request log with this ID")

// Page sizes of QueryLogs.
const (
	DefaultLogLimit = 100
	MaxLogLimit     = 1000
)

// Cooldown scopes (design §6).
const (
	ScopeKey     = "key"
	ScopeModel   = "model"
	ScopeURL     = "url"
	ScopeChannel = "channel"
)

// CooldownKey identifies one cooling component. Scope is one of the Scope
// constants; parts the scope does not use are "".
type CooldownKey struct{ Scope, Channel, KeyFP, Model, URL string }

// Cooldown is one cooling component and when it recovers.
type Cooldown struct {
	CooldownKey
	Until   time.Time
	Strikes int    // consecutive failures, for exponential backoff
	Kind    string // failure kind that caused it
	Reason  string // human-readable, shown in the dashboard
}

// Override is a runtime action from the dashboard or admin API, such as
// kind "pause" with target a channel name.
type Override struct {
	Kind, Target, Value string
	CreatedAt           time.Time
}

// UsageDay is one usage_daily aggregate.
type UsageDay struct {
	Day, Token, Channel, Model string
	Requests, Errors           int64
	InputTokens, OutputTokens  int64
	CacheReadTokens            int64
	CacheWriteTokens           int64
	Cost                       float64
}
