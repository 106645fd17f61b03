package interpreter

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLogOfSubnormals: stablehlo.log of f64 subnormals (real and complex)
// is right, where math.Log on amd64 is off by up to 35.
func TestLogOfSubnormals(t *testing.T) {
	out := runNoArgs(t, `func.func @main() -> (tensor<2xf64>, tensor<complex<f64>>) {
  %0 = stablehlo.constant dense<[5.0e-324, 1.0e-310]> : tensor<2xf64>
  %1 = stablehlo.log %0 : tensor<2xf64>
  %2 = stablehlo.constant dense<(0.0, 5.0e-324)> : tensor<complex<f64>>
  %3 = stablehlo.log %2 : tensor<complex<f64>>
  return %1, %3 : tensor<2xf64>, tensor<complex<f64>>
}`)
	got := out[0].(*Tensor).Data.([]float64)
	assert.InDelta(t, -744.4400719213812, got[0], 1e-12)
	assert.InDelta(t, -713.8013788281542, got[1], 1e-12)
	z := out[1].(*Tensor).Data.([]complex128)[0]
	assert.InDelta(t, -744.4400719213812, real(z), 1e-12)
}

// TestComplexTanNearPoles: stablehlo.tan of complex numbers near the
// real poles is as accurate as the real tan (cmplx.Tanh cancelled: 0.5%
// off at 1.5707963, Inf at fl(π/2)).
func TestComplexTanNearPoles(t *testing.T) {
	out := runNoArgs(t, `func.func @main() -> tensor<4xcomplex<f64>> {
  %0 = stablehlo.constant dense<[(1.5707963, 0.0), (1.5707963267948966, 0.0), (89.5, 0.0), (0x7FF0000000000000, 0.0)]> : tensor<4xcomplex<f64>>
  %1 = stablehlo.tan %0 : tensor<4xcomplex<f64>>
  return %1 : tensor<4xcomplex<f64>>
}`)
	got := out[0].(*Tensor).Data.([]complex128)
	for i, x := range []float64{1.5707963, 1.5707963267948966, 89.5} {
		assert.InDelta(t, math.Tan(x), real(got[i]), 1e-14*math.Abs(math.Tan(x)), "tan(%v)", x)
		assert.Equal(t, 0.0, imag(got[i]))
	}
	assert.True(t, math.IsNaN(real(got[3])))
	assert.Equal(t, 0.0, imag(got[3]), "tan(Inf + 0i) = NaN + 0i")
}
