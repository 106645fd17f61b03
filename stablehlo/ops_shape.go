package stablehlo

import (
	"slices"

	"github.com/halo-ml/halo/xla"
)

// tensorOperands returns the operands' tensor types, or records an error
// naming the first operand that is not a tensor.
func (fb *FuncBuilder) tensorOperands(name string, operands []*Value, which ...*Value) ([]TensorType, bool) {
	ts := make([]TensorType, len(which))
	for i, v := range which {
		t, ok := v.TensorType()
		if !ok {
			fb.fail(name, operands, "operand %s must be a tensor", v.Type)
			return nil, false
		}
		ts[i] = t
	}
	return ts, true
}

// BroadcastInDim adds stablehlo.broadcast_in_dim: the result has
// dimensions dims and x's dimension i becomes result dimension
// broadcastDims[i] (of size 1, or equal to it). A negative dimension
// (DynamicDim too: the result is static; DynamicBroadcastInDim takes the
// dimensions as an operand) is an error naming it.
func (fb *FuncBuilder) BroadcastInDim(x *Value, dims []int64, broadcastDims []int64) *Value {
	const name = "stablehlo.broadcast_in_dim"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	ops := []*Value{x}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, ops, "operand must be a tensor")
		return deadValue(nil)
	}
	if err := checkSizes("result dimension", dims); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	if err := inferBroadcastInDim(t, dims, broadcastDims); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, ops, Tensor(t.DType, dims...), NamedAttr{Name: "broadcast_dimensions", Value: I64Array(broadcastDims...)})
}

// BroadcastTo broadcasts x to dims, aligning x's dimensions with the
// trailing result dimensions (NumPy style) with broadcast_in_dim.
func (fb *FuncBuilder) BroadcastTo(x *Value, dims ...int64) *Value {
	if !fb.check1("stablehlo.broadcast_in_dim", x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok || len(dims) < t.Rank() {
		fb.fail("stablehlo.broadcast_in_dim", []*Value{x}, "cannot broadcast to %v", dims)
		return deadValue(nil)
	}
	bd := make([]int64, t.Rank())
	for i := range bd {
		bd[i] = int64(len(dims) - t.Rank() + i)
	}
	return fb.BroadcastInDim(x, dims, bd)
}

// Broadcast adds the deprecated stablehlo.broadcast: sizes are prepended
// to x's dimensions. A negative size (DynamicDim too: the result is
// static) is an error naming it.
func (fb *FuncBuilder) Broadcast(x *Value, sizes ...int64) *Value {
	const name = "stablehlo.broadcast"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	rt, err := inferBroadcast(t, sizes)
	if err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{x}, rt, NamedAttr{Name: "broadcast_sizes", Value: I64Array(sizes...)})
}

// Reshape adds stablehlo.reshape to dims (same number of elements). A
// negative dimension (DynamicDim too: the result is static;
// DynamicReshape takes the dimensions as an operand) is an error naming
// it.
func (fb *FuncBuilder) Reshape(x *Value, dims ...int64) *Value {
	const name = "stablehlo.reshape"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	if err := checkSizes("result dimension", dims); err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	if err := inferReshape(t, dims); err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emitUnary(name, Tensor(t.DType, dims...), x)
}

// Transpose adds stablehlo.transpose: result dimension i is x's dimension
// permutation[i].
func (fb *FuncBuilder) Transpose(x *Value, permutation ...int64) *Value {
	const name = "stablehlo.transpose"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	rt, err := inferTranspose(t, permutation)
	if err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{x}, rt, NamedAttr{Name: "permutation", Value: I64Array(permutation...)})
}

// Slice adds stablehlo.slice; nil strides means all 1.
func (fb *FuncBuilder) Slice(x *Value, start, limit, strides []int64) *Value {
	const name = "stablehlo.slice"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	if strides == nil {
		strides = ones(t.Rank())
	}
	rt, err := inferSlice(t, start, limit, strides)
	if err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{x}, rt,
		NamedAttr{Name: "start_indices", Value: I64Array(start...)},
		NamedAttr{Name: "limit_indices", Value: I64Array(limit...)},
		NamedAttr{Name: "strides", Value: I64Array(strides...)})
}

func ones(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// DynamicSlice adds stablehlo.dynamic_slice: one integer scalar start
// index per dimension, static slice sizes.
func (fb *FuncBuilder) DynamicSlice(x *Value, startIndices []*Value, sliceSizes []int64) *Value {
	const name = "stablehlo.dynamic_slice"
	ops := append([]*Value{x}, startIndices...)
	if !fb.checkOperands(name, ops) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, ops, "operand must be a tensor")
		return deadValue(nil)
	}
	rt, err := inferDynamicSlice(t, startIndices, sliceSizes)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, ops, rt, NamedAttr{Name: "slice_sizes", Value: I64Array(sliceSizes...)})
}

// DynamicUpdateSlice adds stablehlo.dynamic_update_slice.
func (fb *FuncBuilder) DynamicUpdateSlice(x, update *Value, startIndices []*Value) *Value {
	const name = "stablehlo.dynamic_update_slice"
	ops := append([]*Value{x, update}, startIndices...)
	if !fb.checkOperands(name, ops) {
		return deadValue(nil)
	}
	ts, ok := fb.tensorOperands(name, ops, x, update)
	if !ok {
		return deadValue(nil)
	}
	if err := inferDynamicUpdateSlice(ts[0], ts[1], startIndices); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, ops, x.Type)
}

// Concatenate adds stablehlo.concatenate along dimension dim.
func (fb *FuncBuilder) Concatenate(dim int64, inputs ...*Value) *Value {
	const name = "stablehlo.concatenate"
	if !fb.checkOperands(name, inputs) {
		return deadValue(nil)
	}
	ts, ok := fb.tensorOperands(name, inputs, inputs...)
	if !ok {
		return deadValue(nil)
	}
	rt, err := inferConcatenate(ts, dim)
	if err != nil {
		fb.fail(name, inputs, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, slices.Clone(inputs), rt, NamedAttr{Name: "dimension", Value: I64Attr(dim)})
}

// Pad adds stablehlo.pad; negative edge padding crops.
func (fb *FuncBuilder) Pad(x, padValue *Value, low, high, interior []int64) *Value {
	const name = "stablehlo.pad"
	if !fb.check2(name, x, padValue) {
		return deadValue(nil)
	}
	ops := []*Value{x, padValue}
	ts, ok := fb.tensorOperands(name, ops, x, padValue)
	if !ok {
		return deadValue(nil)
	}
	if interior == nil {
		interior = make([]int64, ts[0].Rank())
	}
	rt, err := inferPad(ts[0], ts[1], low, high, interior)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, ops, rt,
		NamedAttr{Name: "edge_padding_low", Value: I64Array(low...)},
		NamedAttr{Name: "edge_padding_high", Value: I64Array(high...)},
		NamedAttr{Name: "interior_padding", Value: I64Array(interior...)})
}

// Reverse adds stablehlo.reverse along dims.
func (fb *FuncBuilder) Reverse(x *Value, dims ...int64) *Value {
	const name = "stablehlo.reverse"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	if err := checkAxes("dimensions", dims, t.Rank(), true); err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{x}, x.Type, NamedAttr{Name: "dimensions", Value: I64Array(dims...)})
}

// GetDimensionSize adds stablehlo.get_dimension_size: a tensor<i32>.
func (fb *FuncBuilder) GetDimensionSize(x *Value, dim int64) *Value {
	const name = "stablehlo.get_dimension_size"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	if err := inferDimensionSize(x.Type, dim); err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{x}, Scalar(xla.Int32), NamedAttr{Name: "dimension", Value: I64Attr(dim)})
}

// Gather adds stablehlo.gather.
func (fb *FuncBuilder) Gather(x, startIndices *Value, dn GatherDimensionNumbers, sliceSizes []int64, indicesAreSorted bool) *Value {
	const name = "stablehlo.gather"
	if !fb.check2(name, x, startIndices) {
		return deadValue(nil)
	}
	ops := []*Value{x, startIndices}
	ts, ok := fb.tensorOperands(name, ops, x, startIndices)
	if !ok {
		return deadValue(nil)
	}
	rt, err := inferGather(ts[0], ts[1], dn, sliceSizes, true)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, ops, rt,
		NamedAttr{Name: "dimension_numbers", Value: cloneGather(dn)},
		NamedAttr{Name: "slice_sizes", Value: I64Array(sliceSizes...)},
		NamedAttr{Name: "indices_are_sorted", Value: BoolAttr(indicesAreSorted)})
}

// Scatter adds stablehlo.scatter: the results are inputs with the slices
// at scatterIndices combined with updates by update, which receives 2N
// scalars (the N current values, then the N update values) and returns N.
func (fb *FuncBuilder) Scatter(inputs []*Value, scatterIndices *Value, updates []*Value, dn ScatterDimensionNumbers,
	indicesAreSorted, uniqueIndices bool, update func(rb *FuncBuilder, args []*Value) []*Value) []*Value {
	const name = "stablehlo.scatter"
	ops := append(append(slices.Clone(inputs), scatterIndices), updates...)
	if !fb.checkOperands(name, ops) {
		return deadN(len(inputs))
	}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadN(len(inputs))
	}
	n := len(inputs)
	if len(updates) != n {
		fb.fail(name, ops, "needs as many updates as inputs, got %d and %d", len(updates), n)
		return deadN(n)
	}
	if err := inferScatter(ts[:n], ts[n], ts[n+1:], dn); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadN(n)
	}
	argTypes := append(scalarTypes(inputs), scalarTypes(updates)...)
	region, rets, ok := fb.buildRegion(name, ops, "update_computation", argTypes, update)
	if !ok {
		return deadN(n)
	}
	if !typesEqual(valueTypes(rets), scalarTypes(inputs)) {
		fb.fail(name, ops, "update_computation must return %s, got %s", typeList(scalarTypes(inputs)), typeList(valueTypes(rets)))
		return deadN(n)
	}
	op := NewOp(name, ops, valueTypes(inputs),
		NamedAttr{Name: "scatter_dimension_numbers", Value: cloneScatter(dn)},
		NamedAttr{Name: "indices_are_sorted", Value: BoolAttr(indicesAreSorted)},
		NamedAttr{Name: "unique_indices", Value: BoolAttr(uniqueIndices)})
	op.AddRegion(region)
	fb.emit(op)
	return op.Results
}

func cloneGather(dn GatherDimensionNumbers) GatherDimensionNumbers {
	return GatherDimensionNumbers{
		OffsetDims:               slices.Clone(dn.OffsetDims),
		CollapsedSliceDims:       slices.Clone(dn.CollapsedSliceDims),
		OperandBatchingDims:      slices.Clone(dn.OperandBatchingDims),
		StartIndicesBatchingDims: slices.Clone(dn.StartIndicesBatchingDims),
		StartIndexMap:            slices.Clone(dn.StartIndexMap),
		IndexVectorDim:           dn.IndexVectorDim,
	}
}

func cloneScatter(dn ScatterDimensionNumbers) ScatterDimensionNumbers {
	return ScatterDimensionNumbers{
		UpdateWindowDims:           slices.Clone(dn.UpdateWindowDims),
		InsertedWindowDims:         slices.Clone(dn.InsertedWindowDims),
		InputBatchingDims:          slices.Clone(dn.InputBatchingDims),
		ScatterIndicesBatchingDims: slices.Clone(dn.ScatterIndicesBatchingDims),
		ScatterDimsToOperandDims:   slices.Clone(dn.ScatterDimsToOperandDims),
		IndexVectorDim:             dn.IndexVectorDim,
	}
}
