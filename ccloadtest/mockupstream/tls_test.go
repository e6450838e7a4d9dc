package mockupstream

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	ccwait "github.com/ccload/ccload/ccloadtest/wait"
)

// startTLS runs a mock over TLS on a free loopback port for the length of
// the test.
func startTLS(t *testing.T, opts Options) (*Server, string, *x509.CertPool) {
	t.Helper()
	s := New(opts)
	base, roots, err := s.StartTLS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, base, roots
}

// trusting is a client that trusts roots and offers protos in ALPN.
func trusting(roots *x509.CertPool, protos ...string) *http.Client {
	// ForceAttemptHTTP2 would add h2 to a client meant to offer only
	// http/1.1.
	h2 := len(protos) == 0 || protos[0] == "h2"
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, NextProtos: protos}, ForceAttemptHTTP2: h2}
	return &http.Client{Transport: tr}
}

func postWith(t *testing.T, c *http.Client, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", "k")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp, string(readAll(t, resp.Body))
}

// StartTLS serves https with h2 and http/1.1, as providers do, to a
// client that trusts the pool it returns.
func TestStartTLSServesH2AndHTTP1(t *testing.T) {
	_, base, roots := startTLS(t, Options{})
	if !strings.HasPrefix(base, "https://127.0.0.1:") {
		t.Fatalf("base URL %q", base)
	}
	for _, proto := range []string{"h2", "http/1.1"} {
		resp, body := postWith(t, trusting(roots, proto), base+"/v1/messages", anthropicReq)
		want := map[string]string{"h2": "HTTP/2.0", "http/1.1": "HTTP/1.1"}[proto]
		if resp.StatusCode != 200 || resp.Proto != want || !strings.Contains(body, DefaultText) {
			t.Errorf("%s: %d %s %s", proto, resp.StatusCode, resp.Proto, body)
		}
	}
}

// A client that trusts only the system's roots refuses the mock's
// certificate, and so does one that trusts another mock's.
func TestStartTLSCertificateIsTrustedOnlyThroughItsPool(t *testing.T) {
	s, base, _ := startTLS(t, Options{})
	_, _, other := startTLS(t, Options{})
	for name, c := range map[string]*http.Client{"system": {}, "another mock's": trusting(other)} {
		resp, err := c.Post(base+"/v1/messages", "application/json", strings.NewReader(anthropicReq))
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s roots: got %d, want a certificate error", name, resp.StatusCode)
			continue
		}
		var ve *tls.CertificateVerificationError
		if !errors.As(err, &ve) {
			t.Errorf("%s roots: %v, want a certificate verification error", name, err)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests reached the mock", n)
	}
}

// CloseIdle writes what it is given on a connection idle between
// requests and closes it: the client reads its answer, those bytes and
// the end.
func TestCloseIdleClosesKeepAliveConnections(t *testing.T) {
	const timeout = "HTTP/1.1 408 Request Time-out\r\nConnection: close\r\n\r\n"
	s, base, roots := startTLS(t, Options{})
	c, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{RootCAs: roots, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "POST /v1/messages HTTP/1.1\r\nHost: mock\r\nx-api-key: k\r\nanthropic-version: 2023-06-01\r\n" +
		"Content-Length: " + strconv.Itoa(len(anthropicReq)) + "\r\n\r\n" + anthropicReq
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	ccwait.Eventually(t, 5*time.Second, "the connection to be idle and closed", func() bool { return s.CloseIdle([]byte(timeout)) == 1 })
	select {
	case b := <-got:
		if !strings.Contains(b, DefaultText) || !strings.HasSuffix(b, timeout) {
			t.Errorf("the client read %q, want the answer and then %q", b, timeout)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connection is still open")
	}
	if n := s.Connections(); n != 1 {
		t.Errorf("Connections() = %d, want 1", n)
	}
	if n := s.CloseIdle(nil); n != 0 {
		t.Errorf("CloseIdle closed %d more, want none left", n)
	}
}
