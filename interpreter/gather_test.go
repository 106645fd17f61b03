package interpreter

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halo-ml/halo/xla"
)

func shpGatherSrc(opTy, idxTy, outTy, dn, sizes string) string {
	return fmt.Sprintf(`func.func @main(%%a: %s, %%i: %s) -> %s {
  %%0 = "stablehlo.gather"(%%a, %%i) {dimension_numbers = #stablehlo.gather<%s>, slice_sizes = array<i64: %s>, indices_are_sorted = false} : (%s, %s) -> %s
  return %%0 : %s
}`, opTy, idxTy, outTy, dn, sizes, opTy, idxTy, outTy, outTy)
}

func TestGather(t *testing.T) {
	i32, i64 := xla.Int32, xla.Int64
	shpRunCases(t, []shpTestCase{
		{
			name: "spec example",
			src: shpGatherSrc("tensor<3x4x2xi32>", "tensor<2x3x2xi64>", "tensor<2x3x2x2xi32>",
				"offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2", "1, 2, 2"),
			args: []Value{shpIota(i32, shpDims(3, 4, 2), 1), shpT(i64, shpDims(2, 3, 2), 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 2)},
			dims: shpDims(2, 3, 2, 2),
			want: []float64{
				1, 2, 3, 4, 3, 4, 5, 6, 13, 14, 15, 16,
				9, 10, 11, 12, 11, 12, 13, 14, 17, 18, 19, 20,
			},
		},
		{
			name: "batching dims (spec example, index [0, 9] clamped)",
			src: shpGatherSrc("tensor<2x3x4x2xi32>", "tensor<2x2x3x2xi64>", "tensor<2x2x3x2x2xi32>",
				"offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1], start_index_map = [2, 1], index_vector_dim = 3", "1, 1, 2, 2"),
			args: []Value{shpIota(i32, shpDims(2, 3, 4, 2), 1), shpT(i64, shpDims(2, 2, 3, 2),
				0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9,
				0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0)},
			dims: shpDims(2, 2, 3, 2, 2),
			want: []float64{
				1, 2, 3, 4, 3, 4, 5, 6, 13, 14, 15, 16,
				33, 34, 35, 36, 35, 36, 37, 38, 41, 42, 43, 44,
				1, 2, 3, 4, 13, 14, 15, 16, 21, 22, 23, 24,
				43, 44, 45, 46, 33, 34, 35, 36, 27, 28, 29, 30,
			},
		},
		{
			// Rows of a table (embedding lookup) with implicit index vectors
			// (index_vector_dim = rank) and out-of-range indices clamped.
			name: "row lookup with clamping",
			src: shpGatherSrc("tensor<4x3xf32>", "tensor<5xi32>", "tensor<5x3xf32>",
				"offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1", "1, 3"),
			args: []Value{shpIota(xla.Float32, shpDims(4, 3), 0), shpT(i32, shpDims(5), 2, -1, 7, 0, 3)},
			dims: shpDims(5, 3),
			want: []float64{6, 7, 8, 0, 1, 2, 9, 10, 11, 0, 1, 2, 9, 10, 11},
		},
		{
			// Offset dims before the batch dims; a window not collapsed.
			name: "offset dims first",
			src: shpGatherSrc("tensor<3x3xi32>", "tensor<2x1xi32>", "tensor<3x2x2xi32>",
				"offset_dims = [0, 1], start_index_map = [1], index_vector_dim = 1", "3, 2"),
			args: []Value{shpIota(i32, shpDims(3, 3), 0), shpT(i32, shpDims(2, 1), 0, 2)},
			dims: shpDims(3, 2, 2),
			// window [3x2] from column c: out[r][w][b] = a[r][c_b + w]; c = 0, then 2 clamped to 1.
			want: []float64{0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8},
		},
		{
			name: "scalar gather of every element (full index vectors)",
			src: shpGatherSrc("tensor<2x2xi32>", "tensor<3x2xui8>", "tensor<3xi32>",
				"collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1", "1, 1"),
			args: []Value{shpIota(i32, shpDims(2, 2), 10), shpT(xla.Uint8, shpDims(3, 2), 1, 1, 0, 1, 255, 0)},
			dims: shpDims(3), want: []float64{13, 11, 12},
		},
		{
			name: "empty indices",
			src: shpGatherSrc("tensor<4x3xf32>", "tensor<0x1xi32>", "tensor<0x3xf32>",
				"offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1", "1, 3"),
			args: []Value{shpIota(xla.Float32, shpDims(4, 3), 0), shpT(i32, shpDims(0, 1))},
			dims: shpDims(0, 3), want: []float64{},
		},
	})
}

func shpScatterSrc(inTy, idxTy, updTy, et, dn, body string) string {
	return fmt.Sprintf(`func.func @main(%%a: %s, %%i: %s, %%u: %s) -> %s {
  %%0 = "stablehlo.scatter"(%%a, %%i, %%u) ({
  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):
    %s
  }) {scatter_dimension_numbers = #stablehlo.scatter<%s>, indices_are_sorted = false, unique_indices = false} : (%s, %s, %s) -> %s
  return %%0 : %s
}`, inTy, idxTy, updTy, inTy, et, et, body, dn, inTy, idxTy, updTy, inTy, inTy)
}

func shpAddBody(op, et string) string {
	return fmt.Sprintf(`%%s = "%s"(%%x, %%y) : (tensor<%s>, tensor<%s>) -> tensor<%s>
    "stablehlo.return"(%%s) : (tensor<%s>) -> ()`, op, et, et, et, et)
}

func TestScatter(t *testing.T) {
	i64 := xla.Int64
	ones := func(dims ...int64) *Tensor {
		n := xla.MakeShape(i64, dims...).Size()
		v := make([]float64, n)
		for i := range v {
			v[i] = 1
		}
		return shpT(i64, dims, v...)
	}
	for _, op := range []string{"stablehlo.add", "shptest.add"} {
		shpRunCases(t, []shpTestCase{
			{
				name: "spec example " + op,
				src: shpScatterSrc("tensor<3x4x2xi64>", "tensor<2x3x2xi64>", "tensor<2x3x2x2xi64>", "i64",
					"update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2",
					shpAddBody(op, "i64")),
				args: []Value{shpIota(i64, shpDims(3, 4, 2), 1), shpT(i64, shpDims(2, 3, 2), 0, 2, 1, 0, 2, 1, 0, 1, 1, 0, 2, 0), ones(2, 3, 2, 2)},
				dims: shpDims(3, 4, 2),
				want: []float64{1, 2, 5, 6, 8, 9, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 21, 22, 23, 24},
			},
			{
				name: "batching dims (spec example, index [0, 9] skipped) " + op,
				src: shpScatterSrc("tensor<2x3x4x2xi64>", "tensor<2x2x3x2xi64>", "tensor<2x2x3x2x2xi64>", "i64",
					"update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3",
					shpAddBody(op, "i64")),
				args: []Value{shpIota(i64, shpDims(2, 3, 4, 2), 1), shpT(i64, shpDims(2, 2, 3, 2),
					0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9,
					0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0), ones(2, 2, 3, 2, 2)},
				dims: shpDims(2, 3, 4, 2),
				want: []float64{
					3, 4, 6, 7, 6, 7, 7, 8,
					9, 10, 11, 12, 15, 16, 17, 18,
					17, 18, 19, 20, 22, 23, 24, 25,
					25, 26, 28, 29, 30, 31, 31, 32,
					35, 36, 38, 39, 38, 39, 39, 40,
					41, 42, 44, 45, 46, 47, 47, 48,
				},
			},
			{
				// Out-of-bounds updates are skipped element by element; the
				// in-bounds part of a window is applied.
				name: "out of bounds " + op,
				src: shpScatterSrc("tensor<5xi64>", "tensor<4x1xi32>", "tensor<4x2xi64>", "i64",
					"update_window_dims = [1], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
					shpAddBody(op, "i64")),
				args: []Value{shpT(i64, shpDims(5), 0, 0, 0, 0, 0), shpT(xla.Int32, shpDims(4, 1), -1, 3, 4, 10),
					shpT(i64, shpDims(4, 2), 1, 2, 10, 20, 100, 200, 1000, 2000)},
				dims: shpDims(5), want: []float64{2, 0, 0, 10, 120},
			},
		})
	}
	shpRunCases(t, []shpTestCase{
		{
			// Replace with duplicate indices: the later update wins.
			name: "replace",
			src: shpScatterSrc("tensor<4xf32>", "tensor<3xi32>", "tensor<3xf32>", "f32",
				"inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
				`"stablehlo.return"(%y) : (tensor<f32>) -> ()`),
			args: []Value{shpT(xla.Float32, shpDims(4), 1, 2, 3, 4), shpT(xla.Int32, shpDims(3), 2, 0, 2), shpT(xla.Float32, shpDims(3), 7, 8, 9)},
			dims: shpDims(4), want: []float64{8, 2, 9, 4},
		},
		{
			name: "max into bf16",
			src: shpScatterSrc("tensor<3xbf16>", "tensor<2x1xi32>", "tensor<2xbf16>", "bf16",
				"inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
				shpAddBody("stablehlo.maximum", "bf16")),
			args: []Value{shpT(xla.BFloat16, shpDims(3), 1, 5, 3), shpT(xla.Int32, shpDims(2, 1), 0, 1), shpT(xla.BFloat16, shpDims(2), 4, 4)},
			dims: shpDims(3), want: []float64{4, 5, 3},
		},
		{
			name: "general region: keep the old value",
			src: shpScatterSrc("tensor<3xi32>", "tensor<1x1xi32>", "tensor<1xi32>", "i32",
				"inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
				`"stablehlo.return"(%x) : (tensor<i32>) -> ()`),
			args: []Value{shpT(xla.Int32, shpDims(3), 1, 2, 3), shpT(xla.Int32, shpDims(1, 1), 1), shpT(xla.Int32, shpDims(1), 9)},
			dims: shpDims(3), want: []float64{1, 2, 3},
		},
	})
}

// Two inputs scattered together with a general region (sum of the first,
// product of the second).
func TestScatterVariadic(t *testing.T) {
	src := `func.func @main(%a: tensor<3xi32>, %b: tensor<3xf32>, %i: tensor<2x1xi32>, %u: tensor<2xi32>, %v: tensor<2xf32>) -> (tensor<3xi32>, tensor<3xf32>) {
  %r:2 = "stablehlo.scatter"(%a, %b, %i, %u, %v) ({
  ^bb0(%x: tensor<i32>, %y: tensor<f32>, %p: tensor<i32>, %q: tensor<f32>):
    %s = "shptest.add"(%x, %p) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %m = "shptest.mul"(%y, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s, %m) : (tensor<i32>, tensor<f32>) -> ()
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<3xi32>, tensor<3xf32>, tensor<2x1xi32>, tensor<2xi32>, tensor<2xf32>) -> (tensor<3xi32>, tensor<3xf32>)
  return %r#0, %r#1 : tensor<3xi32>, tensor<3xf32>
}`
	out := shpRun(t, src, shpT(xla.Int32, shpDims(3), 1, 2, 3), shpT(xla.Float32, shpDims(3), 1, 2, 3),
		shpT(xla.Int32, shpDims(2, 1), 2, 2), shpT(xla.Int32, shpDims(2), 10, 20), shpT(xla.Float32, shpDims(2), 2, 5))
	assert.Equal(t, []float64{1, 2, 33}, shpVals(out[0]))
	assert.Equal(t, []float64{1, 2, 30}, shpVals(out[1]))
}

func TestTorchIndexSelectAndDynamicGather(t *testing.T) {
	shpRunCases(t, []shpTestCase{
		{
			name: "torch_index_select",
			src: `func.func @main(%a: tensor<3x2xi32>, %i: tensor<2xi32>) -> tensor<2x2xi32> {
  %0 = "stablehlo.torch_index_select"(%a, %i) {dim = 0 : i64, batch_dims = 0 : i64} : (tensor<3x2xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}`,
			args: []Value{shpIota(xla.Int32, shpDims(3, 2), 1), shpT(xla.Int32, shpDims(2), 2, 0)},
			dims: shpDims(2, 2), want: []float64{5, 6, 1, 2},
		},
		{
			name: "torch_index_select with a batch dim",
			src: `func.func @main(%a: tensor<2x3xi32>, %i: tensor<2x2xi32>) -> tensor<2x2xi32> {
  %0 = "stablehlo.torch_index_select"(%a, %i) {dim = 1 : i64, batch_dims = 1 : i64} : (tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}`,
			args: []Value{shpIota(xla.Int32, shpDims(2, 3), 1), shpT(xla.Int32, shpDims(2, 2), 2, 0, 1, 1)},
			dims: shpDims(2, 2), want: []float64{3, 1, 5, 5},
		},
		{
			name: "dynamic_gather",
			src: `func.func @main(%a: tensor<4x3xf32>, %i: tensor<2xi32>, %s: tensor<2xi32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.dynamic_gather"(%a, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<4x3xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}`,
			args: []Value{shpIota(xla.Float32, shpDims(4, 3), 0), shpT(xla.Int32, shpDims(2), 3, 1), shpT(xla.Int32, shpDims(2), 1, 3)},
			dims: shpDims(2, 3), want: []float64{9, 10, 11, 3, 4, 5},
		},
	})
}

func TestGatherScatterErrors(t *testing.T) {
	cases := []struct {
		name, src string
		args      []Value
		want      string
	}{
		{"gather slice size too large", shpGatherSrc("tensor<4x3xf32>", "tensor<2xi32>", "tensor<2x5xf32>",
			"offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1", "1, 5"),
			[]Value{shpIota(xla.Float32, shpDims(4, 3), 0), shpT(xla.Int32, shpDims(2), 0, 1)}, "slice_sizes[1]"},
		{"gather bad start_index_map", shpGatherSrc("tensor<4x3xf32>", "tensor<2xi32>", "tensor<2x3xf32>",
			"offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [5], index_vector_dim = 1", "1, 3"),
			[]Value{shpIota(xla.Float32, shpDims(4, 3), 0), shpT(xla.Int32, shpDims(2), 0, 1)}, "start_index_map"},
		{"gather collapsed window of 2", shpGatherSrc("tensor<4x3xf32>", "tensor<2xi32>", "tensor<2x3xf32>",
			"offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1", "2, 3"),
			[]Value{shpIota(xla.Float32, shpDims(4, 3), 0), shpT(xla.Int32, shpDims(2), 0, 1)}, "at most 1"},
		{"gather result type", shpGatherSrc("tensor<4x3xf32>", "tensor<2xi32>", "tensor<2x2xf32>",
			"offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1", "1, 3"),
			[]Value{shpIota(xla.Float32, shpDims(4, 3), 0), shpT(xla.Int32, shpDims(2), 0, 1)}, "declared"},
		{"scatter updates shape", shpScatterSrc("tensor<4xf32>", "tensor<3xi32>", "tensor<2xf32>", "f32",
			"inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
			`"stablehlo.return"(%y) : (tensor<f32>) -> ()`),
			[]Value{shpIota(xla.Float32, shpDims(4), 0), shpT(xla.Int32, shpDims(3), 0, 1, 2), shpT(xla.Float32, shpDims(2), 0, 1)}, "do not match"},
		{"scatter window dims", shpScatterSrc("tensor<4xf32>", "tensor<3xi32>", "tensor<3xf32>", "f32",
			"scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
			`"stablehlo.return"(%y) : (tensor<f32>) -> ()`),
			[]Value{shpIota(xla.Float32, shpDims(4), 0), shpT(xla.Int32, shpDims(3), 0, 1, 2), shpT(xla.Float32, shpDims(3), 0, 1, 2)}, "do not add up"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, shpRunErr(t, c.src, c.args...), c.want)
		})
	}
}

// A collapsed dimension with slice size 0 reads the element at its
// (clamped) start, as the spec's reference interpreter does (it gave
// zeros); torch_index_select takes negative dim and batch_dims, counted
// from the end as in PyTorch (they were out of range).
func TestGatherEdgeForms(t *testing.T) {
	a := NewTensor(xla.MakeShape(xla.Int32, 3, 4))
	for i := range a.Data.([]int32) {
		a.Data.([]int32)[i] = int32(i + 1)
	}
	src := `func.func @main(%a: tensor<3x4xi32>, %i: tensor<1xi32>) -> tensor<4xi32> {
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>, slice_sizes = array<i64: 0, 4>} : (tensor<3x4xi32>, tensor<1xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}`
	for start, want := range map[int32][]int32{1: {5, 6, 7, 8}, 7: {9, 10, 11, 12}} {
		i := NewTensor(xla.MakeShape(xla.Int32, 1))
		i.Data.([]int32)[0] = start
		assert.Equal(t, want, shpRun(t, src, a, i)[0].(*Tensor).Data, "start %d", start)
	}

	op := NewTensor(xla.MakeShape(xla.Int32, 2, 2, 2))
	copy(op.Data.([]int32), []int32{100, 101, 110, 111, 200, 201, 210, 211})
	idx := NewTensor(xla.MakeShape(xla.Int32, 2, 2, 2))
	copy(idx.Data.([]int32), []int32{0, 1, 1, 0, 0, 0, 1, 1})
	sel := func(dim, bd int) string {
		return fmt.Sprintf(`func.func @main(%%a: tensor<2x2x2xi32>, %%i: tensor<2x2x2xi32>) -> tensor<2x2x2xi32> {
  %%0 = "stablehlo.torch_index_select"(%%a, %%i) {batch_dims = %d : i64, dim = %d : i64} : (tensor<2x2x2xi32>, tensor<2x2x2xi32>) -> tensor<2x2x2xi32>
  return %%0 : tensor<2x2x2xi32>
}`, bd, dim)
	}
	want := shpRun(t, sel(2, 2), op, idx)[0].(*Tensor).Data
	assert.Equal(t, []int32{100, 101, 111, 110, 200, 200, 211, 211}, want)
	assert.Equal(t, want, shpRun(t, sel(-1, -1), op, idx)[0].(*Tensor).Data)
}
