package cmd

import (
	"context"
	"fmt"
	"sync"
)

// runGroup holds the parts of a running server in the order they were
// started and stops them in the reverse order: the part started last (the
// listener) stops first and the part everything else needs (the store)
// stops last. A serving part that ends on its own ends wait, so the first
// failure stops them all. Each part says how it stops where it starts, so
// the start order read top to bottom is the stop order read bottom up.
type runGroup struct {
	stops []func()
	ended chan error // the first serving part that returned before its stop
}

func newRunGroup() *runGroup { return &runGroup{ended: make(chan error, 1)} }

// onStop records how a part that is already running stops.
func (g *runGroup) onStop(stop func()) { g.stops = append(g.stops, stop) }

// loop runs fn on its own goroutine until the group stops: its stop
// cancels fn's context and waits for fn to return. A loop that returns
// early does not stop the group (fn logs what it must).
func (g *runGroup) loop(fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	g.onStop(func() { cancel(); <-done })
}

// serve runs run on its own goroutine; its stop calls stop and waits for
// run to return. run returning before that ends wait with its error.
func (g *runGroup) serve(name string, run func() error, stop func()) {
	var mu sync.Mutex
	stopping := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := run()
		mu.Lock()
		early := !stopping
		mu.Unlock()
		if early {
			if err != nil {
				err = fmt.Errorf("%s: %w", name, err)
			}
			select {
			case g.ended <- err:
			default:
			}
		}
	}()
	g.onStop(func() {
		mu.Lock()
		stopping = true
		mu.Unlock()
		stop()
		<-done
	})
}

// wait blocks until ctx ends (nil) or a serving part returned (its error).
func (g *runGroup) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-g.ended:
		return err
	}
}

// stop stops every part, the last started first. A second call does
// nothing.
func (g *runGroup) stop() {
	for i := len(g.stops) - 1; i >= 0; i-- {
		g.stops[i]()
	}
	g.stops = nil
}
