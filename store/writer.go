package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// WriterOptions tunes a Writer. Zero fields take their value from
// DefaultWriterOptions.
type WriterOptions struct {
	// QueueSize is how many rows may wait beside the batch being written.
	// Add drops rows beyond it, so memory stays bounded during an outage.
	QueueSize int
	// BatchSize is the most rows one InsertLogs call carries.
	BatchSize int
	// FlushEvery is the longest a partial batch waits before it is written.
	FlushEvery time.Duration
	// RetryMin is the wait after a failed write; it doubles with each
	// further failure of the same batch, up to RetryMax.
	RetryMin, RetryMax time.Duration
	// WriteTimeout bounds one InsertLogs or Ping call, so a database that
	// hangs counts as a failure instead of stalling the writer.
	WriteTimeout time.Duration
	// Now stamps rows added with a zero Time.
	Now func() time.Time
}

// DefaultWriterOptions are the options a serving ccload uses.
var DefaultWriterOptions = WriterOptions{
	QueueSize: 10000,
	// One transaction per 500 rows rather than 200: the commit is a good
	// part of a batch's cost. On SQLite a row took 42 µs in batches of
	// 200, 29-30 in batches of 500, 21-22 in batches of 1000 (store/BENCH.md),
	// but 1000-row batches also added 2 MiB to the RSS of the 1000-stream
	// benchmark. Rows still reach the database within about
	// FlushEvery: the ticker writes what is queued.
	BatchSize:    500,
	FlushEvery:   500 * time.Millisecond,
	RetryMin:     250 * time.Millisecond,
	RetryMax:     5 * time.Second,
	WriteTimeout: 30 * time.Second,
	Now:          time.Now,
}

// isolateAfter is how many times a batch must fail, while the database
// answers Ping, before the Writer writes its rows one by one to find the
// rows the database refuses.
const isolateAfter = 3

func (o WriterOptions) withDefaults() WriterOptions {
	d := DefaultWriterOptions
	if o.QueueSize <= 0 {
		o.QueueSize = d.QueueSize
	}
	if o.BatchSize <= 0 {
		o.BatchSize = d.BatchSize
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = d.FlushEvery
	}
	if o.RetryMin <= 0 {
		o.RetryMin = d.RetryMin
	}
	if o.RetryMax <= 0 {
		o.RetryMax = max(d.RetryMax, o.RetryMin)
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = d.WriteTimeout
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	return o
}

// WriterStats counts what happened to the rows given to a Writer. Every row
// passed to Add ends in exactly one of Written, Dropped, Rejected and
// Unwritten, or is still Queued.
type WriterStats struct {
	// Capacity is the most rows that can be Queued at once: QueueSize
	// waiting plus one batch being written or retried.
	Capacity    int64
	Queued      int64  // accepted, not yet written: waiting, or in a batch being retried
	Written     int64  // committed to the store
	Dropped     int64  // refused by Add: the queue was full or the Writer closed
	Rejected    int64  // refused by the database while it accepted the rest of their batch
	Unwritten   int64  // still queued when Close's context expired
	WriteErrors int64  // failed InsertLogs calls, retries included
	LastError   string // the most recent write error, "" if none
	// FailingSince is when the current run of failed writes began: the
	// database has not accepted a write since. Zero while writes succeed.
	FailingSince time.Time
}

// Degraded reports whether writes are failing now (an outage): rows wait in
// the queue and are dropped once it is full, until a write succeeds again.
func (s WriterStats) Degraded() bool { return !s.FailingSince.IsZero() }

// Lost is how many rows will never be written.
func (s WriterStats) Lost() int64 { return s.Dropped + s.Rejected + s.Unwritten }

// LostRowsError is what Close returns when rows were lost over the Writer's
// life; the counts are those of WriterStats.
type LostRowsError struct {
	Dropped, Rejected, Unwritten int64
	LastError                    string
}

func (e *LostRowsError) Error() string {
	msg := fmt.Sprintf("store: log writer lost %d rows (%d dropped on a full queue, %d rejected by the database, %d unwritten at close)",
		e.Dropped+e.Rejected+e.Unwritten, e.Dropped, e.Rejected, e.Unwritten)
	if e.LastError != "" {
		msg += "; last error: " + e.LastError
	}
	return msg
}

// Writer writes request logs to a Store in batches from one goroutine, so
// that request handlers never wait for the database (design §5 step 7).
//
// While the database fails, the Writer keeps its current batch and retries
// it with exponential backoff; new rows wait in the queue until it is full,
// and rows beyond it are dropped and counted. A row is never lost without
// being counted in Stats.
type Writer struct {
	store Store
	opts  WriterOptions
	queue *rowQueue // closed by Close, so it cannot grow after Close

	closing   chan struct{} // closed by Close: drain and stop
	done      chan struct{} // closed when the goroutine has returned
	ctx       context.Context
	abort     context.CancelFunc // cancels ctx when Close's context expires
	closeOnce sync.Once

	queued, written, dropped, rejected, unwritten, writeErrors atomic.Int64

	errMu   sync.Mutex
	lastErr string
	failing time.Time // FailingSince; under errMu
}

// NewWriter starts a Writer on s. Close it to write what is queued.
func NewWriter(s Store, opts WriterOptions) *Writer {
	opts = opts.withDefaults()
	ctx, abort := context.WithCancel(context.Background())
	w := &Writer{
		store:   s,
		opts:    opts,
		queue:   newRowQueue(opts.QueueSize, opts.BatchSize),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
		ctx:     ctx,
		abort:   abort,
	}
	go w.run()
	return w
}

// Add queues r for writing and returns at once. When the queue is full, or
// the Writer is closed, r is dropped and counted. A zero r.Time is set to
// the current time.
func (w *Writer) Add(r LogRow) {
	if r.Time.IsZero() {
		r.Time = w.opts.Now()
	}
	// Counted before the push, so that Queued never goes below zero when
	// the writer takes and writes the row before this returns.
	w.queued.Add(1)
	if !w.queue.push(&r) {
		w.queued.Add(-1)
		w.dropped.Add(1)
	}
}

// Stats returns the current counts.
func (w *Writer) Stats() WriterStats {
	w.errMu.Lock()
	last, failing := w.lastErr, w.failing
	w.errMu.Unlock()
	// A store still connecting (Lazy) is an outage from the start, before
	// any row was there to fail.
	if p, ok := w.store.(interface{ Pending() (time.Time, error) }); ok && failing.IsZero() {
		if since, err := p.Pending(); err != nil {
			failing = since
			if last == "" {
				last = err.Error()
			}
		}
	}
	return WriterStats{
		Capacity:     int64(w.opts.QueueSize + w.opts.BatchSize),
		FailingSince: failing,
		Queued:       w.queued.Load(),
		Written:      w.written.Load(),
		Dropped:      w.dropped.Load(),
		Rejected:     w.rejected.Load(),
		Unwritten:    w.unwritten.Load(),
		WriteErrors:  w.writeErrors.Load(),
		LastError:    last,
	}
}

// Close stops accepting rows and writes everything queued, retrying failed
// writes, until done or until ctx expires; then what is left is counted as
// Unwritten. Give ctx a deadline: without one, Close waits for the database
// to come back. Close returns a *LostRowsError when any row was lost over the
// Writer's life, else nil. Calling Close again waits and reports the same.
func (w *Writer) Close(ctx context.Context) error {
	w.closeOnce.Do(func() {
		w.queue.close()
		close(w.closing)
	})
	select {
	case <-w.done:
	case <-ctx.Done():
		w.abort() // cancels the write in flight and ends the retries
		<-w.done
	}
	w.abort()
	st := w.Stats()
	if st.Lost() == 0 {
		return nil
	}
	return &LostRowsError{Dropped: st.Dropped, Rejected: st.Rejected, Unwritten: st.Unwritten, LastError: st.LastError}
}

// run is the Writer's goroutine: it gathers batches and writes them. Rows
// wait in the queue until a whole batch is there or FlushEvery has passed.
func (w *Writer) run() {
	defer close(w.done)
	tick := time.NewTicker(w.opts.FlushEvery)
	defer tick.Stop()
	batch := make([]LogRow, 0, w.opts.BatchSize)
	flush := false
	for {
		// Closing wins over new rows, so that a batch kept back by deliver
		// goes to drain and never grows past BatchSize.
		select {
		case <-w.closing:
			w.drain(batch)
			return
		default:
		}
		if flush || w.queue.len() >= w.opts.BatchSize {
			flush = false
			if batch = w.queue.take(batch, w.opts.BatchSize); len(batch) > 0 {
				batch = w.deliver(batch, w.closing)
				continue
			}
		}
		select {
		case <-w.closing:
		case <-w.queue.full:
		case <-tick.C:
			flush = true
		}
	}
}

// drain writes batch and then the rest of the queue, which can no longer
// grow, until it is empty or Close's context has expired.
func (w *Writer) drain(batch []LogRow) {
	for {
		batch = w.queue.take(batch, w.opts.BatchSize)
		if len(batch) == 0 {
			return
		}
		batch = w.deliver(batch, nil)
		if w.ctx.Err() != nil {
			w.settle(&w.unwritten, int64(len(batch)+w.queue.len()))
			return
		}
	}
}

// deliver writes batch, retrying with backoff, until it is written, stop is
// closed or the Writer is aborted. It returns the rows it did not write
// (an empty slice reusing batch's memory when all were written). Before each
// retry the batch takes in queued rows up to BatchSize, which both speeds up
// catching up after an outage and lets isolate compare rows.
func (w *Writer) deliver(batch []LogRow, stop <-chan struct{}) []LogRow {
	wait := w.opts.RetryMin
	for failures := 1; ; failures++ {
		err := w.insert(batch)
		if err == nil {
			w.settle(&w.written, int64(len(batch)))
			w.recovered()
			return batch[:0]
		}
		w.fail(err.Error())
		// A batch that keeps failing while the database answers Ping may
		// hold a row the database refuses; an outage fails Ping too.
		if failures >= isolateAfter && w.ping() {
			if batch = w.isolate(batch); len(batch) == 0 {
				return batch
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			return batch
		case <-w.ctx.Done():
			t.Stop()
			return batch
		}
		wait = min(2*wait, w.opts.RetryMax)
		batch = w.queue.take(batch, w.opts.BatchSize)
	}
}

// isolate writes batch one row at a time, so that a row the database
// refuses does not hold back every row queued behind it forever. A row is
// rejected (counted, and never retried) only when the database accepted
// another row of the same batch and still answers Ping after refusing it.
// Otherwise the failure looks like an outage, or a database that refuses
// everything (locked, out of disk), and isolate stops, returning the rows
// that failed and those not yet tried, in order.
func (w *Writer) isolate(batch []LogRow) []LogRow {
	var failed []LogRow
	var failErr error
	written := 0
	for i := range batch {
		err := w.insert(batch[i : i+1])
		if err == nil {
			written++
			continue
		}
		w.fail(err.Error())
		failed, failErr = append(failed, batch[i]), err
		if (written == 0 && len(failed) == isolateAfter) || !w.ping() {
			w.settle(&w.written, int64(written))
			kept := append(failed, batch[i+1:]...)
			return append(batch[:0], kept...)
		}
	}
	w.settle(&w.written, int64(written))
	if written > 0 {
		w.recovered() // the database answers; only some rows are refused
	}
	if written == 0 {
		return append(batch[:0], failed...) // all failed: cannot tell bad rows from a bad database
	}
	if len(failed) > 0 {
		w.settle(&w.rejected, int64(len(failed)))
		w.setLastError(fmt.Sprintf("rejected %d log rows, last request_id %q: %v",
			len(failed), failed[len(failed)-1].RequestID, failErr))
	}
	return batch[:0]
}

func (w *Writer) insert(batch []LogRow) error {
	ctx, cancel := context.WithTimeout(w.ctx, w.opts.WriteTimeout)
	defer cancel()
	return w.store.InsertLogs(ctx, batch)
}

func (w *Writer) ping() bool {
	ctx, cancel := context.WithTimeout(w.ctx, w.opts.WriteTimeout)
	defer cancel()
	return w.store.Ping(ctx) == nil
}

// settle moves n rows out of Queued into counter.
func (w *Writer) settle(counter *atomic.Int64, n int64) {
	counter.Add(n)
	w.queued.Add(-n)
}

// fail records one failed write.
func (w *Writer) fail(msg string) {
	w.writeErrors.Add(1)
	w.errMu.Lock()
	w.lastErr = msg
	if w.failing.IsZero() {
		w.failing = w.opts.Now()
	}
	w.errMu.Unlock()
}

// recovered records a successful write: the outage, if any, is over.
func (w *Writer) recovered() {
	w.errMu.Lock()
	w.failing = time.Time{}
	w.errMu.Unlock()
}

func (w *Writer) setLastError(msg string) {
	w.errMu.Lock()
	w.lastErr = msg
	w.errMu.Unlock()
}
