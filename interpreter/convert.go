package interpreter

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// convert, bitcast_convert and reduce_precision.
//
// convert semantics (the spec leaves out-of-range results to the
// implementation; these are XLA's CPU backend's):
//
//   - bool -> anything: false is 0, true is 1; anything -> bool: x != 0
//     (NaN is true; a complex value is true when either part is non-zero).
//   - int -> int: two's complement wrap-around at the destination width
//     (sign- or zero-extension by the source's signedness), sub-byte types
//     included.
//   - int -> float and float -> float: round to nearest even, with the
//     destination's overflow rules (Inf for the IEEE types, NaN for the
//     f8 FN/FNUZ types and E8M0, saturation for the MX f4/f6 types; see
//     narrow.go). Narrow destinations are rounded once, from the exact
//     value (float64 sources directly, not through float32).
//   - float -> int: truncation toward zero, saturating: NaN gives 0, values
//     at or below the destination's minimum give the minimum, values at or
//     above its maximum give the maximum (sub-byte widths included: f32 100
//     -> i4 is 7).
//   - complex -> real: the imaginary part is dropped; real -> complex: the
//     imaginary part is 0.

func init() {
	registerKernel("stablehlo.convert", cvConvertKernel)
	registerKernel("stablehlo.bitcast_convert", cvBitcastKernel)
	registerKernel("stablehlo.reduce_precision", cvReducePrecisionKernel)
}

func cvConvertKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("takes 1 operand, got %d", len(args))
	}
	src, err := ewTensor(args, 0)
	if err != nil {
		return nil, err
	}
	out, err := ewResultOf(op, 0, xla.Invalid, src.Shape, "the shape of the operand's type ")
	if err != nil {
		return nil, err
	}
	if err := Convert(out, src); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// Convert converts the elements of src into dst (same number of elements,
// any element types) with stablehlo.convert's semantics. A nil or
// malformed tensor is an error.
func Convert(dst, src *Tensor) error {
	switch {
	case src == nil && dst == nil:
		return fmt.Errorf("convert: source and destination tensors are nil")
	case src == nil:
		return fmt.Errorf("convert: source tensor is nil")
	case dst == nil:
		return fmt.Errorf("convert: destination tensor is nil")
	}
	if err := src.Validate(); err != nil {
		return fmt.Errorf("convert: source: %w", err)
	}
	if err := dst.Validate(); err != nil {
		return fmt.Errorf("convert: destination: %w", err)
	}
	if src.Len() != dst.Len() {
		return fmt.Errorf("convert: %s and %s have different sizes", ewType(src.Shape), ewType(dst.Shape))
	}
	if src.Len() == 0 { // nothing to convert (and Data may be nil)
		return nil
	}
	sdt := src.Shape.DType
	var ok bool
	switch s := src.Data.(type) {
	case []bool:
		b := make([]uint8, len(s))
		for i, v := range s {
			if v {
				b[i] = 1
			}
		}
		ok = cvFromInt(b, dst)
	case []int8:
		ok = cvFromInt(s, dst)
	case []int16:
		ok = cvFromInt(s, dst)
	case []int32:
		ok = cvFromInt(s, dst)
	case []int64:
		ok = cvFromInt(s, dst)
	case []uint8:
		ok = cvFromInt(s, dst)
	case []uint16:
		ok = cvFromInt(s, dst)
	case []uint32:
		ok = cvFromInt(s, dst)
	case []uint64:
		ok = cvFromInt(s, dst)
	case []float32:
		ok = cvFromFloat(s, sdt, dst)
	case []float64:
		ok = cvFromFloat(s, sdt, dst)
	case []complex64:
		ok = cvFromComplex(s, dst)
	case []complex128:
		ok = cvFromComplex(s, dst)
	}
	if !ok {
		return fmt.Errorf("convert from %v to %v is not supported", sdt, dst.Shape.DType)
	}
	return nil
}

// cvOddFloat64 is v as a float64 rounded to odd: exact when it fits in
// 53 bits, else truncated with the last bit set when bits were dropped.
// Rounding that to a narrow float (at most 24 bits of significand) rounds
// once, from the exact integer: rounding v to nearest float64 first could
// land on a tie the exact value is not on (2^62 + 2^54 + 1 went to 2^62 in
// bf16).
func cvOddFloat64[S ewInt](v S) float64 {
	neg := v < 0
	m := uint64(v)
	if neg {
		m = -m
	}
	if m>>53 != 0 {
		shift := bits.Len64(m) - 53
		hi := m >> shift
		if m&(1<<shift-1) != 0 {
			hi |= 1
		}
		f := math.Ldexp(float64(hi), shift)
		if neg {
			return -f
		}
		return f
	}
	if neg {
		return -float64(m)
	}
	return float64(m)
}

func cvFromInt[S ewInt](s []S, dst *Tensor) bool {
	ddt := dst.Shape.DType
	switch d := dst.Data.(type) {
	case []int8:
		cvIntInt(d, s, ddt)
	case []int16:
		cvIntInt(d, s, ddt)
	case []int32:
		cvIntInt(d, s, ddt)
	case []int64:
		cvIntInt(d, s, ddt)
	case []uint8:
		cvIntInt(d, s, ddt)
	case []uint16:
		cvIntInt(d, s, ddt)
	case []uint32:
		cvIntInt(d, s, ddt)
	case []uint64:
		cvIntInt(d, s, ddt)
	case []float32:
		ewRun1x(int(ddt), d, s, func(x int, d []float32, s []S) {
			if dt := xla.DType(x); IsNarrowFloat(dt) {
				for i, v := range s {
					d[i] = RoundNarrow64(dt, cvOddFloat64(v))
				}
				return
			}
			for i, v := range s {
				d[i] = float32(v)
			}
		})
	default:
		return cvRealTo(s, dst.Data)
	}
	return true
}

// cvRealTo converts real elements to bool, f64, complex<f32> or
// complex<f64> storage d, conversions that are the same from every real
// type; it reports false for any other storage.
func cvRealTo[S ewReal](s []S, d any) bool {
	switch d := d.(type) {
	case []bool:
		ewRun1(d, s, func(d []bool, s []S) {
			for i, v := range s {
				d[i] = v != 0
			}
		})
	case []float64:
		ewRun1(d, s, func(d []float64, s []S) {
			for i, v := range s {
				d[i] = float64(v)
			}
		})
	case []complex64:
		ewRun1(d, s, func(d []complex64, s []S) {
			for i, v := range s {
				d[i] = complex(float32(v), 0)
			}
		})
	case []complex128:
		ewRun1(d, s, func(d []complex128, s []S) {
			for i, v := range s {
				d[i] = complex(float64(v), 0)
			}
		})
	default:
		return false
	}
	return true
}

// cvIntInt converts with wrap-around at ddt's width.
func cvIntInt[D, S ewInt](d []D, s []S, ddt xla.DType) {
	ewRun1(d, s, func(d []D, s []S) {
		for i, v := range s {
			d[i] = D(v)
		}
	})
	if p := ewIntPost[D](ddt); p.wrap {
		ewRun1(d, d, func(d, _ []D) { ewApply(p, d) })
	}
}

func cvFromFloat[S ewFloat](s []S, sdt xla.DType, dst *Tensor) bool {
	ddt := dst.Shape.DType
	switch d := dst.Data.(type) {
	case []int8:
		cvFloatInt(d, s, ddt)
	case []int16:
		cvFloatInt(d, s, ddt)
	case []int32:
		cvFloatInt(d, s, ddt)
	case []int64:
		cvFloatInt(d, s, ddt)
	case []uint8:
		cvFloatInt(d, s, ddt)
	case []uint16:
		cvFloatInt(d, s, ddt)
	case []uint32:
		cvFloatInt(d, s, ddt)
	case []uint64:
		cvFloatInt(d, s, ddt)
	case []float32:
		ewRun1x(int(ddt), d, s, func(x int, d []float32, s []S) {
			dt := xla.DType(x)
			s32, from32 := any(s).([]float32)
			switch {
			case !IsNarrowFloat(dt):
				for i, v := range s {
					d[i] = float32(v)
				}
			case from32:
				copy(d, s32)
				RoundNarrowSlice(dt, d)
			default:
				for i, v := range s {
					d[i] = RoundNarrow64(dt, float64(v))
				}
			}
		})
	default:
		return cvRealTo(s, dst.Data)
	}
	return true
}

// cvFloatInt truncates toward zero, saturating at ddt's range; NaN is 0.
func cvFloatInt[D ewInt, S ewFloat](d []D, s []S, ddt xla.DType) {
	ewRun1x(int(ddt), d, s, func(x int, d []D, s []S) {
		dt := xla.DType(x)
		width := uint(dt.Bits())
		unsigned := dt.IsUnsigned()
		var minI int64
		var maxU uint64
		if unsigned {
			maxU = ^uint64(0) >> (64 - width)
		} else {
			minI = -1 << (width - 1)
			maxU = uint64(1)<<(width-1) - 1
		}
		loF, hiF := float64(minI), float64(maxU) // hiF may round up (2^63, 2^64): still a bound
		minD, maxD := D(minI), D(maxU)
		for i, w := range s {
			v := float64(w)
			switch {
			case v != v:
				d[i] = 0
			case v <= loF:
				d[i] = minD
			case v >= hiF:
				d[i] = maxD
			case unsigned:
				d[i] = D(uint64(v))
			default:
				d[i] = D(int64(v))
			}
		}
	})
}

func cvFromComplex[S ewComplex](s []S, dst *Tensor) bool {
	switch d := dst.Data.(type) {
	case []bool:
		ewRun1(d, s, func(d []bool, s []S) {
			for i, v := range s {
				d[i] = v != 0
			}
		})
		return true
	case []complex64:
		ewRun1(d, s, func(d []complex64, s []S) {
			for i, v := range s {
				d[i] = complex64(v)
			}
		})
		return true
	case []complex128:
		ewRun1(d, s, func(d []complex128, s []S) {
			for i, v := range s {
				d[i] = complex128(v)
			}
		})
		return true
	}
	// To a real type: convert the real parts.
	re := make([]float64, len(s))
	for i, v := range s {
		re[i] = real(complex128(v))
	}
	sdt := xla.Float64
	if _, ok := any(s).([]complex64); ok {
		re32 := make([]float32, len(s))
		for i, v := range re {
			re32[i] = float32(v)
		}
		return cvFromFloat(re32, xla.Float32, dst)
	}
	return cvFromFloat(re, sdt, dst)
}

// ---- bitcast_convert ----

// cvBitcastKernel reinterprets the bits of the operand: elements of the
// same width map one to one; a wider operand element splits into the last
// dimension of the result (little-endian: element 0 holds the low bits),
// and the last dimension of a narrower operand joins into one element.
// Widths are the types' bit widths (i4 is 4 bits, complex<f32> 64, with
// the real part in the low half); narrow floats use their encodings.
func cvBitcastKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("takes 1 operand, got %d", len(args))
	}
	src, err := ewTensor(args, 0)
	if err != nil {
		return nil, err
	}
	rt, err := ewResultType(op, 0)
	if err != nil {
		return nil, err
	}
	sw, dw := src.Shape.DType.Bits(), rt.DType.Bits()
	sd, dd := src.Shape.Dims, rt.Dims
	var shapeOK bool
	switch {
	case sw == dw:
		shapeOK = ewSameDims(src.Shape, rt.Shape())
	case sw > dw:
		shapeOK = len(dd) == len(sd)+1 && int64(sw) == dd[len(dd)-1]*int64(dw) &&
			ewSameDims(src.Shape, xla.MakeShape(src.Shape.DType, dd[:len(sd)]...))
	default:
		shapeOK = len(sd) == len(dd)+1 && int64(dw) == sd[len(sd)-1]*int64(sw) &&
			ewSameDims(rt.Shape(), xla.MakeShape(rt.DType, sd[:len(dd)]...))
	}
	if !shapeOK || sw == 0 || dw == 0 {
		return nil, fmt.Errorf("cannot bitcast %s to %v", ewType(src.Shape), rt)
	}
	out := NewTensor(rt.Shape())
	words, ww := cvRawBits(src)
	if ww != dw && !(ww == 64 && dw == 128) {
		words = cvRepack(words, ww, dw)
	}
	cvFromRawBits(out, words)
	return []Value{out}, nil
}

// cvRawBits returns the bit pattern of every element of t, in the low bits
// of a uint64 (two words, real then imaginary, for complex<f64>), and the
// width of a word's pattern.
func cvRawBits(t *Tensor) ([]uint64, int) {
	dt := t.Shape.DType
	w := dt.Bits()
	mask := ^uint64(0)
	if w < 64 {
		mask = uint64(1)<<w - 1
	}
	var out []uint64
	switch d := t.Data.(type) {
	case []bool:
		out = make([]uint64, len(d))
		for i, v := range d {
			if v {
				out[i] = 1
			}
		}
	case []int8:
		out = cvIntBits(d, mask)
	case []int16:
		out = cvIntBits(d, mask)
	case []int32:
		out = cvIntBits(d, mask)
	case []int64:
		out = cvIntBits(d, mask)
	case []uint8:
		out = cvIntBits(d, mask)
	case []uint16:
		out = cvIntBits(d, mask)
	case []uint32:
		out = cvIntBits(d, mask)
	case []uint64:
		out = cvIntBits(d, mask)
	case []float32:
		out = make([]uint64, len(d))
		if dt == xla.Float32 {
			for i, v := range d {
				out[i] = uint64(math.Float32bits(v))
			}
		} else {
			for i, v := range d {
				out[i] = uint64(EncodeNarrow(dt, v))
			}
		}
	case []float64:
		out = make([]uint64, len(d))
		for i, v := range d {
			out[i] = math.Float64bits(v)
		}
	case []complex64:
		out = make([]uint64, len(d))
		for i, v := range d {
			out[i] = uint64(math.Float32bits(real(v))) | uint64(math.Float32bits(imag(v)))<<32
		}
	case []complex128:
		out = make([]uint64, 2*len(d))
		for i, v := range d {
			out[2*i] = math.Float64bits(real(v))
			out[2*i+1] = math.Float64bits(imag(v))
		}
		return out, 64
	}
	return out, w
}

func cvIntBits[T ewInt](d []T, mask uint64) []uint64 {
	out := make([]uint64, len(d))
	for i, v := range d {
		out[i] = uint64(v) & mask
	}
	return out
}

// cvRepack turns words of sw bits into words of dw bits, little-endian
// (the first word holds the low bits). A dw of 128 gives 64-bit words.
func cvRepack(words []uint64, sw, dw int) []uint64 {
	if dw == 128 {
		dw = 64
	}
	total := len(words) * sw
	out := make([]uint64, total/dw)
	switch {
	case sw > dw: // split
		k := sw / dw
		mask := uint64(1)<<dw - 1
		for i, w := range words {
			for j := range k {
				out[i*k+j] = (w >> (j * dw)) & mask
			}
		}
	default: // join
		k := dw / sw
		for i := range out {
			var w uint64
			for j := range k {
				w |= words[i*k+j] << (j * sw)
			}
			out[i] = w
		}
	}
	return out
}

// cvFromRawBits sets t's elements from bit patterns (see cvRawBits).
func cvFromRawBits(t *Tensor, words []uint64) {
	dt := t.Shape.DType
	w := uint(dt.Bits())
	switch d := t.Data.(type) {
	case []bool:
		for i := range d {
			d[i] = words[i]&1 != 0
		}
	case []int8:
		cvBitsInt(d, words, w, true)
	case []int16:
		cvBitsInt(d, words, w, true)
	case []int32:
		cvBitsInt(d, words, w, true)
	case []int64:
		cvBitsInt(d, words, w, true)
	case []uint8:
		cvBitsInt(d, words, w, false)
	case []uint16:
		cvBitsInt(d, words, w, false)
	case []uint32:
		cvBitsInt(d, words, w, false)
	case []uint64:
		cvBitsInt(d, words, w, false)
	case []float32:
		if dt == xla.Float32 {
			for i := range d {
				d[i] = math.Float32frombits(uint32(words[i]))
			}
		} else {
			for i := range d {
				d[i] = DecodeNarrow(dt, uint32(words[i]))
			}
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(words[i])
		}
	case []complex64:
		for i := range d {
			d[i] = complex(math.Float32frombits(uint32(words[i])), math.Float32frombits(uint32(words[i]>>32)))
		}
	case []complex128:
		for i := range d {
			d[i] = complex(math.Float64frombits(words[2*i]), math.Float64frombits(words[2*i+1]))
		}
	}
}

func cvBitsInt[T ewInt](d []T, words []uint64, width uint, signed bool) {
	up := 64 - width
	for i := range d {
		v := words[i]
		if signed {
			v = uint64(int64(v<<up) >> up)
		}
		d[i] = T(v)
	}
}

// ---- reduce_precision ----

// cvReducePrecisionKernel rounds every element to a float format with
// exponent_bits and mantissa_bits (round to nearest even), then overflows
// values past that format's range to ±Inf and flushes values below its
// smallest normal to ±0, as XLA does. NaN stays NaN when mantissa_bits > 0
// and becomes +Inf when it is 0 (that format has no NaN). The bits are
// those of the operand's own type (f16, bf16 and f8 included).
func cvReducePrecisionKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("takes 1 operand, got %d", len(args))
	}
	src, err := ewTensor(args, 0)
	if err != nil {
		return nil, err
	}
	eb, err := cvIntAttr(op, "exponent_bits")
	if err != nil {
		return nil, err
	}
	mb, err := cvIntAttr(op, "mantissa_bits")
	if err != nil {
		return nil, err
	}
	if eb < 1 || mb < 0 {
		return nil, fmt.Errorf("exponent_bits must be >= 1 and mantissa_bits >= 0, got %d and %d", eb, mb)
	}
	dt := src.Shape.DType
	out, err := ewResultOf(op, 0, dt, src.Shape, "the operand's ")
	if err != nil {
		return nil, err
	}
	switch s := src.Data.(type) {
	case []float32:
		d := out.Data.([]float32)
		f := xla.NarrowFloatOf(dt)
		switch {
		// In the type's own bits only where its top exponent is Inf/NaN
		// (f16, bf16, the IEEE f8 kinds), so that a rounding carry into
		// it overflows; the FN, FNUZ, MX and E8M0 kinds go through f32
		// and are rounded back (overflow then gives their NaN or
		// saturates, as converting an infinity does).
		case dt == xla.Float32 || f == nil || !f.HasInf():
			ewSplit(len(d), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					b := uint64(math.Float32bits(s[i]))
					isNaN := s[i] != s[i]
					d[i] = math.Float32frombits(uint32(cvReduceBits(b, 32, 23, 8, int(mb), int(eb), isNaN)))
				}
				ewRoundNarrow(dt, d[lo:hi])
			})
		default:
			nbits, fe, fm := f.Layout()
			ewSplit(len(d), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					c := uint64(f.Encode(s[i]))
					c = cvReduceBits(c, nbits, fm, fe, int(mb), int(eb), f.IsNaN(uint32(c)))
					d[i] = f.Decode(uint32(c))
				}
			})
		}
	case []float64:
		d := out.Data.([]float64)
		ewSplit(len(d), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				b := math.Float64bits(s[i])
				d[i] = math.Float64frombits(cvReduceBits(b, 64, 52, 11, int(mb), int(eb), s[i] != s[i]))
			}
		})
	default:
		return nil, ewDTypeError(op, dt)
	}
	return []Value{out}, nil
}

// cvReduceBits applies reduce_precision to the bits x of a float with nbits
// bits, srcMant mantissa bits and srcExp exponent bits.
func cvReduceBits(x uint64, nbits, srcMant, srcExp, mant, exp int, isNaN bool) uint64 {
	orig := x
	all := ^uint64(0) >> (64 - nbits)
	signMask := uint64(1) << (nbits - 1)
	expMask := (uint64(1)<<srcExp - 1) << srcMant
	if mant < srcMant {
		shift := srcMant - mant
		last := uint64(1) << shift
		bias := (last >> 1) - 1 + (x&last)>>shift
		x = (x + bias) & ^(last - 1) & all
	}
	if exp < srcExp {
		srcBias := uint64(1)<<(srcExp-1) - 1
		redBias := uint64(1)<<(exp-1) - 1
		maxExp := srcBias + redBias
		minExp := srcBias - redBias
		e := x & expMask
		switch {
		case e > maxExp<<srcMant:
			x = x&signMask | expMask
		case e <= minExp<<srcMant:
			x &= signMask
		}
	}
	if isNaN {
		if mant > 0 {
			return orig
		}
		return expMask // +Inf
	}
	return x
}

// cvIntAttr reads an integer attribute.
func cvIntAttr(op *stablehlo.Op, name string) (int64, error) {
	a, ok := op.Attr(name).(stablehlo.IntAttr)
	if !ok {
		return 0, fmt.Errorf("attribute %s must be an integer, got %T", name, op.Attr(name))
	}
	return a.Value, nil
}
