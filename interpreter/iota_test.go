package interpreter

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func TestIota(t *testing.T) {
	tests := []struct {
		dim  int
		typ  string
		want []any
	}{
		{0, "tensor<4x5xi32>", []any{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3}},
		{1, "tensor<4x5xi32>", []any{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4}},
		{1, "tensor<2x3x2xi64>", []any{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}},
		{0, "tensor<3xf32>", []any{0.0, 1.0, 2.0}},
		{0, "tensor<10xi4>", []any{0, 1, 2, 3, 4, 5, 6, 7, -8, -7}},
		{0, "tensor<5xui2>", []any{0, 1, 2, 3, 0}},
		{0, "tensor<300xui8>", nil},
		{0, "tensor<20xf8E4M3FN>", []any{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 16.0, 18.0, 20.0}},
		{0, "tensor<2xcomplex<f32>>", []any{0i, 1 + 0i}},
		{0, "tensor<2xcomplex<f64>>", []any{0i, 1 + 0i}},
		{0, "tensor<3xbf16>", []any{0.0, 1.0, 2.0}},
		{0, "tensor<2xf64>", []any{0.0, 1.0}},
		{0, "tensor<2xui64>", []any{0, 1}},
		{0, "tensor<2xi16>", []any{0, 1}},
		{0, "tensor<2xui16>", []any{0, 1}},
		{0, "tensor<2xui32>", []any{0, 1}},
		{0, "tensor<2xi8>", []any{0, 1}},
		{1, "tensor<0x3xi32>", []any{}},
		{0, "tensor<3x0xi32>", []any{}},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			out := ewtRunConst(t, "stablehlo.iota", "iota_dimension = "+strconv.Itoa(tt.dim)+" : i64", tt.typ)
			if tt.want == nil { // ui8 wraps after 255
				d := out.Data.([]uint8)
				assert.Equal(t, uint8(255), d[255])
				assert.Equal(t, uint8(0), d[256])
				assert.Equal(t, uint8(43), d[299])
				return
			}
			ewtCheck(t, out, 0, tt.want, tt.typ)
		})
	}
}

func TestIotaErrors(t *testing.T) {
	dim := func(v int64) []stablehlo.NamedAttr {
		return []stablehlo.NamedAttr{{Name: "iota_dimension", Value: stablehlo.IntAttr{Value: v, Type: xla.Int64}}}
	}
	tests := []struct {
		name   string
		attrs  []stablehlo.NamedAttr
		result stablehlo.Type
		want   string
	}{
		{"out of range", dim(2), stablehlo.Tensor(xla.Int32, 2, 3), "iota_dimension 2 is out of range"},
		{"negative", dim(-1), stablehlo.Tensor(xla.Int32, 2), "iota_dimension -1 is out of range"},
		{"scalar", dim(0), stablehlo.Tensor(xla.Int32), "out of range"},
		{"bool", dim(0), stablehlo.Tensor(xla.Bool, 2), "iota of i1 is not supported"},
		{"no dimension", nil, stablehlo.Tensor(xla.Int32, 2), "iota_dimension must be an integer"},
		{"dynamic", dim(0), stablehlo.Tensor(xla.Int32, stablehlo.DynamicDim), "dynamic shape"},
		{"huge", dim(0), stablehlo.Tensor(xla.Int32, 1<<40), "is too large"},
		{"overflowing size", dim(0), stablehlo.Tensor(xla.Int8, 1<<32, 1<<32, 1<<32), "is too large"},
	}
	for _, tt := range tests {
		_, err := ewtKernel("stablehlo.iota", tt.attrs, tt.result)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
}
