package interpreter

import (
	"math"

	"github.com/halo-ml/halo/xla"
)

// Narrow floats (f16, bf16 and the f8/f6/f4 kinds) are stored as float32
// values that the narrow type can represent exactly. DecodeNarrow and
// EncodeNarrow convert between those values and the type's bits;
// RoundNarrow rounds any float32 to the nearest representable value with
// the type's overflow and NaN rules.
//
// This file holds the contract; the complete per-format rules (every f8
// variant's saturation, NaN encodings, FNUZ negative zero) are implemented
// in narrow.go.

// DecodeNarrow returns the value of bits in narrow float type dt.
func DecodeNarrow(dt xla.DType, bits uint32) float32 {
	switch dt {
	case xla.BFloat16:
		return math.Float32frombits(bits << 16)
	}
	return decodeNarrowFormat(dt, bits)
}

// EncodeNarrow returns the bits of v in narrow float type dt, rounding to
// nearest even.
func EncodeNarrow(dt xla.DType, v float32) uint32 {
	switch dt {
	case xla.BFloat16:
		return uint32(bf16Bits(v))
	}
	return encodeNarrowFormat(dt, v)
}

// RoundNarrow rounds v to the nearest value of narrow float type dt.
func RoundNarrow(dt xla.DType, v float32) float32 {
	switch dt {
	case xla.Float32:
		return v
	case xla.BFloat16:
		return math.Float32frombits(uint32(bf16Bits(v)) << 16)
	}
	return DecodeNarrow(dt, EncodeNarrow(dt, v))
}

// bf16Bits rounds a float32 to bfloat16 with round-to-nearest-even, keeping
// NaNs quiet.
func bf16Bits(v float32) uint16 {
	b := math.Float32bits(v)
	if v != v {
		return uint16(b>>16) | 0x40
	}
	rounding := uint32(0x7fff) + (b>>16)&1
	return uint16((b + rounding) >> 16)
}
