package engine

import (
	"bytes"
	"net/url"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
)

// redactor returns the failure.Redactor that knows every secret of snap:
// channel keys and the credentials inside channel and proxy URLs. It is
// built with the snapshot's view (snapview.go). Every upstream-derived
// string goes through it at one of these points before it leaves the
// engine: reject and relayError (the client), record.fail and
// attemptLog.end (the log row, events), strikeScope (cooldown reasons),
// relay (error events of a committed stream) and probes (ccload check,
// /admin).
func (e *Engine) redactor(snap *config.Snapshot) *failure.Redactor {
	return e.view(snap).red
}

// snapshotSecrets lists every channel key and URL credential of snap.
func snapshotSecrets(snap *config.Snapshot) []string {
	var out []string
	addURL := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if u.User != nil {
			out = append(out, u.User.Username())
			if pw, ok := u.User.Password(); ok {
				out = append(out, pw)
			}
		}
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	for _, ch := range snap.Channels {
		for _, k := range ch.Keys {
			out = append(out, k.Reveal())
		}
		for _, u := range ch.URLs {
			addURL(u.URL)
		}
		addURL(ch.Proxy)
	}
	return out
}

// errorKey is how an error object starts in JSON; content text that merely
// mentions "error" is escaped (\"error\") and does not match.
var errorKey = []byte(`"error"`)

// redactEvent scrubs a relayed stream chunk that carries an error object;
// others pass untouched (one byte scan).
func redactEvent(red *failure.Redactor, b []byte) []byte {
	if !bytes.Contains(b, errorKey) {
		return b
	}
	return red.Body(b)
}
