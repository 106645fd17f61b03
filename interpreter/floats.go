package interpreter

import (
	"math"

	"github.com/halo-ml/halo/xla"
)

// Narrow floats (f16, bf16 and the f8/f6/f4 kinds) are stored as float32
// values that the narrow type can represent exactly. DecodeNarrow and
// EncodeNarrow convert between those values and the type's bits;
// RoundNarrow rounds any float32 to the nearest representable value with
// the type's overflow and NaN rules (see narrow.go for every format's
// rules). Arithmetic on narrow floats is done in float32 and rounded back
// with RoundNarrow, as XLA's CPU backend does.

// DecodeNarrow returns the value of bits in narrow float type dt (NaN for
// a type that is not a narrow float).
func DecodeNarrow(dt xla.DType, bits uint32) float32 {
	if dt == xla.BFloat16 {
		return math.Float32frombits(bits << 16)
	}
	f := xla.NarrowFloatOf(dt)
	if f == nil {
		return float32(math.NaN())
	}
	return f.Decode(bits)
}

// EncodeNarrow returns the bits of v in narrow float type dt, rounding to
// nearest even (0 for a type that is not a narrow float).
func EncodeNarrow(dt xla.DType, v float32) uint32 {
	if dt == xla.BFloat16 {
		return uint32(bf16Bits(v))
	}
	f := xla.NarrowFloatOf(dt)
	if f == nil {
		return 0
	}
	return f.Encode(v)
}

// RoundNarrow rounds v to the nearest value of narrow float type dt. It
// returns v unchanged for float32 and for types that are not narrow floats.
func RoundNarrow(dt xla.DType, v float32) float32 {
	switch dt {
	case xla.Float32:
		return v
	case xla.BFloat16:
		return math.Float32frombits(uint32(bf16Bits(v)) << 16)
	}
	f := xla.NarrowFloatOf(dt)
	if f == nil {
		return v
	}
	return f.Round(v)
}

// RoundNarrow64 rounds a float64 directly (without passing through
// float32) to the nearest value of narrow float type dt, or to float32 for
// Float32 and other types.
func RoundNarrow64(dt xla.DType, v float64) float32 {
	f := xla.NarrowFloatOf(dt)
	if f == nil {
		return float32(v)
	}
	return f.Decode(f.Encode64(v))
}

// RoundNarrowSlice rounds every element of s in place to narrow float type
// dt (nothing to do for Float32).
func RoundNarrowSlice(dt xla.DType, s []float32) {
	switch dt {
	case xla.Float32:
		return
	case xla.BFloat16:
		for i, v := range s {
			s[i] = math.Float32frombits(uint32(bf16Bits(v)) << 16)
		}
		return
	}
	f := xla.NarrowFloatOf(dt)
	if f == nil {
		return
	}
	for i, v := range s {
		s[i] = f.Round(v)
	}
}

// bf16Bits rounds a float32 to bfloat16 (xla.BF16FromFloat32).
func bf16Bits(v float32) uint16 { return uint16(xla.BF16FromFloat32(v)) }
