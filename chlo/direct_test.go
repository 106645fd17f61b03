package chlo

import (
	"math"
	"slices"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The interpreter's direct evaluation of each CHLO op and the
// decomposition agree over the sweeps of TestExpandUnary: within 2 ulp for
// f32 (both are meant to be within an ulp of the float64 reference) and
// within 256 ulp or 1e-14 absolute for f64.
func TestDirectMatchesDecomposition(t *testing.T) {
	if !slices.Contains(interpreter.SupportedOps(), "chlo.erf") {
		t.Skip("the interpreter has no CHLO kernels (chlo.erf is not in interpreter.SupportedOps)")
	}
	for _, c := range unaryCases() {
		if c.build == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			for _, dt := range []xla.DType{xla.Float32, xla.Float64} {
				n := int64(len(c.inputs))
				mk := func() *stablehlo.Module {
					return build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, n)}, func(fb *FuncBuilder, a []*Value) []*Value {
						return []*Value{c.build(fb, a[0])}
					})
				}
				direct := floats(run(t, mk(), tensorOf(dt, c.inputs))[0])
				expanded := floats(expandAndRun(t, mk(), tensorOf(dt, c.inputs))[0])
				in := floats(tensorOf(dt, c.inputs))
				limit, abs := uint64(2), 0.0
				if dt == xla.Float64 {
					limit, abs = 256, 1e-14
				}
				var worst uint64
				for i := range in {
					d := ulpErr(dt, direct[i], expanded[i])
					if d > limit && !(abs > 0 && math.Abs(direct[i]-expanded[i]) <= abs) {
						t.Errorf("%s %s(%v): direct %v, decomposed %v (%d ulp)", dt, c.name, in[i], direct[i], expanded[i], d)
					}
					if d != math.MaxUint64 {
						worst = max(worst, d)
					}
				}
				t.Logf("%s %s: %d points, direct vs decomposed worst %d ulp", dt, c.name, len(in), worst)
			}
		})
	}
}
