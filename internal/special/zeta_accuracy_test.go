package special

import (
	"math"
	"math/big"
	"testing"
)

// zetaRef is ζ(s, q) for an integer s >= 2 and q > 0 in 200-bit
// arithmetic: the first n terms summed, the rest by Euler-Maclaurin's
// first terms (the first one left out, about s^5·a^(-s-5)/30240, is far
// under float64's precision at the a used here).
func zetaRef(s int, q float64) float64 {
	const prec = 200
	const n = 400
	sum := new(big.Float).SetPrec(prec)
	pow := func(a *big.Float, e int) *big.Float { // a^-e
		p := new(big.Float).SetPrec(prec).SetInt64(1)
		for i := 0; i < e; i++ {
			p.Mul(p, a)
		}
		return new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), p)
	}
	for k := 0; k < n; k++ {
		a := new(big.Float).SetPrec(prec).SetFloat64(q)
		a.Add(a, big.NewFloat(float64(k)))
		sum.Add(sum, pow(a, s))
	}
	a := new(big.Float).SetPrec(prec).SetFloat64(q)
	a.Add(a, big.NewFloat(n))
	// a^(1-s)/(s-1) + a^-s/2 + s·a^(-s-1)/12 - s(s+1)(s+2)·a^(-s-3)/720
	t1 := new(big.Float).SetPrec(prec).Quo(pow(a, s-1), big.NewFloat(float64(s-1)))
	t2 := new(big.Float).SetPrec(prec).Quo(pow(a, s), big.NewFloat(2))
	t3 := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Mul(pow(a, s+1), big.NewFloat(float64(s))), big.NewFloat(12))
	t4 := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Mul(pow(a, s+3), big.NewFloat(float64(s*(s+1)*(s+2)))), big.NewFloat(720))
	sum.Add(sum, t1).Add(sum, t2).Add(sum, t3).Sub(sum, t4)
	f, _ := sum.Float64()
	return f
}

// ulpDiff is |a-b| in units in the last place of b.
func ulpDiff(a, b float64) float64 {
	return math.Abs(a-b) / (math.Nextafter(math.Abs(b), math.Inf(1)) - math.Abs(b))
}

// TestZetaAccuracy: ζ(s, q) within 8 ulp of a 200-bit sum over integer s
// from 2 to 40 and q from 0.5 to 45, where the Euler-Maclaurin tail
// starts near s (ζ(10, 10) was 261 ulp off when the sum stopped at
// a = max(10, s)).
func TestZetaAccuracy(t *testing.T) {
	worst, at := 0.0, [2]float64{}
	for s := 2; s <= 40; s++ {
		for _, q := range []float64{0.5, 1, 2, 5, 9, 9.5, 10, 10.5, 11, 15, 20, 30, 39.5, 45} {
			want := zetaRef(s, q)
			if want == 0 {
				continue
			}
			got := Zeta(float64(s), q)
			if d := ulpDiff(got, want); d > worst {
				worst, at = d, [2]float64{float64(s), q}
			}
		}
	}
	t.Logf("worst: %.1f ulp at ζ%v", worst, at)
	if worst > 8 {
		t.Errorf("ζ%v is %.1f ulp off", at, worst)
	}
}

// TestZetaHugeOrder: ζ(s, q) for s near the float64 range is q^-s (and
// the rest smaller), 0 for q > 1 and 1 for q = 1, not the NaN an
// overflowing Euler-Maclaurin factor gave.
func TestZetaHugeOrder(t *testing.T) {
	for _, c := range [][3]float64{{1e300, 1e300, 0}, {1e300, 2e300, 0}, {1e300, 2, 0}, {1e300, 1, 1}, {1e308, 1e308, 0}} {
		if got := Zeta(c[0], c[1]); got != c[2] {
			t.Errorf("ζ(%g, %g) = %g, want %g", c[0], c[1], got, c[2])
		}
	}
}
