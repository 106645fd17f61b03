package chlo

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// igammaGrid is a dense (a, x) grid over both branches (x < a+1 and
// beyond) plus the special values.
func igammaGrid() (as, xs []float64) {
	for _, a := range []float64{1e-3, 0.1, 0.5, 1, 1.5, 2.5, 4, 7.25, 12, 30, 75, 150} {
		for i := 0; i <= 40; i++ {
			x := a * math.Pow(10, float64(i-20)/10) // a·10^[-2, 2]
			as, xs = append(as, a), append(xs, x)
		}
		as, xs = append(as, a, a, a), append(xs, a+1, math.Nextafter(a+1, 0), 0.5)
	}
	nan, inf := math.NaN(), math.Inf(1)
	sa := []float64{nan, 1, 0, -1, 1, 1, 1, inf, inf, 2, 1, 3}
	sx := []float64{1, nan, 1, 1, -1, 0, inf, 1, inf, 1e-300, 800, 1e6}
	return append(as, sa...), append(xs, sx...)
}

// igamma and igammac decomposed agree with the interpreter's kernels (f64
// within 1e-12 relative or 1e-15 absolute, f32/bf16/f16 within 2 ulp) and
// with the special values; P + Q = 1.
func TestExpandIgamma(t *testing.T) {
	as, xs := igammaGrid()
	n := int64(len(as))
	for _, dt := range []xla.DType{xla.Float64, xla.Float32, xla.BFloat16, xla.Float16} {
		mk := func() *stablehlo.Module {
			return build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, n), stablehlo.Tensor(dt, n)}, func(fb *FuncBuilder, a []*Value) []*Value {
				return []*Value{Igamma(fb, a[0], a[1]), Igammac(fb, a[0], a[1])}
			})
		}
		ta, tx := tensorOf(dt, as), tensorOf(dt, xs)
		direct := run(t, mk(), ta, tx)
		expanded := expandAndRun(t, mk(), ta, tx)
		ra, rx := floats(ta), floats(tx)
		for r, name := range []string{"igamma", "igammac"} {
			d, e := floats(direct[r]), floats(expanded[r])
			var worst float64
			for i := range d {
				if math.IsNaN(d[i]) || math.IsNaN(e[i]) {
					assert.True(t, math.IsNaN(d[i]) && math.IsNaN(e[i]), "%s %s(%v, %v): direct %v, decomposed %v", dt, name, ra[i], rx[i], d[i], e[i])
					continue
				}
				if dt == xla.Float64 {
					diff := math.Abs(d[i] - e[i])
					if diff > 1e-15 {
						worst = max(worst, diff/math.Abs(d[i]))
					}
					assert.True(t, diff <= 1e-15 || diff <= 1e-12*math.Abs(d[i]), "%s(%v, %v): direct %v, decomposed %v", name, ra[i], rx[i], d[i], e[i])
				} else {
					u := ulpErr(dt, e[i], d[i])
					worst = max(worst, float64(u))
					assert.LessOrEqual(t, u, uint64(2), "%s %s(%v, %v): direct %v, decomposed %v", dt, name, ra[i], rx[i], d[i], e[i])
				}
			}
			t.Logf("%s %s: %d points, worst %g (f64: relative; else ulp)", dt, name, len(d), worst)
		}
		if dt == xla.Float64 {
			p, q := floats(expanded[0]), floats(expanded[1])
			for i := range p {
				if !math.IsNaN(p[i]) {
					assert.InDelta(t, 1, p[i]+q[i], 1e-14, "P+Q at (%v, %v)", as[i], xs[i])
				}
			}
		}
	}
	// Known values: P(1, x) = 1 - e^-x, Q(0.5, x) = erfc(√x).
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float64, 3), stablehlo.Tensor(xla.Float64, 3)}, func(fb *FuncBuilder, a []*Value) []*Value {
		return []*Value{Igamma(fb, a[0], a[1]), Igammac(fb, a[0], a[1])}
	})
	out := expandAndRun(t, m, tensorOf(xla.Float64, []float64{1, 1, 0.5}), tensorOf(xla.Float64, []float64{0.3, 5, 9}))
	p, q := floats(out[0]), floats(out[1])
	assert.InDelta(t, -math.Expm1(-0.3), p[0], 1e-16)
	assert.InDelta(t, 1-math.Exp(-5), p[1], 1e-15)
	assert.InEpsilon(t, math.Erfc(3), q[2], 1e-13)
}

// TestExpandIgammaTinyArguments: at a subnormal a the series stays a
// probability (7.2e14 came out) and agrees with the interpreter's kernel;
// at a subnormal x, P(1, x) is x.
func TestExpandIgammaTinyArguments(t *testing.T) {
	as := []float64{5e-324, 5e-324, 1e-310, 1}
	xs := []float64{0.5, 1e-10, 0.25, 1e-310}
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float64, 4), stablehlo.Tensor(xla.Float64, 4)}, func(fb *FuncBuilder, a []*Value) []*Value {
		return []*Value{Igamma(fb, a[0], a[1]), Igammac(fb, a[0], a[1])}
	})
	in := []*interpreter.Tensor{tensorOf(xla.Float64, as), tensorOf(xla.Float64, xs)}
	direct, expanded := run(t, m, in...), expandAndRun(t, m, in...)
	for r := range 2 {
		d, e := floats(direct[r]), floats(expanded[r])
		for i := range d {
			assert.True(t, e[i] >= 0 && e[i] <= 1, "op %d (%v, %v) = %v", r, as[i], xs[i], e[i])
			assert.InDelta(t, d[i], e[i], 1e-15+1e-12*math.Abs(d[i]), "op %d (%v, %v)", r, as[i], xs[i])
		}
	}
	assert.InDelta(t, 1e-310, floats(expanded[0])[3], 1e-324)
}

// TestIgammacSmallA: Q(a, x) ≈ a E1(x) for small a, without the
// cancellation of 1 - P (both forms gave 2.2e-16 for Q(1e-30, 0.5) =
// 5.6e-31) or the rounding of log Γ(a) in the continued fraction's prefix
// (2.6e-15 relative at Q(1e-20, 1)). References from mpmath.
func TestIgammacSmallA(t *testing.T) {
	q := func(fb *FuncBuilder, a, b *Value) *Value { return Igammac(fb, a, b) }
	f64, f32 := xla.Float64, xla.Float32
	checkEdgeCases(t, []edgeCase{
		{"igammac", f64, q, 1e-30, 0.5, 5.597735947761608584e-31, 1e-15},
		{"igammac", f64, q, 1e-10, 0.5, 5.5977359480549881133e-11, 1e-15},
		{"igammac", f64, q, 1e-10, 1e-3, 6.3315393622138767721e-10, 1e-15},
		{"igammac", f64, q, 1e-20, 1, 2.1938393439552026165e-21, 1e-15},
		{"igammac", f64, q, 1e-3, 0.5, 0.00056006665647074988868, 1e-15},
		{"igammac", f64, q, 0.1, 1, 0.024127343726327778841, 1e-15},
		{"igammac", f64, q, 0.2, 1.1, 0.045037994556164762261, 1e-15},
		{"igammac", f64, q, 0.25, 1.2, 0.0507269983515412483661766852652, 1e-15},
		{"igammac", f64, q, 5e-324, 0.5, 2.7656490262796012421e-324, 1}, // rounds to 5e-324
		// a = float32(1e-30), float32(1e-10)
		{"igammac", f32, q, 1e-30, 0.5, 5.5977359655124589993e-31, 0},
		{"igammac", f32, q, 1e-10, 0.5, 5.5977360227927785538e-11, 0},
	})
}
