package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/store"
)

// flakyStore wraps a real Store to play an outage (down), a row the
// database refuses (refuse: a batch holding it fails whole, as a
// transaction would), or a slow database (gate: InsertLogs waits for it).
// afterInsert, when set, runs after each successful InsertLogs.
type flakyStore struct {
	store.Store
	down        atomic.Bool
	refuse      string
	gate        chan struct{}
	entered     chan struct{}
	afterInsert func(rows []store.LogRow)
}

var errDown = errors.New("flaky: database is down")

func (f *flakyStore) InsertLogs(ctx context.Context, rows []store.LogRow) error {
	if f.gate != nil {
		select {
		case f.entered <- struct{}{}:
		default:
		}
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.down.Load() {
		return errDown
	}
	for _, r := range rows {
		if f.refuse != "" && r.RequestID == f.refuse {
			return fmt.Errorf("flaky: row %s violates a constraint", r.RequestID)
		}
	}
	err := f.Store.InsertLogs(ctx, rows)
	if err == nil && f.afterInsert != nil {
		f.afterInsert(rows)
	}
	return err
}

func (f *flakyStore) Ping(ctx context.Context) error {
	if f.down.Load() {
		return errDown
	}
	return f.Store.Ping(ctx)
}

// fastRetry makes failed writes retry within milliseconds.
var fastRetry = store.WriterOptions{FlushEvery: time.Millisecond, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond}

// checkAccounting asserts that every added row is accounted for once.
func checkAccounting(t *testing.T, st store.WriterStats, added int64) {
	t.Helper()
	if sum := st.Written + st.Dropped + st.Rejected + st.Unwritten + st.Queued; sum != added {
		t.Errorf("stats %+v account for %d rows, want %d", st, sum, added)
	}
}

func closeWriter(t *testing.T, w *store.Writer, timeout time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return w.Close(ctx)
}

func requestIDs(rows []store.LogRow) string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.RequestID
	}
	return strings.Join(ids, ",")
}

func testWriterDrainsOnClose(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	stamp := base.Add(time.Hour).Truncate(time.Millisecond)
	// FlushEvery of an hour: only full batches and Close write anything.
	w := store.NewWriter(s, store.WriterOptions{BatchSize: 7, FlushEvery: time.Hour, Now: func() time.Time { return stamp }})

	// Request handlers add concurrently.
	const producers, each = 8, 40
	rows := makeRows(producers * each)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for _, r := range rows[p*each : (p+1)*each] {
				w.Add(r)
			}
		})
	}
	wg.Wait()
	w.Add(store.LogRow{RequestID: "no-time", Token: "carol", Status: 200}) // stamped by Now
	added := int64(len(rows) + 1)

	if err := closeWriter(t, w, time.Minute); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st := w.Stats()
	checkAccounting(t, st, added)
	if st.Written != added || st.Queued != 0 || st.WriteErrors != 0 {
		t.Errorf("stats after Close: %+v; want all %d written", st, added)
	}
	got := allLogs(t, s)
	if int64(len(got)) != added {
		t.Fatalf("%d rows in the database, want %d", len(got), added)
	}
	last := got[len(got)-1]
	if last.RequestID != "no-time" || !last.Time.Equal(stamp) {
		t.Errorf("last row %q at %v, want no-time stamped %v", last.RequestID, last.Time, stamp)
	}
	usage, err := s.UsageDaily(ctxFor(t), "")
	if err != nil {
		t.Fatal(err)
	}
	var requests int64
	for _, u := range usage {
		requests += u.Requests
	}
	if requests != added {
		t.Errorf("usage_daily counts %d requests, want %d", requests, added)
	}

	// After Close, Add drops (and counts) instead of blocking or panicking.
	w.Add(rows[0])
	var lost *store.LostRowsError
	if err := closeWriter(t, w, time.Second); !errors.As(err, &lost) || lost.Dropped != 1 {
		t.Errorf("second Close = %v, want a LostRowsError with 1 dropped", err)
	}
}

func testWriterOutage(t *testing.T, open Opener) {
	f := &flakyStore{Store: mustOpen(t, open)}
	f.down.Store(true)
	w := store.NewWriter(f, fastRetry)
	rows := makeRows(30)
	for _, r := range rows {
		w.Add(r)
	}
	wait.Eventually(t, 30*time.Second, "the writer has failed several times", func() bool { return w.Stats().WriteErrors >= 5 })
	st := w.Stats()
	checkAccounting(t, st, int64(len(rows)))
	if st.Written != 0 || st.Queued != int64(len(rows)) || st.Rejected != 0 || !strings.Contains(st.LastError, "down") {
		t.Errorf("during the outage: %+v; want all %d rows kept and the error reported", st, len(rows))
	}
	if !st.Degraded() || st.FailingSince.After(time.Now()) {
		t.Errorf("during the outage: FailingSince %v; want the time of the first failure", st.FailingSince)
	}
	if n := len(allLogs(t, f.Store)); n != 0 {
		t.Fatalf("%d rows written during the outage", n)
	}

	f.down.Store(false)
	wait.Eventually(t, 30*time.Second, "the kept rows are written", func() bool { return w.Stats().Written == int64(len(rows)) })
	if st := w.Stats(); st.Degraded() {
		t.Errorf("after recovery: still degraded since %v", st.FailingSince)
	}
	if err := closeWriter(t, w, time.Minute); err != nil {
		t.Fatalf("Close: %v", err)
	}
	checkAccounting(t, w.Stats(), int64(len(rows)))
	got := allLogs(t, f.Store)
	if requestIDs(got) != requestIDs(rows) {
		t.Errorf("rows after the outage, in ID order:\n got %s\nwant %s", requestIDs(got), requestIDs(rows))
	}
	usage, err := f.UsageDaily(ctxFor(t), "")
	if err != nil || !sameUsage(usage, usageFromRows(rows)) {
		t.Errorf("usage_daily after the outage: %+v (%v)", usage, err)
	}
}

func testWriterDrops(t *testing.T, open Opener) {
	f := &flakyStore{Store: mustOpen(t, open), gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	w := store.NewWriter(f, store.WriterOptions{QueueSize: 5, BatchSize: 2, FlushEvery: time.Hour})
	rows := makeRows(10)
	w.Add(rows[0])
	w.Add(rows[1]) // a full batch: the writer calls InsertLogs, which waits on the gate
	select {
	case <-f.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the writer never started writing")
	}
	for _, r := range rows[2:] { // 5 fill the queue, 3 are dropped
		w.Add(r)
	}
	st := w.Stats()
	checkAccounting(t, st, 10)
	if st.Dropped != 3 || st.Queued != 7 {
		t.Errorf("with a full queue: %+v; want 3 dropped, 7 queued", st)
	}
	close(f.gate)
	var lost *store.LostRowsError
	if err := closeWriter(t, w, time.Minute); !errors.As(err, &lost) || lost.Dropped != 3 || lost.Unwritten != 0 {
		t.Fatalf("Close = %v; want a LostRowsError with 3 dropped", err)
	}
	if got := allLogs(t, f.Store); requestIDs(got) != requestIDs(rows[:7]) {
		t.Errorf("written %s, want %s", requestIDs(got), requestIDs(rows[:7]))
	}
}

func testWriterRejects(t *testing.T, open Opener) {
	t.Run("among_others", func(t *testing.T) {
		f := &flakyStore{Store: mustOpen(t, open), refuse: "req-0004"}
		opts := fastRetry
		opts.FlushEvery, opts.BatchSize = time.Hour, 100 // one batch, written by Close
		w := store.NewWriter(f, opts)
		rows := makeRows(10)
		for _, r := range rows {
			w.Add(r)
		}
		var lost *store.LostRowsError
		if err := closeWriter(t, w, time.Minute); !errors.As(err, &lost) || lost.Rejected != 1 || lost.Unwritten != 0 {
			t.Fatalf("Close = %v; want a LostRowsError with 1 rejected", err)
		}
		st := w.Stats()
		checkAccounting(t, st, 10)
		if st.Written != 9 || !strings.Contains(st.LastError, "req-0004") {
			t.Errorf("stats %+v; want 9 written and the refused row named", st)
		}
		want := append(append([]store.LogRow{}, rows[:4]...), rows[5:]...)
		if got := allLogs(t, f.Store); requestIDs(got) != requestIDs(want) {
			t.Errorf("written %s, want %s", requestIDs(got), requestIDs(want))
		}
	})

	// Alone, a refused row cannot be told from a database refusing
	// everything: it is kept until another row in its batch succeeds.
	t.Run("alone", func(t *testing.T) {
		f := &flakyStore{Store: mustOpen(t, open), refuse: "req-0000"}
		w := store.NewWriter(f, fastRetry)
		rows := makeRows(2)
		w.Add(rows[0])
		wait.Eventually(t, 30*time.Second, "a row-by-row pass has run", func() bool { return w.Stats().WriteErrors >= 2*3 })
		if st := w.Stats(); st.Rejected != 0 || st.Queued != 1 {
			t.Fatalf("lone refused row: %+v; want it kept", st)
		}
		w.Add(rows[1])
		wait.Eventually(t, 30*time.Second, "the good row is written", func() bool { return w.Stats().Written == 1 })
		var lost *store.LostRowsError
		if err := closeWriter(t, w, time.Minute); !errors.As(err, &lost) || lost.Rejected != 1 {
			t.Fatalf("Close = %v; want a LostRowsError with 1 rejected", err)
		}
		checkAccounting(t, w.Stats(), 2)
	})

	// The database goes down while rows are written one by one: the rows
	// that fail then are kept, not rejected.
	t.Run("outage_while_isolating", func(t *testing.T) {
		f := &flakyStore{Store: mustOpen(t, open), refuse: "req-0002"}
		var once sync.Once
		f.afterInsert = func(rows []store.LogRow) {
			if len(rows) == 1 {
				once.Do(func() { f.down.Store(true) })
			}
		}
		opts := fastRetry
		opts.FlushEvery, opts.BatchSize = time.Hour, 10
		w := store.NewWriter(f, opts)
		rows := makeRows(10)
		for _, r := range rows {
			w.Add(r) // the tenth fills the batch
		}
		wait.Eventually(t, 30*time.Second, "the outage hits the row-by-row pass", func() bool { return f.down.Load() && w.Stats().WriteErrors >= 6 })
		if st := w.Stats(); st.Written != 1 || st.Rejected != 0 || st.Queued != 9 {
			t.Fatalf("during the outage: %+v; want 1 written and 9 kept", st)
		}
		f.down.Store(false)
		wait.Eventually(t, 30*time.Second, "the batch is written around the refused row", func() bool { return w.Stats().Written == 9 })
		var lost *store.LostRowsError
		if err := closeWriter(t, w, time.Minute); !errors.As(err, &lost) || lost.Rejected != 1 || lost.Unwritten != 0 {
			t.Fatalf("Close = %v; want a LostRowsError with 1 rejected", err)
		}
		checkAccounting(t, w.Stats(), 10)
		want := append(append([]store.LogRow{}, rows[:2]...), rows[3:]...)
		if got := allLogs(t, f.Store); requestIDs(got) != requestIDs(want) {
			t.Errorf("written %s, want %s", requestIDs(got), requestIDs(want))
		}
	})
}

// testWriterGivesUp writes to a store whose database handle is closed: it
// never recovers, so Close must give up at its deadline and count the rows.
func testWriterGivesUp(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	w := store.NewWriter(s, fastRetry)
	for _, r := range makeRows(5) {
		w.Add(r)
	}
	wait.Eventually(t, 30*time.Second, "writes have failed", func() bool { return w.Stats().WriteErrors >= 2 })
	var lost *store.LostRowsError
	err := closeWriter(t, w, 50*time.Millisecond)
	if !errors.As(err, &lost) || lost.Unwritten != 5 || lost.LastError == "" {
		t.Fatalf("Close = %v; want a LostRowsError with 5 unwritten and the last error", err)
	}
	st := w.Stats()
	checkAccounting(t, st, 5)
	if st.Queued != 0 || st.Rejected != 0 {
		t.Errorf("after giving up: %+v", st)
	}
}
