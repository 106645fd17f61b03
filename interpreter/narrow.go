package interpreter

import (
	"math"
	"sort"
	"sync"

	"github.com/halo-ml/halo/xla"
)

// narrowFormat describes a small float format by its bit fields and the
// meaning of its special encodings.
type narrowFormat struct {
	bits     int // total bits
	expBits  int
	mantBits int
	bias     int
	signed   bool
	hasInf   bool // IEEE-style: all-ones exponent, zero mantissa is infinity
	nan      nanKind
}

type nanKind uint8

const (
	nanIEEE nanKind = iota // all-ones exponent, non-zero mantissa
	nanFN                  // only all-ones exponent and mantissa (finite otherwise)
	nanFNUZ                // the negative-zero pattern (1000...0); no negative zero
	nanNone                // no NaN at all
	nanE8M0                // all ones (0xff); no zero, no sign
)

var narrowFormats = map[xla.DType]narrowFormat{
	xla.Float16:           {16, 5, 10, 15, true, true, nanIEEE},
	xla.Float8E5M2:        {8, 5, 2, 15, true, true, nanIEEE},
	xla.Float8E4M3:        {8, 4, 3, 7, true, true, nanIEEE},
	xla.Float8E3M4:        {8, 3, 4, 3, true, true, nanIEEE},
	xla.Float8E4M3FN:      {8, 4, 3, 7, true, false, nanFN},
	xla.Float8E4M3FNUZ:    {8, 4, 3, 8, true, false, nanFNUZ},
	xla.Float8E5M2FNUZ:    {8, 5, 2, 16, true, false, nanFNUZ},
	xla.Float8E4M3B11FNUZ: {8, 4, 3, 11, true, false, nanFNUZ},
	xla.Float8E8M0FNU:     {8, 8, 0, 127, false, false, nanE8M0},
	xla.Float4E2M1FN:      {4, 2, 1, 1, true, false, nanNone},
	xla.Float6E2M3FN:      {6, 2, 3, 1, true, false, nanNone},
	xla.Float6E3M2FN:      {6, 3, 2, 3, true, false, nanNone},
}

// decodeBits returns the value of code c in format f.
func (f narrowFormat) decodeBits(c uint32) float64 {
	c &= 1<<f.bits - 1
	sign := 1.0
	body := c
	if f.signed {
		if c>>(f.bits-1) == 1 {
			sign = -1
		}
		body = c & (1<<(f.bits-1) - 1)
	}
	exp := int(body >> f.mantBits)
	mant := body & (1<<f.mantBits - 1)
	maxExp := 1<<f.expBits - 1
	switch f.nan {
	case nanIEEE:
		if exp == maxExp {
			if mant == 0 && f.hasInf {
				return sign * math.Inf(1)
			}
			return math.NaN()
		}
	case nanFN:
		if exp == maxExp && mant == 1<<f.mantBits-1 {
			return math.NaN()
		}
	case nanFNUZ:
		if sign < 0 && body == 0 {
			return math.NaN()
		}
	case nanE8M0:
		if c == 0xff {
			return math.NaN()
		}
		return math.Ldexp(1, exp-f.bias)
	}
	if exp == 0 {
		return sign * math.Ldexp(float64(mant), 1-f.bias-f.mantBits)
	}
	return sign * math.Ldexp(float64(mant)+float64(uint32(1)<<f.mantBits), exp-f.bias-f.mantBits)
}

// narrowTable lists a format's non-negative finite values in increasing
// order with their codes, for rounding by search.
type narrowTable struct {
	vals  []float64
	codes []uint32
	max   float64
}

var narrowTables sync.Map // xla.DType -> *narrowTable

func tableOf(dt xla.DType, f narrowFormat) *narrowTable {
	if t, ok := narrowTables.Load(dt); ok {
		return t.(*narrowTable)
	}
	t := &narrowTable{}
	limit := uint32(1) << f.bits
	if f.signed {
		limit = 1 << (f.bits - 1)
	}
	for c := uint32(0); c < limit; c++ {
		v := f.decodeBits(c)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		t.vals = append(t.vals, v)
		t.codes = append(t.codes, c)
	}
	// Codes are monotonic in value for non-negative inputs already.
	t.max = t.vals[len(t.vals)-1]
	narrowTables.Store(dt, t)
	return t
}

func decodeNarrowFormat(dt xla.DType, bits uint32) float32 {
	f, ok := narrowFormats[dt]
	if !ok {
		return float32(math.NaN())
	}
	return float32(f.decodeBits(bits))
}

// nanCode is a format's canonical NaN encoding (0 for formats without NaN).
func (f narrowFormat) nanCode() uint32 {
	switch f.nan {
	case nanIEEE:
		return uint32(1<<f.expBits-1)<<f.mantBits | 1<<(f.mantBits-1)
	case nanFN:
		return 1<<(f.bits-1) - 1
	case nanFNUZ:
		return 1 << (f.bits - 1)
	case nanE8M0:
		return 0xff
	}
	return 0
}

func encodeNarrowFormat(dt xla.DType, v32 float32) uint32 {
	f, ok := narrowFormats[dt]
	if !ok {
		return 0
	}
	v := float64(v32)
	if math.IsNaN(v) {
		return f.nanCode()
	}
	var signBit uint32
	if math.Signbit(v) && f.signed {
		signBit = 1 << (f.bits - 1)
	}
	a := math.Abs(v)
	t := tableOf(dt, f)
	if math.IsInf(a, 0) || a > t.max {
		// Past the largest finite value: IEEE rounding decides between the
		// maximum and infinity; formats without infinity give NaN, or
		// saturate when they have no NaN either.
		if !math.IsInf(a, 0) {
			top := t.vals[len(t.vals)-1]
			prev := t.vals[len(t.vals)-2]
			half := (top - prev) / 2
			if a < top+half || (a == top+half && t.codes[len(t.codes)-1]&1 == 0) {
				return signBit | t.codes[len(t.codes)-1]
			}
		}
		switch {
		case f.hasInf:
			return signBit | uint32(1<<f.expBits-1)<<f.mantBits
		case f.nan == nanNone:
			return signBit | t.codes[len(t.codes)-1]
		default:
			return f.nanCode()
		}
	}
	if !f.signed && math.Signbit(v) && v != 0 {
		return f.nanCode()
	}
	i := sort.SearchFloat64s(t.vals, a)
	var code uint32
	switch {
	case i < len(t.vals) && t.vals[i] == a:
		code = t.codes[i]
	case i == 0:
		code = t.codes[0]
	default:
		lo, hi := t.vals[i-1], t.vals[i]
		switch {
		case a-lo < hi-a:
			code = t.codes[i-1]
		case a-lo > hi-a:
			code = t.codes[i]
		case t.codes[i-1]&1 == 0:
			code = t.codes[i-1]
		default:
			code = t.codes[i]
		}
	}
	if f.nan == nanFNUZ && code == 0 {
		return 0 // no negative zero
	}
	if f.nan == nanE8M0 {
		return code
	}
	return signBit | code
}
