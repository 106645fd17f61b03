package special

import (
	"math"
	"math/big"
)

// Lgamma is log|Γ(x)|: math.Lgamma, except that Lgamma(-Inf) is +Inf
// (|Γ| grows without bound in both directions, as CHLO defines it).
func Lgamma(x float64) float64 {
	if math.IsInf(x, 0) {
		return math.Inf(1)
	}
	if ax := math.Abs(x); ax > 0 && ax < 0x1p-1022 {
		// log|Γ(x)| = -log|x| - γx + O(x²): math.Lgamma takes its log
		// with math.Log, which is wrong for subnormals.
		return -RealLog(ax)
	}
	v, _ := math.Lgamma(x)
	return v
}

// bernoulli2k[k] is the Bernoulli number B_{2k+2}.
var bernoulli2k = [...]float64{
	1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
	-3617.0 / 510, 43867.0 / 798, -174611.0 / 330, 854513.0 / 138, -236364091.0 / 2730,
	8553103.0 / 6,
}

// digammaRoot is the positive zero of ψ, x0 = 1.46163214496836234126...,
// as a double-double hi + lo.
var digammaRootHi, digammaRootLo = splitDecimal("1.4616321449683623412626595423257213284681962040064463512959884")

// digammaTaylor[n-1] is ψ^(n)(x0)/n! = (-1)^(n+1) ζ(n+1, x0): the Taylor
// coefficients of ψ around its positive zero, used where ψ(x) is computed
// otherwise as a difference of nearly equal numbers.
var digammaTaylor = func() []float64 {
	c := make([]float64, 40)
	for n := 1; n <= len(c); n++ {
		z := Zeta(float64(n+1), digammaRootHi)
		// ζ(s, q) at q = hi + lo: the derivative -s ζ(s+1, q) times lo.
		z -= float64(n+1) * Zeta(float64(n+2), digammaRootHi) * digammaRootLo
		if n%2 == 0 {
			z = -z
		}
		c[n-1] = z
	}
	return c
}()

// splitDecimal rounds a decimal number to hi + lo.
func splitDecimal(s string) (hi, lo float64) {
	v, _, err := big.ParseFloat(s, 10, 200, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	hi, _ = v.Float64()
	lo, _ = new(big.Float).SetPrec(200).Sub(v, big.NewFloat(hi)).Float64()
	return hi, lo
}

// Digamma is ψ(x) = Γ'(x)/Γ(x). It is -Inf at ±0 and NaN at the negative
// integers (its poles, as CHLO defines it), +Inf at +Inf and NaN at -Inf.
func Digamma(x float64) float64 {
	switch {
	case x != x:
		return x
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return math.NaN()
	}
	if x < 0 {
		if x == math.Floor(x) {
			return math.NaN()
		}
		// Reflection: ψ(x) = ψ(1-x) - π cot(πx).
		return Digamma(1-x) - math.Pi/tanPi(x)
	}
	// Around the zero x0 (|x - x0| < 1/2) the Taylor series; below it one
	// step up, and up to 6 steps down into it (ψ(x) = ψ(x-1) + 1/(x-1), x-1
	// exact): the ways that do not subtract nearly equal numbers.
	const window = 0.5
	if x < digammaRootHi-window {
		return Digamma(x+1) - 1/x
	}
	acc := 0.0
	if x < 6 {
		for x-digammaRootHi >= window {
			x--
			acc += 1 / x
		}
		d := (x - digammaRootHi) - digammaRootLo
		s := 0.0
		for i := len(digammaTaylor) - 1; i >= 0; i-- {
			s = s*d + digammaTaylor[i]
		}
		return s*d + acc
	}
	// Recurrence ψ(x) = ψ(x+1) - 1/x up to x >= 10, then the asymptotic
	// expansion ψ(x) ~ ln x - 1/(2x) - Σ B_2k / (2k x^2k).
	for x < 10 {
		acc += 1 / x
		x++
	}
	z := 1 / (x * x)
	s := 0.0
	for k := 9; k >= 0; k-- {
		s = s*z + bernoulli2k[k]/float64(2*k+2)
	}
	return RealLog(x) - 0.5/x - s*z - acc
}

// tanPi is tan(πx) with the argument reduced exactly first.
func tanPi(x float64) float64 {
	r := x - math.Round(x) // exact, in [-0.5, 0.5]
	switch {
	case r == 0.5 || r == -0.5:
		return math.Inf(1)
	case math.Abs(r) > 0.25:
		// tan(πr) = 1 / tan(π(sign(r)/2 - r)); the difference is exact.
		return 1 / math.Tan(math.Pi*(math.Copysign(0.5, r)-r))
	}
	return math.Tan(math.Pi * r)
}

// Polygamma is ψ^(n)(x), the n-th derivative of the digamma function:
// ψ for n = 0 and (-1)^(n+1) n! ζ(n+1, x) for n = 1, 2, ...; NaN when n is
// not a non-negative integer.
func Polygamma(n, x float64) float64 {
	switch {
	case n != n || x != x:
		return math.NaN()
	case n < 0 || n != math.Floor(n) || math.IsInf(n, 0):
		return math.NaN()
	case n == 0:
		return Digamma(x)
	case math.IsInf(x, 1):
		// ζ(n+1, +∞) = 0: the result is ±0 for every n (n! · 0 was NaN
		// once n! overflowed).
		return math.Copysign(0, math.Mod(n, 2)-0.5)
	}
	z := Zeta(n+1, x)
	f := math.Gamma(n + 1)
	r := f * z
	if (math.IsInf(f, 0) || math.Abs(z) < 0x1p-1022) && x > 0 && !math.IsInf(x, 0) {
		// n! overflows (n > 170) or ζ(n+1, x) underflows: their product
		// through logs, ζ as x^-(n+1) · x^(n+1) ζ(n+1, x).
		r = math.Exp(Lgamma(n+1) - (n+1)*RealLog(x) + RealLog(zetaScaled(n+1, x, x, 0)))
	} else if math.IsInf(f, 0) && z != 0 && !math.IsInf(z, 0) && z == z {
		r = math.Copysign(math.Exp(Lgamma(n+1)+RealLog(math.Abs(z))), z)
	}
	if math.Mod(n, 2) == 0 {
		r = -r
	}
	return r
}

// Zeta is the Hurwitz zeta function ζ(x, q) = Σ_{k>=0} (q+k)^-x. As CHLO
// defines it: NaN for x < 1, +Inf at x = 1, and for q <= 0 NaN unless x is
// an integer; at the poles q = 0, -1, -2, ... +Inf for even x, NaN
// otherwise.
func Zeta(x, q float64) float64 {
	switch {
	case x != x || q != q:
		return math.NaN()
	case x == 1:
		return math.Inf(1)
	case x < 1:
		return math.NaN()
	}
	xInt := x == math.Floor(x)
	if q <= 0 {
		switch {
		case !xInt:
			return math.NaN()
		case q == math.Floor(q):
			if math.Mod(x, 2) == 0 {
				return math.Inf(1)
			}
			return math.NaN()
		case math.IsInf(q, -1):
			return math.NaN()
		}
	}
	if math.IsInf(q, 1) {
		return 0
	}
	if math.IsInf(x, 1) {
		return RealPow(q, -x)
	}
	// Terms at negative q (x is an integer here): q+k = -(b+j) for j < n,
	// n = ⌈-q⌉, b = -q-(n-1) in (0, 1), sum to (-1)^x (ζ(x, b) - ζ(x, b+n)),
	// and with a = q+n the result is ζ(x, a) ± ζ(x, b) ∓ ζ(x, b+n), the
	// two large ones (a, b < 1) paired first: at half-integers a = b and
	// they cancel exactly, where a running sum kept their rounding. b is
	// -q minus the integer n-1, not -(q+n-1): rounding q+n-1 lost the low
	// bits of a small q (ζ(2, -1e-10) came out 9.99999834e19).
	if q < 0 {
		n := math.Ceil(-q)
		a, b := q+n, -q-(n-1)
		za, zb, zbn := zetaScaled(x, a, 1, 0), Zeta(x, b), Zeta(x, b+n)
		if math.Mod(x, 2) != 0 {
			return (za - zb) + zbn
		}
		return (za + zb) - zbn
	}
	return zetaScaled(x, q, 1, 0)
}

// zetaScaled is sum + s^x ζ(x, q) for q > 0 (s > 0), the terms added to
// the running sum: every power (q+k)^-x is taken as ((q+k)/s)^-x, so
// that with s = q a sum whose terms underflow or overflow in float64
// stays representable.
//
// Euler-Maclaurin: Σ_{k<N} (q+k)^-x + a^(1-x)/(x-1) + a^-x/2
// + Σ_j B_2j/(2j)! x(x+1)...(x+2j-2) a^(-x-2j+1),  a = q+N,
// with a >= max(10, x) + 10 so that the correction terms decrease fast
// enough for the table's 13 to reach float64's precision (from a = x = 10
// they did not: ζ(10, 10) was 261 ulp off). The
// tail is a^(1-x) · (1/(x-1) + 1/(2a) + Σ_j ... a^-2j): a^(1-x) taken
// at once, as a·a^-x underflowed first (ζ(2, 1e300) came out 0).
func zetaScaled(x, q, s, sum float64) float64 {
	lim := math.Max(10, x) + 10
	for q < lim {
		if q+1 == q {
			// Past 2^53 q+1 is q: sum the terms by their offset k from q
			// (the loop never ended). Here x > q, so they fall at least
			// as fast as e^-k.
			base := RealPow(q/s, -x)
			for k := 0.0; k < 1000; k++ {
				t := base * math.Exp(-x*math.Log1p(k/q))
				sum += t
				if t <= 1e-18*math.Abs(sum) {
					break
				}
			}
			return sum
		}
		t := RealPow(q/s, -x)
		sum += t
		// The rest is below t·(1 + q/(x-1)) (by the integral test):
		// stop when it no longer matters, or when the terms underflow
		// (with x large, x of them would be summed).
		if t*(1+q/(x-1)) < 1e-18*math.Abs(sum) || (t == 0 && q > 0) {
			return sum
		}
		q++
	}
	a := q
	p1 := s * RealPow(a/s, 1-x) // a · (a/s)^-x
	if p1 == 0 {
		return sum // the tail underflows (its factors might overflow: ζ(1e300, 1e300) came out NaN)
	}
	// term_j / p1 = B_2j/(2j)! · x(x+1)...(x+2j-2) · a^-2j
	tail := 1/(x-1) + 0.5/a
	fac := x / a / a // x · a^-2
	fact := 2.0      // (2j)!
	for j := 1; j <= len(bernoulli2k); j++ {
		t := bernoulli2k[j-1] / fact * fac
		tail += t
		if math.Abs(t*p1) < 1e-18*math.Abs(sum+p1*tail) {
			break
		}
		fac *= (x + float64(2*j-1)) / a * ((x + float64(2*j)) / a)
		fact *= float64(2*j+1) * float64(2*j+2)
	}
	return sum + p1*tail
}

// Igamma is the regularized lower incomplete gamma function
// P(a, x) = γ(a, x)/Γ(a). As XLA defines it: NaN when a <= 0, x < 0 or
// either is NaN; 0 at x = 0; 1 at x = +Inf. For a >= IgammaTemmeMinA and
// |x-a| <= IgammaTemmeMaxMu·a it is Temme's uniform asymptotic expansion
// (igammaTemme), whose cost does not grow with a; elsewhere the series
// (x < a+1) or the continued fraction, which converge there in a bounded
// number of terms (their prefix x^a e^-x/Γ(a) in the scaled form of
// igammaPrefix for large a).
func Igamma(a, x float64) float64 {
	switch {
	case a != a || x != x || a <= 0 || x < 0:
		return math.NaN()
	case x == 0:
		return 0
	case math.IsInf(x, 1):
		return 1
	case math.IsInf(a, 1):
		return 0
	}
	if igammaUseTemme(a, x) {
		return igammaTemme(a, x, false)
	}
	if x < a+1 {
		return igammaSeries(a, x)
	}
	return 1 - igammacFraction(a, x)
}

// Igammac is the regularized upper incomplete gamma function
// Q(a, x) = 1 - P(a, x). NaN when a <= 0, x < 0 or either is NaN; 1 at
// x = 0; 0 at x = +Inf.
func Igammac(a, x float64) float64 {
	switch {
	case a != a || x != x || a <= 0 || x < 0:
		return math.NaN()
	case x == 0:
		return 1
	case math.IsInf(x, 1):
		return 0
	case math.IsInf(a, 1):
		return 1
	}
	if a <= IgammaSmallA && x < IgammaSmallX {
		return igammacSmallA(a, x)
	}
	if igammaUseTemme(a, x) {
		return igammaTemme(a, x, true)
	}
	if x < a+1 {
		return 1 - igammaSeries(a, x)
	}
	return igammacFraction(a, x)
}

// IgammaSmallA and IgammaSmallX bound the (a, x) where Q(a, x) is
// igammacSmallA's and not 1 - P (x < a+1) or the continued fraction: 1 - P
// cancels as Q ≈ a E1(x) → 0 (Q(1e-30, 0.5) came out 2.2e-16 for
// 5.6e-31), and the fraction's prefix e^-x x^a/Γ(a) carries the rounding
// of log Γ(a) ≈ -log a (2.6e-15 relative at a = 1e-20).
const IgammaSmallA, IgammaSmallX = 0.25, 1.25

// Lgamma1pCoef[k-2] is (-1)^k ζ(k)/k, the Taylor coefficients of
// log Γ(1+a) = -γa + Σ_{k>=2} (-1)^k ζ(k)/k a^k (DLMF 5.7.3); to k = 31
// the rest is below 2e-20 for |a| <= 1/4.
var Lgamma1pCoef = [...]float64{
	0.8224670334241132, -0.40068563438653143, 0.27058080842778454, -0.20738555102867398,
	0.1695571769974082, -0.1440498967688461, 0.12550966952474304, -0.11133426586956469,
	0.1000994575127818, -0.09095401714582904, 0.083353840546109, -0.0769325164113522,
	0.07143294629536133, -0.06666870588242046, 0.06250095514121304, -0.058823978658684585,
	0.055555767627403614, -0.05263167937961666, 0.05000004769810169, -0.047619070330142226,
	0.04545455629320467, -0.04347826605304026, 0.04166666915034121, -0.04000000119214014,
	0.03846153903467518, -0.037037037312989324, 0.035714285847333355, -0.034482758684919304,
	0.03333333336437758, -0.03225806453115042,
}

// lgamma1pOverA is log Γ(1+a) / a for 0 < |a| <= 1/4 (the series
// divided by a, so that it is accurate even where log Γ(1+a) is
// subnormal).
func lgamma1pOverA(a float64) float64 {
	s := 0.0
	for k := len(Lgamma1pCoef) - 1; k >= 0; k-- {
		s = s*a + Lgamma1pCoef[k]
	}
	return s*a - 0.57721566490153286 // γ
}

// igammacSmallATerms is the number of terms of S in igammacSmallA:
// x^n/n! < 1e-20 past it for x < 1.25.
const igammacSmallATerms = 25

// igammacSmallA is Q(a, x) for 0 < a <= 1/4 and x < 5/4 without the
// cancellation of 1 - P. From γ(a, x) = Σ_{n>=0} (-1)^n x^(a+n)/(n!(a+n)),
// P = w (1 + a S) with w = x^a/Γ(1+a) and S = Σ_{n>=1} (-1)^n x^n/(n!(a+n)),
// so Q = u - w a S with u = 1 - w = -expm1(l), l = a log x - log Γ(1+a):
// u and w a S are both O(a), and S (terms below 1.25^n/n!) does not
// cancel. Written as Q = a (w x h - r l/a) with S = -x h (h by Horner
// from the small terms up) and r = expm1(l)/l, so that a subnormal a
// is a factor of the result, not of its parts.
func igammacSmallA(a, x float64) float64 {
	la := RealLog(x) - lgamma1pOverA(a) // l/a
	l := a * la
	r := 1.0
	if l != 0 {
		r = math.Expm1(l) / l
	}
	// h = Σ_{n>=1} (-x)^(n-1)/(n!(a+n))
	h := 1 / (igammacSmallATerms + a)
	for n := igammacSmallATerms - 1; n >= 1; n-- {
		h = 1/(float64(n)+a) - x/float64(n+1)*h
	}
	return a * (math.Exp(l)*x*h - r*la)
}

// igammaPrefix is x^a e^-x / Γ(a). For a >= IgammaTemmeMinA in the
// scaled form e^(-a φ) √(a/(2π)) / Γ*(a) (φ = λ-1-log λ, λ = x/a; Γ* as
// GammaStar): a log x - x - log Γ(a) cancels terms of size a log a,
// which carried a relative error of about a log a · 2^-53 into the result
// (a factor e^±4 at a = 1e15).
func igammaPrefix(a, x float64) float64 {
	if a >= IgammaTemmeMinA {
		return math.Exp(-a*IgammaPhi(a, x)) * math.Sqrt(a/(2*math.Pi)) / GammaStar(a)
	}
	return powExpGamma(a, x, a)
}

// powExpGamma is x^a e^-x / Γ(g), g = a or a+1 below IgammaTemmeMinA: a
// product of factors each within an ulp or so while all stay in the
// normal range, else through the exponent a log x - x - log Γ(g), whose
// rounding (its terms reach hundreds) the result carried: P(1, 1e-300)
// was 143 ulps off, P(30, 3e-9) 942.
func powExpGamma(a, x, g float64) float64 {
	if x < 700 && g > 1e-300 && g < 170 {
		if p := RealPow(x, a); p > 0x1p-1000 && p < 0x1p1000 {
			return p * math.Exp(-x) / math.Gamma(g)
		}
	}
	return math.Exp(a*RealLog(x) - x - Lgamma(g))
}

// IgammaTemmeMinA and IgammaTemmeMaxMu bound the region of Temme's
// expansion: a >= IgammaTemmeMinA and |μ| <= IgammaTemmeMaxMu, μ =
// (x-a)/a. There the series and the continued fraction would take O(√a)
// terms (past 100000 for a above about 3e8), and the expansion's
// coefficient table (IgammaTemmeCoef) is good to below 1e-19 of the sum.
// Outside it, for a >= IgammaTemmeMinA, the result is 0 or 1 in float64
// once a·φ(±0.4) > 750 (a above about 12000), and the series and the
// fraction converge in under a hundred terms.
const IgammaTemmeMinA, IgammaTemmeMaxMu = 100, 0.4

// igammaUseTemme is whether (a, x), a > 0 and x > 0 finite, is in the
// region of Temme's expansion.
func igammaUseTemme(a, x float64) bool {
	return a >= IgammaTemmeMinA && math.Abs((x-a)/a) <= IgammaTemmeMaxMu
}

// IgammaPhiTerms is the number of terms of the series in IgammaPhi:
// |t| <= 1/4 for |μ| <= 0.4, and t^(2j)/(2j+3) < 1e-19 past it.
const IgammaPhiTerms = 16

// IgammaPhi is φ = λ - 1 - log λ >= 0 for λ = x/a (a, x > 0), without
// cancellation near λ = 1. With μ = (x-a)/a (x-a exact for a/2 <= x <= 2a)
// and, for |μ| <= IgammaTemmeMaxMu, t = μ/(2+μ): μ = 2t/(1-t) and
// log(1+μ) = 2 atanh t = 2 Σ_{j>=0} t^(2j+1)/(2j+1), so
// φ = 2t² (1/(1-t) - t Σ_{j>=0} t^(2j)/(2j+3)), all of whose parts are
// accurate (1/(1-t) dominates t·Σ ≈ t/3). Beyond, μ - log1p(μ) (μ > 0.4)
// or (λ-1) - log λ (μ < -0.4), which lose at most a few ulps.
func IgammaPhi(a, x float64) float64 {
	mu := (x - a) / a
	switch {
	case mu > IgammaTemmeMaxMu:
		return mu - math.Log1p(mu)
	case mu < -IgammaTemmeMaxMu:
		l := x / a
		return (l - 1) - RealLog(l)
	}
	t := mu / (2 + mu)
	t2 := t * t
	s := 0.0
	for j := IgammaPhiTerms - 1; j >= 0; j-- {
		s = s*t2 + 1/float64(2*j+3)
	}
	return 2 * t2 * (1/(1-t) - t*s)
}

// StirlingCoef[j-1] is B_2j/(2j(2j-1)), the coefficients of Stirling's
// series log Γ*(a) = Σ_{j>=1} B_2j/(2j(2j-1)) a^(1-2j) (DLMF 5.11.1).
var StirlingCoef = func() [6]float64 {
	var c [6]float64
	for j := 1; j <= len(c); j++ {
		c[j-1] = bernoulli2k[j-1] / float64(2*j*(2*j-1))
	}
	return c
}()

// GammaStar is the scaled gamma function Γ*(a) = Γ(a) / (√(2π/a) (a/e)^a)
// for a >= IgammaTemmeMinA, exp of Stirling's series: its terms fall
// below 1e-20 at the sixth for a >= 100.
func GammaStar(a float64) float64 {
	z := 1 / (a * a)
	s := 0.0
	for j := len(StirlingCoef) - 1; j >= 0; j-- {
		s = s*z + StirlingCoef[j]
	}
	return math.Exp(s / a)
}

// igammaTemme is Q(a, x) (upper) or P(a, x) by Temme's uniform asymptotic
// expansion (DLMF 8.12.3-8.12.11), for (a, x) where igammaUseTemme: with
// λ = x/a and η = sign(λ-1) √(2φ), φ = λ-1-log λ,
//
//	Q = ½ erfc(η √(a/2)) + R,  P = ½ erfc(-η √(a/2)) - R,
//	R = e^(-aφ)/√(2πa) · Σ_k c_k(η) a^-k,
//
// where c_0 = 1/(λ-1) - 1/η and c_k = c'_(k-1)/η + γ_k/(λ-1), γ_k the
// coefficients of 1/Γ*(a) ~ Σ γ_k a^-k. (The recurrence follows from
// dQ/dη = -√(a/(2π)) e^(-aη²/2) η / ((λ-1) Γ*(a)), the derivative of ½ erfc
// being the same without the last factor.) The c_k are taken as their
// Taylor series in η, IgammaTemmeCoef. η √(a/2) is √(aφ), the same aφ as
// in the exponential. Neither sum cancels: Q is the one below ½ for η > 0
// and P for η < 0, and there both terms have the size of the result.
func igammaTemme(a, x float64, upper bool) float64 {
	phi := IgammaPhi(a, x)
	eta := math.Sqrt(2 * phi)
	z := math.Sqrt(a * phi)
	if x < a {
		eta, z = -eta, -z
	}
	ia := 1 / a
	s := 0.0
	for k := len(IgammaTemmeCoef) - 1; k >= 0; k-- {
		c := IgammaTemmeCoef[k]
		ck := 0.0
		for n := len(c) - 1; n >= 0; n-- {
			ck = ck*eta + c[n]
		}
		s = s*ia + ck
	}
	r := math.Exp(-a*phi) / (math.Sqrt(2*math.Pi) * math.Sqrt(a)) * s
	if upper {
		return 0.5*math.Erfc(z) + r
	}
	return 0.5*math.Erfc(-z) - r
}

// IgammaTemmeCoef[k][n] is the coefficient of η^n in the Taylor series of
// Temme's c_k(η) (igammaTemme), k < 9 (c_9 a^-9 < 1e-21 for a >= 100),
// to η^(23-2k): for |η| <= 0.48 (|μ| <= 0.4) and a >= 100 the terms left
// out sum to below 1e-19. Computed exactly in rationals from the
// recurrence (μ = λ-1 as a series in η by Lagrange inversion of
// η = μ √(2(μ - log(1+μ))/μ²), γ_k from exp(-Σ B_2j/(2j(2j-1)) a^(1-2j)))
// and rounded; chlo's TestIgammaTemmeCoefficients redoes it in big.Rat.
// c_0 = -1/3 + η/12 - 2η²/135 + η³/864 + …, c_1 = -1/540 - η/288 + … as
// in DLMF 8.12.10.
var IgammaTemmeCoef = [9][]float64{
	{ // c_0
		-0.3333333333333333, 0.08333333333333333, -0.014814814814814815, 0.0011574074074074073,
		0.0003527336860670194, -0.0001787551440329218, 3.919263178522438e-05, -2.185448510679992e-06,
		-1.85406221071516e-06, 8.296711340953087e-07, -1.7665952736826078e-07, 6.707853543401498e-09,
		1.0261809784240309e-08, -4.382036018453353e-09, 9.14769958223679e-10, -2.5514193994946248e-11,
		-5.830772132550426e-11, 2.4361948020667415e-11, -5.0276692801141755e-12, 1.1004392031956135e-13,
		3.371763262400985e-13, -1.392388722418162e-13, 2.8534893807047445e-14, -5.139111834242572e-16,
	},
	{ // c_1
		-0.001851851851851852, -0.003472222222222222, 0.0026455026455026454, -0.0009902263374485596,
		0.00020576131687242798, -4.018775720164609e-07, -1.8098550334489977e-05, 7.64916091608111e-06,
		-1.6120900894563446e-06, 4.647127802807434e-09, 1.378633446915721e-07, -5.752545603517705e-08,
		1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09, 4.162792991842583e-10,
		-8.56390702649298e-11, 6.067215101604758e-14, 7.1624989648114856e-12, -2.933186643771437e-12,
		5.996696365683689e-13, -2.1671786527323313e-16,
	},
	{ // c_2
		0.004133597883597883, -0.0026813271604938273, 0.0007716049382716049, 2.0093878600823047e-06,
		-0.0001073665322636516, 5.2923448829120125e-05, -1.2760635188618728e-05, 3.423578734096138e-08,
		1.3721957309062934e-06, -6.298992138380055e-07, 1.4280614206064242e-07, -2.0477098421990866e-10,
		-1.409252991086752e-08, 6.228974084922022e-09, -1.3670488396617114e-09, 9.428356159014678e-13,
		1.2872252400089318e-10, -5.5645956134363323e-11, 1.197593554636698e-11, -4.1689782251838634e-15,
	},
	{ // c_3
		0.0006494341563786008, 0.00022947209362139917, -0.0004691894943952557, 0.00026772063206283885,
		-7.561801671883977e-05, -2.396505113867297e-07, 1.1082654115347302e-05, -5.6749528269915965e-06,
		1.4230900732435883e-06, -2.7861080291528143e-11, -1.6958404091930278e-07, 8.099464905388083e-08,
		-1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09, -9.460496661855133e-10,
		2.1541049775774907e-10, -1.388823336813903e-14,
	},
	{ // c_4
		-0.0008618882909167117, 0.0007840392217200666, -0.0002990724803031902, -1.4638452578843418e-06,
		6.641498215465122e-05, -3.968365047179435e-05, 1.1375726970678419e-05, 2.507497226237533e-10,
		-1.6954149536558305e-06, 8.907507532205309e-07, -2.292934834000805e-07, 2.956794137544049e-11,
		2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09, -2.3024517174528067e-13,
	},
	{ // c_5
		-0.00033679855336635813, -6.972813758365857e-05, 0.0002772753244959392, -0.00019932570516188847,
		6.797780477937208e-05, 1.419062920643967e-07, -1.3594048189768693e-05, 8.018470256334202e-06,
		-2.291481176508095e-06, -3.252473551298454e-10, 3.4652846491085265e-07, -1.8447187191171344e-07,
		4.8240967037894184e-08, -1.7989466721743514e-14,
	},
	{ // c_6
		0.0005313079364639922, -0.0005921664373536939, 0.0002708782096718045, 7.902353232660328e-07,
		-8.153969367561969e-05, 5.61168275310625e-05, -1.8329116582843375e-05, -3.0796134506033047e-09,
		3.465155368803609e-06, -2.0291327396058603e-06, 5.788792863149004e-07, 2.338630673826657e-13,
	},
	{ // c_7
		0.00034436760689237765, 5.171790908260592e-05, -0.00033493161081142234, 0.0002812695154763237,
		-0.00010976582244684731, -1.2741009095484485e-07, 2.7744451511563645e-05, -1.8263488805711332e-05,
		5.7876949497350525e-06, 4.93875893393627e-10,
	},
	{ // c_8
		-0.0006526239185953094, 0.0008394987206720873, -0.000438297098541721, -6.969091458420552e-07,
		0.00016644846642067547, -0.00012783517679769218, 4.629953263691304e-05, 4.557909867922708e-09,
	},
}

// igammaSeries is P(a, x) = x^a e^-x / Γ(a+1) · Σ_n x^n / ((a+1)...(a+n)),
// for x < a+1 where the terms decrease.
func igammaSeries(a, x float64) float64 {
	// x^a e^-x / Γ(a+1) at once: through Γ(a) and a division by a, a
	// subnormal a lost its digits (P(5e-324, 0.5) came out 2.25e15). For
	// large a scaled, e^(-aφ) / (√(2πa) Γ*(a)), as in igammaPrefix.
	var pre float64
	if a >= IgammaTemmeMinA {
		pre = math.Exp(-a*IgammaPhi(a, x)) / (math.Sqrt(2*math.Pi) * math.Sqrt(a) * GammaStar(a))
	} else {
		pre = powExpGamma(a, x, a+1)
	}
	if pre == 0 {
		return 0
	}
	term, sum := 1.0, 1.0
	for n := 1; n < 100000; n++ {
		term *= x / (a + float64(n))
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return math.Min(pre*sum, 1) // rounding may take it an ulp past 1
}

// igammacFraction is Q(a, x) by the continued fraction
// Q = x^a e^-x / Γ(a) · 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...)))
// evaluated with the modified Lentz method, for x >= a+1.
func igammacFraction(a, x float64) float64 {
	pre := igammaPrefix(a, x)
	if pre == 0 {
		return 0
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 100000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-17 {
			break
		}
	}
	return math.Min(pre*h, 1)
}

// BesselI1e is the exponentially scaled modified Bessel function of the
// first kind of order one, I1(x)·e^-|x| (odd in x; ±0 at ±0, ±0 at ±Inf).
func BesselI1e(x float64) float64 {
	switch {
	case x != x:
		return x
	case math.IsInf(x, 0):
		return math.Copysign(0, x)
	case x == 0:
		return x
	}
	ax := math.Abs(x)
	var r float64
	if ax <= 20 {
		// I1(x) = (x/2) Σ_k (x²/4)^k / (k! (k+1)!): positive terms.
		q := ax * ax / 4
		term, sum := 1.0, 1.0
		for k := 1; k < 200; k++ {
			term *= q / (float64(k) * float64(k+1))
			sum += term
			if term < sum*1e-18 {
				break
			}
		}
		r = ax / 2 * sum * math.Exp(-ax)
		if r == ax/2 && ax < 0x1p-60 {
			// The true value, (x/2)(1 - |x| + ...), lies below x/2 by less
			// than float64 resolves: x/2 exactly, which rounded once more
			// to a narrower type (f32's subnormals) may be a tie that
			// rounds the wrong way. One float64 ulp down keeps it below.
			r = math.Nextafter(r, 0)
		}
	} else {
		// Hankel's expansion: I1(x) e^-x ~ 1/sqrt(2πx) Σ_k (-1)^k
		// Π_{j<=k} (4 - (2j-1)²) / (k! (8x)^k); its terms are below
		// 1e-17 of the sum before they start growing for x > 20.
		term, sum := 1.0, 1.0
		for k := 1; k < 60; k++ {
			m := float64(2*k - 1)
			term *= -(4 - m*m) / (float64(k) * 8 * ax)
			sum += term
			if math.Abs(term) < 1e-18*math.Abs(sum) {
				break
			}
		}
		root := math.Sqrt(2 * math.Pi * ax)
		if ax > 1e300 { // 2π|x| overflows
			root = math.Sqrt(2*math.Pi) * math.Sqrt(ax)
		}
		r = sum / root
	}
	return math.Copysign(r, x)
}

// ErfInv is the inverse error function: math.Erfinv refined by one
// Newton step on erf (or on erfc in the tails, where 1-|y| is exact), so
// the result is within an ulp or two of the correctly rounded value.
// ErfInv(±1) = ±Inf; NaN outside [-1, 1].
func ErfInv(y float64) float64 {
	x := math.Erfinv(y)
	if math.IsInf(x, 0) || x != x || x == 0 {
		return x
	}
	ay, ax := math.Abs(y), math.Abs(x)
	// f(x) = erf(x) - y has derivative 2/√π e^(-x²).
	der := 2 / math.SqrtPi * math.Exp(-ax*ax)
	if der == 0 {
		return x
	}
	var r float64
	if ay > 0.5 {
		r = (1 - ay) - math.Erfc(ax) // = erf(ax) - ay, without cancellation
	} else {
		r = math.Erf(ax) - ay
	}
	return math.Copysign(ax-r/der, y)
}
