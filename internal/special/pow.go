package special

import "math"

// RealPow is x^y with math.Pow's special values, within about an ulp
// elsewhere. math.Pow multiplies out the integer part of y by repeated
// squaring, each step doubling the error: (1 + 2^-30)^(2^39) came out
// 4e-6 too small (2.5e10 ulps), 1.1^7000 602 ulps off; and its logarithm
// of a subnormal x is off (5e-324^(1/3) gave 2.2e-103 for 1.7e-108).
// Here an integer y is a power by squaring in double-double arithmetic
// (about 106 bits, then rounded once), and another y is e^(y·ln x) with
// ln x and the product in double-double.
func RealPow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1 || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) || x == 0:
		return math.Pow(x, y)
	case y == 0.5 && x > 0:
		return math.Sqrt(x) // correctly rounded
	case y == math.Trunc(y) && math.Abs(y) < 1<<62:
		n := int64(y)
		r := powIntDD(math.Abs(x), n)
		if x < 0 && n&1 != 0 {
			r = -r
		}
		return r
	case x < 0 && y != math.Trunc(y):
		return math.NaN() // a negative base with a fractional exponent
	case x < 0:
		return powExpLog(-x, y) // |y| ≥ 2^62: an even integer
	}
	return powExpLog(x, y)
}

// dd is a double-double number hi + lo, |lo| ≤ ulp(hi)/2.
type dd struct{ hi, lo float64 }

// ddMul is a·b in double-double.
func ddMul(a, b dd) dd {
	p := a.hi * b.hi
	if math.IsInf(p, 0) || p == 0 {
		return dd{p, 0}
	}
	hi, lo := fastTwoSum(p, math.FMA(a.hi, b.hi, -p)+(a.hi*b.lo+a.lo*b.hi))
	return dd{hi, lo}
}

// ddRecip is 1/x in double-double.
func ddRecip(x float64) dd {
	q := 1 / x
	return dd{q, math.FMA(-q, x, 1) / x}
}

// powIntDD is x^n (x > 0) by squaring in double-double, rounded once.
func powIntDD(x float64, n int64) float64 {
	b := dd{x, 0}
	if n < 0 {
		// (1/x)^|n|: x^|n| may overflow where x^n is a subnormal.
		b, n = ddRecip(x), -n
	}
	r := dd{1, 0}
	for n > 0 {
		if n&1 != 0 {
			r = ddMul(r, b)
		}
		if n >>= 1; n > 0 {
			b = ddMul(b, b)
		}
		if math.IsInf(r.hi, 0) || math.IsInf(b.hi, 0) && n > 0 {
			return math.Inf(1) // x > 1: the rest only grows
		}
	}
	return r.hi + r.lo
}

// ln 2 split so that e·ln2Hi is exact for any float64 exponent e.
const (
	ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
)

// powExpLog is x^y for x > 0 (not 1) and a finite, non-integer y:
// e^(y·ln x) with ln x and y·ln x in double-double.
func powExpLog(x, y float64) float64 {
	m, e := math.Frexp(x) // x = m·2^e, m in [½, 1); subnormals too
	if m < math.Sqrt2/2 {
		m, e = 2*m, e-1
	}
	l := logDD(m) // m in [√½, √2)
	// L = e·ln 2 + ln m
	eh, el := float64(e)*ln2Hi, float64(e)*ln2Lo
	s, e0 := twoSum(eh, l.hi)
	hi, lo := fastTwoSum(s, e0+el+l.lo)
	// p = y·L
	ph := y * hi
	pl := math.FMA(y, hi, -ph) + y*lo
	r := RealExp(ph)
	if math.IsInf(ph, 0) || math.IsNaN(pl) {
		return r // |y·ln x| past 2^1024: 0 or +Inf
	}
	if math.IsInf(r, 0) || r == 0 {
		// Past the range: e^(ph + pl) with pl tiny is on the same side,
		// but at the edge of it the low part decides.
		return RealExp(ph + pl)
	}
	return r + r*pl
}

// logDD is ln m for m in [√½, √2) in double-double: 2·atanh(s) with
// s = (m-1)/(m+1), the series' first two terms in double-double.
func logDD(m float64) dd {
	f := m - 1            // exact (Sterbenz)
	d, dl := twoSum(m, 1) // m + 1 = d + dl exactly
	sh := f / d
	sl := (math.FMA(-sh, d, f) - sh*dl) / d
	s := dd{sh, sl}
	s2 := ddMul(s, s)
	s3 := ddMul(s2, s)
	// 2/3 in double-double
	c3 := dd{2.0 / 3, math.FMA(-3, 2.0/3, 2) / 3}
	t3 := ddMul(c3, s3)
	// The rest, 2s^5/5 + 2s^7/7 + ..., at most 6e-5 here: doubles.
	q := s2.hi
	rest := s3.hi * q * (2.0/5 + q*(2.0/7+q*(2.0/9+q*(2.0/11+q*(2.0/13+q*(2.0/15+q*(2.0/17+q*(2.0/19+q*(2.0/21+q*(2.0/23+q*(2.0/25+q*2.0/27)))))))))))
	hi := 2 * sh
	sum, e := twoSum(hi, t3.hi)
	out, lo := fastTwoSum(sum, e+(2*sl+t3.lo+rest))
	return dd{out, lo}
}

// twoSum is a + b as s + e exactly (s = fl(a + b)).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bv := s - a
	return s, (a - (s - bv)) + (b - bv)
}

// fastTwoSum is a + b as s + e exactly, for |a| ≥ |b|.
func fastTwoSum(a, b float64) (s, e float64) {
	s = a + b
	return s, b - (s - a)
}
