package chlo

import (
	"math"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The regularized incomplete gamma functions P(a, x) (chlo.igamma) and
// Q(a, x) = 1 - P (chlo.igammac), in float64, by the interpreter's
// kernel's formulas (internal/special): for a >= 100 and |x-a| <= 0.4a
// (special.IgammaTemmeMinA, IgammaTemmeMaxMu) Temme's uniform asymptotic
// expansion (igammaTemme), straight-line code; elsewhere two
// stablehlo.while loops over the whole tensor that run until every
// element has converged (at most igammaMaxIter iterations):
//
//   - for x < a+1 the series P = x^a e^-x / Γ(a+1) · Σ_n x^n/((a+1)…(a+n)),
//     stopped at the first term below 1e-17 of the sum;
//   - otherwise the continued fraction
//     Q = x^a e^-x / Γ(a) · 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- …)))
//     by the modified Lentz method, stopped when a step changes the value
//     by less than 1e-17 relatively.
//
// The prefixes x^a e^-x / Γ(a) and / Γ(a+1) are exp(a log x - x -
// lgamma a) and the same with lgamma(a+1) for a < 100; for a >= 100 the
// scaled e^(-aφ) √(a/(2π)) / Γ*(a) and e^(-aφ) / (√(2πa) Γ*(a)), φ =
// λ-1-log λ (λ = x/a) and Γ*(a) by Stirling's series, which do not cancel
// terms of size a log a. Elements on another branch run each loop with
// harmless arguments (a = 1, x = 1/2 or 2), so they converge at once.
// Special values as the interpreter's kernel: NaN when a <= 0, x < 0 or
// either is NaN; P = 0 and Q = 1 at x = 0 and at a = +Inf (finite x); P =
// 1 and Q = 0 at x = +Inf. The loops would take O(√a) iterations near
// x = a, more than igammaMaxIter for a above about 3e8 (P(1e9, 1e9) came
// out 0.49922 for 0.5000042, P(1e10, 1e10) 0.3413); Temme's expansion
// takes them over there, and off it (|x-a| > 0.4a, a >= 100) they converge
// in under a hundred iterations. Q for a <= 1/4, x < 5/4 is igammacSmallA's,
// without either loop's cancellation.

const igammaMaxIter = 100000

// igammaParts returns the series value of P (valid for x < a+1) and the
// continued-fraction value of Q (valid otherwise), and the branch mask;
// elements in Temme's region (temme) take neither loop.
func igammaParts(e *em, a, x, temme *Value) (series, fraction, useSeries *Value) {
	below := e.lt(x, e.add(a, e.c(1)))
	useSeries = e.and(below, e.fb.Not(temme))
	useFraction := e.and(e.fb.Not(below), e.fb.Not(temme))
	// The series, with (1, 1/2) where it does not apply.
	sa := e.sel(useSeries, a, e.c(1))
	sx := e.sel(useSeries, x, e.c(0.5))
	// x^a e^-x / Γ(a+1) at once (through Γ(a) and a division by a, a
	// subnormal a loses its digits); for a >= 100 scaled, e^(-aφ) /
	// (√(2πa) Γ*(a)).
	pre := e.exp(e.sub(e.sub(e.mul(sa, e.log(sx)), sx), expandLgamma(e, e.add(sa, e.c(1)))))
	big, ba, bx := igammaLargeA(e, sa, sx)
	bpre := e.div(e.exp(e.neg(e.mul(ba, igammaPhi(e, ba, bx)))), e.mul(e.mul(e.c(math.Sqrt(2*math.Pi)), e.sqrt(ba)), gammaStar(e, ba)))
	pre = e.sel(big, bpre, pre)
	series = e.mul(pre, igammaSeriesSum(e, sa, sx))
	// The fraction, with (1, 2) where it does not apply.
	fa := e.sel(useFraction, a, e.c(1))
	fx := e.sel(useFraction, x, e.c(2))
	fraction = e.mul(igammaPrefix(e, fa, fx), igammaLentz(e, fa, fx))
	// Rounding may take either an ulp past 1 (P(1e-310, 1/4)): a
	// probability it stays.
	return e.min(series, e.c(1)), e.min(fraction, e.c(1)), useSeries
}

// igammaLargeA returns the mask a >= 100 (the scaled prefixes) and (a, x)
// with (100, 100) where it is false.
func igammaLargeA(e *em, a, x *Value) (big, ba, bx *Value) {
	minA := e.c(special.IgammaTemmeMinA)
	big = e.ge(a, minA)
	return big, e.sel(big, a, minA), e.sel(big, x, minA)
}

// igammaPrefix is x^a e^-x / Γ(a) for a > 0, x > 0: for a >= 100
// e^(-aφ) √(a/(2π)) / Γ*(a) (special's igammaPrefix).
func igammaPrefix(e *em, a, x *Value) *Value {
	pre := e.exp(e.sub(e.sub(e.mul(a, e.log(x)), x), expandLgamma(e, a)))
	big, ba, bx := igammaLargeA(e, a, x)
	bpre := e.div(e.mul(e.exp(e.neg(e.mul(ba, igammaPhi(e, ba, bx)))), e.sqrt(e.div(ba, e.c(2*math.Pi)))), gammaStar(e, ba))
	return e.sel(big, bpre, pre)
}

// igammaPhi is φ = λ-1-log λ for λ = x/a (special.IgammaPhi): with μ =
// (x-a)/a, for |μ| <= 0.4 and t = μ/(2+μ) the series 2t² (1/(1-t) -
// t Σ_j t^(2j)/(2j+3)); beyond, μ - log1p(μ) (μ > 0.4) or (λ-1) - log λ.
func igammaPhi(e *em, a, x *Value) *Value {
	mu := e.div(e.sub(x, a), a)
	lim := e.c(special.IgammaTemmeMaxMu)
	up, down := e.gt(mu, lim), e.lt(mu, e.neg(lim))
	// The series, with μ = 0 where it does not apply.
	sm := e.sel(e.or(up, down), e.c(0), mu)
	t := e.div(sm, e.add(e.c(2), sm))
	t2 := e.mul(t, t)
	s := e.c(0)
	for j := special.IgammaPhiTerms - 1; j >= 0; j-- {
		s = e.add(e.mul(s, t2), e.c(1/float64(2*j+3)))
	}
	phi := e.mul(e.mul(e.c(2), t2), e.sub(e.div(e.c(1), e.sub(e.c(1), t)), e.mul(t, s)))
	// μ - log1p(μ), with μ = 1 where it does not apply.
	um := e.sel(up, mu, e.c(1))
	phi = e.sel(up, e.sub(um, e.log1p(um)), phi)
	// (λ-1) - log λ, with λ = 1/2 where it does not apply.
	l := e.sel(down, e.div(x, a), e.c(0.5))
	return e.sel(down, e.sub(e.sub(l, e.c(1)), e.log(l)), phi)
}

// gammaStar is Γ*(a) = Γ(a) / (√(2π/a) (a/e)^a) for a >= 100, exp of
// Stirling's series (special.GammaStar).
func gammaStar(e *em, a *Value) *Value {
	z := e.div(e.c(1), e.mul(a, a))
	s := e.c(0)
	for j := len(special.StirlingCoef) - 1; j >= 0; j-- {
		s = e.add(e.mul(s, z), e.c(special.StirlingCoef[j]))
	}
	return e.exp(e.div(s, a))
}

// igammaUseTemme is the mask of Temme's region, a >= 100 and |x-a| <= 0.4a
// (as (x-a)/a, the kernel's test).
func igammaUseTemme(e *em, a, x *Value) *Value {
	mu := e.div(e.sub(x, a), a)
	return e.and(e.ge(a, e.c(special.IgammaTemmeMinA)), e.le(e.abs(mu), e.c(special.IgammaTemmeMaxMu)))
}

// igammaTemme returns P and Q by Temme's uniform asymptotic expansion
// (special's igammaTemme, DLMF 8.12): with φ = λ-1-log λ, η = sign(x-a)
// √(2φ) and z = sign(x-a) √(aφ) (= η √(a/2)),
// Q = ½ erfc(z) + R and P = ½ erfc(-z) - R, R = e^(-aφ)/√(2πa) ·
// Σ_k c_k(η) a^-k with the c_k as Taylor series in η
// (special.IgammaTemmeCoef), by Horner in η and then in 1/a.
func igammaTemme(e *em, a, x *Value) (p, q *Value) {
	phi := igammaPhi(e, a, x)
	neg := e.lt(x, a)
	eta := e.sqrt(e.mul(e.c(2), phi))
	z := e.sqrt(e.mul(a, phi))
	eta = e.sel(neg, e.neg(eta), eta)
	z = e.sel(neg, e.neg(z), z)
	ia := e.div(e.c(1), a)
	s := e.c(0)
	for k := len(special.IgammaTemmeCoef) - 1; k >= 0; k-- {
		c := special.IgammaTemmeCoef[k]
		ck := e.c(0)
		for n := len(c) - 1; n >= 0; n-- {
			ck = e.add(e.mul(ck, eta), e.c(c[n]))
		}
		s = e.add(e.mul(s, ia), ck)
	}
	r := e.mul(e.div(e.exp(e.neg(e.mul(a, phi))), e.mul(e.c(math.Sqrt(2*math.Pi)), e.sqrt(a))), s)
	half := e.c(0.5)
	q = e.add(e.mul(half, expandErfc(e, z)), r)
	p = e.sub(e.mul(half, expandErfc(e, e.neg(z))), r)
	return p, q
}

// anyTrue reduces an i1 tensor to whether any element is true.
func anyTrue(fb *FuncBuilder, p *Value) *Value {
	t, _ := p.TensorType()
	all := make([]int64, t.Rank())
	for i := range all {
		all[i] = int64(i)
	}
	n := fb.ReduceMax(fb.Convert(p, xla.Int32), all...)
	return fb.Compare(n, fb.ScalarOf(xla.Int32, 0), stablehlo.CompareGT, stablehlo.CompareSigned)
}

// igammaLoop runs body over state (whose first value is the scalar f64
// iteration count and last an i1 "done" tensor) until every element is
// done or igammaMaxIter iterations have run.
func igammaLoop(e *em, init []*Value, body func(e *em, n *Value, s []*Value) []*Value) []*Value {
	cond := func(rb *FuncBuilder, s []*Value) *Value {
		more := rb.Compare(s[0], rb.ScalarOf(xla.Float64, igammaMaxIter), stablehlo.CompareLT, stablehlo.CompareFloat)
		return rb.And(more, anyTrue(rb, rb.Not(s[len(s)-1])))
	}
	return e.fb.While(init, cond, func(rb *FuncBuilder, s []*Value) []*Value {
		re := newEm(rb, e.t)
		n := rb.Add(s[0], rb.ScalarOf(xla.Float64, 1))
		nb := rb.BroadcastInDim(n, e.t.Dims, nil)
		return append([]*Value{n}, body(re, nb, s[1:])...)
	})
}

// igammaSeriesSum is Σ_n x^n/((a+1)…(a+n)).
func igammaSeriesSum(e *em, a, x *Value) *Value {
	fb := e.fb
	one := e.c(1)
	done := e.lt(one, e.mul(one, e.c(1e-17))) // all false
	out := igammaLoop(e, []*Value{fb.ScalarOf(xla.Float64, 0), a, x, one, one, done},
		func(e *em, n *Value, s []*Value) []*Value {
			a, x, term, sum, done := s[0], s[1], s[2], s[3], s[4]
			nt := e.mul(term, e.div(x, e.add(a, n)))
			ns := e.add(sum, nt)
			conv := e.fb.Not(e.ge(nt, e.mul(ns, e.c(1e-17)))) // NaN counts as converged
			return []*Value{a, x, e.sel(done, term, nt), e.sel(done, sum, ns), e.or(done, conv)}
		})
	return out[4]
}

// igammaLentz is the continued fraction of Q without its prefix, by the
// modified Lentz method.
func igammaLentz(e *em, a, x *Value) *Value {
	fb := e.fb
	const tiny = 1e-300
	b := e.sub(e.add(x, e.c(1)), a)
	c := e.c(1 / tiny)
	d := e.div(e.c(1), b)
	h := d
	done := e.lt(e.c(1), e.c(0))
	out := igammaLoop(e, []*Value{fb.ScalarOf(xla.Float64, 0), a, b, c, d, h, done},
		func(e *em, n *Value, s []*Value) []*Value {
			a, b, c, d, h, done := s[0], s[1], s[2], s[3], s[4], s[5]
			an := e.neg(e.mul(n, e.sub(n, a)))
			nb := e.add(b, e.c(2))
			nd := e.add(e.mul(an, d), nb)
			nd = e.sel(e.lt(e.abs(nd), e.c(tiny)), e.c(tiny), nd)
			nc := e.add(nb, e.div(an, c))
			nc = e.sel(e.lt(e.abs(nc), e.c(tiny)), e.c(tiny), nc)
			nd = e.div(e.c(1), nd)
			del := e.mul(nd, nc)
			nh := e.mul(h, del)
			conv := e.fb.Not(e.gt(e.abs(e.sub(del, e.c(1))), e.c(0x1p-52))) // within an ulp of 1: below it, only del == 1 would stop it
			keep := func(old, nw *Value) *Value { return e.sel(done, old, nw) }
			return []*Value{a, keep(b, nb), keep(c, nc), keep(d, nd), keep(h, nh), e.or(done, conv)}
		})
	return out[5]
}

// igammaSpecial applies the special values to r (P when lower is set,
// else Q).
func igammaSpecial(e *em, a, x, r *Value, lower bool) *Value {
	atZero, atInf := 0.0, 1.0
	if !lower {
		atZero, atInf = 1, 0
	}
	inf := e.c(math.Inf(1))
	r = e.sel(e.eq(a, inf), e.c(atZero), r)
	r = e.sel(e.eq(x, inf), e.c(atInf), r)
	r = e.sel(e.eq(x, e.c(0)), e.c(atZero), r)
	bad := e.or(e.or(e.isNaN(a), e.isNaN(x)), e.or(e.le(a, e.c(0)), e.lt(x, e.c(0))))
	return e.sel(bad, e.c(math.NaN()), r)
}

// igammaTemmeParts returns the mask of Temme's region and P and Q there
// (computed at (100, 100) elsewhere).
func igammaTemmeParts(e *em, a, x *Value) (temme, p, q *Value) {
	temme = igammaUseTemme(e, a, x)
	minA := e.c(special.IgammaTemmeMinA)
	p, q = igammaTemme(e, e.sel(temme, a, minA), e.sel(temme, x, minA))
	return temme, p, q
}

// expandIgamma is P(a, x).
func expandIgamma(e *em, a, x *Value) *Value {
	a, x = igammaSafe(e, a, x)
	temme, tp, _ := igammaTemmeParts(e, a, x)
	s, f, useSeries := igammaParts(e, a, x, temme)
	return e.sel(temme, tp, e.sel(useSeries, s, e.sub(e.c(1), f)))
}

// expandIgammac is Q(a, x).
func expandIgammac(e *em, a, x *Value) *Value {
	a, x = igammaSafe(e, a, x)
	temme, _, tq := igammaTemmeParts(e, a, x)
	s, f, useSeries := igammaParts(e, a, x, temme)
	q := e.sel(temme, tq, e.sel(useSeries, e.sub(e.c(1), s), f))
	small := e.and(e.le(a, e.c(igammaSmallA)), e.lt(x, e.c(igammaSmallX)))
	return e.sel(small, igammacSmallA(e, e.sel(small, a, e.c(igammaSmallA)), e.sel(small, x, e.c(1))), q)
}

// Q(a, x) is igammacSmallA's for a <= special.IgammaSmallA, x <
// special.IgammaSmallX (as the interpreter's kernel): 1 - P cancels as Q ≈
// a E1(x) → 0 (Q(1e-30, 0.5) came out 2.2e-16 for 5.6e-31), and the
// fraction's prefix carries the rounding of log Γ(a) ≈ -log a.
const igammaSmallA, igammaSmallX = special.IgammaSmallA, special.IgammaSmallX

const igammacSmallATerms = 25 // x^n/n! < 1e-20 past it for x < 5/4

// igammacSmallA is Q(a, x) for 0 < a <= 1/4, 0 < x < 5/4 without
// cancellation: from γ(a, x) = Σ_{n>=0} (-1)^n x^(a+n)/(n!(a+n)),
// Q = u - w a S with w = x^a/Γ(1+a), u = 1 - w = -expm1(l), l = a log x -
// log Γ(1+a), S = Σ_{n>=1} (-1)^n x^n/(n!(a+n)) = -x h; computed as
// a (w x h - r l/a), r = expm1(l)/l, h by Horner from the small terms up.
func igammacSmallA(e *em, a, x *Value) *Value {
	s := e.c(0)
	for k := len(special.Lgamma1pCoef) - 1; k >= 0; k-- {
		s = e.add(e.mul(s, a), e.c(special.Lgamma1pCoef[k]))
	}
	lg := e.sub(e.mul(s, a), e.c(0.57721566490153286)) // log Γ(1+a) / a
	la := e.sub(e.log(x), lg)
	l := e.mul(a, la)
	r := e.sel(e.eq(l, e.c(0)), e.c(1), e.div(e.expm1(l), l))
	h := e.div(e.c(1), e.add(e.c(igammacSmallATerms), a))
	for n := igammacSmallATerms - 1; n >= 1; n-- {
		h = e.sub(e.div(e.c(1), e.add(e.c(float64(n)), a)), e.mul(e.div(x, e.c(float64(n+1))), h))
	}
	return e.mul(a, e.sub(e.mul(e.mul(e.exp(l), x), h), e.mul(r, la)))
}

// igammaSafe replaces the arguments of the special cases (NaN, a <= 0,
// x <= 0, infinities) by (1, 1) so that the loops see finite, convergent
// values; igammaSpecial then overrides those elements.
func igammaSafe(e *em, a, x *Value) (*Value, *Value) {
	inf := e.c(math.Inf(1))
	ok := e.and(e.gt(a, e.c(0)), e.gt(x, e.c(0)))
	ok = e.and(ok, e.and(e.lt(a, inf), e.lt(x, inf)))
	return e.sel(ok, a, e.c(1)), e.sel(ok, x, e.c(1))
}

func expandIgammaOp(lower bool) func(e *em, a, x *Value) *Value {
	return func(e *em, a, x *Value) *Value {
		var r *Value
		if lower {
			r = expandIgamma(e, a, x)
		} else {
			r = expandIgammac(e, a, x)
		}
		return igammaSpecial(e, a, x, r, lower)
	}
}
