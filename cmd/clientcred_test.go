package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// TestClientCredentials: a `credentials: client` channel forwards the
// client's own Claude credential while ccload authenticates the client by
// x-ccload-token; the ccload token never goes upstream, and a request
// without its own credential cannot use the channel.
func TestClientCredentials(t *testing.T) {
	m := mockupstream.New(mockupstream.Options{Keys: []string{"sk-ant-oat01-client-own"}})
	mockURL, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dir := t.TempDir()
	sum := sha256.Sum256([]byte("sk-ccload-alice"))
	file := filepath.Join(dir, "ccload.yaml")
	os.WriteFile(file, []byte(`version: 1
server: {listen: "127.0.0.1:0", admin_password: pw}
storage: {driver: sqlite, dsn: "`+filepath.Join(dir, "db.sqlite")+`"}
channels:
  - name: claude-sub
    credentials: client
    urls: ["`+mockURL+`"]
    models: [claude-sonnet-4-6]
tokens:
  - {name: alice, token_sha256: `+hex.EncodeToString(sum[:])+`}
`), 0o600)
	io0, _, errb := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, &ServeOptions{IO: io0, Config: file, Grace: time.Second, Ready: func(a string) { addr <- a }})
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, errb)
	}
	send := func(h map[string]string) (int, string) {
		req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-6","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("anthropic-beta", "oauth-2025-04-20")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Claude Code with a subscription sign-in and ANTHROPIC_CUSTOM_HEADERS.
	if code, body := send(map[string]string{"Authorization": "Bearer sk-ant-oat01-client-own", "x-ccload-token": "sk-ccload-alice"}); code != 200 {
		t.Fatalf("own credential: %d %s", code, body)
	}
	rec := m.Requests()
	last := rec[len(rec)-1]
	if last.Key != "sk-ant-oat01-client-own" || last.Header.Get("x-ccload-token") != "" || last.Header.Get("anthropic-beta") != "oauth-2025-04-20" {
		t.Fatalf("upstream saw key %q, x-ccload-token %q, beta %q", last.Key, last.Header.Get("x-ccload-token"), last.Header.Get("anthropic-beta"))
	}
	for _, v := range last.Header {
		if strings.Contains(strings.Join(v, ""), "sk-ccload-alice") {
			t.Fatal("the ccload token went upstream")
		}
	}
	// The ccload token alone: authenticated, but nothing to forward.
	if code, body := send(map[string]string{"x-api-key": "sk-ccload-alice"}); code != 401 || !strings.Contains(body, "x-ccload-token") {
		t.Fatalf("without own credential: %d %s", code, body)
	}
	if n := len(m.Requests()); n != len(rec) {
		t.Fatalf("a request without its own credential reached the upstream (%d requests)", n)
	}
	// A wrong ccload token is refused before anything is forwarded.
	if code, _ := send(map[string]string{"Authorization": "Bearer sk-ant-oat01-client-own", "x-ccload-token": "wrong"}); code != 401 {
		t.Fatalf("wrong ccload token: %d", code)
	}
}
