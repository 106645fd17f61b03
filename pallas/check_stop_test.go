package pallas

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// TestLoopsStopAtTheFirstFailedCheck runs kernels whose loops go out of
// bounds with checks on: the run reports the BoundsError at once instead
// of looping on clamped values (a While whose condition reads past the
// end never ended; a ForLoop ran all its iterations first).
func TestLoopsStopAtTheFirstFailedCheck(t *testing.T) {
	x := tensor(t, xla.Float32, []float32{10, 11, 12, 13}, 4)
	spec := CallSpec{Name: "loops", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{1}}
	for _, c := range []struct {
		name   string
		kernel KernelFunc
		want   string
	}{
		{"while condition", func(k *Kernel, r []*Ref) {
			n := k.While([]*Value{k.Const(xla.Int32, 0)},
				func(c []*Value) *Value { return r[0].Load(c[0]).Lt(100.0) },
				func(c []*Value) []*Value { return []*Value{c[0].Add(1)} })
			r[1].Store(n[0].Astype(xla.Float32).BroadcastTo(4))
		}, "element index (4) outside [0, 4)"},
		{"while body", func(k *Kernel, r []*Ref) {
			n := k.While([]*Value{k.Const(xla.Int32, 0), k.Const(xla.Float32, 0)},
				func(c []*Value) *Value { return c[1].Lt(1e30) },
				func(c []*Value) []*Value { return []*Value{c[0].Add(1), c[1].Add(r[0].Load(c[0]).Mul(0.0))} })
			r[1].Store(n[1].BroadcastTo(4))
		}, "element index (4) outside [0, 4)"},
		{"for loop", func(k *Kernel, r []*Ref) {
			s := k.ForLoop(0, 1_000_000_000, []*Value{k.Const(xla.Float32, 0)}, func(i *Value, c []*Value) []*Value {
				return []*Value{c[0].Add(r[0].Load(i))}
			})
			r[1].Store(s[0].BroadcastTo(4))
		}, "element index (4) outside [0, 4)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := runCallCtx(ctx, c.kernel, spec, x)
			var be *BoundsError
			require.True(t, errors.As(err, &be), "want a *BoundsError, got %T: %v", err, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestGridStopsAtTheFirstFailedCheck checks that the grid loop ends at the
// step whose check failed: of 1000 steps, the one reading out of bounds
// is the first, and only it runs.
func TestGridStopsAtTheFirstFailedCheck(t *testing.T) {
	x := tensor(t, xla.Float32, f32s(1000, func(i int) float32 { return float32(i) }), 1000)
	spec := CallSpec{Name: "grid", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 1000)}, Grid: []int64{1000},
		InSpecs:  []*BlockSpec{{BlockShape: []int64{1000}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{0} }}},
		OutSpecs: []*BlockSpec{{BlockShape: []int64{1}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}}}
	kernel := func(k *Kernel, r []*Ref) {
		r[1].Store(r[0].Load(DS(k.ProgramID(0).Sub(1), 1)))
	}
	var prof interpreter.Profile
	_, err := runCallCtx(interpreter.WithProfile(context.Background(), &prof), kernel, spec, x)
	var be *BoundsError
	require.True(t, errors.As(err, &be), "want a *BoundsError, got %T: %v", err, err)
	assert.Equal(t, []int64{0}, be.GridPoint)
	for _, o := range prof.Ops() {
		if o.Op == "stablehlo.dynamic_slice" {
			assert.Less(t, o.Calls, int64(10), "the grid ran on after its first failed check")
		}
	}
}
