package xla

import (
	"math"
)

// Narrow float formats (f16, bf16 and the f8/f6/f4 kinds).
//
// Every format is described by its bit fields and by what its special
// encodings mean (the facts below match ml_dtypes and LLVM's APFloat):
//
//	format          bits  exp  man  bias  max      min subnormal  Inf   NaN codes
//	f16             16    5    10   15    65504    2^-24          yes   S.11111.xxxxxxxxxx (x != 0)
//	bf16            16    8    7    127   3.39e38  2^-133         yes   S.11111111.xxxxxxx (x != 0)
//	f8E5M2          8     5    2    15    57344    2^-16          yes   S.11111.xx (x != 0)
//	f8E4M3          8     4    3    7     240      2^-9           yes   S.1111.xxx (x != 0)
//	f8E3M4          8     3    4    3     15.5     2^-6           yes   S.111.xxxx (x != 0)
//	f8E4M3FN        8     4    3    7     448      2^-9           no    S.1111.111
//	f8E4M3FNUZ      8     4    3    8     240      2^-10          no    1.0000.000 (no -0)
//	f8E5M2FNUZ      8     5    2    16    57344    2^-17          no    1.00000.00 (no -0)
//	f8E4M3B11FNUZ   8     4    3    11    30       2^-13          no    1.0000.000 (no -0)
//	f8E8M0FNU       8     8    0    127   2^127    2^-127 (min)   no    11111111 (no sign, no zero)
//	f6E2M3FN        6     2    3    1     7.5      0.125          no    none
//	f6E3M2FN        6     3    2    3     28       0.0625         no    none
//	f4E2M1FN        4     2    1    1     6        0.5            no    none
//
// Rounding from a wider float is round-to-nearest, ties to even, with the
// non-saturating overflow rule of ml_dtypes (what XLA's convert does): a
// value that rounds past the largest finite value becomes Inf for the
// formats that have one, NaN for the FN/FNUZ/E8M0 formats, and saturates
// to ±max for the MX formats (f4/f6), which have neither. Infinities
// follow the same rule. A NaN becomes the format's NaN (keeping the sign
// and the top payload bits for the IEEE-like formats); the MX formats have
// no NaN and, like ml_dtypes, encode it as the negative-zero pattern (its
// sign flipped for a negative NaN). The FNUZ formats have no negative zero:
// -0 and negative values that round to zero become +0. f8E8M0FNU has no
// zero and no sign: zero and negative values become NaN; positive values
// up to 2^-127 become 2^-127 (code 0), those between 2^-127 and 2^-126
// become 2^-126 (ml_dtypes rounds that interval as if code 0 were a zero),
// and rounding between larger exponents rounds half up (1.5·2^e becomes
// 2^(e+1)), which is round-to-nearest-even on a format whose significand is
// always the implicit 1.

type narrowKind uint8

const (
	narrowIEEE   narrowKind = iota // Inf and NaN with an all-ones exponent
	narrowFN                       // no Inf; NaN is S.111..1 (all ones)
	narrowFNUZ                     // no Inf, no -0; NaN is 1000..0
	narrowFinite                   // no Inf, no NaN (the MX f4/f6 formats)
	narrowE8M0                     // exponent only: no sign, no zero; NaN is 0xFF
)

// NarrowFloat is the codec of one narrow float format: its values and
// codes (bit patterns) and rounding to it, round-to-nearest-even with
// ml_dtypes' overflow rules (Inf, NaN or saturation by format; the table
// and rules are in this file's comment above narrowKind).
type NarrowFloat struct {
	dt       DType
	bits     int // total bits
	expBits  int
	mantBits int
	bias     int
	kind     narrowKind

	signBit  uint32  // the sign bit's mask (0 for E8M0)
	maxCode  uint32  // largest finite magnitude code
	maxVal   float64 // value of maxCode
	max32    uint32  // float32 bits of maxVal
	minNorm  uint32  // float32 bits of the smallest normal value, 2^(1-bias)
	magic    float32 // 2^(1-bias-mant+23): adding it rounds a subnormal to the format's quantum
	quantum  float32 // 2^(1-bias-mant), the spacing of the subnormal values
	nanCode  uint32  // canonical positive NaN code (formats with NaN)
	decode32 []float32
}

// narrowFormats is indexed by DType; nil for types that are not narrow floats.
var narrowFormats = buildNarrowFormats()

func buildNarrowFormats() []*NarrowFloat {
	specs := []NarrowFloat{
		{dt: Float16, bits: 16, expBits: 5, mantBits: 10, bias: 15, kind: narrowIEEE},
		{dt: BFloat16, bits: 16, expBits: 8, mantBits: 7, bias: 127, kind: narrowIEEE},
		{dt: Float8E5M2, bits: 8, expBits: 5, mantBits: 2, bias: 15, kind: narrowIEEE},
		{dt: Float8E4M3, bits: 8, expBits: 4, mantBits: 3, bias: 7, kind: narrowIEEE},
		{dt: Float8E3M4, bits: 8, expBits: 3, mantBits: 4, bias: 3, kind: narrowIEEE},
		{dt: Float8E4M3FN, bits: 8, expBits: 4, mantBits: 3, bias: 7, kind: narrowFN},
		{dt: Float8E4M3FNUZ, bits: 8, expBits: 4, mantBits: 3, bias: 8, kind: narrowFNUZ},
		{dt: Float8E5M2FNUZ, bits: 8, expBits: 5, mantBits: 2, bias: 16, kind: narrowFNUZ},
		{dt: Float8E4M3B11FNUZ, bits: 8, expBits: 4, mantBits: 3, bias: 11, kind: narrowFNUZ},
		{dt: Float8E8M0FNU, bits: 8, expBits: 8, mantBits: 0, bias: 127, kind: narrowE8M0},
		{dt: Float4E2M1FN, bits: 4, expBits: 2, mantBits: 1, bias: 1, kind: narrowFinite},
		{dt: Float6E2M3FN, bits: 6, expBits: 2, mantBits: 3, bias: 1, kind: narrowFinite},
		{dt: Float6E3M2FN, bits: 6, expBits: 3, mantBits: 2, bias: 3, kind: narrowFinite},
	}
	out := make([]*NarrowFloat, len(AllDTypes())+1)
	for i := range specs {
		f := specs[i]
		f.init()
		out[f.dt] = &f
	}
	return out
}

func (f *NarrowFloat) init() {
	mantMask := uint32(1)<<f.mantBits - 1
	expMax := uint32(1)<<f.expBits - 1
	if f.kind != narrowE8M0 {
		f.signBit = 1 << (f.bits - 1)
	}
	switch f.kind {
	case narrowIEEE:
		f.maxCode = (expMax-1)<<f.mantBits | mantMask
		f.nanCode = expMax<<f.mantBits | 1<<(f.mantBits-1)
	case narrowFN:
		f.maxCode = expMax<<f.mantBits | (mantMask - 1)
		f.nanCode = expMax<<f.mantBits | mantMask
	case narrowFNUZ:
		f.maxCode = f.signBit - 1
		f.nanCode = f.signBit
	case narrowFinite:
		f.maxCode = f.signBit - 1
	case narrowE8M0:
		f.maxCode = 0xfe
		f.nanCode = 0xff
	}
	f.maxVal = f.Decode64(f.maxCode)
	f.max32 = math.Float32bits(float32(f.maxVal))
	f.minNorm = math.Float32bits(float32(math.Ldexp(1, 1-f.bias)))
	f.magic = float32(math.Ldexp(1, 1-f.bias-f.mantBits+23))
	f.quantum = float32(math.Ldexp(1, 1-f.bias-f.mantBits))
	if f.bits <= 8 {
		f.decode32 = make([]float32, 1<<f.bits)
		for c := range f.decode32 {
			f.decode32[c] = f.decodeSlow32(uint32(c))
		}
	}
}

// NarrowFloatOf returns the format of dt (f16, bf16, an f8, f6 or f4
// kind), or nil.
func NarrowFloatOf(dt DType) *NarrowFloat {
	if int(dt) < len(narrowFormats) {
		return narrowFormats[dt]
	}
	return nil
}

// Layout returns f's width in bits and those of its exponent and
// significand (without the implicit bit).
func (f *NarrowFloat) Layout() (bits, expBits, mantBits int) { return f.bits, f.expBits, f.mantBits }

// Signed reports whether f has a sign bit (all but f8E8M0FNU).
func (f *NarrowFloat) Signed() bool { return f.kind != narrowE8M0 }

// HasInf reports whether f has infinities (the IEEE-like formats: an
// all-ones exponent is Inf or NaN, not a finite value).
func (f *NarrowFloat) HasInf() bool { return f.kind == narrowIEEE }

// IsNaN reports whether code c is a NaN of f.
func (f *NarrowFloat) IsNaN(c uint32) bool {
	c &= 1<<f.bits - 1 // as Decode reads codes: the low bits
	mag := c &^ f.signBit
	switch f.kind {
	case narrowIEEE:
		return mag>>f.mantBits == 1<<f.expBits-1 && mag&(1<<f.mantBits-1) != 0
	case narrowFN:
		return mag == f.nanCode
	case narrowFNUZ:
		return c == f.nanCode
	case narrowE8M0:
		return c == 0xff
	}
	return false
}

// Decode64 returns the value of a code that is not NaN (±Inf for the
// IEEE-like formats' infinities).
func (f *NarrowFloat) Decode64(c uint32) float64 {
	c &= 1<<f.bits - 1
	if f.kind == narrowE8M0 {
		return math.Ldexp(1, int(c)-f.bias)
	}
	sign := 1.0
	if c&f.signBit != 0 {
		sign = -1
	}
	mag := c &^ f.signBit
	exp := int(mag >> f.mantBits)
	mant := float64(mag & (1<<f.mantBits - 1))
	if f.kind == narrowIEEE && exp == 1<<f.expBits-1 {
		return sign * math.Inf(1)
	}
	if exp == 0 {
		return sign * math.Ldexp(mant, 1-f.bias-f.mantBits)
	}
	return sign * math.Ldexp(mant+math.Ldexp(1, f.mantBits), exp-f.bias-f.mantBits)
}

// decodeSlow32 returns code c as a float32. NaNs keep their sign and, for
// the IEEE-like formats, their payload (shifted to the top of float32's
// significand) so that encoding them again gives back the same code.
func (f *NarrowFloat) decodeSlow32(c uint32) float32 {
	c &= 1<<f.bits - 1
	if f.IsNaN(c) {
		var sign uint32
		if f.kind == narrowIEEE || f.kind == narrowFN {
			if c&f.signBit != 0 {
				sign = 1 << 31
			}
		}
		if f.kind == narrowIEEE {
			payload := (c & (1<<f.mantBits - 1)) << (23 - f.mantBits)
			return math.Float32frombits(sign | 0x7f800000 | payload)
		}
		return math.Float32frombits(sign | 0x7fc00000)
	}
	return float32(f.Decode64(c))
}

// Decode returns code c as a float32 (a NaN keeps its sign and payload).
func (f *NarrowFloat) Decode(c uint32) float32 {
	if f.decode32 != nil {
		return f.decode32[c&(1<<f.bits-1)]
	}
	switch f.dt {
	case BFloat16:
		return math.Float32frombits(c << 16)
	case Float16:
		return F16(c).Float32()
	}
	return f.decodeSlow32(c)
}

// specialCode encodes an infinity (nan false) or a NaN (nan true) whose
// float32 sign bit is neg and whose float32 significand is payload.
func (f *NarrowFloat) specialCode(neg, nan bool, payload uint32) uint32 {
	var sign uint32
	if neg {
		sign = f.signBit
	}
	switch f.kind {
	case narrowIEEE:
		inf := uint32(1<<f.expBits-1) << f.mantBits
		if !nan {
			return sign | inf
		}
		p := payload >> (23 - f.mantBits)
		if p == 0 {
			p = 1 << (f.mantBits - 1) // the payload did not survive: make it a quiet NaN
		}
		return sign | inf | p
	case narrowFN:
		return sign | f.nanCode
	case narrowFNUZ, narrowE8M0:
		return f.nanCode
	case narrowFinite:
		if nan {
			// ml_dtypes' "NaN" of the MX formats is the -0 pattern; a
			// negative NaN is its negation, +0.
			return f.signBit ^ sign
		}
		return sign | f.maxCode
	}
	return 0
}

// overflowCode is the code of a finite value whose magnitude rounds past
// the largest finite value.
func (f *NarrowFloat) overflowCode(neg bool) uint32 {
	var sign uint32
	if neg {
		sign = f.signBit
	}
	switch f.kind {
	case narrowIEEE:
		return sign | f.maxCode + 1 // exponent all ones, mantissa zero: Inf
	case narrowFN:
		return sign | f.nanCode
	case narrowFNUZ, narrowE8M0:
		return f.nanCode
	}
	return sign | f.maxCode // MX formats saturate
}

// Encode64 rounds v (any float64) to the nearest code of f, ties to even.
func (f *NarrowFloat) Encode64(v float64) uint32 {
	b := math.Float64bits(v)
	neg := b>>63 != 0
	if math.IsNaN(v) || math.IsInf(v, 0) {
		// Keep the top 23 payload bits in float32 position.
		return f.specialCode(neg, math.IsNaN(v), uint32(b>>29)&0x7fffff)
	}
	a := math.Abs(v)
	if f.kind == narrowE8M0 && (neg || a == 0) {
		return f.nanCode
	}
	code := f.magnitudeCode(a)
	if code > f.maxCode {
		return f.overflowCode(neg)
	}
	if !neg || (code == 0 && f.kind == narrowFNUZ) {
		return code
	}
	return f.signBit | code
}

// magnitudeCode rounds a finite a >= 0 to a magnitude code, ties to even;
// the result may exceed maxCode (overflow). The code space is treated as
// an IEEE layout (biased exponent above the mantissa, subnormals at
// exponent 0), which also gives f8E8M0FNU's rounding: there code 0 is
// 2^-127, and values up to 2^-127 round to it.
func (f *NarrowFloat) magnitudeCode(a float64) uint32 {
	if a == 0 {
		return 0
	}
	_, e2 := math.Frexp(a) // a = frac * 2^e2, frac in [0.5, 1)
	exp := e2 - 1          // unbiased exponent of a
	biased := exp + f.bias
	if biased >= 1 {
		n := math.RoundToEven(math.Ldexp(a, f.mantBits-exp)) // in [2^m, 2^(m+1)]
		return uint32(biased-1)<<f.mantBits + uint32(n)
	}
	// Below the smallest normal: the quantum is 2^(1-bias-mant).
	n := math.RoundToEven(math.Ldexp(a, f.bias-1+f.mantBits))
	return uint32(n)
}

// Encode rounds a float32 to the nearest code of f.
func (f *NarrowFloat) Encode(v float32) uint32 {
	b := math.Float32bits(v)
	if b&0x7f800000 == 0x7f800000 {
		return f.specialCode(b>>31 != 0, b&0x7fffff != 0, b&0x7fffff)
	}
	return f.Encode64(float64(v))
}

// Round rounds a float32 to the nearest value of f (as a float32). It is
// the hot path of narrow-float arithmetic: bit operations for normal
// values, one float add for subnormal ones.
func (f *NarrowFloat) Round(v float32) float32 {
	b := math.Float32bits(v)
	sign := b & 0x80000000
	a := b &^ 0x80000000
	switch {
	case a >= 0x7f800000 || f.kind == narrowE8M0:
		return f.Decode(f.Encode(v))
	case a >= f.minNorm:
		shift := uint(23 - f.mantBits)
		a += (1<<(shift-1) - 1) + (a>>shift)&1
		a &^= 1<<shift - 1
		if a > f.max32 {
			return f.Decode(f.overflowCode(sign != 0))
		}
		return math.Float32frombits(sign | a)
	default:
		r := math.Float32bits(math.Float32frombits(a)+f.magic) - math.Float32bits(f.magic)
		// r is now the rounded magnitude as a multiple of the quantum,
		// expressed in the bits of magic's exponent: rebuild the value.
		val := float32(r) * f.quantum
		if val == 0 && f.kind == narrowFNUZ {
			return 0
		}
		return math.Float32frombits(sign | math.Float32bits(val))
	}
}
