package special

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
