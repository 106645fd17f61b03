package effects

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
)

// A goroutine makes its own stream, dispatches a computation whose
// callback cannot run yet (its argument is not ready), and drops the
// stream without a Barrier: BarrierAll still waits for that effect and
// reports its callback's error (the collected stream had left the
// registry: BarrierAll returned at once and the error was lost).
func TestBarrierAllWaitsForDroppedStream(t *testing.T) {
	for _, mode := range tokenModes {
		for _, kind := range []Effect{Ordered("log"), Unordered} {
			t.Run(mode.name+"/"+kind.String(), func(t *testing.T) {
				drainBarrierAll(t)
				c := openInterpreter(t, 1)
				d := dispatchOnDroppedStream(t, c, kind, mode.arrays)
				exe, fill, ran, id := d.exe, d.fill, &d.ran, d.id
				collected := collectN(50, func() bool { return lookupStream(id) == nil })
				t.Logf("stream collected while its computation is pending: %v", collected)
				done := make(chan error, 1)
				go func() { done <- BarrierAll(ctxT(t)) }()
				var barrierErr error
				returnedEarly := false
				select {
				case barrierErr = <-done:
					returnedEarly = true
				case <-time.After(300 * time.Millisecond):
				}
				require.NoError(t, fill.Fulfill(scalar(t, c, 1, nil)))
				if !returnedEarly {
					barrierErr = <-done
				}
				for i := 0; i < 100 && ran.Load() == 0; i++ {
					time.Sleep(5 * time.Millisecond)
				}
				runtime.KeepAlive(exe)
				assert.False(t, returnedEarly, "BarrierAll returned (%v) before the dropped stream's callback ran", barrierErr)
				assert.ErrorIs(t, barrierErr, errBoom, "BarrierAll did not report the dropped stream's callback error")
			})
		}
	}
}

// An Executable dropped without Close (its client closed, everything
// unreachable) gives its callbacks up when collected (they stayed in the
// process's table for ever, pinning what the Go functions capture).
func TestDroppedExecutableGivesUpCallbacks(t *testing.T) {
	before := tableSize()
	func() {
		c, err := pjrt.Open("interpreter")
		require.NoError(t, err)
		for range 10 {
			big := make([]byte, 1<<20)
			exe := compile(t, c, callbackProgram(t, Ordered("log"), "x", func() error { _ = big; return nil }))
			s := NewStream()
			_, err := s.Execute(exe)
			require.NoError(t, err)
			require.NoError(t, s.Close(ctxT(t)))
		}
		require.NoError(t, c.Close())
	}()
	ok := collectUntil(func() bool { return tableSize() <= before })
	assert.True(t, ok, "callback table entries left after dropping executables and closing their client: %d (before %d)", tableSize(), before)
}

// A stream dropped with a failing callback in flight, its work finished
// and the stream collected before BarrierAll: BarrierAll still reports the
// error (the collected stream took it along).
func TestBarrierAllReportsCollectedStreamsErrors(t *testing.T) {
	drainBarrierAll(t)
	c := openInterpreter(t, 1)
	d := dispatchOnDroppedStream(t, c, Unordered, false)
	d.run(t, c)
	require.True(t, collectN(200, func() bool { return lookupStream(d.id) == nil }), "the stream is collected once its work is done")
	assert.ErrorIs(t, BarrierAll(ctxT(t)), errBoom)
	runtime.KeepAlive(d.exe)
}

// A BarrierAll whose context ends while a live stream's work waits keeps
// the collected streams' errors for the next one (it cleared them, and the
// next BarrierAll reported nothing; found in review).
func TestBarrierAllTimeoutKeepsCollectedStreamsErrors(t *testing.T) {
	drainBarrierAll(t)
	c := openInterpreter(t, 1)
	d := dispatchOnDroppedStream(t, c, Unordered, false)
	d.run(t, c)
	require.True(t, collectN(200, func() bool { return lookupStream(d.id) == nil }))
	// A live stream with a computation waiting for its argument.
	var out lines
	exe := printIndex(t, c, &out, Ordered("log"), false)
	s := NewStream()
	x, fill := late(t, c, nil)
	_, err := s.Execute(exe, x)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, BarrierAll(ctx), context.DeadlineExceeded)
	require.NoError(t, fill.Fulfill(scalar(t, c, 1, nil)))
	assert.ErrorIs(t, BarrierAll(ctxT(t)), errBoom)
	assert.NoError(t, BarrierAll(ctxT(t)), "reported once")
	runtime.KeepAlive(d.exe)
	runtime.KeepAlive(s)
}

// A stream collected whose cleanup has not run yet (cleanups run one at a
// time, here held by another one): BarrierAll reports its error, once (its
// weak pointer was nil and the error not yet handed on, so BarrierAll
// returned nil and a later one the error; found in review).
func TestBarrierAllReportsStreamsBeingCollected(t *testing.T) {
	drainBarrierAll(t)
	c := openInterpreter(t, 1)
	d := dispatchOnDroppedStream(t, c, Unordered, false)
	d.run(t, c)
	block, blocking := make(chan struct{}), make(chan struct{})
	func() {
		x := new([64]byte)
		runtime.AddCleanup(x, func(int) { close(blocking); <-block }, 0)
	}()
	require.Eventually(t, func() bool {
		runtime.GC()
		select {
		case <-blocking:
			return true
		default:
			return false
		}
	}, 10*time.Second, 10*time.Millisecond, "the cleanup goroutine is held")
	require.True(t, collectN(200, func() bool { return lookupStream(d.id) == nil }))
	err := BarrierAll(ctxT(t))
	close(block)
	assert.ErrorIs(t, err, errBoom)
	for range 5 { // the stream's cleanup runs: it finds nothing left to hand on
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	assert.NoError(t, BarrierAll(ctxT(t)), "reported once")
	runtime.KeepAlive(d.exe)
}

// An Executable dropped without Close whose compiled program (PJRT) is
// kept: the program still runs its callbacks (they were given up with
// the wrapper).
func TestKeptPJRTExecutableKeepsCallbacks(t *testing.T) {
	c := openInterpreter(t, 1)
	var ran atomic.Int32
	var pj *pjrt.Executable
	func() {
		exe := compile(t, c, callbackProgram(t, Unordered, "x", func() error { ran.Add(1); return nil }))
		pj = exe.PJRT()
	}()
	for range 20 {
		runtime.GC()
	}
	x, err := pj.Execute([][]*pjrt.Buffer{{}}, pjrt.ExecuteOptions{CompletionEvents: true})
	require.NoError(t, err)
	require.NoError(t, x.Completion[0].Await(ctxT(t)))
	assert.EqualValues(t, 1, ran.Load())
	runtime.KeepAlive(pj)
}

// run gives the computation its argument and waits for its callback.
func (d *droppedDispatch) run(t *testing.T, c *pjrt.Client) {
	t.Helper()
	require.NoError(t, d.fill.Fulfill(scalar(t, c, 1, nil)))
	for d.ran.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
}

// droppedDispatch is a computation dispatched on a stream its goroutine
// dropped: its callback (of kind) fails with errBoom once fill gives the
// computation its argument.
type droppedDispatch struct {
	exe  *Executable
	fill *pjrt.AliasFulfillment
	ran  atomic.Int32 // callbacks run
	id   uintptr      // the stream's registry id
}

func dispatchOnDroppedStream(t *testing.T, c *pjrt.Client, kind Effect, arrays bool) *droppedDispatch {
	t.Helper()
	d := &droppedDispatch{}
	m := build(t, func(fb *stablehlo.FuncBuilder) {
		_, err := Callback(fb, HostFunc{Name: "late", Fn: func([]Array) ([]Array, error) {
			d.ran.Add(1)
			return nil, errBoom
		}}, kind, fb.Arg(0))
		require.NoError(t, err)
		fb.Return()
	}, i32)
	d.exe = compileMode(t, c, m, arrays)
	x, fill := late(t, c, nil)
	d.fill = fill
	func() {
		s := NewStream()
		d.id = s.id
		_, err := s.Execute(d.exe, x)
		require.NoError(t, err)
	}()
	return d
}
