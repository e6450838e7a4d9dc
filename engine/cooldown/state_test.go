package cooldown

import (
	"testing"
	"time"

	"github.com/ccload/ccload/engine/failure"
)

// TestStateHardOnlyOnceConfirmed: a hard reason shuts a component out only
// after ConfirmStrikes failures in a row; a transient failure between them
// (or a success) starts the count again.
func TestStateHardOnlyOnceConfirmed(t *testing.T) {
	badKey := failure.Outcome{Kind: failure.KindAuth, Scope: failure.ScopeKey, Message: "invalid api key"}
	pol := Policy{Min: time.Second, Max: 5 * time.Second}
	cases := []struct {
		name     string
		outcomes []failure.Outcome
		hard     bool
	}{
		{"one bad key is unconfirmed", []failure.Outcome{badKey}, false},
		{"two bad keys in a row are hard", []failure.Outcome{badKey, badKey}, true},
		{"a transient failure between resets the count", []failure.Outcome{badKey, serverError, badKey}, false},
		{"key 429 with a reset time, twice", []failure.Outcome{withHint(rateLimited, 2*time.Second), withHint(rateLimited, 2*time.Second)}, true},
		{"key 429 without a reset time is transient", []failure.Outcome{rateLimited, rateLimited, rateLimited}, false},
		{"server errors are transient", []failure.Outcome{serverError, serverError, serverError}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			r := New(clk, nil)
			for _, o := range tc.outcomes {
				clk.Advance(time.Minute) // each failure after the last cooldown ended
				r.Strike(keyA, o, pol)
			}
			st := r.State(keyA)
			if !st.Cooling || st.Hard != tc.hard {
				t.Fatalf("state %+v, want cooling with hard=%v", st, tc.hard)
			}
		})
	}
}

// TestStateHalfOpenTrial: when a cooldown ends the component takes one
// trial at a time; a success forgets it, a failure cools it again.
func TestStateHalfOpenTrial(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	pol := Policy{Min: time.Second, Max: 5 * time.Second}
	if st := r.State(keyA); st != (State{}) || !r.ClaimTrial(keyA) {
		t.Fatalf("never struck: %+v", st)
	}
	r.Strike(keyA, serverError, pol)
	if r.ClaimTrial(keyA) {
		t.Fatal("claimed a trial while cooling")
	}
	clk.Advance(10 * time.Second)
	if st := r.State(keyA); !st.HalfOpen || st.TrialBusy {
		t.Fatalf("after the cooldown: %+v, want half-open, trial free", st)
	}
	if !r.ClaimTrial(keyA) || r.ClaimTrial(keyA) {
		t.Fatal("the trial must be claimable exactly once")
	}
	if st := r.State(keyA); !st.TrialBusy {
		t.Fatalf("after the claim: %+v", st)
	}
	clk.Advance(TrialWindow)
	if !r.ClaimTrial(keyA) {
		t.Fatal("a trial that never reported must free up after TrialWindow")
	}
	r.Strike(keyA, serverError, pol)
	if st := r.State(keyA); !st.Cooling || st.HalfOpen {
		t.Fatalf("failed trial: %+v, want cooling again", st)
	}
	clk.Advance(time.Minute)
	r.ClaimTrial(keyA)
	r.Success(keyA)
	if st := r.State(keyA); st != (State{}) {
		t.Fatalf("after a successful trial: %+v, want forgotten", st)
	}
}
