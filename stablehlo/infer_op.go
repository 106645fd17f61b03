package stablehlo

import (
	"fmt"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// InferResultTypes recomputes the result types of op from its operand
// types and attributes, as the builder infers them, for the ops whose
// results are determined by those (elementwise ops, compare, select,
// clamp, shape manipulation (broadcast among them), gather, scatter, dot_general, convolution,
// fft, cholesky, triangular_solve, reduce, reduce_window,
// select_and_scatter, sort, map, while, tuples, collectives with explicit
// groups, constants, torch_index_select), and checks their operands and
// attributes as the builder does. Of dynamic_gather and rng, whose result
// shapes an operand holds, it gives the shape that operand's value gives
// where a constant defines it, dynamic dimensions otherwise (after checking
// the rest). known is false for ops it does not infer (custom_call, other
// dynamic ops, ops of other dialects ...). Verify uses it to check ops
// built by hand.
func InferResultTypes(op *Op) (types []Type, known bool, err error) {
	ts := make([]TensorType, len(op.Operands))
	allTensors := true
	for i, v := range op.Operands {
		if v == nil {
			return nil, true, fmt.Errorf("operand %d is nil", i)
		}
		t, ok := v.Type.(TensorType)
		ts[i] = t
		allTensors = allTensors && ok
	}
	one := func(t TensorType, err error) ([]Type, bool, error) {
		if err != nil {
			return nil, true, err
		}
		return []Type{t}, true, nil
	}
	same := func(cls dtypeClass) ([]Type, bool, error) {
		if !allTensors || len(ts) == 0 {
			return nil, false, nil
		}
		for i := range ts {
			if ts[i].DType != ts[0].DType || !sameDims(ts[i].Dims, ts[0].Dims) {
				return nil, true, fmt.Errorf("operands must have the same type")
			}
		}
		if dtypeClasses[ts[0].DType]&cls == 0 {
			return nil, true, fmt.Errorf("element type %s is not %s", ts[0].DType, cls)
		}
		return []Type{op.Operands[0].Type}, true, nil
	}
	i64s := func(name string) []int64 {
		if a, ok := op.Attr(name).(DenseArrayAttr); ok {
			return a.Values
		}
		return nil
	}
	intAttr := func(name string, def int64) int64 {
		if a, ok := op.Attr(name).(IntAttr); ok {
			return a.Value
		}
		return def
	}
	name := op.Name
	if strings.HasPrefix(name, "chlo.") {
		return inferChlo(op)
	}
	if len(name) < len("stablehlo.") || name[:len("stablehlo.")] != "stablehlo." {
		return nil, false, nil
	}
	switch name[len("stablehlo."):] {
	case "cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "rsqrt", "sine", "sqrt", "square", "tan", "tanh", "atan2":
		return same(clsFloatCplx)
	case "ceil", "floor", "round_nearest_afz", "round_nearest_even":
		return same(clsFloat)
	case "count_leading_zeros", "popcnt", "shift_left", "shift_right_arithmetic", "shift_right_logical":
		return same(clsInt)
	case "not", "and", "or", "xor":
		return same(clsIntOrBool)
	case "negate", "subtract", "divide", "remainder", "power":
		return same(clsNumeric)
	case "sign":
		return same(clsSignedNum)
	case "add", "multiply", "maximum", "minimum":
		return same(clsAll)
	case "abs":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		return one(inferAbs(ts[0]))
	case "real", "imag":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		return one(inferRealImag(ts[0]))
	case "is_finite":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		if !ts[0].DType.IsFloat() {
			return nil, true, fmt.Errorf("operand must be a float tensor")
		}
		return []Type{TensorType{DType: xla.Bool, Dims: ts[0].Dims}}, true, nil
	case "compare":
		if !allTensors || len(ts) == 0 {
			return nil, false, nil
		}
		if len(ts) == 2 && (ts[0].DType != ts[1].DType || !sameDims(ts[0].Dims, ts[1].Dims)) {
			return nil, true, fmt.Errorf("operands must have the same type")
		}
		if ct, ok := op.Attr("compare_type").(EnumAttr); ok && !CompareType(ct.Value).AppliesTo(ts[0].DType) {
			return nil, true, fmt.Errorf("compare type %s does not apply to element type %s", ct.Value, ts[0].DType)
		}
		return []Type{TensorType{DType: xla.Bool, Dims: ts[0].Dims}}, true, nil
	case "select", "clamp":
		if len(op.Operands) != 3 {
			return nil, true, fmt.Errorf("needs 3 operands")
		}
		check := inferSelect
		if name == "stablehlo.clamp" {
			check = inferClamp
		}
		for _, v := range op.Operands {
			if _, opaque := v.Type.(OpaqueType); opaque {
				return nil, false, nil // quantized or bounded: no rule here
			}
		}
		return []Type{op.Operands[1].Type}, true, check(op.Operands[0].Type, op.Operands[1].Type, op.Operands[2].Type)
	case "complex":
		if !allTensors || len(ts) != 2 {
			return nil, false, nil
		}
		ct := map[xla.DType]xla.DType{xla.Float32: xla.Complex64, xla.Float64: xla.Complex128}[ts[0].DType]
		if ct == xla.Invalid || ts[0].DType != ts[1].DType {
			return nil, true, fmt.Errorf("operands must both be f32 or f64")
		}
		return []Type{TensorType{DType: ct, Dims: ts[0].Dims}}, true, nil
	case "reduce_precision":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		return valueTypes(op.Operands), true, inferReducePrecision(ts[0], intAttr("exponent_bits", 0), intAttr("mantissa_bits", -1))
	case "reverse":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		return valueTypes(op.Operands), true, checkAxes("dimensions", i64s("dimensions"), ts[0].Rank(), true)
	case "cholesky":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		return valueTypes(op.Operands), true, checkBatchedSquare("a", ts[0])
	case "optimization_barrier":
		return valueTypes(op.Operands), true, nil
	case "constant":
		return inferConstant(op)
	case "bitcast_convert":
		rt, ok := resultTensor(op, 0) // the result element type is the op's choice
		if !allTensors || len(ts) != 1 || len(op.Results) != 1 || !ok {
			return nil, false, nil
		}
		return one(inferBitcastConvert(ts[0], rt.DType))
	case "triangular_solve":
		if !allTensors || len(ts) != 2 {
			return nil, false, nil
		}
		left, _ := op.Attr("left_side").(BoolAttr)
		return []Type{ts[1]}, true, inferTriangularSolve(ts[0], ts[1], bool(left))
	case "fft":
		ft, ok := op.Attr("fft_type").(EnumAttr)
		if !allTensors || len(ts) != 1 || !ok {
			return nil, false, nil
		}
		return one(inferFft(ts[0], FftType(ft.Value), i64s("fft_length")))
	case "all_reduce", "collective_reduce", "cross-replica-sum", "all_gather", "reduce_scatter", "all_to_all", "collective_permute", "collective_broadcast":
		for i, v := range op.Operands {
			if _, ok := v.Type.(TupleType); ok {
				return nil, true, fmt.Errorf("operand %d is a tuple (%s): collectives take tensors", i, v.Type)
			}
		}
		if !allTensors {
			return nil, false, nil
		}
		return inferCollective(op, name[len("stablehlo."):], ts)
	case "transpose":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		return one(inferTranspose(ts[0], i64s("permutation")))
	case "broadcast":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		return one(inferBroadcast(ts[0], i64s("broadcast_sizes")))
	case "slice":
		if !allTensors || len(ts) != 1 {
			return nil, false, nil
		}
		return one(inferSlice(ts[0], i64s("start_indices"), i64s("limit_indices"), i64s("strides")))
	case "dynamic_slice":
		if !allTensors || len(ts) < 1 {
			return nil, false, nil
		}
		return one(inferDynamicSlice(ts[0], op.Operands[1:], i64s("slice_sizes")))
	case "dynamic_update_slice":
		if !allTensors || len(ts) < 2 {
			return nil, false, nil
		}
		return []Type{op.Operands[0].Type}, true, inferDynamicUpdateSlice(ts[0], ts[1], op.Operands[2:])
	case "concatenate":
		if !allTensors {
			return nil, false, nil
		}
		return one(inferConcatenate(ts, intAttr("dimension", 0)))
	case "pad":
		if !allTensors || len(ts) != 2 {
			return nil, false, nil
		}
		return one(inferPad(ts[0], ts[1], i64s("edge_padding_low"), i64s("edge_padding_high"), i64s("interior_padding")))
	case "gather":
		dn, ok := op.Attr("dimension_numbers").(GatherDimensionNumbers)
		if !allTensors || len(ts) != 2 || !ok {
			return nil, false, nil
		}
		return one(inferGather(ts[0], ts[1], dn, i64s("slice_sizes"), true))
	case "dynamic_gather":
		dn, ok := op.Attr("dimension_numbers").(GatherDimensionNumbers)
		if !allTensors || len(ts) != 3 || !ok {
			return nil, false, nil
		}
		sizes, known := constantInts(op.Operands[2])
		return one(inferDynamicGather(ts[0], ts[1], ts[2], dn, sizes, known))
	case "torch_index_select":
		if !allTensors || len(ts) != 2 {
			return nil, false, nil
		}
		return one(inferTorchIndexSelect(ts[0], ts[1], intAttr("dim", 0), intAttr("batch_dims", 0)))
	case "rng":
		dist, ok := op.Attr("rng_distribution").(EnumAttr)
		if !allTensors || len(ts) != 3 || !ok {
			return nil, false, nil
		}
		dims, known := constantInts(op.Operands[2])
		t, inferred, err := inferRng(ts[0], ts[1], ts[2], dist.Value, dims, known)
		if !inferred || err != nil {
			return nil, inferred, err
		}
		return []Type{t}, true, nil
	case "dot_general":
		dn, ok := op.Attr("dot_dimension_numbers").(DotDimensionNumbers)
		if !allTensors || len(ts) != 2 || !ok || len(op.Results) != 1 {
			return nil, false, nil
		}
		rt, _ := resultTensor(op, 0) // the result element type may differ
		return one(inferDotGeneral(ts[0], ts[1], dn, rt.DType))
	case "convolution":
		dn, ok := op.Attr("dimension_numbers").(ConvDimensionNumbers)
		if !allTensors || len(ts) != 2 || !ok || len(op.Results) != 1 {
			return nil, false, nil
		}
		cfg := ConvConfig{WindowStrides: i64s("window_strides"), LhsDilation: i64s("lhs_dilation"), RhsDilation: i64s("rhs_dilation"),
			Dims: dn, FeatureGroupCount: intAttr("feature_group_count", 1), BatchGroupCount: intAttr("batch_group_count", 1)}
		pad, err := paddingOf(op)
		if err != nil {
			return nil, true, err
		}
		cfg.Padding = pad
		rt, _ := resultTensor(op, 0)
		return one(inferConvolution(ts[0], ts[1], cfg.params(), rt.DType))
	case "reduce":
		n := len(ts) / 2
		if !allTensors || len(ts)%2 != 0 {
			return nil, false, nil
		}
		types, err := inferReduce(ts[:n], ts[n:], i64s("dimensions"), bodyElemTypes(op, n))
		return types, true, err
	case "reduce_window":
		n := len(ts) / 2
		if !allTensors || len(ts)%2 != 0 || n == 0 {
			return nil, false, nil
		}
		w := Window{Dimensions: i64s("window_dimensions"), Strides: i64s("window_strides"), BaseDilations: i64s("base_dilations"), WindowDilations: i64s("window_dilations")}
		pad, err := paddingOf(op)
		if err != nil {
			return nil, true, err
		}
		w.Padding = pad
		types, err := inferReduceWindow(ts[:n], ts[n:], w.params(ts[0].Rank()), bodyElemTypes(op, n))
		return types, true, err
	case "sort":
		if !allTensors {
			return nil, false, nil
		}
		return valueTypes(op.Operands), true, inferSort(ts, intAttr("dimension", -1))
	case "map":
		if !allTensors || len(ts) == 0 || len(op.Results) != 1 {
			return nil, false, nil
		}
		if err := inferMap(ts, i64s("dimensions")); err != nil {
			return nil, true, err
		}
		// The element type is what the computation returns (checked by
		// CheckRegionTypes); the shape is the inputs'.
		rt, ok := resultTensor(op, 0)
		if !ok {
			return nil, false, nil // a quantized result, or none given
		}
		return []Type{TensorType{DType: rt.DType, Dims: ts[0].Dims}}, true, nil
	case "scatter":
		dn, ok := op.Attr("scatter_dimension_numbers").(ScatterDimensionNumbers)
		n := (len(ts) - 1) / 2
		if !allTensors || !ok || n < 1 || len(ts) != 2*n+1 {
			return nil, false, nil
		}
		if err := inferScatter(ts[:n], ts[n], ts[n+1:], dn); err != nil {
			return nil, true, err
		}
		dts, err := reductionTypes(ts[:n], bodyElemTypes(op, n))
		if err != nil {
			return nil, true, err
		}
		out := make([]Type, n)
		for i := range out {
			out[i] = TensorType{DType: dts[i], Dims: ts[i].Dims}
		}
		return out, true, nil
	case "select_and_scatter":
		if !allTensors || len(ts) != 3 {
			return nil, false, nil
		}
		w := Window{Dimensions: i64s("window_dimensions"), Strides: i64s("window_strides")}
		pad, err := paddingOf(op)
		if err != nil {
			return nil, true, err
		}
		w.Padding = pad
		if err := inferSelectAndScatter(ts[0], ts[1], ts[2], w.params(ts[0].Rank())); err != nil {
			return nil, true, err
		}
		// The result's element type is the scatter body's, a promotion of
		// the operand's (spec C11, C13).
		et := ts[0].DType
		if len(op.Regions) == 2 {
			if args := regionArgs(op.Regions[1]); len(args) > 0 {
				if at, ok := args[0].(TensorType); ok && at.Rank() == 0 {
					if !Promotable(et, at.DType) {
						return nil, true, fmt.Errorf("the scatter body's element type %v is not a promotion of the operand's %v", at.DType, et)
					}
					et = at.DType
				}
			}
		}
		return []Type{TensorType{DType: et, Dims: ts[0].Dims}}, true, nil
	case "while":
		return valueTypes(op.Operands), true, nil
	case "tuple":
		return []Type{TupleType{Elems: valueTypes(op.Operands)}}, true, nil
	case "get_tuple_element":
		if len(op.Operands) != 1 {
			return nil, false, nil
		}
		tt, ok := op.Operands[0].Type.(TupleType)
		i := intAttr("index", -1)
		if !ok || i < 0 || i >= int64(len(tt.Elems)) {
			return nil, true, fmt.Errorf("index %d is not an element of %s", i, op.Operands[0].Type)
		}
		return []Type{tt.Elems[i]}, true, nil
	case "after_all", "create_token":
		return []Type{TokenType{}}, true, nil
	case "replica_id", "partition_id":
		return []Type{Scalar(xla.Uint32)}, true, nil
	case "get_dimension_size":
		if len(op.Operands) != 1 || !allTensors {
			return nil, false, nil // a bounded or quantized operand: not checked here
		}
		return []Type{Scalar(xla.Int32)}, true, inferDimensionSize(op.Operands[0].Type, intAttr("dimension", -1))
	}
	return nil, false, nil
}

// inferConstant gives a constant's result type: its value's (the dense
// attribute keeps its full type, a splat's included), which the result
// must equal exactly (spec C1: a dynamic dimension does not match). A
// value this package keeps as text (dense_resource, quantized storage)
// or a result type it does not model (quantized: OpaqueType) leaves the
// op unchecked.
func inferConstant(op *Op) ([]Type, bool, error) {
	d, ok := op.Attr("value").(DenseElementsAttr)
	if !ok {
		return nil, false, nil
	}
	if len(op.Results) == 1 && op.Results[0] != nil {
		rt, ok := op.Results[0].Type.(TensorType)
		if !ok {
			return nil, false, nil
		}
		if !TypesEqual(rt, d.Type) {
			return nil, true, fmt.Errorf("value is %s, the result is %s: they must be the same type", d.Type, rt)
		}
	}
	return []Type{d.Type}, true, nil
}

// paddingOf reads op's padding attribute (an Nx2 matrix of integers; nil
// when absent).
func paddingOf(op *Op) ([][2]int64, error) {
	a := op.Attr("padding")
	if a == nil {
		return nil, nil
	}
	pad, ok := a.(DenseElementsAttr)
	rows := denseMatrix(pad)
	if !ok || len(pad.Type.Dims) != 2 || pad.Type.Dims[1] != 2 || rows == nil && pad.Type.Dims[0] != 0 {
		t := any(a)
		if ok {
			t = pad.Type
		}
		return nil, fmt.Errorf("padding %v is not an Nx2 matrix of integers (of at most %d elements)", t, maxExpandedSplat)
	}
	out := make([][2]int64, len(rows))
	for i, r := range rows {
		out[i] = [2]int64{r[0], r[1]}
	}
	return out, nil
}

// bodyElemTypes are the element types of the first n arguments of op's
// first region (a reduction's body), or nil when they are not all scalar
// tensors.
func bodyElemTypes(op *Op, n int) []xla.DType {
	if len(op.Regions) == 0 || op.Regions[0] == nil || len(op.Regions[0].Blocks) == 0 || op.Regions[0].Blocks[0] == nil {
		return nil
	}
	args := op.Regions[0].Blocks[0].Args
	if len(args) < n {
		return nil
	}
	out := make([]xla.DType, n)
	for i, a := range args[:n] {
		if a == nil {
			return nil
		}
		t, ok := a.Type.(TensorType)
		if !ok || t.Rank() != 0 {
			return nil
		}
		out[i] = t.DType
	}
	return out
}

// constantInts is the value of v where a stablehlo.constant of integers
// defines it; false for any other value (an argument, another op's
// result, a splat too large to expand).
func constantInts(v *Value) ([]int64, bool) {
	if v == nil || v.op == nil || v.op.Name != "stablehlo.constant" {
		return nil, false
	}
	a, ok := v.op.Attr("value").(DenseElementsAttr)
	if !ok || !a.Type.DType.IsInt() {
		return nil, false
	}
	vals, err := a.Int64s()
	return vals, err == nil
}

// resultTensor is op's result i's tensor type, false when it has none (a
// probe op of EmitInferred, whose results are what is inferred) or
// another type.
func resultTensor(op *Op, i int) (TensorType, bool) {
	if i >= len(op.Results) || op.Results[i] == nil {
		return TensorType{}, false
	}
	t, ok := op.Results[i].Type.(TensorType)
	return t, ok
}
