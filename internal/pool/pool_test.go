package pool

import (
	"fmt"
	"sync"
	"testing"
)

func TestKeysAreBounded(t *testing.T) {
	var s Keyed[int]
	s.Max = 64
	for k := range 10 * s.Max {
		s.Put(k, new([]float32))
		if s.Len() > s.Max {
			t.Fatalf("after %d keys the set holds %d pools, more than Max %d", k+1, s.Len(), s.Max)
		}
	}
	if s.Len() < s.Max/2 {
		t.Fatalf("the set holds %d pools, want at least half of Max %d", s.Len(), s.Max)
	}
	var d Keyed[int]
	for k := range 3 * DefaultMax {
		d.Put(k, k)
	}
	if d.Len() > DefaultMax {
		t.Fatalf("with no Max, %d pools, more than DefaultMax %d", d.Len(), DefaultMax)
	}
}

func TestRecentlyUsedKeysStay(t *testing.T) {
	s := Keyed[string]{Max: 4}
	for _, k := range []string{"a", "b", "c", "d"} {
		s.Put(k, k)
	}
	s.Get("a") // a is now the most recently used
	s.Put("e", "e")
	var kept []string
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if _, ok := s.pools.Load(k); ok {
			kept = append(kept, k)
		}
	}
	if fmt.Sprint(kept) != "[a d e]" {
		t.Fatalf("kept %v, want [a d e] (b and c were the least recently used)", kept)
	}
}

func TestGetReturnsWhatWasPut(t *testing.T) {
	var s Keyed[int]
	if v := s.Get(1); v != nil {
		t.Fatalf("Get of a key never put returned %v", v)
	}
	// sync.Pool may drop an item (the race detector makes it drop some on
	// purpose): put many, and expect one back, of the right key.
	for i := range 100 {
		s.Put(1, i)
		s.Put(2, -1)
	}
	got := 0
	for range 100 {
		v := s.Get(1)
		if v == nil {
			continue
		}
		if v.(int) < 0 {
			t.Fatalf("Get(1) returned %v, a buffer put under key 2", v)
		}
		got++
	}
	if got == 0 {
		t.Fatal("no buffer put under key 1 came back")
	}
}

func ExampleKeyed() {
	type key struct{ n int }
	var free Keyed[key]
	buf := make([]float32, 1<<16)
	free.Put(key{len(buf)}, &buf) // done with buf
	if p, ok := free.Get(key{1 << 16}).(*[]float32); ok {
		buf = *p // reused (a pool may also come back empty)
	} else {
		buf = make([]float32, 1<<16)
	}
	fmt.Println(len(buf), free.Len())
	// Output: 65536 1
}

// TestConcurrentUseStaysBounded: goroutines putting and getting shared
// and new keys at once (run with -race) leave at most Max pools.
func TestConcurrentUseStaysBounded(t *testing.T) {
	s := Keyed[int]{Max: 32}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := i % 40 // shared keys, more than Max
				if i%3 == 0 {
					k = 1000 + g*2000 + i // a key no one else uses
				}
				s.Put(k, i)
				s.Get(k)
			}
		})
	}
	wg.Wait()
	if s.Len() > s.Max {
		t.Fatalf("%d pools after concurrent use, more than Max %d", s.Len(), s.Max)
	}
	n := 0
	s.pools.Range(func(_, _ any) bool { n++; return true })
	if n != s.Len() {
		t.Fatalf("Len says %d pools, the map holds %d", s.Len(), n)
	}
}
