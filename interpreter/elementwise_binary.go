package interpreter

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Binary elementwise ops. Semantics decisions (the spec leaves them to the
// implementation; these are XLA's CPU backend's):
//
//   - Integer division by zero gives -1 (all ones, also for unsigned types),
//     and INT_MIN / -1 gives INT_MIN. Remainder by zero gives the dividend,
//     and INT_MIN % -1 gives 0. The remainder has the dividend's sign.
//     (StableHLO's reference interpreter returns 0 in all four cases; halo
//     follows the XLA backends it stands in for.)
//   - Integer power with a negative exponent is 1/x^|y| truncated toward
//     zero: 1 for x = 1, ±1 for x = -1 (by the exponent's parity), 0
//     otherwise (also for x = 0); XLA gives 0 for x = -1 too. Powers wrap
//     around like multiplication.
//   - Shift amounts are read as unsigned; an amount >= the bit width gives 0
//     for shift_left and shift_right_logical and the sign fill for
//     shift_right_arithmetic.
//   - maximum/minimum propagate NaN and order -0 < +0; on booleans they are
//     OR/AND, add is OR and multiply is AND.
//   - Float remainder is fmod (the result has the dividend's sign).
//   - Complex maximum/minimum compare (real, imag) lexicographically.
//   - Sub-byte integers (i2, i4, ui2, ui4 ...) wrap at their width after
//     every op; bf16/f16/f8 are computed in float32 and rounded.

type ewBinOp uint8

const (
	binAdd ewBinOp = iota
	binSub
	binMul
	binDiv
	binRem
	binMax
	binMin
	binPow
	binAnd
	binOr
	binXor
	binShl
	binShrA
	binShrL
	binAtan2
)

var ewBinaryOps = map[string]ewBinOp{
	"stablehlo.add":                    binAdd,
	"stablehlo.subtract":               binSub,
	"stablehlo.multiply":               binMul,
	"stablehlo.divide":                 binDiv,
	"stablehlo.remainder":              binRem,
	"stablehlo.maximum":                binMax,
	"stablehlo.minimum":                binMin,
	"stablehlo.power":                  binPow,
	"stablehlo.and":                    binAnd,
	"stablehlo.or":                     binOr,
	"stablehlo.xor":                    binXor,
	"stablehlo.shift_left":             binShl,
	"stablehlo.shift_right_arithmetic": binShrA,
	"stablehlo.shift_right_logical":    binShrL,
	"stablehlo.atan2":                  binAtan2,
}

func init() {
	for name, code := range ewBinaryOps {
		registerInPlaceKernel(name, ewBinaryKernel(code))
	}
	registerKernel("stablehlo.complex", ewComplexKernel)
	mustRegister(RegisterOpCheck("stablehlo.remainder", func(op *stablehlo.Op) error {
		for _, v := range op.Operands {
			if v == nil {
				continue // the kernel reports it
			}
			if t, ok := v.Type.(stablehlo.TensorType); ok {
				if err := ewRemainderType(op, t.DType); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// ewRemainderType refuses, when a program is compiled, the remainder of
// complex numbers (stablehlo.remainder, chlo.broadcast_remainder): the
// spec admits complex operands but leaves their remainder TBD
// (openxla/stablehlo#997), so there is no definition to follow.
func ewRemainderType(op *stablehlo.Op, dt xla.DType) error {
	if dt.IsComplex() {
		return fmt.Errorf("%s is not defined for element type %v: the StableHLO spec admits complex operands but leaves their remainder undefined (TBD, openxla/stablehlo#997)", op.Name, dt)
	}
	return nil
}

// ewBinaryOperands checks a binary op's operands (same type) and allocates
// its result (same shape; same element type).
func ewBinaryOperands(x *Exec, op *stablehlo.Op, args []Value) (a, b, out *Tensor, err error) {
	if len(args) != 2 {
		return nil, nil, nil, fmt.Errorf("takes 2 operands, got %d", len(args))
	}
	if a, err = ewTensor(args, 0); err != nil {
		return nil, nil, nil, err
	}
	if b, err = ewTensor(args, 1); err != nil {
		return nil, nil, nil, err
	}
	if a.Shape.DType != b.Shape.DType || !ewSameDims(a.Shape, b.Shape) {
		return nil, nil, nil, fmt.Errorf("operands have different types %s and %s", ewType(a.Shape), ewType(b.Shape))
	}
	if out, err = ewResultInPlace(x, op, a.Shape.DType, a.Shape, "the operands' "); err != nil {
		return nil, nil, nil, err
	}
	return a, b, out, nil
}

func ewBinaryKernel(code ewBinOp) Kernel {
	return func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		a, b, out, err := ewBinaryOperands(x, op, args)
		if err != nil {
			return nil, err
		}
		dt := a.Shape.DType
		var ok bool
		switch ad := a.Data.(type) {
		case []bool:
			ok = ewBoolBinary(code, out.Data.([]bool), ad, b.Data.([]bool))
		case []int8:
			ok = ewIntBinary(code, dt, out.Data.([]int8), ad, b.Data.([]int8))
		case []int16:
			ok = ewIntBinary(code, dt, out.Data.([]int16), ad, b.Data.([]int16))
		case []int32:
			ok = ewIntBinary(code, dt, out.Data.([]int32), ad, b.Data.([]int32))
		case []int64:
			ok = ewIntBinary(code, dt, out.Data.([]int64), ad, b.Data.([]int64))
		case []uint8:
			ok = ewIntBinary(code, dt, out.Data.([]uint8), ad, b.Data.([]uint8))
		case []uint16:
			ok = ewIntBinary(code, dt, out.Data.([]uint16), ad, b.Data.([]uint16))
		case []uint32:
			ok = ewIntBinary(code, dt, out.Data.([]uint32), ad, b.Data.([]uint32))
		case []uint64:
			ok = ewIntBinary(code, dt, out.Data.([]uint64), ad, b.Data.([]uint64))
		case []float32:
			ok = ewFloatBinary(code, dt, out.Data.([]float32), ad, b.Data.([]float32))
		case []float64:
			ok = ewFloatBinary(code, dt, out.Data.([]float64), ad, b.Data.([]float64))
		case []complex64:
			ok = ewComplexBinary(code, out.Data.([]complex64), ad, b.Data.([]complex64))
		case []complex128:
			ok = ewComplexBinary(code, out.Data.([]complex128), ad, b.Data.([]complex128))
		}
		if !ok {
			return nil, ewDTypeError(op, dt)
		}
		return []Value{out}, nil
	}
}

func ewBoolBinary(code ewBinOp, d, a, b []bool) bool {
	var body func(d, a, b []bool)
	switch code {
	case binAdd, binOr, binMax:
		body = func(d, a, b []bool) {
			for i := range d {
				d[i] = a[i] || b[i]
			}
		}
	case binMul, binAnd, binMin:
		body = func(d, a, b []bool) {
			for i := range d {
				d[i] = a[i] && b[i]
			}
		}
	case binXor:
		body = func(d, a, b []bool) {
			for i := range d {
				d[i] = a[i] != b[i]
			}
		}
	default:
		return false
	}
	ewRun2(d, a, b, body)
	return true
}

// ewArithBody is the loop of add, subtract or multiply (code), the same for
// every numeric type; nil for any other op.
func ewArithBody[T ewNumber](code ewBinOp) func(d, a, b []T) {
	switch code {
	case binAdd:
		return func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] + b[i]
			}
		}
	case binSub:
		return func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] - b[i]
			}
		}
	case binMul:
		return func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] * b[i]
			}
		}
	}
	return nil
}

// ewIntDiv is integer division as XLA defines it: x / 0 has every bit set
// (-1, or the maximum of an unsigned type), MinInt / -1 is MinInt (as in
// Go).
func ewIntDiv[T ewInt](a, b T) T {
	if b == 0 {
		return ^T(0)
	}
	return a / b
}

// ewIntRem is the remainder of ewIntDiv: x % 0 is x, MinInt % -1 is 0.
func ewIntRem[T ewInt](a, b T) T {
	if b == 0 {
		return a
	}
	return a % b
}

func ewIntBinary[T ewInt](code ewBinOp, dt xla.DType, d, a, b []T) bool {
	if !dt.IsInt() {
		return false
	}
	signed := !dt.IsUnsigned()
	width, sub := ewIntWidth(dt, ewStorageBits[T]())
	var body func(d, a, b []T)
	switch code {
	case binAdd, binSub, binMul:
		body = ewArithBody[T](code)
	case binDiv:
		// Go defines MinInt / -1 as MinInt (and the remainder as 0), which
		// is XLA's choice; only division by zero needs a guard. For sub-byte
		// types the storage's MinInt is not the type's: -8 / -1 is 8 in
		// int8, which the wrap below turns back into -8.
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = ewIntDiv(a[i], b[i])
			}
		}
	case binRem:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = ewIntRem(a[i], b[i])
			}
		}
	case binMax:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = max(a[i], b[i])
			}
		}
	case binMin:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = min(a[i], b[i])
			}
		}
	case binPow:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = ewIntPow(a[i], b[i])
			}
		}
	case binAnd:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] & b[i]
			}
		}
	case binOr:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] | b[i]
			}
		}
	case binXor:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] ^ b[i]
			}
		}
	case binShl, binShrA, binShrL:
		body = func(d, a, b []T) { ewShift(code, width, signed, d, a[:len(d)], b[:len(d)]) }
	default:
		return false
	}
	ewRunPost2(ewPost{wrap: sub, width: width, signed: signed}, d, a, b, body)
	return true
}

// ewIntPow raises a to the integer power e by squaring, wrapping around.
func ewIntPow[T ewInt](a, e T) T {
	if e < 0 {
		switch {
		case a == 1:
			return 1
		case a == ^T(0): // -1
			if e&1 != 0 {
				return a
			}
			return 1
		}
		return 0
	}
	r := T(1)
	for e != 0 {
		if e&1 != 0 {
			r *= a
		}
		a *= a
		e >>= 1
	}
	return r
}

// ewShift shifts the width-bit integers of a by the amounts in b (read as
// unsigned width-bit integers).
func ewShift[T ewInt](code ewBinOp, width uint, signed bool, d, a, b []T) {
	mask := ^uint64(0)
	if width < 64 {
		mask = uint64(1)<<width - 1
	}
	up := 64 - width // to sign-extend a width-bit value held in a uint64
	for i := range d {
		u := uint64(a[i]) & mask
		s := uint64(b[i]) & mask
		var r uint64
		switch code {
		case binShl:
			if s < uint64(width) {
				r = u << s
			}
		case binShrL:
			if s < uint64(width) {
				r = u >> s
			}
		default: // arithmetic
			v := int64(u<<up) >> up
			r = uint64(v >> min(s, 63))
		}
		r &= mask
		if signed {
			r = uint64(int64(r<<up) >> up)
		}
		d[i] = T(r)
	}
}

func ewFloatBinary[T ewFloat](code ewBinOp, dt xla.DType, d, a, b []T) bool {
	var body func(d, a, b []T)
	switch code {
	case binAdd, binSub, binMul:
		body = ewArithBody[T](code)
	case binDiv:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] / b[i]
			}
		}
	case binRem:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(math.Mod(float64(a[i]), float64(b[i])))
			}
		}
	case binMax:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = ewFMax(a[i], b[i])
			}
		}
	case binMin:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = ewFMin(a[i], b[i])
			}
		}
	case binPow:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(special.RealPow(float64(a[i]), float64(b[i])))
			}
		}
	case binAtan2:
		body = func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(special.Atan2(float64(a[i]), float64(b[i])))
			}
		}
	default:
		return false
	}
	ewRunPost2(ewFloatPost(dt), d, a, b, body)
	return true
}

func ewComplexBinary[T ewComplex](code ewBinOp, d, a, b []T) bool {
	var body func(d, a, b []T)
	switch code {
	case binAdd, binSub, binMul:
		body = ewArithBody[T](code)
	case binDiv:
		body = func(d, a, b []T) {
			for i := range d {
				d[i] = T(complex128(a[i]) / complex128(b[i]))
			}
		}
	case binMax:
		body = func(d, a, b []T) {
			for i := range d {
				if ewCLess(a[i], b[i]) {
					d[i] = b[i]
				} else {
					d[i] = a[i]
				}
			}
		}
	case binMin:
		body = func(d, a, b []T) {
			for i := range d {
				if ewCGreater(a[i], b[i]) {
					d[i] = b[i]
				} else {
					d[i] = a[i]
				}
			}
		}
	case binPow:
		body = func(d, a, b []T) {
			for i := range d {
				d[i] = T(ewCPow(complex128(a[i]), complex128(b[i])))
			}
		}
	case binAtan2:
		body = func(d, a, b []T) {
			for i := range d {
				d[i] = T(ewCAtan2(complex128(a[i]), complex128(b[i])))
			}
		}
	default:
		return false
	}
	ewRun2(d, a, b, body)
	return true
}

// ewCPow is the principal value of a^b; 0^0 is 1. It is cmplx.Pow's
// |a|^b·e^(iθ) but for a part whose sine or cosine is zero: that part is
// a zero, not the NaN of an overflowed modulus times 0 ((10+0i)^400 is
// +Inf+0i).
func ewCPow(a, b complex128) complex128 {
	if b == 0 {
		return 1
	}
	if a == 0 || cmplx.IsNaN(a) || cmplx.IsInf(b) || cmplx.IsNaN(b) {
		return cmplx.Pow(a, b)
	}
	x, y := real(a), imag(a)
	var r, logModulus float64
	switch m := max(math.Abs(x), math.Abs(y)); {
	case math.IsInf(m, 0):
		r, logModulus = math.Pow(m, real(b)), m // (Inf+0i)^1 is Inf+0i
	case m > 0x1p1000 || m < 0x1p-1000:
		// |a| scaled by a power of two: it would overflow (1.5e308+1.5e308i)
		// or lose bits as a subnormal.
		k := math.Ilogb(m)
		ms := math.Hypot(math.Ldexp(x, -k), math.Ldexp(y, -k))
		// |a|^b = ms^b · 2^(k·b), with 2^(k·b) = 2^f · 2^n (n whole) applied
		// by Ldexp last: 2^(k·b) alone may overflow where the product does
		// not (|a| near 2^-1024, b = -1).
		kb := float64(k) * real(b)
		n := math.Floor(kb)
		r = math.Ldexp(math.Pow(ms, real(b))*math.Exp2(kb-n), int(max(min(n, 1<<16), -(1<<16))))
		logModulus = math.Log(ms) + float64(k)*math.Ln2
	default:
		modulus := math.Hypot(x, y)
		r, logModulus = math.Pow(modulus, real(b)), math.Log(modulus)
	}
	arg := cmplx.Phase(a)
	theta := real(b) * arg
	if imag(b) != 0 {
		r *= special.RealExp(-imag(b) * arg)
		theta += imag(b) * logModulus
	}
	s, c := math.Sincos(theta)
	times := func(t float64) float64 {
		if t == 0 && !math.IsNaN(r) {
			return math.Copysign(0, t) * math.Copysign(1, r)
		}
		return r * t
	}
	return complex(times(c), times(s))
}

// ewCAtan2 is the complex atan2(y, x) = -i·log((x + i·y) / sqrt(x² + y²)).
func ewCAtan2(y, x complex128) complex128 {
	num := x + complex(0, 1)*y
	return complex(0, -1) * cmplx.Log(num/cmplx.Sqrt(x*x+y*y))
}

// ewComplexKernel is stablehlo.complex: (f32, f32) -> complex<f32> and
// (f64, f64) -> complex<f64>.
func ewComplexKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("takes 2 operands, got %d", len(args))
	}
	re, err := ewTensor(args, 0)
	if err != nil {
		return nil, err
	}
	im, err := ewTensor(args, 1)
	if err != nil {
		return nil, err
	}
	if re.Shape.DType != im.Shape.DType || !ewSameDims(re.Shape, im.Shape) {
		return nil, fmt.Errorf("operands %s and %s must have the same type", ewType(re.Shape), ewType(im.Shape))
	}
	out, err := ewResultOf(op, 0, xla.Invalid, re.Shape, "the shape of the operands' ")
	if err != nil {
		return nil, err
	}
	switch r := re.Data.(type) {
	case []float32:
		d, ok := out.Data.([]complex64)
		if !ok || re.Shape.DType != xla.Float32 {
			break
		}
		ewRun2(d, r, im.Data.([]float32), func(d []complex64, r, i []float32) {
			for k := range d {
				d[k] = complex(r[k], i[k])
			}
		})
		return []Value{out}, nil
	case []float64:
		d, ok := out.Data.([]complex128)
		if !ok {
			break
		}
		ewRun2(d, r, im.Data.([]float64), func(d []complex128, r, i []float64) {
			for k := range d {
				d[k] = complex(r[k], i[k])
			}
		})
		return []Value{out}, nil
	}
	return nil, fmt.Errorf("makes complex<f32> from f32 parts and complex<f64> from f64 parts, not %v from %v",
		out.Shape.DType, re.Shape.DType)
}
