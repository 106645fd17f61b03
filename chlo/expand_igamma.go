package chlo

import (
	"math"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The regularized incomplete gamma functions P(a, x) (chlo.igamma) and
// Q(a, x) = 1 - P (chlo.igammac), in float64, as two stablehlo.while
// loops over the whole tensor that run until every element has converged
// (at most igammaMaxIter iterations):
//
//   - for x < a+1 the series P = x^a e^-x / Γ(a+1) · Σ_n x^n/((a+1)…(a+n)),
//     stopped at the first term below 1e-17 of the sum;
//   - otherwise the continued fraction
//     Q = x^a e^-x / Γ(a) · 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- …)))
//     by the modified Lentz method, stopped when a step changes the value
//     by less than 1e-17 relatively.
//
// The prefixes x^a e^-x / Γ(a) and / Γ(a+1) are exp(a log x - x -
// lgamma a) and the same with lgamma(a+1). Elements on
// the other branch run each loop with harmless arguments (a = 1, x = 1/2
// or 2), so they converge at once. Special values as the interpreter's
// kernel: NaN when a <= 0, x < 0 or either is NaN; P = 0 and Q = 1 at
// x = 0 and at a = +Inf (finite x); P = 1 and Q = 0 at x = +Inf. The
// loops take O(√a) iterations for large a and stop at igammaMaxIter, so
// for a above about 3e8 near x = a the results lose accuracy (P(1e9, 1e9)
// is 0.49922 for 0.5000042; both the interpreter's kernel and this
// expansion): a known limitation, which a uniform asymptotic form for
// large a would lift. Q for a <= 1/4, x < 5/4 is
// igammacSmallA's, without either loop's cancellation.

const igammaMaxIter = 100000

// igammaParts returns the series value of P (valid for x < a+1) and the
// continued-fraction value of Q (valid otherwise), and the branch mask.
func igammaParts(e *em, a, x *Value) (series, fraction, useSeries *Value) {
	useSeries = e.lt(x, e.add(a, e.c(1)))
	// The series, with (1, 1/2) where the fraction applies.
	sa := e.sel(useSeries, a, e.c(1))
	sx := e.sel(useSeries, x, e.c(0.5))
	// x^a e^-x / Γ(a+1) at once (through Γ(a) and a division by a, a
	// subnormal a loses its digits).
	pre := e.exp(e.sub(e.sub(e.mul(sa, e.log(sx)), sx), expandLgamma(e, e.add(sa, e.c(1)))))
	series = e.mul(pre, igammaSeriesSum(e, sa, sx))
	// The fraction, with (1, 2) where the series applies.
	fa := e.sel(useSeries, e.c(1), a)
	fx := e.sel(useSeries, e.c(2), x)
	fraction = e.mul(igammaPrefix(e, fa, fx), igammaLentz(e, fa, fx))
	// Rounding may take either an ulp past 1 (P(1e-310, 1/4)): a
	// probability it stays.
	return e.min(series, e.c(1)), e.min(fraction, e.c(1)), useSeries
}

// igammaPrefix is x^a e^-x / Γ(a) for a > 0, x > 0.
func igammaPrefix(e *em, a, x *Value) *Value {
	return e.exp(e.sub(e.sub(e.mul(a, e.log(x)), x), expandLgamma(e, a)))
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
			conv := e.fb.Not(e.ge(e.abs(e.sub(del, e.c(1))), e.c(1e-17)))
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

// expandIgamma is P(a, x).
func expandIgamma(e *em, a, x *Value) *Value {
	a, x = igammaSafe(e, a, x)
	s, f, useSeries := igammaParts(e, a, x)
	return e.sel(useSeries, s, e.sub(e.c(1), f))
}

// expandIgammac is Q(a, x).
func expandIgammac(e *em, a, x *Value) *Value {
	a, x = igammaSafe(e, a, x)
	s, f, useSeries := igammaParts(e, a, x)
	q := e.sel(useSeries, e.sub(e.c(1), s), f)
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
