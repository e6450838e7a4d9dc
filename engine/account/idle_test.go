package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/ccload/ccload/config"
)

// TestRefreshDueIdle: with no request at all, an account whose token
// entered its refresh margin is renewed by the background pass, once,
// even when two instances on one database run the pass together; a
// token outside the margin is left alone.
func TestRefreshDueIdle(t *testing.T) {
	e := newEnv(t, time.Hour)
	e.ch.Enabled = true
	st := sqliteStore(t)
	e.signIn(t, st, "acct-1")
	p1, p2 := newPool(t, st, e.clk), newPool(t, st, e.clk)
	chans := []*config.Channel{e.ch}
	ctx := context.Background()
	e.clk.Advance(47 * time.Minute) // 13 minutes left: outside the 12-minute margin
	if n := p1.RefreshDue(ctx, chans) + p2.RefreshDue(ctx, chans); n != 0 || e.signin.Refreshes("acct-1") != 0 {
		t.Fatalf("refreshed %d (grants %d) before the margin", n, e.signin.Refreshes("acct-1"))
	}
	e.clk.Advance(2 * time.Minute)
	done := make(chan int)
	go func() { done <- p1.RefreshDue(ctx, chans) }()
	n := p2.RefreshDue(ctx, chans) + <-done
	if got := e.signin.Refreshes("acct-1"); got != 1 || e.signin.Reused() != 0 || n != 2 {
		t.Fatalf("two instances' passes in the margin: %d grants, %d reused, %d renewed (want 1, 0, 2)", got, e.signin.Reused(), n)
	}
	// The next rotation: again one grant.
	e.clk.Advance(50 * time.Minute)
	if p1.RefreshDue(ctx, chans); e.signin.Refreshes("acct-1") != 2 {
		t.Fatalf("second rotation: %d grants, want 2", e.signin.Refreshes("acct-1"))
	}
}
