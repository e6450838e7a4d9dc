package engine

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/protocol"
)

// swapSource is a Snapshots whose snapshot the test replaces.
type swapSource struct {
	cur atomic.Pointer[config.Snapshot]
}

func (s *swapSource) Current() *config.Snapshot { return s.cur.Load() }
func (s *swapSource) Status() config.Status     { return config.Status{} }

// TestSweepBuildsTheNewSnapshotsView: a swap announced through Sweep
// replaces the whole view at once: the authenticated credentials, the
// secrets the redactor knows and what detection learned all start afresh,
// and a request still on the old snapshot gets a private view that does
// not displace the current one.
func TestSweepBuildsTheNewSnapshotsView(t *testing.T) {
	cfg := func(key, tokens string) string {
		return "version: 1\nchannels:\n  - {name: a, urls: [\"http://127.0.0.1:1\"], keys: [" + key + "], models: [m]}\ntokens:\n" + tokens
	}
	before := snapOf(t, cfg("key-old-0000000", `  - {name: t1, token_sha256: "`+shaHex("sk-one")+`"}
`))
	after := snapOf(t, cfg("key-new-0000000", `  - {name: t1, token_sha256: "`+shaHex("sk-one")+`"}
`))
	src := &swapSource{}
	src.cur.Store(before)
	e := New(Options{Config: src})
	if tok := e.authenticate(before, []byte("sk-one")); tok == nil {
		t.Fatal("sk-one did not authenticate")
	}
	old := e.views.Load()
	old.detect.known[detectKey{channel: "a", url: "http://127.0.0.1:1", client: protocol.Anthropic}] = detectEntry{family: protocol.OpenAI}
	if len(e.Detected("a", "http://127.0.0.1:1")) != 1 {
		t.Fatal("the detection learned under the current snapshot is not listed")
	}

	src.cur.Store(after)
	e.Sweep(after)
	v := e.views.Load()
	if v == old || v.snap != after {
		t.Fatal("Sweep did not build the view of the swapped-in snapshot")
	}
	if m := v.tokens.known.Load(); m != nil {
		t.Errorf("the new view starts with %d remembered credentials", len(*m))
	}
	if d := e.Detected("a", "http://127.0.0.1:1"); len(d) != 0 {
		t.Errorf("detection of the old config still listed: %+v", d)
	}
	if got := e.redactor(after).Message("upstream said key-new-0000000"); strings.Contains(got, "key-new-0000000") {
		t.Errorf("the new view's redactor does not know the new key: %q", got)
	}
	if got := e.redactor(before).Message("upstream said key-old-0000000"); strings.Contains(got, "key-old-0000000") {
		t.Errorf("a request on the old snapshot lost its redaction: %q", got)
	}
	if e.views.Load() != v {
		t.Error("a request on the replaced snapshot displaced the current view")
	}
}

// TestSweepDropsTheClientsOfRemovedProxies: a reload that removes the
// last channel behind a proxy drops that proxy's net/http client (and
// with it its idle connections, engine/upstream's TestKeepClosesIdle...);
// the proxies still in use keep theirs.
func TestSweepDropsTheClientsOfRemovedProxies(t *testing.T) {
	ch := func(name, proxy string) string {
		return "  - {name: " + name + ", urls: [\"http://127.0.0.1:1\"], keys: [key-0000000000], models: [m], proxy: \"" + proxy + "\"}\n"
	}
	const tokens = "tokens:\n  - {name: t1, token_sha256: \"0000000000000000000000000000000000000000000000000000000000000000\"}\n"
	before := snapOf(t, "version: 1\nchannels:\n"+ch("a", "http://127.0.0.1:3128")+ch("b", "http://127.0.0.1:3129")+tokens)
	after := snapOf(t, "version: 1\nchannels:\n"+ch("a", "http://127.0.0.1:3128")+tokens)
	src := &swapSource{}
	src.cur.Store(before)
	e := New(Options{Config: src})
	clients := map[string]*http.Client{}
	for _, p := range []string{"", "http://127.0.0.1:3128", "http://127.0.0.1:3129"} {
		c, err := e.HTTPClient(p)
		if err != nil {
			t.Fatal(err)
		}
		clients[p] = c
	}
	src.cur.Store(after)
	e.Sweep(after)
	for p, was := range clients {
		c, _ := e.HTTPClient(p)
		if kept := c == was; kept != (p != "http://127.0.0.1:3129") {
			t.Errorf("proxy %q: client kept %v after the reload", p, kept)
		}
	}
}
