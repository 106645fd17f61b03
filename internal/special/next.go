package special

import "math"

// Nextafter64 is the float64 after x in the direction of y, as C's
// nextafter: NaN if either is NaN, y when x == y (so nextafter(+0, -0) is
// -0), and the smallest subnormal signed like y when x is zero.
func Nextafter64(x, y float64) float64 {
	switch {
	case x != x || y != y:
		return math.NaN()
	case x == y:
		return y
	case x == 0:
		return math.Copysign(math.Float64frombits(1), y)
	}
	b := math.Float64bits(x)
	if (y > x) == (x > 0) {
		b++
	} else {
		b--
	}
	return math.Float64frombits(b)
}

// Nextafter32 is Nextafter64 for float32.
func Nextafter32(x, y float32) float32 {
	switch {
	case x != x || y != y:
		return float32(math.NaN())
	case x == y:
		return y
	case x == 0:
		return float32(math.Copysign(float64(math.Float32frombits(1)), float64(y)))
	}
	b := math.Float32bits(x)
	if (y > x) == (x > 0) {
		b++
	} else {
		b--
	}
	return math.Float32frombits(b)
}
