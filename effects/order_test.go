package effects

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
)

// Inside one computation, "hello" comes before "world" in every run.
func TestOrderInsideComputation(t *testing.T) {
	c := openInterpreter(t, 1)
	var out lines
	m := build(t, func(fb *stablehlo.FuncBuilder) {
		require.NoError(t, Fprint(fb, &out, PrintEffect, "hello"))
		require.NoError(t, Fprint(fb, &out, PrintEffect, "world"))
		fb.Return()
	})
	exe := compile(t, c, m)
	s := NewStream()
	const runs = 10000
	for i := 0; i < runs; i++ {
		outs, err := s.Execute(exe)
		require.NoError(t, err)
		require.Empty(t, outs)
	}
	require.NoError(t, s.Barrier(ctxT(t)))
	got := out.all()
	require.Len(t, got, 2*runs)
	for i := 0; i < runs; i++ {
		if got[2*i] != "hello" || got[2*i+1] != "world" {
			t.Fatalf("run %d printed %q, %q", i, got[2*i], got[2*i+1])
		}
	}
}

// printIndex builds a program that prints its i32 argument under kind
// (with token arrays when arrays is set, see compileMode).
func printIndex(t testing.TB, c *pjrt.Client, w *lines, kind Effect, arrays bool) *Executable {
	m := build(t, func(fb *stablehlo.FuncBuilder) {
		require.NoError(t, Fprint(fb, w, kind, "%v", fb.Arg(0)))
		fb.Return()
	}, i32)
	return compileMode(t, c, m, arrays)
}

// 1,000 ordered prints alternating between two devices come out in call
// order, although each call is dispatched without waiting.
func TestOrderAcrossDevices(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			c := openInterpreter(t, 2)
			var out lines
			exe := printIndex(t, c, &out, Ordered("log"), mode.arrays)
			devs := c.AddressableDevices()
			s := NewStream()
			const calls = 1000
			want := make([]string, calls)
			for i := 0; i < calls; i++ {
				x := scalar(t, c, int32(i), devs[i%2])
				_, err := s.ExecuteOn(devs[i%2], exe, x)
				require.NoError(t, err)
				require.NoError(t, x.Close(), "the argument may be closed once dispatched")
				want[i] = strconv.Itoa(i)
			}
			require.NoError(t, s.Barrier(ctxT(t)))
			assert.Equal(t, want, out.all())
		})
	}
}

// The first call waits for an argument that is not ready; the second call,
// on the other device, is ready. Unordered, the second prints first (its
// print is awaited before the first's argument is given); ordered, the
// second waits for the first.
func TestOrderedVersusUnordered(t *testing.T) {
	for _, tc := range []struct {
		kind   Effect
		arrays bool
		want   []string
	}{
		{Unordered, false, []string{"1", "0"}},
		{Ordered("log"), false, []string{"0", "1"}},
		{Ordered("log"), true, []string{"0", "1"}},
	} {
		t.Run(fmt.Sprintf("%v/arrays=%v", tc.kind, tc.arrays), func(t *testing.T) {
			c := openInterpreter(t, 2)
			out := lines{notify: make(chan string, 2)}
			exe := printIndex(t, c, &out, tc.kind, tc.arrays)
			devs := c.AddressableDevices()
			pending, fill := late(t, c, devs[0])
			x1 := scalar(t, c, 1, devs[1])
			x0 := scalar(t, c, 0, devs[0])
			s := NewStream()
			_, err := s.ExecuteOn(devs[0], exe, pending)
			require.NoError(t, err, "dispatch does not wait for the argument")
			_, err = s.ExecuteOn(devs[1], exe, x1)
			require.NoError(t, err, "dispatch does not wait for the earlier call")
			if !tc.kind.IsOrdered() {
				select {
				case got := <-out.notify:
					assert.Equal(t, "1", got, "the ready call runs while the other waits")
				case <-ctxT(t).Done():
					t.Fatal("the unordered call waited for the earlier one")
				}
			}
			require.NoError(t, fill.Fulfill(x0))
			require.NoError(t, s.Barrier(ctxT(t)))
			assert.Equal(t, tc.want, out.all())
		})
	}
}

// Different ordered effects are different chains: a computation of
// effect "b" does not wait for a pending computation of effect "a".
func TestEffectsAreIndependentChains(t *testing.T) {
	c := openInterpreter(t, 1)
	out := lines{notify: make(chan string, 4)}
	ea := printIndex(t, c, &out, Ordered("a"), false)
	eb := printIndex(t, c, &out, Ordered("b"), false)
	pending, fill := late(t, c, nil)
	s := NewStream()
	_, err := s.Execute(ea, pending)
	require.NoError(t, err)
	_, err = s.Execute(eb, scalar(t, c, 2, nil))
	require.NoError(t, err)
	select {
	case got := <-out.notify:
		assert.Equal(t, "2", got)
	case <-ctxT(t).Done():
		t.Fatal("effect b waited for effect a")
	}
	require.NoError(t, fill.Fulfill(scalar(t, c, 1, nil)))
	require.NoError(t, s.Barrier(ctxT(t)))
	assert.Equal(t, []string{"2", "1"}, out.all())
	assert.Equal(t, []string{"a"}, ea.Ordered())
	assert.False(t, ea.Unordered())
}
