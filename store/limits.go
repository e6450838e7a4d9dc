package store

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccload/ccload/internal/clock"
)

// Column sizes in characters. They match the VARCHAR sizes in every
// migrations/0001_init.*.sql, and the MySQL ones keep each unique key under
// InnoDB's 3072-byte limit at 4 bytes a character.
const (
	maxName      = 128 // token, channel, model, upstream model
	maxKeyFP     = 64
	maxURL       = 400
	maxRequestID = 128
	maxProtocol  = 32 // also failure kind and scope, cooldown kind
	maxClientIP  = 64
	maxError     = 4096 // TEXT column; cut so one row stays small
	maxReason    = 1024
	maxOverKind  = 32
	maxTarget    = 255
)

// clean makes s storable in every dialect: valid UTF-8 (PostgreSQL and
// MySQL reject invalid bytes), no NUL (PostgreSQL rejects it in text), and at
// most max characters (max 0 means no limit). A row from a misbehaving client
// must never make a whole batch fail.
func clean(s string, max int) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 && (max == 0 || len(s) <= max) {
		return s // fast path: ASCII-length bound implies the rune bound
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	if max == 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i]
		}
		n++
	}
	return s
}

// checkIdent reports an error when an identity field cannot be stored
// exactly: cutting or rewriting it would make it a different key.
func checkIdent(field, s string, max int) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("store: %s is not valid UTF-8", field)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("store: %s contains a NUL byte", field)
	case utf8.RuneCountInString(s) > max:
		return fmt.Errorf("store: %s is longer than %d characters", field, max)
	}
	return nil
}

// cleanLog returns r with every text field made storable and a finite cost.
func cleanLog(r LogRow) LogRow {
	r.RequestID = clean(r.RequestID, maxRequestID)
	r.Token = clean(r.Token, maxName)
	r.Channel = clean(r.Channel, maxName)
	r.KeyFP = clean(r.KeyFP, maxKeyFP)
	r.URL = clean(r.URL, maxURL)
	r.ClientProtocol = clean(r.ClientProtocol, maxProtocol)
	r.UpstreamProtocol = clean(r.UpstreamProtocol, maxProtocol)
	r.Model = clean(r.Model, maxName)
	r.UpstreamModel = clean(r.UpstreamModel, maxName)
	r.FailureKind = clean(r.FailureKind, maxProtocol)
	r.FailureScope = clean(r.FailureScope, maxProtocol)
	r.AttemptsJSON = clean(r.AttemptsJSON, 0) // cutting JSON would break it
	r.ClientIP = clean(r.ClientIP, maxClientIP)
	r.Error = clean(r.Error, maxError)
	r.Debug = clean(r.Debug, 0) // bounded by server.debug_max_bytes; cutting JSON would break it
	r.Cost = finite(r.Cost)
	return r
}

// finite is usd, or 0 for NaN and ±Inf: MySQL cannot store them and they
// would poison every sum.
func finite(usd float64) float64 {
	if math.IsNaN(usd) || math.IsInf(usd, 0) {
		return 0
	}
	return usd
}

// millis converts t to the stored form, UTC unix milliseconds.
func millis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis converts a stored time back, in UTC.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// dayOf returns the UTC day of t as stored in usage_daily.
func dayOf(t time.Time) string { return clock.UTCDay(t) }

// checkDay validates a "2006-01-02" day argument.
func checkDay(day string) error {
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return fmt.Errorf("store: day %q is not YYYY-MM-DD", day)
	}
	return nil
}
