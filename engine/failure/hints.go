package failure

import (
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// resetLimits pairs each provider reset header with the remaining-count
// header of the same limit. These headers come with every response; a reset
// matters only for a limit that is spent.
var resetLimits = []struct {
	remaining, reset string
	rfc3339          bool // Anthropic: a timestamp; OpenAI: a duration
}{
	{"anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset", true},
	{"anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset", true},
	{"anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset", true},
	{"anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset", true},
	{"x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", false},
	{"x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens", false},
}

// tryAgainRe finds the wait OpenAI and Gemini write into rate-limit
// messages: "Please try again in 1.574s", "Please retry in 47.434392449s".
var tryAgainRe = regexp.MustCompile(`(?i)(?:try again|retry) in ((?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h))+)\b`)

// resetHint returns the upstream's reset hint for a failure of kind k, in
// the order of precedence given in the package documentation. h may be nil.
func resetHint(k Kind, h func(string) string, now time.Time, ue upstreamErr) time.Duration {
	d := headerHint(k, h, now)
	if d <= 0 {
		d = ue.retryDelay
	}
	if d <= 0 && k == KindRateLimit {
		if m := tryAgainRe.FindStringSubmatch(ue.message); m != nil {
			d = parseDelay(m[1])
		}
	}
	switch {
	case d <= 0:
		return 0
	case d > MaxHint:
		return MaxHint
	}
	return d
}

func headerHint(k Kind, h func(string) string, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			if d := seconds(ms / 1000); d > 0 {
				return d
			}
		}
	}
	if d := parseRetryAfter(h("retry-after"), now); d > 0 {
		return d
	}
	if k != KindRateLimit {
		return 0
	}
	var latest time.Duration
	for _, l := range resetLimits {
		v := strings.TrimSpace(h(l.reset))
		if v == "" {
			continue
		}
		if rem := strings.TrimSpace(h(l.remaining)); rem != "" {
			if n, err := strconv.ParseFloat(rem, 64); err == nil && n > 0 {
				continue // this limit is not the one that was hit
			}
		}
		var d time.Duration
		if l.rfc3339 {
			if t, err := time.Parse(time.RFC3339, v); err == nil && !now.IsZero() {
				d = t.Sub(now)
			}
		} else {
			d = parseDelay(v)
		}
		latest = max(latest, d)
	}
	return latest
}

// parseRetryAfter reads a Retry-After value: delay-seconds (fractions
// tolerated) or an HTTP date (RFC 9110 §10.2.3).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return seconds(n)
	}
	if t, err := http.ParseTime(v); err == nil && !now.IsZero() {
		return t.Sub(now)
	}
	return 0
}

// parseDelay reads a Go-style duration ("6m0s", "20ms", "7s",
// "47.434392449s") or bare seconds ("30", as Azure sends).
func parseDelay(v string) time.Duration {
	v = strings.TrimSpace(v)
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return seconds(n)
	}
	return 0
}

// seconds converts without overflow: anything absurd becomes MaxHint, and
// NaN or negative becomes 0.
func seconds(n float64) time.Duration {
	switch {
	case math.IsNaN(n) || n <= 0:
		return 0
	case n >= MaxHint.Seconds():
		return MaxHint
	}
	return time.Duration(n * float64(time.Second))
}
