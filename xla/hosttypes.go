package xla

import "math"

// BF16 is a bfloat16 value stored as its 16 bits (the top half of a
// float32), for host buffers of BFloat16 elements.
type BF16 uint16

// F16 is an IEEE half-precision value stored as its 16 bits, for host
// buffers of Float16 elements.
type F16 uint16

// BF16FromFloat32 rounds f to bfloat16 (round to nearest even). A NaN
// keeps its sign and top payload bits; one whose payload would vanish
// becomes a quiet NaN.
func BF16FromFloat32(f float32) BF16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		h := uint16(u >> 16)
		if h&0x7f == 0 {
			h |= 0x40
		}
		return BF16(h)
	}
	u += 0x7fff + (u>>16)&1
	return BF16(u >> 16)
}

// Float32 widens b to float32.
func (b BF16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// BF16FromFloat64 rounds f to bfloat16 once (round to nearest even);
// BF16FromFloat32(float32(f)) rounds twice, which can land one step off
// (1 + 2^-8 + 2^-30 is 1 that way, 1 + 2^-7 this way).
func BF16FromFloat64(f float64) BF16 { return BF16(NarrowFloatOf(BFloat16).Encode64(f)) }

// F16FromFloat64 rounds f to IEEE half precision once (round to nearest
// even), as BF16FromFloat64.
func F16FromFloat64(f float64) F16 { return F16(NarrowFloatOf(Float16).Encode64(f)) }

// F16FromFloat32 rounds f to IEEE half precision (round to nearest even).
// A NaN keeps its sign and top payload bits, as BF16FromFloat32 (and the
// interpreter's conversions) keep them; one whose payload would vanish
// becomes a quiet NaN.
func F16FromFloat32(f float32) F16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	exp := int32(u>>23) & 0xff
	mant := u & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			p := uint16(mant >> 13)
			if p == 0 {
				p = 0x200
			}
			return F16(sign | 0x7c00 | p)
		}
		return F16(sign | 0x7c00)
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return F16(sign | 0x7c00)
	}
	if e <= 0 {
		if e < -10 {
			return F16(sign)
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := mant >> shift
		rem := mant & (1<<shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return F16(sign | uint16(r))
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++
	}
	return F16(sign | uint16(r))
}

// Float32 widens h to float32.
func (h F16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(mant) / 1024 / 16384
		if sign != 0 {
			return -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}
