package feed

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// memStore is a feed in memory whose versions can be made visible out of
// order and whose calls can be made to fail, as a database's can.
type memStore struct {
	mu      sync.Mutex
	rows    []store.Change // visible, any order
	next    int64
	down    bool
	resyncs int
}

var errDown = errors.New("database down")

func (m *memStore) PublishChanges(_ context.Context, cs []store.Change) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errDown
	}
	for _, c := range cs {
		m.next++
		c.Version = m.next
		m.rows = append(m.rows, c)
	}
	return nil
}

// reserve takes a version whose row becomes visible only through commit,
// as a transaction that inserted first and commits last.
func (m *memStore) reserve() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	return m.next
}

func (m *memStore) commit(c store.Change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = append(m.rows, c)
}

func (m *memStore) ChangesAfter(_ context.Context, after int64, limit int) ([]store.Change, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, errDown
	}
	var out []store.Change
	for _, c := range m.rows {
		if c.Version > after {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b store.Change) int { return int(a.Version - b.Version) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *memStore) FirstChange(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return 0, errDown
	}
	first := int64(0)
	for _, c := range m.rows {
		if first == 0 || c.Version < first {
			first = c.Version
		}
	}
	return first, nil
}

func (m *memStore) LastChange(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next, nil
}

func (m *memStore) PruneChanges(_ context.Context, _ time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := int64(len(m.rows))
	m.rows = nil
	return n, nil
}

func (m *memStore) Listen(context.Context, func()) error { return store.ErrNoListen }

func (m *memStore) setDown(d bool) {
	m.mu.Lock()
	m.down = d
	m.mu.Unlock()
}

// newTestFeed returns a feed of instance "me" on st that records what it
// applies.
func newTestFeed(st *memStore) (*Feed, *[]string) {
	var applied []string
	f := New(Options{Store: st, Instance: "me", Logger: slog.New(slog.DiscardHandler),
		Apply:  func(c store.Change) { applied = append(applied, c.Item+"="+c.Value) },
		Resync: func(context.Context) error { st.resyncs++; return nil },
	})
	return f, &applied
}

// TestFollowSkipsOwnAndWaitsForGaps: the follower applies others' changes
// in version order, skips its own, and does not move its cursor past a
// version that is not visible yet until GapWait has passed.
func TestFollowSkipsOwnAndWaitsForGaps(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	f, applied := newTestFeed(st)
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	st.PublishChanges(ctx, []store.Change{{Instance: "other", Kind: "k", Item: "a", Value: "1"}, {Instance: "me", Kind: "k", Item: "own", Value: "x"}})
	late := st.reserve() // version 3, committed after version 4
	st.PublishChanges(ctx, []store.Change{{Instance: "other", Kind: "k", Item: "b", Value: "2"}})

	now := time.Now()
	f.follow(ctx)
	if want := []string{"a=1", "b=2"}; !slices.Equal(*applied, want) {
		t.Fatalf("applied %v, want %v (own change skipped)", *applied, want)
	}
	if f.cursor != 2 {
		t.Fatalf("cursor = %d, want 2: version 3 is not visible yet", f.cursor)
	}
	st.commit(store.Change{Version: late, Instance: "other", Kind: "k", Item: "c", Value: "3"})
	f.follow(ctx)
	if want := []string{"a=1", "b=2", "c=3"}; !slices.Equal(*applied, want) {
		t.Fatalf("applied %v, want %v (late commit read, b not applied twice)", *applied, want)
	}
	if f.cursor != 4 {
		t.Fatalf("cursor = %d, want 4", f.cursor)
	}

	// A hole that never fills (a rolled-back insert) is given up after GapWait.
	st.reserve()
	st.PublishChanges(ctx, []store.Change{{Instance: "other", Kind: "k", Item: "d", Value: "4"}})
	f.follow(ctx)
	f.advance(now.Add(time.Second))
	if f.cursor != 4 {
		t.Fatalf("cursor = %d before GapWait, want 4", f.cursor)
	}
	f.advance(now.Add(2 * DefaultGapWait))
	if f.cursor != 6 {
		t.Fatalf("cursor = %d after GapWait, want 6", f.cursor)
	}
}

// TestPublishCoalescesAndSurvivesOutage: changes made while the database
// is down are kept, a later change of an item replaces the earlier one,
// and they are written in the order they were made once it answers; the
// durable write runs before the change is published.
func TestPublishCoalescesAndSurvivesOutage(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	f, _ := newTestFeed(st)
	var writes []string
	write := func(s string) func(context.Context) error {
		return func(context.Context) error {
			if st.down {
				return errDown
			}
			writes = append(writes, s)
			return nil
		}
	}
	st.setDown(true)
	f.Publish("k", "x", "1", write("x1"))
	f.Publish("k", "y", "1", write("y1"))
	f.Publish("k", "x", "", write("x-del"))
	f.flush(ctx)
	if got := f.Stats(); got.Pending != 2 || !got.Down || got.Errors == 0 {
		t.Fatalf("stats during the outage = %+v, want 2 pending, down", got)
	}
	st.setDown(false)
	f.flush(ctx)
	if want := []string{"y1", "x-del"}; !slices.Equal(writes, want) {
		t.Errorf("durable writes %v, want %v", writes, want)
	}
	var got []string
	for _, c := range st.rows {
		got = append(got, c.Item+"="+c.Value)
	}
	if want := []string{"y=1", "x="}; !slices.Equal(got, want) {
		t.Errorf("published %v, want %v", got, want)
	}
	if s := f.Stats(); s.Pending != 0 || s.Down || s.Published != 2 {
		t.Errorf("stats after the outage = %+v", s)
	}
}

// TestResyncAfterPrunedOutage: a follower that could not read while the
// feed was pruned past its cursor reloads the state instead of missing
// changes.
func TestResyncAfterPrunedOutage(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	f, applied := newTestFeed(st)
	f.Start(ctx)
	st.setDown(true)
	f.follow(ctx)
	st.setDown(false)
	st.PublishChanges(ctx, []store.Change{{Instance: "other", Kind: "k", Item: "lost", Value: "1"}})
	st.PruneChanges(ctx, time.Now())
	st.PublishChanges(ctx, []store.Change{{Instance: "other", Kind: "k", Item: "kept", Value: "1"}})
	f.follow(ctx)
	if st.resyncs != 1 {
		t.Errorf("resyncs = %d, want 1", st.resyncs)
	}
	if f.cursor != 2 || len(*applied) != 0 {
		t.Errorf("cursor %d, applied %v; want 2 and nothing (the resync loaded the state)", f.cursor, *applied)
	}
}
