package xla

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// The tests of every code and of the formats' facts are in the
// interpreter (interpreter/narrow_test.go), through its DecodeNarrow,
// EncodeNarrow and RoundNarrow; this one needs the formats' fields.

// narrowOracleTypes are the formats the oracle test rounds to.
var narrowOracleTypes = []DType{
	BFloat16, Float16,
	Float8E5M2, Float8E4M3, Float8E3M4,
	Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2FNUZ, Float8E4M3B11FNUZ,
	Float4E2M1FN, Float6E2M3FN, Float6E3M2FN,
}

// narrowOracle rounds by searching the list of a format's values: the
// nearest one wins, ties go to the even code, and a value nearer to the
// (virtual) next value after max overflows.
type narrowOracle struct {
	vals  []float64 // non-negative finite values, ascending, then max+ulp
	codes []uint32
}

func newNarrowOracle(dt DType) *narrowOracle {
	f := NarrowFloatOf(dt)
	o := &narrowOracle{}
	for c := uint32(0); c <= f.maxCode; c++ {
		o.vals = append(o.vals, f.Decode64(c))
		o.codes = append(o.codes, c)
	}
	ulp := math.Ldexp(1, int(f.maxCode>>f.mantBits)-f.bias-f.mantBits)
	o.vals = append(o.vals, f.maxVal+ulp)
	o.codes = append(o.codes, f.maxCode+1)
	return o
}

// round returns the magnitude code of a >= 0 (maxCode+1 means overflow).
func (o *narrowOracle) round(a float64) uint32 {
	i := sort.SearchFloat64s(o.vals, a)
	switch {
	case i == len(o.vals):
		return o.codes[len(o.codes)-1]
	case o.vals[i] == a || i == 0:
		return o.codes[i]
	}
	lo, hi := o.vals[i-1], o.vals[i]
	switch {
	case a-lo < hi-a:
		return o.codes[i-1]
	case a-lo > hi-a:
		return o.codes[i]
	case o.codes[i-1]&1 == 0:
		return o.codes[i-1]
	}
	return o.codes[i]
}

// expected is the value the oracle gives for a finite v.
func (o *narrowOracle) expected(dt DType, v float64) float64 {
	f := NarrowFloatOf(dt)
	code := o.round(math.Abs(v))
	neg := math.Signbit(v)
	if code > f.maxCode {
		switch f.kind {
		case narrowIEEE:
			return math.Copysign(math.Inf(1), v)
		case narrowFinite:
			return math.Copysign(f.maxVal, v)
		}
		return math.NaN()
	}
	r := f.Decode64(code)
	if neg && !(r == 0 && f.kind == narrowFNUZ) {
		r = -r
	}
	return r
}

func narrowSameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// Rounding agrees with the search oracle on every midpoint between
// neighbours (the ties), just around them, and on random values.
func TestNarrowRoundingMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range narrowOracleTypes {
		f := NarrowFloatOf(dt)
		o := newNarrowOracle(dt)
		var probes []float64
		step := 1
		if len(o.vals) > 4096 {
			step = len(o.vals) / 4096
		}
		for i := 0; i+1 < len(o.vals); i += step {
			mid := (o.vals[i] + o.vals[i+1]) / 2
			probes = append(probes, mid, math.Nextafter(mid, 0), math.Nextafter(mid, math.Inf(1)), o.vals[i])
		}
		for range 20000 {
			probes = append(probes, float64(math.Float32frombits(rng.Uint32()&0x7fffffff)))
		}
		probes = append(probes, o.vals[len(o.vals)-1]*4, math.MaxFloat32)
		for _, p := range probes {
			if math.IsNaN(p) || math.IsInf(p, 0) {
				continue
			}
			for _, v := range []float64{p, -p} {
				want := o.expected(dt, v)
				if float64(float32(v)) == v {
					if got := f.Round(float32(v)); !narrowSameFloat(want, float64(got)) {
						t.Fatalf("%v: RoundNarrow(%g) = %g, want %g", dt, v, got, want)
					}
					if got := f.Decode(f.Encode(float32(v))); !narrowSameFloat(want, float64(got)) {
						t.Fatalf("%v: DecodeNarrow(EncodeNarrow(%g)) = %g, want %g", dt, v, got, want)
					}
					s := []float32{float32(v)}
					if roundSlice(f, s); !narrowSameFloat(want, float64(s[0])) {
						t.Fatalf("%v: RoundNarrowSlice(%g) = %g, want %g", dt, v, s[0], want)
					}
				}
				if got := f.Decode(f.Encode64(v)); !narrowSameFloat(want, float64(got)) {
					t.Fatalf("%v: RoundNarrow64(%g) = %g, want %g", dt, v, got, want)
				}
			}
		}
	}
}

// roundSlice rounds every element of s to f.
func roundSlice(f *NarrowFloat, s []float32) {
	for i, v := range s {
		s[i] = f.Round(v)
	}
}

// IsNaN reads a code as Decode does, from its low bits: a code with
// higher bits set is the NaN its low bits are.
func TestIsNaNMasksCode(t *testing.T) {
	for _, c := range []struct {
		dt   DType
		code uint32
	}{{Float8E4M3FNUZ, 0x180}, {Float8E8M0FNU, 0x1ff}, {Float8E4M3FN, 0x17f}, {Float8E5M2, 0x17f}} {
		f := NarrowFloatOf(c.dt)
		if f == nil {
			t.Fatalf("no NarrowFloat for %v", c.dt)
		}
		if !math.IsNaN(float64(f.Decode(c.code))) {
			t.Errorf("%v: Decode(%#x) = %v, want NaN", c.dt, c.code, f.Decode(c.code))
		}
		if !f.IsNaN(c.code) {
			t.Errorf("%v: IsNaN(%#x) = false, want true (Decode reads it as NaN)", c.dt, c.code)
		}
	}
}

// F16FromFloat64 and BF16FromFloat64 round once: on values a float32
// holds they agree with the float32 conversions (NaN payloads included:
// F16FromFloat32 dropped them), and where float32 would round first they
// do not land a step off.
func TestFromFloat64RoundsOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		f := math.Float32frombits(r.Uint32())
		if f != f {
			// float64(f) quiets a signaling NaN: NaNs are compared with the
			// interpreter's float32 conversion instead.
			if got, want := F16FromFloat32(f), F16(NarrowFloatOf(Float16).Encode(f)); got != want {
				t.Fatalf("F16FromFloat32(%#x) = %#x, the interpreter's conversion %#x", math.Float32bits(f), got, want)
			}
			if got, want := BF16FromFloat32(f), BF16(NarrowFloatOf(BFloat16).Encode(f)); got != want {
				t.Fatalf("BF16FromFloat32(%#x) = %#x, the interpreter's conversion %#x", math.Float32bits(f), got, want)
			}
			continue
		}
		if got, want := F16FromFloat64(float64(f)), F16FromFloat32(f); got != want {
			t.Fatalf("F16FromFloat64(%g) = %#x, F16FromFloat32 %#x", f, got, want)
		}
		if got, want := BF16FromFloat64(float64(f)), BF16FromFloat32(f); got != want {
			t.Fatalf("BF16FromFloat64(%g) = %#x, BF16FromFloat32 %#x", f, got, want)
		}
	}
	if got, want := F16FromFloat64(1+0x1p-11+0x1p-40), F16FromFloat32(1+0x1p-10); got != want {
		t.Errorf("F16FromFloat64(1 + 2^-11 + 2^-40) = %#x, want %#x", got, want)
	}
	if got, want := BF16FromFloat64(1+0x1p-8+0x1p-30), BF16FromFloat32(1+0x1p-7); got != want {
		t.Errorf("BF16FromFloat64(1 + 2^-8 + 2^-30) = %#x, want %#x", got, want)
	}
}
