// Package pool keeps freed buffers for reuse, one sync.Pool per key (a
// buffer's element type and length, say), in a set of pools that cannot
// grow without bound.
//
// A map from key to sync.Pool that only ever gains keys leaks: the pools'
// contents go with the garbage collector, but the pools stay, one for
// every length a process ever freed. A Keyed holds at most Max keys; when
// a new key would pass that, the least recently used half go, with
// whatever buffers their pools still held (garbage, as any pool content
// is in time).
package pool

import (
	"slices"
	"sync"
)

// DefaultMax is how many keys a Keyed with no Max set keeps.
const DefaultMax = 512

// Keyed is a bounded set of sync.Pools, one per key. The zero value is
// ready to use; a Keyed must not be copied after first use.
type Keyed[K comparable] struct {
	// Max bounds the keys kept; zero means DefaultMax.
	Max int

	mu    sync.Mutex
	pools map[K]*entry
	clock uint64 // counts Gets and Puts: an entry's last use
}

type entry struct {
	pool sync.Pool
	used uint64
}

// Get takes a buffer of key k from its pool, or returns nil when there is
// none.
func (s *Keyed[K]) Get(k K) any {
	s.mu.Lock()
	e := s.pools[k]
	if e != nil {
		s.clock++
		e.used = s.clock
	}
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	return e.pool.Get()
}

// Put gives v, a buffer of key k that nothing refers to any more, to k's
// pool.
func (s *Keyed[K]) Put(k K, v any) {
	s.mu.Lock()
	e := s.pools[k]
	if e == nil {
		if s.pools == nil {
			s.pools = map[K]*entry{}
		}
		if len(s.pools) >= s.max() {
			s.evict()
		}
		e = &entry{}
		s.pools[k] = e
	}
	s.clock++
	e.used = s.clock
	s.mu.Unlock()
	e.pool.Put(v)
}

// Len returns how many keys have a pool.
func (s *Keyed[K]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pools)
}

func (s *Keyed[K]) max() int {
	if s.Max > 0 {
		return s.Max
	}
	return DefaultMax
}

// evict drops the least recently used half of the pools (at least one),
// so that a run of new keys costs one sort per Max/2 of them.
func (s *Keyed[K]) evict() {
	uses := make([]uint64, 0, len(s.pools))
	for _, e := range s.pools {
		uses = append(uses, e.used)
	}
	slices.Sort(uses)
	cut := uses[max(len(uses)/2, 1)-1] // drop entries used at or before this
	for k, e := range s.pools {
		if e.used <= cut {
			delete(s.pools, k)
		}
	}
}
