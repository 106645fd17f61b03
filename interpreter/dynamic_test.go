package interpreter

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halo-ml/halo/xla"
)

func TestDynamicOps(t *testing.T) {
	i64 := func(v ...float64) *Tensor { return shpT(xla.Int64, shpDims(int64(len(v))), v...) }
	shpRunCases(t, []shpTestCase{
		{
			name: "dynamic_broadcast_in_dim",
			src: `func.func @main(%a: tensor<1x3xi32>, %s: tensor<3xi64>) -> tensor<2x3x2xi32> {
  %0 = "stablehlo.dynamic_broadcast_in_dim"(%a, %s) {broadcast_dimensions = array<i64: 2, 1>} : (tensor<1x3xi32>, tensor<3xi64>) -> tensor<2x3x2xi32>
  return %0 : tensor<2x3x2xi32>
}`,
			args: []Value{shpIota(xla.Int32, shpDims(1, 3), 1), i64(2, 3, 2)},
			dims: shpDims(2, 3, 2), want: []float64{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3},
		},
		{
			name: "dynamic_iota",
			src: `func.func @main(%s: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = "stablehlo.dynamic_iota"(%s) {iota_dimension = 1 : i64} : (tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}`,
			args: []Value{i64(2, 3)},
			dims: shpDims(2, 3), want: []float64{0, 1, 2, 0, 1, 2},
		},
		{
			name: "dynamic_iota dim 0, ui8",
			src: `func.func @main(%s: tensor<2xi64>) -> tensor<3x2xui8> {
  %0 = "stablehlo.dynamic_iota"(%s) {iota_dimension = 0 : i64} : (tensor<2xi64>) -> tensor<3x2xui8>
  return %0 : tensor<3x2xui8>
}`,
			args: []Value{i64(3, 2)},
			dims: shpDims(3, 2), want: []float64{0, 0, 1, 1, 2, 2},
		},
		{
			// Empty, however large the other dims (it was refused as too
			// large to hold).
			name: "dynamic_iota without elements",
			src: `func.func @main(%s: tensor<3xi64>) -> tensor<4294967296x4294967296x0xi32> {
  %0 = "stablehlo.dynamic_iota"(%s) {iota_dimension = 0 : i64} : (tensor<3xi64>) -> tensor<4294967296x4294967296x0xi32>
  return %0 : tensor<4294967296x4294967296x0xi32>
}`,
			args: []Value{i64(4294967296, 4294967296, 0)},
			dims: shpDims(4294967296, 4294967296, 0), want: []float64{},
		},
		{
			name: "dynamic_pad",
			src: `func.func @main(%a: tensor<3xi32>, %p: tensor<i32>, %lo: tensor<1xi64>, %hi: tensor<1xi64>, %in: tensor<1xi64>) -> tensor<6xi32> {
  %0 = "stablehlo.dynamic_pad"(%a, %p, %lo, %hi, %in) : (tensor<3xi32>, tensor<i32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<6xi32>
  return %0 : tensor<6xi32>
}`,
			args: []Value{shpT(xla.Int32, shpDims(3), 1, 2, 3), shpT(xla.Int32, nil, 0), i64(-1), i64(2), i64(1)},
			dims: shpDims(6), want: []float64{0, 2, 0, 3, 0, 0},
		},
		{
			name: "dynamic_reshape",
			src: `func.func @main(%a: tensor<2x3xi32>, %s: tensor<2xi32>) -> tensor<3x2xi32> {
  %0 = "stablehlo.dynamic_reshape"(%a, %s) : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}`,
			args: []Value{shpIota(xla.Int32, shpDims(2, 3), 1), shpT(xla.Int32, shpDims(2), 3, 2)},
			dims: shpDims(3, 2), want: []float64{1, 2, 3, 4, 5, 6},
		},
		{
			name: "real_dynamic_slice",
			src: `func.func @main(%a: tensor<6xi32>, %b: tensor<1xi64>, %e: tensor<1xi64>, %s: tensor<1xi64>) -> tensor<2xi32> {
  %0 = "stablehlo.real_dynamic_slice"(%a, %b, %e, %s) : (tensor<6xi32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}`,
			args: []Value{shpIota(xla.Int32, shpDims(6), 0), i64(1), i64(5), i64(3)},
			dims: shpDims(2), want: []float64{1, 4},
		},
	})
}

func TestDynamicOpsErrors(t *testing.T) {
	cases := []struct {
		name, src string
		args      []Value
		want      string
	}{
		{"reshape size", `func.func @main(%a: tensor<2x3xi32>, %s: tensor<2xi32>) -> tensor<3x2xi32> {
  %0 = "stablehlo.dynamic_reshape"(%a, %s) : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}`, []Value{shpIota(xla.Int32, shpDims(2, 3), 1), shpT(xla.Int32, shpDims(2), 3, 3)}, "declared"},
		{"broadcast shape disagrees with the result type", `func.func @main(%a: tensor<3xi32>, %s: tensor<1xi64>) -> tensor<3xi32> {
  %0 = "stablehlo.dynamic_broadcast_in_dim"(%a, %s) {broadcast_dimensions = array<i64: 0>} : (tensor<3xi32>, tensor<1xi64>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}`, []Value{shpIota(xla.Int32, shpDims(3), 1), shpT(xla.Int64, shpDims(1), 4)}, "declared"},
		{"negative iota size", `func.func @main(%s: tensor<1xi64>) -> tensor<3xi32> {
  %0 = "stablehlo.dynamic_iota"(%s) {iota_dimension = 0 : i64} : (tensor<1xi64>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}`, []Value{shpT(xla.Int64, shpDims(1), -3)}, "negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, shpRunErr(t, c.src, c.args...), c.want)
		})
	}
}
