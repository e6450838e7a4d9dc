package cmd

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/config"
)

// TestDemoAccountChannel runs the demo's account part for real: the mock
// sign-in server and Codex backend, the example config copied with the
// account channel added, the account signed in through `ccload login`'s
// browser flow, then `ccload serve` on the copy answering a Responses
// request with the demo token through the account, and ccload accounts
// showing it ok. The example file itself keeps no oauth channel (it
// would then need a secret_key).
func TestDemoAccountChannel(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CCLOAD_DB", filepath.Join(dir, "demo.db"))
	t.Setenv("CCLOAD_PASS", "demo")
	t.Setenv("CCLOAD_LISTEN", "127.0.0.1:0")
	t.Setenv("CCLOAD_SECRET_KEY", "")
	example := filepath.Join("..", "ccload.example.yaml")

	m := mockupstream.New(mockupstream.Options{})
	if _, err := m.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	base, backend, stop, err := demoAccounts("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	file, err := demoAccountConfig(example, dir, base)
	if err != nil {
		t.Fatal(err)
	}
	if file == example {
		t.Fatal("the example config already has an oauth channel: the demo adds none")
	}
	data, _ := os.ReadFile(file)
	snap, err := config.Parse(file, data, config.OSEnv())
	if err != nil {
		t.Fatalf("the demo's config does not load: %v", err)
	}
	ch := snap.Channel(demoAccountChannel)
	if ch == nil || ch.OAuth != config.OAuthCodex || len(ch.Accounts) != 1 {
		t.Fatalf("account channel = %+v", ch)
	}
	// Written twice (a second demo start) it is still one channel.
	if again, err := demoAccountConfig(example, dir, base); err != nil || again != file {
		t.Fatalf("second write: %s, %v", again, err)
	}

	line, err := demoSignIn(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(line, "signed in "+demoAccountChannel+"/"+demoAccountName) || !strings.Contains(line, "refresh automatic") {
		t.Errorf("sign-in said %q", line)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := make(chan string, 1), make(chan error, 1)
	var out syncBuffer
	go func() {
		done <- serveRun(ctx, &ServeOptions{IO: IOStreams{Out: &out, Err: &out}, Config: file, Grace: time.Second,
			AllowDemoToken: true, Ready: func(a string) { addr <- a }})
	}()
	var gw string
	select {
	case a := <-addr:
		gw = "http://" + a
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, out.String())
	}
	req, _ := http.NewRequest("POST", gw+"/v1/responses", strings.NewReader(`{"model":"`+demoAccountModel+`","input":"Hello"}`))
	req.Header.Set("Authorization", "Bearer "+demoToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 4096)
	n, _ := resp.Body.Read(body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body[:n]), "Hello from the ccload mock upstream") {
		t.Fatalf("through the account channel: %d %s", resp.StatusCode, body[:n])
	}
	if c := backend.Calls("acct-demo"); c != 1 {
		t.Errorf("the Codex backend answered the demo account %d times, want 1", c)
	}
	cancel()
	<-done
}

// A config that has oauth channels of its own is left as it is.
func TestDemoAccountConfigKeepsOwnOAuth(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "own.yaml")
	os.WriteFile(file, []byte("version: 1\nserver: {secret_key: x}\nchannels:\n  - {name: mine, oauth: codex, accounts: [me]}\n"), 0o600)
	got, err := demoAccountConfig(file, dir, "http://127.0.0.1:9")
	if err != nil || got != file {
		t.Fatalf("got %s, %v; want the file itself", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "demo.yaml")); err == nil {
		t.Error("demo.yaml written for a config with its own oauth channel")
	}
}
