package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/store"
)

func testIO() (IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errb := &bytes.Buffer{}, &bytes.Buffer{}
	return IOStreams{In: strings.NewReader(""), Out: out, Err: errb}, out, errb
}

// TestServeShutdownDrainsLogs: requests answered just before SIGTERM are in
// the database after serve returns.
func TestServeShutdownDrainsLogs(t *testing.T) {
	m := mockupstream.New(mockupstream.Options{})
	mockURL, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "nested", "logs.db")
	sum := sha256.Sum256([]byte("sk-test-serve-token"))
	yaml := `version: 1
server: {listen: "127.0.0.1:0", admin_password: pw}
storage: {driver: sqlite, dsn: "` + db + `"}
channels:
  - name: a
    urls: [{url: "` + mockURL + `", protocols: [anthropic]}]
    keys: [upstream-key-1]
    models: [claude-x]
tokens:
  - {name: t, token_sha256: ` + hex.EncodeToString(sum[:]) + `}
`
	file := filepath.Join(dir, "ccload.yaml")
	os.WriteFile(file, []byte(yaml), 0o600)

	io, _, errb := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, &ServeOptions{IO: io, Config: file, Grace: 5 * time.Second, Ready: func(a string) { addr <- a }})
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, errb)
	}
	const n = 5
	for range n {
		req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("x-api-key", "sk-test-serve-token")
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("request: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	st, err := store.Open(context.Background(), "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.QueryLogs(context.Background(), store.LogQuery{Limit: 100})
	if err != nil || len(rows) != n {
		t.Fatalf("rows after shutdown = %d (%v), want %d\n%s", len(rows), err, n, errb)
	}
}

func TestServeRefusesWithoutAdminPassword(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	os.WriteFile(file, []byte("version: 1\nstorage: {driver: sqlite, dsn: \""+filepath.Join(dir, "x.db")+"\"}\n"), 0o600)
	io, _, _ := testIO()
	err := serveRun(context.Background(), &ServeOptions{IO: io, Config: file})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFail || !strings.Contains(err.Error(), "admin_password") {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckOffline(t *testing.T) {
	io, out, _ := testIO()
	if err := checkRun(&CheckOptions{IO: io, Config: "../ccload.example.yaml", Offline: true}); err != nil {
		t.Fatalf("example config: %v", err)
	}
	if !strings.Contains(out.String(), "ok (") {
		t.Fatalf("stdout %q", out)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nchannels:\n  - name: a\n    prority: 1\n"), 0o600)
	io, _, errb := testIO()
	err := checkRun(&CheckOptions{IO: io, Config: bad, Offline: true})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFail {
		t.Fatalf("bad config: err %v", err)
	}
	if !strings.Contains(errb.String(), "bad.yaml:4:5:") || !strings.Contains(errb.String(), `"priority"`) {
		t.Fatalf("stderr %q", errb)
	}
}

// TestServeStopsRightAfterReady: a stop that comes as soon as serve is
// ready (before its listener goroutine may have started) still ends serve:
// every part the run group started returns.
func TestServeStopsRightAfterReady(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	yaml := "version: 1\nserver: {listen: \"127.0.0.1:0\", admin_password: pw}\nstorage: {driver: sqlite, dsn: \"" + filepath.Join(dir, "x.db") + "\"}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		io, _, errb := testIO()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- serveRun(ctx, &ServeOptions{IO: io, Config: file, Grace: time.Second, NoWatch: true, Ready: func(string) { cancel() }})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d: %v\n%s", i, err, errb)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("run %d: serve did not return after a stop right after ready\n%s", i, errb)
		}
		cancel()
	}
}
