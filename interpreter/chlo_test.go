package interpreter

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Special points of every elementwise CHLO op, run through the parser,
// Compile and Run, in f32 and f64.
func TestChloUnarySpecialPoints(t *testing.T) {
	nan, inf, nz := ewtNaN, ewtInf, ewtNegZ
	cases := []struct {
		op   string
		in   []any
		want []any
	}{
		{"chlo.erf", []any{0.0, nz, inf, -inf, nan}, []any{0.0, nz, 1.0, -1.0, nan}},
		{"chlo.erfc", []any{0.0, inf, -inf, nan}, []any{1.0, 0.0, 2.0, nan}},
		{"chlo.erf_inv", []any{0.0, nz, 1.0, -1.0, 1.5, nan}, []any{0.0, nz, inf, -inf, nan, nan}},
		{"chlo.lgamma", []any{1.0, 2.0, 0.0, -1.0, -2.0, inf, -inf, nan}, []any{0.0, 0.0, inf, inf, inf, inf, inf, nan}},
		{"chlo.digamma", []any{0.0, nz, -1.0, -3.0, inf, -inf, nan}, []any{-inf, -inf, nan, nan, inf, nan, nan}},
		{"chlo.bessel_i1e", []any{0.0, nz, inf, -inf, nan}, []any{0.0, nz, 0.0, nz, nan}},
		{"chlo.tan", []any{0.0, nz, inf, nan}, []any{0.0, nz, nan, nan}},
		{"chlo.sinh", []any{0.0, nz, inf, -inf, nan}, []any{0.0, nz, inf, -inf, nan}},
		{"chlo.cosh", []any{0.0, nz, inf, -inf, nan}, []any{1.0, 1.0, inf, inf, nan}},
		{"chlo.asin", []any{0.0, nz, 1.0, -1.0, 2.0, nan}, []any{0.0, nz, math.Pi / 2, -math.Pi / 2, nan, nan}},
		{"chlo.acos", []any{1.0, -1.0, 2.0, nan}, []any{0.0, math.Pi, nan, nan}},
		{"chlo.atan", []any{0.0, nz, inf, -inf, nan}, []any{0.0, nz, math.Pi / 2, -math.Pi / 2, nan}},
		{"chlo.asinh", []any{0.0, nz, inf, -inf, nan}, []any{0.0, nz, inf, -inf, nan}},
		{"chlo.acosh", []any{1.0, 0.5, -1.0, inf, nan}, []any{0.0, nan, nan, inf, nan}},
		{"chlo.atanh", []any{0.0, nz, 1.0, -1.0, 2.0, nan}, []any{0.0, nz, inf, -inf, nan, nan}},
		{"chlo.conj", []any{1.5, nz, inf, nan}, []any{1.5, nz, inf, nan}},
		{"chlo.square", []any{-3.0, nz, inf, -inf, nan}, []any{9.0, 0.0, inf, inf, nan}},
	}
	for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.Float16, xla.BFloat16} {
		for _, c := range cases {
			got := ewtRun1(t, c.op, "", xla.Invalid, ewtTensor(dt, c.in...))
			want := make([]any, len(c.want))
			for i, w := range c.want {
				want[i] = chloRoundTo(dt, w.(float64))
			}
			ewtCheck(t, got, 0, want, c.op+" "+dt.String())
		}
		for _, c := range []struct {
			op   string
			want []any
		}{
			{"chlo.is_inf", []any{false, true, true, false, false}},
			{"chlo.is_pos_inf", []any{false, true, false, false, false}},
			{"chlo.is_neg_inf", []any{false, false, true, false, false}},
		} {
			got := ewtRun1(t, c.op, "", xla.Bool, ewtTensor(dt, 1.0, inf, -inf, nan, 0.0))
			ewtCheck(t, got, 0, c.want, c.op)
		}
	}
}

// chloRoundTo rounds v to float type dt.
func chloRoundTo(dt xla.DType, v float64) float64 {
	if dt == xla.Float64 {
		return v
	}
	return float64(chloRound(dt)(v))
}

// chloSweep returns n points spread over [lo, hi] (denser near 0 on a log
// scale when lo > 0).
func chloSweep(lo, hi float64, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}

// f32 results are within 1 ULP of the float64 function (rounded once, so
// 0 except where the float64 value is within its own error of a float32
// rounding boundary); f16 and bf16 results are exactly the float64 value
// rounded to the type, over every finite input of the type.
func TestChloUnarySweeps(t *testing.T) {
	fns := map[string]func(float64) float64{
		"chlo.erf": math.Erf, "chlo.erfc": math.Erfc, "chlo.erf_inv": special.ErfInv,
		"chlo.lgamma": special.Lgamma, "chlo.digamma": special.Digamma, "chlo.bessel_i1e": special.BesselI1e,
		"chlo.tan": math.Tan, "chlo.sinh": math.Sinh, "chlo.cosh": math.Cosh, "chlo.asin": math.Asin,
		"chlo.acos": math.Acos, "chlo.atan": math.Atan, "chlo.asinh": math.Asinh, "chlo.acosh": math.Acosh,
		"chlo.atanh": math.Atanh,
	}
	var f32in []any
	for _, v := range chloSweep(-30, 30, 6001) {
		f32in = append(f32in, float64(float32(v.(float64))))
	}
	for e := -40.0; e < 38; e += 0.37 {
		f32in = append(f32in, float64(float32(math.Pow(10, e))), -float64(float32(math.Pow(10, e))))
	}
	for name, f := range fns {
		got := ewtRun1(t, name, "", xla.Invalid, ewtTensor(xla.Float32, f32in...))
		var maxULP uint64
		for i, v := range f32in {
			want := float64(float32(f(v.(float64))))
			g := float64(got.Data.([]float32)[i])
			if math.IsNaN(want) {
				assert.True(t, math.IsNaN(g), "%s(%v)", name, v)
				continue
			}
			d := ULPDistance(xla.Float32, want, g)
			maxULP = max(maxULP, d)
			assert.LessOrEqual(t, d, uint64(1), "%s(%v): got %v, want %v", name, v, g, want)
		}
		t.Logf("%s f32: max %d ULP over %d points", name, maxULP, len(f32in))
		for _, dt := range []xla.DType{xla.Float16, xla.BFloat16} {
			in := make([]any, 0, 1<<16)
			for c := uint32(0); c < 1<<16; c++ {
				v := float64(DecodeNarrow(dt, c))
				if !math.IsNaN(v) {
					in = append(in, v)
				}
			}
			got := ewtRun1(t, name, "", xla.Invalid, ewtTensor(dt, in...))
			bad := 0
			for i, v := range in {
				want := float64(RoundNarrow64(dt, f(v.(float64))))
				g := float64(got.Data.([]float32)[i])
				if !(want == g && math.Signbit(want) == math.Signbit(g)) && !(math.IsNaN(want) && math.IsNaN(g)) {
					bad++
					if bad < 5 {
						t.Errorf("%s %v(%v): got %v, want %v", name, dt, v, g, want)
					}
				}
			}
			assert.Zero(t, bad, "%s %v mismatches", name, dt)
		}
	}
}

// f64 through the interpreter against independent references: closed
// forms, recurrences and inverse pairs.
func TestChloF64References(t *testing.T) {
	xs := chloSweep(0.05, 20, 400)
	run := func(op string, in []any) []float64 {
		return ewtRun1(t, op, "", xla.Invalid, ewtTensor(xla.Float64, in...)).Data.([]float64)
	}
	shifted := make([]any, len(xs))
	for i, x := range xs {
		shifted[i] = x.(float64) + 1
	}
	dg, dg1 := run("chlo.digamma", xs), run("chlo.digamma", shifted)
	lg := run("chlo.lgamma", xs)
	erf, erfc := run("chlo.erf", xs), run("chlo.erfc", xs)
	sinh, cosh := run("chlo.sinh", xs), run("chlo.cosh", xs)
	for i, xv := range xs {
		x := xv.(float64)
		// ψ(x+1) - ψ(x) = 1/x (DLMF 5.5.2): relative 1e-14 of the terms.
		assert.InDelta(t, 1/x, dg1[i]-dg[i], 1e-14*(math.Abs(dg[i])+1/x), "digamma recurrence at %v", x)
		// lgamma = log Γ (math.Gamma is an independent routine).
		assert.InDelta(t, math.Log(math.Gamma(x)), lg[i], 1e-13*(1+math.Abs(lg[i])), "lgamma(%v)", x)
		assert.InDelta(t, 1, erf[i]+erfc[i], 2e-16, "erf + erfc at %v", x)
		// cosh² - sinh² = 1 where it is not dominated by rounding.
		if x < 5 {
			assert.InDelta(t, 1, cosh[i]*cosh[i]-sinh[i]*sinh[i], 1e-15*cosh[i]*cosh[i], "cosh²-sinh² at %v", x)
		}
		assert.InDelta(t, (math.Exp(x)-math.Exp(-x))/2, sinh[i], 3e-16*sinh[i]+1e-16, "sinh(%v)", x)
	}
	// Tabulated: ψ(1) = -γ, ψ(1/2) = -γ - 2 ln 2, lgamma(1/2) = ln √π,
	// I1e(1) (A&S 9.8) and erf_inv(erf(v)) = v.
	const euler = 0.57721566490153286060651209008240243
	got := run("chlo.digamma", []any{1.0, 0.5})
	assert.InDelta(t, -euler, got[0], 2e-16)
	assert.InDelta(t, -euler-2*math.Ln2, got[1], 4e-16)
	assert.InDelta(t, math.Log(math.Sqrt(math.Pi)), run("chlo.lgamma", []any{0.5})[0], 2e-16)
	assert.InDelta(t, 0.2079104154, run("chlo.bessel_i1e", []any{1.0})[0], 6e-11)
	vals := []any{-3.0, -0.5, 1e-10, 0.3, 2.5}
	ei := make([]any, len(vals))
	for i, v := range vals {
		ei[i] = math.Erf(v.(float64))
	}
	for i, r := range run("chlo.erf_inv", ei) {
		assert.InDelta(t, vals[i].(float64), r, 2e-15*math.Abs(vals[i].(float64))/math.Max(1e-3, math.Exp(-r*r)), "erf_inv(erf(%v))", vals[i])
	}
}

func TestChloComplex(t *testing.T) {
	nz := ewtNegZ
	acosh2 := 1.3169578969248167086
	for _, dt := range []xla.DType{xla.Complex64, xla.Complex128} {
		tol := 1e-15
		if dt == xla.Complex64 {
			tol = 1e-7
		}
		in := ewtTensor(dt, complex(2, 0), complex(2, nz), complex(0, 2), complex(nz, 2), complex(0.3, -0.4))
		ewtCheck(t, ewtRun1(t, "chlo.asin", "", xla.Invalid, in), tol, []any{
			complex(math.Pi/2, acosh2), complex(math.Pi/2, -acosh2), complex(0, 1.4436354751788103),
			complex(nz, 1.4436354751788103), special.Asin(complex(0.3, -0.4)),
		}, "asin "+dt.String())
		ewtCheck(t, ewtRun1(t, "chlo.acos", "", xla.Invalid, in), tol, []any{
			complex(0, -acosh2), complex(0, acosh2), complex(math.Pi/2, -1.4436354751788103),
			complex(math.Pi/2, -1.4436354751788103), special.Acos(complex(0.3, -0.4)),
		}, "acos "+dt.String())
		ewtCheck(t, ewtRun1(t, "chlo.atan", "", xla.Invalid, in), tol, []any{
			complex(1.1071487177940904, 0), complex(1.1071487177940904, nz), complex(math.Pi/2, 0.5493061443340548),
			complex(-math.Pi/2, 0.5493061443340548), special.Atan(complex(0.3, -0.4)),
		}, "atan "+dt.String())
		ewtCheck(t, ewtRun1(t, "chlo.conj", "", xla.Invalid, ewtTensor(dt, complex(1, 2), complex(3, nz))), 0,
			[]any{complex(1, -2), complex(3, 0)}, "conj")
		ewtCheck(t, ewtRun1(t, "chlo.square", "", xla.Invalid, ewtTensor(dt, complex(1, 2), complex(3, -3))), 0,
			[]any{complex(-3, 4), complex(0, -18)}, "square")
		for _, op := range []string{"chlo.tan", "chlo.sinh", "chlo.cosh", "chlo.asinh", "chlo.acosh", "chlo.atanh"} {
			got := ewtRun1(t, op, "", xla.Invalid, ewtTensor(dt, complex(0.7, -1.3)))
			f := map[string]func(complex128) complex128{"chlo.tan": special.Tan, "chlo.sinh": special.Sinh, "chlo.cosh": special.Cosh,
				"chlo.asinh": special.Asinh, "chlo.acosh": special.Acosh, "chlo.atanh": special.Atanh}[op]
			ewtCheck(t, got, tol, []any{f(complex(0.7, -1.3))}, op)
		}
	}
}

func TestChloSquareInts(t *testing.T) {
	ewtCheck(t, ewtRun1(t, "chlo.square", "", xla.Invalid, ewtTensor(xla.Int8, -3, 12, -128)), 0, []any{9, 144 - 256, 0}, "i8")
	ewtCheck(t, ewtRun1(t, "chlo.square", "", xla.Invalid, ewtTensor(xla.Uint32, 3, 70000)), 0, []any{9, uint64(4900000000 % (1 << 32))}, "u32")
	ewtCheck(t, ewtRun1(t, "chlo.square", "", xla.Invalid, ewtTensor(xla.Int4, 3, -2)), 0, []any{-7, 4}, "i4 wraps")
}

func TestChloBinaryFunctions(t *testing.T) {
	nan, inf, nz := ewtNaN, ewtInf, ewtNegZ
	for _, dt := range []xla.DType{xla.Float32, xla.Float64} {
		ewtCheck(t, ewtRun1(t, "chlo.polygamma", "", xla.Invalid,
			ewtTensor(dt, 0.0, 1.0, 2.0, -1.0, 1.5, 1.0),
			ewtTensor(dt, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)), 1e-6,
			[]any{-0.5772156649015329, math.Pi * math.Pi / 6, -2.4041138063191885, nan, nan, inf}, "polygamma "+dt.String())
		ewtCheck(t, ewtRun1(t, "chlo.zeta", "", xla.Invalid,
			ewtTensor(dt, 2.0, 0.5, 1.0, 2.0, 3.0, 2.5),
			ewtTensor(dt, 1.0, 1.0, 3.0, -2.0, -2.0, -1.5)), 1e-6,
			[]any{math.Pi * math.Pi / 6, nan, inf, inf, nan, nan}, "zeta "+dt.String())
		ewtCheck(t, ewtRun1(t, "chlo.igamma", "", xla.Invalid,
			ewtTensor(dt, 1.0, 0.5, 0.0, 2.0, 2.0),
			ewtTensor(dt, 2.0, 2.0, 1.0, 0.0, inf)), 1e-6,
			[]any{1 - math.Exp(-2), math.Erf(math.Sqrt(2)), nan, 0.0, 1.0}, "igamma "+dt.String())
		ewtCheck(t, ewtRun1(t, "chlo.igammac", "", xla.Invalid,
			ewtTensor(dt, 1.0, 0.5, -1.0, 2.0, 2.0),
			ewtTensor(dt, 2.0, 2.0, 1.0, 0.0, inf)), 1e-6,
			[]any{math.Exp(-2), math.Erfc(math.Sqrt(2)), nan, 1.0, 0.0}, "igammac "+dt.String())
	}
	// next_after steps one code of the operand's own type.
	f32 := func(b uint32) float64 { return float64(math.Float32frombits(b)) }
	ewtCheck(t, ewtRun1(t, "chlo.next_after", "", xla.Invalid,
		ewtTensor(xla.Float32, 1.0, 1.0, 0.0, 0.0, nan, 2.0, inf),
		ewtTensor(xla.Float32, 2.0, 0.0, nz, -1.0, 1.0, nan, 0.0)), 0,
		[]any{f32(0x3f800001), f32(0x3f7fffff), nz, -f32(1), nan, nan, math.MaxFloat32}, "next_after f32")
	ewtCheck(t, ewtRun1(t, "chlo.next_after", "", xla.Invalid,
		ewtTensor(xla.Float16, 1.0, 0.0, 65504.0), ewtTensor(xla.Float16, 2.0, -1.0, inf)), 0,
		[]any{1 + 1.0/1024, -math.Ldexp(1, -24), inf}, "next_after f16")
	ewtCheck(t, ewtRun1(t, "chlo.next_after", "", xla.Invalid,
		ewtTensor(xla.BFloat16, 1.0, 1.0), ewtTensor(xla.BFloat16, 2.0, 0.0)), 0,
		[]any{1 + 1.0/128, 1 - 1.0/256}, "next_after bf16")
	ewtCheck(t, ewtRun1(t, "chlo.next_after", "", xla.Invalid,
		ewtTensor(xla.Float64, 1.0, 0.0), ewtTensor(xla.Float64, 2.0, nz)), 0,
		[]any{1 + 0x1p-52, nz}, "next_after f64")
	// f32 sweeps of the binary functions against their float64 values.
	var as, xs []any
	for a := 0.0; a < 6; a += 0.5 {
		for x := 0.1; x < 30; x *= 1.7 {
			as = append(as, a)
			xs = append(xs, float64(float32(x)))
		}
	}
	for name, f := range map[string]func(float64, float64) float64{
		"chlo.polygamma": special.Polygamma, "chlo.igamma": special.Igamma, "chlo.igammac": special.Igammac,
		"chlo.zeta": func(a, x float64) float64 { return special.Zeta(a+1.5, x) },
	} {
		in0 := as
		if name == "chlo.zeta" {
			in0 = make([]any, len(as))
			for i, a := range as {
				in0[i] = a.(float64) + 1.5
			}
		}
		got := ewtRun1(t, name, "", xla.Invalid, ewtTensor(xla.Float32, in0...), ewtTensor(xla.Float32, xs...))
		for i := range as {
			want := float64(float32(f(as[i].(float64), xs[i].(float64))))
			g := float64(got.Data.([]float32)[i])
			if math.IsNaN(want) {
				assert.True(t, math.IsNaN(g))
				continue
			}
			assert.LessOrEqual(t, ULPDistance(xla.Float32, want, g), uint64(1), "%s(%v, %v)", name, as[i], xs[i])
		}
	}
}

func TestChloBroadcast(t *testing.T) {
	row := ewtTensor(xla.Int32, 10, 20, 30)
	col := ewtShaped(xla.Int32, []int64{2, 1}, 1, 0)
	out, err := ewtRun("chlo.broadcast_divide", "", []xla.Shape{xla.MakeShape(xla.Int32, 2, 3)}, row, col)
	require.NoError(t, err)
	// Integer division by zero gives -1, as stablehlo.divide does.
	ewtCheck(t, out[0], 0, []any{10, 20, 30, -1, -1, -1}, "numpy broadcast divide")
	mat := ewtShaped(xla.Float32, []int64{2, 3}, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
	vec := ewtTensor(xla.Float32, 10.0, 20.0)
	out, err = ewtRun("chlo.broadcast_add", "broadcast_dimensions = array<i64: 0>", []xla.Shape{xla.MakeShape(xla.Float32, 2, 3)}, vec, mat)
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{11.0, 12.0, 13.0, 24.0, 25.0, 26.0}, "broadcast_dimensions")
	scalar := ewtShaped(xla.Float32, nil, 2.0)
	for _, c := range []struct {
		op   string
		want []any
	}{
		{"chlo.broadcast_subtract", []any{-1.0, 0.0, 1.0, 2.0, 3.0, 4.0}},
		{"chlo.broadcast_multiply", []any{2.0, 4.0, 6.0, 8.0, 10.0, 12.0}},
		{"chlo.broadcast_maximum", []any{2.0, 2.0, 3.0, 4.0, 5.0, 6.0}},
		{"chlo.broadcast_minimum", []any{1.0, 2.0, 2.0, 2.0, 2.0, 2.0}},
		{"chlo.broadcast_power", []any{1.0, 4.0, 9.0, 16.0, 25.0, 36.0}},
		{"chlo.broadcast_remainder", []any{1.0, 0.0, 1.0, 0.0, 1.0, 0.0}},
		{"chlo.broadcast_atan2", []any{math.Atan2(1, 2), math.Atan2(2, 2), math.Atan2(3, 2), math.Atan2(4, 2), math.Atan2(5, 2), math.Atan2(6, 2)}},
		{"chlo.broadcast_polygamma", nil},
		{"chlo.broadcast_next_after", []any{1 + 0x1p-23, 2.0, 3 - 0x1p-22, 4 - 0x1p-22, 5 - 0x1p-21, 6 - 0x1p-21}},
	} {
		out, err := ewtRun(c.op, "", []xla.Shape{xla.MakeShape(xla.Float32, 2, 3)}, mat, scalar)
		require.NoError(t, err, c.op)
		if c.want == nil {
			for i, x := range []float64{1, 2, 3, 4, 5, 6} {
				assert.Equal(t, float32(special.Polygamma(x, 2)), out[0].Data.([]float32)[i], "broadcast_polygamma")
			}
			continue
		}
		ewtCheck(t, out[0], 1e-7, c.want, c.op)
	}
	out, err = ewtRun("chlo.broadcast_zeta", "", []xla.Shape{xla.MakeShape(xla.Float64, 2)}, ewtShaped(xla.Float64, nil, 2.0), ewtTensor(xla.Float64, 1.0, 2.0))
	require.NoError(t, err)
	ewtCheck(t, out[0], 1e-15, []any{math.Pi * math.Pi / 6, math.Pi*math.Pi/6 - 1}, "broadcast_zeta")
	ints := ewtTensor(xla.Int8, 1, -128, 6)
	for _, c := range []struct {
		op   string
		want []any
	}{
		{"chlo.broadcast_shift_left", []any{4, 0, 24}},
		{"chlo.broadcast_shift_right_arithmetic", []any{0, -32, 1}},
		{"chlo.broadcast_shift_right_logical", []any{0, 32, 1}},
		{"chlo.broadcast_and", []any{0, 0, 2}},
		{"chlo.broadcast_or", []any{3, -126, 6}},
		{"chlo.broadcast_xor", []any{3, -126, 4}},
	} {
		out, err := ewtRun(c.op, "", []xla.Shape{xla.MakeShape(xla.Int8, 3)}, ints, ewtShaped(xla.Int8, nil, 2))
		require.NoError(t, err, c.op)
		ewtCheck(t, out[0], 0, c.want, c.op)
	}
	out, err = ewtRun("chlo.broadcast_compare", "comparison_direction = #chlo<comparison_direction GT>, compare_type = #chlo<comparison_type TOTALORDER>",
		[]xla.Shape{xla.MakeShape(xla.Bool, 4)}, ewtTensor(xla.Float32, 0.0, ewtNegZ, ewtNaN, 1.0), ewtShaped(xla.Float32, nil, ewtNegZ))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{true, false, true, true}, "broadcast_compare TOTALORDER")
	out, err = ewtRun("chlo.broadcast_complex", "", []xla.Shape{xla.MakeShape(xla.Complex64, 2)}, ewtTensor(xla.Float32, 1.0, 2.0), ewtShaped(xla.Float32, nil, 3.0))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{complex(1, 3), complex(2, 3)}, "broadcast_complex")
	out, err = ewtRun("chlo.broadcast_select", "", []xla.Shape{xla.MakeShape(xla.Float32, 2, 2)},
		ewtShaped(xla.Bool, []int64{2, 1}, true, false), ewtTensor(xla.Float32, 1.0, 2.0), ewtShaped(xla.Float32, nil, 9.0))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{1.0, 2.0, 9.0, 9.0}, "broadcast_select")
}

func TestChloTopK(t *testing.T) {
	nan := ewtNaN
	in := ewtShaped(xla.Float32, []int64{2, 5}, 3.0, 1.0, 3.0, nan, -ewtInf, 0.0, ewtNegZ, 2.0, 2.0, -1.0)
	out, err := ewtRun("chlo.top_k", "k = 3 : i64", []xla.Shape{xla.MakeShape(xla.Float32, 2, 3), xla.MakeShape(xla.Int32, 2, 3)}, in)
	require.NoError(t, err)
	// NaN sorts above +Inf; ties keep the lower index first; +0 > -0.
	ewtCheck(t, out[0], 0, []any{nan, 3.0, 3.0, 2.0, 2.0, 0.0}, "top_k values")
	ewtCheck(t, out[1], 0, []any{3, 0, 2, 2, 3, 0}, "top_k indices")
	out, err = ewtRun("chlo.top_k", "k = 2 : i64", []xla.Shape{xla.MakeShape(xla.Uint8, 2), xla.MakeShape(xla.Int32, 2)}, ewtTensor(xla.Uint8, 7, 255, 7))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{255, 7}, "top_k u8")
	ewtCheck(t, out[1], 0, []any{1, 0}, "top_k u8 indices")
	out, err = ewtRun("chlo.top_k", "k = 0 : i64", []xla.Shape{xla.MakeShape(xla.Float64, 0), xla.MakeShape(xla.Int32, 0)}, ewtTensor(xla.Float64, 1.0))
	require.NoError(t, err)
	assert.Zero(t, out[0].Len())
	// A dynamic last dimension is named as such (it read "not in [0, -1]").
	_, err = runText(context.Background(), `func.func @main(%a: tensor<?xf32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %v, %i = chlo.top_k(%a, k = 2) : tensor<?xf32> -> (tensor<2xf32>, tensor<2xi32>)
  return %v, %i : tensor<2xf32>, tensor<2xi32>
}`, ewtTensor(xla.Float32, 1, 2, 3))
	require.ErrorContains(t, err, "dynamic last dimension")
}

func TestChloConstantLike(t *testing.T) {
	out, err := ewtRun("chlo.constant_like", "value = 2.5 : f32", []xla.Shape{xla.MakeShape(xla.Float32, 3)}, ewtTensor(xla.Float32, 0.0, 0.0, 0.0))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{2.5, 2.5, 2.5}, "f32")
	out, err = ewtRun("chlo.constant_like", "value = -3 : i8", []xla.Shape{xla.MakeShape(xla.Int8, 2)}, ewtTensor(xla.Int8, 0, 0))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{-3, -3}, "i8")
	out, err = ewtRun("chlo.constant_like", "value = 0.1 : bf16", []xla.Shape{xla.MakeShape(xla.BFloat16, 1)}, ewtTensor(xla.BFloat16, 0.0))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{float64(RoundNarrow64(xla.BFloat16, 0.1))}, "bf16 rounds")
}

// TestChloConstantLikeSplatValue: a value written as a splat stands for
// its one element, whatever its shape: a splat of 1e12 elements was
// expanded (in Compile) and took the process down. A value of several
// distinct elements is an error.
func TestChloConstantLikeSplatValue(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main() -> tensor<3xf32> {
  %a = stablehlo.constant dense<1.0> : tensor<3xf32>
  %0 = "chlo.constant_like"(%a) {value = dense<1.5> : tensor<1000000000000xf32>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	out, err := p.Run(context.Background(), Device{}, nil)
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5, 1.5, 1.5}, out[0].(*Tensor).Data)
	outs, err := ewtRun("chlo.constant_like", "value = dense<-2> : tensor<i8>", []xla.Shape{xla.MakeShape(xla.Int8, 2)}, ewtTensor(xla.Int8, 0, 0))
	require.NoError(t, err)
	ewtCheck(t, outs[0], 0, []any{-2, -2}, "one-element value")
	for _, value := range []string{"dense<[1, 2]> : tensor<2xi8>", "dense<1> : tensor<0xi8>", "dense<1> : tensor<2xi16>"} {
		_, err = ewtRun("chlo.constant_like", "value = "+value, []xla.Shape{xla.MakeShape(xla.Int8, 2)}, ewtTensor(xla.Int8, 0, 0))
		assert.ErrorContains(t, err, "must be one element", value)
	}
}

// chloRaggedRef computes ragged_dot's three modes with plain loops.
func TestChloRaggedDot(t *testing.T) {
	lhs := make([]any, 5*3) // [m=5, k=3]
	for i := range lhs {
		lhs[i] = float64(i%7) - 2
	}
	rhsG := make([]any, 2*3*2) // [g=2, k=3, n=2]
	for i := range rhsG {
		rhsG[i] = float64(i%5) + 0.5
	}
	groups := ewtTensor(xla.Int32, 2, 2) // rows 0-1 group 0, rows 2-3 group 1, row 4 none
	dims := func(lb, rb, lc, rc, lr, rg string) string {
		return "ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [" + lb + "], rhs_batching_dimensions = [" + rb +
			"], lhs_contracting_dimensions = [" + lc + "], rhs_contracting_dimensions = [" + rc + "], lhs_ragged_dimensions = [" + lr +
			"], rhs_group_dimensions = [" + rg + "]>"
	}
	// Mode 1: ragged rows (m), rhs has a group dimension.
	out, err := ewtRun("chlo.ragged_dot", dims("", "", "1", "1", "0", "0"), []xla.Shape{xla.MakeShape(xla.Float32, 5, 2)},
		ewtShaped(xla.Float32, []int64{5, 3}, lhs...), ewtShaped(xla.Float32, []int64{2, 3, 2}, rhsG...), groups)
	require.NoError(t, err)
	var want []any
	for m := 0; m < 5; m++ {
		g := m / 2
		for n := 0; n < 2; n++ {
			s := 0.0
			if g < 2 {
				for k := 0; k < 3; k++ {
					s += lhs[m*3+k].(float64) * rhsG[g*6+k*2+n].(float64)
				}
			}
			want = append(want, s)
		}
	}
	ewtCheck(t, out[0], 0, want, "ragged non-contracting")
	// Mode 2: ragged contracting dimension: lhs [k=3, m=2]^T as [m=2, k=3]
	// with k cut into groups [0,1) and [1,3); result [g, m, n].
	lhs2 := ewtShaped(xla.Float64, []int64{2, 3}, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
	rhs2 := ewtShaped(xla.Float64, []int64{3, 2}, 1.0, 10.0, 100.0, 1000.0, 1e4, 1e5)
	out, err = ewtRun("chlo.ragged_dot", dims("", "", "1", "0", "1", ""), []xla.Shape{xla.MakeShape(xla.Float64, 2, 2, 2)},
		lhs2, rhs2, ewtTensor(xla.Int64, 1, 2))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{
		1.0, 10.0, 4.0, 40.0, // group 0: k = 0
		2*100.0 + 3*1e4, 2*1000.0 + 3*1e5, 5*100.0 + 6*1e4, 5*1000.0 + 6*1e5, // group 1: k = 1, 2
	}, "ragged contracting")
	// Mode 3: ragged batch: an ordinary batched dot, zero past the groups.
	lhs3 := ewtShaped(xla.Float32, []int64{2, 1, 2}, 1.0, 2.0, 3.0, 4.0)
	rhs3 := ewtShaped(xla.Float32, []int64{2, 2, 1}, 5.0, 6.0, 7.0, 8.0)
	out, err = ewtRun("chlo.ragged_dot", dims("0", "0", "2", "1", "0", ""), []xla.Shape{xla.MakeShape(xla.Float32, 2, 1, 1)},
		lhs3, rhs3, ewtTensor(xla.Int32, 1))
	require.NoError(t, err)
	ewtCheck(t, out[0], 0, []any{17.0, 0.0}, "ragged batch")
}

// Bad element types and attributes are Compile errors naming the op and
// the reason.
func TestChloCompileErrors(t *testing.T) {
	for _, c := range []struct {
		op, attrs string
		results   []xla.Shape
		args      []*Tensor
		want      string
	}{
		{"chlo.erf", "", []xla.Shape{xla.MakeShape(xla.Int32, 1)}, []*Tensor{ewtTensor(xla.Int32, 1)}, "chlo.erf is not defined for element type"},
		{"chlo.digamma", "", []xla.Shape{xla.MakeShape(xla.Complex64, 1)}, []*Tensor{ewtTensor(xla.Complex64, complex(1, 1))}, "not defined for element type"},
		{"chlo.is_inf", "", []xla.Shape{xla.MakeShape(xla.Float32, 1)}, []*Tensor{ewtTensor(xla.Float32, 1.0)}, "result type"},
		{"chlo.asin", "", []xla.Shape{xla.MakeShape(xla.Float32, 2)}, []*Tensor{ewtTensor(xla.Float32, 1.0)}, "does not match"},
		{"chlo.zeta", "", []xla.Shape{xla.MakeShape(xla.Int32, 1)}, []*Tensor{ewtTensor(xla.Int32, 1), ewtTensor(xla.Int32, 1)}, "not defined for element type"},
		{"chlo.next_after", "", []xla.Shape{xla.MakeShape(xla.Float8E4M3FN, 1)}, []*Tensor{ewtTensor(xla.Float8E4M3FN, 1.0), ewtTensor(xla.Float8E4M3FN, 1.0)}, "not defined"},
		{"chlo.top_k", "k = 4 : i64", []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Int32, 4)}, []*Tensor{ewtTensor(xla.Float32, 1.0, 2.0)}, "k = 4 is not in [0, 2]"},
		{"chlo.top_k", "", []xla.Shape{xla.MakeShape(xla.Float32, 1), xla.MakeShape(xla.Int32, 1)}, []*Tensor{ewtTensor(xla.Float32, 1.0, 2.0)}, "k must be an integer"},
		{"chlo.top_k", "k = 1 : i64", []xla.Shape{xla.MakeShape(xla.Float32, 1), xla.MakeShape(xla.Int64, 1)}, []*Tensor{ewtTensor(xla.Float32, 1.0, 2.0)}, "result 1"},
		{"chlo.broadcast_add", "", []xla.Shape{xla.MakeShape(xla.Float32, 3)}, []*Tensor{ewtTensor(xla.Float32, 1.0, 2.0), ewtTensor(xla.Float32, 1.0)}, "does not broadcast"},
		{"chlo.broadcast_add", "broadcast_dimensions = array<i64: 5>", []xla.Shape{xla.MakeShape(xla.Float32, 2, 2)}, []*Tensor{ewtTensor(xla.Float32, 1.0, 2.0), ewtShaped(xla.Float32, []int64{2, 2}, 1.0, 2.0, 3.0, 4.0)}, "out of range"},
		{"chlo.broadcast_compare", "", []xla.Shape{xla.MakeShape(xla.Bool, 1)}, []*Tensor{ewtTensor(xla.Float32, 1.0), ewtTensor(xla.Float32, 1.0)}, "comparison_direction"},
		{"chlo.broadcast_and", "", []xla.Shape{xla.MakeShape(xla.Float32, 1)}, []*Tensor{ewtTensor(xla.Float32, 1.0), ewtTensor(xla.Float32, 1.0)}, "not defined for element type"},
		{"chlo.constant_like", "value = 1.5 : f32", []xla.Shape{xla.MakeShape(xla.Int32, 1)}, []*Tensor{ewtTensor(xla.Int32, 1)}, "value"},
		{"chlo.constant_like", "", []xla.Shape{xla.MakeShape(xla.Int32, 1)}, []*Tensor{ewtTensor(xla.Int32, 1)}, "missing value"},
		{"chlo.ragged_dot", "ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = []>",
			[]xla.Shape{xla.MakeShape(xla.Float32, 2, 2)}, []*Tensor{ewtShaped(xla.Float32, []int64{2, 2}, 1.0, 1.0, 1.0, 1.0), ewtShaped(xla.Float32, []int64{1, 2, 2}, 1.0, 1.0, 1.0, 1.0), ewtTensor(xla.Int32, 2)}, "rhs_group_dimensions"},
	} {
		_, err := ewtRun(c.op, c.attrs, c.results, c.args...)
		require.Error(t, err, c.op)
		assert.Contains(t, err.Error(), c.op, "the error names the op")
		assert.Contains(t, err.Error(), c.want)
		assert.False(t, strings.Contains(err.Error(), "parse:"), "a Compile error, not a parse error: %v", err)
	}
}

// TestChloTopKPaths: the heap (small k) and the sort (large k) agree with
// a plain stable sort of the row, ties (many equal keys) included.
func TestChloTopKPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for _, n := range []int{1, 7, 64, 1000} {
		for _, k := range []int{0, 1, 3, n / 8, n/8 + 1, n / 2, n} {
			if k > n {
				continue
			}
			const rows = 3
			a := make([]int16, rows*n)
			for i := range a {
				a[i] = int16(rng.IntN(5)) // many ties
			}
			vals, idx := make([]int16, rows*k), make([]int32, rows*k)
			require.True(t, chloTopK(a, vals, idx, rows, n, k, nil, func(v int16) int16 { return v }))
			for r := 0; r < rows; r++ {
				row := a[r*n : (r+1)*n]
				want := make([]int, n)
				for i := range want {
					want[i] = i
				}
				sort.SliceStable(want, func(p, q int) bool { return row[want[p]] > row[want[q]] })
				for j := 0; j < k; j++ {
					require.Equal(t, int32(want[j]), idx[r*k+j], "n=%d k=%d row %d position %d", n, k, r, j)
					require.Equal(t, row[want[j]], vals[r*k+j])
				}
			}
		}
	}
}
