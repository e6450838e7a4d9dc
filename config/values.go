package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a non-negative length of time written as a string in the
// config file: "90s", "5m", "1h30m", "500ms", "0s", and with a leading day
// count "7d" or "1d12h". Plain "0" is also accepted.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// ParseDuration parses the config syntax of Duration. Negative values are
// rejected: every duration in the file is a length or a bound.
func ParseDuration(s string) (Duration, error) {
	bad := fmt.Errorf("invalid duration %q (want e.g. \"90s\", \"5m\", \"1h30m\" or \"7d\")", s)
	if s == "" {
		return 0, bad
	}
	if s == "0" {
		return 0, nil
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
	}
	rest := s
	var days time.Duration
	if i := strings.IndexByte(rest, 'd'); i >= 0 {
		n, err := strconv.ParseUint(rest[:i], 10, 32)
		if err != nil || !isDigits(rest[:i]) {
			return 0, bad
		}
		if n > uint64(math.MaxInt64/int64(24*time.Hour)) {
			return 0, fmt.Errorf("invalid duration %q: too long", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		rest = rest[i+1:]
	}
	var part time.Duration
	if rest != "" {
		if rest[0] == '+' {
			return 0, bad
		}
		var err error
		if part, err = time.ParseDuration(rest); err != nil || part < 0 {
			return 0, bad
		}
	}
	if days > math.MaxInt64-part {
		return 0, fmt.Errorf("invalid duration %q: too long", s)
	}
	return Duration(days + part), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats d in the config syntax, e.g. "7d", "1h30m", "0s", so that
// ParseDuration(d.String()) == d.
func (d Duration) String() string {
	t := time.Duration(d)
	if t == 0 {
		return "0s"
	}
	if t < 0 {
		return "-" + Duration(-t).String()
	}
	var b strings.Builder
	units := []struct {
		u    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	for _, x := range units {
		if n := t / x.u; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10))
			b.WriteString(x.name)
			t -= n * x.u
		}
	}
	if t > 0 { // sub-second rest: "500ms", "1.5µs"
		b.WriteString(t.String())
	}
	return b.String()
}

// MarshalText writes the config syntax ("5m"), so JSON output shows
// durations as the file does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses the config syntax.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Size is a number of bytes, written as a plain integer (bytes) or with a
// unit: binary "512KiB", "10MiB", "1GiB", "1TiB" or decimal "1kB"/"1KB",
// "1MB", "1GB", "1TB", and "B". A decimal fraction is allowed with a unit
// ("1.5MiB"); the result is rounded down to whole bytes.
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{ // longest suffixes first: "KiB" must win over "B"
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// ParseSize parses the config syntax of Size.
func ParseSize(s string) (Size, error) {
	bad := fmt.Errorf("invalid size %q (want bytes or e.g. \"512KiB\", \"10MiB\", \"1MB\")", s)
	num, mult := s, int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(strings.TrimSuffix(s, u.suffix), " "), u.mult
			break
		}
	}
	if num == "" || num[0] == '-' || num[0] == '+' {
		return 0, bad
	}
	if isDigits(num) {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/mult {
			return 0, fmt.Errorf("invalid size %q: too large", s)
		}
		return Size(n * mult), nil
	}
	whole, frac, ok := strings.Cut(num, ".")
	if !ok || mult == 1 || !isDigits(whole) || !isDigits(frac) {
		return 0, bad
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, bad
	}
	v := math.Floor(f * float64(mult))
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return Size(v), nil
}

// String formats z with the unit that divides it exactly and gives the
// smallest number, binary on a tie ("10MiB", "1MB", "123B").
func (z Size) String() string {
	best := sizeUnits[len(sizeUnits)-1] // B
	for _, u := range sizeUnits {
		if z > 0 && int64(z)%u.mult == 0 && u.mult > best.mult {
			best = u
		}
	}
	return strconv.FormatInt(int64(z)/best.mult, 10) + best.suffix
}

// MarshalText writes the config syntax ("10MiB").
func (z Size) MarshalText() ([]byte, error) { return []byte(z.String()), nil }

// UnmarshalText parses the config syntax.
func (z *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*z = v
	return nil
}

// Secret is a credential (upstream key, admin password, DSN). Every way of
// printing it (fmt verbs, String, JSON, text, YAML and slog) shows only its
// Fingerprint; Reveal is the one way to get the value, for the code that
// sends it upstream or compares it. One hole remains because Secret is a
// string type: encoding/json writes string-typed map keys as they are, so
// never key a map that is marshalled by a Secret.
type Secret string

// Reveal returns the secret value. Call it only where the value is used,
// never to log or display it.
func (s Secret) Reveal() string { return string(s) }

// String returns the fingerprint, e.g. "sk-a…f3c9".
func (s Secret) String() string { return Fingerprint(string(s)) }

// GoString returns the quoted fingerprint, so %#v does not leak either.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// Format prints the fingerprint for every verb (%s, %v, %q, %x, %d ...).
func (s Secret) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), s.String())
}

// MarshalJSON writes the fingerprint as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// MarshalText writes the fingerprint.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalYAML writes the fingerprint (gopkg.in/yaml.v3 Marshaler).
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// LogValue makes slog print the fingerprint with any handler.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Fingerprint shows enough of a secret to tell secrets apart and no more:
// the first 4 and last 4 runes ("sk-a…f3c9") for secrets of 12 runes or
// more, "…" and the last 2 runes for shorter ones, and only "…" below 4
// runes (two runes of a 3-rune secret would be most of it). The empty
// string stays "".
func Fingerprint(s string) string {
	r := []rune(s)
	switch n := len(r); {
	case n == 0:
		return ""
	case n < 4:
		return "…"
	case n < 12:
		return "…" + string(r[n-2:])
	default:
		return string(r[:4]) + "…" + string(r[n-4:])
	}
}

// ParseHours parses an active_hours window "HH:MM-HH:MM" (24-hour clock,
// local time). The end may be "24:00"; an end before the start crosses
// midnight ("22:00-06:00"). Equal start and end are rejected: omit
// active_hours for "always".
func ParseHours(s string) (*Hours, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return nil, fmt.Errorf("invalid hours %q (want \"HH:MM-HH:MM\", e.g. \"08:00-22:00\")", s)
	}
	start, err := parseClock(a, false)
	if err != nil {
		return nil, fmt.Errorf("invalid hours %q: %w", s, err)
	}
	end, err := parseClock(b, true)
	if err != nil {
		return nil, fmt.Errorf("invalid hours %q: %w", s, err)
	}
	if start == end {
		return nil, fmt.Errorf("invalid hours %q: start equals end (omit active_hours to allow all day)", s)
	}
	return &Hours{Start: start, End: end}, nil
}

func parseClock(s string, isEnd bool) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(m) != 2 || len(h) < 1 || len(h) > 2 || !isDigits(h) || !isDigits(m) {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	hh, _ := strconv.Atoi(h)
	mm, _ := strconv.Atoi(m)
	if mm > 59 || hh > 24 || (hh == 24 && (mm != 0 || !isEnd)) {
		return 0, errors.New(strconv.Quote(s) + " is not a time of day")
	}
	return hh*60 + mm, nil
}

// String formats h as "HH:MM-HH:MM".
func (h Hours) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", h.Start/60, h.Start%60, h.End/60, h.End%60)
}

// MarshalText writes "HH:MM-HH:MM".
func (h Hours) MarshalText() ([]byte, error) { return []byte(h.String()), nil }
