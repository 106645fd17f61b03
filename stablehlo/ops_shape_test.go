package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

func TestShapeOps(t *testing.T) {
	cases := []opCase{
		{name: "broadcast_in_dim", op: "stablehlo.broadcast_in_dim", args: []Type{i32(1, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.BroadcastInDim(a[0], []int64{2, 3, 2}, []int64{2, 1})
			},
			want: i32(2, 3, 2)},
		{name: "broadcast_in_dim/scalar", op: "stablehlo.broadcast_in_dim", args: []Type{f32()},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.BroadcastInDim(a[0], []int64{4, 5}, nil) },
			want:  f32(4, 5)},
		{name: "broadcast_in_dim/size", op: "stablehlo.broadcast_in_dim", args: []Type{i32(2, 3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.BroadcastInDim(a[0], []int64{4, 3}, []int64{0, 1}) },
			wantErr: "operand dimension 0 (2) cannot broadcast to result dimension 0 (4)"},
		{name: "broadcast_in_dim/rank", op: "stablehlo.broadcast_in_dim", args: []Type{i32(2, 3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.BroadcastInDim(a[0], []int64{2, 3}, []int64{0}) },
			wantErr: "broadcast_dimensions has 1 entries, operand rank is 2"},
		{name: "broadcast_in_dim/out-of-range", op: "stablehlo.broadcast_in_dim", args: []Type{i32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.BroadcastInDim(a[0], []int64{2, 3}, []int64{2}) },
			wantErr: "dimension 2 out of range [0, 2)"},
		{name: "broadcast_in_dim/repeated", op: "stablehlo.broadcast_in_dim", args: []Type{i32(3, 3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.BroadcastInDim(a[0], []int64{3, 3}, []int64{1, 1}) },
			wantErr: "dimension 1 repeated"},
		{name: "broadcast_to", op: "stablehlo.broadcast_in_dim", args: []Type{f32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.BroadcastTo(a[0], 2, 3) }, want: f32(2, 3)},
		{name: "broadcast", op: "stablehlo.broadcast", args: []Type{i32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Broadcast(a[0], 1, 2) }, want: i32(1, 2, 3)},
		{name: "reshape", op: "stablehlo.reshape", args: []Type{f32(2, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Reshape(a[0], 3, 1, 2) }, want: f32(3, 1, 2)},
		{name: "reshape/to-scalar", op: "stablehlo.reshape", args: []Type{f32(1, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Reshape(a[0]) }, want: f32()},
		{name: "reshape/count", op: "stablehlo.reshape", args: []Type{f32(2, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Reshape(a[0], 4, 2) }, wantErr: "cannot reshape 6 elements into [4 2]"},
		{name: "transpose", op: "stablehlo.transpose", args: []Type{i32(1, 2, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Transpose(a[0], 2, 1, 0) }, want: i32(3, 2, 1)},
		{name: "transpose/not-permutation", op: "stablehlo.transpose", args: []Type{i32(1, 2, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Transpose(a[0], 0, 0, 1) }, wantErr: "dimension 0 repeated"},
		{name: "transpose/rank", op: "stablehlo.transpose", args: []Type{i32(1, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Transpose(a[0], 0) }, wantErr: "does not match rank 2"},
		{name: "slice", op: "stablehlo.slice", args: []Type{i64(3, 8)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Slice(a[0], []int64{1, 4}, []int64{3, 8}, []int64{1, 2})
			},
			want: i64(2, 2)},
		{name: "slice/default-strides", op: "stablehlo.slice", args: []Type{i64(3, 8)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Slice(a[0], []int64{0, 1}, []int64{3, 8}, nil) },
			want:  i64(3, 7)},
		{name: "slice/limit", op: "stablehlo.slice", args: []Type{i64(3, 8)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Slice(a[0], []int64{0, 0}, []int64{4, 8}, nil) },
			wantErr: "dimension 0: need 0 <= start (0) <= limit (4) <= size (3)"},
		{name: "slice/stride", op: "stablehlo.slice", args: []Type{i64(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Slice(a[0], []int64{0}, []int64{3}, []int64{0}) },
			wantErr: "stride 0 must be > 0"},
		{name: "dynamic_slice", op: "stablehlo.dynamic_slice", args: []Type{i32(4, 4), i64(), i64()},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.DynamicSlice(a[0], a[1:], []int64{2, 2}) },
			want:  i32(2, 2)},
		{name: "dynamic_slice/index-count", op: "stablehlo.dynamic_slice", args: []Type{i32(4, 4), i64()},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.DynamicSlice(a[0], a[1:], []int64{2, 2}) },
			wantErr: "need 2 start indices, got 1"},
		{name: "dynamic_slice/index-type", op: "stablehlo.dynamic_slice", args: []Type{i32(4), f32()},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.DynamicSlice(a[0], a[1:], []int64{2}) },
			wantErr: "start index 0 must be an integer scalar"},
		{name: "dynamic_slice/size", op: "stablehlo.dynamic_slice", args: []Type{i32(4), i32()},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.DynamicSlice(a[0], a[1:], []int64{5}) },
			wantErr: "slice size 5 out of range [0, 4]"},
		{name: "dynamic_update_slice", op: "stablehlo.dynamic_update_slice", args: []Type{i32(4, 4), i32(2, 2), i64(), i64()},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.DynamicUpdateSlice(a[0], a[1], a[2:]) },
			want:  i32(4, 4)},
		{name: "dynamic_update_slice/too-big", op: "stablehlo.dynamic_update_slice", args: []Type{i32(4, 4), i32(5, 2), i64(), i64()},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.DynamicUpdateSlice(a[0], a[1], a[2:]) },
			wantErr: "update dimension 0 (5) exceeds operand (4)"},
		{name: "concatenate", op: "stablehlo.concatenate", args: []Type{i64(3, 2), i64(1, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Concatenate(0, a...) }, want: i64(4, 2)},
		{name: "concatenate/mismatch", op: "stablehlo.concatenate", args: []Type{i64(3, 2), i64(3, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Concatenate(0, a...) }, wantErr: "input 1 differs from input 0 in dimension 1"},
		{name: "concatenate/dim", op: "stablehlo.concatenate", args: []Type{i64(3, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Concatenate(2, a...) }, wantErr: "dimension 2 out of range"},
		{name: "concatenate/none", op: "stablehlo.concatenate",
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Concatenate(0) }, wantErr: "at least one input"},
		{name: "pad", op: "stablehlo.pad", args: []Type{i32(2, 3), i32()},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Pad(a[0], a[1], []int64{0, 1}, []int64{2, 1}, []int64{1, 2})
			}, want: i32(5, 9)},
		{name: "pad/negative", op: "stablehlo.pad", args: []Type{i32(4), i32()},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Pad(a[0], a[1], []int64{-1}, []int64{-2}, nil) },
			want:  i32(1)},
		{name: "pad/value-type", op: "stablehlo.pad", args: []Type{i32(4), f32()},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Pad(a[0], a[1], []int64{0}, []int64{0}, nil) },
			wantErr: "padding_value must be a scalar of the operand's element type"},
		{name: "pad/interior", op: "stablehlo.pad", args: []Type{i32(4), i32()},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Pad(a[0], a[1], []int64{0}, []int64{0}, []int64{-1}) },
			wantErr: "interior padding -1 must be >= 0"},
		{name: "reverse", op: "stablehlo.reverse", args: []Type{i32(3, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Reverse(a[0], 1) }, want: i32(3, 2)},
		{name: "reverse/dim", op: "stablehlo.reverse", args: []Type{i32(3, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Reverse(a[0], 2) }, wantErr: "out of range"},
		{name: "get_dimension_size", op: "stablehlo.get_dimension_size", args: []Type{i64(2, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.GetDimensionSize(a[0], 1) }, want: i32()},
		{name: "get_dimension_size/dim", op: "stablehlo.get_dimension_size", args: []Type{i64(2, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.GetDimensionSize(a[0], 2) }, wantErr: "dimension 2 out of range"},
		{name: "gather/spec-example", op: "stablehlo.gather", args: []Type{i64(2, 3, 4, 2), i64(2, 2, 3, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Gather(a[0], a[1], GatherDimensionNumbers{
					OffsetDims: []int64{3, 4}, CollapsedSliceDims: []int64{1}, OperandBatchingDims: []int64{0},
					StartIndicesBatchingDims: []int64{1}, StartIndexMap: []int64{2, 1}, IndexVectorDim: 3,
				}, []int64{1, 1, 2, 2}, false)
			}, want: i64(2, 2, 3, 2, 2)},
		{name: "gather/embedding", op: "stablehlo.gather", args: []Type{f32(10, 8), i32(5, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Gather(a[0], a[1], GatherDimensionNumbers{
					OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1,
				}, []int64{1, 8}, true)
			}, want: f32(5, 8)},
		{name: "gather/implicit-index-vector", op: "stablehlo.gather", args: []Type{f32(10, 8), i32(5)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Gather(a[0], a[1], GatherDimensionNumbers{
					OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1,
				}, []int64{1, 8}, false)
			}, want: f32(5, 8)},
		{name: "gather/collapsed-size", op: "stablehlo.gather", args: []Type{f32(10, 8), i32(5, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Gather(a[0], a[1], GatherDimensionNumbers{
					OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1,
				}, []int64{2, 8}, false)
			}, wantErr: "collapsed dimension 0 has slice size 2 > 1"},
		{name: "gather/index-map", op: "stablehlo.gather", args: []Type{f32(10, 8), i32(5, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Gather(a[0], a[1], GatherDimensionNumbers{
					OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1,
				}, []int64{1, 8}, false)
			}, wantErr: "start_index_map has 1 entries, index vectors have 2"},
		{name: "gather/offset-dims-unsorted", op: "stablehlo.gather", args: []Type{f32(10, 8, 4), i32(5, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Gather(a[0], a[1], GatherDimensionNumbers{
					OffsetDims: []int64{2, 1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1,
				}, []int64{1, 8, 4}, false)
			}, wantErr: "offset_dims must be sorted"},
		{name: "gather/float-indices", op: "stablehlo.gather", args: []Type{f32(10, 8), f32(5, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Gather(a[0], a[1], GatherDimensionNumbers{IndexVectorDim: 1}, []int64{1, 8}, false)
			}, wantErr: "start_indices must be integers"},
	}
	runOpCases(t, cases)

	_, f := newFunc(i32(1, 3))
	v := f.BroadcastInDim(f.Arg(0), []int64{2, 3, 2}, []int64{2, 1})
	assert.Equal(t, DenseArrayAttr{DType: xla.Int64, Values: []int64{2, 1}}, v.Op().Attr("broadcast_dimensions"))
	v = f.Slice(f.Arg(0), []int64{0, 1}, []int64{1, 3}, nil)
	assert.Equal(t, I64Array(0, 1), v.Op().Attr("start_indices"))
	assert.Equal(t, I64Array(1, 3), v.Op().Attr("limit_indices"))
	assert.Equal(t, I64Array(1, 1), v.Op().Attr("strides"))
	v = f.Concatenate(1, f.Arg(0), f.Arg(0))
	assert.Equal(t, IntAttr{Value: 1, Type: xla.Int64}, v.Op().Attr("dimension"))
}

func TestScatter(t *testing.T) {
	add := func(rb *FuncBuilder, a []*Value) []*Value { return []*Value{rb.Add(a[0], a[1])} }
	dn := ScatterDimensionNumbers{
		UpdateWindowDims: []int64{3, 4}, InsertedWindowDims: []int64{1}, InputBatchingDims: []int64{0},
		ScatterIndicesBatchingDims: []int64{1}, ScatterDimsToOperandDims: []int64{2, 1}, IndexVectorDim: 3,
	}
	b, f := newFunc(i64(2, 3, 4, 2), i64(2, 2, 3, 2), i64(2, 2, 3, 2, 2))
	r := f.Scatter([]*Value{f.Arg(0)}, f.Arg(1), []*Value{f.Arg(2)}, dn, false, true, add)
	require.NoError(t, b.Err())
	require.Len(t, r, 1)
	assert.Equal(t, i64(2, 3, 4, 2).String(), r[0].Type.String())
	op := r[0].Op()
	assert.Equal(t, dn, op.Attr("scatter_dimension_numbers"))
	assert.Equal(t, BoolAttr(false), op.Attr("indices_are_sorted"))
	assert.Equal(t, BoolAttr(true), op.Attr("unique_indices"))
	require.Len(t, op.Regions, 1)
	blk := op.Regions[0].Blocks[0]
	assert.Equal(t, []Type{i64(), i64()}, blockArgTypes(blk))
	assert.Equal(t, "stablehlo.return", blk.Terminator().Name)
	f.Return(r...)
	m, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, m.Verify())

	// Two inputs: the update region takes 4 scalars and returns 2.
	b, f = newFunc(f32(8), i32(8), i32(3, 1), f32(3), i32(3))
	r = f.Scatter([]*Value{f.Arg(0), f.Arg(1)}, f.Arg(2), []*Value{f.Arg(3), f.Arg(4)}, ScatterDimensionNumbers{
		InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1,
	}, false, false, func(rb *FuncBuilder, a []*Value) []*Value {
		return []*Value{rb.Add(a[0], a[2]), rb.Maximum(a[1], a[3])}
	})
	require.NoError(t, b.Err())
	require.Len(t, r, 2)
	assert.Equal(t, []Type{f32(), i32(), f32(), i32()}, blockArgTypes(r[0].Op().Regions[0].Blocks[0]))

	// Errors.
	b, f = newFunc(i64(2, 3, 4, 2), i64(2, 2, 3, 2), i64(2, 2, 3, 2, 2))
	f.Scatter([]*Value{f.Arg(0)}, f.Arg(1), []*Value{f.Arg(2)}, dn, false, false, func(rb *FuncBuilder, a []*Value) []*Value {
		return []*Value{rb.Convert(a[0], xla.Int32)}
	})
	requireErr(t, b, "stablehlo.scatter", "update_computation must return (tensor<i64>), got (tensor<i32>)")
	b, f = newFunc(i64(2, 3, 4, 2), i64(2, 2, 3, 2), i64(2, 2, 3, 2, 3))
	f.Scatter([]*Value{f.Arg(0)}, f.Arg(1), []*Value{f.Arg(2)}, dn, false, false, add)
	requireErr(t, b, "stablehlo.scatter", "update window dimension 4 (3) exceeds input dimension 3 (2)")
	b, f = newFunc(i64(2, 3, 4, 2), i64(2, 2, 3, 2), i64(2, 2, 4, 2, 2))
	f.Scatter([]*Value{f.Arg(0)}, f.Arg(1), []*Value{f.Arg(2)}, dn, false, false, add)
	requireErr(t, b, "stablehlo.scatter", "update scatter dimension 2 is 4, scatter_indices have 3")
	b, f = newFunc(i64(2, 3, 4, 2), i64(2, 2, 3, 2), i64(2, 2, 3, 2, 2))
	f.Scatter([]*Value{f.Arg(0)}, f.Arg(1), nil, dn, false, false, add)
	requireErr(t, b, "stablehlo.scatter", "needs as many updates as inputs")
	b, f = newFunc(i64(2, 3, 4, 2), i64(2, 2, 3, 2), i64(2, 2, 3, 2, 2))
	f.Scatter([]*Value{f.Arg(0)}, f.Arg(1), []*Value{f.Arg(2)}, dn, false, false, nil)
	requireErr(t, b, "stablehlo.scatter", "update_computation closure is nil")
}

func blockArgTypes(b *Block) []Type { return valueTypes(b.Args) }
