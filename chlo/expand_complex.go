package chlo

import (
	"math"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The inverse trigonometric and hyperbolic functions of complex numbers,
// written on the real and imaginary parts in float64 (complex64 parts are
// widened and the results rounded once). They follow the interpreter's
// kernels (package special): Kahan's formulas built on a principal square
// root that keeps the sign of a zero imaginary part, so that on a branch
// cut the value is the limit from the side the signed zero points to, and
// the special values of C99 Annex G (infinities, NaN) chosen by selects.
//
//	asin z  = -i asinh(iz)
//	asinh z = re: asinh(Im(conj(√(1-w))·√(1+w))), im: atan2(Re w, Re(√(1-w)·√(1+w)))
//	          with w = iz (written through asin w)
//	acos z  = 2 atan2(Re √(1-z), Re √(1+z)) + i asinh(Im(conj(√(1+z))·√(1-z)))
//	acosh z = asinh(Re(conj(√(z-1))·√(z+1))) + 2i atan2(Im √(z-1), Re √(z+1))
//	atanh z = log1p(4x/((1-x)² + y²))/4 + i atan2(2y, (1-x)(1+x) - y²)/2,
//	          ≈ 1/z + iπ/2·sign(y) for |z| > 2^500, re = (ln 2 - ln|y|)/2
//	          at |x| = 1, |y| < 2^-500
//
// Past |x| or |y| = 2^1000 the square roots are halved before their
// products (which are about |z|) and asinh(4v) = asinh(v) + 2 ln 2.
//	atan z  = -i atanh(iz)

// cplx is a complex tensor as its float64 parts.
type cplx struct{ re, im *Value }

// expandComplexInverse expands asin, acos, atan, asinh, acosh or atanh of
// a complex tensor x.
func expandComplexInverse(fb *FuncBuilder, name string, x *Value, t stablehlo.TensorType) *Value {
	re, im := fb.Real(x), fb.Imag(x)
	pt := t.DType.ComplexElem()
	if pt != xla.Float64 {
		re, im = fb.Convert(re, xla.Float64), fb.Convert(im, xla.Float64)
	}
	e := newEm(fb, stablehlo.TensorType{DType: xla.Float64, Dims: t.Dims})
	z := cplx{re, im}
	var w cplx
	switch name {
	case "asinh":
		w = e.casinh(z)
	case "asin":
		// asin z = -i asinh(iz), iz = -y + ix.
		v := e.casinh(cplx{e.neg(z.im), z.re})
		w = cplx{v.im, e.neg(v.re)}
	case "acos":
		w = e.cacos(z)
	case "acosh":
		w = e.cacosh(z)
	case "atanh":
		w = e.catanh(z)
	case "atan":
		v := e.catanh(cplx{e.neg(z.im), z.re})
		w = cplx{v.im, e.neg(v.re)}
	default:
		fb.Fail("chlo."+name, errNoComplex(name))
		return x
	}
	if pt != xla.Float64 {
		w.re, w.im = fb.Convert(w.re, pt), fb.Convert(w.im, pt)
	}
	return fb.Complex(w.re, w.im)
}

type errNoComplex string

func (e errNoComplex) Error() string { return "no complex decomposition of chlo." + string(e) }

// pick is sel on both parts.
func (e *em) pick(p *Value, a, b cplx) cplx {
	return cplx{e.sel(p, a.re, b.re), e.sel(p, a.im, b.im)}
}

func (e *em) isInf(a *Value) *Value { return e.eq(e.abs(a), e.c(math.Inf(1))) }

// hypot is √(a²+b²) for a, b >= 0 as p·√(1+(q/p)²), p = max, q = min
// (0 when both are 0).
func (e *em) hypot(a, b *Value) *Value {
	p, q := e.max(a, b), e.min(a, b)
	r := e.div(q, p)
	h := e.mul(p, e.sqrt(e.add(e.c(1), e.mul(r, r))))
	return e.sel(e.eq(p, e.c(0)), e.c(0), h)
}

// csqrt is the principal square root with Annex G's special values: the
// imaginary part keeps y's sign (√(-4-0i) = -2i); √(x ± i∞) = +∞ ± i∞;
// √(-∞ ± iy) = 0 ± i∞; √(+∞ ± iy) = +∞ ± i0; NaN elsewhere as Annex G.
func (e *em) csqrt(z cplx) cplx {
	x, y := z.re, z.im
	ax, ay := e.abs(x), e.abs(y)
	m := e.max(ax, ay)
	down := e.gt(m, e.c(0x1p1000))
	up := e.lt(m, e.c(0x1p-1000))
	f := e.sel(down, e.c(0x1p-2), e.sel(up, e.c(0x1p200), e.c(1)))
	s := e.sel(down, e.c(2), e.sel(up, e.c(0x1p-100), e.c(1)))
	ax, ay = e.mul(ax, f), e.mul(ay, f)
	t := e.sqrt(e.mul(e.add(ax, e.hypot(ax, ay)), e.c(0.5)))
	u := e.div(ay, e.mul(e.c(2), t))
	ts, us := e.mul(t, s), e.mul(u, s)
	pos := e.ge(x, e.c(0))
	r := cplx{e.sel(pos, ts, us), e.copysign(e.sel(pos, us, ts), y)}

	nan, inf := e.c(math.NaN()), e.c(math.Inf(1))
	xNaN, yNaN := e.isNaN(x), e.isNaN(y)
	zero := e.and(e.eq(x, e.c(0)), e.eq(y, e.c(0)))
	r = e.pick(zero, cplx{e.c(0), y}, r)
	r = e.pick(yNaN, cplx{nan, y}, r)
	negInf := e.eq(x, e.c(math.Inf(-1)))
	r = e.pick(negInf, e.pick(yNaN, cplx{nan, inf}, cplx{e.c(0), e.copysign(inf, y)}), r)
	posInf := e.eq(x, inf)
	r = e.pick(posInf, cplx{x, e.sel(yNaN, y, e.copysign(e.c(0), y))}, r)
	r = e.pick(xNaN, cplx{x, nan}, r)
	return e.pick(e.isInf(y), cplx{inf, y}, r)
}

// cmulRe and friends: parts of products of square roots.
func (e *em) sub2(a, b, c, d *Value) *Value { return e.sub(e.mul(a, b), e.mul(c, d)) }
func (e *em) add2(a, b, c, d *Value) *Value { return e.add(e.mul(a, b), e.mul(c, d)) }

// hugeInverse is the bound on |x|, |y| past which the inverse functions
// halve their square roots (as the interpreter's kernels): the products of
// two roots are about |z|, which overflows when |z| > MaxFloat64 with both
// parts finite (asinh(1.5e308+1.5e308i) came out +Inf).
const hugeInverse = 0x1p1000

// huge is whether max(|x|, |y|) > hugeInverse.
func (e *em) huge(x, y *Value) *Value {
	return e.gt(e.max(e.abs(x), e.abs(y)), e.c(hugeInverse))
}

// halveIf is z/2 part by part where p holds.
func (e *em) halveIf(p *Value, z cplx) cplx {
	f := e.sel(p, e.c(0.5), e.c(1))
	return cplx{e.mul(z.re, f), e.mul(z.im, f)}
}

// asinhHalved is asinh(v) where p does not hold and asinh(4v) (v a product
// of halved roots, |4v| > 2^28) = asinh(v) + 2 ln 2 with v's sign where it
// does.
func (e *em) asinhHalved(p, v *Value) *Value {
	a := expandAsinh(e, v)
	return e.sel(p, e.add(a, e.copysign(e.c(2*math.Ln2), v)), a)
}

// casinh is the inverse hyperbolic sine (cuts on the imaginary axis
// beyond ±i).
func (e *em) casinh(z cplx) cplx {
	x, y := z.re, z.im
	// Finite: asinh z = -i asin(iz) with asin w (w = -y + ix) by Kahan:
	// Re asin w = atan2(Re w, Re(s1·s2)), Im asin w = asinh(Re s1·Im s2 - Im s1·Re s2),
	// s1 = √(1-w), s2 = √(1+w); past hugeInverse the roots halved.
	wr, wi := e.neg(y), x
	hg := e.huge(x, y)
	s1 := e.halveIf(hg, e.csqrt(cplx{e.sub(e.c(1), wr), e.neg(wi)}))
	s2 := e.halveIf(hg, e.csqrt(cplx{e.add(e.c(1), wr), wi}))
	ar := e.atan2(e.sel(hg, e.div(wr, e.c(4)), wr), e.sub2(s1.re, s2.re, s1.im, s2.im))
	ai := e.asinhHalved(hg, e.sub2(s1.re, s2.im, s1.im, s2.re))
	// asin(±0 ± 0i) is w itself.
	wz := e.and(e.eq(wr, e.c(0)), e.eq(wi, e.c(0)))
	ar, ai = e.sel(wz, wr, ar), e.sel(wz, wi, ai)
	r := cplx{ai, e.neg(ar)}

	nan, inf := e.c(math.NaN()), e.c(math.Inf(1))
	xInf, yInf := e.isInf(x), e.isInf(y)
	sx := e.copysign(inf, x)
	r = e.pick(yInf, cplx{sx, e.copysign(e.c(math.Pi/2), y)}, r)
	r = e.pick(xInf, cplx{sx, e.copysign(e.c(0), y)}, r)
	r = e.pick(e.and(xInf, yInf), cplx{sx, e.copysign(e.c(math.Pi/4), y)}, r)
	r = e.pick(e.isNaN(y), e.pick(xInf, cplx{x, y}, cplx{nan, nan}), r)
	xr := e.pick(e.eq(y, e.c(0)), cplx{x, y}, e.pick(yInf, cplx{inf, nan}, cplx{nan, nan}))
	return e.pick(e.isNaN(x), xr, r)
}

// infArg is the argument of a direction at infinity: π/4 or 3π/4 when both
// parts are infinite, π/2 when only y is, π or 0 when only x is (by x's
// sign).
func (e *em) infArg(x, y *Value) *Value {
	xInf, yInf := e.isInf(x), e.isInf(y)
	neg := e.lt(x, e.c(0))
	both := e.sel(neg, e.c(3*math.Pi/4), e.c(math.Pi/4))
	onlyX := e.sel(neg, e.c(math.Pi), e.c(0))
	return e.sel(e.and(xInf, yInf), both, e.sel(yInf, e.c(math.Pi/2), onlyX))
}

// cacos is the inverse cosine (cuts on the real axis beyond ±1).
func (e *em) cacos(z cplx) cplx {
	x, y := z.re, z.im
	hg := e.huge(x, y)
	s1 := e.halveIf(hg, e.csqrt(cplx{e.sub(e.c(1), x), e.neg(y)}))
	s2 := e.halveIf(hg, e.csqrt(cplx{e.add(e.c(1), x), y}))
	r := cplx{e.mul(e.c(2), e.atan2(s1.re, s2.re)), e.asinhHalved(hg, e.sub2(s2.re, s1.im, s2.im, s1.re))}

	nan, inf := e.c(math.NaN()), e.c(math.Inf(1))
	xInf, yInf := e.isInf(x), e.isInf(y)
	r = e.pick(e.or(xInf, yInf), cplx{e.infArg(x, y), e.neg(e.copysign(inf, y))}, r)
	yr := e.pick(e.eq(x, e.c(0)), cplx{e.c(math.Pi / 2), y}, e.pick(xInf, cplx{nan, e.neg(inf)}, cplx{nan, nan}))
	r = e.pick(e.isNaN(y), yr, r)
	return e.pick(e.isNaN(x), e.pick(yInf, cplx{x, e.neg(y)}, cplx{nan, nan}), r)
}

// cacosh is the inverse hyperbolic cosine (real part never negative).
func (e *em) cacosh(z cplx) cplx {
	x, y := z.re, z.im
	hg := e.huge(x, y)
	s1 := e.halveIf(hg, e.csqrt(cplx{e.sub(x, e.c(1)), y}))
	s2 := e.halveIf(hg, e.csqrt(cplx{e.add(x, e.c(1)), y}))
	r := cplx{e.asinhHalved(hg, e.add2(s1.re, s2.re, s1.im, s2.im)), e.mul(e.c(2), e.atan2(s1.im, s2.re))}

	nan, inf := e.c(math.NaN()), e.c(math.Inf(1))
	xInf, yInf := e.isInf(x), e.isInf(y)
	r = e.pick(e.or(xInf, yInf), cplx{inf, e.copysign(e.infArg(x, y), y)}, r)
	r = e.pick(e.isNaN(y), e.pick(xInf, cplx{inf, y}, cplx{nan, nan}), r)
	return e.pick(e.isNaN(x), e.pick(yInf, cplx{inf, x}, cplx{nan, nan}), r)
}

// catanh is the inverse hyperbolic tangent (cuts on the real axis beyond
// ±1).
func (e *em) catanh(z cplx) cplx {
	x, y := z.re, z.im
	ax, ay := e.abs(x), e.abs(y)
	omx := e.sub(e.c(1), ax)
	re := e.div(e.log1p(e.div(e.mul(e.c(4), ax), e.add(e.mul(omx, omx), e.mul(ay, ay)))), e.c(4))
	// Next to the branch points ±1, y² underflows (re came out +Inf):
	// re = log((4+y²)/y²)/4 = (ln 2 - ln|y|)/2.
	nearPole := e.and(e.eq(ax, e.c(1)), e.lt(ay, e.c(0x1p-500)))
	re = e.sel(nearPole, e.div(e.sub(e.c(math.Ln2), e.log(ay)), e.c(2)), re)
	im := e.div(e.atan2(e.mul(e.c(2), y), e.sub(e.mul(omx, e.add(e.c(1), ax)), e.mul(ay, ay))), e.c(2))
	r := cplx{e.copysign(re, x), im}

	nan, inf := e.c(math.NaN()), e.c(math.Inf(1))
	halfPi := e.copysign(e.c(math.Pi/2), y)
	// |z| beyond 2^500 (or infinite): 1/z's real part and ±π/2.
	xInf, yInf := e.isInf(x), e.isInf(y)
	big := e.or(e.or(xInf, yInf), e.gt(e.max(ax, ay), e.c(0x1p500)))
	bx := e.div(e.div(x, ax), e.add(ax, e.mul(ay, e.div(ay, ax))))
	by := e.div(e.div(x, ay), e.add(ay, e.mul(ax, e.div(ax, ay))))
	br := e.sel(e.or(xInf, yInf), e.c(0), e.sel(e.gt(ay, ax), by, bx))
	r = e.pick(e.and(e.eq(ax, e.c(1)), e.eq(y, e.c(0))), cplx{e.copysign(inf, x), y}, r)
	r = e.pick(big, cplx{e.copysign(br, x), halfPi}, r)
	yr := e.pick(e.or(xInf, e.eq(x, e.c(0))), cplx{e.copysign(e.c(0), x), y}, cplx{nan, nan})
	r = e.pick(e.isNaN(y), yr, r)
	return e.pick(e.isNaN(x), e.pick(yInf, cplx{e.copysign(e.c(0), x), halfPi}, cplx{x, nan}), r)
}
