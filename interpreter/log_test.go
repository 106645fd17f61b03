package interpreter

import (
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
