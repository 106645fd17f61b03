package stablehlo

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Floating-point element types in MLIR text: how their bits decode to a
// value, how a value rounds to their bits, and how MLIR prints them
// (APFloat's algorithm, reproduced so halo's text matches MLIR's exactly).

// mlirFloatKind says which special values a float format has.
type mlirFloatKind uint8

const (
	mlirFloatIEEE   mlirFloatKind = iota // Inf and NaN with an all-ones exponent
	mlirFloatFN                          // no Inf; NaN is all ones (S.1111.111)
	mlirFloatFNUZ                        // no Inf, no -0; NaN is 0x80
	mlirFloatFinite                      // no Inf, no NaN (f4E2M1FN, f6*)
	mlirFloatE8M0                        // unsigned exponent only; NaN is 0xFF; no zero
)

// mlirFloatFormat describes one binary floating-point format.
type mlirFloatFormat struct {
	expBits, manBits int
	bias             int
	kind             mlirFloatKind
}

// precision is the number of significand bits including the implicit one.
func (f *mlirFloatFormat) precision() int { return f.manBits + 1 }

// width is the number of bits of the encoding.
func (f *mlirFloatFormat) width() int {
	if f.kind == mlirFloatE8M0 {
		return f.expBits
	}
	return 1 + f.expBits + f.manBits
}

var mlirFloatFormats = map[xla.DType]*mlirFloatFormat{
	xla.Float16:           {5, 10, 15, mlirFloatIEEE},
	xla.BFloat16:          {8, 7, 127, mlirFloatIEEE},
	xla.Float32:           {8, 23, 127, mlirFloatIEEE},
	xla.Float64:           {11, 52, 1023, mlirFloatIEEE},
	xla.Float8E5M2:        {5, 2, 15, mlirFloatIEEE},
	xla.Float8E4M3:        {4, 3, 7, mlirFloatIEEE},
	xla.Float8E3M4:        {3, 4, 3, mlirFloatIEEE},
	xla.Float8E4M3FN:      {4, 3, 7, mlirFloatFN},
	xla.Float8E4M3FNUZ:    {4, 3, 8, mlirFloatFNUZ},
	xla.Float8E5M2FNUZ:    {5, 2, 16, mlirFloatFNUZ},
	xla.Float8E4M3B11FNUZ: {4, 3, 11, mlirFloatFNUZ},
	xla.Float8E8M0FNU:     {8, 0, 127, mlirFloatE8M0},
	xla.Float4E2M1FN:      {2, 1, 1, mlirFloatFinite},
	xla.Float6E2M3FN:      {2, 3, 1, mlirFloatFinite},
	xla.Float6E3M2FN:      {3, 2, 3, mlirFloatFinite},
}

// mlirFloatClass is what a bit pattern decodes to.
type mlirFloatClass uint8

const (
	mlirFloatFiniteClass mlirFloatClass = iota
	mlirFloatInfClass
	mlirFloatNaNClass
)

// decode splits bits into sign, class and, for finite values, the exact
// value mant * 2^exp2.
func (f *mlirFloatFormat) decode(b uint64) (neg bool, class mlirFloatClass, mant uint64, exp2 int) {
	if f.kind == mlirFloatE8M0 {
		b &= 0xFF
		if b == 0xFF {
			return false, mlirFloatNaNClass, 0, 0
		}
		return false, mlirFloatFiniteClass, 1, int(b) - f.bias
	}
	w := f.width()
	if w < 64 {
		b &= 1<<uint(w) - 1
	}
	neg = b>>uint(w-1)&1 == 1
	manMask := uint64(1)<<uint(f.manBits) - 1
	expMask := uint64(1)<<uint(f.expBits) - 1
	m := b & manMask
	e := b >> uint(f.manBits) & expMask
	switch f.kind {
	case mlirFloatIEEE:
		if e == expMask {
			if m == 0 {
				return neg, mlirFloatInfClass, 0, 0
			}
			return neg, mlirFloatNaNClass, m, 0
		}
	case mlirFloatFN:
		if e == expMask && m == manMask {
			return neg, mlirFloatNaNClass, m, 0
		}
	case mlirFloatFNUZ:
		if neg && e == 0 && m == 0 {
			return true, mlirFloatNaNClass, 0, 0
		}
	}
	if e == 0 {
		return neg, mlirFloatFiniteClass, m, 1 - f.bias - f.manBits
	}
	return neg, mlirFloatFiniteClass, m | (manMask + 1), int(e) - f.bias - f.manBits
}

// toFloat64 returns the value of bits as a float64. NaN payloads are kept
// in the high mantissa bits so that fromFloat64 gives the bits back.
func (f *mlirFloatFormat) toFloat64(b uint64) float64 {
	neg, class, mant, exp2 := f.decode(b)
	var sign uint64
	if neg {
		sign = 1 << 63
	}
	switch class {
	case mlirFloatInfClass:
		return math.Float64frombits(sign | 0x7FF<<52)
	case mlirFloatNaNClass:
		if f.kind != mlirFloatIEEE || f.manBits == 0 {
			return math.Float64frombits(sign | 0x7FF8<<48)
		}
		return math.Float64frombits(sign | 0x7FF<<52 | mant<<uint(52-f.manBits))
	}
	v := math.Ldexp(float64(mant), exp2)
	if neg {
		v = -v
	}
	return v
}

// maxFinite returns the bit pattern of the largest finite value.
func (f *mlirFloatFormat) maxFinite() uint64 {
	manMask := uint64(1)<<uint(f.manBits) - 1
	expMask := uint64(1)<<uint(f.expBits) - 1
	switch f.kind {
	case mlirFloatIEEE:
		return (expMask-1)<<uint(f.manBits) | manMask
	case mlirFloatFN:
		return expMask<<uint(f.manBits) | (manMask - 1)
	case mlirFloatE8M0:
		return 0xFE
	}
	return expMask<<uint(f.manBits) | manMask
}

// fromFloat64 rounds v to the nearest value of the format (ties to even).
// ok is false when v is out of range for a format without infinities, or
// NaN for a format without NaN. tie reports that v lay exactly halfway
// between two values of the format.
func (f *mlirFloatFormat) fromFloat64(v float64) (b uint64, ok, tie bool) {
	w := f.width()
	vb := math.Float64bits(v)
	neg := vb>>63 == 1
	var sign uint64
	if neg && f.kind != mlirFloatE8M0 {
		sign = 1 << uint(w-1)
	}
	if f.expBits == 11 && f.manBits == 52 {
		return vb, true, false
	}
	if math.IsNaN(v) {
		switch f.kind {
		case mlirFloatIEEE:
			payload := vb & (1<<52 - 1) >> uint(52-f.manBits)
			if payload == 0 {
				payload = 1 << uint(f.manBits-1)
			}
			expMask := uint64(1)<<uint(f.expBits) - 1
			return sign | expMask<<uint(f.manBits) | payload, true, false
		case mlirFloatFN:
			return sign | uint64(1)<<uint(w-1) - 1, true, false
		case mlirFloatFNUZ:
			return 0x80, true, false
		case mlirFloatE8M0:
			return 0xFF, true, false
		}
		return 0, false, false
	}
	if math.IsInf(v, 0) {
		if f.kind == mlirFloatIEEE {
			expMask := uint64(1)<<uint(f.expBits) - 1
			return sign | expMask<<uint(f.manBits), true, false
		}
		return 0, false, false
	}
	if f.kind == mlirFloatE8M0 && (neg || v == 0) {
		return 0, false, false
	}
	a := math.Abs(v)
	if a == 0 {
		if f.kind == mlirFloatFNUZ {
			return 0, true, false
		}
		return sign, true, false
	}
	_, e := math.Frexp(a) // a = fr * 2^e, fr in [0.5, 1)
	exp := e - 1
	emin := 1 - f.bias
	if f.kind == mlirFloatE8M0 {
		emin = -f.bias
	}
	qexp := exp - f.manBits
	if exp < emin {
		qexp = emin - f.manBits
	}
	scaled := math.Ldexp(a, -qexp)
	q := math.RoundToEven(scaled)
	tie = scaled-math.Floor(scaled) == 0.5
	if q == 0 {
		if f.kind == mlirFloatE8M0 {
			return 0, false, tie
		}
		if f.kind == mlirFloatFNUZ {
			return 0, true, tie
		}
		return sign, true, tie
	}
	mant := uint64(q)
	for mant >= uint64(2)<<uint(f.manBits) {
		mant >>= 1
		qexp++
	}
	var biased uint64
	if mant>>uint(f.manBits) == 0 {
		biased = 0 // subnormal
	} else {
		biased = uint64(qexp + f.manBits + f.bias)
		mant &= uint64(1)<<uint(f.manBits) - 1
	}
	if f.kind == mlirFloatE8M0 {
		biased = uint64(qexp + f.bias)
		if biased > 0xFE {
			return 0, false, tie
		}
		return biased, true, tie
	}
	if biased >= uint64(1)<<uint(f.expBits) {
		if f.kind == mlirFloatIEEE {
			expMask := uint64(1)<<uint(f.expBits) - 1
			return sign | expMask<<uint(f.manBits), true, tie
		}
		return 0, false, tie
	}
	b = biased<<uint(f.manBits) | mant
	if b > f.maxFinite() {
		if f.kind == mlirFloatIEEE {
			expMask := uint64(1)<<uint(f.expBits) - 1
			return sign | expMask<<uint(f.manBits), true, tie
		}
		return 0, false, tie
	}
	return sign | b, true, tie
}

// parseDecimal rounds the decimal literal s ("-1.5e3", "7") to the
// nearest value of the format, exactly (no double rounding).
func (f *mlirFloatFormat) parseDecimal(s string) (uint64, bool) {
	switch {
	case f.expBits == 11 && f.manBits == 52:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !mlirIsRangeErr(err) {
			return 0, false
		}
		return math.Float64bits(v), true
	case f.expBits == 8 && f.manBits == 23 && f.kind == mlirFloatIEEE:
		v, err := strconv.ParseFloat(s, 32)
		if err != nil && !mlirIsRangeErr(err) {
			return 0, false
		}
		return uint64(math.Float32bits(float32(v))), true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !mlirIsRangeErr(err) {
		return 0, false
	}
	b, ok, tie := f.fromFloat64(v)
	if !ok || !tie {
		return b, ok
	}
	// v is exactly halfway between two values of the format: decide with
	// the exact decimal value.
	r, okr := new(big.Rat).SetString(s)
	if !okr {
		return b, ok
	}
	exact := new(big.Rat).SetFloat64(v)
	if exact == nil {
		return b, ok
	}
	c := r.Cmp(exact)
	if c == 0 {
		return b, ok
	}
	// Nudge v one float64 ulp toward the exact value; it is then no
	// longer a tie in the narrow format.
	if c > 0 {
		v = math.Nextafter(v, math.Inf(1))
	} else {
		v = math.Nextafter(v, math.Inf(-1))
	}
	b, ok, _ = f.fromFloat64(v)
	return b, ok
}

func mlirIsRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// mlirFormatFloat prints the float with the given bits as MLIR does:
// "1.000000e+00" when six significant digits give the bits back, else the
// shortest exact decimal ("0.99999988", "9.99999974E-6"), else hex
// ("0x7FC00000", for Inf, NaN and a few large integers).
func (f *mlirFloatFormat) format(b uint64) string {
	neg, class, mant, exp2 := f.decode(b)
	if class == mlirFloatFiniteClass {
		s := mlirAPFloatString(neg, mant, exp2, f.precision(), 6, 0, false)
		if back, ok := f.parseDecimal(s); ok && back == f.canonicalBits(b) {
			return s
		}
		s = mlirAPFloatString(neg, mant, exp2, f.precision(), 0, 3, true)
		if strings.IndexByte(s, '.') >= 0 {
			return s
		}
	}
	return "0x" + strings.ToUpper(strconv.FormatUint(f.canonicalBits(b), 16))
}

// canonicalBits masks b to the width of the format.
func (f *mlirFloatFormat) canonicalBits(b uint64) uint64 {
	w := f.width()
	if w >= 64 {
		return b
	}
	return b & (1<<uint(w) - 1)
}

// mlirAPFloatString writes mant*2^exp2 in decimal the way LLVM's
// APFloat::toString does with the given FormatPrecision (0: enough digits
// to round-trip a format of precisionBits), FormatMaxPadding and
// TruncateZero.
func mlirAPFloatString(neg bool, mant uint64, exp2 int, precisionBits, formatPrecision, maxPadding int, truncateZero bool) string {
	var out []byte
	if mant == 0 {
		if neg {
			out = append(out, '-')
		}
		if maxPadding == 0 {
			if truncateZero {
				out = append(out, "0.0E+0"...)
			} else {
				out = append(out, "0.0"...)
				for i := 1; i < formatPrecision; i++ {
					out = append(out, '0')
				}
				out = append(out, "e+00"...)
			}
		} else {
			out = append(out, '0')
		}
		return string(out)
	}
	if neg {
		out = append(out, '-')
	}
	if formatPrecision == 0 {
		formatPrecision = 2 + precisionBits*59/196
	}
	tz := bits.TrailingZeros64(mant)
	mant >>= uint(tz)
	exp2 += tz
	sig := new(big.Int).SetUint64(mant)
	exp := 0
	if exp2 > 0 {
		sig.Lsh(sig, uint(exp2))
	} else if exp2 < 0 {
		five := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(-exp2)), nil)
		sig.Mul(sig, five)
		exp = exp2
	}
	// Drop decimal digits the requested precision cannot show (truncating,
	// as APFloat does before it rounds the remaining digits).
	bitLen := sig.BitLen()
	bitsRequired := (formatPrecision*196 + 58) / 59
	if bitLen > bitsRequired {
		tens := (bitLen - bitsRequired) * 59 / 196
		if tens > 0 {
			exp += tens
			div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tens)), nil)
			sig.Quo(sig, div)
		}
	}
	// Digits, least significant first, without trailing zeros.
	ds := sig.String()
	buf := make([]byte, 0, len(ds))
	inTrail := true
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		if inTrail && d == '0' {
			exp++
			continue
		}
		inTrail = false
		buf = append(buf, d)
	}
	// Round to formatPrecision digits (half up on the first dropped digit).
	if n := len(buf); n > formatPrecision {
		first := n - formatPrecision
		if buf[first-1] < '5' {
			for first < n && buf[first] == '0' {
				first++
			}
			exp += first
			buf = buf[first:]
		} else {
			for i := first; i != n; i++ {
				if buf[i] == '9' {
					first++
				} else {
					buf[i]++
					break
				}
			}
			if first == n {
				exp += first
				buf = []byte{'1'}
			} else {
				exp += first
				buf = buf[first:]
			}
		}
	}
	nd := len(buf)
	scientific := true
	if maxPadding != 0 {
		if exp >= 0 {
			scientific = exp > maxPadding || nd+exp > formatPrecision
		} else {
			msd := exp + nd - 1
			if msd >= 0 {
				scientific = false
			} else {
				scientific = -msd > maxPadding
			}
		}
	}
	if scientific {
		exp += nd - 1
		out = append(out, buf[nd-1], '.')
		if nd == 1 && truncateZero {
			out = append(out, '0')
		} else {
			for i := 1; i != nd; i++ {
				out = append(out, buf[nd-1-i])
			}
		}
		if !truncateZero && formatPrecision > nd-1 {
			for i := 0; i < formatPrecision-nd+1; i++ {
				out = append(out, '0')
			}
		}
		if truncateZero {
			out = append(out, 'E')
		} else {
			out = append(out, 'e')
		}
		if exp >= 0 {
			out = append(out, '+')
		} else {
			out = append(out, '-')
			exp = -exp
		}
		es := strconv.Itoa(exp)
		if !truncateZero && len(es) < 2 {
			out = append(out, '0')
		}
		out = append(out, es...)
		return string(out)
	}
	if exp >= 0 {
		for i := 0; i != nd; i++ {
			out = append(out, buf[nd-1-i])
		}
		for i := 0; i < exp; i++ {
			out = append(out, '0')
		}
		return string(out)
	}
	whole := exp + nd
	i := 0
	if whole > 0 {
		for ; i != whole; i++ {
			out = append(out, buf[nd-i-1])
		}
		out = append(out, '.')
	} else {
		out = append(out, '0', '.')
		for z := 0; z < -whole; z++ {
			out = append(out, '0')
		}
	}
	for ; i != nd; i++ {
		out = append(out, buf[nd-i-1])
	}
	return string(out)
}
