package special

// Real functions whose standard-library forms are inaccurate somewhere.

import "math"

// RealLog is the natural logarithm of a float64: math.Log, but right for
// subnormal x. The amd64 assembly of math.Log (Go 1.26) does not
// normalize them and is off by up to 35 (5e-324 gave -709.09 for
// -744.44).
func RealLog(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p52) - 52*math.Ln2
	}
	return math.Log(x)
}

// Atan2 is the angle of (x, y): math.Atan2, but with the sign of y when
// x < 0 and y/x underflows. math.Atan2 (Go 1.26) adds π to atan(y/x) = +0
// there, giving +π for y < 0 (atan2(-1e-300, -1e300) was π, not -π).
func Atan2(y, x float64) float64 {
	r := math.Atan2(y, x)
	if y != 0 && !math.IsNaN(r) && math.Signbit(r) != math.Signbit(y) {
		r = -r
	}
	return r
}

// RealAcos is arccos x as atan2(√((1-x)(1+x)), x): accurate near |x| = 1,
// where math.Acos's 1-x² cancels (acos(0.99999994) was off by 1.3e6
// ulp). NaN outside [-1, 1].
func RealAcos(x float64) float64 {
	return Atan2(math.Sqrt((1-x)*(1+x)), x)
}

// RealAsin is arcsin x as atan2(x, √((1-x)(1+x))), accurate near |x| = 1.
func RealAsin(x float64) float64 {
	return Atan2(x, math.Sqrt((1-x)*(1+x)))
}
