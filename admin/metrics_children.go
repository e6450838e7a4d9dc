package admin

import "sync"

// children remembers a metric vector's children by their label values.
// The vector's With joins the values into a key, an allocation, on each
// call, several times per request; a map lookup by the values themselves
// is cheaper (perf, issue 12). Label values are bounded (see Metrics), and
// no series is ever deleted, so a remembered child stays the vector's.
type children[T any] struct {
	with func(...string) T

	mu sync.RWMutex
	m  map[labels]T
}

// labels are up to four label values, unused ones empty.
type labels [4]string

func newChildren[T any](with func(...string) T) *children[T] {
	return &children[T]{with: with, m: map[labels]T{}}
}

// get returns the child for the first n values of lv.
func (c *children[T]) get(lv labels, n int) T {
	c.mu.RLock()
	v, ok := c.m[lv]
	c.mu.RUnlock()
	if ok {
		return v
	}
	return c.add(lv, n)
}

// add makes and remembers the child for lv. It is apart from get because
// slicing lv for with moves it to the heap: in get, that was an allocation
// on every call, the hits included (7 per request).
//
//go:noinline
func (c *children[T]) add(lv labels, n int) T {
	v := c.with(lv[:n]...)
	c.mu.Lock()
	c.m[lv] = v
	c.mu.Unlock()
	return v
}
