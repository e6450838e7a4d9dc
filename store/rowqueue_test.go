package store

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func row(i int) LogRow { return LogRow{RequestID: strconv.Itoa(i)} }

// TestRowQueueKeepsOrderAcrossSlidesAndGrowth pushes and takes in uneven
// steps, so that the queue both slides its rows down and grows its array,
// and checks that rows come out in the order they went in, none twice.
func TestRowQueueKeepsOrderAcrossSlidesAndGrowth(t *testing.T) {
	q := newRowQueue(1000, 8)
	next, want := 0, 0
	var got []LogRow
	for step := range 200 {
		for range step%7 + 1 {
			r := row(next)
			if !q.push(&r) {
				t.Fatalf("push %d refused with %d queued", next, q.len())
			}
			next++
		}
		got = q.take(got[:0], step%5+1)
		for _, r := range got {
			if r.RequestID != strconv.Itoa(want) {
				t.Fatalf("took %s, want %d", r.RequestID, want)
			}
			want++
		}
	}
	if n := q.len(); n != next-want {
		t.Fatalf("len %d, want %d", n, next-want)
	}
	for got = q.take(got[:0], 1<<30); len(got) > 0; got = q.take(got[:0], 1<<30) {
		for _, r := range got {
			if r.RequestID != strconv.Itoa(want) {
				t.Fatalf("took %s, want %d", r.RequestID, want)
			}
			want++
		}
	}
	if want != next {
		t.Fatalf("took %d rows of %d", want, next)
	}
}

func TestRowQueueRefusesBeyondLimitAndAfterClose(t *testing.T) {
	q := newRowQueue(3, 2)
	for i := range 3 {
		r := row(i)
		if !q.push(&r) {
			t.Fatalf("push %d refused", i)
		}
	}
	r := row(3)
	if q.push(&r) {
		t.Fatal("a fourth row was queued past a limit of 3")
	}
	if got := q.take(nil, 1); len(got) != 1 || got[0].RequestID != "0" {
		t.Fatalf("took %v", got)
	}
	if !q.push(&r) {
		t.Fatal("push refused with room for one")
	}
	q.close()
	r = row(4)
	if q.push(&r) {
		t.Fatal("a row was queued after close")
	}
	if got := q.take(nil, 10); requestIDsOf(got) != "1 2 3" {
		t.Fatalf("after close took %q, want the rows queued before it", requestIDsOf(got))
	}
}

// TestRowQueueSignalsOncePerBatch: the writer is woken when a batch is
// waiting, not for every row.
func TestRowQueueSignalsOncePerBatch(t *testing.T) {
	q := newRowQueue(100, 4)
	signals := 0
	for i := range 12 {
		r := row(i)
		q.push(&r)
		select {
		case <-q.full:
			signals++
			if q.len() != 4 {
				t.Fatalf("signalled with %d rows waiting, want 4", q.len())
			}
			q.take(nil, 4)
		default:
		}
	}
	if signals != 3 {
		t.Fatalf("%d signals for 12 rows in batches of 4, want 3", signals)
	}
}

// TestRowQueueGivesBackABacklog: once the rows of an outage are written,
// the array that held them is let go.
func TestRowQueueGivesBackABacklog(t *testing.T) {
	q := newRowQueue(10000, 10)
	for i := range 5000 {
		r := row(i)
		q.push(&r)
	}
	for got := q.take(nil, 100); len(got) > 0; got = q.take(got[:0], 100) {
	}
	if c := cap(q.rows); c > keptBatches*10 {
		t.Fatalf("empty queue still holds an array of %d rows", c)
	}
}

type discardStore struct{ Store }

func (discardStore) InsertLogs(context.Context, []LogRow) error { return nil }
func (discardStore) Ping(context.Context) error                 { return nil }

// TestWriterMemoryFollowsRowsNotQueueSize: a Writer allowed a million
// queued rows costs almost nothing while it holds none. (A channel of that
// capacity allocated 360 MB at NewWriter.)
func TestWriterMemoryFollowsRowsNotQueueSize(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w := NewWriter(discardStore{}, WriterOptions{QueueSize: 1_000_000, BatchSize: 200, FlushEvery: time.Hour})
	runtime.ReadMemStats(&after)
	defer w.Close(context.Background())
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("NewWriter allocated %d bytes for an empty queue", grew)
	}
}

func requestIDsOf(rows []LogRow) string {
	s := ""
	for i, r := range rows {
		if i > 0 {
			s += " "
		}
		s += r.RequestID
	}
	return s
}
