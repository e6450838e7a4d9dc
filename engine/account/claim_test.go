package account_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/store"
)

// TestRefreshLeavesSQLiteWritable: while a refresh waits for the token
// endpoint, another instance on the same SQLite file can write (a
// sign-in here; request logs alike). Holding a transaction over the
// network call held SQLite's one write lock, so this write waited for the
// refresh and then failed busy.
func TestRefreshLeavesSQLiteWritable(t *testing.T) {
	e := newEnv(t, time.Hour)
	in, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.signin.OnRefresh = func() { once.Do(func() { close(in) }); <-release }
	file := filepath.Join(t.TempDir(), "ccload.db")
	open := func() store.Store {
		st, err := store.Open(context.Background(), "sqlite", file)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	st1, st2 := open(), open()
	first := e.signIn(t, st1, "acct-1")
	p := newPool(t, st1, e.clk)
	e.clk.Advance(50 * time.Minute) // inside the margin
	got := make(chan account.Credential, 1)
	go func() {
		c, err := p.Access(context.Background(), e.ch, "alice")
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	<-in // the grant is at the token endpoint, held there
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := st2.PutAccount(ctx, store.Account{Channel: "chatgpt", Account: "bob", Provider: "codex", Credential: []byte{1}})
	close(release)
	if err != nil {
		t.Fatalf("a write by another instance during the refresh: %v", err)
	}
	if c := <-got; c.AccessToken == "" || c.AccessToken == first.AccessToken || e.signin.Refreshes("acct-1") != 1 {
		t.Fatalf("refresh: new token %v, %d grants", c.AccessToken != first.AccessToken, e.signin.Refreshes("acct-1"))
	}
	// The rotated token is stored: a restart uses it without a refresh.
	if got2 := e.burst(t, 3, newPool(t, st2, e.clk)); len(got2) != 1 || e.signin.Refreshes("acct-1") != 1 {
		t.Fatalf("after the refresh, another instance: %v tokens, %d grants", got2, e.signin.Refreshes("acct-1"))
	}
}
