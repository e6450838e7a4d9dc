package store_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// testAdminSessions: a session is found by its id hash on any handle of the
// database, deleted once, and pruned when it expired.
func testAdminSessions(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	a, b := mustOpen(t, open), mustOpen(t, open) // two handles: two instances
	at := base.Truncate(time.Millisecond)
	live := store.AdminSession{ID: strings.Repeat("a1", 32), PasswordTag: strings.Repeat("0f", 32),
		Created: at, Expires: at.Add(12 * time.Hour)}
	old := store.AdminSession{ID: strings.Repeat("b2", 32), PasswordTag: strings.Repeat("0f", 32),
		Created: at.Add(-13 * time.Hour), Expires: at.Add(-time.Hour)}
	for _, se := range []store.AdminSession{live, old} {
		if err := a.CreateSession(ctx, se); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.CreateSession(ctx, live); err == nil {
		t.Error("a second session with the same id was accepted")
	}
	got, ok, err := b.Session(ctx, live.ID)
	if err != nil || !ok || !reflect.DeepEqual(got, live) {
		t.Fatalf("Session on the other handle = %+v %v %v, want %+v", got, ok, err, live)
	}
	if _, ok, err := b.Session(ctx, strings.Repeat("c3", 32)); ok || err != nil {
		t.Errorf("unknown session: ok %v err %v", ok, err)
	}
	if err := a.CreateSession(ctx, store.AdminSession{ID: strings.Repeat("x", 65), PasswordTag: "t"}); err == nil {
		t.Error("an over-long session id was accepted")
	}

	n, err := b.PruneSessions(ctx, at)
	if err != nil || n != 1 {
		t.Fatalf("PruneSessions = %d, %v; want the 1 expired", n, err)
	}
	if _, ok, _ := a.Session(ctx, old.ID); ok {
		t.Error("expired session still stored after the prune")
	}
	if err := b.DeleteSession(ctx, live.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Session(ctx, live.ID); ok {
		t.Error("deleted session still found on the other handle")
	}
	if err := b.DeleteSession(ctx, live.ID); err != nil {
		t.Errorf("deleting a missing session: %v", err)
	}
}

// testInstances: heartbeats upsert one row per id; the list keeps the rows
// at or after since, oldest start first; delete and prune remove rows.
func testInstances(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	at := base.Truncate(time.Millisecond)
	one := store.Instance{ID: "host-a-1f2e3d4c", Hostname: "host-a", Address: "10.0.0.1:8080", Version: "v1.2.3",
		Started: at.Add(-time.Hour), Heartbeat: at.Add(-40 * time.Second), InFlight: 3}
	two := store.Instance{ID: "host-b-5a6b7c8d", Hostname: "host-b", Address: "10.0.0.2:8080", Version: "(devel)",
		Started: at.Add(-time.Minute), Heartbeat: at.Add(-5 * time.Second)}
	for _, in := range []store.Instance{one, two} {
		if err := s.Heartbeat(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ListInstances(ctx, at.Add(-30*time.Second))
	if err != nil || !reflect.DeepEqual(got, []store.Instance{two}) {
		t.Fatalf("ListInstances(30 s) = %+v, %v; want only the fresh one %+v", got, err, two)
	}
	// A later heartbeat of the stale one replaces its row.
	one.Heartbeat, one.InFlight = at, 7
	if err := s.Heartbeat(ctx, one); err != nil {
		t.Fatal(err)
	}
	got, err = s.ListInstances(ctx, at.Add(-30*time.Second))
	if err != nil || !reflect.DeepEqual(got, []store.Instance{one, two}) {
		t.Fatalf("ListInstances after a heartbeat = %+v, %v; want %+v", got, err, []store.Instance{one, two})
	}
	if err := s.Heartbeat(ctx, store.Instance{}); err == nil {
		t.Error("a heartbeat without an id was accepted")
	}

	if n, err := s.PruneInstances(ctx, at.Add(-time.Second)); err != nil || n != 1 {
		t.Fatalf("PruneInstances = %d, %v; want 1", n, err)
	}
	if err := s.DeleteInstance(ctx, one.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ListInstances(ctx, time.Time{}); err != nil || len(got) != 0 {
		t.Fatalf("ListInstances after prune and delete = %+v, %v; want none", got, err)
	}
}
