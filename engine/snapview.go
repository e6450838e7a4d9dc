package engine

import (
	"bytes"
	"net/url"
	"sync/atomic"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/pricing"
)

// snapView is everything the engine derives from one config snapshot: the
// credentials that authenticated (auth.go), the redactor that knows the
// snapshot's secrets (below), its price table (cost.go) and what
// protocol detection learned under it (detect.go). It is built in one
// place when the snapshot is swapped in (Engine.Sweep), and one pointer
// comparison tells a request whether the view it finds is of its snapshot;
// a reload therefore starts all four afresh together.
type snapView struct {
	snap   *config.Snapshot
	tokens tokenCache
	red    *failure.Redactor
	detect *detector
	// over is the file's pricing: entries; the table is rebuilt from them
	// only when the price catalog's copy changes (Engine.Prices).
	over   map[string]pricing.Price
	prices atomic.Pointer[priceBuild]
}

func (e *Engine) newSnapView(snap *config.Snapshot) *snapView {
	v := &snapView{
		snap:   snap,
		red:    failure.NewRedactor(snapshotSecrets(snap)),
		detect: newDetector(),
		over:   make(map[string]pricing.Price, len(snap.Pricing)),
	}
	for name, p := range snap.Pricing {
		v.over[name] = pricing.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	v.priceTable(e.catalogPrices())
	return v
}

// view is the view of snap. Sweep builds it on a swap; when nothing
// announced the swap, the first request on the new snapshot builds it. A
// request still running on a replaced snapshot gets a private view: what
// it learns is about a config no longer in force.
func (e *Engine) view(snap *config.Snapshot) *snapView {
	for {
		v := e.views.Load()
		if v != nil && v.snap == snap {
			return v
		}
		if e.cfg != nil && e.cfg.Current() != snap {
			return e.newSnapView(snap)
		}
		e.views.CompareAndSwap(v, e.newSnapView(snap))
	}
}

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
