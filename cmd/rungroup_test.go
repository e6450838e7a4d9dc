package cmd

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestRunGroupStopsInReverse: parts stop last started first, each loop
// sees its context end, and a second stop does nothing.
func TestRunGroupStopsInReverse(t *testing.T) {
	g := newRunGroup()
	var order []string
	g.onStop(func() { order = append(order, "store") })
	g.loop(func(ctx context.Context) { <-ctx.Done(); order = append(order, "loop") })
	release := make(chan struct{})
	g.serve("server", func() error { <-release; return nil }, func() {
		order = append(order, "server")
		close(release)
	})
	g.onStop(func() { order = append(order, "events") })
	g.stop()
	g.stop()
	if want := []string{"events", "server", "loop", "store"}; !slices.Equal(order, want) {
		t.Fatalf("stopped %v, want %v", order, want)
	}
}

// TestRunGroupServeEndsWait: a serving part that returns on its own ends
// the wait with its error; one that returns because it was stopped does
// not count.
func TestRunGroupServeEndsWait(t *testing.T) {
	g := newRunGroup()
	boom := errors.New("listener closed")
	g.serve("gateway", func() error { return boom }, func() {})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.wait(ctx); !errors.Is(err, boom) {
		t.Fatalf("wait = %v, want the gateway's error", err)
	}
	g.stop()

	g = newRunGroup()
	release := make(chan struct{})
	g.serve("gateway", func() error { <-release; return boom }, func() { close(release) })
	g.stop()
	select {
	case err := <-g.ended:
		t.Fatalf("a part that was stopped ended the wait: %v", err)
	default:
	}
}
