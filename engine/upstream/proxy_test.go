package upstream

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
)

// TestKeepClosesIdleConnectionsOfDroppedProxies: a request through a
// proxy leaves an idle connection to it; Keep refusing the proxy closes
// that connection and drops the client, while a kept proxy's connection
// stays open and its client is the same.
func TestKeepClosesIdleConnectionsOfDroppedProxies(t *testing.T) {
	type proxy struct {
		url    string
		closed atomic.Int32
	}
	start := func() *proxy {
		p := &proxy{}
		// A forward proxy for plain http gets the absolute URL and may
		// answer itself: enough to hold a connection from the client.
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Write([]byte("ok"))
		}))
		s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateClosed {
				p.closed.Add(1)
			}
		}
		s.Start()
		t.Cleanup(s.Close)
		p.url = s.URL
		return p
	}
	gone, kept := start(), start()
	u := New(nil, nil)
	before := map[string]*http.Client{}
	for _, p := range []*proxy{gone, kept} {
		rq := &Request{Ctx: context.Background(), Proxy: p.url, URL: "http://upstream.invalid/v1", Body: []byte("{}"), Header: func(HeaderSetter) {}}
		resp, err := u.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("through proxy %s: %q", p.url, b)
		}
		before[p.url], _ = u.Client(p.url)
	}
	u.Keep(func(proxy string) bool { return proxy == kept.url })
	wait.Eventually(t, 5*time.Second, "the dropped proxy's idle connection to close", func() bool { return gone.closed.Load() == 1 })
	if n := kept.closed.Load(); n != 0 {
		t.Errorf("the kept proxy saw %d connections closed, want 0", n)
	}
	if c, _ := u.Client(gone.url); c == before[gone.url] {
		t.Error("the dropped proxy's client is still the one in use")
	}
	if c, _ := u.Client(kept.url); c != before[kept.url] {
		t.Error("the kept proxy's client was replaced")
	}
}
