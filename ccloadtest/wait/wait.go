// Package wait is the one way tests wait for something they can observe:
// Eventually polls a condition instead of sleeping a guessed time, so a
// test is as fast as the machine allows and fails with what it waited for.
// Only tests import it (internal/layers keeps product code out of
// ccloadtest).
package wait

import (
	"testing"
	"time"
)

// Poll bounds: the first checks come quickly for conditions that are
// almost there; later ones back off so a slow condition does not keep a
// shared CPU busy.
const (
	firstPoll = time.Millisecond
	maxPoll   = 20 * time.Millisecond
)

// Eventually calls cond until it returns true and fails t (Fatalf) when it
// has not within the given time. what names the awaited state for the
// failure message. cond runs on the calling goroutine, so it may itself
// call t.Fatal.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(within, cond) {
		t.Fatalf("after %s still waiting for %s", within, what)
	}
}

// Until is Eventually for callers that decide themselves what a timeout
// means: it reports whether cond held within the given time.
func Until(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	pause := firstPoll
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		if pause *= 2; pause > maxPoll {
			pause = maxPoll
		}
	}
	return true
}
