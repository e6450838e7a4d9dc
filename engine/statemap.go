package engine

import "sync"

// stateMap is one of the registry's containers: a concurrent map with
// typed keys and values (a sync.Map underneath, as each key is written
// once and then read on every request). Keys are the entity's identity
// (a name, a raw URL, a struct of both), never a snapshot's pointer, so
// sweep can tell which entity an entry belongs to.
type stateMap[K comparable, V any] struct{ m sync.Map }

func (s *stateMap[K, V]) load(k K) (V, bool) {
	v, ok := s.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (s *stateMap[K, V]) store(k K, v V) { s.m.Store(k, v) }

func (s *stateMap[K, V]) delete(k K) { s.m.Delete(k) }

// loadOrStore returns the value k has, or stores v; loaded says which.
func (s *stateMap[K, V]) loadOrStore(k K, v V) (V, bool) {
	got, loaded := s.m.LoadOrStore(k, v)
	return got.(V), loaded
}

// get returns k's value, storing make's the first time. The fast path
// allocates nothing.
func (s *stateMap[K, V]) get(k K, make func() V) V {
	if v, ok := s.m.Load(k); ok {
		return v.(V)
	}
	v, _ := s.m.LoadOrStore(k, make())
	return v.(V)
}

// sweep deletes every entry whose key keep refuses.
func (s *stateMap[K, V]) sweep(keep func(K) bool) {
	s.m.Range(func(k, _ any) bool {
		if !keep(k.(K)) {
			s.m.Delete(k)
		}
		return true
	})
}

// keys lists the keys, in no order.
func (s *stateMap[K, V]) keys() []K {
	var out []K
	s.m.Range(func(k, _ any) bool {
		out = append(out, k.(K))
		return true
	})
	return out
}
