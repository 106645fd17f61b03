package interpreter

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

func TestBatchNormSpecExamples(t *testing.T) {
	f32 := xla.Float32
	operand := shpT(f32, shpDims(2, 2, 2), 1, 2, 3, 4, 3, 4, 1, 2)
	ones := shpT(f32, shpDims(2), 1, 1)
	mean := shpT(f32, shpDims(2), 2, 3)
	gy := shpT(f32, shpDims(2, 2, 2), 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1)

	inf := shpRun(t, `func.func @main(%x: tensor<2x2x2xf32>, %s: tensor<2xf32>, %o: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<2x2x2xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}`, operand, ones, ones, mean, ones)
	assert.Equal(t, []float64{0, 0, 2, 2, 2, 2, 0, 0}, shpVals(inf[0]))

	tr := shpRun(t, `func.func @main(%x: tensor<2x2x2xf32>, %s: tensor<2xf32>, %o: tensor<2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>
}`, operand, ones, ones)
	assert.Equal(t, []float64{0, 0, 2, 2, 2, 2, 0, 0}, shpVals(tr[0]))
	assert.Equal(t, []float64{2, 3}, shpVals(tr[1]))
	assert.Equal(t, []float64{1, 1}, shpVals(tr[2]))

	gr := shpRun(t, `func.func @main(%x: tensor<2x2x2xf32>, %s: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>, %g: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %g) {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>
}`, operand, ones, mean, ones, gy)
	for i, v := range shpVals(gr[0]) {
		assert.InDelta(t, 0, v, 1e-6, "grad_operand %d", i)
	}
	assert.Equal(t, []float64{0, 0}, shpVals(gr[1]))
	for _, v := range shpVals(gr[2]) {
		assert.InDelta(t, 0.4, v, 1e-6)
	}
}

// Batch norm over a feature dimension in the middle, against a direct
// float64 computation, and the bf16 result rounded to bf16.
func TestBatchNormTrainingMiddleFeature(t *testing.T) {
	for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			et := dt.String()
			x := shpIota(dt, shpDims(2, 3, 2), 0)
			src := `func.func @main(%x: tensor<2x3x2x` + et + `>, %s: tensor<3x` + et + `>, %o: tensor<3x` + et + `>) -> (tensor<2x3x2x` + et + `>, tensor<3x` + et + `>, tensor<3x` + et + `>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3x2x` + et + `>, tensor<3x` + et + `>, tensor<3x` + et + `>) -> (tensor<2x3x2x` + et + `>, tensor<3x` + et + `>, tensor<3x` + et + `>)
  return %0#0, %0#1, %0#2 : tensor<2x3x2x` + et + `>, tensor<3x` + et + `>, tensor<3x` + et + `>
}`
			out := shpRun(t, src, x, shpT(dt, shpDims(3), 1, 2, 0.5), shpT(dt, shpDims(3), 0, 1, -1))
			// Feature c holds x = {2c, 2c+1, 6+2c, 7+2c}: mean 2c+3.5, variance 9.25.
			mean := shpVals(out[1])
			for c, m := range mean {
				assert.InDelta(t, float64(2*c)+3.5, m, 1e-6)
			}
			assert.Equal(t, []float64{9.25, 9.25, 9.25}, shpVals(out[2]))
			y := shpVals(out[0])
			require.Len(t, y, 12)
			tol := 1e-5
			if dt == xla.BFloat16 {
				tol = 2e-2
			}
			sd := math.Sqrt(9.25 + float64(float32(1e-3)))
			assert.InDelta(t, 1*(0-3.5)/sd+0, y[0], tol)
			assert.InDelta(t, 2*(3-5.5)/sd+1, y[3], tol)
			assert.InDelta(t, 0.5*(11-7.5)/sd-1, y[11], tol)
		})
	}
}
