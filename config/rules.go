package config

import (
	"path"
	"slices"
	"time"
)

// Contains reports whether t falls inside the window, using the wall clock
// of t in the process's local time zone (t.Local()). The start is inclusive
// and the end exclusive; when Start > End the window crosses midnight. A nil
// *Hours is "always".
func (h *Hours) Contains(t time.Time) bool {
	if h == nil {
		return true
	}
	t = t.Local()
	m := t.Hour()*60 + t.Minute()
	if h.Start < h.End {
		return h.Start <= m && m < h.End
	}
	return m >= h.Start || m < h.End
}

// AllowsModel reports whether the token may use model: true when the token
// lists no globs, else when any glob matches (path.Match syntax, so `*` does
// not cross a `/`). Globs are validated at load, so a match error is
// impossible and counts as no match.
func (t *Token) AllowsModel(model string) bool {
	if len(t.Models) == 0 {
		return true
	}
	for _, g := range t.Models {
		if ok, _ := path.Match(g, model); ok {
			return true
		}
	}
	return false
}

// AllowsChannel reports whether the token may be routed to the channel
// called name: with an allow list only those, with a deny list all but
// those, otherwise all.
func (t *Token) AllowsChannel(name string) bool {
	if len(t.Channels.Allow) > 0 {
		return slices.Contains(t.Channels.Allow, name)
	}
	return !slices.Contains(t.Channels.Deny, name)
}

// Expired reports whether the token has an expiry and now is at or after it.
func (t *Token) Expired(now time.Time) bool {
	return !t.Expires.IsZero() && !now.Before(t.Expires)
}
