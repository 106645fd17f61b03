package interpreter

import (
	"fmt"
	"math"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// CHLO ops are evaluated directly (not decomposed into StableHLO): every
// element is computed in float64 by internal/special or math and rounded
// once to the element type (f16, bf16 and the other narrow floats round
// straight from float64, so a correctly rounded float64 value gives a
// correctly rounded narrow result); complex64 is computed in complex128.
// The special values follow CHLO's definitions (see internal/special):
// digamma is -Inf at ±0 and NaN at negative integers, zeta is NaN for
// x < 1, lgamma(±Inf) = +Inf, and the complex functions follow C99
// Annex G, with branch cuts on the side given by the sign of a zero.
//
// Every CHLO op's operand and result types and attributes are checked at
// Compile time (RegisterOpCheck); the kernels check them again on the
// tensors they get.

// chloUnary describes one elementwise unary CHLO op.
type chloUnary struct {
	real  func(float64) float64       // nil: not defined on floats
	cplx  func(complex128) complex128 // nil: not defined on complex
	ints  bool                        // defined on integers (square)
	isInf func(float64) bool          // the is_*inf predicates (result i1)
}

var chloUnaryOps = map[string]chloUnary{
	"chlo.erf":        {real: math.Erf},
	"chlo.erfc":       {real: math.Erfc},
	"chlo.erf_inv":    {real: special.ErfInv},
	"chlo.lgamma":     {real: special.Lgamma},
	"chlo.digamma":    {real: special.Digamma},
	"chlo.bessel_i1e": {real: special.BesselI1e},
	"chlo.tan":        {real: math.Tan, cplx: special.Tan},
	"chlo.sinh":       {real: special.RealSinh, cplx: special.Sinh},
	"chlo.cosh":       {real: special.RealCosh, cplx: special.Cosh},
	"chlo.asin":       {real: special.RealAsin, cplx: special.Asin},
	"chlo.acos":       {real: special.RealAcos, cplx: special.Acos},
	"chlo.atan":       {real: math.Atan, cplx: special.Atan},
	"chlo.asinh":      {real: math.Asinh, cplx: special.Asinh},
	"chlo.acosh":      {real: math.Acosh, cplx: special.Acosh},
	"chlo.atanh":      {real: math.Atanh, cplx: special.Atanh},
	"chlo.conj":       {real: func(v float64) float64 { return v }, cplx: chloConj},
	"chlo.square":     {real: func(v float64) float64 { return v * v }, cplx: ewCSquare, ints: true},
	"chlo.is_inf":     {isInf: func(v float64) bool { return math.IsInf(v, 0) }},
	"chlo.is_neg_inf": {isInf: func(v float64) bool { return math.IsInf(v, -1) }},
	"chlo.is_pos_inf": {isInf: func(v float64) bool { return math.IsInf(v, 1) }},
}

// chloBinaryOps are the elementwise binary CHLO ops on floats (operands
// and result of one type).
var chloBinaryOps = map[string]func(float64, float64) float64{
	"chlo.polygamma": special.Polygamma,
	"chlo.zeta":      special.Zeta,
	"chlo.igamma":    special.Igamma,
	"chlo.igammac":   special.Igammac,
	"chlo.next_after": func(x, y float64) float64 {
		return special.Nextafter64(x, y) // float64 only; narrow types step their own codes
	},
}

func init() {
	for name, u := range chloUnaryOps {
		u := u
		if u.isInf != nil {
			registerKernel(name, chloUnaryKernel(u))
		} else {
			registerInPlaceKernel(name, chloUnaryKernel(u))
		}
		mustRegister(RegisterOpCheck(name, func(op *stablehlo.Op) error { return chloCheckUnary(op, u) }))
	}
	for name, f := range chloBinaryOps {
		registerInPlaceKernel(name, chloBinaryKernel(name, f))
		mustRegister(RegisterOpCheck(name, chloCheckBinaryFloat))
	}
}

func chloConj(z complex128) complex128 { return complex(real(z), -imag(z)) }

// chloOperandTypes returns op's operand tensor types (from the IR).
func chloOperandTypes(op *stablehlo.Op, n int) ([]stablehlo.TensorType, error) {
	if len(op.Operands) != n {
		return nil, fmt.Errorf("takes %d operands, got %d", n, len(op.Operands))
	}
	out := make([]stablehlo.TensorType, n)
	for i, v := range op.Operands {
		t, ok := v.Type.(stablehlo.TensorType)
		if !ok {
			return nil, fmt.Errorf("operand %d is %v, not a tensor", i, v.Type)
		}
		out[i] = t
	}
	return out, nil
}

// chloSameDims reports whether two tensor types have equal dimensions.
func chloSameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// chloUnaryAccepts reports whether u is defined on element type dt.
func chloUnaryAccepts(u chloUnary, dt xla.DType) bool {
	switch {
	case dt.IsFloat():
		return u.real != nil || u.isInf != nil
	case dt.IsComplex():
		return u.cplx != nil
	case dt.IsInt():
		return u.ints
	}
	return false
}

func chloCheckUnary(op *stablehlo.Op, u chloUnary) error {
	ts, err := chloOperandTypes(op, 1)
	if err != nil {
		return err
	}
	if len(op.Results) != 1 {
		return fmt.Errorf("has %d results, want 1", len(op.Results))
	}
	rt, err := ResultTensorType(op, 0)
	if err != nil {
		return err
	}
	dt := ts[0].DType
	if !chloUnaryAccepts(u, dt) {
		return ewDTypeError(op, dt)
	}
	want := dt
	if u.isInf != nil {
		want = xla.Bool
	}
	if rt.DType != want || !chloSameDims(rt.Dims, ts[0].Dims) {
		return fmt.Errorf("result type %v does not match the operand type %v (want %v elements)", rt, ts[0], want)
	}
	return nil
}

func chloCheckBinaryFloat(op *stablehlo.Op) error {
	ts, err := chloOperandTypes(op, 2)
	if err != nil {
		return err
	}
	if len(op.Results) != 1 {
		return fmt.Errorf("has %d results, want 1", len(op.Results))
	}
	rt, err := ResultTensorType(op, 0)
	if err != nil {
		return err
	}
	if ts[0].DType != ts[1].DType || !chloSameDims(ts[0].Dims, ts[1].Dims) {
		return fmt.Errorf("operands have different types %v and %v", ts[0], ts[1])
	}
	if dt := ts[0].DType; !dt.IsFloat() || (op.Name == "chlo.next_after" && !chloNextAfterType(dt)) {
		return ewDTypeError(op, dt)
	}
	if rt.DType != ts[0].DType || !chloSameDims(rt.Dims, ts[0].Dims) {
		return fmt.Errorf("result type %v does not match the operand type %v", rt, ts[0])
	}
	return nil
}

// chloNextAfterType reports whether next_after is defined on dt: the IEEE
// formats with a sign bit and infinities.
func chloNextAfterType(dt xla.DType) bool {
	switch dt {
	case xla.Float16, xla.BFloat16, xla.Float32, xla.Float64:
		return true
	}
	return false
}

// chloRound returns the function that rounds a float64 result to dt as
// stored in float32 (once: straight from float64).
func chloRound(dt xla.DType) func(float64) float32 {
	if dt == xla.Float32 {
		return func(v float64) float32 { return float32(v) }
	}
	return func(v float64) float32 { return RoundNarrow64(dt, v) }
}

func chloUnaryKernel(u chloUnary) Kernel {
	return func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("takes 1 operand, got %d", len(args))
		}
		a, err := ewTensor(args, 0)
		if err != nil {
			return nil, err
		}
		dt := a.Shape.DType
		if !chloUnaryAccepts(u, dt) {
			return nil, ewDTypeError(op, dt)
		}
		rdt := dt
		if u.isInf != nil {
			rdt = xla.Bool
		}
		var out *Tensor
		if u.isInf != nil {
			out, err = ewResultOf(op, 0, rdt, a.Shape, "the operand's ")
		} else {
			out, err = ewResultInPlace(x, op, rdt, a.Shape, "the operand's ")
		}
		if err != nil {
			return nil, err
		}
		n := a.Len()
		switch ad := a.Data.(type) {
		case []float32:
			if u.isInf != nil {
				d := out.Data.([]bool)
				ewSplit(n, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						d[i] = u.isInf(float64(ad[i]))
					}
				})
				break
			}
			d, f, round := out.Data.([]float32), u.real, chloRound(dt)
			ewSplit(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					d[i] = round(f(float64(ad[i])))
				}
			})
		case []float64:
			if u.isInf != nil {
				d := out.Data.([]bool)
				ewSplit(n, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						d[i] = u.isInf(ad[i])
					}
				})
				break
			}
			d, f := out.Data.([]float64), u.real
			ewSplit(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					d[i] = f(ad[i])
				}
			})
		case []complex64:
			d, f := out.Data.([]complex64), u.cplx
			ewSplit(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					d[i] = complex64(f(complex128(ad[i])))
				}
			})
		case []complex128:
			d, f := out.Data.([]complex128), u.cplx
			ewSplit(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					d[i] = f(ad[i])
				}
			})
		case []int8:
			chloSquareInt(dt, out.Data.([]int8), ad)
		case []int16:
			chloSquareInt(dt, out.Data.([]int16), ad)
		case []int32:
			chloSquareInt(dt, out.Data.([]int32), ad)
		case []int64:
			chloSquareInt(dt, out.Data.([]int64), ad)
		case []uint8:
			chloSquareInt(dt, out.Data.([]uint8), ad)
		case []uint16:
			chloSquareInt(dt, out.Data.([]uint16), ad)
		case []uint32:
			chloSquareInt(dt, out.Data.([]uint32), ad)
		case []uint64:
			chloSquareInt(dt, out.Data.([]uint64), ad)
		default:
			return nil, ewDTypeError(op, dt)
		}
		return []Value{out}, nil
	}
}

// chloSquareInt is x·x wrapping around like multiply.
func chloSquareInt[T ewInt](dt xla.DType, d, a []T) {
	ewRunPost1(ewIntPost[T](dt), d, a, func(d, a []T) {
		for i, v := range a {
			d[i] = v * v
		}
	})
}

func chloBinaryKernel(name string, f func(float64, float64) float64) Kernel {
	return func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		a, b, out, err := ewBinaryOperands(x, op, args)
		if err != nil {
			return nil, err
		}
		dt := a.Shape.DType
		if !dt.IsFloat() || (name == "chlo.next_after" && !chloNextAfterType(dt)) {
			return nil, ewDTypeError(op, dt)
		}
		n := a.Len()
		switch ad := a.Data.(type) {
		case []float32:
			bd, d := b.Data.([]float32), out.Data.([]float32)
			if name == "chlo.next_after" {
				ewSplit(n, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						d[i] = chloNextAfter32(dt, ad[i], bd[i])
					}
				})
				break
			}
			round := chloRound(dt)
			ewSplit(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					d[i] = round(f(float64(ad[i]), float64(bd[i])))
				}
			})
		case []float64:
			bd, d := b.Data.([]float64), out.Data.([]float64)
			ewSplit(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					d[i] = f(ad[i], bd[i])
				}
			})
		default:
			return nil, ewDTypeError(op, dt)
		}
		return []Value{out}, nil
	}
}

// chloNextAfter32 is nextafter in type dt (f32, f16 or bf16) of values
// stored as float32: f16 and bf16 step their own 16-bit codes.
func chloNextAfter32(dt xla.DType, x, y float32) float32 {
	if dt == xla.Float32 {
		return special.Nextafter32(x, y)
	}
	switch {
	case x != x || y != y:
		return float32(math.NaN())
	case x == y:
		return y
	}
	var c uint32
	switch {
	case x == 0:
		c = 1 // the smallest subnormal
		if y < 0 {
			c |= 0x8000
		}
	case (y > x) == (x > 0):
		c = EncodeNarrow(dt, x) + 1
	default:
		c = EncodeNarrow(dt, x) - 1
	}
	return DecodeNarrow(dt, c)
}
