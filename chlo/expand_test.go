package chlo

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// build makes a module whose main takes tensors of the given types and
// returns fn's results.
func build(t *testing.T, types []stablehlo.TensorType, fn func(fb *FuncBuilder, args []*Value) []*Value) *stablehlo.Module {
	t.Helper()
	b := stablehlo.NewBuilder("m")
	ts := make([]stablehlo.Type, len(types))
	for i := range types {
		ts[i] = types[i]
	}
	fb := b.NewFunction("main", ts...)
	fb.Return(fn(fb, fb.Args())...)
	m, err := b.Build()
	require.NoError(t, err)
	return m
}

// expandAndRun expands m, checks no chlo op is left, and runs it.
func expandAndRun(t *testing.T, m *stablehlo.Module, args ...*interpreter.Tensor) []*interpreter.Tensor {
	t.Helper()
	require.NoError(t, Expand(m, ExpandOptions{}))
	m.Walk(func(op *stablehlo.Op) bool {
		assert.False(t, strings.HasPrefix(op.Name, "chlo."), "left after Expand: %s", op.Name)
		return true
	})
	require.NoError(t, m.Verify())
	return run(t, m, args...)
}

func run(t *testing.T, m *stablehlo.Module, args ...*interpreter.Tensor) []*interpreter.Tensor {
	t.Helper()
	p, err := interpreter.Compile(m, "main")
	require.NoError(t, err)
	in := make([]interpreter.Value, len(args))
	for i, a := range args {
		in[i] = a
	}
	out, err := p.Run(context.Background(), interpreter.Device{}, in)
	require.NoError(t, err)
	res := make([]*interpreter.Tensor, len(out))
	for i, o := range out {
		res[i] = o.(*interpreter.Tensor)
	}
	return res
}

// tensorOf makes a rank-1 tensor of dt from float64 values (rounded).
func tensorOf(dt xla.DType, vs []float64) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(dt, int64(len(vs))))
	switch d := x.Data.(type) {
	case []float64:
		copy(d, vs)
	case []float32:
		for i, v := range vs {
			d[i] = interpreter.RoundNarrow64(dt, v)
			if dt == xla.Float32 {
				d[i] = float32(v)
			}
		}
	}
	return x
}

func floats(x *interpreter.Tensor) []float64 {
	switch d := x.Data.(type) {
	case []float64:
		return d
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	}
	panic("not a float tensor")
}

// representable rounds v to dt.
func representable(dt xla.DType, v float64) float64 {
	switch dt {
	case xla.Float64:
		return v
	case xla.Float32:
		return float64(float32(v))
	}
	return float64(interpreter.RoundNarrow64(dt, v))
}

// sweep returns n points spread over [lo, hi], plus the given extras.
func sweep(lo, hi float64, n int, extra ...float64) []float64 {
	out := make([]float64, 0, n+len(extra))
	for i := 0; i < n; i++ {
		out = append(out, lo+(hi-lo)*float64(i)/float64(n-1))
	}
	return append(out, extra...)
}

// ulpErr is the distance in ulps of dt between got and want (rounded to
// dt); NaN must match NaN, infinities must be equal.
func ulpErr(dt xla.DType, got, want float64) uint64 {
	want = representable(dt, want)
	if math.IsNaN(got) || math.IsNaN(want) {
		if math.IsNaN(got) && math.IsNaN(want) {
			return 0
		}
		return math.MaxUint64
	}
	return interpreter.ULPDistance(dt, got, want)
}

type unaryCase struct {
	name   string
	build  func(fb *FuncBuilder, x *Value) *Value
	ref    func(float64) float64
	inputs []float64
	maxULP uint64 // float32
	absTol float64
}

func unaryCases() []unaryCase {
	nan, inf := math.NaN(), math.Inf(1)
	specials := []float64{0, math.Copysign(0, -1), nan, inf, -inf}
	return []unaryCase{
		{"erf", Erf, math.Erf, sweep(-6, 6, 2001, append(specials, 1e-30, -1e-30, 0.5, 1.4999, 1.5, 1.9999, 2, 2.0001)...), 1, 0},
		{"erfc", Erfc, math.Erfc, sweep(-6, 10, 2001, append(specials, 1e-30, 1.5, 2, 9.1, 26.5, 27.05, 27.2, 27.22, 27.5)...), 1, 0},
		{"erf_inv", ErfInv, math.Erfinv, sweep(-0.999999, 0.999999, 2001, 1, -1, 1.5, -1.0001, nan, 0, 1e-30, 0.99999994, -0.99999994, 1e-8), 2, 0},
		{"lgamma", Lgamma, refLgamma, sweep(-20.5, 40, 2001, append(specials, 1, 2, -1, -2, -100, 0.5, 1e-20, 1e20, 1.0000001, 1.9999999)...), 2, 1e-7},
		{"digamma", Digamma, refDigamma, sweep(-9.7, 40, 2001, append(specials, 1, 2, -1, -3, 1e-6, 1e10, 1.4616321449683623)...), 2, 1e-7},
		{"bessel_i1e", BesselI1e, refBesselI1e, sweep(-60, 60, 2001, append(specials, 29.999, 30, 30.001, 1e-20, 0.001)...), 2, 0},
		{"sinh", Sinh, math.Sinh, sweep(-90, 90, 2001, append(specials, 1e-20, 0.999, 1, 1.001, 88.7, -89.5, 1000)...), 1, 0},
		{"cosh", Cosh, math.Cosh, sweep(-90, 90, 2001, append(specials, 1e-20, 88.7, 89.5, -1000)...), 1, 0},
		{"tan", Tan, math.Tan, sweep(-10, 10, 2001, specials...), 2, 0},
		{"asin", Asin, special.RealAsin, sweep(-1, 1, 2001, append(specials, 1.5, -1.0001, 1e-30)...), 1, 0},
		{"acos", Acos, special.RealAcos, sweep(-1, 1, 2001, append(specials, 1.5, -1.0001, 1e-30)...), 1, 0},
		{"atan", Atan, math.Atan, sweep(-100, 100, 2001, append(specials, 1e30, -1e30)...), 1, 0},
		{"asinh", Asinh, math.Asinh, sweep(-100, 100, 2001, append(specials, 1e-30, 1e30, -3e38, 0.5)...), 1, 0},
		{"acosh", Acosh, math.Acosh, sweep(-2, 100, 2001, append(specials, 1, 1.0000001, 1e30, 3e38)...), 1, 0},
		{"atanh", Atanh, math.Atanh, sweep(-1, 1, 2001, append(specials, 1.5, -1.5, 1e-30, 0.9999999, -0.9999999,
			-0.9999999999999999, -0.9999999995343387, -0.999999999998181, -0.9967902079326354)...), 1, 0},
		{"is_inf", nil, nil, nil, 0, 0},
	}
}

func refLgamma(x float64) float64 {
	if math.IsInf(x, -1) {
		return math.Inf(1)
	}
	v, _ := math.Lgamma(x)
	return v
}

// refDigamma: ψ(x) = ψ(x+n) - Σ 1/(x+k) with a 40-step shift and the
// asymptotic series to B_16, reflection below 1/2; the conventions at the
// poles of the decomposition (-Inf at 0, NaN at negative integers).
func refDigamma(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, -1):
		return math.NaN()
	case math.IsInf(x, 1):
		return x
	case x == 0:
		return math.Inf(-1)
	case x < 0 && x == math.Floor(x):
		return math.NaN()
	case x < 0.5:
		r := x - math.RoundToEven(x)
		return refDigamma(1-x) - math.Pi/math.Tan(math.Pi*r)
	}
	s := 0.0
	for k := 0; k < 40; k++ {
		s += 1 / (x + float64(k))
	}
	w := x + 40
	w2 := 1 / (w * w)
	series := w2 * (1.0/12 - w2*(1.0/120-w2*(1.0/252-w2*(1.0/240-w2*(1.0/132-w2*(691.0/32760-w2*(1.0/12-w2*3617.0/8160)))))))
	return math.Log(w) - 0.5/w - series - s
}

// refBesselI1e: e^{-|x|} I1(x) from the power series and the series of
// e^{-|x|} in 256-bit big.Float arithmetic (|x| <= 60).
func refBesselI1e(x float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	if math.IsInf(x, 0) {
		return math.Copysign(0, x)
	}
	const prec = 256
	nf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	a := math.Abs(x)
	h := nf(a / 2)
	h2 := nf(0).Mul(h, h)
	term, sum := nf(0).Set(h), nf(0).Set(h)
	for k := 1; k < 200; k++ {
		term.Mul(term, h2)
		term.Quo(term, nf(float64(k*(k+1))))
		sum.Add(sum, term)
	}
	e, t := nf(1), nf(1)
	for k := 1; k < 400; k++ {
		t.Mul(t, nf(-a))
		t.Quo(t, nf(float64(k)))
		e.Add(e, t)
	}
	f, _ := sum.Mul(sum, e).Float64()
	return math.Copysign(f, x)
}

// Every unary special function, expanded and run, against its float64
// reference: f32 within maxULP (or absTol where the result is near zero),
// f64 within 256 ulps (or absTol²), bf16 within 1 ulp.
func TestExpandUnary(t *testing.T) {
	for _, c := range unaryCases() {
		if c.build == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16} {
				n := int64(len(c.inputs))
				m := build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, n)}, func(fb *FuncBuilder, a []*Value) []*Value {
					return []*Value{c.build(fb, a[0])}
				})
				out := floats(expandAndRun(t, m, tensorOf(dt, c.inputs))[0])
				in := floats(tensorOf(dt, c.inputs))
				limit, abs := c.maxULP, c.absTol
				switch dt {
				case xla.Float64:
					limit, abs = 256, c.absTol*c.absTol
				case xla.BFloat16:
					limit = 1
				}
				var worst uint64
				for i, x := range in {
					want := c.ref(x)
					d := ulpErr(dt, out[i], want)
					if d > limit && !(abs > 0 && math.Abs(out[i]-want) <= abs) {
						t.Errorf("%s %s(%v) = %v, want %v (%d ulp)", dt, c.name, x, out[i], representable(dt, want), d)
					}
					if d != math.MaxUint64 && !(abs > 0 && math.Abs(want) < 1e-3) {
						worst = max(worst, d)
					}
				}
				t.Logf("%s %s: %d points, worst %d ulp", dt, c.name, len(in), worst)
			}
		})
	}
}

func TestExpandIsInf(t *testing.T) {
	in := []float64{0, 1, math.Inf(1), math.Inf(-1), math.NaN(), -3e38}
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, int64(len(in)))}, func(fb *FuncBuilder, a []*Value) []*Value {
		return []*Value{IsInf(fb, a[0]), IsPosInf(fb, a[0]), IsNegInf(fb, a[0])}
	})
	out := expandAndRun(t, m, tensorOf(xla.Float32, in))
	assert.Equal(t, []bool{false, false, true, true, false, false}, out[0].Data)
	assert.Equal(t, []bool{false, false, true, false, false, false}, out[1].Data)
	assert.Equal(t, []bool{false, false, false, true, false, false}, out[2].Data)
}

func TestExpandNextAfter(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	xs := []float64{0, 0, 1, 1, -1, -1, math.MaxFloat32, inf, -inf, 1, nan, 2, math.Copysign(0, -1), 1e-45}
	ys := []float64{1, -1, 2, 0, -2, 0, inf, 0, 0, 1, 1, nan, 1, 0}
	for _, dt := range []xla.DType{xla.Float32, xla.Float64} {
		n := int64(len(xs))
		m := build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, n), stablehlo.Tensor(dt, n)}, func(fb *FuncBuilder, a []*Value) []*Value {
			return []*Value{NextAfter(fb, a[0], a[1]), BroadcastNextAfter(fb, a[0], a[1])}
		})
		out := expandAndRun(t, m, tensorOf(dt, xs), tensorOf(dt, ys))
		for i := range xs {
			var want float64
			if dt == xla.Float32 {
				want = float64(math.Nextafter32(float32(xs[i]), float32(ys[i])))
			} else {
				want = math.Nextafter(xs[i], ys[i])
			}
			for r := 0; r < 2; r++ {
				got := floats(out[r])[i]
				if math.IsNaN(want) {
					assert.True(t, math.IsNaN(got), "%s nextafter(%v, %v) = %v", dt, xs[i], ys[i], got)
				} else {
					assert.Equal(t, math.Float64bits(want), math.Float64bits(got), "%s nextafter(%v, %v) = %v, want %v", dt, xs[i], ys[i], got, want)
				}
			}
		}
	}
}

// refZeta sums ζ(s, q) directly for 2000 terms and adds the Euler–Maclaurin
// tail to its third term.
func refZeta(s, q float64) float64 {
	const n = 2000
	sum := 0.0
	for k := 0; k < n; k++ {
		sum += math.Pow(q+float64(k), -s)
	}
	w := q + n
	return sum + math.Pow(w, 1-s)/(s-1) + 0.5*math.Pow(w, -s) + s*math.Pow(w, -s-1)/12
}

func TestExpandZetaPolygamma(t *testing.T) {
	var ss, qs []float64
	for _, s := range []float64{1.5, 2, 3, 4.5, 7, 12} {
		for _, q := range []float64{0.1, 0.5, 1, 2.5, 10, 33} {
			ss, qs = append(ss, s), append(qs, q)
		}
	}
	// Special points: NaN for s < 1, +Inf at s = 1, q at poles.
	ss = append(ss, 0.5, 1, 2, 3, 2.5, math.NaN())
	qs = append(qs, 1, 1, 0, -1, -2.5, 1)
	for _, dt := range []xla.DType{xla.Float32, xla.Float64} {
		want := make([]float64, len(ss))
		for i := range ss {
			want[i] = refZeta(representable(dt, ss[i]), representable(dt, qs[i]))
		}
		copy(want[len(want)-6:], []float64{math.NaN(), math.Inf(1), math.Inf(1), math.NaN(), math.NaN(), math.NaN()})
		n := int64(len(ss))
		m := build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, n), stablehlo.Tensor(dt, n)}, func(fb *FuncBuilder, a []*Value) []*Value {
			return []*Value{Zeta(fb, a[0], a[1]), BroadcastZeta(fb, a[0], a[1])}
		})
		out := expandAndRun(t, m, tensorOf(dt, ss), tensorOf(dt, qs))
		limit := uint64(2)
		if dt == xla.Float64 {
			limit = 64
		}
		for r := range out {
			for i, got := range floats(out[r]) {
				assert.LessOrEqual(t, ulpErr(dt, got, want[i]), limit, "%s zeta(%v, %v) = %v, want %v", dt, ss[i], qs[i], got, want[i])
			}
		}
	}

	// Polygamma: known values and the reduction to zeta.
	ns := []float64{1, 1, 2, 3, 0, 0.5, -1, 1}
	xs := []float64{1, 0.5, 1, 2.5, 1, 1, 1, 4}
	pw := []float64{math.Pi * math.Pi / 6, math.Pi * math.Pi / 2, -2 * 1.2020569031595942, 6 * refZeta(4, 2.5),
		-0.5772156649015329, math.NaN(), math.NaN(), refZeta(2, 4)}
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, 8), stablehlo.Tensor(xla.Float32, 8)}, func(fb *FuncBuilder, a []*Value) []*Value {
		return []*Value{Polygamma(fb, a[0], a[1])}
	})
	out := floats(expandAndRun(t, m, tensorOf(xla.Float32, ns), tensorOf(xla.Float32, xs))[0])
	for i, got := range out {
		assert.LessOrEqual(t, ulpErr(xla.Float32, got, pw[i]), uint64(2), "polygamma(%v, %v) = %v, want %v", ns[i], xs[i], got, pw[i])
	}
}

func TestExpandBroadcasts(t *testing.T) {
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, 2, 3), stablehlo.Tensor(xla.Float32, 3), stablehlo.Tensor(xla.Float32, 2)},
		func(fb *FuncBuilder, a []*Value) []*Value {
			sum := BroadcastAdd(fb, a[0], a[1])                                                 // numpy
			col := BroadcastMultiply(fb, a[0], a[2], 0)                                         // explicit dims
			lt := BroadcastCompare(fb, a[0], a[1], stablehlo.CompareLT, stablehlo.CompareFloat) // i1
			sel := BroadcastSelect(fb, lt, a[0], a[1])                                          // 3 operands
			cx := BroadcastComplex(fb, a[1], a[0])                                              // complex
			cl := ConstantLike(fb, a[0], 2.5)                                                   // splat
			sq := Square(fb, Conj(fb, cx))                                                      // complex square
			return []*Value{sum, col, lt, sel, fb.Real(sq), fb.Imag(sq), BroadcastSubtract(fb, cl, a[1])}
		})
	x := tensorOf(xla.Float32, []float64{1, 2, 3, 4, 5, 6})
	x.Shape = xla.MakeShape(xla.Float32, 2, 3)
	out := expandAndRun(t, m, x, tensorOf(xla.Float32, []float64{10, 2, 30}), tensorOf(xla.Float32, []float64{-1, 2}))
	assert.Equal(t, []float32{11, 4, 33, 14, 7, 36}, out[0].Data)
	assert.Equal(t, []float32{-1, -2, -3, 8, 10, 12}, out[1].Data)
	assert.Equal(t, []bool{true, false, true, true, false, true}, out[2].Data)
	assert.Equal(t, []float32{1, 2, 3, 4, 2, 6}, out[3].Data)
	// conj(re + i·im)² = re² - im² - 2i·re·im with re = y, im = x.
	assert.Equal(t, []float32{99, 0, 891, 84, -21, 864}, out[4].Data)
	assert.Equal(t, []float32{-20, -8, -180, -80, -20, -360}, out[5].Data)
	assert.Equal(t, []float32{-7.5, 0.5, -27.5, -7.5, 0.5, -27.5}, out[6].Data)
}

func TestExpandTopK(t *testing.T) {
	nan := math.NaN()
	in := []float64{2, 9, 9, 4, -1, nan, 3, 3, math.Inf(-1), 0}
	for _, dt := range []xla.DType{xla.Float32, xla.Int32} {
		m := build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, 2, 5)}, func(fb *FuncBuilder, a []*Value) []*Value {
			v, i := TopK(fb, a[0], 3)
			return []*Value{v, i}
		})
		x := interpreter.NewTensor(xla.MakeShape(dt, 2, 5))
		switch d := x.Data.(type) {
		case []float32:
			for i, v := range in {
				d[i] = float32(v)
			}
		case []int32:
			for i, v := range in {
				if math.IsNaN(v) {
					v = 100
				}
				if math.IsInf(v, -1) {
					v = -100
				}
				d[i] = int32(v)
			}
		}
		out := expandAndRun(t, m, x)
		assert.Equal(t, []int32{1, 2, 3, 0, 1, 2}, out[1].Data, "%s indices", dt)
		if dt == xla.Int32 {
			assert.Equal(t, []int32{9, 9, 4, 100, 3, 3}, out[0].Data)
		} else {
			v := out[0].Data.([]float32)
			assert.Equal(t, []float32{9, 9, 4}, v[:3])
			assert.True(t, math.IsNaN(float64(v[3])))
			assert.Equal(t, []float32{3, 3}, v[4:])
		}
	}
}

// top_k of booleans orders false before true, the interpreter's kernel as
// the decomposition (the kernel refused i1, which the builder accepts).
func TestTopKBool(t *testing.T) {
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Bool, 2, 4)}, func(fb *FuncBuilder, a []*Value) []*Value {
		v, i := TopK(fb, a[0], 2)
		return []*Value{v, i}
	})
	x := interpreter.NewTensor(xla.MakeShape(xla.Bool, 2, 4))
	copy(x.Data.([]bool), []bool{false, true, false, true, false, false, false, false})
	for _, out := range [][]*interpreter.Tensor{run(t, m, x), expandAndRun(t, m, x)} {
		assert.Equal(t, []bool{true, true, false, false}, out[0].Data)
		assert.Equal(t, []int32{1, 3, 0, 1}, out[1].Data)
	}
}

// Expand rejects what it cannot rewrite, naming op and type, and leaves m
// unchanged.
func TestExpandErrors(t *testing.T) {
	// chlo.mulhi (not one of the ops JAX emits for special functions) has
	// no decomposition.
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Int32, 2), stablehlo.Tensor(xla.Float32, 2)}, func(fb *FuncBuilder, a []*Value) []*Value {
		hi := fb.Op("chlo.mulhi", []*Value{a[0], a[0]}, []stablehlo.Type{stablehlo.Tensor(xla.Int32, 2)})[0]
		return []*Value{hi, Erf(fb, a[1])}
	})
	before := m.String()
	err := Expand(m, ExpandOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chlo.mulhi has no StableHLO decomposition")
	assert.Equal(t, before, m.String())

	// Selecting only erf rewrites it and leaves mulhi.
	require.NoError(t, Expand(m, ExpandOptions{Ops: []string{"chlo.erf"}}))
	s := m.String()
	assert.Contains(t, s, "chlo.mulhi")
	assert.NotContains(t, s, "chlo.erf")

	// An op of an element type it does not take says which (the builder
	// refuses such an op: it comes from parsed text).
	m, err = stablehlo.Parse([]byte(`func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = "chlo.erf"(%a) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}`))
	require.NoError(t, err)
	err = Expand(m, ExpandOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chlo.erf(tensor<2xcomplex<f32>>)")
	assert.Contains(t, err.Error(), "element type complex<f32> is not float")

	assert.True(t, Expandable("chlo.erf"))
	assert.True(t, Expandable("chlo.ragged_dot"))
	assert.False(t, Expandable("stablehlo.add"))
	assert.Contains(t, ExpandableOps(), "chlo.top_k")
	assert.Error(t, Expand(nil, ExpandOptions{}))
}

// Builder errors are sticky, name the op and the caller's line, and never
// panic.
func TestBuilderErrors(t *testing.T) {
	cases := []struct {
		name string
		fn   func(fb *FuncBuilder, x, i *Value) *Value
		want string
	}{
		{"erf of int", func(fb *FuncBuilder, x, i *Value) *Value { return Erf(fb, i) }, "chlo.erf(tensor<3xi32>) at expand_test.go:"},
		{"nil operand", func(fb *FuncBuilder, x, i *Value) *Value { return Lgamma(fb, nil) }, "operand 0 is nil"},
		{"bad broadcast", func(fb *FuncBuilder, x, i *Value) *Value { return BroadcastAdd(fb, x, x, 5) }, "out of range"},
		{"top_k too big", func(fb *FuncBuilder, x, i *Value) *Value { v, _ := TopK(fb, x, 4); return v }, "k = 4"},
		{"zeta mixed", func(fb *FuncBuilder, x, i *Value) *Value { return Zeta(fb, x, i) }, "same type"},
		{"is_inf of int", func(fb *FuncBuilder, x, i *Value) *Value { return IsInf(fb, i) }, "is not float"},
		{"foreign value", func(fb *FuncBuilder, x, i *Value) *Value {
			other := stablehlo.NewBuilder("o").NewFunction("f", stablehlo.Tensor(xla.Float32, 3))
			return Tan(fb, other.Arg(0))
		}, "chlo.tan"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := stablehlo.NewBuilder("m")
			fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 3), stablehlo.Tensor(xla.Int32, 3))
			r := c.fn(fb, fb.Arg(0), fb.Arg(1))
			require.NotNil(t, r)
			fb.Return(fb.Arg(0))
			_, err := b.Build()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestExpandLeavesModuleOnError: an op whose expansion fails after
// others succeeded leaves the module as it was (erf was expanded first).
func TestExpandLeavesModuleOnError(t *testing.T) {
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 3), stablehlo.Tensor(xla.Float8E4M3FN, 3))
	fb.Return(Erf(fb, fb.Arg(0)), NextAfter(fb, fb.Arg(1), fb.Arg(1)))
	m, err := b.Build()
	require.NoError(t, err)
	before := m.String()
	err = Expand(m, ExpandOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chlo.next_after")
	assert.Equal(t, before, m.String())
	require.NoError(t, m.Verify())

	// Expanding only what can be expanded works on the same module.
	require.NoError(t, Expand(m, ExpandOptions{Ops: []string{"chlo.erf"}}))
	assert.NotContains(t, m.String(), "chlo.erf")
	assert.Contains(t, m.String(), "chlo.next_after")
}

// TestConstantLikeIntegers: an integer constant_like holds its value
// exactly or is a build error naming it (300 became 44 in an i8).
func TestConstantLikeIntegers(t *testing.T) {
	for _, c := range []struct {
		dt   xla.DType
		v    float64
		want string // "" for no error
	}{
		{xla.Int8, 127, ""}, {xla.Int8, -128, ""}, {xla.Int8, 300, "value 300 is not a i8 integer"},
		{xla.Uint8, -1, "value -1 is not a ui8"}, {xla.Int32, 2.7, "value 2.7 is not"},
		{xla.Int32, math.NaN(), "value NaN is not"}, {xla.Int32, 1e20, "is not a i32"},
		{xla.Uint64, 1 << 63, ""}, {xla.Uint64, math.Ldexp(1, 64), "is not a ui64"}, {xla.Int64, -math.Ldexp(1, 63), ""},
	} {
		b := stablehlo.NewBuilder("m")
		fb := b.NewFunction("main", stablehlo.Tensor(c.dt, 2))
		fb.Return(ConstantLike(fb, fb.Arg(0), c.v))
		_, err := b.Build()
		if c.want == "" {
			assert.NoError(t, err, "%v %v", c.dt, c.v)
		} else {
			assert.ErrorContains(t, err, c.want, "%v %v", c.dt, c.v)
		}
	}
}

// TestConstantLikeComplex: ConstantLike of a complex tensor is v + 0i, on
// the interpreter's own kernel and expanded (it was a build error).
func TestConstantLikeComplex(t *testing.T) {
	for _, dt := range []xla.DType{xla.Complex64, xla.Complex128} {
		mk := func() *stablehlo.Module {
			return build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, 3)}, func(fb *FuncBuilder, a []*Value) []*Value {
				return []*Value{ConstantLike(fb, a[0], 2.5)}
			})
		}
		x := interpreter.NewTensor(xla.MakeShape(dt, 3))
		// Upstream's verifier wants a constant_like's value of the element
		// type, which a complex dense attribute is not: none is printed.
		assert.NotContains(t, mk().String(), "dense<(")
		for _, out := range [][]*interpreter.Tensor{run(t, mk(), x), expandAndRun(t, mk(), x)} {
			assert.Equal(t, []complex128{2.5, 2.5, 2.5}, complexes(out[0]), "%v", dt)
		}
	}
}

// TestConstantLikeOfAToken: constant_like of a non-tensor names the
// operand's type (it said the result types could not be inferred).
func TestConstantLikeOfAToken(t *testing.T) {
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.TokenType{})
	fb.Return(ConstantLike(fb, fb.Arg(0), 1))
	_, err := b.Build()
	assert.ErrorContains(t, err, "operand of type !stablehlo.token is not a tensor")
}

// TestExpandZetaNegativeAndInfinite: the expansion agrees with the
// interpreter's kernel at negative non-integer q (it applied
// Euler–Maclaurin at q+10 < 0: 2.9e12 for 9.77), at the infinities, and
// for polygamma past n = 170 (n! overflowed: -Inf for -2.0e148).
func TestExpandZetaNegativeAndInfinite(t *testing.T) {
	inf := math.Inf(1)
	ss := []float64{2, 2, 3, 4, 2, 3, 5, 2, inf, inf, inf, 2, 3, 33, 51, 21}
	qs := []float64{-9.5, -20.5, -15.25, -100.25, -0.5, -1.5, -3.75, inf, 1, 2, 0.5, -1e6 - 0.5, -2, -0.5, -0.5, -0.5}
	ns := []float64{1, 2, 3, 1, 2, inf, 0, 180, 10, 50}
	xs := []float64{-9.5, -20.25, -3.5, 5, inf, 2, 3, 10, -0.5, -0.5}
	for _, dt := range []xla.DType{xla.Float64, xla.Float32} {
		m := build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, int64(len(ss))), stablehlo.Tensor(dt, int64(len(ss))),
			stablehlo.Tensor(dt, int64(len(ns))), stablehlo.Tensor(dt, int64(len(ns)))}, func(fb *FuncBuilder, a []*Value) []*Value {
			return []*Value{Zeta(fb, a[0], a[1]), Polygamma(fb, a[2], a[3])}
		})
		args := []*interpreter.Tensor{tensorOf(dt, ss), tensorOf(dt, qs), tensorOf(dt, ns), tensorOf(dt, xs)}
		direct := run(t, m, args...)
		expanded := expandAndRun(t, m, args...)
		tol := 1e-11
		if dt == xla.Float32 {
			tol = 1e-5
		}
		for r, ins := range [][2][]float64{{ss, qs}, {ns, xs}} {
			want, got := floats(direct[r]), floats(expanded[r])
			for i := range want {
				if math.IsNaN(want[i]) || math.IsInf(want[i], 0) {
					assert.Equal(t, fmt.Sprint(want[i]), fmt.Sprint(got[i]), "%s op %d (%v, %v)", dt, r, ins[0][i], ins[1][i])
					continue
				}
				assert.InDelta(t, want[i], got[i], tol*math.Max(1, math.Abs(want[i])), "%s op %d (%v, %v)", dt, r, ins[0][i], ins[1][i])
			}
		}
	}
}

func TestBroadcastCompareRefusesBadEnums(t *testing.T) {
	for _, c := range []struct {
		dir  stablehlo.ComparisonDirection
		ct   stablehlo.CompareType
		dt   xla.DType
		want string
	}{
		{"XX", stablehlo.CompareAuto, xla.Float32, `invalid comparison direction "XX"`},
		{stablehlo.CompareLT, "BOGUS", xla.Float32, `invalid compare type "BOGUS"`},
		// As stablehlo.compare: the type must fit the elements.
		{stablehlo.CompareLT, stablehlo.CompareFloat, xla.Int32, "compare type FLOAT does not apply to element type i32"},
		{stablehlo.CompareLT, stablehlo.CompareSigned, xla.Float32, "compare type SIGNED does not apply to element type f32"},
		{stablehlo.CompareEQ, stablehlo.CompareTotalOrder, xla.Complex64, "compare type TOTALORDER does not apply to element type complex<f32>"},
	} {
		b := stablehlo.NewBuilder("m")
		fb := b.NewFunction("main", stablehlo.Tensor(c.dt, 2))
		fb.Return(BroadcastCompare(fb, fb.Arg(0), fb.Arg(0), c.dir, c.ct))
		_, err := b.Build()
		assert.ErrorContains(t, err, c.want)
	}
}

// edgeCase is one value of a special function at an edge of its
// arguments, checked in both forms (the interpreter's direct kernel and
// the decomposition) against a reference within rel relative.
type edgeCase struct {
	name string
	dt   xla.DType
	fn   func(fb *FuncBuilder, a, b *Value) *Value
	a, b float64
	want float64 // mpmath, 40 digits, unless said
	rel  float64
}

func checkEdgeCases(t *testing.T, cases []edgeCase) {
	t.Helper()
	for _, c := range cases {
		mk := func() *stablehlo.Module {
			return build(t, []stablehlo.TensorType{stablehlo.Tensor(c.dt, 1), stablehlo.Tensor(c.dt, 1)}, func(fb *FuncBuilder, a []*Value) []*Value {
				return []*Value{c.fn(fb, a[0], a[1])}
			})
		}
		in := []*interpreter.Tensor{tensorOf(c.dt, []float64{c.a}), tensorOf(c.dt, []float64{c.b})}
		want := representable(c.dt, c.want)
		for form, out := range map[string]*interpreter.Tensor{"direct": run(t, mk(), in...)[0], "decomposed": expandAndRun(t, mk(), in...)[0]} {
			got := floats(out)[0]
			assert.LessOrEqual(t, math.Abs(got-want), c.rel*math.Abs(want), "%s %s %s(%v, %v) = %.17g, want %.17g", form, c.dt, c.name, c.a, c.b, got, want)
			assert.Equal(t, math.Signbit(want), math.Signbit(got), "%s %s %s(%v, %v): sign of %v", form, c.dt, c.name, c.a, c.b, got)
		}
	}
}

// TestZetaPolygammaLgammaEdges: values where a form was wrong. Small
// negative q lost its low bits in b = -(q+n-1) (ζ(2, -1e-10) came out
// 9.99999834e19); huge q underflowed a^-s before a·a^-s in the
// Euler–Maclaurin tail (ζ(2, 1e300) = 0); the decomposed polygamma took
// log|ζ| of an underflowed ζ (-0 for ψ⁽²⁰⁰⁾(52)); the decomposed lgamma
// rounded π·x in the subnormals (744.486 for lgamma(5e-324)).
func TestZetaPolygammaLgammaEdges(t *testing.T) {
	zeta := func(fb *FuncBuilder, a, b *Value) *Value { return Zeta(fb, a, b) }
	pg := func(fb *FuncBuilder, a, b *Value) *Value { return Polygamma(fb, a, b) }
	lg := func(fb *FuncBuilder, a, b *Value) *Value { return Lgamma(fb, a) }
	f64, f32 := xla.Float64, xla.Float32
	checkEdgeCases(t, []edgeCase{
		// 4: small negative q. math.Pow(1e-10, -2) is itself an ulp low
		// of the correctly rounded 1e20, hence 3e-16.
		{"zeta", f64, zeta, 2, -1e-10, 9.9999999999999992715e19, 3e-16},
		{"zeta", f64, zeta, 3, -1e-10, -9.999999999999998907e29, 3e-16},
		{"zeta", f64, zeta, 2, -1e-5, 10000000001.644956472, 3e-16},
		{"zeta", f64, zeta, 4, -2.000001, 9.9999999944088813228e23, 1e-9}, // q = -2.000001 is not exact
		{"polygamma", f64, pg, 1, -1e-10, 9.9999999999999992715e19, 3e-16},
		{"zeta", f32, zeta, 2, -1e-5, 10000000001.644956472, 0},
		// 7: huge q.
		{"zeta", f64, zeta, 2, 1e300, 9.999999999999999475e-301, 3e-16},
		{"zeta", f64, zeta, 3, 1e110, 4.9999999999999997643e-221, 3e-16},
		{"zeta", f64, zeta, 1.5, 1e200, 2.0000000000000000303e-100, 3e-16},
		{"zeta", f64, zeta, 20, 1e16, 5.2631578947368471053e-306, 1e-15},
		{"zeta", f32, zeta, 2, 1e30, 1e-30, 0},
		// 1: polygamma where ζ underflows.
		{"polygamma", f64, pg, 1, 1e300, 9.999999999999999475e-301, 3e-16},
		{"polygamma", f64, pg, 3, 1e100, 1.9999999999999999046e-300, 1e-15},
		{"polygamma", f64, pg, 200, 45, -4.040636741239864317e42, 2e-12},
		{"polygamma", f64, pg, 400, 30, -3.0254632442149487807e276, 2e-12},
		{"polygamma", f64, pg, 200, 52, -9.7673651191487356459e29, 2e-12},
		{"polygamma", f32, pg, 200, 52, -9.7673651191487356459e29, 0},
		// 6: lgamma of subnormals.
		{"lgamma", f64, lg, 5e-324, 0, 744.44007192138126231, 2e-16},
		{"lgamma", f64, lg, -5e-324, 0, 744.44007192138126231, 2e-16},
		{"lgamma", f64, lg, 1e-320, 0, 736.82724089097390615, 2e-16},
		{"lgamma", f64, lg, 2.2e-308, 0, 708.40775128180180042, 2e-16},
	})
}

// TestExpandConstantLikeAttrForms: every value form the interpreter runs
// expands to the same constant: a dense value (one element or a splat;
// the only way to a complex value with an imaginary part) and 64-bit
// integers past 2^53.
func TestExpandConstantLikeAttrForms(t *testing.T) {
	for _, c := range []struct{ typ, value string }{
		{"complex<f32>", "dense<(1.0,2.0)> : tensor<complex<f32>>"},
		{"complex<f64>", "dense<(-0.5,3.0)> : tensor<3xcomplex<f64>>"},
		{"f32", "dense<2.5> : tensor<f32>"},
		{"i1", "dense<true> : tensor<1xi1>"},
		{"i64", "9007199254740993 : i64"},
		{"i64", "9223372036854775807 : i64"},
		{"ui64", "18446744073709551615 : ui64"},
		{"f64", "-0.0 : f64"},
	} {
		src := fmt.Sprintf(`func.func @main(%%a: tensor<3x%[1]s>) -> tensor<3x%[1]s> {
  %%0 = "chlo.constant_like"(%%a) {value = %[2]s} : (tensor<3x%[1]s>) -> tensor<3x%[1]s>
  return %%0 : tensor<3x%[1]s>
}`, c.typ, c.value)
		parse := func() *stablehlo.Module {
			m, err := stablehlo.Parse([]byte(src))
			require.NoError(t, err, src)
			return m
		}
		var dt xla.DType
		for _, a := range parse().Func("main").Body.Blocks[0].Args {
			dt = a.Type.(stablehlo.TensorType).DType
		}
		x := interpreter.NewTensor(xla.MakeShape(dt, 3))
		want := run(t, parse(), x)
		got := expandAndRun(t, parse(), x)
		assert.Equal(t, want[0].Data, got[0].Data, "%s %s", c.typ, c.value)
	}
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "chlo.constant_like"(%a) {value = dense<[1.0, 2.0]> : tensor<2xf32>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`))
	require.NoError(t, err)
	require.ErrorContains(t, Expand(m, ExpandOptions{}), "value tensor<2xf32> must be one element or a splat")
}

// Polygamma at huge orders, where the Euler–Maclaurin tail's factor
// overflows (Inf - Inf) next to a scaled p1 that does not underflow,
// agrees with the interpreter's kernel (it was NaN where that gives -Inf
// and -0).
func TestPolygammaHugeOrder(t *testing.T) {
	ns := []float64{1e300, 1e300, 1e30}
	xs := []float64{3e38, 1e300, 1e17}
	mk := func() *stablehlo.Module {
		return build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float64, 3), stablehlo.Tensor(xla.Float64, 3)}, func(fb *FuncBuilder, a []*Value) []*Value {
			return []*Value{Polygamma(fb, a[0], a[1])}
		})
	}
	direct := floats(run(t, mk(), tensorOf(xla.Float64, ns), tensorOf(xla.Float64, xs))[0])
	expanded := floats(expandAndRun(t, mk(), tensorOf(xla.Float64, ns), tensorOf(xla.Float64, xs))[0])
	for i := range ns {
		assert.False(t, math.IsNaN(direct[i]), "direct polygamma(%v, %v)", ns[i], xs[i])
		assert.Equal(t, direct[i], expanded[i], "polygamma(%v, %v)", ns[i], xs[i])
	}
}
