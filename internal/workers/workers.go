// Package workers runs the parts of a parallel loop on a team of
// goroutines that wait for work spinning a while before they sleep.
//
// A goroutine started for each part (go f(); wg.Wait()) runs late when
// the processors are idle: the runtime must wake a sleeping thread for
// it, and on a virtual machine that takes tens of microseconds (60 µs on
// this project's development VM: BenchmarkStart),
// during which the caller runs its own part alone. A GEMM of a 128×128
// block then runs on one core for a third of its time. Numeric libraries
// answer this with threads that poll for work between parallel regions
// (OpenMP's spin count, MKL's block time); so does this package, for
// spinFor after each part, yielding the processor to any other runnable
// goroutine at every poll.
//
// A caller runs part 0 itself, then every part no worker has started, so
// that Run makes progress when all workers are busy (nested Runs
// included), and a panic in a part is raised again in the caller.
package workers

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is how long a worker polls for another part after finishing
// one, and how long a caller polls for its parts to finish, before
// sleeping.
const spinFor = 200 * time.Microsecond

// Run calls fn(0), ..., fn(n-1), in parallel as far as there are idle
// workers (at most GOMAXPROCS-1), and returns when all have returned.
// fn(0) runs on the caller's goroutine, and so does any part no worker has
// started when the caller is done with its own: parts must not wait for
// each other. A panic in any call is raised again by Run as a *Panic
// holding its value and stack (the first, when several panic).
func Run(n int, fn func(i int)) { theTeam().run(n, fn) }

// run is Run on team t.
func (t *team) run(n int, fn func(i int)) {
	if n <= 1 {
		if n == 1 {
			fn(0)
		}
		return
	}
	c := &call{fn: fn, parts: make([]part, n-1)}
	c.left.Store(int32(n - 1))
	c.wg.Add(n - 1)
	workers := t.grow(n - 1)
	for i := range c.parts {
		p := &c.parts[i]
		p.c, p.i = c, i+1
		if workers == 0 {
			continue // GOMAXPROCS is 1: nobody would take it from the queue
		}
		select {
		case t.queue <- p:
		default: // the queue is full: the caller runs it below
		}
	}
	returned := false
	defer func() {
		if !returned {
			// fn(0) ended the caller's goroutine (runtime.Goexit, as
			// t.FailNow does): the other parts still run, and finish,
			// before it ends, as they would have before Run returned.
			c.finish()
		}
	}()
	func() {
		defer c.recover()
		fn(0)
	}()
	returned = true
	c.finish()
	if c.panicked.Load() {
		panic(c.panicValue)
	}
}

// Split cuts [0, n) into at most parts contiguous ranges of nearly equal
// length and calls fn on each, in parallel (Run).
func Split(n, parts int, fn func(lo, hi int)) {
	parts = max(min(parts, n), 1)
	Run(parts, func(i int) {
		if lo, hi := n*i/parts, n*(i+1)/parts; lo < hi {
			fn(lo, hi)
		}
	})
}

// call is one Run.
type call struct {
	fn         func(int)
	parts      []part // parts 1..n-1
	left       atomic.Int32
	wg         sync.WaitGroup
	panicked   atomic.Bool
	panicValue any
}

// finish runs the parts no worker has started and waits for the others.
func (c *call) finish() {
	for i := range c.parts {
		c.parts[i].run(nil)
	}
	c.wait()
}

// part is one call of fn, claimed by whoever runs it first.
type part struct {
	c       *call
	i       int
	claimed atomic.Bool
}

// run calls the part's fn unless someone else has claimed it. When fn
// ends the goroutine (runtime.Goexit), goexit (if not nil) runs before
// the part counts as done, so that whoever waits for the part sees what
// goexit did (a worker leaving the team).
func (p *part) run(goexit func()) {
	if p.claimed.Swap(true) {
		return
	}
	defer p.c.partDone()
	if goexit != nil {
		returned := false
		defer func() {
			if returned {
				return
			}
			if r := recover(); r != nil {
				p.c.record(r) // a panic: the goroutine goes on
				return
			}
			goexit()
		}()
		p.c.fn(p.i)
		returned = true
		return
	}
	p.c.fn(p.i)
}

// partDone counts a part of the call as done, recording its panic
// (deferred).
func (c *call) partDone() {
	c.record(recover())
	c.left.Add(-1)
	c.wg.Done()
}

// recover records a panic of the caller's part (deferred).
func (c *call) recover() { c.record(recover()) }

// record keeps r, a part's panic value (nil if none), with the stack it
// was raised on, unless another part panicked first.
func (c *call) record(r any) {
	if r != nil && !c.panicked.Swap(true) {
		c.panicValue = &Panic{Value: r, Stack: debug.Stack()}
	}
}

// Panic is what Run panics with when a part panicked: the part's panic
// value and the stack where it happened (which the panic raised again in
// the caller no longer shows).
type Panic struct {
	Value any
	Stack []byte
}

// Error returns the value and the part's stack.
func (p *Panic) Error() string { return fmt.Sprintf("%v\n\npart's stack:\n%s", p.Value, p.Stack) }

// Unwrap returns the value when it is an error (a runtime.Error, say).
func (p *Panic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// wait returns when every part has run: polling first, since the parts
// started together mostly end together, then sleeping.
func (c *call) wait() {
	if poll(func() bool { return c.left.Load() == 0 }) {
		return
	}
	c.wg.Wait()
}

// poll calls done until it reports true or spinFor has passed, yielding
// the processor between calls; it reports whether done did.
func poll(done func() bool) bool {
	deadline := time.Now().Add(spinFor)
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i%16 == 15 && time.Now().After(deadline) {
			return false
		}
		runtime.Gosched()
	}
}

// team is the process's workers; they share one queue of parts.
type team struct {
	queue chan *part
	mu    sync.Mutex
	size  int
}

var (
	teamOnce sync.Once
	theT     *team
)

func theTeam() *team {
	teamOnce.Do(func() { theT = &team{queue: make(chan *part, 1024)} })
	return theT
}

// grow starts workers until there are at least n, or GOMAXPROCS-1: more
// goroutines than processors would not compute faster, and the caller
// runs the parts no worker takes.
// It returns how many there are.
func (t *team) grow(n int) int {
	n = min(n, runtime.GOMAXPROCS(0)-1)
	t.mu.Lock()
	defer t.mu.Unlock()
	for ; t.size < n; t.size++ {
		go t.work()
	}
	return t.size
}

// work runs parts from the queue, polling for the next for spinFor after
// each before it sleeps on the queue. It returns only when a part ends
// its goroutine (runtime.Goexit, as t.FailNow does): the team is then one
// worker short, and the next Run starts another. The worker leaves the
// team before that part counts as done, so that a Run after the one
// waiting for it sees the team short and grows it.
func (t *team) work() {
	leave := func() {
		t.mu.Lock()
		t.size--
		t.mu.Unlock()
	}
	for p := range t.queue {
		p.run(leave)
		for {
			var next *part
			if !poll(func() bool {
				select {
				case next = <-t.queue:
					return true
				default:
					return false
				}
			}) {
				break
			}
			next.run(leave)
		}
	}
}
