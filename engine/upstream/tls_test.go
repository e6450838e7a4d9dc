package upstream

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// tlsUpstream is an https server that offers h2 and http/1.1, as the
// providers do, and counts the connections it accepted.
func tlsUpstream(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	s := httptest.NewUnstartedServer(h)
	s.EnableHTTP2 = true
	s.TLS = &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s, &conns
}

// trusting is an HTTP/1.1 client that trusts s's certificate.
func trusting(s *httptest.Server) *h1Client {
	u := newH1Client()
	u.tls.roots = s.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return u
}

// An https upstream is spoken to over TLS with http/1.1 (never h2, though
// the server offers it), and its connection is kept for the next request.
func TestH1ClientSpeaksHTTP1OverTLS(t *testing.T) {
	s, conns := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || r.ProtoMajor != 1 || r.TLS.NegotiatedProtocol != "http/1.1" {
			http.Error(w, fmt.Sprintf("proto %s alpn %v", r.Proto, r.TLS), 500)
			return
		}
		fmt.Fprintf(w, `{"ok":true}`)
	})
	u := trusting(s)
	for i := 0; i < 3; i++ {
		resp, body, err := h1Get(t, u, s.URL+"/v1/messages", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || string(body) != `{"ok":true}` {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 requests in a row, want 1 kept alive", n)
	}
}

// A streamed answer over TLS arrives piece by piece, each as it is
// flushed, not once the answer ends.
func TestH1ClientStreamsOverTLS(t *testing.T) {
	next := make(chan struct{})
	s, _ := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 3; i++ {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			<-next
		}
	})
	target, _ := parseH1Target(s.URL + "/")
	resp, err := trusting(s).do(&Request{Ctx: t.Context(), URL: s.URL + "/", Body: []byte("{}"), Header: func(HeaderSetter) {}}, target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 256)
	for i := 0; i < 3; i++ {
		n, err := resp.Body.Read(buf)
		if err != nil || !strings.Contains(string(buf[:n]), fmt.Sprintf("data: %d", i)) {
			t.Fatalf("event %d: %q %v", i, buf[:n], err)
		}
		next <- struct{}{}
	}
}

// A pooled TLS connection the upstream closed while idle is discarded:
// the next request goes out on a new connection and succeeds.
func TestH1ClientDiscardsClosedIdleTLSConn(t *testing.T) {
	s, conns := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	u := trusting(s)
	if _, body, err := h1Get(t, u, s.URL+"/", nil); err != nil || string(body) != "ok" {
		t.Fatalf("first: %q %v", body, err)
	}
	s.CloseClientConnections()
	if _, body, err := h1Get(t, u, s.URL+"/", nil); err != nil || string(body) != "ok" {
		t.Fatalf("after the idle close: %q %v", body, err)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// A certificate the client does not trust fails the attempt before
// anything is sent, with crypto/tls's verification error (a network
// failure of the URL to the classifier), naming the cause.
func TestH1ClientRefusesAnUntrustedCertificate(t *testing.T) {
	var hits atomic.Int32
	s, _ := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	_, _, err := h1Get(t, newH1Client(), s.URL+"/", nil)
	var ve *tls.CertificateVerificationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("error %v, want a certificate verification error", err)
	}
	if hits.Load() != 0 {
		t.Error("the request reached the upstream")
	}
}

// Events that arrived in one socket read come out before the body waits
// again: a streamed body's BeforeWait (the relay's flush) runs once per
// wait for the upstream, not once per TLS record, though crypto/tls hands
// out one record per Read.
func TestH1ClientTLSRecordsReadTogetherWaitOnce(t *testing.T) {
	const events = 5
	written, finish := make(chan struct{}), make(chan struct{})
	s, _ := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range events {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush() // one TLS record each
		}
		close(written)
		<-finish
	})
	target, _ := parseH1Target(s.URL + "/")
	resp, err := trusting(s).do(&Request{Ctx: t.Context(), URL: s.URL + "/", Body: []byte("{}"), Header: func(HeaderSetter) {}}, target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waits := 0
	if !resp.Body.(*h1Body).BeforeWait(func() { waits++ }) {
		t.Fatal("a streamed body refused BeforeWait")
	}
	<-written // every record is in the socket's buffer before the first Read
	var got strings.Builder
	buf := make([]byte, 256)
	for !strings.Contains(got.String(), fmt.Sprintf("data: %d", events-1)) {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("after %q: %v", got.String(), err)
		}
	}
	close(finish)
	if waits > 1 {
		t.Errorf("BeforeWait ran %d times for %d events that were all in the socket's buffer, want at most 1", waits, events)
	}
}
