package effects

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
)

// collectUntil runs the garbage collector (and lets cleanups run) until
// done reports true, at most 100 times; it returns done's last answer.
// No timing is asserted: the bound only turns a leak into a failure.
func collectUntil(done func() bool) bool { return collectN(100, done) }

// collectN is collectUntil with at most n collections.
func collectN(n int, done func() bool) bool {
	for i := 0; i < n; i++ {
		if done() {
			return true
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	return done()
}

// Arguments may be closed as soon as Execute returns, also while the
// computation still waits for them (the backend holds them).
func TestArgumentsClosedAfterExecute(t *testing.T) {
	for _, kind := range []Effect{Ordered("log"), Unordered} {
		for _, mode := range tokenModes {
			t.Run(kind.String()+"/"+mode.name, func(t *testing.T) {
				c := openInterpreter(t, 1)
				var out lines
				exe := compileMode(t, c, build(t, func(fb *stablehlo.FuncBuilder) {
					require.NoError(t, Fprint(fb, &out, kind, "%v", fb.Arg(0)))
					fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)))
				}, i32), mode.arrays)
				s := NewStream()
				pending, fill := late(t, c, nil)
				outs, err := s.Execute(exe, pending)
				require.NoError(t, err)
				require.NoError(t, pending.Close())
				x := scalar(t, c, 21, nil)
				require.NoError(t, fill.Fulfill(x))
				require.NoError(t, x.Close())
				got, err := pjrt.ToScalar[int32](ctxT(t), outs[0])
				require.NoError(t, err)
				assert.EqualValues(t, 42, got)
				require.NoError(t, s.Barrier(ctxT(t)))
				assert.Equal(t, []string{"21"}, out.all())
			})
		}
	}
}

// After Stream.Close, Executable.Close and closing what the caller got,
// no buffer of the client is left: the stream's runtime tokens, the
// copies made for other devices, relay tokens and the computations'
// token results are all released. The stream stays usable.
func TestNothingLeaks(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c := openInterpreter(t, 2)
			var out lines
			ordered := printIndex(t, c, &out, Ordered("log"), mode.arrays)
			unordered := printIndex(t, c, &out, Unordered, mode.arrays)
			failing := compileMode(t, c, build(t, func(fb *stablehlo.FuncBuilder) {
				_, err := Callback(fb, HostFunc{Name: "failing", Fn: func([]Array) ([]Array, error) { return nil, errBoom }}, Ordered("log"))
				require.NoError(t, err)
				fb.Return(fb.Arg(0))
			}, i32), mode.arrays)
			devs := c.AddressableDevices()
			s := NewStream()
			for i := 0; i < 20; i++ {
				dev := devs[i%2]
				x := scalar(t, c, int32(i), dev)
				_, err := s.ExecuteOn(dev, ordered, x)
				require.NoError(t, err)
				_, err = s.ExecuteOn(dev, unordered, x)
				require.NoError(t, err)
				res, err := s.ExecuteOn(dev, failing, x)
				require.NoError(t, err)
				require.NoError(t, x.Close())
				require.NoError(t, res[0].Close())
			}
			require.ErrorIs(t, s.Barrier(ctxT(t)), errBoom)
			assert.Len(t, out.all(), 40)
			assert.Positive(t, c.LiveBuffers(), "the stream holds its runtime tokens until Close")
			require.NoError(t, s.Close(ctxT(t)))
			assert.Zero(t, c.LiveBuffers(), "buffers left after Stream.Close")
			// Usable after Close: a new chain.
			x := scalar(t, c, 99, nil)
			_, err := s.Execute(ordered, x)
			require.NoError(t, err)
			require.NoError(t, x.Close())
			require.NoError(t, s.Close(ctxT(t)))
			assert.Equal(t, "99", out.all()[40])
			assert.Zero(t, c.LiveBuffers())
		})
	}
}

// callbackProgramIDs builds a program with an ordered and an unordered
// callback and returns it with their ids in the callback table.
func callbackProgramIDs(t *testing.T, ran *int) (*stablehlo.Module, []int64) {
	m := build(t, func(fb *stablehlo.FuncBuilder) {
		for _, kind := range []Effect{Ordered("log"), Unordered} {
			_, err := Callback(fb, HostFunc{Name: "count", Fn: func([]Array) ([]Array, error) { *ran++; return nil, nil }}, kind)
			require.NoError(t, err)
		}
		fb.Return()
	})
	ids := callbackIDs(m)
	require.Len(t, ids, 2)
	return m, ids
}

func inTable(ids []int64) int {
	n := 0
	for _, id := range ids {
		if lookupFunc(id) != nil {
			n++
		}
	}
	return n
}

// The callback table keeps a callback while a module that calls it is
// reachable or an executable compiled from one is open, then removes it.
func TestCallbackTableLifetime(t *testing.T) {
	c := openInterpreter(t, 1)
	before := tableSize()

	t.Run("executable keeps it", func(t *testing.T) {
		var ran int
		exe, ids := func() (*Executable, []int64) {
			m, ids := callbackProgramIDs(t, &ran)
			return compile(t, c, m), ids
		}()
		assert.False(t, collectN(10, func() bool { return inTable(ids) < 2 }), "the module is gone, the open executable still holds its callbacks")
		s := NewStream()
		_, err := s.Execute(exe)
		require.NoError(t, err)
		require.NoError(t, s.Close(ctxT(t)))
		assert.Equal(t, 2, ran)
		require.NoError(t, exe.Close())
		require.NoError(t, exe.Close(), "Close is idempotent")
		assert.True(t, collectUntil(func() bool { return inTable(ids) == 0 }), "closed and unreachable: removed")
	})
	t.Run("module keeps it", func(t *testing.T) {
		var ran int
		m, ids := callbackProgramIDs(t, &ran)
		exe := compile(t, c, m)
		require.NoError(t, exe.Close())
		runtime.GC()
		assert.Equal(t, 2, inTable(ids), "the module is still reachable")
		// Compiled again after the first executable was closed.
		exe = compile(t, c, m)
		s := NewStream()
		_, err := s.Execute(exe)
		require.NoError(t, err)
		require.NoError(t, s.Close(ctxT(t)))
		assert.Equal(t, 2, ran)
		require.NoError(t, exe.Close())
		runtime.KeepAlive(m)
		assert.True(t, collectUntil(func() bool { return inTable(ids) == 0 }))
	})
	t.Run("lowered module keeps it", func(t *testing.T) {
		var ran int
		l, ids := func() (*Lowered, []int64) {
			m, ids := callbackProgramIDs(t, &ran)
			l, err := Lower(m, LowerOptions{})
			require.NoError(t, err)
			return l, ids
		}()
		assert.False(t, collectN(10, func() bool { return inTable(ids) < 2 }), "the Lowered copy holds them")
		exe, err := CompileLowered(c, l, nil)
		require.NoError(t, err)
		require.NoError(t, exe.Close())
		runtime.KeepAlive(l)
		assert.True(t, collectUntil(func() bool { return inTable(ids) == 0 }))
	})
	t.Run("program calling a removed callback", func(t *testing.T) {
		var text []byte
		func() {
			var ran int
			m, _ := callbackProgramIDs(t, &ran)
			l, err := Lower(m, LowerOptions{})
			require.NoError(t, err)
			text = []byte(printModule(t, l.Module))
		}()
		var err error
		assert.True(t, collectUntil(func() bool {
			m, perr := stablehlo.Parse(text)
			require.NoError(t, perr)
			exe, cerr := CompileLowered(c, &Lowered{Module: m}, nil)
			if cerr == nil {
				require.NoError(t, exe.Close())
			}
			err = cerr
			return err != nil
		}), "the text's callbacks were removed with their modules")
		assert.ErrorContains(t, err, "not in this process's callback table")
	})
	assert.True(t, collectUntil(func() bool { return tableSize() <= before }), "entries left: %d, before %d", tableSize(), before)
}

// Closing a client drops the package's state for it: its token sources
// and every stream's chains and execute context on it.
func TestClientCloseForgetsState(t *testing.T) {
	c, err := pjrt.Open("interpreter")
	require.NoError(t, err)
	var out lines
	exe := printIndex(t, c, &out, Ordered("log"), false)
	s := NewStream()
	x := scalar(t, c, 1, nil)
	_, err = s.Execute(exe, x)
	require.NoError(t, err)
	require.NoError(t, s.Barrier(ctxT(t)))
	has := func() (source, chain, ctx bool) {
		_, source = tokenSources.Load(tokenKey{c, false})
		s.mu.Lock()
		defer s.mu.Unlock()
		for k := range s.chains {
			chain = chain || k.c == c
		}
		_, ctx = s.ctxs[c]
		return
	}
	source, chain, ctx := has()
	require.True(t, source && chain && ctx, "state kept while the client is open")
	require.NoError(t, c.Close())
	source, chain, ctx = has()
	assert.False(t, source, "token source")
	assert.False(t, chain, "chain")
	assert.False(t, ctx, "execute context")
	_, err = s.Execute(exe, x)
	assert.ErrorIs(t, err, pjrt.ErrClosed)
}

// A dispatch racing Executable.Close either fails or runs its callbacks:
// Close waits for dispatches in progress before it reads which
// computations may still call them (a dispatch that returned no error
// once lost its callback: "no callback with id N in this process").
func TestExecutableCloseRacingDispatch(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c := openInterpreter(t, 1)
			var ran, dispatched atomic.Int32
			s := NewStream()
			for i := range 300 {
				exe := func() *Executable { // the module dropped after compiling, as usual
					m := build(t, func(fb *stablehlo.FuncBuilder) {
						_, err := Callback(fb, HostFunc{Name: "n", Fn: func([]Array) ([]Array, error) { ran.Add(1); return nil, nil }}, Ordered("log"), fb.Arg(0))
						require.NoError(t, err)
						fb.Return()
					}, i32)
					return compileMode(t, c, m, mode.arrays)
				}()
				x, fill := late(t, c, nil) // the computation waits for its argument
				var wg sync.WaitGroup
				wg.Add(2)
				go func() {
					defer wg.Done()
					if _, err := s.Execute(exe, x); err == nil {
						dispatched.Add(1)
					}
				}()
				go func() {
					defer wg.Done()
					for st := time.Now(); time.Since(st) < time.Duration(i%40)*5*time.Microsecond; {
					}
					exe.Close()
				}()
				wg.Wait()
				runtime.GC()
				require.NoError(t, fill.Fulfill(scalar(t, c, 1, nil)))
			}
			require.NoError(t, s.Barrier(ctxT(t)))
			assert.Equal(t, dispatched.Load(), ran.Load(), "dispatches that returned no error, and callbacks that ran")
		})
	}
}

// TestCloseDuringCallbackIsNotAnEffectFailure: closing the client while a
// callback of its computation runs cuts the computation short, which
// Barrier and BarrierAll do not report (the interpreter's Cancelled error
// once reached every later BarrierAll; found in review).
func TestCloseDuringCallbackIsNotAnEffectFailure(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			drainBarrierAll(t)
			c, err := pjrt.Open("interpreter")
			require.NoError(t, err)
			started, release := make(chan struct{}), make(chan struct{})
			b := stablehlo.NewBuilder("m")
			fb := b.NewFunction("main")
			var once sync.Once
			_, err = Callback(fb, HostFunc{Name: "blocks", Fn: func([]Array) ([]Array, error) {
				once.Do(func() { close(started) })
				<-release
				return nil, nil
			}}, Ordered("log"))
			require.NoError(t, err)
			fb.Return()
			m, err := b.Build()
			require.NoError(t, err)
			exe := compileMode(t, c, m, mode.arrays)
			func() { // a stream dropped with its computation pending
				_, err := NewStream().Execute(exe)
				require.NoError(t, err)
			}()
			s := NewStream()
			_, err = s.Execute(exe)
			require.NoError(t, err)
			<-started
			require.NoError(t, c.Close())
			close(release)
			assert.NoError(t, s.Barrier(ctxT(t)))
			for range 3 {
				runtime.GC() // the dropped stream hands its errors on
			}
			assert.NoError(t, BarrierAll(ctxT(t)))
		})
	}
}

// TestCloseWithEndedContextReleases: a Close whose context has ended after
// the stream's effects finished still releases the stream's runtime
// tokens (it returned nil and kept them); a nil Executable's PJRT is nil.
func TestCloseWithEndedContextReleases(t *testing.T) {
	assert.Nil(t, (*Executable)(nil).PJRT())
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c := openInterpreter(t, 1)
			b := stablehlo.NewBuilder("m")
			fb := b.NewFunction("main")
			_, err := Callback(fb, HostFunc{Name: "noop", Fn: func([]Array) ([]Array, error) { return nil, nil }}, Ordered("log"))
			require.NoError(t, err)
			fb.Return()
			m, err := b.Build()
			require.NoError(t, err)
			exe := compileMode(t, c, m, mode.arrays)
			s := NewStream()
			_, err = s.Execute(exe)
			require.NoError(t, err)
			require.NoError(t, s.Barrier(ctxT(t)))
			require.NotZero(t, c.LiveBuffers(), "the stream holds its token")
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			// With relays (token arrays) the relay may still be handing
			// its token on after Barrier: Close then returns ctx's error
			// and releases nothing, and a later Close releases.
			deadline := time.Now().Add(30 * time.Second) // a hang detector, not a timing
			for err = s.Close(ended); err != nil; err = s.Close(ended) {
				require.ErrorIs(t, err, context.Canceled)
				require.True(t, mode.arrays, "without relays the effects are all done after Barrier")
				require.True(t, time.Now().Before(deadline), "the relay never finished")
				time.Sleep(time.Millisecond)
			}
			assert.Zero(t, c.LiveBuffers(), "released")
		})
	}
}
