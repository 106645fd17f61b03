package chlo

import (
	"context"
	"math"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// igammaGrid is a dense (a, x) grid over both branches (x < a+1 and
// beyond) plus the special values.
func igammaGrid() (as, xs []float64) {
	for _, a := range []float64{1e-3, 0.1, 0.5, 1, 1.5, 2.5, 4, 7.25, 12, 30, 75, 150} {
		for i := 0; i <= 40; i++ {
			x := a * math.Pow(10, float64(i-20)/10) // a·10^[-2, 2]
			as, xs = append(as, a), append(xs, x)
		}
		as, xs = append(as, a, a, a), append(xs, a+1, math.Nextafter(a+1, 0), 0.5)
	}
	nan, inf := math.NaN(), math.Inf(1)
	sa := []float64{nan, 1, 0, -1, 1, 1, 1, inf, inf, 2, 1, 3}
	sx := []float64{1, nan, 1, 1, -1, 0, inf, 1, inf, 1e-300, 800, 1e6}
	return append(as, sa...), append(xs, sx...)
}

// igamma and igammac decomposed agree with the interpreter's kernels (f64
// within 1e-12 relative or 1e-15 absolute, f32/bf16/f16 within 2 ulp) and
// with the special values; P + Q = 1.
func TestExpandIgamma(t *testing.T) {
	as, xs := igammaGrid()
	n := int64(len(as))
	for _, dt := range []xla.DType{xla.Float64, xla.Float32, xla.BFloat16, xla.Float16} {
		mk := func() *stablehlo.Module {
			return build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, n), stablehlo.Tensor(dt, n)}, func(fb *FuncBuilder, a []*Value) []*Value {
				return []*Value{Igamma(fb, a[0], a[1]), Igammac(fb, a[0], a[1])}
			})
		}
		ta, tx := tensorOf(dt, as), tensorOf(dt, xs)
		direct := run(t, mk(), ta, tx)
		expanded := expandAndRun(t, mk(), ta, tx)
		ra, rx := floats(ta), floats(tx)
		for r, name := range []string{"igamma", "igammac"} {
			d, e := floats(direct[r]), floats(expanded[r])
			var worst float64
			for i := range d {
				if math.IsNaN(d[i]) || math.IsNaN(e[i]) {
					assert.True(t, math.IsNaN(d[i]) && math.IsNaN(e[i]), "%s %s(%v, %v): direct %v, decomposed %v", dt, name, ra[i], rx[i], d[i], e[i])
					continue
				}
				if dt == xla.Float64 {
					diff := math.Abs(d[i] - e[i])
					if diff > 1e-15 {
						worst = max(worst, diff/math.Abs(d[i]))
					}
					assert.True(t, diff <= 1e-15 || diff <= 1e-12*math.Abs(d[i]), "%s(%v, %v): direct %v, decomposed %v", name, ra[i], rx[i], d[i], e[i])
				} else {
					u := ulpErr(dt, e[i], d[i])
					worst = max(worst, float64(u))
					assert.LessOrEqual(t, u, uint64(2), "%s %s(%v, %v): direct %v, decomposed %v", dt, name, ra[i], rx[i], d[i], e[i])
				}
			}
			t.Logf("%s %s: %d points, worst %g (f64: relative; else ulp)", dt, name, len(d), worst)
		}
		if dt == xla.Float64 {
			p, q := floats(expanded[0]), floats(expanded[1])
			for i := range p {
				if !math.IsNaN(p[i]) {
					assert.InDelta(t, 1, p[i]+q[i], 1e-14, "P+Q at (%v, %v)", as[i], xs[i])
				}
			}
		}
	}
	// Known values: P(1, x) = 1 - e^-x, Q(0.5, x) = erfc(√x).
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float64, 3), stablehlo.Tensor(xla.Float64, 3)}, func(fb *FuncBuilder, a []*Value) []*Value {
		return []*Value{Igamma(fb, a[0], a[1]), Igammac(fb, a[0], a[1])}
	})
	out := expandAndRun(t, m, tensorOf(xla.Float64, []float64{1, 1, 0.5}), tensorOf(xla.Float64, []float64{0.3, 5, 9}))
	p, q := floats(out[0]), floats(out[1])
	assert.InDelta(t, -math.Expm1(-0.3), p[0], 1e-16)
	assert.InDelta(t, 1-math.Exp(-5), p[1], 1e-15)
	assert.InEpsilon(t, math.Erfc(3), q[2], 1e-13)
}

// TestExpandIgammaTinyArguments: at a subnormal a the series stays a
// probability (7.2e14 came out) and agrees with the interpreter's kernel;
// at a subnormal x, P(1, x) is x.
func TestExpandIgammaTinyArguments(t *testing.T) {
	as := []float64{5e-324, 5e-324, 1e-310, 1}
	xs := []float64{0.5, 1e-10, 0.25, 1e-310}
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float64, 4), stablehlo.Tensor(xla.Float64, 4)}, func(fb *FuncBuilder, a []*Value) []*Value {
		return []*Value{Igamma(fb, a[0], a[1]), Igammac(fb, a[0], a[1])}
	})
	in := []*interpreter.Tensor{tensorOf(xla.Float64, as), tensorOf(xla.Float64, xs)}
	direct, expanded := run(t, m, in...), expandAndRun(t, m, in...)
	for r := range 2 {
		d, e := floats(direct[r]), floats(expanded[r])
		for i := range d {
			assert.True(t, e[i] >= 0 && e[i] <= 1, "op %d (%v, %v) = %v", r, as[i], xs[i], e[i])
			assert.InDelta(t, d[i], e[i], 1e-15+1e-12*math.Abs(d[i]), "op %d (%v, %v)", r, as[i], xs[i])
		}
	}
	assert.InDelta(t, 1e-310, floats(expanded[0])[3], 1e-324)
}

// TestIgammacSmallA: Q(a, x) ≈ a E1(x) for small a, without the
// cancellation of 1 - P (both forms gave 2.2e-16 for Q(1e-30, 0.5) =
// 5.6e-31) or the rounding of log Γ(a) in the continued fraction's prefix
// (2.6e-15 relative at Q(1e-20, 1)). References from mpmath.
func TestIgammacSmallA(t *testing.T) {
	q := func(fb *FuncBuilder, a, b *Value) *Value { return Igammac(fb, a, b) }
	f64, f32 := xla.Float64, xla.Float32
	checkEdgeCases(t, []edgeCase{
		{"igammac", f64, q, 1e-30, 0.5, 5.597735947761608584e-31, 1e-15},
		{"igammac", f64, q, 1e-10, 0.5, 5.5977359480549881133e-11, 1e-15},
		{"igammac", f64, q, 1e-10, 1e-3, 6.3315393622138767721e-10, 1e-15},
		{"igammac", f64, q, 1e-20, 1, 2.1938393439552026165e-21, 1e-15},
		{"igammac", f64, q, 1e-3, 0.5, 0.00056006665647074988868, 1e-15},
		{"igammac", f64, q, 0.1, 1, 0.024127343726327778841, 1e-15},
		{"igammac", f64, q, 0.2, 1.1, 0.045037994556164762261, 1e-15},
		{"igammac", f64, q, 0.25, 1.2, 0.0507269983515412483661766852652, 1e-15},
		{"igammac", f64, q, 5e-324, 0.5, 2.7656490262796012421e-324, 1}, // rounds to 5e-324
		// a = float32(1e-30), float32(1e-10)
		{"igammac", f32, q, 1e-30, 0.5, 5.5977359655124589993e-31, 0},
		{"igammac", f32, q, 1e-10, 0.5, 5.5977360227927785538e-11, 0},
	})
}

// --- Large a: Temme's uniform expansion ------------------------------------
//
// References in big.Float (256 bits unless said), computed here from the
// definitions; nothing of package special is used but the coefficient
// table that TestIgammaTemmeCoefficients checks:
//
//   - series: P(a, x) = x^a e^-x / Γ(a+1) · Σ_n x^n/((a+1)…(a+n)) (all
//     terms positive, summed until they fall below 2^-(prec+40) of the sum
//     past their peak), with x^a e^-x / Γ(a+1) = e^(-aφ)/(√(2πa) Γ*(a)),
//     φ = μ - log(1+μ) (μ = (x-a)/a; as Σ_{n>=2} (-μ)^n/n for |μ| <= 1/2)
//     and log Γ*(a) by Stirling's series with exact Bernoulli numbers
//     (to a term below 2^-(prec+20)). Q = 1 - P, with the precision raised
//     by the bits Q lacks below 1/2 so that 1 - P keeps 256. Used for
//     a <= 1e6.
//   - Temme: Q = ½ erfc(η√(a/2)) + R, P = ½ erfc(-η√(a/2)) - R,
//     R = e^(-aφ)/√(2πa) Σ_{k<10} c_k(η) a^-k, with the c_k as exact
//     rational Taylor series (to η^39) from their recurrence, and erfc
//     from the all-positive series of erf. Used for a >= 1e9, where the
//     neglected c_10 a^-10 is below 1e-90 and |η| < 1e-3.
//
// TestIgammaBigReferences checks that the two agree at a = 1e4..1e6
// (within 1e-35), and the series against Legendre's continued fraction.

// bigCalc is big.Float arithmetic at one precision.
type bigCalc struct{ prec uint }

func (m bigCalc) f() *big.Float                  { return new(big.Float).SetPrec(m.prec) }
func (m bigCalc) v(x float64) *big.Float         { return m.f().SetFloat64(x) }
func (m bigCalc) r(x *big.Rat) *big.Float        { return m.f().SetRat(x) }
func (m bigCalc) pow2(e int) *big.Float          { return m.f().SetMantExp(m.v(1), e) }
func (m bigCalc) below(x *big.Float, e int) bool { return m.f().Abs(x).Cmp(m.pow2(e)) < 0 }

// pi is π = 16 atan(1/5) - 4 atan(1/239) (Machin).
func (m bigCalc) pi() *big.Float {
	atanInv := func(n int64) *big.Float {
		sum, pw := m.f(), m.f().Quo(m.v(1), m.f().SetInt64(n))
		n2 := m.f().SetInt64(n * n)
		for k := int64(0); !m.below(pw, -int(m.prec)-8); k++ {
			t := m.f().Quo(pw, m.f().SetInt64(2*k+1))
			if k%2 == 1 {
				t.Neg(t)
			}
			sum.Add(sum, t)
			pw.Quo(pw, n2)
		}
		return sum
	}
	p := m.f().Mul(m.v(16), atanInv(5))
	return p.Sub(p, m.f().Mul(m.v(4), atanInv(239)))
}

// exp is e^x: Taylor's series at x/2^k (|x/2^k| < 2^-16) squared k times,
// with 64 guard bits.
func (m bigCalc) exp(x *big.Float) *big.Float {
	g := bigCalc{m.prec + 64}
	k := 0
	if x.Sign() != 0 {
		k = max(0, x.MantExp(nil)+16)
	}
	r := g.f().Set(x)
	r.SetMantExp(r, -k) // exact
	sum, term := g.v(1), g.v(1)
	for n := int64(1); !g.below(term, -int(g.prec)-8); n++ {
		term.Mul(term, r)
		term.Quo(term, g.f().SetInt64(n))
		sum.Add(sum, term)
	}
	for range k {
		sum.Mul(sum, sum)
	}
	return m.f().Set(sum)
}

// log is log y (y > 0) by Newton's iteration z += 2(y - e^z)/(y + e^z)
// (cubic) from the float64 logarithm.
func (m bigCalc) log(y *big.Float) *big.Float {
	yf, _ := y.Float64()
	z := m.v(math.Log(yf))
	for bits := 40; bits < 3*int(m.prec); bits *= 3 {
		ez := m.exp(z)
		d := m.f().Quo(m.f().Sub(y, ez), m.f().Add(y, ez))
		z.Add(z, d.Mul(d, m.v(2)))
	}
	return z
}

// mu is (x-a)/a.
func (m bigCalc) mu(a, x float64) *big.Float {
	d := m.f().Sub(m.v(x), m.v(a))
	return d.Quo(d, m.v(a))
}

// phi is φ = μ - log(1+μ): Σ_{n>=2} (-1)^n μ^n/n for |μ| <= 1/2, else
// with log (which then cancels at most a few bits).
func (m bigCalc) phi(mu *big.Float) *big.Float {
	if mu.Cmp(m.v(0.5)) > 0 || mu.Cmp(m.v(-0.5)) < 0 {
		return m.f().Sub(mu, m.log(m.f().Add(m.v(1), mu)))
	}
	sum, pw := m.f(), m.f().Mul(mu, mu)
	for n := int64(2); !m.below(pw, -int(m.prec)-40); n++ {
		t := m.f().Quo(pw, m.f().SetInt64(n))
		if n%2 == 1 {
			t.Neg(t)
		}
		sum.Add(sum, t)
		pw.Mul(pw, mu)
	}
	return sum
}

// bernoulliRat returns B_0..B_n exactly (B_1 = -1/2), from
// Σ_{k<=m} C(m+1, k) B_k = 0.
func bernoulliRat(n int) []*big.Rat {
	b := make([]*big.Rat, n+1)
	b[0] = big.NewRat(1, 1)
	for m := 1; m <= n; m++ {
		s := new(big.Rat)
		for k := 0; k < m; k++ {
			c := new(big.Int).Binomial(int64(m+1), int64(k))
			s.Add(s, new(big.Rat).Mul(new(big.Rat).SetInt(c), b[k]))
		}
		b[m] = s.Neg(s.Quo(s, big.NewRat(int64(m+1), 1)))
	}
	return b
}

var bernoulli160 = sync.OnceValue(func() []*big.Rat { return bernoulliRat(160) })

// logGammaStar is log Γ*(a) = Σ_{j>=1} B_2j/(2j(2j-1)) a^(1-2j), summed
// until the terms fall below 2^-(prec+20) (they are still decreasing
// then, for the a >= 100 and precisions used here).
func (m bigCalc) logGammaStar(a *big.Float) *big.Float {
	b := bernoulli160()
	sum := m.f()
	inv := m.f().Quo(m.v(1), a)
	pw, inv2 := m.f().Set(inv), m.f().Mul(inv, inv)
	for j := 1; ; j++ {
		if 2*j >= len(b) {
			panic("Stirling's series: too few Bernoulli numbers")
		}
		c := new(big.Rat).Quo(b[2*j], big.NewRat(int64(2*j*(2*j-1)), 1))
		t := m.f().Mul(m.r(c), pw)
		sum.Add(sum, t)
		if m.below(t, -int(m.prec)-20) {
			return sum
		}
		pw.Mul(pw, inv2)
	}
}

// igammaSeries is P(a, x) by the series (see above); a+n is exact in
// float64 for the a used here.
func (m bigCalc) igammaSeries(a, x float64) *big.Float {
	ba, bx := m.v(a), m.v(x)
	pre := m.exp(m.f().Neg(m.f().Add(m.f().Mul(ba, m.phi(m.mu(a, x))), m.logGammaStar(ba))))
	pre.Quo(pre, m.f().Sqrt(m.f().Mul(m.f().Mul(m.v(2), m.pi()), ba)))
	sum, term := m.v(1), m.v(1)
	for n := 1.0; ; n++ {
		term.Mul(term, bx)
		term.Quo(term, m.v(a+n))
		sum.Add(sum, term)
		if a+n > x && m.below(m.f().Quo(term, sum), -int(m.prec)-40) {
			break
		}
	}
	return pre.Mul(pre, sum)
}

// igammacFraction is Q(a, x) for integer a by Legendre's continued
// fraction Q = x^a e^-x / Γ(a) · 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- …))),
// which ends at the a-th term (its numerator is 0): only to check the
// series.
func (m bigCalc) igammacFraction(a, x float64) *big.Float {
	ba := m.v(a)
	pre := m.exp(m.f().Neg(m.f().Add(m.f().Mul(ba, m.phi(m.mu(a, x))), m.logGammaStar(ba))))
	pre.Mul(pre, m.f().Sqrt(m.f().Quo(ba, m.f().Mul(m.v(2), m.pi()))))
	t := m.f()
	for i := a; i >= 1; i-- {
		an := m.f().Neg(m.f().Mul(m.v(i), m.f().Sub(m.v(i), ba)))
		t = m.f().Quo(an, t.Add(t, m.f().Sub(m.v(x+2*i+1), ba)))
	}
	return pre.Quo(pre, t.Add(t, m.f().Sub(m.v(x+1), ba)))
}

// erfc is erfc(z), from erf(|z|) = 2/√π e^(-z²) Σ_n 2^n |z|^(2n+1)/(1·3…(2n+1)).
func (m bigCalc) erfc(z *big.Float) *big.Float {
	az := m.f().Abs(z)
	if az.Sign() == 0 {
		return m.v(1)
	}
	z2 := m.f().Mul(az, az)
	twoZ2 := m.f().Mul(m.v(2), z2)
	term, sum := m.f().Set(az), m.f().Set(az)
	for n := int64(1); n < 5 || !m.below(m.f().Quo(term, sum), -int(m.prec)-40); n++ {
		term.Mul(term, twoZ2)
		term.Quo(term, m.f().SetInt64(2*n+1))
		sum.Add(sum, term)
	}
	erf := sum.Mul(sum, m.exp(m.f().Neg(z2)))
	erf.Mul(erf, m.v(2))
	erf.Quo(erf, m.f().Sqrt(m.pi()))
	if z.Sign() < 0 {
		return erf.Add(m.v(1), erf)
	}
	return erf.Sub(m.v(1), erf)
}

// ratSeries helpers: truncated power series with exact coefficients.
func rsMul(a, b []*big.Rat, n int) []*big.Rat {
	r := make([]*big.Rat, n)
	for i := range r {
		r[i] = new(big.Rat)
	}
	for i := 0; i < n && i < len(a); i++ {
		if a[i].Sign() == 0 {
			continue
		}
		for j := 0; i+j < n && j < len(b); j++ {
			r[i+j].Add(r[i+j], new(big.Rat).Mul(a[i], b[j]))
		}
	}
	return r
}

func rsInv(a []*big.Rat, n int) []*big.Rat {
	r := make([]*big.Rat, n)
	r[0] = new(big.Rat).Inv(a[0])
	for k := 1; k < n; k++ {
		s := new(big.Rat)
		for j := 1; j <= k && j < len(a); j++ {
			s.Add(s, new(big.Rat).Mul(a[j], r[k-j]))
		}
		r[k] = s.Neg(s.Mul(s, r[0]))
	}
	return r
}

// temmeCoefRat returns the Taylor coefficients of Temme's c_k(η), k <
// nk, each to η^(nEta-1), exactly: η = μ h(μ) with h = √(2(μ-log(1+μ))/μ²)
// reverted by Lagrange's formula ([η^n] μ = [μ^(n-1)] h^-n / n), then
// c_0 = 1/μ - 1/η and c_k = c'_(k-1)/η + γ_k/μ with 1/Γ*(a) ~ Σ γ_k a^-k
// (the poles at η = 0 cancel; checked).
func temmeCoefRat(nk, nEta int) [][]*big.Rat {
	n := nEta + 2*nk + 2
	// 2(μ - log(1+μ))/μ² = Σ_m 2(-1)^m μ^m/(m+2); its square root h (h_0 = 1).
	g := make([]*big.Rat, n)
	for m := range g {
		g[m] = big.NewRat(int64(2*(1-2*(m%2))), int64(m+2))
	}
	h := make([]*big.Rat, n)
	h[0] = big.NewRat(1, 1)
	for k := 1; k < n; k++ {
		s := new(big.Rat).Set(g[k])
		for j := 1; j < k; j++ {
			s.Sub(s, new(big.Rat).Mul(h[j], h[k-j]))
		}
		h[k] = s.Quo(s, big.NewRat(2, 1))
	}
	ih := rsInv(h, n)
	// w = μ/η = Σ_n [η^(n+1)] μ η^n.
	w := make([]*big.Rat, n)
	pw := []*big.Rat{big.NewRat(1, 1)}
	for k := 1; k <= n; k++ {
		pw = rsMul(pw, ih, n)
		w[k-1] = new(big.Rat).Quo(pw[k-1], big.NewRat(int64(k), 1))
	}
	iw := rsInv(w, n) // η/μ; 1/μ = iw/η
	// γ_k: exp(-Σ_j B_2j/(2j(2j-1)) z^(2j-1)) by E' = L'E.
	b := bernoulliRat(2 * nk)
	l := make([]*big.Rat, nk+1)
	for i := range l {
		l[i] = new(big.Rat)
	}
	for j := 1; 2*j-1 <= nk; j++ {
		l[2*j-1] = new(big.Rat).Neg(new(big.Rat).Quo(b[2*j], big.NewRat(int64(2*j*(2*j-1)), 1)))
	}
	gam := make([]*big.Rat, nk+1)
	gam[0] = big.NewRat(1, 1)
	for m := 1; m <= nk; m++ {
		s := new(big.Rat)
		for k := 1; k <= m; k++ {
			s.Add(s, new(big.Rat).Mul(big.NewRat(int64(k), 1), new(big.Rat).Mul(l[k], gam[m-k])))
		}
		gam[m] = s.Quo(s, big.NewRat(int64(m), 1))
	}
	c := [][]*big.Rat{iw[1:]}
	for k := 1; k < nk; k++ {
		prev := c[k-1]
		// c'_(k-1)/η: the coefficient of η^m is (m+2) prev[m+2]; the η^-1
		// term prev[1] must cancel γ_k iw[0].
		if new(big.Rat).Add(prev[1], new(big.Rat).Mul(gam[k], iw[0])).Sign() != 0 {
			panic("Temme recurrence: pole does not cancel")
		}
		var ck []*big.Rat
		for m := 0; m+2 < len(prev) && m+1 < len(iw); m++ {
			v := new(big.Rat).Mul(big.NewRat(int64(m+2), 1), prev[m+2])
			ck = append(ck, v.Add(v, new(big.Rat).Mul(gam[k], iw[m+1])))
		}
		c = append(c, ck)
	}
	for k := range c {
		c[k] = c[k][:nEta]
	}
	return c
}

var temmeRef = sync.OnceValue(func() [][]*big.Rat { return temmeCoefRat(10, 40) })

// igammaTemme returns P(a, x) and Q(a, x) by Temme's expansion (see above).
func (m bigCalc) igammaTemme(a, x float64) (p, q *big.Float) {
	ba := m.v(a)
	phi := m.phi(m.mu(a, x))
	eta := m.f().Sqrt(m.f().Mul(m.v(2), phi))
	if x < a {
		eta.Neg(eta)
	}
	ia := m.f().Quo(m.v(1), ba)
	s := m.f()
	c := temmeRef()
	for k := len(c) - 1; k >= 0; k-- {
		ck := m.f()
		for n := len(c[k]) - 1; n >= 0; n-- {
			ck.Mul(ck, eta)
			ck.Add(ck, m.r(c[k][n]))
		}
		s.Mul(s, ia)
		s.Add(s, ck)
	}
	r := m.exp(m.f().Neg(m.f().Mul(ba, phi)))
	r.Quo(r, m.f().Sqrt(m.f().Mul(m.f().Mul(m.v(2), m.pi()), ba)))
	r.Mul(r, s)
	z := m.f().Mul(eta, m.f().Sqrt(m.f().Quo(ba, m.v(2))))
	half := m.v(0.5)
	q = m.f().Add(m.f().Mul(half, m.erfc(z)), r)
	p = m.f().Sub(m.f().Mul(half, m.erfc(m.f().Neg(z))), r)
	return p, q
}

var big256 = bigCalc{256}

// bigIgamma is P and Q at (a, x), 256 bits: by the series for a <= 1e6
// (once more with the bits Q lacks below 1/2 added, where 1 - P has lost
// them), else by Temme's expansion.
func bigIgamma(a, x float64) (p, q *big.Float) {
	if a > 1e6 {
		return big256.igammaTemme(a, x)
	}
	p = big256.igammaSeries(a, x)
	q = big256.f().Sub(big256.v(1), p)
	// Until the precision covers Q's exponent (a first 1 - P too short
	// of bits is noise, but never above Q's magnitude by more than its
	// own error).
	for m := big256; ; {
		need := big256.prec + uint(max(0, -q.MantExp(nil))) + 8
		if need <= m.prec {
			return p, q
		}
		m = bigCalc{need}
		q = big256.f().Sub(m.v(1), m.igammaSeries(a, x))
	}
}

// relDiff is |x-y|/|y| as a float64.
func relDiff(x, y *big.Float) float64 {
	d := new(big.Float).Sub(x, y)
	r, _ := d.Quo(d, y).Float64()
	return math.Abs(r)
}

// TestIgammaBigReferences: the reference methods agree where they
// overlap; P(a, a) follows its asymptotic form 1/2 + 1/(3√(2πa)) + O(1/a).
func TestIgammaBigReferences(t *testing.T) {
	m := big256
	assert.Less(t, relDiff(m.pi(), m.v(math.Pi)), 1e-16)
	assert.Less(t, relDiff(m.log(m.v(10)), m.v(math.Ln10)), 1e-16)
	for _, a := range []float64{1e4, 1e5, 1e6} {
		for _, k := range []float64{0, 1, -1, 3, -3, 10, -10} {
			x := a + k*math.Sqrt(a)
			sp, sq := bigIgamma(a, x)
			tp, tq := m.igammaTemme(a, x)
			assert.Less(t, relDiff(sp, tp), 1e-35, "P(%v, %v): series %v, Temme %v", a, x, sp, tp)
			assert.Less(t, relDiff(sq, tq), 1e-35, "Q(%v, %v): series %v, Temme %v", a, x, sq, tq)
		}
	}
	// 1 - P (with the raised precision) against the continued fraction,
	// exact for integer a (Q down to 1e-136).
	for _, c := range [][2]float64{{100, 170}, {1e3, 1500}, {1e3, 2000}, {1e4, 1e4 + 300}} {
		_, sq := bigIgamma(c[0], c[1])
		fq := m.igammacFraction(c[0], c[1])
		assert.Less(t, relDiff(sq, fq), 1e-60, "Q%v: series %v, fraction %v", c, sq, fq)
	}
	for _, a := range []float64{1e9, 1e15} {
		p, _ := m.igammaTemme(a, a)
		pf, _ := p.Float64()
		assert.InDelta(t, 0.5+1/(3*math.Sqrt(2*math.Pi*a)), pf, 1/a, "P(%v, %v)", a, a)
	}
}

// TestIgammaTemmeCoefficients: special.IgammaTemmeCoef is the exact
// rational Taylor series of Temme's c_k(η) rounded to float64, and starts
// as DLMF 8.12.10 has it.
func TestIgammaTemmeCoefficients(t *testing.T) {
	ref := temmeRef()
	require.Less(t, len(special.IgammaTemmeCoef), len(ref))
	for k, ck := range special.IgammaTemmeCoef {
		require.LessOrEqual(t, len(ck), len(ref[k]))
		for n, v := range ck {
			want, _ := ref[k][n].Float64()
			assert.Equal(t, want, v, "c_%d η^%d", k, n)
		}
	}
	for i, want := range []*big.Rat{big.NewRat(-1, 3), big.NewRat(1, 12), big.NewRat(-2, 135), big.NewRat(1, 864)} {
		assert.Equal(t, want.String(), ref[0][i].String(), "c_0 η^%d", i)
	}
	assert.Equal(t, "-1/540", ref[1][0].String())
	assert.Equal(t, "-1/288", ref[1][1].String())
	assert.Equal(t, "25/6048", ref[2][0].String())
}

// igammaLargeAPoints are (a, x) for large a, up to f32's largest: x = a ±
// k√a (k = 0, 1/2, 1, 3, 10) in Temme's region, and points off it
// (|x-a| > 0.4a) where the series or the fraction runs with the scaled
// prefix.
func igammaLargeAPoints() (as, xs []float64) {
	for _, a := range []float64{100, 250.5, 1e3, 1e4, 1e5, 1e6, 1e9, 1e10, 1e15, 1e20, 1e30, 3e38} {
		for _, k := range []float64{0, 0.5, -0.5, 1, -1, 3, -3, 10, -10} {
			if x := a + k*math.Sqrt(a); x > 0 {
				as, xs = append(as, a), append(xs, x)
			}
		}
	}
	for _, p := range [][2]float64{{100, 30}, {100, 150}, {100, 300}, {1e3, 500}, {1e3, 300}, {1e3, 1500}, {1e3, 2000}, {5e3, 7250}, {5e3, 2750}} {
		as, xs = append(as, p[0]), append(xs, p[1])
	}
	return as, xs
}

// TestIgammaLargeA: P and Q for large a against 256-bit references (see
// bigIgamma), in both forms, f64 and f32. The iteration cap took P(1e9,
// 1e9) to 0.49922 (for 0.5000042052) and P(1e10, 1e10) to 0.3413, and
// the prefix exp(a log x - x - lgamma a) lost a factor e^±4 at a = 1e15;
// near the diagonal now within 1e-14 relative. The tolerance is
// 2e-15·(1 + a φ) relative (aφ = (x-a)²/(2a) + …, the exponent of the
// result, whose rounding in float64 is the input's own conditioning: a
// half-ulp change in x moves it by about that much), and 0 or 1 ulp in
// f32.
func TestIgammaLargeA(t *testing.T) {
	as, xs := igammaLargeAPoints()
	n := int64(len(as))
	for _, dt := range []xla.DType{xla.Float64, xla.Float32} {
		mk := func() *stablehlo.Module {
			return build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, n), stablehlo.Tensor(dt, n)}, func(fb *FuncBuilder, a []*Value) []*Value {
				return []*Value{Igamma(fb, a[0], a[1]), Igammac(fb, a[0], a[1])}
			})
		}
		ta, tx := tensorOf(dt, as), tensorOf(dt, xs)
		ra, rx := floats(ta), floats(tx) // the inputs as rounded to dt
		forms := map[string][]*interpreter.Tensor{"direct": run(t, mk(), ta, tx), "decomposed": expandAndRun(t, mk(), ta, tx)}
		worst := map[string]float64{}
		for i := range ra {
			a, x := ra[i], rx[i]
			p, q := bigIgamma(a, x)
			phi, _ := big256.phi(big256.mu(a, x)).Float64()
			for r, want := range []*big.Float{p, q} {
				name := []string{"igamma", "igammac"}[r]
				w, _ := want.Float64()
				for form, out := range forms {
					got := floats(out[r])[i]
					if dt == xla.Float64 {
						e := math.Abs(got-w) / w
						if w == 0 {
							e = math.Abs(got)
						}
						worst[form] = max(worst[form], e/(1+a*phi))
						assert.LessOrEqual(t, e, 2e-15*(1+a*phi), "%s %s(%v, %v) = %.17g, want %.17g", form, name, a, x, got, w)
					} else {
						u := ulpErr(dt, got, representable(dt, w))
						assert.LessOrEqual(t, u, uint64(1), "%s f32 %s(%v, %v) = %.9g, want %.9g", form, name, a, x, got, w)
					}
				}
			}
		}
		if dt == xla.Float64 {
			t.Logf("f64 worst relative error / (1 + aφ): %v", worst)
		}
	}
}

// One element whose continued fraction only converges to within an ulp
// (x near 1e18: b+2 == b, and del stays 1-ulp) does not hold the whole
// tensor's loop for its 100000 iterations (43 s for these 4096 elements
// when the loop waited for del == 1 exactly). The deadline only catches
// that hang; the loop ends in milliseconds.
func TestIgammacLentzConvergesAtAnUlp(t *testing.T) {
	const n = 4096
	as, xs := make([]float64, n), make([]float64, n)
	for i := range as {
		as[i], xs[i] = 2, 5
	}
	as[7], xs[7] = 1e-17, 1e18
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, n), stablehlo.Tensor(xla.Float32, n)}, func(fb *FuncBuilder, a []*Value) []*Value {
		return []*Value{Igammac(fb, a[0], a[1])}
	})
	require.NoError(t, Expand(m, ExpandOptions{}))
	p, err := interpreter.Compile(m, "main")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.Run(ctx, interpreter.Device{}, []interpreter.Value{tensorOf(xla.Float32, as), tensorOf(xla.Float32, xs)})
	require.NoError(t, err, "the loop ran past 30 s")
	q := floats(out[0].(*interpreter.Tensor))
	assert.Equal(t, 0.0, q[7], "Q(1e-17, 1e18)")
	want := math.Exp(-5) * 6 // Q(2, 5) = e^-5 (1 + 5)
	assert.InEpsilon(t, want, q[0], 1e-6)
}
