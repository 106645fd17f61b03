package interpreter

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halo-ml/halo/xla"
)

// narrowTypes are the formats whose every code the tests enumerate.
var narrowTypes = []xla.DType{
	xla.Float16,
	xla.Float8E5M2, xla.Float8E4M3, xla.Float8E3M4,
	xla.Float8E4M3FN, xla.Float8E4M3FNUZ, xla.Float8E5M2FNUZ, xla.Float8E4M3B11FNUZ,
	xla.Float8E8M0FNU,
	xla.Float4E2M1FN, xla.Float6E2M3FN, xla.Float6E3M2FN,
}

func bitsOf(dt xla.DType) int {
	if dt == xla.BFloat16 || dt == xla.Float16 {
		return 16
	}
	return dt.Bits()
}

// Facts of every format (ml_dtypes' finfo and the OCP / IEEE documents).
func TestNarrowFormatFacts(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		dt         xla.DType
		max        float64
		minSub     float64 // smallest positive value
		maxCode    uint32
		infCode    uint32 // code of +Inf, or 0 when the format has none
		nanCodes   []uint32
		negZeroNaN bool // the 1000..0 pattern is NaN rather than -0
	}{
		{xla.Float16, 65504, math.Ldexp(1, -24), 0x7bff, 0x7c00, []uint32{0x7c01, 0x7e00, 0xfe00, 0xffff}, false},
		{xla.BFloat16, float64(math.Float32frombits(0x7f7f0000)), math.Ldexp(1, -133), 0x7f7f, 0x7f80, []uint32{0x7fc0, 0xffc0, 0x7f81}, false},
		{xla.Float8E5M2, 57344, math.Ldexp(1, -16), 0x7b, 0x7c, []uint32{0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff}, false},
		{xla.Float8E4M3, 240, math.Ldexp(1, -9), 0x77, 0x78, []uint32{0x79, 0x7c, 0x7f, 0xff}, false},
		{xla.Float8E3M4, 15.5, math.Ldexp(1, -6), 0x6f, 0x70, []uint32{0x71, 0x78, 0x7f, 0xff}, false},
		{xla.Float8E4M3FN, 448, math.Ldexp(1, -9), 0x7e, 0, []uint32{0x7f, 0xff}, false},
		{xla.Float8E4M3FNUZ, 240, math.Ldexp(1, -10), 0x7f, 0, []uint32{0x80}, true},
		{xla.Float8E5M2FNUZ, 57344, math.Ldexp(1, -17), 0x7f, 0, []uint32{0x80}, true},
		{xla.Float8E4M3B11FNUZ, 30, math.Ldexp(1, -13), 0x7f, 0, []uint32{0x80}, true},
		{xla.Float8E8M0FNU, math.Ldexp(1, 127), math.Ldexp(1, -127), 0xfe, 0, []uint32{0xff}, false},
		{xla.Float4E2M1FN, 6, 0.5, 0x7, 0, nil, false},
		{xla.Float6E2M3FN, 7.5, 0.125, 0x1f, 0, nil, false},
		{xla.Float6E3M2FN, 28, 0.0625, 0x1f, 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.dt.String(), func(t *testing.T) {
			assert.Equal(t, float32(tt.max), DecodeNarrow(tt.dt, tt.maxCode), "max")
			assert.Equal(t, tt.maxCode, EncodeNarrow(tt.dt, float32(tt.max)))
			minCode := uint32(1)
			if tt.dt == xla.Float8E8M0FNU {
				minCode = 0
			}
			assert.Equal(t, float32(tt.minSub), DecodeNarrow(tt.dt, minCode), "smallest value")
			if tt.infCode != 0 {
				assert.Equal(t, float32(inf), DecodeNarrow(tt.dt, tt.infCode))
				assert.Equal(t, float32(-inf), DecodeNarrow(tt.dt, tt.infCode|1<<(bitsOf(tt.dt)-1)))
				assert.Equal(t, tt.infCode, EncodeNarrow(tt.dt, float32(inf)))
			}
			for _, c := range tt.nanCodes {
				assert.True(t, math.IsNaN(float64(DecodeNarrow(tt.dt, c))), "code %#x is NaN", c)
			}
			signCode := uint32(1) << (bitsOf(tt.dt) - 1)
			if tt.dt != xla.Float8E8M0FNU {
				z := DecodeNarrow(tt.dt, signCode)
				if tt.negZeroNaN {
					assert.True(t, math.IsNaN(float64(z)))
					assert.Equal(t, uint32(0), EncodeNarrow(tt.dt, float32(math.Copysign(0, -1))), "-0 becomes +0")
				} else {
					assert.Equal(t, float32(0), z)
					assert.True(t, math.Signbit(float64(z)), "negative zero")
				}
			}
		})
	}
}

// Every code decodes and encodes back to itself, and a decoded value is
// left unchanged by rounding.
func TestNarrowRoundTripEveryCode(t *testing.T) {
	for _, dt := range append([]xla.DType{xla.BFloat16}, narrowTypes...) {
		n := uint32(1) << bitsOf(dt)
		for c := uint32(0); c < n; c++ {
			v := DecodeNarrow(dt, c)
			if got := EncodeNarrow(dt, v); got != c {
				t.Fatalf("%v: code %#x decodes to %v, which encodes to %#x", dt, c, v, got)
			}
			if v != v {
				if r := RoundNarrow(dt, v); r == r {
					t.Fatalf("%v: NaN code %#x rounds to %v", dt, c, r)
				}
				continue
			}
			if r := RoundNarrow(dt, v); math.Float32bits(r) != math.Float32bits(v) {
				t.Fatalf("%v: code %#x: RoundNarrow(%v) = %v", dt, c, v, r)
			}
			if r := RoundNarrow64(dt, float64(v)); math.Float32bits(r) != math.Float32bits(v) {
				t.Fatalf("%v: code %#x: RoundNarrow64(%v) = %v", dt, c, v, r)
			}
		}
	}
}

func TestNarrowTiesToEven(t *testing.T) {
	tests := []struct {
		dt   xla.DType
		in   float32
		want float32
	}{
		{xla.Float16, 1 + 1.0/2048, 1},                                          // halfway between 1 and 1+2^-10: even is 1
		{xla.Float16, 1 + 3.0/2048, 1 + 2.0/1024},                               // halfway, odd below: up
		{xla.Float16, 65520, float32(math.Inf(1))},                              // max + half ulp: to even = Inf
		{xla.Float16, 65519.99, 65504},                                          // just under: max
		{xla.Float16, float32(math.Ldexp(1, -25)), 0},                           // half the smallest subnormal: to zero
		{xla.Float16, float32(math.Ldexp(3, -25)), float32(math.Ldexp(2, -24))}, // 1.5 subnormals: to 2
		{xla.BFloat16, 1.00390625, 1},                                           // 1 + 2^-8
		{xla.BFloat16, 1.01171875, 1.015625},                                    // 1 + 3*2^-8
		{xla.Float8E4M3FN, 464, 448},                                            // halfway 448..480(NaN code): even is 448
		{xla.Float8E4M3FN, 465, float32(math.NaN())},                            // past it: NaN, no Inf
		{xla.Float8E4M3FN, float32(math.Inf(1)), float32(math.NaN())},
		{xla.Float8E5M2, 61440, float32(math.Inf(1))}, // halfway 57344..65536: even is Inf
		{xla.Float8E5M2, 61439, 57344},
		{xla.Float8E4M3, 248, float32(math.Inf(1))},    // halfway 240..256
		{xla.Float8E4M3FNUZ, 248, float32(math.NaN())}, // max 240, code 0x7f odd: overflow
		{xla.Float8E4M3FNUZ, -1e-9, 0},                 // no negative zero
		{xla.Float8E5M2FNUZ, 1e6, float32(math.NaN())},
		{xla.Float8E4M3B11FNUZ, 31, float32(math.NaN())}, // halfway 30..32
		{xla.Float8E4M3B11FNUZ, 30.9, 30},
		{xla.Float4E2M1FN, 5, 4},   // halfway 4..6: even (code 6) is 4
		{xla.Float4E2M1FN, 7, 6},   // halfway 6..8: saturates
		{xla.Float4E2M1FN, 100, 6}, // MX formats saturate
		{xla.Float4E2M1FN, float32(math.Inf(-1)), -6},
		{xla.Float4E2M1FN, 0.25, 0},   // halfway 0..0.5: even is 0
		{xla.Float4E2M1FN, 0.75, 1},   // halfway 0.5..1: even is 1
		{xla.Float6E2M3FN, 7.75, 7.5}, // halfway 7.5..8: saturate
		{xla.Float6E3M2FN, 30, 28},
		{xla.Float8E8M0FNU, 1.5, 2}, // half up between exponents
		{xla.Float8E8M0FNU, 1.49, 1},
		{xla.Float8E8M0FNU, 3, 4},
		{xla.Float8E8M0FNU, 0, float32(math.NaN())},  // no zero
		{xla.Float8E8M0FNU, -1, float32(math.NaN())}, // no sign
		{xla.Float8E8M0FNU, float32(math.Ldexp(1, -130)), float32(math.Ldexp(1, -127))},
		{xla.Float8E8M0FNU, float32(math.Ldexp(1, -127)), float32(math.Ldexp(1, -127))},
		{xla.Float8E8M0FNU, float32(math.Ldexp(1.2, -127)), float32(math.Ldexp(1, -126))},
		{xla.Float8E8M0FNU, float32(math.Ldexp(1.2, -126)), float32(math.Ldexp(1, -126))},
		{xla.Float8E8M0FNU, float32(math.Ldexp(1, 127)), float32(math.Ldexp(1, 127))},
		{xla.Float8E8M0FNU, float32(math.Ldexp(1.5, 127)), float32(math.NaN())},
		{xla.Float8E8M0FNU, float32(math.Inf(1)), float32(math.NaN())},
	}
	for _, tt := range tests {
		got := RoundNarrow(tt.dt, tt.in)
		assert.True(t, narrowSameFloat(float64(tt.want), float64(got)), "%v: RoundNarrow(%g) = %g, want %g", tt.dt, tt.in, got, tt.want)
		got64 := RoundNarrow64(tt.dt, float64(tt.in))
		assert.True(t, narrowSameFloat(float64(tt.want), float64(got64)), "%v: RoundNarrow64(%g) = %g, want %g", tt.dt, tt.in, got64, tt.want)
	}
}

func TestNarrowNaNEncodings(t *testing.T) {
	nan := float32(math.NaN())
	negNaN := math.Float32frombits(0xffc00000)
	tests := []struct {
		dt         xla.DType
		pos, neg   uint32
		infP, infN uint32
	}{
		{xla.Float16, 0x7e00, 0xfe00, 0x7c00, 0xfc00},
		{xla.BFloat16, 0x7fc0, 0xffc0, 0x7f80, 0xff80},
		{xla.Float8E5M2, 0x7e, 0xfe, 0x7c, 0xfc},
		{xla.Float8E4M3, 0x7c, 0xfc, 0x78, 0xf8},
		{xla.Float8E3M4, 0x78, 0xf8, 0x70, 0xf0},
		{xla.Float8E4M3FN, 0x7f, 0xff, 0x7f, 0xff},
		{xla.Float8E4M3FNUZ, 0x80, 0x80, 0x80, 0x80},
		{xla.Float8E5M2FNUZ, 0x80, 0x80, 0x80, 0x80},
		{xla.Float8E4M3B11FNUZ, 0x80, 0x80, 0x80, 0x80},
		{xla.Float8E8M0FNU, 0xff, 0xff, 0xff, 0xff},
		{xla.Float4E2M1FN, 0x8, 0x0, 0x7, 0xf},
		{xla.Float6E2M3FN, 0x20, 0x00, 0x1f, 0x3f},
		{xla.Float6E3M2FN, 0x20, 0x00, 0x1f, 0x3f},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.pos, EncodeNarrow(tt.dt, nan), "%v +NaN", tt.dt)
		assert.Equal(t, tt.neg, EncodeNarrow(tt.dt, negNaN), "%v -NaN", tt.dt)
		assert.Equal(t, tt.infP, EncodeNarrow(tt.dt, float32(math.Inf(1))), "%v +Inf", tt.dt)
		assert.Equal(t, tt.infN, EncodeNarrow(tt.dt, float32(math.Inf(-1))), "%v -Inf", tt.dt)
	}
	// Payloads survive where they fit; a signalling f32 NaN whose payload
	// is lost becomes quiet.
	assert.Equal(t, uint32(0x7d), EncodeNarrow(xla.Float8E5M2, DecodeNarrow(xla.Float8E5M2, 0x7d)))
	assert.Equal(t, uint32(0x7e00), EncodeNarrow(xla.Float16, math.Float32frombits(0x7f800001)))
	assert.Equal(t, uint32(0x7fc0), EncodeNarrow(xla.BFloat16, math.Float32frombits(0x7f800001)))
}

func TestNarrowNonNarrowTypes(t *testing.T) {
	assert.Equal(t, float32(1.5), RoundNarrow(xla.Float32, 1.5))
	assert.Equal(t, float32(1.5), RoundNarrow(xla.Int32, 1.5))
	assert.Equal(t, uint32(0), EncodeNarrow(xla.Int32, 1.5))
	assert.True(t, math.IsNaN(float64(DecodeNarrow(xla.Int32, 1))))
	assert.Equal(t, float32(0.1), RoundNarrow64(xla.Float32, 0.1))
	s := []float32{1.1}
	RoundNarrowSlice(xla.Float32, s)
	assert.Equal(t, float32(1.1), s[0])
}

func BenchmarkRoundNarrow(b *testing.B) {
	in := make([]float32, 1<<16)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range in {
		in[i] = float32(rng.NormFloat64() * 10)
	}
	buf := make([]float32, len(in))
	for _, dt := range []xla.DType{xla.BFloat16, xla.Float16, xla.Float8E4M3FN, xla.Float8E5M2} {
		b.Run(dt.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(in)))
			for b.Loop() {
				copy(buf, in)
				RoundNarrowSlice(dt, buf)
			}
		})
	}
}

func narrowSameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}
