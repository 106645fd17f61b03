package chlo

import (
	"fmt"
	"math"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The decompositions of the CHLO special functions. Each is written once,
// on float64 tensors (f16, bf16 and f32 inputs are widened and the result
// rounded once), from textbook series, continued fractions and the
// Lanczos approximation; the comments name each one.

var posInf = math.Inf(1)

// em emits elementwise float ops on tensors of one type.
type em struct {
	fb     *FuncBuilder
	t      stablehlo.TensorType
	consts map[float64]*Value
}

func newEm(fb *FuncBuilder, t stablehlo.TensorType) *em {
	return &em{fb: fb, t: t, consts: map[float64]*Value{}}
}

// c is the constant v splatted to the tensor type.
func (e *em) c(v float64) *Value {
	if v == v {
		if c, ok := e.consts[v]; ok && !(v == 0 && math.Signbit(v)) {
			return c
		}
	}
	c := e.fb.SplatOf(e.t.DType, v, e.t.Dims...)
	if v == v && !(v == 0 && math.Signbit(v)) {
		e.consts[v] = c
	}
	return c
}

func (e *em) add(a, b *Value) *Value   { return e.fb.Add(a, b) }
func (e *em) sub(a, b *Value) *Value   { return e.fb.Subtract(a, b) }
func (e *em) mul(a, b *Value) *Value   { return e.fb.Multiply(a, b) }
func (e *em) div(a, b *Value) *Value   { return e.fb.Divide(a, b) }
func (e *em) neg(a *Value) *Value      { return e.fb.Negate(a) }
func (e *em) abs(a *Value) *Value      { return e.fb.Abs(a) }
func (e *em) exp(a *Value) *Value      { return e.fb.Exponential(a) }
func (e *em) expm1(a *Value) *Value    { return e.fb.ExponentialMinusOne(a) }
func (e *em) log(a *Value) *Value      { return e.fb.Log(a) }
func (e *em) log1p(a *Value) *Value    { return e.fb.LogPlusOne(a) }
func (e *em) sqrt(a *Value) *Value     { return e.fb.Sqrt(a) }
func (e *em) floor(a *Value) *Value    { return e.fb.Floor(a) }
func (e *em) round(a *Value) *Value    { return e.fb.RoundNearestEven(a) }
func (e *em) sin(a *Value) *Value      { return e.fb.Sine(a) }
func (e *em) cos(a *Value) *Value      { return e.fb.Cosine(a) }
func (e *em) tan(a *Value) *Value      { return e.fb.Tan(a) }
func (e *em) pow(a, b *Value) *Value   { return e.fb.Power(a, b) }
func (e *em) max(a, b *Value) *Value   { return e.fb.Maximum(a, b) }
func (e *em) min(a, b *Value) *Value   { return e.fb.Minimum(a, b) }
func (e *em) atan2(a, b *Value) *Value { return e.fb.Atan2(a, b) }
func (e *em) sel(p, a, b *Value) *Value {
	return e.fb.Select(p, a, b)
}
func (e *em) cmp(a, b *Value, d stablehlo.ComparisonDirection) *Value {
	return e.fb.Compare(a, b, d, stablehlo.CompareFloat)
}
func (e *em) lt(a, b *Value) *Value  { return e.cmp(a, b, stablehlo.CompareLT) }
func (e *em) le(a, b *Value) *Value  { return e.cmp(a, b, stablehlo.CompareLE) }
func (e *em) gt(a, b *Value) *Value  { return e.cmp(a, b, stablehlo.CompareGT) }
func (e *em) ge(a, b *Value) *Value  { return e.cmp(a, b, stablehlo.CompareGE) }
func (e *em) eq(a, b *Value) *Value  { return e.cmp(a, b, stablehlo.CompareEQ) }
func (e *em) ne(a, b *Value) *Value  { return e.cmp(a, b, stablehlo.CompareNE) }
func (e *em) and(a, b *Value) *Value { return e.fb.And(a, b) }
func (e *em) or(a, b *Value) *Value  { return e.fb.Or(a, b) }
func (e *em) isNaN(a *Value) *Value  { return e.ne(a, a) }

// sign returns +1 or -1 with the sign bit of a (and keeps ±0 and NaN out
// of the product: copysign(v, a)).
func (e *em) copysign(v, a *Value) *Value {
	return e.sel(e.fb.Compare(e.fb.BitcastConvert(a, xla.Int64), e.fb.SplatOf(xla.Int64, 0, e.t.Dims...), stablehlo.CompareLT, stablehlo.CompareSigned),
		e.neg(e.abs(v)), e.abs(v))
}

// --- trigonometric and hyperbolic -----------------------------------------------------

func expandTan(e *em, x *Value) *Value { return e.tan(x) }

// sinh: |x| < 1: (E + E/(E+1))/2 with E = expm1(|x|) (no cancellation);
// else t = exp(|x|/2), (t/2)·t - (1/(2t))/t (no overflow before sinh does).
func expandSinh(e *em, x *Value) *Value {
	a := e.abs(x)
	ea := e.expm1(a)
	small := e.mul(e.c(0.5), e.add(ea, e.div(ea, e.add(ea, e.c(1)))))
	t := e.exp(e.mul(a, e.c(0.5)))
	large := e.sub(e.mul(e.mul(e.c(0.5), t), t), e.div(e.div(e.c(0.5), t), t))
	s := e.sel(e.lt(a, e.c(1)), small, large)
	return e.copysign(s, x)
}

// cosh: t = exp(|x|/2), (t/2)·t + (1/(2t))/t.
func expandCosh(e *em, x *Value) *Value {
	a := e.abs(x)
	t := e.exp(e.mul(a, e.c(0.5)))
	return e.add(e.mul(e.mul(e.c(0.5), t), t), e.div(e.div(e.c(0.5), t), t))
}

// asin(x) = atan2(x, sqrt((1-x)(1+x))); NaN outside [-1, 1].
func expandAsin(e *em, x *Value) *Value {
	return e.atan2(x, e.sqrt(e.mul(e.sub(e.c(1), x), e.add(e.c(1), x))))
}

// acos(x) = atan2(sqrt((1-x)(1+x)), x).
func expandAcos(e *em, x *Value) *Value {
	return e.atan2(e.sqrt(e.mul(e.sub(e.c(1), x), e.add(e.c(1), x))), x)
}

// atan(x) = atan2(x, 1).
func expandAtan(e *em, x *Value) *Value { return e.atan2(x, e.c(1)) }

// asinh(x) = sign(x)·log1p(a + a²/(1 + sqrt(1 + a²))), a = |x|; for
// a > 2^28, sign(x)·(log(a) + log 2).
func expandAsinh(e *em, x *Value) *Value {
	a := e.abs(x)
	a2 := e.mul(a, a)
	mid := e.log1p(e.add(a, e.div(a2, e.add(e.c(1), e.sqrt(e.add(e.c(1), a2))))))
	big := e.add(e.log(a), e.c(math.Ln2))
	return e.copysign(e.sel(e.gt(a, e.c(1<<28)), big, mid), x)
}

// acosh(x) = log1p(y + sqrt(2y + y²)), y = x - 1; log(x) + log 2 for
// x > 2^28; NaN for x < 1.
func expandAcosh(e *em, x *Value) *Value {
	y := e.sub(x, e.c(1))
	mid := e.log1p(e.add(y, e.sqrt(e.add(e.mul(e.c(2), y), e.mul(y, y)))))
	big := e.add(e.log(x), e.c(math.Ln2))
	r := e.sel(e.gt(x, e.c(1<<28)), big, mid)
	return e.sel(e.lt(x, e.c(1)), e.c(math.NaN()), r)
}

// atanh(x) = sign(x)·log1p(2|x|/(1-|x|))/2: ±Inf at ±1, NaN outside
// [-1, 1]. The odd form keeps log1p's argument positive (for x near -1,
// 2x/(1-x) near -1 cancelled: atanh(-1+2^-53) was 2% off).
func expandAtanh(e *em, x *Value) *Value {
	a := e.abs(x)
	r := e.copysign(e.mul(e.c(0.5), e.log1p(e.div(e.mul(e.c(2), a), e.sub(e.c(1), a)))), x)
	return e.sel(e.gt(a, e.c(1)), e.c(math.NaN()), r)
}

// complexTrig expands sinh, cosh and tan of complex numbers from their
// real and imaginary parts, in f64, with the interpreter's special values
// (C99 Annex G) and, past |re| = 700, e^|re| split in two halves so that
// a small cos or sin does not meet an overflowed factor.
func complexTrig(fb *FuncBuilder, name string, x *Value, t stablehlo.TensorType) *Value {
	if name == "tan" {
		return fb.Tan(x)
	}
	re, im := fb.Real(x), fb.Imag(x)
	rt, _ := re.TensorType()
	wt := stablehlo.TensorType{DType: xla.Float64, Dims: rt.Dims}
	e := newEm(fb, wt)
	a, b := fb.Convert(re, xla.Float64), fb.Convert(im, xla.Float64)
	sh, ch := expandSinh(e, a), expandCosh(e, a)
	cb, sb := e.cos(b), e.sin(b)
	big := e.gt(e.abs(a), e.c(700))
	h := e.exp(e.mul(e.abs(a), e.c(0.5)))
	half := e.mul(h, e.c(0.5))
	hs := e.copysign(half, a) // sinh a = hs·h, cosh a = half·h past 700
	shWide := e.sel(big, e.mul(hs, h), sh)
	chWide := e.sel(big, e.mul(half, h), ch)
	nan := e.c(math.NaN())
	bZero := e.eq(b, e.c(0))
	bBad := e.or(e.isInf(b), e.isNaN(b))
	aZeroBad := e.and(e.eq(a, e.c(0)), bBad)
	aInfBad := e.and(e.isInf(a), bBad)
	var r, i *Value
	if name == "sinh" {
		// sinh(a+ib) = sinh a cos b + i cosh a sin b
		r = e.sel(big, e.mul(e.mul(cb, hs), h), e.mul(sh, cb))
		i = e.sel(big, e.mul(e.mul(sb, half), h), e.mul(ch, sb))
		r, i = e.sel(bZero, shWide, r), e.sel(bZero, b, i)
		r, i = e.sel(aZeroBad, a, r), e.sel(aZeroBad, nan, i)
		r, i = e.sel(aInfBad, a, r), e.sel(aInfBad, nan, i)
	} else {
		// cosh(a+ib) = cosh a cos b + i sinh a sin b
		r = e.sel(big, e.mul(e.mul(cb, half), h), e.mul(ch, cb))
		i = e.sel(big, e.mul(e.mul(sb, hs), h), e.mul(sh, sb))
		// At b = ±0 the imaginary part is the zero sinh a·b, NaN for NaN a.
		zero := e.copysign(e.c(0), a)
		zero = e.sel(e.lt(e.copysign(e.c(1), b), e.c(0)), e.neg(zero), zero)
		zero = e.sel(e.isNaN(a), b, zero)
		r, i = e.sel(bZero, chWide, r), e.sel(bZero, zero, i)
		r, i = e.sel(aZeroBad, nan, r), e.sel(aZeroBad, e.c(0), i)
		r, i = e.sel(aInfBad, e.c(posInf), r), e.sel(aInfBad, nan, i)
	}
	return fb.Complex(fb.Convert(r, rt.DType), fb.Convert(i, rt.DType))
}

// --- next_after --------------------------------------------------------------

// expandNextAfter steps x's bit pattern by one toward y: the magnitude
// grows when x moves away from zero, shrinks when toward it; from ±0 the
// result is the smallest subnormal with y's sign; NaN when either is NaN;
// y when x == y.
func expandNextAfter(e *em, x, y *Value) *Value {
	fb := e.fb
	it := map[xla.DType]xla.DType{xla.Float16: xla.Int16, xla.BFloat16: xla.Int16, xla.Float32: xla.Int32, xla.Float64: xla.Int64}[e.t.DType]
	if it == xla.Invalid {
		fb.Fail("chlo.next_after", fmt.Errorf("no decomposition for element type %s", e.t.DType))
		return x
	}
	ic := func(v float64) *Value { return fb.SplatOf(it, v, e.t.Dims...) }
	bits := fb.BitcastConvert(x, it)
	zero := e.c(0)
	away := e.fb.Compare(e.gt(y, x), e.gt(x, zero), stablehlo.CompareEQ, stablehlo.CompareUnsigned)
	stepped := fb.BitcastConvert(fb.Select(away, fb.Add(bits, ic(1)), fb.Subtract(bits, ic(1))), e.t.DType)
	// From zero: the smallest subnormal, with y's sign.
	tiny := fb.BitcastConvert(ic(1), e.t.DType)
	fromZero := e.sel(e.lt(y, zero), e.neg(tiny), tiny)
	r := e.sel(e.eq(x, zero), fromZero, stepped)
	r = e.sel(e.eq(x, y), y, r)
	nan := e.or(e.isNaN(x), e.isNaN(y))
	return e.sel(nan, e.add(x, y), r)
}

// --- error function ------------------------------------------------------------

const (
	erfSeriesTerms = 45 // series for |x| < 2
	erfcCFDepth    = 80 // continued fraction for |x| >= 1.5
)

// expNegSquare is exp(-a²) with a² split as hi² + (a-hi)(a+hi), hi = a
// rounded down to a multiple of 1/16, so the rounding of a² does not grow
// the error of the exponential for large a.
func (e *em) expNegSquare(a *Value) *Value {
	hi := e.div(e.floor(e.mul(a, e.c(16))), e.c(16))
	lo := e.mul(e.sub(a, hi), e.add(a, hi))
	return e.mul(e.exp(e.neg(e.mul(hi, hi))), e.exp(e.neg(lo)))
}

// erfParts returns, for a = |x| >= 0: the series value of erf(a) (valid
// for a < 2) and the continued-fraction value of erfc(a) (valid for a >=
// 1.5).
//
// Series: erf(a) = 2/√π · e^{-a²} · Σ_{n>=0} 2^n a^{2n+1} / (1·3·…·(2n+1))
// (all terms positive). Continued fraction (Laplace): erfc(a) = e^{-a²}/√π
// · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …)))), evaluated from the tail.
func (e *em) erfParts(a *Value) (erfSeries, erfcCF *Value) {
	as := e.min(a, e.c(2))
	term, sum := as, as
	twoA2 := e.mul(e.c(2), e.mul(as, as))
	for n := 1; n <= erfSeriesTerms; n++ {
		term = e.mul(term, e.div(twoA2, e.c(float64(2*n+1))))
		sum = e.add(sum, term)
	}
	erfSeries = e.mul(e.mul(e.c(2/math.SqrtPi), e.expNegSquare(as)), sum)

	ac := e.max(a, e.c(1.5))
	k := ac
	for n := erfcCFDepth; n >= 1; n-- {
		k = e.add(ac, e.div(e.c(float64(n)/2), k))
	}
	erfcCF = e.div(e.mul(e.expNegSquare(ac), e.c(1/math.SqrtPi)), k)
	// Past 27.25, erfc underflows in f64 (below half the smallest
	// subnormal); the fraction would give 0, or NaN at +Inf.
	erfcCF = e.sel(e.gt(a, e.c(27.25)), e.c(0), erfcCF)
	return erfSeries, erfcCF
}

// erfPos returns erf(a) and erfc(a) for a = |x|.
func (e *em) erfPos(a *Value) (erf, erfc *Value) {
	s, cf := e.erfParts(a)
	erf = e.sel(e.lt(a, e.c(2)), s, e.sub(e.c(1), cf))
	erfc = e.sel(e.lt(a, e.c(1.5)), e.sub(e.c(1), s), cf)
	return erf, erfc
}

func expandErf(e *em, x *Value) *Value {
	a := e.abs(x)
	erf, _ := e.erfPos(a)
	r := e.copysign(erf, x)
	return e.sel(e.isNaN(x), x, r)
}

func expandErfc(e *em, x *Value) *Value {
	a := e.abs(x)
	_, erfc := e.erfPos(a)
	r := e.sel(e.lt(x, e.c(0)), e.sub(e.c(2), erfc), erfc)
	return e.sel(e.isNaN(x), x, r)
}

// expandErfInv: Winitzki's closed-form approximation (relative error about
// 2e-3) refined by three Halley steps on f(y) = erf(y) - a, written as
// (1-a) - erfc(y) for a > 1/2 where 1-a is exact. ±Inf at ±1; NaN outside.
func expandErfInv(e *em, x *Value) *Value {
	a := e.abs(x)
	const wa = 0.147
	l := e.log1p(e.neg(e.mul(a, a))) // ln(1 - a²)
	b := e.add(e.c(2/(math.Pi*wa)), e.mul(l, e.c(0.5)))
	y := e.sqrt(e.max(e.sub(e.sqrt(e.sub(e.mul(b, b), e.div(l, e.c(wa)))), b), e.c(0)))
	// Keep the iteration finite where the result is ±Inf or NaN.
	ok := e.lt(a, e.c(1))
	y = e.sel(ok, y, e.c(1))
	aa := e.sel(ok, a, e.c(0.5))
	oneMinus := e.sub(e.c(1), aa)
	tail := e.gt(aa, e.c(0.5))
	for i := 0; i < 3; i++ {
		erf, erfc := e.erfPos(y)
		f := e.sel(tail, e.sub(oneMinus, erfc), e.sub(erf, aa))
		df := e.mul(e.c(2/math.SqrtPi), e.expNegSquare(y))
		u := e.div(f, df)
		y = e.sub(y, e.div(u, e.add(e.c(1), e.mul(y, u))))
	}
	r := e.sel(e.eq(a, e.c(1)), e.c(posInf), y)
	r = e.sel(e.gt(a, e.c(1)), e.c(math.NaN()), r)
	r = e.copysign(r, x)
	return e.sel(e.isNaN(x), x, r)
}

// --- gamma family ---------------------------------------------------------------

// Lanczos approximation, g = 7, n = 9 (the coefficients published with
// Numerical Recipes / Godfrey): Γ(z+1) = √(2π) (z+g+½)^{z+½} e^{-(z+g+½)} A(z).
var lanczos = [...]float64{
	0.99999999999980993, 676.5203681218851, -1259.1392167224028,
	771.32342877765313, -176.61502916214059, 12.507343278686905,
	-0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
}

// lgammaPos is log Γ(z) for z >= 1/2 by the Lanczos approximation.
func (e *em) lgammaPos(z *Value) *Value {
	zz := e.sub(z, e.c(1))
	acc := e.c(lanczos[0])
	for i := 1; i < len(lanczos); i++ {
		acc = e.add(acc, e.div(e.c(lanczos[i]), e.add(zz, e.c(float64(i)))))
	}
	t := e.add(zz, e.c(7.5))
	// (zz+½)·log t - t, as (zz+½)·(log t - 1) - 7 to keep large arguments
	// from cancelling.
	r := e.sub(e.mul(e.add(zz, e.c(0.5)), e.sub(e.log(t), e.c(1))), e.c(7))
	return e.add(e.add(r, e.c(0.5*math.Log(2*math.Pi))), e.log(acc))
}

// sinPiAbs is |sin(πx)| with the argument reduced exactly first.
func (e *em) sinPiAbs(x *Value) *Value {
	r := e.sub(x, e.round(x))
	return e.abs(e.sin(e.mul(e.c(math.Pi), r)))
}

// expandLgamma: Lanczos for x >= 1/2, the reflection formula
// log Γ(x) = log π - log|sin πx| - log Γ(1-x) below; +Inf at the poles
// (0, -1, -2 ...) and at ±Inf; exactly 0 at 1 and 2.
func expandLgamma(e *em, x *Value) *Value {
	reflect := e.lt(x, e.c(0.5))
	z := e.sel(reflect, e.sub(e.c(1), x), x)
	lg := e.lgammaPos(z)
	refl := e.sub(e.sub(e.c(math.Log(math.Pi)), e.log(e.sinPiAbs(x))), lg)
	r := e.sel(reflect, refl, lg)
	// Below the normal range log|Γ(x)| = -log|x| - γx + …: π·x rounded
	// in the subnormals (lgamma(5e-324) came out 744.486 for 744.440).
	ax := e.abs(x)
	r = e.sel(e.and(e.gt(ax, e.c(0)), e.lt(ax, e.c(0x1p-1022))), e.neg(e.log(ax)), r)
	// log Γ is exactly 0 at 1 and 2.
	r = e.sel(e.or(e.eq(x, e.c(1)), e.eq(x, e.c(2))), e.c(0), r)
	pole := e.and(e.le(x, e.c(0)), e.eq(x, e.floor(x)))
	r = e.sel(pole, e.c(posInf), r)
	r = e.sel(e.eq(e.abs(x), e.c(posInf)), e.c(posInf), r)
	return e.sel(e.isNaN(x), x, r)
}

// digammaPos is ψ(z) for z >= 1/2: ψ(z) = ψ(z+10) - Σ_{i<10} 1/(z+i), and
// the asymptotic series ψ(w) = log w - 1/(2w) - Σ B_{2k}/(2k w^{2k}).
func (e *em) digammaPos(z *Value) *Value {
	s := e.c(0)
	for i := 0; i < 10; i++ {
		s = e.add(s, e.div(e.c(1), e.add(z, e.c(float64(i)))))
	}
	w := e.add(z, e.c(10))
	w2 := e.div(e.c(1), e.mul(w, w))
	// B_{2k}/(2k) for k = 1..7: 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12.
	coef := []float64{1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760, 1.0 / 12}
	p := e.c(coef[len(coef)-1])
	for i := len(coef) - 2; i >= 0; i-- {
		p = e.add(e.c(coef[i]), e.mul(w2, p))
	}
	series := e.mul(w2, p)
	return e.sub(e.sub(e.sub(e.log(w), e.div(e.c(0.5), w)), series), s)
}

// expandDigamma: the shifted asymptotic series for x >= 1/2, the
// reflection ψ(x) = ψ(1-x) - π/tan(πx) below. -Inf at ±0, NaN at the
// negative integers (as the interpreter and XLA define the poles).
func expandDigamma(e *em, x *Value) *Value {
	reflect := e.lt(x, e.c(0.5))
	z := e.sel(reflect, e.sub(e.c(1), x), x)
	d := e.digammaPos(z)
	r := e.sub(x, e.round(x))
	refl := e.sub(d, e.div(e.c(math.Pi), e.tan(e.mul(e.c(math.Pi), r))))
	out := e.sel(reflect, refl, d)
	negInt := e.and(e.lt(x, e.c(0)), e.eq(x, e.floor(x)))
	out = e.sel(negInt, e.c(math.NaN()), out)
	out = e.sel(e.eq(x, e.c(0)), e.c(math.Inf(-1)), out)
	return e.sel(e.isNaN(x), x, out)
}

// zetaBernoulli[j] is B_{2j+2}/(2j+2)!.
var zetaBernoulli = func() []float64 {
	b := []float64{1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
		-3617.0 / 510, 43867.0 / 798, -174611.0 / 330, 854513.0 / 138, -236364091.0 / 2730}
	out := make([]float64, len(b))
	f := 1.0
	for j := range b {
		f *= float64((2*j + 1) * (2*j + 2))
		out[j] = b[j] / f
	}
	return out
}()

const zetaDirect = 10 // terms summed directly before Euler–Maclaurin

// zetaPos is Hurwitz ζ(s, q) for q > 0 by Euler–Maclaurin summation:
// the first 10 terms directly, then w^{1-s}/(s-1) + w^{-s}/2 + Σ_j
// B_{2j}/(2j)! · s(s+1)…(s+2j-2) · w^{-s-2j+1} with w = q + 10, the tail
// as w^{1-s} · (1/(s-1) + 1/(2w) + Σ_j … w^{-2j}) (w·w^{-s} underflowed
// first: ζ(2, 1e300) came out 0).
func zetaPos(e *em, s, q *Value) *Value { return zetaPosScaled(e, s, q, nil) }

// zetaPosScaled is sc^s ζ(s, q) for q > 0, sc > 0 (ζ itself for a nil
// sc): every power (q+k)^-s taken as ((q+k)/sc)^-s, so that with sc = q
// a sum whose terms underflow stays representable (as the interpreter's
// zetaScaled).
func zetaPosScaled(e *em, s, q, sc *Value) *Value {
	scaled := func(v *Value) *Value {
		if sc == nil {
			return v
		}
		return e.div(v, sc)
	}
	sum := e.c(0)
	for k := 0; k < zetaDirect; k++ {
		sum = e.add(sum, e.pow(scaled(e.add(q, e.c(float64(k)))), e.neg(s)))
	}
	w := e.add(q, e.c(zetaDirect))
	p1 := e.pow(scaled(w), e.sub(e.c(1), s)) // w · (w/sc)^-s
	if sc != nil {
		p1 = e.mul(sc, p1)
	}
	tail := e.add(e.div(e.c(1), e.sub(s, e.c(1))), e.div(e.c(0.5), w))
	// fac = s(s+1)…(s+2j-2) · w^{-2j}
	invW2 := e.div(e.c(1), e.mul(w, w))
	fac := e.mul(s, invW2)
	for j := range zetaBernoulli {
		tail = e.add(tail, e.mul(e.c(zetaBernoulli[j]), fac))
		a := e.add(s, e.c(float64(2*j+1)))
		b := e.add(s, e.c(float64(2*j+2)))
		fac = e.mul(e.mul(fac, e.mul(a, b)), invW2)
	}
	// For s past ~1e14 fac overflows (the tail Inf - Inf, NaN) while p1,
	// unless scaled, underflows to 0: the tail is then nothing next to the
	// terms summed (0·Inf and the scaled p1·NaN were NaN). A NaN s or q
	// is NaN through the sum.
	rest := e.mul(p1, tail)
	return e.add(sum, e.sel(e.or(e.eq(p1, e.c(0)), e.isNaN(rest)), e.c(0), rest))
}

// expandZeta: Hurwitz ζ(s, q). For q > 0, zetaPos. For q < 0 (s an
// integer) the n = ⌈-q⌉ terms at q, q+1, …, q+n-1 are -(b+j) for j < n,
// b = 1-(q+n) in (0, 1), and sum to (-1)^s (ζ(s, b) - ζ(s, b+n)); the rest
// is ζ(s, q+n). NaN for s < 1, +Inf at s = 1, 0 at q = +Inf, q^-s at
// s = +Inf; for q <= 0 NaN unless s is an integer, and at the poles q = 0,
// -1, … +Inf for even s, NaN otherwise (the interpreter's conventions).
func expandZeta(e *em, s, q *Value) *Value {
	neg := e.lt(q, e.c(0))
	n := e.sel(neg, e.neg(e.floor(q)), e.c(0)) // ⌈-q⌉ for non-integer q
	a := e.add(q, n)
	// b = -q - (n-1), not 1 - (q+n): the rounding of q+n lost the low
	// bits of a small q (ζ(2, -1e-10) came out 9.99999834e19).
	b := e.sub(e.neg(q), e.sub(n, e.c(1)))
	za := zetaPos(e, s, a)
	sEven := e.eq(e.mul(e.floor(e.mul(s, e.c(0.5))), e.c(2)), s)
	// ζ(s, a) ± ζ(s, b) ∓ ζ(s, b+n), the large pair first (a = b at
	// half-integers, where they cancel exactly).
	zb, zbn := zetaPos(e, s, b), zetaPos(e, s, e.add(b, n))
	pair := e.sel(sEven, e.add(za, zb), e.sub(za, zb))
	r := e.sel(neg, e.add(pair, e.sel(sEven, e.neg(zbn), zbn)), za)
	r = e.sel(e.eq(q, e.c(posInf)), e.c(0), r)
	sInf := e.eq(s, e.c(posInf))
	r = e.sel(sInf, e.pow(q, e.neg(s)), r)
	sInt := e.eq(s, e.floor(s))
	qPole := e.and(e.le(q, e.c(0)), e.eq(q, e.floor(q)))
	nan := e.c(math.NaN())
	r = e.sel(e.and(e.le(q, e.c(0)), e.fb.Not(sInt)), nan, r)
	r = e.sel(qPole, e.sel(e.and(sEven, e.fb.Not(sInf)), e.c(posInf), nan), r)
	r = e.sel(e.eq(s, e.c(1)), e.c(posInf), r)
	r = e.sel(e.lt(s, e.c(1)), nan, r)
	return e.sel(e.or(e.isNaN(s), e.isNaN(q)), e.add(s, q), r)
}

// expandPolygamma: ψ⁽ⁿ⁾(x) = (-1)^{n+1} n! ζ(n+1, x) for n >= 1, digamma
// for n = 0, NaN unless n is a non-negative integer.
func expandPolygamma(e *em, n, x *Value) *Value {
	np1 := e.add(n, e.c(1))
	// n! = Γ(n+1) = exp(lgamma(n+1)) for n >= 0.
	fact := e.exp(e.lgammaPos(e.max(np1, e.c(1))))
	// Up to 15! the rounding error of exp(lgamma) is far below 1/2: n!
	// exactly, as the interpreter's Γ(n+1) (ψ'(x) was 9e-16 off).
	fact = e.sel(e.le(n, e.c(15)), e.round(fact), fact)
	odd := e.ne(e.mul(e.floor(e.mul(n, e.c(0.5))), e.c(2)), n)
	sign := e.sel(odd, e.c(1), e.c(-1))
	z := expandZeta(e, np1, x)
	r := e.mul(e.mul(sign, fact), z)
	// Past n = 170, n! overflows (and ζ may be subnormal): n!·ζ as
	// exp(lgamma(n+1) + log|ζ|).
	lg := e.lgammaPos(e.max(np1, e.c(1)))
	wide := e.copysign(e.exp(e.add(lg, e.log(e.abs(z)))), z)
	tiny := 0x1p-126 // where ζ becomes subnormal: the product through logs too
	if e.t.DType == xla.Float64 {
		tiny = 0x1p-1022
	}
	big := e.or(e.gt(n, e.c(170)), e.lt(e.abs(z), e.c(tiny)))
	// For 0 < x < Inf (as the interpreter's kernel) ζ itself may have
	// underflowed (log|ζ| = -Inf gave -0 for ψ⁽²⁰⁰⁾(52) = -9.77e29): ζ as
	// x^-(n+1) · x^(n+1) ζ(n+1, x), the latter summed scaled.
	xPos := e.and(e.gt(x, e.c(0)), e.lt(x, e.c(posInf)))
	xs := e.sel(xPos, x, e.c(1))
	scaled := e.exp(e.add(e.sub(lg, e.mul(np1, e.log(xs))), e.log(zetaPosScaled(e, np1, xs, xs))))
	wide = e.sel(xPos, scaled, wide)
	r = e.sel(big, e.mul(sign, wide), r)
	r = e.sel(e.eq(n, e.c(0)), expandDigamma(e, x), r)
	bad := e.or(e.or(e.lt(n, e.c(0)), e.ne(n, e.floor(n))), e.eq(n, e.c(posInf)))
	return e.sel(bad, e.c(math.NaN()), r)
}

// --- Bessel -----------------------------------------------------------------

// expandBesselI1e: e^{-|x|} I1(x). For |x| <= 30 the power series
// I1(x) = Σ (x/2)^{2k+1}/(k!(k+1)!) (positive terms, 90 of them); above,
// the asymptotic expansion I1(x) ~ e^x/√(2πx) Σ (-1)^k a_k/x^k with
// a_k = Π_{j<=k} (4 - (2j-1)²)/(8j). Odd in x.
func expandBesselI1e(e *em, x *Value) *Value {
	a := e.abs(x)
	as := e.min(a, e.c(30))
	h := e.mul(as, e.c(0.5))
	h2 := e.mul(h, h)
	term := h
	sum := h
	for k := 1; k <= 90; k++ {
		term = e.mul(term, e.div(h2, e.c(float64(k*(k+1)))))
		sum = e.add(sum, term)
	}
	series := e.mul(sum, e.exp(e.neg(as)))

	al := e.max(a, e.c(30))
	inv := e.div(e.c(1), al)
	acc := e.c(1)
	t := e.c(1)
	coef := 1.0
	for k := 1; k <= 30; k++ {
		m := float64(2*k - 1)
		coef *= -(4 - m*m) / (8 * float64(k))
		t = e.mul(t, inv)
		acc = e.add(acc, e.mul(e.c(coef), t))
	}
	// √(2π|x|), apart past 1e300, where 2π|x| overflows.
	root := e.sel(e.gt(al, e.c(1e300)), e.mul(e.c(math.Sqrt(2*math.Pi)), e.sqrt(al)), e.sqrt(e.mul(e.c(2*math.Pi), al)))
	asym := e.div(acc, root)
	asym = e.sel(e.eq(a, e.c(posInf)), e.c(0), asym)
	r := e.sel(e.le(a, e.c(30)), series, asym)
	r = e.copysign(r, x)
	return e.sel(e.isNaN(x), x, r)
}
