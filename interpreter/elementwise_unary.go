package interpreter

import (
	"fmt"
	"math"
	"math/bits"
	"math/cmplx"

	"github.com/halo-ml/halo/internal/special"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Unary elementwise ops. Floats are computed in float64 and rounded to the
// element type (float32 first for the narrow types, as XLA computes them in
// float32); complex<f32> is computed in complex128. abs, real and imag of a
// complex tensor give its part type; is_finite gives booleans.

type ewUnOp uint8

const (
	unAbs ewUnOp = iota
	unCbrt
	unCeil
	unClz
	unCos
	unExp
	unExpm1
	unFloor
	unImag
	unIsFinite
	unLog
	unLog1p
	unLogistic
	unNeg
	unNot
	unPopcnt
	unReal
	unRoundAfz
	unRoundEven
	unRsqrt
	unSign
	unSin
	unSqrt
	unSquare
	unTan
	unTanh
)

var ewUnaryOps = map[string]ewUnOp{
	"stablehlo.abs":                   unAbs,
	"stablehlo.cbrt":                  unCbrt,
	"stablehlo.ceil":                  unCeil,
	"stablehlo.count_leading_zeros":   unClz,
	"stablehlo.cosine":                unCos,
	"stablehlo.exponential":           unExp,
	"stablehlo.exponential_minus_one": unExpm1,
	"stablehlo.floor":                 unFloor,
	"stablehlo.imag":                  unImag,
	"stablehlo.is_finite":             unIsFinite,
	"stablehlo.log":                   unLog,
	"stablehlo.log_plus_one":          unLog1p,
	"stablehlo.logistic":              unLogistic,
	"stablehlo.negate":                unNeg,
	"stablehlo.not":                   unNot,
	"stablehlo.popcnt":                unPopcnt,
	"stablehlo.real":                  unReal,
	"stablehlo.round_nearest_afz":     unRoundAfz,
	"stablehlo.round_nearest_even":    unRoundEven,
	"stablehlo.rsqrt":                 unRsqrt,
	"stablehlo.sign":                  unSign,
	"stablehlo.sine":                  unSin,
	"stablehlo.sqrt":                  unSqrt,
	"stablehlo.square":                unSquare,
	"stablehlo.tan":                   unTan,
	"stablehlo.tanh":                  unTanh,
}

func init() {
	for name, code := range ewUnaryOps {
		registerInPlaceKernel(name, ewUnaryKernel(code))
	}
}

// ewUnaryResultType is the result element type of code applied to dt.
func ewUnaryResultType(code ewUnOp, dt xla.DType) xla.DType {
	switch code {
	case unIsFinite:
		return xla.Bool
	case unAbs, unReal, unImag:
		if dt.IsComplex() {
			return dt.ComplexElem()
		}
	}
	return dt
}

func ewUnaryKernel(code ewUnOp) Kernel {
	return func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("takes 1 operand, got %d", len(args))
		}
		a, err := ewTensor(args, 0)
		if err != nil {
			return nil, err
		}
		dt := a.Shape.DType
		want := xla.Shape{DType: ewUnaryResultType(code, dt), Dims: a.Shape.Dims}
		out, err := ewResultInPlace(x, op, want.DType, want, "")
		if err != nil {
			return nil, err
		}
		if code == unIsFinite && !dt.IsFloat() {
			return nil, ewDTypeError(op, dt)
		}
		var ok bool
		switch ad := a.Data.(type) {
		case []bool:
			if code == unNot {
				ewRun1(out.Data.([]bool), ad, func(d, a []bool) {
					for i, v := range a {
						d[i] = !v
					}
				})
				ok = true
			}
		case []int8:
			ok = ewIntUnary(code, dt, out.Data.([]int8), ad)
		case []int16:
			ok = ewIntUnary(code, dt, out.Data.([]int16), ad)
		case []int32:
			ok = ewIntUnary(code, dt, out.Data.([]int32), ad)
		case []int64:
			ok = ewIntUnary(code, dt, out.Data.([]int64), ad)
		case []uint8:
			ok = ewIntUnary(code, dt, out.Data.([]uint8), ad)
		case []uint16:
			ok = ewIntUnary(code, dt, out.Data.([]uint16), ad)
		case []uint32:
			ok = ewIntUnary(code, dt, out.Data.([]uint32), ad)
		case []uint64:
			ok = ewIntUnary(code, dt, out.Data.([]uint64), ad)
		case []float32:
			ok = ewFloatUnary(code, dt, out, ad)
		case []float64:
			ok = ewFloatUnary(code, dt, out, ad)
		case []complex64:
			ok = ewComplexUnary(code, out, ad)
		case []complex128:
			ok = ewComplexUnary(code, out, ad)
		}
		if !ok {
			return nil, ewDTypeError(op, dt)
		}
		return []Value{out}, nil
	}
}

func ewIntUnary[T ewInt](code ewUnOp, dt xla.DType, d, a []T) bool {
	if !dt.IsInt() {
		return false
	}
	signed := !dt.IsUnsigned()
	width, sub := ewIntWidth(dt, ewStorageBits[T]())
	mask := ^uint64(0)
	if width < 64 {
		mask = uint64(1)<<width - 1
	}
	var body func(d, a []T)
	switch code {
	case unAbs:
		body = func(d, a []T) {
			for i, v := range a {
				if v < 0 {
					v = -v // MinInt stays MinInt
				}
				d[i] = v
			}
		}
	case unNeg:
		body = func(d, a []T) {
			for i, v := range a {
				d[i] = -v
			}
		}
	case unNot:
		body = func(d, a []T) {
			for i, v := range a {
				d[i] = ^v
			}
		}
	case unSign:
		body = func(d, a []T) {
			for i, v := range a {
				switch {
				case v < 0:
					d[i] = ^T(0) // -1
				case v == 0:
					d[i] = 0
				default:
					d[i] = 1
				}
			}
		}
	case unClz:
		body = func(d, a []T) {
			for i, v := range a {
				d[i] = T(int(width) - bits.Len64(uint64(v)&mask))
			}
		}
	case unPopcnt:
		body = func(d, a []T) {
			for i, v := range a {
				d[i] = T(bits.OnesCount64(uint64(v) & mask))
			}
		}
	default:
		return false
	}
	ewRunPost1(ewPost{wrap: sub, width: width, signed: signed}, d, a, body)
	return true
}

// ewFloatFunc is the float64 function of a float unary op, or nil.
func ewFloatFunc(code ewUnOp) func(float64) float64 {
	switch code {
	case unAbs:
		return math.Abs
	case unCbrt:
		return math.Cbrt
	case unCeil:
		return math.Ceil
	case unCos:
		return math.Cos
	case unExp:
		return special.RealExp
	case unExpm1:
		return math.Expm1
	case unFloor:
		return math.Floor
	case unImag:
		return func(float64) float64 { return 0 }
	case unLog:
		return special.RealLog
	case unLog1p:
		return math.Log1p
	case unLogistic:
		return ewLogistic
	case unNeg:
		return func(v float64) float64 { return -v }
	case unReal:
		return func(v float64) float64 { return v }
	case unRoundAfz:
		return math.Round
	case unRoundEven:
		return math.RoundToEven
	case unRsqrt:
		return func(v float64) float64 { return 1 / math.Sqrt(v) }
	case unSign:
		return ewFloatSign
	case unSin:
		return math.Sin
	case unSqrt:
		return math.Sqrt
	case unSquare:
		return func(v float64) float64 { return v * v }
	case unTan:
		return math.Tan
	case unTanh:
		return math.Tanh
	}
	return nil
}

// ewLogistic is 1 / (1 + exp(-v)).
func ewLogistic(v float64) float64 {
	if v < 0 {
		e := math.Exp(v) // no overflow for large negative v
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(-v))
}

// ewFloatSign is -1, -0, +0, 1 or NaN.
func ewFloatSign(v float64) float64 {
	switch {
	case v != v, v == 0:
		return v
	case v < 0:
		return -1
	}
	return 1
}

func ewFloatUnary[T ewFloat](code ewUnOp, dt xla.DType, out *Tensor, a []T) bool {
	if code == unIsFinite {
		ewRun1(out.Data.([]bool), a, func(d []bool, a []T) {
			for i, v := range a {
				f := float64(v)
				d[i] = !math.IsInf(f, 0) && f == f
			}
		})
		return true
	}
	d := out.Data.([]T)
	var body func(d, a []T)
	switch code {
	// The common ones get their own loops; the rest call their function.
	case unNeg:
		body = func(d, a []T) {
			for i, v := range a {
				d[i] = -v
			}
		}
	case unAbs:
		body = func(d, a []T) {
			for i, v := range a {
				d[i] = T(math.Abs(float64(v)))
			}
		}
	case unExp:
		body = func(d, a []T) {
			for i, v := range a {
				d[i] = T(special.RealExp(float64(v)))
			}
		}
	case unSqrt:
		body = func(d, a []T) {
			for i, v := range a {
				d[i] = T(math.Sqrt(float64(v)))
			}
		}
	default:
		f := ewFloatFunc(code)
		if f == nil {
			return false
		}
		ewRunFunc1(ewFloatPost(dt), d, a, f)
		return true
	}
	ewRunPost1(ewFloatPost(dt), d, a, body)
	return true
}

// ewRunFunc1 sets d[i] = f(a[i]) computed in float64, then applies p.
func ewRunFunc1[T ewFloat](p ewPost, d, a []T, f func(float64) float64) {
	body := func(d, a []T) {
		for i, v := range a {
			d[i] = T(f(float64(v)))
		}
	}
	if len(d) < ewBlock {
		body(d, a)
		ewApply(p, d)
		return
	}
	ewRunPost1(p, d, a, body)
}

// ewComplexFunc is the complex128 function of a complex unary op whose
// result is complex, or nil.
func ewComplexFunc(code ewUnOp) func(complex128) complex128 {
	switch code {
	case unCbrt:
		return ewCCbrt
	case unCos:
		return special.Cos
	case unExp:
		return special.Exp
	case unExpm1:
		return ewCExpm1
	case unLog:
		return special.Log
	case unLog1p:
		return ewCLog1p
	case unLogistic:
		return func(z complex128) complex128 { return 1 / (1 + special.Exp(-z)) }
	case unNeg:
		return func(z complex128) complex128 { return -z }
	case unRsqrt:
		return func(z complex128) complex128 { return 1 / special.Sqrt(z) }
	case unSign:
		return ewCSign
	case unSin:
		return special.Sin
	case unSqrt:
		return special.Sqrt // scales tiny parts (cmplx.Sqrt loses subnormals)
	case unSquare:
		return ewCSquare
	case unTan:
		return special.Tan
	case unTanh:
		return special.Tanh
	}
	return nil
}

// ewCSquare is z*z with the real part (re-im)(re+im), exactly zero when
// |re| == |im| is finite (so (1e308, 1e308) squares to (0, +Inf), not NaN).
func ewCSquare(z complex128) complex128 {
	re, im := real(z), imag(z)
	r := (re - im) * (re + im)
	if math.Abs(re) == math.Abs(im) && !math.IsInf(re, 0) {
		r = 0
	}
	// 2·re·im doubled last: (2·re)·im overflowed for |re| past half the
	// largest float, and doubling a product is exact (unless it overflows).
	return complex(r, re*im*2)
}

// ewCCbrt is the principal cube root.
func ewCCbrt(z complex128) complex128 {
	if z == 0 {
		return z
	}
	return ewCPow(z, 1.0/3)
}

// ewCExpm1 is exp(z) - 1 without cancellation near 0:
// (expm1(x)·cos(y) - 2·sin²(y/2)) + i·exp(x)·sin(y), the imaginary part
// and, past x = 700 (where the 1 no longer counts), the real part those
// of special.Exp (1000+0i gives +Inf+0i, not NaN).
func ewCExpm1(z complex128) complex128 {
	x, y := real(z), imag(z)
	e := special.Exp(z)
	if x > 700 || x < -40 {
		// The 1 no longer counts, or e^x is below e^-40 (-Inf+i·Inf is
		// -1+0i, as exp's 0+0i, not the NaN of expm1(-Inf)·cos(Inf)).
		return complex(real(e)-1, imag(e))
	}
	s := math.Sin(y / 2)
	return complex(math.Expm1(x)*math.Cos(y)-2*s*s, imag(e))
}

// ewCLog1p is log(1 + z) without cancellation near 0:
// log|1+z| = log1p(2x + x² + y²)/2 and arg(1+z) = atan2(y, 1+x).
func ewCLog1p(z complex128) complex128 {
	x, y := real(z), imag(z)
	var re float64
	if m := math.Abs(x) + math.Abs(y); m < 0.5 {
		re = math.Log1p(x*(2+x)+y*y) / 2
	} else {
		re = special.LogHypot(1+x, y)
	}
	return complex(re, special.Atan2(y, 1+x))
}

// ewCSign is z/|z|, 0 for 0 and (NaN, NaN) when a part is NaN.
func ewCSign(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case x != x || y != y:
		return complex(math.NaN(), math.NaN())
	case z == 0:
		return 0
	}
	if math.IsInf(x, 0) || math.IsInf(y, 0) {
		// An infinite part: the direction is given by the infinite parts.
		x, y = ewInfUnit(x), ewInfUnit(y)
	} else if m := max(math.Abs(x), math.Abs(y)); m > 0x1p1000 || m < 0x1p-1000 {
		// Scaled by a power of two (exactly): |z| would overflow, or
		// lose bits as a subnormal.
		k := math.Ilogb(m)
		x, y = math.Ldexp(x, -k), math.Ldexp(y, -k)
	}
	a := math.Hypot(x, y)
	return complex(x/a, y/a)
}

// ewInfUnit maps ±Inf to ±1 and finite values to 0.
func ewInfUnit(v float64) float64 {
	if math.IsInf(v, 0) {
		return math.Copysign(1, v)
	}
	return 0
}

func ewComplexUnary[T ewComplex](code ewUnOp, out *Tensor, a []T) bool {
	switch code {
	case unAbs, unReal, unImag:
		part := func(z complex128) float64 {
			switch code {
			case unAbs:
				return cmplx.Abs(z)
			case unReal:
				return real(z)
			}
			return imag(z)
		}
		switch d := out.Data.(type) {
		case []float32:
			ewRun1(d, a, func(d []float32, a []T) {
				for i, v := range a {
					d[i] = float32(part(complex128(v)))
				}
			})
		case []float64:
			ewRun1(d, a, func(d []float64, a []T) {
				for i, v := range a {
					d[i] = part(complex128(v))
				}
			})
		default:
			return false
		}
		return true
	}
	f := ewComplexFunc(code)
	if f == nil {
		return false
	}
	ewRun1(out.Data.([]T), a, func(d, a []T) {
		for i, v := range a {
			d[i] = T(f(complex128(v)))
		}
	})
	return true
}
