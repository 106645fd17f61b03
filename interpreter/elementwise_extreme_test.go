package interpreter

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/xla"
)

// ewExtremeRun runs op on f64 or complex128 operands and returns the
// result's elements as complex128.
func ewExtremeRun(t *testing.T, op, et string, args ...[]complex128) []complex128 {
	t.Helper()
	n := len(args[0])
	typ := fmt.Sprintf("tensor<%dx%s>", n, et)
	params, names := "", ""
	in := make([]Value, len(args))
	for i, a := range args {
		if i > 0 {
			params += ", "
			names += ", "
		}
		params += fmt.Sprintf("%%a%d: %s", i, typ)
		names += fmt.Sprintf("%%a%d", i)
		if et == "f64" {
			x := NewTensor(xla.MakeShape(xla.Float64, int64(n)))
			for j, v := range a {
				x.Data.([]float64)[j] = real(v)
			}
			in[i] = x
		} else {
			x := NewTensor(xla.MakeShape(xla.Complex128, int64(n)))
			copy(x.Data.([]complex128), a)
			in[i] = x
		}
	}
	out := shpRun(t, fmt.Sprintf(`func.func @main(%s) -> %s {
  %%0 = %s %s : %s
  return %%0 : %s
}`, params, typ, op, names, typ, typ), in...)
	res := out[0].(*Tensor)
	got := make([]complex128, n)
	for j := range got {
		switch d := res.Data.(type) {
		case []float64:
			got[j] = complex(d[j], 0)
		case []complex128:
			got[j] = d[j]
		}
	}
	return got
}

func assertComplexNear(t *testing.T, want, got complex128, what string) {
	t.Helper()
	for _, p := range [][2]float64{{real(want), real(got)}, {imag(want), imag(got)}} {
		if math.IsNaN(p[0]) || math.IsInf(p[0], 0) || p[0] == 0 {
			assert.Equal(t, p[0], p[1], "%s: want %v, got %v", what, want, got)
			continue
		}
		assert.InEpsilon(t, p[0], p[1], 1e-13, "%s: want %v, got %v", what, want, got)
	}
}

// Elementwise math at the ends of the f64 range (found in review): exp
// finite up to ln(MaxFloat64) (Go's amd64 math.Exp overflowed from
// 709.44), pow of subnormal bases (math.Log of subnormals is off), complex
// log, sign, log1p, cbrt and power of huge or subnormal moduli (|z|
// overflowed or lost bits), expm1 at -Inf, and infinite real bases.
func TestElementwiseExtremes(t *testing.T) {
	got := ewExtremeRun(t, "stablehlo.exponential", "f64", []complex128{709.5, 709.7})
	assertComplexNear(t, 1.3549863193146328e308, got[0], "exp(709.5)")
	assertComplexNear(t, 1.6549840276802644e308, got[1], "exp(709.7)")
	got = ewExtremeRun(t, "stablehlo.power", "f64", []complex128{5e-324, 1e-310}, []complex128{1.0 / 3, 0.25})
	assertComplexNear(t, 1.7031839360032603e-108, got[0], "5e-324^(1/3)")
	assertComplexNear(t, complex(math.Sqrt(math.Sqrt(1e-310)), 0), got[1], "1e-310^0.25")

	c := "complex<f64>"
	assertComplexNear(t, 1.3549863193146328e308, ewExtremeRun(t, "stablehlo.exponential", c, []complex128{709.5})[0], "exp(709.5+0i)")
	assertComplexNear(t, 1.3549863193146328e308, ewExtremeRun(t, "stablehlo.exponential_minus_one", c, []complex128{709.5})[0], "expm1(709.5+0i)")
	assertComplexNear(t, 1/(1+1.3549863193146328e308), ewExtremeRun(t, "stablehlo.logistic", c, []complex128{-709.5})[0], "logistic(-709.5+0i)")
	assertComplexNear(t, 1.7031839360032603e-108, ewExtremeRun(t, "stablehlo.cbrt", c, []complex128{5e-324})[0], "cbrt(5e-324+0i)")
	assertComplexNear(t, complex(math.Ldexp(1, -268)/math.Pow(2, 0.5), 0), ewExtremeRun(t, "stablehlo.power", c, []complex128{5e-324}, []complex128{0.25})[0], "(5e-324)^0.25")

	huge := []complex128{complex(1.5e308, 1.5e308), complex(-1.7e308, 1e308)}
	logs := ewExtremeRun(t, "stablehlo.log", c, huge)
	assertComplexNear(t, complex(math.Log(1.5e308)+0.5*math.Ln2, math.Pi/4), logs[0], "log(1.5e308+1.5e308i)")
	assertComplexNear(t, complex(math.Log(1e308)+0.5*math.Log(1.7*1.7+1), math.Atan2(1, -1.7)), logs[1], "log(-1.7e308+1e308i)")
	signs := ewExtremeRun(t, "stablehlo.sign", c, huge)
	assertComplexNear(t, complex(math.Sqrt2/2, math.Sqrt2/2), signs[0], "sign(1.5e308+1.5e308i)")
	h := math.Hypot(1.7, 1)
	assertComplexNear(t, complex(-1.7/h, 1/h), signs[1], "sign(-1.7e308+1e308i)")
	assertComplexNear(t, complex(math.Log(1.5e308)+0.5*math.Ln2, math.Pi/4), ewExtremeRun(t, "stablehlo.log_plus_one", c, huge[:1])[0], "log1p(1.5e308+1.5e308i)")
	root := ewExtremeRun(t, "stablehlo.cbrt", c, huge[:1])[0]
	assertComplexNear(t, complex(math.Cbrt(1.5e308)*math.Cbrt(math.Sqrt2), 0), complex(cmplx.Abs(root), 0), "|cbrt(1.5e308+1.5e308i)|")
	sq := ewExtremeRun(t, "stablehlo.power", c, huge[:1], []complex128{0.5})[0]
	assertComplexNear(t, cmplx.Sqrt(complex(1.5, 1.5))*1e154, sq, "(1.5e308+1.5e308i)^0.5")

	tiny := []complex128{complex(1e-320, 1e-320)}
	assertComplexNear(t, complex(special.RealLog(1e-320)+0.5*math.Ln2, math.Pi/4), ewExtremeRun(t, "stablehlo.log", c, tiny)[0], "log(1e-320+1e-320i)")
	assertComplexNear(t, complex(math.Sqrt2/2, math.Sqrt2/2), ewExtremeRun(t, "stablehlo.sign", c, tiny)[0], "sign(1e-320+1e-320i)")

	small := complex(1.5*math.Ldexp(1, -1025), 1.5*math.Ldexp(1, -1025)) // |a| just above 2^-1024
	assertComplexNear(t, 1/small, ewExtremeRun(t, "stablehlo.power", c, []complex128{small}, []complex128{-1})[0], "(1.5·2^-1025 (1+i))^-1")

	inf, nan := math.Inf(1), math.NaN()
	for _, z := range []complex128{complex(-inf, inf), complex(-inf, nan)} {
		got := ewExtremeRun(t, "stablehlo.exponential_minus_one", c, []complex128{z})[0]
		assert.Equal(t, -1.0, real(got), "expm1(%v) = %v", z, got)
		assert.Equal(t, 0.0, math.Abs(imag(got)), "expm1(%v) = %v", z, got)
	}
	assert.Equal(t, complex(inf, 0), ewExtremeRun(t, "stablehlo.power", c, []complex128{complex(inf, 0)}, []complex128{1})[0], "(Inf+0i)^1")
	assert.Equal(t, complex(inf, 0), ewExtremeRun(t, "stablehlo.cbrt", c, []complex128{complex(inf, 0)})[0], "cbrt(Inf+0i)")
}
