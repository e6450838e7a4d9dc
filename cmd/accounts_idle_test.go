package cmd

import (
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
)

// TestIdleAccountRefreshed: a server with no traffic renews an account's
// short-lived token in the background before it expires, more than once,
// without spending a refresh token twice; the next request then finds a
// valid token and needs no refresh of its own.
func TestIdleAccountRefreshed(t *testing.T) {
	e := newAcctEnv(t, 3*time.Second)
	e.importAuth(t, "alice", "acct-a")
	base, stop := e.serve(t)
	defer stop()
	wait.Eventually(t, 15*time.Second, "alice refreshed twice with no request", func() bool { return e.signin.Refreshes("acct-a") >= 2 })
	if e.signin.Reused() != 0 {
		t.Fatalf("%d reused refresh tokens", e.signin.Reused())
	}
	if e.backend.Calls("acct-a") != 0 {
		t.Fatal("the backend was asked something: the refreshes were not idle")
	}
	if code, body := ask(t, base, "responses"); code != 200 {
		t.Fatalf("after idle refreshes: %d %s", code, body)
	}
}
