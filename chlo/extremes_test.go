package chlo

import (
	"math"
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Zeta for huge finite s is q^-s, decomposed as directly (the
// decomposition gave NaN from s ≈ 2.5e14: the Euler–Maclaurin factor
// s(s+1)…/w^2j overflowed and met w^(1-s) = 0).
func TestZetaHugeS(t *testing.T) {
	ss := []float64{1e13, 1e14, 2e14, 3e14, 5e14, 1e15, 1e20, 1e300}
	qs := []float64{0.5, 1, 2}
	var xs, ys, want []float64
	for _, s := range ss {
		for _, q := range qs {
			xs, ys = append(xs, s), append(ys, q)
			want = append(want, math.Pow(q, -s)) // the first term dominates (the rest < 2^-s)
		}
	}
	for _, dt := range []xla.DType{xla.Float64, xla.Float32} {
		mk := func() *stablehlo.Module {
			return build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, int64(len(xs))), stablehlo.Tensor(dt, int64(len(xs)))}, func(fb *FuncBuilder, a []*Value) []*Value {
				return []*Value{Zeta(fb, a[0], a[1])}
			})
		}
		x, y := tensorOf(dt, xs), tensorOf(dt, ys)
		d := floats(run(t, mk(), x, y)[0])
		e := floats(expandAndRun(t, mk(), x, y)[0])
		for i := range xs {
			if e[i] != want[i] || d[i] != want[i] {
				t.Errorf("%s zeta(%g, %g): direct %v decomposed %v want %v", dt, floats(x)[i], ys[i], d[i], e[i], want[i])
			}
		}
	}
}

// polygamma(n, +Inf) is ±0 for every n, decomposed and directly (the
// direct kernel gave NaN past n = 170: n! = Inf times ζ = 0).
func TestPolygammaAtInf(t *testing.T) {
	ns := []float64{170, 171, 200}
	mk := func() *stablehlo.Module {
		return build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float64, 3), stablehlo.Tensor(xla.Float64, 3)}, func(fb *FuncBuilder, a []*Value) []*Value {
			return []*Value{Polygamma(fb, a[0], a[1])}
		})
	}
	x, y := tensorOf(xla.Float64, ns), tensorOf(xla.Float64, []float64{math.Inf(1), math.Inf(1), math.Inf(1)})
	d := floats(run(t, mk(), x, y)[0])
	e := floats(expandAndRun(t, mk(), x, y)[0])
	for i := range ns {
		if d[i] != 0 || e[i] != 0 {
			t.Errorf("polygamma(%v, +Inf): direct %v decomposed %v, want ±0", ns[i], d[i], e[i])
		}
	}
}
