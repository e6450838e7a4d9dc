package engine

import (
	"net/http"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/upstream"
)

// upstreamRequest is one attempt's request: what the upstream client
// sends (engine/upstream), and what the engine does with the answer
// before anything reads it.
type upstreamRequest struct {
	upstream.Request
	// onResponse, when set, sees the response before anything reads its
	// body (debug capture wraps the body).
	onResponse func(*upstreamResponse)
}

type (
	upstreamResponse = upstream.Response
	headerSetter     = upstream.HeaderSetter
)

// HTTPClient returns the client upstream calls through proxy ("" = direct)
// use, for other outbound fetches that should honour the same proxy
// settings (the price catalog). It has no timeout and follows no
// redirects: callers bound their requests with a context.
func (e *Engine) HTTPClient(proxy string) (*http.Client, error) { return e.upstream.Client(proxy) }

// snapshotProxies is which proxy settings snap uses: its channels', the
// price catalog's, and direct (""), which other outbound fetches use.
func snapshotProxies(snap *config.Snapshot) func(proxy string) bool {
	used := map[string]bool{"": true, snap.PriceCatalog.Proxy: true}
	for _, ch := range snap.Channels {
		used[ch.Proxy] = true
	}
	return func(proxy string) bool { return used[proxy] }
}
