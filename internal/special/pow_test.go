package special

import (
	"fmt"
	"math"
	"testing"
)

// RealPow against mpmath at 400 bits (benchmarks/… none: values inline):
// within an ulp and a half; math.Pow was 2.5e10 ulps off on the first
// integer case (see RealPow).
func TestRealPowAccuracy(t *testing.T) {
	cases := []struct{ x, y, want float64 }{
		{1.0000000009313226, 549755813888.0, 2.2844130418931806e+222},
		{1.0000001, 7000000000.0, 1.0141969717459648e+304},
		{0.999999, 700000000.0, 9.856226060108575e-305},
		{1.1, 7000.0, 5.607846372419733e+289},
		{0.9999999999990905, 562949953421312.0, 4.377491036033837e-223},
		{3.0, 2.0, 9.0},
		{2.0, 10.0, 1024.0},
		{10.0, -320.0, 1e-320},
		{10.0, -400.0, 0.0},
		{0.5, -1074.0, math.Inf(1)},
		{1.5, 1751.0, math.Inf(1)},
		{-1.1, 7001.0, -6.168631009661708e+289},
		{7.0, 23.0, 2.7368747340080914e+19},
		{1e300, 1e300, math.Inf(1)},
		{1e-300, 1e300, 0},
		{1e300, -1e300, 0},
		{2.2296136433996046e+246, -0.4852134574566991, 2.941194675060158e-120},
		{1e-315, -0.3, 3.162277661608755e+94},
		{1.0000000009313226, 549755813888.5, 2.2844130429569432e+222},
		{1.1, 7000.25, 5.743072236277597e+289},
		{0.999999, 700000000.5, 9.856221131994313e-305},
		{5e-324, 0.3333333333333333, 1.7031839360032837e-108},
		{1.4142, 2000.5, 1.2500322923904363e+301},
		{0.7072, -2000.5, 9.788696513821339e+300},
		{3.0, 0.5, 1.7320508075688772},
		{10.0, -320.5, 3.16e-321},
		{1e+300, 1.0279, math.Inf(1)},
		{123.456, -7.89, 3.1475216724926214e-17},
		{1.0000001, 7000000000.5, 1.0141970224558122e+304},
		{0.6476655296663247, 165576.01180671016, 0.0},
		{0.42939636167132345, -8.185739733122698, 1012.3388594165515},
		{1.894899401414975, 1.5420589723499738, 2.679502869446665},
		{0.9998382780871429, -7.644155238432633, 1.0012370919483944},
		{0.2061114248871827, 0.9548893141911563, 0.2213315838672125},
		{1.0768319880933315e+19, 1.7112372701527754, 3.702720238418722e+32},
		{1.0001488474205174, -102331.6191444135, 2.4288832853188147e-07},
		{6.90982348082502e-230, -921585.4859051247, math.Inf(1)},
		{7.005700905316345e+34, -209.75025719316437, 0.0},
		{0.9995398785542562, 402984.04260884784, 2.8437423637004585e-81},
		{0.9998912815345018, 236.1138022378634, 0.9746553810856498},
		{0.710928219080692, -518.9236891738421, 7.78263776615788e+76},
		{0.00801713908453633, 638559.6756714827, 0.0},
		{1.5062960145724462e-51, 9.154624079279824, 0.0},
		{1.3170333539446604, -694.2689552609105, 9.282670114651977e-84},
		{0.9992509830249919, 216.95304920286026, 0.8499630464256275},
		{1.0007490263682688, -792925.8125793515, 1.4433012547540406e-258},
		{2.321253331660584e-186, -6.7539362445580515, math.Inf(1)},
		{1.0008978975171388, -9.489982266677085, 0.9915189603635856},
		{1.9090370313378487e+273, 488.5116970784609, math.Inf(1)},
		{0.999288234980437, -3.147283235139964, 1.0022434364597772},
		{1.3458728147894617e-177, -945915.017155663, math.Inf(1)},
		{5.626630774477498e+85, 0.36793714265522226, 3.5538687502066515e+31},
		{1.065184794985758, 2.2645644562708185, 1.153733720718538},
		{1.612157169571335, -6.001640332097007, 0.05691352815512421},
		{0.9993872898920256, -73.88125112658713, 1.0463225287907336},
		{1.9100012626426663, -34693.39573284413, 0.0},
		{1.000305956085682, 819554.2751034459, 7.614672008477366e+108},
		{0.9993570434366751, 421.15299645536743, 0.7627155122290499},
		{0.9263210803476991, -522.1462857829899, 2.2663895241658893e+17},
	}
	for _, c := range cases {
		got := RealPow(c.x, c.y)
		if math.IsInf(c.want, 0) || c.want == 0 {
			if got != c.want {
				t.Errorf("RealPow(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
			}
			continue
		}
		ulp := math.Abs(math.Nextafter(c.want, math.Inf(1)) - c.want)
		if d := math.Abs(got-c.want) / ulp; d > 1.5 {
			t.Errorf("RealPow(%v, %v) = %v, want %v (%.1f ulps)", c.x, c.y, got, c.want, d)
		}
	}
}

// RealPow keeps math.Pow's special values (IEEE 754's pow: zeros,
// infinities, NaN, ±1, negative bases) and its exact results.
func TestRealPowSpecialValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	xs := []float64{0, math.Copysign(0, -1), 1, -1, inf, -inf, nan, 2, -2, 0.5, -0.5, 5e-324, -5e-324, 3, -3}
	ys := []float64{0, math.Copysign(0, -1), 1, -1, 2, -2, 3, -3, 0.5, -0.5, inf, -inf, nan, 1e300, -1e300, 0x1p62, 0x1p63, -0x1p63, 0x1p62 + 1024}
	for _, x := range xs {
		for _, y := range ys {
			want, got := math.Pow(x, y), RealPow(x, y)
			special := math.IsNaN(want) || math.IsInf(want, 0) || want == 0 || want == 1 || want == -1 ||
				(math.Abs(x) == 2 || math.Abs(x) == 0.5 || math.Abs(x) == 3) && math.Abs(y) <= 3 && y != -0.5
			if !special {
				continue
			}
			if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && (got != want || math.Signbit(got) != math.Signbit(want)) {
				t.Errorf("RealPow(%v, %v) = %v, math.Pow %v", x, y, got, want)
			}
		}
	}
}

// P(a, x) for small x and Q(a, x) against mpmath at 300 bits: the prefix
// x^a e^-x / Γ(a) is a product of accurate factors, not the exponential
// of a sum whose rounding it carried (P(1, 1e-300) was 143 ulps off,
// P(30, 3e-9) 942; found in review).
func TestIgammaPrefixAccuracy(t *testing.T) {
	for _, c := range []struct{ a, x, p float64 }{
		{1.0, 1e-300, 1e-300},
		{0.5, 2e-300, 1.5957691216057308e-150},
		{30.0, 3e-09, 7.762070186262238e-289},
		{2.5, 1e-100, 3.0090111122547004e-251},
		{7.25, 0.001, 2.1210705624242955e-26},
	} {
		got := Igamma(c.a, c.x)
		if d := math.Abs(got-c.p) / c.p; d > 8e-16 {
			t.Errorf("Igamma(%v, %v) = %v, want %v (relative %.1e)", c.a, c.x, got, c.p, d)
		}
	}
	for _, c := range []struct{ a, x, q float64 }{
		{0.001, 1.5, 0.00010015295965701439},
		{0.1, 30.0, 4.476766580012692e-16},
		{3.5, 20.0, 1.2587903873713088e-06},
	} {
		got := Igammac(c.a, c.x)
		if d := math.Abs(got-c.q) / c.q; d > 5e-15 { // Q(0.001, 1.5): about 20 ulps, from its continued fraction
			t.Errorf("Igammac(%v, %v) = %v, want %v (relative %.1e)", c.a, c.x, got, c.q, d)
		}
	}
}

// ζ(x, q) and ψ⁽ⁿ⁾ against mpmath at 400 bits: their terms' powers go
// through RealPow (math.Pow put ζ(300, 0.1) 106 ulps off; found in
// review).
func TestZetaPolygammaAccuracy(t *testing.T) {
	for _, c := range []struct{ f, want float64 }{
		{Zeta(300, 0.1), 9.999999999999834e+299},
		{Zeta(2.5, 3.7), 0.11475814214741722},
		{Zeta(50, 1.5), 1.568328545496635e-09},
		{Zeta(7, 0.25), 16384.213455199573},
		{Zeta(1.0001, 2), 9999.577222947539},
		{Polygamma(3, 2.5), 0.22390584881725206},
		{Polygamma(10, 0.7), -183531159.5257871},
		{Polygamma(50, 4), -5.998190766368134e+33},
	} {
		ulp := math.Abs(math.Nextafter(c.want, math.Inf(1)) - c.want)
		if d := math.Abs(c.f-c.want) / ulp; d > 2 {
			t.Errorf("got %v, want %v (%.1f ulps)", c.f, c.want, d)
		}
	}
}

var powSink float64

// BenchmarkRealPow times RealPow beside math.Pow on the same inputs: a
// fractional exponent (e^(y·ln x) in double-double) and an integer one
// (squaring in double-double).
func BenchmarkRealPow(b *testing.B) {
	for _, c := range []struct {
		name string
		f    func(x, y float64) float64
	}{{"math.Pow", math.Pow}, {"RealPow", RealPow}} {
		for _, y := range []float64{2.7, 3} {
			b.Run(fmt.Sprintf("%s/y=%v", c.name, y), func(b *testing.B) {
				s := 0.0
				for i := 0; i < b.N; i++ {
					s += c.f(1.5+float64(i&255)*0.01, y)
				}
				powSink = s
			})
		}
	}
}
