//go:build unix

package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
)

// TestServeReloadsOnSIGHUP: with file watching off, a changed file is
// picked up on SIGHUP, and only then.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	sum := sha256.Sum256([]byte("sk-test-hup-token"))
	base := `version: 1
server: {listen: "127.0.0.1:0", admin_password: pw}
storage: {driver: sqlite, dsn: "` + filepath.Join(dir, "db.sqlite") + `"}
channels:
  - name: a
    urls: ["http://127.0.0.1:1"]
    keys: [upstream-key-1]
    models: [MODELS]
tokens:
  - {name: t, token_sha256: ` + hex.EncodeToString(sum[:]) + `}
`
	os.WriteFile(file, []byte(strings.Replace(base, "MODELS", "old-model", 1)), 0o600)
	io, _, errb := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, &ServeOptions{IO: io, Config: file, Grace: time.Second, NoWatch: true, Ready: func(a string) { addr <- a }})
	}()
	var base2 string
	select {
	case a := <-addr:
		base2 = "http://" + a
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, errb)
	}
	models := func() string {
		req, _ := http.NewRequest("GET", base2+"/v1/models", nil)
		req.Header.Set("Authorization", "Bearer sk-test-hup-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return b.String()
	}
	os.WriteFile(file, []byte(strings.Replace(base, "MODELS", "new-model", 1)), 0o600)
	time.Sleep(300 * time.Millisecond) // longer than the watcher's debounce: it must not be running
	if m := models(); !strings.Contains(m, "old-model") {
		t.Fatalf("reloaded without SIGHUP: %s", m)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !wait.Until(5*time.Second, func() bool { return strings.Contains(models(), "new-model") }) {
		t.Fatalf("SIGHUP did not reload: %s\n%s", models(), errb)
	}
	cancel()
	<-done
}
