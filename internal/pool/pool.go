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
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultMax is how many keys a Keyed with no Max set keeps.
const DefaultMax = 512

// Keyed is a bounded set of sync.Pools, one per key. The zero value is
// ready to use; a Keyed must not be copied after first use. Get and Put
// of a key that has a pool take no lock (a sync.Map lookup and an atomic
// counter); a new key takes one, to add its pool and drop old ones.
type Keyed[K comparable] struct {
	// Max bounds the keys kept; zero means DefaultMax.
	Max int

	pools sync.Map      // K -> *entry
	clock atomic.Uint64 // counts uses: an entry's last use
	mu    sync.Mutex    // held to add and drop pools
	n     int           // pools in the map (under mu)
}

type entry struct {
	pool sync.Pool
	used atomic.Uint64
}

// Get takes a buffer of key k from its pool, or returns nil when there is
// none.
func (s *Keyed[K]) Get(k K) any {
	v, ok := s.pools.Load(k)
	if !ok {
		return nil
	}
	e := v.(*entry)
	e.used.Store(s.clock.Add(1))
	return e.pool.Get()
}

// Put gives v, a buffer of key k that nothing refers to any more, to k's
// pool.
func (s *Keyed[K]) Put(k K, v any) {
	e := s.entry(k)
	e.used.Store(s.clock.Add(1))
	e.pool.Put(v)
}

// entry returns k's pool, adding it (and dropping the least recently used
// half when there are Max) if there is none.
func (s *Keyed[K]) entry(k K) *entry {
	if v, ok := s.pools.Load(k); ok {
		return v.(*entry)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.pools.Load(k); ok {
		return v.(*entry)
	}
	if s.n >= s.max() {
		s.evict()
	}
	e := &entry{}
	s.pools.Store(k, e)
	s.n++
	return e
}

// Len returns how many keys have a pool.
func (s *Keyed[K]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *Keyed[K]) max() int {
	if s.Max > 0 {
		return s.Max
	}
	return DefaultMax
}

// evict drops the least recently used half of the pools (at least one),
// so that a run of new keys costs one sort per Max/2 of them. s.mu is
// held; the uses are read once, so that Gets meanwhile cannot keep more
// than half.
func (s *Keyed[K]) evict() {
	type use struct {
		k    any
		used uint64
	}
	uses := make([]use, 0, s.n)
	s.pools.Range(func(k, v any) bool {
		uses = append(uses, use{k, v.(*entry).used.Load()})
		return true
	})
	slices.SortFunc(uses, func(a, b use) int { return cmp.Compare(a.used, b.used) })
	for _, u := range uses[:max(len(uses)/2, min(len(uses), 1))] {
		s.pools.Delete(u.k)
		s.n--
	}
}
