package store

import "sync"

// rowQueue is the Writer's queue: a FIFO of rows, bounded at limit, that
// holds memory only for the rows in it. A channel of that capacity would
// not: a 10,000-row chan LogRow is 3.6 MB, allocated at start, touched in
// full as its ring turns even when it never holds more than a few rows,
// and scanned by every garbage collection (idle RSS and CPU per
// request). The queue also wakes the writer once per batch, where a
// channel woke it for every row.
type rowQueue struct {
	limit int           // the most rows queued at once; push refuses beyond it
	batch int           // full is signalled when this many rows wait
	full  chan struct{} // capacity 1: a batch is waiting

	mu     sync.Mutex
	rows   []LogRow // rows[head:] are queued, oldest first
	head   int
	closed bool
}

// keptBatches is how many batches' worth of backing array the queue keeps
// once it empties. A backlog larger than that (an outage) gives its memory
// back when it has been written, instead of holding it for good.
const keptBatches = 4

func newRowQueue(limit, batch int) *rowQueue {
	return &rowQueue{limit: limit, batch: batch, full: make(chan struct{}, 1)}
}

// push queues a copy of r. It reports false, queueing nothing, when limit
// rows are queued already or the queue is closed.
func (q *rowQueue) push(r *LogRow) bool {
	q.mu.Lock()
	n := len(q.rows) - q.head
	if q.closed || n >= q.limit {
		q.mu.Unlock()
		return false
	}
	if len(q.rows) == cap(q.rows) && q.head >= n {
		// More taken rows than queued ones at the front: slide the queued
		// rows down instead of growing the array. (Sliding on any smaller
		// head would copy the whole queue for each few rows taken.)
		m := copy(q.rows, q.rows[q.head:])
		clear(q.rows[m:])
		q.rows, q.head = q.rows[:m], 0
	}
	q.rows = append(q.rows, *r)
	signal := n+1 == q.batch
	q.mu.Unlock()
	if signal {
		select {
		case q.full <- struct{}{}:
		default: // the writer has a wake-up pending already
		}
	}
	return true
}

// take moves queued rows, oldest first, to the end of dst until dst holds
// max rows or the queue is empty.
func (q *rowQueue) take(dst []LogRow, max int) []LogRow {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := min(max-len(dst), len(q.rows)-q.head)
	if k <= 0 {
		return dst
	}
	dst = append(dst, q.rows[q.head:q.head+k]...)
	clear(q.rows[q.head : q.head+k]) // their strings belong to dst now
	q.head += k
	if q.head == len(q.rows) {
		q.head = 0
		q.rows = q.rows[:0]
		if cap(q.rows) > keptBatches*q.batch {
			q.rows = nil
		}
	}
	return dst
}

// len is how many rows are queued.
func (q *rowQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.rows) - q.head
}

// close makes every later push fail. Rows queued stay to be taken.
func (q *rowQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}
