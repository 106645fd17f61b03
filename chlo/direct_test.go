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

// Values computed with mpmath (50 digits, rounded to f64) that both paths
// must give to the ulp: where 2π|x| overflowed in bessel_i1e, and where
// Go's math.Atan2 gave +π for a negative y whose ratio to a negative x
// underflows (atan2 itself, and the imaginary part of atanh and atan of
// complex numbers, on the wrong branch).
func TestReferenceValues(t *testing.T) {
	t.Run("bessel_i1e", func(t *testing.T) {
		mk := func() *stablehlo.Module {
			return build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float64, 2)}, func(fb *FuncBuilder, a []*Value) []*Value {
				return []*Value{BesselI1e(fb, a[0])}
			})
		}
		in := tensorOf(xla.Float64, []float64{1.7976931348623157e308, -1e305})
		want := []float64{2.9754474593158995e-155, -1.26156626101008e-153}
		for name, got := range map[string][]float64{
			"direct":     floats(run(t, mk(), in)[0]),
			"decomposed": floats(expandAndRun(t, mk(), in)[0]),
		} {
			for i := range want {
				if d := ulpErr(xla.Float64, got[i], want[i]); d > 4 {
					t.Errorf("%s: bessel_i1e(%v) = %v, want %v (%d ulp)", name, floats(in)[i], got[i], want[i], d)
				}
			}
		}
	})
	t.Run("atan2", func(t *testing.T) {
		m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float64, 3), stablehlo.Tensor(xla.Float64, 3)}, func(fb *FuncBuilder, a []*Value) []*Value {
			return []*Value{fb.Atan2(a[0], a[1])}
		})
		got := floats(run(t, m, tensorOf(xla.Float64, []float64{-1e-300, 1e-300, -1e-300}), tensorOf(xla.Float64, []float64{-1e300, -1e300, 1e300}))[0])
		if got[0] != -math.Pi || got[1] != math.Pi || got[2] != 0 || !math.Signbit(got[2]) {
			t.Errorf("atan2 = %v, want [-π π -0]", got)
		}
	})
	t.Run("complex", func(t *testing.T) {
		tiny := 2.2250738585072014e-308
		for _, c := range []struct {
			name  string
			build func(fb *FuncBuilder, x *Value) *Value
			in    complex128
			want  complex128
		}{
			{"atanh", Atanh, complex(1e20, -tiny), complex(1e-20, -math.Pi/2)},
			{"atanh", Atanh, complex(-1e20, -tiny), complex(-1e-20, -math.Pi/2)},
			{"atan", Atan, complex(-tiny, 1e20), complex(-math.Pi/2, 1e-20)},
			{"atan", Atan, complex(-tiny, -1e20), complex(-math.Pi/2, -1e-20)},
		} {
			mk := func() *stablehlo.Module {
				return build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Complex128, 1)}, func(fb *FuncBuilder, a []*Value) []*Value {
					return []*Value{c.build(fb, a[0])}
				})
			}
			in := interpreter.NewTensor(xla.MakeShape(xla.Complex128, 1))
			in.Data.([]complex128)[0] = c.in
			for name, out := range map[string]*interpreter.Tensor{"direct": run(t, mk(), in)[0], "decomposed": expandAndRun(t, mk(), in)[0]} {
				got := out.Data.([]complex128)[0]
				if ulpErr(xla.Float64, real(got), real(c.want)) > 4 || ulpErr(xla.Float64, imag(got), imag(c.want)) > 4 {
					t.Errorf("%s: %s(%v) = %v, want %v", name, c.name, c.in, got, c.want)
				}
			}
		}
	})
}
