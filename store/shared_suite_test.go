package store_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

func shared(t *testing.T, s store.Store) store.Shared {
	t.Helper()
	sh, ok := s.(store.Shared)
	if !ok {
		t.Fatalf("%T does not implement store.Shared", s)
	}
	return sh
}

// testSharedFeed: changes come back in order with the versions the
// database gave them, from any cursor, across two handles; pruning by age
// moves FirstChange.
func testSharedFeed(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	a, b := shared(t, mustOpen(t, open)), shared(t, mustOpen(t, open))
	if v, err := a.LastChange(ctx); err != nil || v != 0 {
		t.Fatalf("LastChange on an empty feed = %d, %v; want 0", v, err)
	}
	in := []store.Change{
		{Instance: "i-a", Kind: store.ChangeCooldown, Item: `{"scope":"key"}`, Value: `{"until":1}`},
		{Instance: "i-a", Kind: store.ChangePause, Item: "ch1", Value: ""},
		{Instance: "i-a", Kind: store.ChangePin, Item: "00ff", Value: "bad \x00 utf8 \xff"},
	}
	if err := a.PublishChanges(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := b.PublishChanges(ctx, []store.Change{{Instance: "i-b", Kind: store.ChangePause, Item: "ch2", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	got, err := b.ChangesAfter(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("ChangesAfter(0) = %d changes, want 4: %+v", len(got), got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Version <= got[i-1].Version {
			t.Errorf("versions not increasing: %d then %d", got[i-1].Version, got[i].Version)
		}
	}
	if got[0].Item != in[0].Item || got[0].Value != in[0].Value || got[0].Instance != "i-a" || got[0].Kind != store.ChangeCooldown {
		t.Errorf("first change = %+v, want %+v", got[0], in[0])
	}
	if got[2].Value != "bad  utf8 \uFFFD" {
		t.Errorf("unclean value stored as %q", got[2].Value)
	}
	if got[3].Instance != "i-b" || got[3].Item != "ch2" {
		t.Errorf("last change = %+v", got[3])
	}
	if time.Since(got[0].Time) > time.Minute || got[0].Time.Location() != time.UTC {
		t.Errorf("change time %v, want about now in UTC", got[0].Time)
	}
	rest, err := a.ChangesAfter(ctx, got[1].Version, 1)
	if err != nil || len(rest) != 1 || rest[0].Version != got[2].Version {
		t.Errorf("ChangesAfter(v2, limit 1) = %+v, %v; want the third change", rest, err)
	}
	last, err := a.LastChange(ctx)
	if err != nil || last != got[3].Version {
		t.Errorf("LastChange = %d, %v; want %d", last, err, got[3].Version)
	}
	if err := a.PublishChanges(ctx, []store.Change{{Instance: "", Kind: "x"}}); err == nil {
		t.Error("a change without an instance id was accepted")
	}

	if n, err := a.PruneChanges(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("PruneChanges(an hour ago) = %d, %v; want 0", n, err)
	}
	if n, err := a.PruneChanges(ctx, time.Now().Add(time.Minute)); err != nil || n != 4 {
		t.Errorf("PruneChanges(later) = %d, %v; want 4", n, err)
	}
	if first, err := a.FirstChange(ctx); err != nil || first != 0 {
		t.Errorf("FirstChange on a pruned feed = %d, %v; want 0", first, err)
	}
	if err := a.PublishChanges(ctx, in[:1]); err != nil {
		t.Fatal(err)
	}
	if first, err := a.FirstChange(ctx); err != nil || first <= last {
		t.Errorf("FirstChange after pruning = %d, %v; want above %d (versions are never reused)", first, err, last)
	}
}

// testSharedListen: on PostgreSQL a publish from another handle wakes a
// listener; elsewhere Listen says to poll.
func testSharedListen(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	a, b := shared(t, s), shared(t, mustOpen(t, open))
	lctx, cancel := context.WithCancel(ctx)
	woke := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() { done <- a.Listen(lctx, func() { woke <- struct{}{} }) }()
	if s.Driver() != "postgres" {
		if err := <-done; !errors.Is(err, store.ErrNoListen) {
			t.Errorf("Listen on %s = %v, want ErrNoListen", s.Driver(), err)
		}
		cancel()
		return
	}
	// The listener may not be listening yet: publish until it wakes.
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		if err := b.PublishChanges(ctx, []store.Change{{Instance: "i-b", Kind: store.ChangePause, Item: "c"}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-woke:
			break wait
		case <-tick.C:
		case <-deadline:
			t.Fatal("no notification within 10s of publishing")
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Listen after cancel = %v, want context.Canceled", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("the pool is unusable after Listen: %v", err)
	}
}

// testSharedSpend: increments from two handles add up atomically, per
// token (lifetime) and per channel and day.
func testSharedSpend(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	a, b := shared(t, mustOpen(t, open)), shared(t, mustOpen(t, open))
	const day, other = "2026-12-01", "2026-11-30"
	done := make(chan error, 2)
	for _, s := range []store.Shared{a, b} {
		go func() {
			for range 20 {
				if err := s.AddSpend(ctx, []store.Spend{
					{Kind: store.SpendToken, Name: "alice", USD: 0.25},
					{Kind: store.SpendChannel, Name: "ch", Day: day, USD: 0.5},
					{Kind: store.SpendChannel, Name: "ch", Day: other, USD: 1},
				}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := a.AddSpend(ctx, []store.Spend{{Kind: store.SpendToken, Name: "bob", USD: math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	if err := a.AddSpend(ctx, []store.Spend{{Kind: "user", Name: "x", USD: 1}}); err == nil {
		t.Error("an unknown spend kind was accepted")
	}
	got, err := b.SpendTotals(ctx, day)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"token/alice/": 10, "channel/ch/" + day: 20, "token/bob/": 0}
	if len(got) != len(want) {
		t.Errorf("SpendTotals(%s) = %+v, want %v", day, got, want)
	}
	for _, g := range got {
		k := g.Kind + "/" + g.Name + "/" + g.Day
		if w, ok := want[k]; !ok || math.Abs(g.USD-w) > 1e-9 {
			t.Errorf("SpendTotals: %s = %v, want %v (present %v)", k, g.USD, w, ok)
		}
	}
}

// testSharedSpendSeed: migration 0005 starts shared_spend from the
// usage_daily that is already there.
func testSharedSpendSeed(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	rows := makeRows(6)
	if err := s.InsertLogs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	// Undo migration 0005 and run it again on the logs now present.
	ex, ok := s.(interface {
		ExecForTest(ctx context.Context, query string) error
	})
	if !ok {
		t.Fatalf("%T has no ExecForTest", s)
	}
	for _, q := range []string{"DROP TABLE shared_spend", "DROP TABLE shared_changes", "DELETE FROM schema_migrations WHERE version = 5"} {
		if err := ex.ExecForTest(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s2 := mustOpen(t, open)
	day := rows[0].Time.UTC().Format(time.DateOnly)
	got, err := shared(t, s2).SpendTotals(ctx, day)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, r := range rows {
		if r.Token != "" {
			want["token/"+r.Token+"/"] += r.Cost
		}
		if r.Channel != "" && r.Time.UTC().Format(time.DateOnly) == day {
			want["channel/"+r.Channel+"/"+day] += r.Cost
		}
	}
	if len(got) != len(want) {
		t.Errorf("seeded spend = %+v, want %v", got, want)
	}
	for _, g := range got {
		k := g.Kind + "/" + g.Name + "/" + g.Day
		if w, ok := want[k]; !ok || math.Abs(g.USD-w) > 1e-9 {
			t.Errorf("seeded %s = %v, want %v (present %v)", k, g.USD, w, ok)
		}
	}
}
