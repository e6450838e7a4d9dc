package clock

import (
	"sync/atomic"
	"time"
)

// UTCDay is t's UTC date as "2006-01-02", the key of daily spend and
// usage. Every request asks for it several times (the ledger, the daily
// usage row, the spend check of each candidate) and nearly always for the
// same day: the last answer is kept, so that costs neither a Format nor
// an allocation.
func UTCDay(t time.Time) string {
	day := t.Unix()
	if day >= 0 {
		day /= secondsPerDay
	} else {
		day = (day - secondsPerDay + 1) / secondsPerDay
	}
	if c := lastDay.Load(); c != nil && c.day == day {
		return c.s
	}
	s := t.UTC().Format(time.DateOnly)
	lastDay.Store(&cachedDay{day: day, s: s})
	return s
}

const secondsPerDay = 24 * 60 * 60

type cachedDay struct {
	day int64 // days since the Unix epoch, UTC
	s   string
}

var lastDay atomic.Pointer[cachedDay]
