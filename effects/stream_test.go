package effects

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// callbackProgram builds a program whose callback (of kind) runs fn.
func callbackProgram(t testing.TB, kind Effect, name string, fn func() error) *stablehlo.Module {
	return build(t, func(fb *stablehlo.FuncBuilder) {
		_, err := Callback(fb, HostFunc{Name: name, Fn: func([]Array) ([]Array, error) { return nil, fn() }}, kind)
		require.NoError(t, err)
		fb.Return()
	})
}

// Two goroutines with their own streams: stream A's callback waits until
// stream B's Barrier has returned, so B's Barrier must not wait for A.
func TestStreamsDoNotWaitForEachOther(t *testing.T) {
	for _, kind := range []Effect{Ordered("log"), Unordered} {
		t.Run(kind.String(), func(t *testing.T) {
			c := openInterpreter(t, 1)
			bDone := make(chan struct{})
			var aRan atomic.Bool
			exeA := compile(t, c, callbackProgram(t, kind, "a", func() error {
				<-bDone
				aRan.Store(true)
				return nil
			}))
			var bRan atomic.Int32
			exeB := compile(t, c, callbackProgram(t, kind, "b", func() error { bRan.Add(1); return nil }))
			sA, sB := NewStream(), NewStream()
			_, err := sA.Execute(exeA)
			require.NoError(t, err)
			errB := make(chan error, 1)
			go func() {
				defer close(bDone)
				for i := 0; i < 3; i++ {
					if _, err := sB.Execute(exeB); err != nil {
						errB <- err
						return
					}
				}
				errB <- sB.Barrier(ctxT(t))
			}()
			require.NoError(t, <-errB, "stream B's Barrier returned while A's callback was blocked")
			assert.EqualValues(t, 3, bRan.Load())
			require.NoError(t, sA.Barrier(ctxT(t)))
			assert.True(t, aRan.Load())
		})
	}
}

// Barrier waits for computations that have effects but no outputs, and
// BarrierAll for those of every stream.
func TestBarrierWaitsForEffectsWithoutOutputs(t *testing.T) {
	for _, tc := range []struct {
		kind    Effect
		barrier func(*Stream) error
	}{
		{Ordered("log"), func(s *Stream) error { return s.Barrier(ctxT(t)) }},
		{Unordered, func(s *Stream) error { return s.Barrier(ctxT(t)) }},
		{Ordered("log"), func(*Stream) error { return BarrierAll(ctxT(t)) }},
		{Unordered, func(*Stream) error { return BarrierAll(ctxT(t)) }},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			drainBarrierAll(t)
			c := openInterpreter(t, 1)
			gate := make(chan struct{})
			var done atomic.Int32
			exe := compile(t, c, callbackProgram(t, tc.kind, "slow", func() error {
				<-gate
				done.Add(1)
				return nil
			}))
			s := NewStream()
			for i := 0; i < 2; i++ {
				outs, err := s.Execute(exe)
				require.NoError(t, err)
				require.Empty(t, outs, "nothing to wait on but the effect")
			}
			assert.EqualValues(t, 0, done.Load(), "dispatch returned before the callbacks ran")
			close(gate)
			require.NoError(t, tc.barrier(s))
			assert.EqualValues(t, 2, done.Load(), "Barrier returned before the callbacks finished")
		})
	}
}

var errBoom = errors.New("boom")

// drainBarrierAll takes what earlier tests left for BarrierAll (errors of
// their streams, collected or not), so that a test's own BarrierAll
// reports its own streams.
func drainBarrierAll(t *testing.T) {
	t.Helper()
	for range 3 {
		runtime.GC() // collected streams hand their errors on
	}
	_ = BarrierAll(ctxT(t))
}

// A callback that returns an error or panics fails its computation (the
// error names the callback); Barrier returns it once; the next
// computation still runs, in order.
func TestCallbackFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  Effect
		fn    func() error
		check func(t *testing.T, err error)
	}{
		{"error", Ordered("log"), func() error { return errBoom }, func(t *testing.T, err error) {
			assert.ErrorIs(t, err, errBoom)
		}},
		{"panic", Ordered("log"), func() error { panic("kaput") }, func(t *testing.T, err error) {
			var p *PanicError
			require.ErrorAs(t, err, &p)
			assert.Equal(t, "kaput", p.Value)
		}},
		{"unordered error", Unordered, func() error { return errBoom }, func(t *testing.T, err error) {
			assert.ErrorIs(t, err, errBoom)
		}},
		// runtime.Goexit (t.FailNow inside a callback) once left its
		// computation unfinished forever.
		{"goexit", Ordered("log"), func() error { runtime.Goexit(); return nil }, func(t *testing.T, err error) {
			var p *PanicError
			require.ErrorAs(t, err, &p)
			assert.Equal(t, "the callback called runtime.Goexit", p.Value)
		}},
	} {
		for _, mode := range tokenModes {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				testCallbackFailure(t, tc.kind, tc.fn, tc.check, mode.arrays)
			})
		}
	}
}

// testCallbackFailure runs one case of TestCallbackFailure with token
// buffers or token arrays.
func testCallbackFailure(t *testing.T, kind Effect, fn func() error, check func(t *testing.T, err error), arrays bool) {
	c := openInterpreter(t, 2)
	var out lines
	bad := compileMode(t, c, build(t, func(fb *stablehlo.FuncBuilder) {
		require.NoError(t, Fprint(fb, &out, kind, "before"))
		_, err := Callback(fb, HostFunc{Name: "failing", Fn: func([]Array) ([]Array, error) { return nil, fn() }}, kind)
		require.NoError(t, err)
		fb.Return(fb.ScalarOf(xla.Float32, 1))
	}), arrays)
	after := printIndex(t, c, &out, kind, arrays)
	devs := c.AddressableDevices()
	s := NewStream()
	outs, err := s.ExecuteOn(devs[0], bad)
	require.NoError(t, err, "dispatch does not wait for the callback")
	_, err = s.ExecuteOn(devs[1], after, scalar(t, c, 7, devs[1]))
	require.NoError(t, err)
	err = outs[0].Await(ctxT(t))
	require.Error(t, err, "the computation fails")
	assert.Contains(t, err.Error(), `callback "failing"`)
	err = s.Barrier(ctxT(t))
	var cerr *CallbackError
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, "failing", cerr.Callback)
	check(t, err)
	if kind.IsOrdered() {
		assert.Equal(t, []string{"before", "7"}, out.all(), "the next computation ran after the failed one")
	} else {
		assert.ElementsMatch(t, []string{"before", "7"}, out.all())
	}
	require.NoError(t, s.Barrier(ctxT(t)), "Barrier cleared the error")
	// The chain still works.
	_, err = s.ExecuteOn(devs[0], after, scalar(t, c, 8, devs[0]))
	require.NoError(t, err)
	require.NoError(t, s.Barrier(ctxT(t)))
	assert.Equal(t, "8", out.all()[2])
}

// Callbacks return values to the program: typed operands and results.
func TestCallbackResults(t *testing.T) {
	c := openInterpreter(t, 1)
	scale := HostFunc{
		Name:    "scale",
		Results: []xla.Shape{xla.MakeShape(xla.Float32, 3), xla.MakeShape(xla.Int64)},
		Fn: func(args []Array) ([]Array, error) {
			x, err := Values[float32](args[0])
			if err != nil {
				return nil, err
			}
			k, err := Values[int32](args[1])
			if err != nil {
				return nil, err
			}
			for i := range x {
				x[i] *= float32(k[0])
			}
			a, err := ArrayOf(x, 3)
			if err != nil {
				return nil, err
			}
			n, err := ArrayOf([]int64{int64(len(x))})
			return []Array{a, n}, err
		},
	}
	for _, kind := range []Effect{Ordered("math"), Unordered} {
		t.Run(kind.String(), func(t *testing.T) {
			m := build(t, func(fb *stablehlo.FuncBuilder) {
				res, err := Callback(fb, scale, kind, fb.Arg(0), fb.Arg(1))
				require.NoError(t, err)
				require.Len(t, res, 2)
				fb.Return(fb.Add(res[0], fb.Arg(0)), res[1])
			}, stablehlo.Tensor(xla.Float32, 3), i32)
			exe := compile(t, c, m)
			x, err := pjrt.BufferFrom(c, []float32{1, 2, 3}, []int64{3}, pjrt.CopyDuringCall())
			require.NoError(t, err)
			outs, err := Execute(exe, x, scalar(t, c, 10, nil))
			require.NoError(t, err)
			require.Len(t, outs, 2)
			got, err := pjrt.ToSlice[float32](ctxT(t), outs[0])
			require.NoError(t, err)
			assert.Equal(t, []float32{11, 22, 33}, got)
			n, err := pjrt.ToScalar[int64](ctxT(t), outs[1])
			require.NoError(t, err)
			assert.EqualValues(t, 3, n)
			require.NoError(t, Barrier(ctxT(t)))
		})
	}
}

// A callback that returns the wrong results fails its computation with an
// error that says what was wrong.
func TestCallbackBadResults(t *testing.T) {
	c := openInterpreter(t, 1)
	for _, tc := range []struct {
		name string
		ret  func() []Array
		want string
	}{
		{"too few", func() []Array { return nil }, "returned 0 arrays for 1 results"},
		{"wrong shape", func() []Array {
			a, _ := ArrayOf([]float32{1, 2}, 2)
			return []Array{a}
		}, "result 0 is tensor<2xf32>, want tensor<3xf32>"},
		{"short data", func() []Array {
			return []Array{{DType: xla.Float32, Dims: []int64{3}, Data: make([]byte, 4)}}
		}, "has 4 data bytes, want 12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := build(t, func(fb *stablehlo.FuncBuilder) {
				res, err := Callback(fb, HostFunc{Name: tc.name, Results: []xla.Shape{xla.MakeShape(xla.Float32, 3)},
					Fn: func([]Array) ([]Array, error) { return tc.ret(), nil }}, Unordered)
				require.NoError(t, err)
				fb.Return(res...)
			})
			s := NewStream()
			outs, err := s.Execute(compile(t, c, m))
			require.NoError(t, err)
			err = outs[0].Await(ctxT(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.ErrorContains(t, s.Barrier(ctxT(t)), tc.want)
		})
	}
}

// Bad input to Callback is an error naming the problem.
func TestCallbackBadInput(t *testing.T) {
	ok := func([]Array) ([]Array, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		f    HostFunc
		kind Effect
		tok  bool
		want string
	}{
		{"no fn", HostFunc{Name: "x"}, Unordered, false, "has no Fn"},
		{"unnamed ordered", HostFunc{Name: "x", Fn: ok}, Ordered(""), false, "needs a name"},
		{"bad result", HostFunc{Name: "x", Fn: ok, Results: []xla.Shape{{DType: xla.Float32, Dims: []int64{-2}}}}, Unordered, false, "result 0"},
		{"token operand", HostFunc{Name: "x", Fn: ok}, Unordered, true, "callbacks take tensors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := stablehlo.NewBuilder("m")
			fb := b.NewFunction("main")
			var ops []*stablehlo.Value
			if tc.tok {
				ops = append(ops, fb.CreateToken())
			}
			_, err := Callback(fb, tc.f, tc.kind, ops...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			// One package prefix, and the operands' types.
			assert.NotContains(t, err.Error(), "effects: ")
			if tc.tok {
				assert.Contains(t, err.Error(), "stablehlo: effects.callback(!stablehlo.token) at stream_test.go:")
			} else {
				assert.Contains(t, err.Error(), "stablehlo: effects.callback() at stream_test.go:")
			}
			// The builder records it: Build fails even where the caller
			// drops Callback's error.
			fb.Return()
			_, berr := b.Build()
			require.Error(t, berr)
			assert.Equal(t, err, berr)
			var be *stablehlo.BuildError
			require.ErrorAs(t, berr, &be)
			assert.Equal(t, "effects.callback", be.Op)
		})
	}
	for _, fb := range []*stablehlo.FuncBuilder{nil, {}} {
		_, err := Callback(fb, HostFunc{Fn: ok}, Unordered)
		assert.EqualError(t, err, "effects: Callback: nil FuncBuilder")
		assert.EqualError(t, Print(fb, "%v"), "effects: Callback: nil FuncBuilder")
	}
}

// TestCallbackFailureReportedOnce: a callback failure is reported by one
// Barrier, also when its computation was dispatched while an earlier
// Barrier waited (that Barrier returned the *CallbackError; the next one
// returned the computation's failure, the same one, again; found in
// review).
func TestCallbackFailureReportedOnce(t *testing.T) {
	// An ordered failing callback too: with relays (token arrays) its
	// computation's failure reached the stream twice, from the relay and
	// from the completion event (found in review).
	for _, kind := range []Effect{Unordered, Ordered("log")} {
		for _, mode := range tokenModes {
			t.Run(fmt.Sprintf("%v/%s", kind, mode.name), func(t *testing.T) {
				drainBarrierAll(t)
				c := openInterpreter(t, 1)
				release, failed := make(chan struct{}), make(chan struct{})
				build := func(name string, kind Effect, fn func([]Array) ([]Array, error)) *Executable {
					b := stablehlo.NewBuilder(name)
					fb := b.NewFunction("main")
					_, err := Callback(fb, HostFunc{Name: name, Fn: fn}, kind)
					require.NoError(t, err)
					fb.Return()
					m, err := b.Build()
					require.NoError(t, err)
					return compileMode(t, c, m, mode.arrays)
				}
				slow := build("slow", Unordered, func([]Array) ([]Array, error) { <-release; return nil, nil })
				fail := build("fail", kind, func([]Array) ([]Array, error) { close(failed); return nil, errors.New("boom") })
				s := NewStream()
				_, err := s.Execute(slow)
				require.NoError(t, err)
				first := make(chan error, 1)
				go func() { first <- s.Barrier(ctxT(t)) }()
				time.Sleep(50 * time.Millisecond) // the Barrier takes its list first (ordering, not timing: either way one report)
				_, err = s.Execute(fail)
				require.NoError(t, err)
				<-failed
				// The callback's error is recorded once its function has
				// returned: wait for that before the Barrier may return.
				require.Eventually(t, func() bool {
					s.errs.mu.Lock()
					defer s.errs.mu.Unlock()
					return s.errs.err != nil
				}, 10*time.Second, time.Millisecond)
				close(release)
				var cerr *CallbackError
				require.ErrorAs(t, <-first, &cerr)
				assert.Equal(t, "fail", cerr.Callback)
				assert.NoError(t, s.Barrier(ctxT(t)), "reported once")
			})
		}
	}
}

// A callback that calls Barrier or Close on its own stream would wait for
// the computation running it, so for itself: each is an error at once
// (each hung until its context ended: review), on an asynchronous backend
// and on one that runs the computation, callbacks included, inside
// Execute. Another stream's Barrier from the callback is fine.
func TestBarrierFromOwnCallback(t *testing.T) {
	for name, open := range map[string]func(*testing.T) *pjrt.Client{
		"interpreter": func(t *testing.T) *pjrt.Client { return openInterpreter(t, 1) },
		"synchronous": openSync,
	} {
		t.Run(name, func(t *testing.T) {
			c := open(t)
			s, other := NewStream(), NewStream()
			var barrierErr, closeErr, allErr, otherErr error
			exe := compile(t, c, callbackProgram(t, Ordered("log"), "waits", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				barrierErr = s.Barrier(ctx)
				closeErr = s.Close(ctx)
				allErr = BarrierAll(ctx)
				otherErr = other.Barrier(ctx)
				return nil
			}))
			_, err := s.Execute(exe)
			require.NoError(t, err)
			require.NoError(t, s.Barrier(ctxT(t)))
			for _, c := range []struct {
				err  error
				want string
			}{{barrierErr, "effects: Barrier called by"}, {closeErr, "effects: Close called by"}, {allErr, "effects: BarrierAll called by"}} {
				require.Error(t, c.err, c.want)
				assert.Contains(t, c.err.Error(), c.want+" a callback of a computation of this stream")
			}
			assert.NoError(t, otherErr)
			// Outside the callback, the same calls work.
			require.NoError(t, s.Close(ctxT(t)))
		})
	}
}
