package interpreter

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// shpUnary wraps one generic op into a main function of one argument.
func shpUnary(in, out, op string) string {
	return fmt.Sprintf(`func.func @main(%%a: %s) -> %s {
  %%0 = %s : (%s) -> %s
  return %%0 : %s
}`, in, out, op, in, out, out)
}

type shpTestCase struct {
	name string
	src  string
	args []Value
	dims []int64
	want []float64
}

func shpRunCases(t *testing.T, cases []shpTestCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := shpRun(t, c.src, c.args...)
			require.Len(t, out, 1)
			got := out[0].(*Tensor)
			assert.Equal(t, append([]int64{}, c.dims...), append([]int64{}, got.Shape.Dims...), "dims")
			assert.Equal(t, c.want, shpVals(got))
		})
	}
}

func TestShapeOpsSpecExamples(t *testing.T) {
	i32 := xla.Int32
	shpRunCases(t, []shpTestCase{
		{
			name: "reshape",
			src:  shpUnary("tensor<2x3xi32>", "tensor<3x2xi32>", `"stablehlo.reshape"(%a)`),
			args: []Value{shpIota(i32, shpDims(2, 3), 1)},
			dims: shpDims(3, 2), want: []float64{1, 2, 3, 4, 5, 6},
		},
		{
			name: "transpose 3-D",
			src:  shpUnary("tensor<2x3x2xi32>", "tensor<2x3x2xi32>", `"stablehlo.transpose"(%a) {permutation = array<i64: 2, 1, 0>}`),
			args: []Value{shpIota(i32, shpDims(2, 3, 2), 1)},
			dims: shpDims(2, 3, 2), want: []float64{1, 7, 3, 9, 5, 11, 2, 8, 4, 10, 6, 12},
		},
		{
			name: "transpose 2-D",
			src:  shpUnary("tensor<2x3xi32>", "tensor<3x2xi32>", `"stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>}`),
			args: []Value{shpIota(i32, shpDims(2, 3), 1)},
			dims: shpDims(3, 2), want: []float64{1, 4, 2, 5, 3, 6},
		},
		{
			name: "broadcast_in_dim",
			src:  shpUnary("tensor<1x3xi32>", "tensor<2x3x2xi32>", `"stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 2, 1>}`),
			args: []Value{shpIota(i32, shpDims(1, 3), 1)},
			dims: shpDims(2, 3, 2), want: []float64{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3},
		},
		{
			name: "broadcast_in_dim scalar",
			src:  shpUnary("tensor<i32>", "tensor<2x2xi32>", `"stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64>}`),
			args: []Value{shpT(i32, nil, 7)},
			dims: shpDims(2, 2), want: []float64{7, 7, 7, 7},
		},
		{
			name: "broadcast (deprecated)",
			src:  shpUnary("tensor<2xi32>", "tensor<3x2xi32>", `"stablehlo.broadcast"(%a) {broadcast_sizes = array<i64: 3>}`),
			args: []Value{shpT(i32, shpDims(2), 1, 2)},
			dims: shpDims(3, 2), want: []float64{1, 2, 1, 2, 1, 2},
		},
		{
			name: "slice",
			src: shpUnary("tensor<3x4xi64>", "tensor<2x2xi64>",
				`"stablehlo.slice"(%a) {start_indices = array<i64: 1, 2>, limit_indices = array<i64: 3, 4>, strides = array<i64: 1, 1>}`),
			args: []Value{shpT(xla.Int64, shpDims(3, 4), 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1)},
			dims: shpDims(2, 2), want: []float64{1, 1, 1, 1},
		},
		{
			name: "slice with strides",
			src: shpUnary("tensor<3x5xi32>", "tensor<2x2xi32>",
				`"stablehlo.slice"(%a) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 3, 5>, strides = array<i64: 2, 3>}`),
			args: []Value{shpIota(i32, shpDims(3, 5), 0)},
			dims: shpDims(2, 2), want: []float64{1, 4, 11, 14},
		},
		{
			name: "reverse",
			src:  shpUnary("tensor<3x2xi32>", "tensor<3x2xi32>", `"stablehlo.reverse"(%a) {dimensions = array<i64: 1>}`),
			args: []Value{shpIota(i32, shpDims(3, 2), 1)},
			dims: shpDims(3, 2), want: []float64{2, 1, 4, 3, 6, 5},
		},
		{
			name: "reverse both",
			src:  shpUnary("tensor<3x2xi32>", "tensor<3x2xi32>", `"stablehlo.reverse"(%a) {dimensions = array<i64: 1, 0>}`),
			args: []Value{shpIota(i32, shpDims(3, 2), 1)},
			dims: shpDims(3, 2), want: []float64{6, 5, 4, 3, 2, 1},
		},
		{
			name: "pad",
			src: `func.func @main(%a: tensor<2x3xi32>, %p: tensor<i32>) -> tensor<5x9xi32> {
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 2, 1>, interior_padding = array<i64: 1, 2>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<5x9xi32>
  return %0 : tensor<5x9xi32>
}`,
			args: []Value{shpIota(i32, shpDims(2, 3), 1), shpT(i32, nil, 0)},
			dims: shpDims(5, 9),
			want: []float64{
				0, 1, 0, 0, 2, 0, 0, 3, 0,
				0, 0, 0, 0, 0, 0, 0, 0, 0,
				0, 4, 0, 0, 5, 0, 0, 6, 0,
				0, 0, 0, 0, 0, 0, 0, 0, 0,
				0, 0, 0, 0, 0, 0, 0, 0, 0,
			},
		},
		{
			// Interior padding first, then negative edge padding removes
			// [1, p, p, 2, p, p, 3] -> drop 2 at the front and 1 at the back.
			name: "pad negative edges",
			src: `func.func @main(%a: tensor<3xi32>, %p: tensor<i32>) -> tensor<4xi32> {
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: -2>, edge_padding_high = array<i64: -1>, interior_padding = array<i64: 2>} : (tensor<3xi32>, tensor<i32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}`,
			args: []Value{shpT(i32, shpDims(3), 1, 2, 3), shpT(i32, nil, 9)},
			dims: shpDims(4), want: []float64{9, 2, 9, 9},
		},
		{
			name: "pad everything away",
			src: `func.func @main(%a: tensor<2xi32>, %p: tensor<i32>) -> tensor<1xi32> {
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: -3>, edge_padding_high = array<i64: 2>, interior_padding = array<i64: 0>} : (tensor<2xi32>, tensor<i32>) -> tensor<1xi32>
  return %0 : tensor<1xi32>
}`,
			args: []Value{shpT(i32, shpDims(2), 1, 2), shpT(i32, nil, 5)},
			dims: shpDims(1), want: []float64{5},
		},
		{
			name: "concatenate",
			src: `func.func @main(%a: tensor<3x2xi64>, %b: tensor<1x2xi64>) -> tensor<4x2xi64> {
  %0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<3x2xi64>, tensor<1x2xi64>) -> tensor<4x2xi64>
  return %0 : tensor<4x2xi64>
}`,
			args: []Value{shpIota(xla.Int64, shpDims(3, 2), 1), shpT(xla.Int64, shpDims(1, 2), 7, 8)},
			dims: shpDims(4, 2), want: []float64{1, 2, 3, 4, 5, 6, 7, 8},
		},
		{
			name: "concatenate dim 1 with an empty input",
			src: `func.func @main(%a: tensor<2x1xi32>, %b: tensor<2x0xi32>, %c: tensor<2x2xi32>) -> tensor<2x3xi32> {
  %0 = "stablehlo.concatenate"(%a, %b, %c) {dimension = 1 : i64} : (tensor<2x1xi32>, tensor<2x0xi32>, tensor<2x2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}`,
			args: []Value{shpT(i32, shpDims(2, 1), 1, 4), shpT(i32, shpDims(2, 0)), shpT(i32, shpDims(2, 2), 2, 3, 5, 6)},
			dims: shpDims(2, 3), want: []float64{1, 2, 3, 4, 5, 6},
		},
		{
			name: "dynamic_slice clamps",
			src: `func.func @main(%a: tensor<4x4xi32>, %i: tensor<i64>, %j: tensor<i64>) -> tensor<2x2xi32> {
  %0 = "stablehlo.dynamic_slice"(%a, %i, %j) {slice_sizes = array<i64: 2, 2>} : (tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}`,
			args: []Value{
				shpT(i32, shpDims(4, 4), 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
				shpT(xla.Int64, nil, -1), shpT(xla.Int64, nil, 3),
			},
			dims: shpDims(2, 2), want: []float64{1, 1, 1, 1},
		},
		{
			name: "dynamic_slice unsigned indices",
			src: `func.func @main(%a: tensor<5xi32>, %i: tensor<ui8>) -> tensor<2xi32> {
  %0 = "stablehlo.dynamic_slice"(%a, %i) {slice_sizes = array<i64: 2>} : (tensor<5xi32>, tensor<ui8>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}`,
			args: []Value{shpIota(i32, shpDims(5), 0), shpT(xla.Uint8, nil, 200)},
			dims: shpDims(2), want: []float64{3, 4},
		},
		{
			name: "dynamic_update_slice clamps",
			src: `func.func @main(%a: tensor<4x4xi32>, %u: tensor<2x2xi32>, %i: tensor<i64>, %j: tensor<i64>) -> tensor<4x4xi32> {
  %0 = "stablehlo.dynamic_update_slice"(%a, %u, %i, %j) : (tensor<4x4xi32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}`,
			args: []Value{
				shpT(i32, shpDims(4, 4), 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
				shpT(i32, shpDims(2, 2), 1, 1, 1, 1),
				shpT(xla.Int64, nil, -1), shpT(xla.Int64, nil, 3),
			},
			dims: shpDims(4, 4), want: []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		},
		{
			name: "get_dimension_size",
			src:  shpUnary("tensor<2x3xi64>", "tensor<i32>", `"stablehlo.get_dimension_size"(%a) {dimension = 1 : i64}`),
			args: []Value{shpIota(xla.Int64, shpDims(2, 3), 1)},
			dims: shpDims(), want: []float64{3},
		},
	})
}

func TestShapeOpsEdgeCases(t *testing.T) {
	i32 := xla.Int32
	shpRunCases(t, []shpTestCase{
		{
			name: "rank-0 reshape to 1x1",
			src:  shpUnary("tensor<f32>", "tensor<1x1xf32>", `"stablehlo.reshape"(%a)`),
			args: []Value{shpT(xla.Float32, nil, 2.5)},
			dims: shpDims(1, 1), want: []float64{2.5},
		},
		{
			name: "rank-0 transpose",
			src:  shpUnary("tensor<i32>", "tensor<i32>", `"stablehlo.transpose"(%a) {permutation = array<i64>}`),
			args: []Value{shpT(i32, nil, 4)},
			dims: shpDims(), want: []float64{4},
		},
		{
			name: "zero-size transpose",
			src:  shpUnary("tensor<0x3xi32>", "tensor<3x0xi32>", `"stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>}`),
			args: []Value{shpT(i32, shpDims(0, 3))},
			dims: shpDims(3, 0), want: []float64{},
		},
		{
			name: "zero-size broadcast",
			src:  shpUnary("tensor<1xi32>", "tensor<0x4xi32>", `"stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 1>}`),
			args: []Value{shpT(i32, shpDims(1), 3)},
			dims: shpDims(0, 4), want: []float64{},
		},
		{
			name: "empty slice",
			src: shpUnary("tensor<3xi32>", "tensor<0xi32>",
				`"stablehlo.slice"(%a) {start_indices = array<i64: 2>, limit_indices = array<i64: 2>, strides = array<i64: 1>}`),
			args: []Value{shpIota(i32, shpDims(3), 0)},
			dims: shpDims(0), want: []float64{},
		},
		{
			name: "dynamic_slice of size 0",
			src: `func.func @main(%a: tensor<3xi32>, %i: tensor<i32>) -> tensor<0xi32> {
  %0 = "stablehlo.dynamic_slice"(%a, %i) {slice_sizes = array<i64: 0>} : (tensor<3xi32>, tensor<i32>) -> tensor<0xi32>
  return %0 : tensor<0xi32>
}`,
			args: []Value{shpIota(i32, shpDims(3), 0), shpT(i32, nil, 100)},
			dims: shpDims(0), want: []float64{},
		},
		{
			name: "pad an empty operand",
			src: `func.func @main(%a: tensor<0xi32>, %p: tensor<i32>) -> tensor<3xi32> {
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 2>, interior_padding = array<i64: 5>} : (tensor<0xi32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}`,
			args: []Value{shpT(i32, shpDims(0)), shpT(i32, nil, 8)},
			dims: shpDims(3), want: []float64{8, 8, 8},
		},
	})
}

// Every element type moves through the shape kernels (narrow floats, sub-byte
// integers, booleans and complex numbers included).
func TestShapeOpsEveryDType(t *testing.T) {
	for _, dt := range xla.AllDTypes() {
		if StorageOf(dt) == StorageInvalid || dt == xla.Int1 { // i1 is spelled as the boolean type
			continue
		}
		t.Run(dt.String(), func(t *testing.T) {
			ty := func(dims string) string { return "tensor<" + dims + dt.String() + ">" }
			src := fmt.Sprintf(`func.func @main(%%a: %s) -> %s {
  %%0 = "stablehlo.transpose"(%%a) {permutation = array<i64: 1, 0>} : (%s) -> %s
  %%1 = "stablehlo.reverse"(%%0) {dimensions = array<i64: 0>} : (%s) -> %s
  %%2 = "stablehlo.slice"(%%1) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 3, 2>, strides = array<i64: 1, 1>} : (%s) -> %s
  %%3 = "stablehlo.concatenate"(%%2, %%2) {dimension = 0 : i64} : (%s, %s) -> %s
  return %%3 : %s
}`, ty("2x3x"), ty("4x2x"), ty("2x3x"), ty("3x2x"), ty("3x2x"), ty("3x2x"), ty("3x2x"), ty("2x2x"), ty("2x2x"), ty("2x2x"), ty("4x2x"), ty("4x2x"))
			// Two values every type can hold: 0 and 1 (1 and 2 for f8E8M0FNU,
			// which has no zero).
			z, o := 0.0, 1.0
			if dt == xla.Float8E8M0FNU {
				z, o = 1, 2
			}
			in := shpT(dt, shpDims(2, 3), z, o, z, o, o, z)
			out := shpRun(t, src, in)
			// transpose: [[z,o],[o,o],[z,z]]; reverse rows: [[z,z],[o,o],[z,o]];
			// slice rows 1..3: [[o,o],[z,o]]; concatenated twice.
			assert.Equal(t, []float64{o, o, z, o, o, o, z, o}, shpVals(out[0]))
			assert.Equal(t, dt, out[0].(*Tensor).Shape.DType)
		})
	}
}

func TestShapeOpsErrors(t *testing.T) {
	cases := []struct {
		name, src string
		args      []Value
		want      string
	}{
		{"bad permutation", shpUnary("tensor<2x3xi32>", "tensor<3x2xi32>", `"stablehlo.transpose"(%a) {permutation = array<i64: 1, 1>}`),
			[]Value{shpIota(xla.Int32, shpDims(2, 3), 0)}, "permutation"},
		{"reshape size", shpUnary("tensor<2x3xi32>", "tensor<4xi32>", `"stablehlo.reshape"(%a)`),
			[]Value{shpIota(xla.Int32, shpDims(2, 3), 0)}, "cannot reshape"},
		{"slice out of range", shpUnary("tensor<3xi32>", "tensor<2xi32>",
			`"stablehlo.slice"(%a) {start_indices = array<i64: 2>, limit_indices = array<i64: 4>, strides = array<i64: 1>}`),
			[]Value{shpIota(xla.Int32, shpDims(3), 0)}, "out of range"},
		{"slice result type", shpUnary("tensor<3xi32>", "tensor<3xi32>",
			`"stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 2>, strides = array<i64: 1>}`),
			[]Value{shpIota(xla.Int32, shpDims(3), 0)}, "declared"},
		{"broadcast size", shpUnary("tensor<2xi32>", "tensor<3x3xi32>", `"stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 1>}`),
			[]Value{shpIota(xla.Int32, shpDims(2), 0)}, "cannot broadcast"},
		{"broadcast dims kind", shpUnary("tensor<2xi32>", "tensor<2xi32>", `"stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = "x"}`),
			[]Value{shpIota(xla.Int32, shpDims(2), 0)}, "broadcast_dimensions"},
		{"reverse dim", shpUnary("tensor<2xi32>", "tensor<2xi32>", `"stablehlo.reverse"(%a) {dimensions = array<i64: 3>}`),
			[]Value{shpIota(xla.Int32, shpDims(2), 0)}, "out of range"},
		{"dynamic_slice size", `func.func @main(%a: tensor<3xi32>, %i: tensor<i32>) -> tensor<4xi32> {
  %0 = "stablehlo.dynamic_slice"(%a, %i) {slice_sizes = array<i64: 4>} : (tensor<3xi32>, tensor<i32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}`, []Value{shpIota(xla.Int32, shpDims(3), 0), shpT(xla.Int32, nil, 0)}, "slice_sizes"},
		{"pad negative interior", `func.func @main(%a: tensor<3xi32>, %p: tensor<i32>) -> tensor<3xi32> {
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: 0>, interior_padding = array<i64: -1>} : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}`, []Value{shpIota(xla.Int32, shpDims(3), 0), shpT(xla.Int32, nil, 0)}, "negative"},
		{"concatenate shapes", `func.func @main(%a: tensor<2x2xi32>, %b: tensor<2x3xi32>) -> tensor<4x2xi32> {
  %0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<2x2xi32>, tensor<2x3xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}`, []Value{shpIota(xla.Int32, shpDims(2, 2), 0), shpIota(xla.Int32, shpDims(2, 3), 0)}, "incompatible"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, shpRunErr(t, c.src, c.args...), c.want)
		})
	}
}

// Ops large enough to be split across cores give the results of plain Go
// loops (transpose, row and column sums and maxima).
func TestLargeOpsSplitAcrossCores(t *testing.T) {
	const n = 512 // 262,144 elements: above the split threshold
	a := shpIota(xla.Float32, shpDims(n, n), 0)
	d := a.Data.([]float32)
	tr := shpRun(t, shpUnary("tensor<512x512xf32>", "tensor<512x512xf32>", `"stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>}`), a)
	got := tr[0].(*Tensor).Data.([]float32)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			if got[c*n+r] != d[r*n+c] {
				t.Fatalf("transpose[%d][%d] = %v, want %v", c, r, got[c*n+r], d[r*n+c])
			}
		}
	}
	for _, c := range []struct {
		body, dims string
		want       func(i int) float32
	}{
		{"stablehlo.add", "1", func(i int) float32 {
			s := float32(0)
			for _, v := range d[i*n : (i+1)*n] {
				s += v
			}
			return s
		}},
		{"stablehlo.maximum", "0", func(i int) float32 { return d[(n-1)*n+i] }},
		{"stablehlo.add", "0", func(i int) float32 {
			s := float32(0)
			for r := 0; r < n; r++ {
				s += d[r*n+i]
			}
			return s
		}},
	} {
		out := shpRun(t, shpReduceSrc("tensor<512x512xf32>", "f32", "tensor<512xf32>", c.dims, c.body), a, shpT(xla.Float32, nil, 0))
		g := out[0].(*Tensor).Data.([]float32)
		for i := range g {
			if g[i] != c.want(i) {
				t.Fatalf("%s over %s: element %d = %v, want %v", c.body, c.dims, i, g[i], c.want(i))
			}
		}
	}
}
