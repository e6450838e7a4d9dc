package cooldown

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/clock"
)

// newClock is a clock tests move by hand; nothing here sleeps.
func newClock() *clock.Fake { return clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) }

// policy mirrors config.DefaultRouting's cooldown.
var policy = Policy{
	Initial: map[failure.Kind]time.Duration{
		failure.KindAuth:      5 * time.Minute,
		failure.KindRateLimit: time.Minute,
		failure.KindServer:    2 * time.Minute,
		failure.KindTimeout:   time.Minute,
	},
	Min: 10 * time.Second,
	Max: 30 * time.Minute,
}

var (
	keyA   = Key{Scope: failure.ScopeKey, Channel: "anthropic-main", KeyFP: "sk-a…f3c9"}
	keyB   = Key{Scope: failure.ScopeKey, Channel: "anthropic-main", KeyFP: "sk-b…0d1e"}
	modelX = Key{Scope: failure.ScopeModel, Channel: "anthropic-main", Model: "claude-sonnet-4-5"}
	urlU   = Key{Scope: failure.ScopeURL, Channel: "anthropic-main", URL: "https://api.anthropic.com"}

	rateLimited = failure.Outcome{Kind: failure.KindRateLimit, Scope: failure.ScopeKey, Retry: true, Message: "rate_limit_error"}
	serverError = failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeModel, Retry: true, Message: "Overloaded"}
)

// quiet swallows the warnings of tests that provoke them.
var quiet = slog.New(slog.DiscardHandler)

func withHint(o failure.Outcome, d time.Duration) failure.Outcome { o.RetryAfter = d; return o }

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pol     Policy
		kind    failure.Kind
		strikes int
		want    time.Duration
	}{
		{"first_strike_is_initial", policy, failure.KindRateLimit, 1, time.Minute},
		{"doubles_per_strike", policy, failure.KindRateLimit, 3, 4 * time.Minute},
		{"bounded_by_max", policy, failure.KindServer, 5, 30 * time.Minute},
		{"many_strikes_do_not_overflow", policy, failure.KindAuth, 10_000, 30 * time.Minute},
		{"bounded_below_by_min", Policy{Initial: map[failure.Kind]time.Duration{failure.KindRateLimit: time.Second}, Min: 10 * time.Second}, failure.KindRateLimit, 1, 10 * time.Second},
		{"network_uses_timeout", policy, failure.KindNetwork, 1, time.Minute},
		{"network_then_server", Policy{Initial: map[failure.Kind]time.Duration{failure.KindServer: 2 * time.Minute}}, failure.KindNetwork, 2, 4 * time.Minute},
		{"not_found_uses_server", policy, failure.KindNotFound, 1, 2 * time.Minute},
		{"unknown_kind_uses_min", policy, failure.Kind("other"), 1, 10 * time.Second},
		{"empty_policy_uses_a_minute", Policy{}, failure.KindServer, 1, time.Minute},
		{"no_max_is_a_day", Policy{}, failure.KindServer, 40, 24 * time.Hour},
		{"min_above_max_gives_max", Policy{Min: time.Hour, Max: time.Minute}, failure.KindServer, 1, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pol.Backoff(tc.kind, tc.strikes); got != tc.want {
				t.Errorf("Backoff(%s, %d) = %v, want %v", tc.kind, tc.strikes, got, tc.want)
			}
		})
	}
}

func TestStrikeDoublesUntilMax(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	start := clk.Now()
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 30 * time.Minute, 30 * time.Minute}
	for i, d := range want {
		e := r.Strike(keyA, rateLimited, policy)
		if e.Strikes != i+1 || e.Until != clk.Now().Add(d) {
			t.Fatalf("strike %d: got %d strikes until +%v, want %d until +%v", i+1, e.Strikes, e.Until.Sub(clk.Now()), i+1, d)
		}
		clk.Advance(d) // the cooldown runs out; the next attempt fails again
	}
	if clk.Now().Sub(start) <= 0 {
		t.Fatal("clock did not move")
	}
}

func TestStrikeWhileCoolingAddsNoStrike(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	first := r.Strike(keyA, rateLimited, policy)
	// Nine more requests, sent before the cooldown began, fail a moment later.
	clk.Advance(time.Second)
	var e Entry
	for range 9 {
		e = r.Strike(keyA, rateLimited, policy)
	}
	if e.Strikes != 1 {
		t.Errorf("Strikes = %d, want 1", e.Strikes)
	}
	if want := first.Until.Add(time.Second); !e.Until.Equal(want) {
		t.Errorf("Until = %v, want %v (extended to now+initial)", e.Until, want)
	}
}

func TestHintWins(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	for _, tc := range []struct {
		name string
		hint time.Duration
	}{
		{"above_max", 3 * time.Hour},
		{"below_min", 2 * time.Second},
		{"in_between", 42 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := r.Strike(keyA, withHint(rateLimited, tc.hint), policy)
			if got := e.Until.Sub(clk.Now()); got != tc.hint {
				t.Errorf("cooling for %v, want the hint %v", got, tc.hint)
			}
		})
	}
	// A hint also replaces a longer cooldown set by an earlier failure.
	r.Strike(keyB, serverError, policy)
	e := r.Strike(keyB, withHint(rateLimited, 5*time.Second), policy)
	if got := e.Until.Sub(clk.Now()); got != 5*time.Second {
		t.Errorf("cooling for %v after a fresher hint, want 5s", got)
	}
}

func TestSuccessResets(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	for range 4 {
		e := r.Strike(keyA, rateLimited, policy)
		clk.Advance(e.Until.Sub(clk.Now()))
	}
	r.Success(keyA)
	if _, cooling := r.Until(keyA); cooling {
		t.Fatal("still cooling after Success")
	}
	if e := r.Strike(keyA, rateLimited, policy); e.Strikes != 1 || e.Until != clk.Now().Add(time.Minute) {
		t.Errorf("after Success: %d strikes until +%v, want 1 until +1m", e.Strikes, e.Until.Sub(clk.Now()))
	}
	r.Success(keyB) // unknown key: nothing happens
}

func TestExpiry(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	e := r.Strike(modelX, serverError, policy)
	if until, cooling := r.Until(modelX); !cooling || !until.Equal(e.Until) {
		t.Fatalf("Until = %v, %v; want %v, true", until, cooling, e.Until)
	}
	clk.Advance(2*time.Minute - time.Nanosecond)
	if _, cooling := r.Until(modelX); !cooling {
		t.Fatal("recovered a nanosecond early")
	}
	clk.Advance(time.Nanosecond)
	if until, cooling := r.Until(modelX); cooling || !until.IsZero() {
		t.Fatalf("Until = %v, %v after expiry; want zero, false", until, cooling)
	}
	if l := r.List(); len(l) != 0 {
		t.Fatalf("List() = %v after expiry, want empty", l)
	}
	// Strikes survive expiry: a failure right after recovery doubles.
	if e := r.Strike(modelX, serverError, policy); e.Strikes != 2 || e.Until != clk.Now().Add(4*time.Minute) {
		t.Errorf("got %d strikes until +%v, want 2 until +4m", e.Strikes, e.Until.Sub(clk.Now()))
	}
}

func TestStrikesDecayAfterLongQuiet(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	for range 3 {
		e := r.Strike(keyA, rateLimited, policy)
		clk.Advance(e.Until.Sub(clk.Now()))
	}
	clk.Advance(policy.Max + time.Second)
	if e := r.Strike(keyA, rateLimited, policy); e.Strikes != 1 || e.Until != clk.Now().Add(time.Minute) {
		t.Errorf("after a long quiet: %d strikes until +%v, want 1 until +1m", e.Strikes, e.Until.Sub(clk.Now()))
	}
}

func TestKeysAreNormalized(t *testing.T) {
	r := New(newClock(), nil)
	full := Key{Scope: failure.ScopeModel, Channel: "c", KeyFP: "fp", Model: "m", URL: "https://u"}
	r.Strike(full, serverError, policy)
	if _, cooling := r.Until(Key{Scope: failure.ScopeModel, Channel: "c", Model: "m"}); !cooling {
		t.Error("the model scope ignores key and URL: want cooling")
	}
	if _, cooling := r.Until(Key{Scope: failure.ScopeModel, Channel: "c", Model: "other"}); cooling {
		t.Error("another model is cooling")
	}
	if got := r.List()[0].Key; got != (Key{Scope: failure.ScopeModel, Channel: "c", Model: "m"}) {
		t.Errorf("stored key %+v keeps parts outside its scope", got)
	}
	if got := full.String(); got != "model:c/m" {
		t.Errorf("String() = %q", got)
	}
}

func TestStrikeIgnoresNonFailures(t *testing.T) {
	r := New(newClock(), nil)
	for name, tc := range map[string]struct {
		k Key
		o failure.Outcome
	}{
		"success":      {keyA, failure.Outcome{}},
		"client_fault": {keyA, failure.Outcome{Kind: failure.KindClient, ClientFault: true}},
		"canceled":     {keyA, failure.Outcome{Kind: failure.KindCanceled}},
		"no_scope":     {Key{Channel: "c"}, rateLimited},
	} {
		if e := r.Strike(tc.k, tc.o, policy); e != (Entry{}) {
			t.Errorf("%s: Strike() = %+v, want zero", name, e)
		}
	}
	if l := r.List(); len(l) != 0 {
		t.Errorf("List() = %v, want empty", l)
	}
}

func TestClear(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	r.Strike(urlU, failure.Outcome{Kind: failure.KindTimeout, Retry: true}, policy)
	if !r.Clear(urlU) {
		t.Error("Clear() of a cooling URL = false")
	}
	if _, cooling := r.Until(urlU); cooling {
		t.Error("still cooling after Clear")
	}
	if r.Clear(urlU) {
		t.Error("second Clear() = true")
	}
	// Clearing an expired entry forgets its strikes but reports false.
	r.Strike(urlU, failure.Outcome{Kind: failure.KindTimeout, Retry: true}, policy)
	clk.Advance(time.Hour)
	if r.Clear(urlU) {
		t.Error("Clear() of an expired entry = true")
	}
	if e := r.Strike(urlU, failure.Outcome{Kind: failure.KindTimeout, Retry: true}, policy); e.Strikes != 1 {
		t.Errorf("Strikes = %d after Clear, want 1", e.Strikes)
	}
}

func TestListIsSortedByUntil(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	r.Strike(keyA, failure.Outcome{Kind: failure.KindAuth, Retry: true}, policy) // +5m
	r.Strike(modelX, serverError, policy)                                        // +2m
	r.Strike(keyB, rateLimited, policy)                                          // +1m
	r.Strike(urlU, withHint(rateLimited, time.Hour), policy)                     // +1h
	expired := Key{Scope: failure.ScopeKey, Channel: "old", KeyFP: "x"}
	r.Load([]Entry{{Key: expired, Until: clk.Now().Add(-time.Minute), Strikes: 3}})

	var got []Key
	for _, e := range r.List() {
		got = append(got, e.Key)
	}
	want := []Key{keyB, modelX, keyA, urlU}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List() keys = %v\nwant %v", got, want)
	}
}

func TestLoad(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	r.Strike(keyA, rateLimited, policy) // +1m
	r.Load([]Entry{
		{Key: keyA, Until: clk.Now().Add(30 * time.Second), Strikes: 9},                                                              // older: ignored
		{Key: Key{Scope: failure.ScopeModel, Channel: "c", Model: "m", KeyFP: "stray"}, Until: clk.Now().Add(time.Hour), Strikes: 4}, // normalized
		{Key: Key{Channel: "no-scope"}, Until: clk.Now().Add(time.Hour)},                                                             // skipped
	})
	if e := r.List(); len(e) != 2 || e[0].Key != keyA || e[0].Strikes != 1 {
		t.Fatalf("List() = %+v", e)
	}
	if _, cooling := r.Until(Key{Scope: failure.ScopeModel, Channel: "c", Model: "m"}); !cooling {
		t.Error("loaded model entry is not cooling")
	}
	// A loaded entry's strikes carry on.
	clk.Advance(time.Hour)
	if e := r.Strike(Key{Scope: failure.ScopeModel, Channel: "c", Model: "m"}, serverError, policy); e.Strikes != 5 {
		t.Errorf("Strikes = %d, want 5", e.Strikes)
	}
}

func TestSweep(t *testing.T) {
	p := newRecorder()
	r := New(newClock(), p)
	r.Strike(keyA, rateLimited, policy)
	r.Strike(keyB, rateLimited, policy)
	r.Strike(modelX, serverError, policy)
	r.Strike(Key{Scope: failure.ScopeChannel, Channel: "removed"}, serverError, policy)

	// After a reload, key B and the channel "removed" no longer exist.
	r.Sweep(func(k Key) bool {
		return k.Channel != "removed" && k.KeyFP != keyB.KeyFP
	})
	var got []Key
	for _, e := range r.List() {
		got = append(got, e.Key)
	}
	if want := []Key{keyA, modelX}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after Sweep: %v, want %v", got, want)
	}
	r.Close()
	if want := []string{
		"save key:anthropic-main/sk-a…f3c9", "save key:anthropic-main/sk-b…0d1e",
		"save model:anthropic-main/claude-sonnet-4-5", "save channel:removed",
		"delete channel:removed", "delete key:anthropic-main/sk-b…0d1e",
	}; !sameCalls(p.calls(), want, 4) {
		t.Errorf("persister calls = %q\nwant %q (deletes in any order)", p.calls(), want)
	}
}

func TestAllCooling(t *testing.T) {
	clk := newClock()
	r := New(clk, nil)
	models := []Key{
		{Scope: failure.ScopeModel, Channel: "c", Model: "a"},
		{Scope: failure.ScopeModel, Channel: "c", Model: "b"},
		{Scope: failure.ScopeModel, Channel: "c", Model: "c"},
	}
	if _, all := r.AllCooling(nil); all {
		t.Error("AllCooling(nil) = true")
	}
	r.Strike(models[0], serverError, policy)                        // +2m
	r.Strike(models[1], withHint(serverError, time.Minute), policy) // +1m
	if _, all := r.AllCooling(models); all {
		t.Error("all cooling with one model healthy")
	}
	r.Strike(models[2], failure.Outcome{Kind: failure.KindNotFound, Retry: true}, policy) // +2m
	soonest, all := r.AllCooling(models)
	if !all || !soonest.Equal(clk.Now().Add(time.Minute)) {
		t.Errorf("AllCooling() = %v, %v; want now+1m, true", soonest, all)
	}
	clk.Advance(time.Minute)
	if soonest, all := r.AllCooling(models); all || !soonest.IsZero() {
		t.Errorf("AllCooling() = %v, %v after the first recovered; want zero, false", soonest, all)
	}
}

func TestPersister(t *testing.T) {
	clk := newClock()
	p := newRecorder()
	r := New(clk, p)
	r.Strike(keyA, rateLimited, policy)
	r.Strike(keyA, rateLimited, policy)
	r.Success(keyA)
	r.Success(keyA) // nothing to delete
	r.Strike(modelX, serverError, policy)
	r.Clear(modelX)
	r.Load([]Entry{{Key: keyB, Until: clk.Now().Add(time.Hour)}}) // not written back
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	r.Strike(keyB, rateLimited, policy) // after Close: memory only

	want := []string{
		"save key:anthropic-main/sk-a…f3c9", "save key:anthropic-main/sk-a…f3c9",
		"delete key:anthropic-main/sk-a…f3c9",
		"save model:anthropic-main/claude-sonnet-4-5", "delete model:anthropic-main/claude-sonnet-4-5",
	}
	if got := p.calls(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("persister calls = %q\nwant %q", got, want)
	}
	if e := p.saved[0]; e.Key != keyA || e.Strikes != 1 || e.Kind != failure.KindRateLimit || e.Reason != "rate_limit_error" {
		t.Errorf("first Save(%+v)", e)
	}
}

func TestPersisterFailuresAreOnlyLogged(t *testing.T) {
	p := newRecorder()
	p.err = errors.New("database is locked")
	r := New(newClock(), p, WithLogger(quiet))
	r.Strike(keyA, rateLimited, policy)
	r.Close()
	if _, cooling := r.Until(keyA); !cooling {
		t.Error("a failed Save lost the in-memory cooldown")
	}
}

func TestSlowPersisterNeverBlocks(t *testing.T) {
	p := newRecorder()
	p.gate = make(chan struct{})
	r := New(newClock(), p, WithLogger(quiet))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 3 * queueSize {
			r.Strike(Key{Scope: failure.ScopeKey, Channel: "c", KeyFP: fmt.Sprint(i)}, rateLimited, policy)
		}
	}()
	<-done // with a blocking Persister this would hang without the queue
	if n := len(r.List()); n != 3*queueSize {
		t.Errorf("%d entries in memory, want %d", n, 3*queueSize)
	}
	close(p.gate)
	r.Close()
	if n := len(p.calls()); n < queueSize || n > queueSize+1 {
		t.Errorf("%d writes reached the persister, want the queue's %d (+1 in flight)", n, queueSize)
	}
}

// TestConcurrent is for -race: many goroutines strike, succeed, read, list,
// sweep and clear the same keys while the clock moves.
func TestConcurrent(t *testing.T) {
	clk := newClock()
	p := newRecorder()
	r := New(clk, p)
	keys := []Key{keyA, keyB, modelX, urlU}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 500 {
				k := keys[(g+i)%len(keys)]
				switch i % 8 {
				case 0, 1, 2:
					r.Strike(k, withHint(rateLimited, time.Duration(i%3)*time.Second), policy)
				case 3:
					r.Success(k)
				case 4:
					r.Until(k)
					r.AllCooling(keys)
				case 5:
					r.List()
				case 6:
					clk.Advance(time.Second)
				case 7:
					if g%8 == 0 {
						r.Sweep(func(Key) bool { return true })
						r.Clear(k)
					}
				}
			}
		})
	}
	wg.Wait()
	r.Close()
	for _, e := range r.List() {
		if e.Strikes < 1 {
			t.Errorf("entry %+v has no strike", e)
		}
	}
}

// recorder is a Persister that records calls; it can fail or block.
type recorder struct {
	mu    sync.Mutex
	log   []string
	saved []Entry
	err   error
	gate  chan struct{} // if set, every call waits for it to close
}

func newRecorder() *recorder { return &recorder{} }

func (p *recorder) Save(e Entry) error {
	if p.gate != nil {
		<-p.gate
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, "save "+e.Key.String())
	p.saved = append(p.saved, e)
	return p.err
}

func (p *recorder) Delete(k Key) error {
	if p.gate != nil {
		<-p.gate
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, "delete "+k.String())
	return p.err
}

func (p *recorder) calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// sameCalls compares got with want, where the calls after the first n may
// come in any order (Sweep walks a map).
func sameCalls(got, want []string, n int) bool {
	if len(got) != len(want) || fmt.Sprint(got[:n]) != fmt.Sprint(want[:n]) {
		return false
	}
	rest := map[string]int{}
	for _, s := range want[n:] {
		rest[s]++
	}
	for _, s := range got[n:] {
		rest[s]--
	}
	for _, c := range rest {
		if c != 0 {
			return false
		}
	}
	return true
}
