package effects

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/xla"
)

// TestConcurrentDispatchesOnOneStream dispatches ordered prints onto one
// stream from four goroutines: every print happens, each goroutine's in
// its own order, and Barrier returns (in relay mode a later dispatch that
// queued its relay first once deadlocked the chain).
func TestConcurrentDispatchesOnOneStream(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c, out, exe, s := printSetup(t, mode.arrays)
			const goroutines, calls = 4, 100
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range calls {
						x := scalar(t, c, int32(g*calls+i), nil)
						_, err := s.Execute(exe, x)
						assert.NoError(t, err)
						x.Close()
					}
				}()
			}
			wg.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, s.Barrier(ctx))
			got := out.all()
			require.Len(t, got, goroutines*calls)
			last := map[int]int{}
			for _, line := range got {
				v, err := strconv.Atoi(line)
				require.NoError(t, err)
				g, i := v/calls, v%calls
				if prev, ok := last[g]; ok {
					require.Greater(t, i, prev, "goroutine %d's prints out of order", g)
				}
				last[g] = i
			}
		})
	}
}

// TestCloseWhileDispatching closes a stream while another goroutine
// dispatches onto it: no panic, and a Barrier after both have finished
// has waited for every print.
func TestCloseWhileDispatching(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c, out, exe, s := printSetup(t, mode.arrays)
			const calls = 300
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 20 {
					assert.NoError(t, s.Close(ctx))
				}
			}()
			for i := range calls {
				x := scalar(t, c, int32(i), nil)
				_, err := s.Execute(exe, x)
				require.NoError(t, err)
				x.Close()
			}
			<-done
			require.NoError(t, s.Barrier(ctx))
			assert.Len(t, out.all(), calls)
		})
	}
}

// TestCloseKeepsCallbacksOfQueuedRuns closes an executable while its
// computation waits for an argument: once the argument comes, the run
// still prints (its callback was once dropped from the table, and Barrier
// reported a missing callback).
func TestCloseKeepsCallbacksOfQueuedRuns(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c, out, exe, s := printSetup(t, mode.arrays)
			x, fill := late(t, c, nil)
			_, err := s.Execute(exe, x)
			require.NoError(t, err)
			require.NoError(t, exe.Close())
			for range 5 {
				runtime.GC()
			}
			require.NoError(t, fill.Fulfill(scalar(t, c, 42, nil)))
			require.NoError(t, s.Barrier(ctxT(t)))
			assert.Equal(t, []string{"42"}, out.all())
		})
	}
}

// TestNilAndZeroValues uses nil and zero values where a caller might:
// each is an error naming the problem, not a panic.
func TestNilAndZeroValues(t *testing.T) {
	c := openInterpreter(t, 1)
	var out lines
	exe := printIndex(t, c, &out, Ordered("log"), false)
	x := scalar(t, c, 1, nil)
	var zero Stream
	_, err := zero.Execute(exe, x)
	assert.ErrorContains(t, err, "not made by NewStream")
	assert.ErrorContains(t, zero.Barrier(context.Background()), "not made by NewStream")
	var nilStream *Stream
	_, err = nilStream.Execute(exe, x)
	assert.ErrorContains(t, err, "nil Stream")
	assert.ErrorContains(t, nilStream.Barrier(context.Background()), "nil Stream")
	assert.ErrorContains(t, nilStream.Close(context.Background()), "nil Stream")
	s := NewStream()
	_, err = s.Execute(exe, x)
	require.NoError(t, err)
	// A nil context, on purpose.
	assert.ErrorContains(t, s.Barrier(nil), "nil context")
	require.NoError(t, s.Barrier(ctxT(t)))
	var nilExe *Executable
	assert.Error(t, nilExe.Close())
	assert.Nil(t, nilExe.Ordered())
	assert.Error(t, (&Executable{}).Close())
	assert.False(t, TokenArraysFor(nil))
	_, err = OperandBytes(nil, 0)
	assert.Error(t, err)
	big := Array{DType: xla.Int32, Dims: []int64{1 << 32, 1 << 32}}
	assert.Contains(t, big.String(), "array with 0 data bytes")
	_, err = Values[int32](Array{DType: xla.Int32, Dims: []int64{-2, -2}, Data: make([]byte, 16)})
	assert.ErrorContains(t, err, "negative dimension")
}

// TestExecuteNamesArgumentsWithoutTokens gives Execute a nil, a missing
// and a mistyped argument: the errors number the program's own arguments
// (they once counted the hidden runtime tokens).
func TestExecuteNamesArgumentsWithoutTokens(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c, out, exe, s := printSetup(t, mode.arrays)
			_, err := s.Execute(exe, nil)
			assert.ErrorContains(t, err, "argument 0 is nil")
			_, err = s.Execute(exe)
			assert.ErrorContains(t, err, "the program takes 1 arguments, got 0")
			f, err := pjrt.ScalarBuffer(c, float32(1))
			require.NoError(t, err)
			_, err = s.Execute(exe, f)
			assert.ErrorContains(t, err, "argument 0 is tensor<f32>, the program takes tensor<i32>")
			require.NoError(t, s.Barrier(ctxT(t)))
			assert.Empty(t, out.all())
		})
	}
}

// TestExecuteNamesBackendRefusalsWithoutTokens: arguments the backend
// would refuse (on another client, another device, deleted, closed) are
// refused first, numbered as the program's own arguments (the backend's
// errors counted the tokens: "argument 1 of device 0" for the only one).
func TestExecuteNamesBackendRefusalsWithoutTokens(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c := openInterpreter(t, 2)
			out := &lines{}
			exe := printIndex(t, c, out, Ordered("log"), mode.arrays)
			s := NewStream()
			devs := c.AddressableDevices()
			other := openInterpreter(t, 1)
			x, err := pjrt.ScalarBuffer(other, int32(1))
			require.NoError(t, err)
			_, err = s.Execute(exe, x)
			assert.ErrorContains(t, err, "argument 0 belongs to another client")
			y, err := pjrt.ScalarBuffer(c, int32(2))
			require.NoError(t, err)
			_, err = s.ExecuteOn(devs[1], exe, y)
			assert.ErrorContains(t, err, "argument 0 is on device 0, the computation runs on device 1")
			z, err := pjrt.ScalarBuffer(c, int32(3))
			require.NoError(t, err)
			require.NoError(t, z.Delete())
			_, err = s.Execute(exe, z)
			assert.ErrorContains(t, err, "argument 0 was deleted")
			w, err := pjrt.ScalarBuffer(c, int32(4))
			require.NoError(t, err)
			require.NoError(t, w.Close())
			_, err = s.Execute(exe, w)
			assert.ErrorContains(t, err, "argument 0: ")
			assert.ErrorIs(t, err, pjrt.ErrClosed)
			_, err = s.Execute(exe, y)
			require.NoError(t, err)
			require.NoError(t, s.Barrier(ctxT(t)))
			assert.Equal(t, []string{"2"}, out.all())
		})
	}
}

// printSetup opens a one-device interpreter client and compiles an
// ordered print of an i32 argument into out (with token arrays when
// arrays is set), with a new stream.
func printSetup(t *testing.T, arrays bool) (*pjrt.Client, *lines, *Executable, *Stream) {
	c := openInterpreter(t, 1)
	out := &lines{}
	return c, out, printIndex(t, c, out, Ordered("log"), arrays), NewStream()
}
