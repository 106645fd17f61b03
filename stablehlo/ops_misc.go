package stablehlo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// RngBitGenerator adds stablehlo.rng_bit_generator: from an initial state
// (a ui64 or i64 vector: 2 elements for THREE_FRY, 2 or 3 for PHILOX and
// DEFAULT, which is PHILOX on XLA's CPU and GPU backends) it returns the
// new state and random bits of type output.
func (fb *FuncBuilder) RngBitGenerator(algorithm RngAlgorithm, state *Value, output TensorType) (newState, bits *Value) {
	const name = "stablehlo.rng_bit_generator"
	if !fb.check1(name, state) || !fb.checkTypes(name, []*Value{state}, []Type{output}) {
		return deadValue(nil), deadValue(output)
	}
	ops := []*Value{state}
	st, ok := state.TensorType()
	if !ok || st.Rank() != 1 || !st.DType.IsInt() {
		fb.fail(name, ops, "initial_state must be a 1-D integer tensor")
		return deadValue(nil), deadValue(output)
	}
	if !validEnum("rng_algorithm", string(algorithm)) {
		fb.fail(name, ops, "invalid rng_algorithm %q", algorithm)
		return deadValue(nil), deadValue(output)
	}
	if st.DType != xla.Uint64 && st.DType != xla.Int64 {
		fb.fail(name, ops, "initial_state must hold 64-bit integers (ui64), got %s", st)
		return deadValue(state.Type), deadValue(output)
	}
	if n := st.Dims[0]; n != DynamicDim {
		switch {
		case algorithm == RngThreeFry && n != 2:
			fb.fail(name, ops, "THREE_FRY needs an initial_state of 2 elements, got %s", st)
			return deadValue(state.Type), deadValue(output)
		case algorithm != RngThreeFry && n != 2 && n != 3:
			fb.fail(name, ops, "%s needs an initial_state of 2 or 3 elements, got %s", algorithm, st)
			return deadValue(state.Type), deadValue(output)
		}
	}
	if dtypeClasses[output.DType]&(clsInt|clsFloat) == 0 {
		fb.fail(name, ops, "output must be integer or float, got %s", output)
		return deadValue(nil), deadValue(output)
	}
	op := fb.emitN(name, ops, []Type{state.Type, Tensor(output.DType, output.Dims...)},
		NamedAttr{Name: "rng_algorithm", Value: enumAttr("rng_algorithm", string(algorithm))})
	return op.Results[0], op.Results[1]
}

// Rng adds stablehlo.rng: random numbers of the given dims between a and
// b (UNIFORM) or with mean a and deviation b (NORMAL). The shape operand
// holding dims is added as a constant. A negative dimension (DynamicDim
// too: dims are sizes) is an error naming it.
func (fb *FuncBuilder) Rng(a, b *Value, distribution RngDistribution, dims ...int64) *Value {
	const name = "stablehlo.rng"
	if !fb.check2(name, a, b) {
		return deadValue(nil)
	}
	ops := []*Value{a, b}
	at, ok1 := a.TensorType()
	bt, ok2 := b.TensorType()
	if !ok1 || !ok2 {
		fb.fail(name, ops, "a and b must be scalars of one type")
		return deadValue(nil)
	}
	if !validEnum("rng_distribution", string(distribution)) {
		fb.fail(name, ops, "invalid rng_distribution %q", distribution)
		return deadValue(nil)
	}
	if err := checkRng(at, bt, string(distribution)); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	rt := Tensor(at.DType, dims...)
	if err := checkSizedType("dimension", dims, rt); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	shape := Constant(fb, slices.Clone(dims), int64(len(dims)))
	return fb.emit1(name, []*Value{a, b, shape}, rt,
		NamedAttr{Name: "rng_distribution", Value: enumAttr("rng_distribution", string(distribution))})
}

// Tuple adds stablehlo.tuple.
func (fb *FuncBuilder) Tuple(values ...*Value) *Value {
	const name = "stablehlo.tuple"
	if !fb.checkOperands(name, values) {
		return deadValue(nil)
	}
	return fb.emit1(name, slices.Clone(values), TupleType{Elems: valueTypes(values)})
}

// GetTupleElement adds stablehlo.get_tuple_element.
func (fb *FuncBuilder) GetTupleElement(tuple *Value, index int) *Value {
	const name = "stablehlo.get_tuple_element"
	if !fb.check1(name, tuple) {
		return deadValue(nil)
	}
	tt, ok := tuple.Type.(TupleType)
	if !ok || index < 0 || index >= len(tt.Elems) {
		fb.fail(name, []*Value{tuple}, "index %d is not an element of the tuple", index)
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{tuple}, tt.Elems[index], NamedAttr{Name: "index", Value: I32Attr(int32(index))})
}

// CreateToken adds the deprecated stablehlo.create_token (AfterAll with no
// operands is the current spelling).
func (fb *FuncBuilder) CreateToken() *Value {
	const name = "stablehlo.create_token"
	if !fb.ok(name, nil) {
		return deadValue(TokenType{})
	}
	return fb.emit1(name, nil, TokenType{})
}

// AfterAll adds stablehlo.after_all: a token that follows every token given.
func (fb *FuncBuilder) AfterAll(tokens ...*Value) *Value {
	const name = "stablehlo.after_all"
	if !fb.checkOperands(name, tokens) {
		return deadValue(TokenType{})
	}
	for i, t := range tokens {
		if _, ok := t.Type.(TokenType); !ok {
			fb.fail(name, tokens, "operand %d is not a token", i)
			return deadValue(TokenType{})
		}
	}
	return fb.emit1(name, slices.Clone(tokens), TokenType{})
}

// CustomCallConfig holds custom_call's optional attributes.
type CustomCallConfig struct {
	// BackendConfig is nil, a StringAttr, or (with APIVersion 4) a DictAttr.
	BackendConfig Attribute
	// APIVersion: 0 leaves it out (ORIGINAL), 1 ORIGINAL, 2 STATUS_RETURNING,
	// 3 STATUS_RETURNING_UNIFIED, 4 TYPED_FFI.
	APIVersion    int32
	HasSideEffect bool
	// OperandLayouts and ResultLayouts (minor-to-major, one per operand and
	// result) are both given or both nil.
	OperandLayouts       [][]int64
	ResultLayouts        [][]int64
	OutputOperandAliases []OutputOperandAlias
	CalledComputations   []string
	// Attrs are extra (discardable) attributes, e.g. mhlo.backend_config:
	// named, each name once, none of those the fields above set.
	Attrs []NamedAttr
}

// CustomCall adds stablehlo.custom_call @target with explicit result types.
func (fb *FuncBuilder) CustomCall(target string, operands []*Value, resultTypes []Type, cfg CustomCallConfig) []*Value {
	const name = "stablehlo.custom_call"
	if !fb.checkOperands(name, operands) || !fb.checkTypes(name, operands, resultTypes) {
		return deadValues(resultTypes)
	}
	fail := func(format string, args ...any) []*Value {
		fb.fail(name, operands, format, args...)
		return deadValues(resultTypes)
	}
	if target == "" {
		return fail("call_target_name is empty")
	}
	if cfg.APIVersion < 0 || cfg.APIVersion > 4 {
		return fail("api_version %d out of range [0, 4]", cfg.APIVersion)
	}
	switch bc := cfg.BackendConfig.(type) {
	case nil:
	case StringAttr:
		if cfg.APIVersion == 4 && bc != "" {
			return fail("api_version 4 (typed FFI) takes a dictionary backend_config")
		}
	case DictAttr:
		if cfg.APIVersion != 4 {
			return fail("a dictionary backend_config needs api_version 4 (typed FFI)")
		}
	default:
		return fail("backend_config must be a StringAttr or DictAttr, got %T", cfg.BackendConfig)
	}
	if (cfg.OperandLayouts == nil) != (cfg.ResultLayouts == nil) {
		return fail("operand_layouts and result_layouts must be given together")
	}
	attrs := []NamedAttr{{Name: "call_target_name", Value: StringAttr(target)}}
	if cfg.HasSideEffect {
		attrs = append(attrs, NamedAttr{Name: "has_side_effect", Value: BoolAttr(true)})
	}
	if cfg.BackendConfig != nil {
		attrs = append(attrs, NamedAttr{Name: "backend_config", Value: cfg.BackendConfig})
	}
	if cfg.APIVersion != 0 {
		attrs = append(attrs, NamedAttr{Name: "api_version", Value: I32Attr(cfg.APIVersion)})
	}
	if cfg.CalledComputations != nil {
		cc := make(ArrayAttr, len(cfg.CalledComputations))
		for i, c := range cfg.CalledComputations {
			cc[i] = SymbolRefAttr(c)
		}
		attrs = append(attrs, NamedAttr{Name: "called_computations", Value: cc})
	}
	if cfg.OperandLayouts != nil {
		ol, err := layoutsAttr(cfg.OperandLayouts, valueTypes(operands))
		if err != "" {
			return fail("operand_layouts: %s", err)
		}
		rl, err := layoutsAttr(cfg.ResultLayouts, resultTypes)
		if err != "" {
			return fail("result_layouts: %s", err)
		}
		attrs = append(attrs, NamedAttr{Name: "operand_layouts", Value: ol}, NamedAttr{Name: "result_layouts", Value: rl})
	}
	if cfg.OutputOperandAliases != nil {
		al := make(ArrayAttr, len(cfg.OutputOperandAliases))
		for i, a := range cfg.OutputOperandAliases {
			if a.OperandIndex < 0 || a.OperandIndex >= int64(len(operands)) {
				return fail("output_operand_alias %d: operand index %d out of range", i, a.OperandIndex)
			}
			// The results form a tuple when there are several.
			var out Type = TupleType{Elems: resultTypes}
			if len(resultTypes) == 1 {
				out = resultTypes[0]
			}
			ot, oerr := tupleElement(out, a.OutputTupleIndices)
			if oerr != "" {
				return fail("output_operand_alias %d: output_tuple_indices %v: %s", i, a.OutputTupleIndices, oerr)
			}
			it, ierr := tupleElement(operands[a.OperandIndex].Type, a.OperandTupleIndices)
			if ierr != "" {
				return fail("output_operand_alias %d: operand_tuple_indices %v: %s", i, a.OperandTupleIndices, ierr)
			}
			if !TypesEqual(ot, it) {
				return fail("output_operand_alias %d: the output is %v, the operand it aliases %v", i, ot, it)
			}
			al[i] = OutputOperandAlias{OutputTupleIndices: slices.Clone(a.OutputTupleIndices), OperandIndex: a.OperandIndex, OperandTupleIndices: slices.Clone(a.OperandTupleIndices)}
		}
		attrs = append(attrs, NamedAttr{Name: "output_operand_aliases", Value: al})
	}
	for _, a := range cfg.Attrs {
		if a.Value == nil {
			return fail("attribute %s is nil", a.Name)
		}
		if field, ok := customCallFields[a.Name]; ok {
			return fail("attribute %s is set by %s, not by Attrs", a.Name, field)
		}
		attrs = append(attrs, a)
	}
	if err := checkAttrs(attrs); err != nil {
		return fail("%v", err)
	}
	return fb.emitN(name, slices.Clone(operands), slices.Clone(resultTypes), attrs...).Results
}

// customCallFields are the attributes of custom_call that CustomCall's
// own arguments set (and the argument that does).
var customCallFields = map[string]string{
	"call_target_name":       "the target argument",
	"has_side_effect":        "CustomCallConfig.HasSideEffect",
	"backend_config":         "CustomCallConfig.BackendConfig",
	"api_version":            "CustomCallConfig.APIVersion",
	"called_computations":    "CustomCallConfig.CalledComputations",
	"operand_layouts":        "CustomCallConfig.OperandLayouts",
	"result_layouts":         "CustomCallConfig.ResultLayouts",
	"output_operand_aliases": "CustomCallConfig.OutputOperandAliases",
}

func layoutsAttr(layouts [][]int64, types []Type) (ArrayAttr, string) {
	if len(layouts) != len(types) {
		return nil, "need one layout per value, got " + itoa(len(layouts)) + " for " + itoa(len(types))
	}
	out := make(ArrayAttr, len(layouts))
	for i, l := range layouts {
		r := 0
		if t, ok := types[i].(TensorType); ok {
			r = t.Rank()
		}
		if len(l) != r || checkAxes("layout", l, r, true) != nil {
			return nil, "layout " + itoa(i) + " is not a permutation of the value's dimensions"
		}
		out[i] = LayoutAttr(l...)
	}
	return out, ""
}

// DynamicBroadcastInDim adds stablehlo.dynamic_broadcast_in_dim with an
// explicit (static or dynamic) result type.
func (fb *FuncBuilder) DynamicBroadcastInDim(x, outputDims *Value, broadcastDims []int64, result TensorType) *Value {
	const name = "stablehlo.dynamic_broadcast_in_dim"
	if !fb.check2(name, x, outputDims) || !fb.checkTypes(name, []*Value{x, outputDims}, []Type{result}) {
		return deadValue(result)
	}
	ops := []*Value{x, outputDims}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadValue(result)
	}
	if err := fb.check1DInts(ts[1], result.Rank()); err != "" {
		fb.fail(name, ops, "output_dimensions %s", err)
		return deadValue(result)
	}
	if err := inferBroadcastInDim(ts[0], result.Dims, broadcastDims); err != nil || ts[0].DType != result.DType {
		if err == nil {
			fb.fail(name, ops, "result element type must be %s", ts[0].DType)
		} else {
			fb.fail(name, ops, "%v", err)
		}
		return deadValue(result)
	}
	return fb.emit1(name, ops, result, NamedAttr{Name: "broadcast_dimensions", Value: I64Array(broadcastDims...)})
}

func (fb *FuncBuilder) check1DInts(t TensorType, n int) string {
	if t.Rank() != 1 || !t.DType.IsInt() || !dimEq(t.Dims[0], int64(n)) {
		return "must be a 1-D integer tensor of " + itoa(n) + " elements, got " + t.String()
	}
	return ""
}

// DynamicIota adds stablehlo.dynamic_iota with an explicit result type.
func (fb *FuncBuilder) DynamicIota(outputShape *Value, dim int64, result TensorType) *Value {
	const name = "stablehlo.dynamic_iota"
	if !fb.check1(name, outputShape) || !fb.checkTypes(name, []*Value{outputShape}, []Type{result}) {
		return deadValue(result)
	}
	ops := []*Value{outputShape}
	st, ok := outputShape.TensorType()
	if !ok {
		fb.fail(name, ops, "output_shape must be a tensor")
		return deadValue(result)
	}
	if err := fb.check1DInts(st, result.Rank()); err != "" {
		fb.fail(name, ops, "output_shape %s", err)
		return deadValue(result)
	}
	if dim < 0 || dim >= int64(result.Rank()) {
		fb.fail(name, ops, "iota_dimension %d out of range", dim)
		return deadValue(result)
	}
	return fb.emit1(name, ops, result, NamedAttr{Name: "iota_dimension", Value: I64Attr(dim)})
}

// DynamicPad adds stablehlo.dynamic_pad with an explicit result type.
func (fb *FuncBuilder) DynamicPad(x, padValue, low, high, interior *Value, result TensorType) *Value {
	const name = "stablehlo.dynamic_pad"
	ops := []*Value{x, padValue, low, high, interior}
	if !fb.checkOperands(name, ops) || !fb.checkTypes(name, ops, []Type{result}) {
		return deadValue(result)
	}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadValue(result)
	}
	if ts[1].Rank() != 0 || ts[1].DType != ts[0].DType || result.DType != ts[0].DType || result.Rank() != ts[0].Rank() {
		fb.fail(name, ops, "padding_value must be a scalar and result must have the operand's element type and rank")
		return deadValue(result)
	}
	for _, t := range ts[2:] {
		if err := fb.check1DInts(t, ts[0].Rank()); err != "" {
			fb.fail(name, ops, "padding amounts %s", err)
			return deadValue(result)
		}
	}
	return fb.emit1(name, ops, result)
}

// DynamicReshape adds stablehlo.dynamic_reshape with an explicit result type.
func (fb *FuncBuilder) DynamicReshape(x, outputShape *Value, result TensorType) *Value {
	const name = "stablehlo.dynamic_reshape"
	ops := []*Value{x, outputShape}
	if !fb.check2(name, x, outputShape) || !fb.checkTypes(name, ops, []Type{result}) {
		return deadValue(result)
	}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadValue(result)
	}
	if err := fb.check1DInts(ts[1], result.Rank()); err != "" {
		fb.fail(name, ops, "output_shape %s", err)
		return deadValue(result)
	}
	if result.DType != ts[0].DType {
		fb.fail(name, ops, "result element type must be %s", ts[0].DType)
		return deadValue(result)
	}
	if a, b := ts[0].Size(), result.Size(); a >= 0 && b >= 0 && a != b {
		fb.fail(name, ops, "cannot reshape %d elements into %s", a, result)
		return deadValue(result)
	}
	return fb.emit1(name, ops, result)
}

// DynamicGather adds stablehlo.dynamic_gather (slice sizes as an operand)
// with an explicit result type.
func (fb *FuncBuilder) DynamicGather(x, startIndices, sliceSizes *Value, dn GatherDimensionNumbers, indicesAreSorted bool, result TensorType) *Value {
	const name = "stablehlo.dynamic_gather"
	ops := []*Value{x, startIndices, sliceSizes}
	if !fb.check3(name, x, startIndices, sliceSizes) || !fb.checkTypes(name, ops, []Type{result}) {
		return deadValue(result)
	}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadValue(result)
	}
	sizes, known := constantInts(sliceSizes)
	rt, err := inferDynamicGather(ts[0], ts[1], ts[2], dn, sizes, known)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(result)
	}
	if !TypesCompatible(rt, result) {
		fb.fail(name, ops, "result type %s, the operands give %s", result, rt)
		return deadValue(result)
	}
	return fb.emit1(name, ops, result,
		NamedAttr{Name: "dimension_numbers", Value: cloneGather(dn)},
		NamedAttr{Name: "indices_are_sorted", Value: BoolAttr(indicesAreSorted)})
}

// DynamicConv adds stablehlo.dynamic_conv (padding as an Nx2 operand) with
// an explicit result type; cfg.Padding is ignored.
func (fb *FuncBuilder) DynamicConv(lhs, rhs, padding *Value, cfg ConvConfig, result TensorType) *Value {
	const name = "stablehlo.dynamic_conv"
	ops := []*Value{lhs, rhs, padding}
	if !fb.check3(name, lhs, rhs, padding) || !fb.checkTypes(name, ops, []Type{result}) {
		return deadValue(result)
	}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadValue(result)
	}
	n := len(cfg.Dims.InputSpatialDims)
	if pt := ts[2]; pt.Rank() != 2 || !pt.DType.IsInt() || !dimEq(pt.Dims[0], int64(n)) || !dimEq(pt.Dims[1], 2) {
		fb.fail(name, ops, "padding must be a %dx2 integer tensor", n)
		return deadValue(result)
	}
	cfg.Padding = nil
	p := cfg.params()
	if _, err := inferConvolution(ts[0], ts[1], p, cfg.ResultDType); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(result)
	}
	if !fb.checkPrecision(name, ops, cfg.Precision) {
		return deadValue(result)
	}
	return fb.emit1(name, ops, result, cfg.attrs(p, false)...)
}

// RealDynamicSlice adds stablehlo.real_dynamic_slice with an explicit
// result type.
func (fb *FuncBuilder) RealDynamicSlice(x, start, limit, strides *Value, result TensorType) *Value {
	const name = "stablehlo.real_dynamic_slice"
	ops := []*Value{x, start, limit, strides}
	if !fb.checkOperands(name, ops) || !fb.checkTypes(name, ops, []Type{result}) {
		return deadValue(result)
	}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadValue(result)
	}
	for _, t := range ts[1:] {
		if err := fb.check1DInts(t, ts[0].Rank()); err != "" {
			fb.fail(name, ops, "indices %s", err)
			return deadValue(result)
		}
	}
	if result.DType != ts[0].DType || result.Rank() != ts[0].Rank() {
		fb.fail(name, ops, "result must have the operand's element type and rank")
		return deadValue(result)
	}
	return fb.emit1(name, ops, result)
}

// SetDimensionSize adds the deprecated stablehlo.set_dimension_size.
func (fb *FuncBuilder) SetDimensionSize(x, size *Value, dim int64) *Value {
	const name = "stablehlo.set_dimension_size"
	if !fb.check2(name, x, size) {
		return deadValue(nil)
	}
	ops := []*Value{x, size}
	t, ok := x.TensorType()
	if !ok || dim < 0 || dim >= int64(t.Rank()) || !TypesEqual(size.Type, Scalar(xla.Int32)) {
		fb.fail(name, ops, "need a tensor, a dimension in range and a tensor<i32> size")
		return deadValue(nil)
	}
	return fb.emit1(name, ops, x.Type, NamedAttr{Name: "dimension", Value: I64Attr(dim)})
}

// UniformQuantize adds stablehlo.uniform_quantize of a float (or
// quantized) tensor to a quantized tensor type of its shape (an
// OpaqueType such as "tensor<2x!quant.uniform<i8:f32, 0.1>>").
func (fb *FuncBuilder) UniformQuantize(x *Value, result Type) *Value {
	const name = "stablehlo.uniform_quantize"
	if x != nil && result != nil {
		in, inOK := quantizedDims(x.Type)
		if t, ok := x.Type.(TensorType); ok && t.DType.IsFloat() {
			in, inOK = t.Dims, true
		}
		out, outOK := quantizedDims(result)
		switch {
		case !inOK:
			fb.fail(name, []*Value{x}, "the operand must be a float or quantized tensor")
			return deadValue(result)
		case !outOK:
			fb.fail(name, []*Value{x}, "the result %v must be a quantized tensor type (tensor<...x!quant.uniform<...>>)", result)
			return deadValue(result)
		case !slices.Equal(in, out):
			fb.fail(name, []*Value{x}, "the result %v must have the operand's shape", result)
			return deadValue(result)
		}
	}
	return fb.explicitUnary(name, x, result)
}

// UniformDequantize adds stablehlo.uniform_dequantize of a quantized
// tensor to result, a float tensor type of its shape.
func (fb *FuncBuilder) UniformDequantize(x *Value, result Type) *Value {
	const name = "stablehlo.uniform_dequantize"
	if x != nil && result != nil {
		in, inOK := quantizedDims(x.Type)
		t, ok := result.(TensorType)
		switch {
		case !inOK:
			fb.fail(name, []*Value{x}, "the operand must be a quantized tensor (tensor<...x!quant.uniform<...>>)")
			return deadValue(result)
		case !ok || !t.DType.IsFloat() || !slices.Equal(in, t.Dims):
			fb.fail(name, []*Value{x}, "the result %v must be a float tensor of the operand's shape", result)
			return deadValue(result)
		}
	}
	return fb.explicitUnary(name, x, result)
}

// quantizedDims returns the dims of a quantized tensor type, an OpaqueType
// "tensor<AxBx!quant.uniform<...>>" (-1 for a dynamic dim).
func quantizedDims(t Type) ([]int64, bool) {
	o, ok := t.(OpaqueType)
	if !ok {
		return nil, false
	}
	s, ok := strings.CutPrefix(o.Text, "tensor<")
	if !ok {
		return nil, false
	}
	dims := []int64{}
	for !strings.HasPrefix(s, "!quant.") {
		d, rest, ok := strings.Cut(s, "x")
		if !ok {
			return nil, false
		}
		if d == "?" {
			dims = append(dims, DynamicDim)
		} else if n, err := strconv.ParseInt(d, 10, 64); err == nil && n >= 0 {
			dims = append(dims, n)
		} else {
			return nil, false
		}
		s = rest
	}
	return dims, true
}

func (fb *FuncBuilder) explicitUnary(name string, x *Value, result Type) *Value {
	if !fb.check1(name, x) || !fb.checkTypes(name, []*Value{x}, []Type{result}) {
		return deadValue(result)
	}
	return fb.emitUnary(name, result, x)
}

// ---- host and device communication ----

func (fb *FuncBuilder) checkToken(name string, ops []*Value, token *Value) bool {
	if _, ok := token.Type.(TokenType); !ok {
		fb.fail(name, ops, "token operand must be !stablehlo.token, got %s", token.Type)
		return false
	}
	return true
}

// Send adds stablehlo.send of values on channel and returns the new token.
func (fb *FuncBuilder) Send(values []*Value, token *Value, channel ChannelHandle, isHostTransfer bool) *Value {
	const name = "stablehlo.send"
	ops := append(slices.Clone(values), token)
	if !fb.checkOperands(name, ops) || !fb.checkToken(name, ops, token) {
		return deadValue(TokenType{})
	}
	return fb.emit1(name, ops, TokenType{},
		NamedAttr{Name: "channel_handle", Value: channel},
		NamedAttr{Name: "is_host_transfer", Value: BoolAttr(isHostTransfer)})
}

// Recv adds stablehlo.recv of values of the given types on channel and
// returns them and the new token.
func (fb *FuncBuilder) Recv(token *Value, channel ChannelHandle, isHostTransfer bool, types ...Type) ([]*Value, *Value) {
	const name = "stablehlo.recv"
	if !fb.check1(name, token) || !fb.checkTypes(name, []*Value{token}, types) || !fb.checkToken(name, []*Value{token}, token) {
		return deadValues(types), deadValue(TokenType{})
	}
	op := fb.emitN(name, []*Value{token}, append(slices.Clone(types), TokenType{}),
		NamedAttr{Name: "channel_handle", Value: channel},
		NamedAttr{Name: "is_host_transfer", Value: BoolAttr(isHostTransfer)})
	return op.Results[:len(types)], op.Results[len(types)]
}

// Infeed adds stablehlo.infeed of values of the given types and returns
// them and the new token.
func (fb *FuncBuilder) Infeed(token *Value, config string, types ...Type) ([]*Value, *Value) {
	const name = "stablehlo.infeed"
	if !fb.check1(name, token) || !fb.checkTypes(name, []*Value{token}, types) || !fb.checkToken(name, []*Value{token}, token) {
		return deadValues(types), deadValue(TokenType{})
	}
	var attrs []NamedAttr
	if config != "" {
		attrs = append(attrs, NamedAttr{Name: "infeed_config", Value: StringAttr(config)})
	}
	op := fb.emitN(name, []*Value{token}, append(slices.Clone(types), TokenType{}), attrs...)
	return op.Results[:len(types)], op.Results[len(types)]
}

// Outfeed adds stablehlo.outfeed of values and returns the new token.
func (fb *FuncBuilder) Outfeed(values []*Value, token *Value, config string) *Value {
	const name = "stablehlo.outfeed"
	ops := append(slices.Clone(values), token)
	if !fb.checkOperands(name, ops) || !fb.checkToken(name, ops, token) {
		return deadValue(TokenType{})
	}
	var attrs []NamedAttr
	if config != "" {
		attrs = append(attrs, NamedAttr{Name: "outfeed_config", Value: StringAttr(config)})
	}
	return fb.emit1(name, ops, TokenType{}, attrs...)
}

// ---- collectives ----

// Collective holds the process-group settings of a collective op.
type Collective struct {
	// ReplicaGroups lists the groups of process ids (replicas, partitions
	// or global device ids depending on Channel and UseGlobalDeviceIDs).
	ReplicaGroups [][]int64
	// Channel, when set, makes the op cross-partition (channel_handle).
	Channel *ChannelHandle
	// UseGlobalDeviceIDs sets use_global_device_ids.
	UseGlobalDeviceIDs bool
}

func (c Collective) attrs(withGlobal bool) []NamedAttr {
	attrs := []NamedAttr{{Name: "replica_groups", Value: ReplicaGroupsAttr(c.ReplicaGroups)}}
	if c.Channel != nil {
		attrs = append(attrs, NamedAttr{Name: "channel_handle", Value: *c.Channel})
	}
	if withGlobal && c.UseGlobalDeviceIDs {
		attrs = append(attrs, NamedAttr{Name: "use_global_device_ids", Value: UnitAttr{}})
	}
	return attrs
}

func (fb *FuncBuilder) checkCollective(name string, ops []*Value, c Collective) bool {
	if err := checkGroups(c.ReplicaGroups); err != nil {
		fb.fail(name, ops, "%v", err)
		return false
	}
	if c.UseGlobalDeviceIDs && (c.Channel == nil || c.Channel.Handle <= 0) {
		fb.fail(name, ops, "use_global_device_ids needs a channel_handle with a positive handle")
		return false
	}
	return true
}

// AllReduce adds stablehlo.all_reduce of operands within each process
// group; computation receives two scalars and returns their combination.
func (fb *FuncBuilder) AllReduce(operands []*Value, c Collective, computation func(rb *FuncBuilder, a, b *Value) *Value) []*Value {
	return fb.groupReduce("stablehlo.all_reduce", operands, c, computation)
}

// CollectiveReduce adds stablehlo.collective_reduce: like AllReduce, but
// only the first member of each process group receives the reduction; the
// other members receive zeros.
func (fb *FuncBuilder) CollectiveReduce(operands []*Value, c Collective, computation func(rb *FuncBuilder, a, b *Value) *Value) []*Value {
	return fb.groupReduce("stablehlo.collective_reduce", operands, c, computation)
}

// groupReduce emits all_reduce or collective_reduce (the same operands,
// attributes and region).
func (fb *FuncBuilder) groupReduce(name string, operands []*Value, c Collective, computation func(rb *FuncBuilder, a, b *Value) *Value) []*Value {
	n := len(operands)
	if !fb.checkOperands(name, operands) || !fb.checkCollective(name, operands, c) {
		return deadN(n)
	}
	ts, ok := fb.tensorOperands(name, operands, operands...)
	if !ok {
		return deadN(n)
	}
	if n == 0 {
		fb.fail(name, operands, "needs at least one operand")
		return deadN(n)
	}
	for _, t := range ts[1:] {
		if t.DType != ts[0].DType {
			fb.fail(name, operands, "operands must share one element type (the computation is over one scalar type)")
			return deadN(n)
		}
	}
	if computation == nil {
		fb.fail(name, operands, "computation closure is nil")
		return deadN(n)
	}
	scalar := TensorType{DType: ts[0].DType}
	region, rets, ok := fb.buildRegion(name, operands, "computation", []Type{scalar, scalar}, func(rb *FuncBuilder, args []*Value) []*Value {
		return []*Value{computation(rb, args[0], args[1])}
	})
	if !ok {
		return deadN(n)
	}
	if !TypesEqual(rets[0].Type, scalar) {
		fb.fail(name, operands, "computation must return %s, got %s", scalar, rets[0].Type)
		return deadN(n)
	}
	op := NewOp(name, slices.Clone(operands), valueTypes(operands), c.attrs(true)...)
	op.AddRegion(region)
	fb.emit(op)
	return op.Results
}

// AllGather adds stablehlo.all_gather: each operand's dimension dim grows
// by the group size.
func (fb *FuncBuilder) AllGather(operands []*Value, dim int64, c Collective) []*Value {
	const name = "stablehlo.all_gather"
	n := len(operands)
	if !fb.checkOperands(name, operands) || !fb.checkCollective(name, operands, c) {
		return deadN(n)
	}
	ts, ok := fb.tensorOperands(name, operands, operands...)
	if !ok {
		return deadN(n)
	}
	g, err := groupSize(c.ReplicaGroups)
	if err != nil {
		fb.fail(name, operands, "%v", err)
		return deadN(n)
	}
	types := make([]Type, n)
	for i, t := range ts {
		if dim < 0 || dim >= int64(t.Rank()) {
			fb.fail(name, operands, "all_gather_dim %d out of range for operand %d", dim, i)
			return deadN(n)
		}
		dims := slices.Clone(t.Dims)
		if dims[dim] != DynamicDim {
			var c dimCalc
			if dims[dim] = c.mul(dims[dim], g); c.overflow {
				fb.fail(name, operands, "all_gather_dim %d of operand %d times %d processes overflows int64", dim, i, g)
				return deadN(n)
			}
		}
		types[i] = TensorType{DType: t.DType, Dims: dims}
	}
	attrs := append([]NamedAttr{{Name: "all_gather_dim", Value: I64Attr(dim)}}, c.attrs(true)...)
	return fb.emitN(name, slices.Clone(operands), types, attrs...).Results
}

// ReduceScatter adds stablehlo.reduce_scatter: operand is reduced within
// each group with computation and split along dim by the group size.
func (fb *FuncBuilder) ReduceScatter(operand *Value, dim int64, c Collective, computation func(rb *FuncBuilder, a, b *Value) *Value) *Value {
	const name = "stablehlo.reduce_scatter"
	ops := []*Value{operand}
	if !fb.check1(name, operand) || !fb.checkCollective(name, ops, c) {
		return deadValue(nil)
	}
	t, ok := operand.TensorType()
	if !ok {
		fb.fail(name, ops, "operand must be a tensor")
		return deadValue(nil)
	}
	g, err := groupSize(c.ReplicaGroups)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	if dim < 0 || dim >= int64(t.Rank()) {
		fb.fail(name, ops, "scatter_dimension %d out of range", dim)
		return deadValue(nil)
	}
	dims := slices.Clone(t.Dims)
	if dims[dim] != DynamicDim {
		if dims[dim]%g != 0 {
			fb.fail(name, ops, "dimension %d (%d) is not divisible by the group size %d", dim, dims[dim], g)
			return deadValue(nil)
		}
		dims[dim] /= g
	}
	if computation == nil {
		fb.fail(name, ops, "computation closure is nil")
		return deadValue(nil)
	}
	scalar := TensorType{DType: t.DType}
	region, rets, ok := fb.buildRegion(name, ops, "computation", []Type{scalar, scalar}, func(rb *FuncBuilder, args []*Value) []*Value {
		return []*Value{computation(rb, args[0], args[1])}
	})
	if !ok {
		return deadValue(nil)
	}
	if !TypesEqual(rets[0].Type, scalar) {
		fb.fail(name, ops, "computation must return %s, got %s", scalar, rets[0].Type)
		return deadValue(nil)
	}
	attrs := append([]NamedAttr{{Name: "scatter_dimension", Value: I64Attr(dim)}}, c.attrs(true)...)
	op := NewOp(name, ops, []Type{TensorType{DType: t.DType, Dims: dims}}, attrs...)
	op.AddRegion(region)
	fb.emit(op)
	return op.Results[0]
}

// AllToAll adds stablehlo.all_to_all: each operand is split along
// splitDim into splitCount parts, scattered within the group, and the
// received parts are concatenated along concatDim.
func (fb *FuncBuilder) AllToAll(operands []*Value, splitDim, concatDim, splitCount int64, c Collective) []*Value {
	const name = "stablehlo.all_to_all"
	n := len(operands)
	if !fb.checkOperands(name, operands) || !fb.checkCollective(name, operands, c) {
		return deadN(n)
	}
	ts, ok := fb.tensorOperands(name, operands, operands...)
	if !ok {
		return deadN(n)
	}
	if splitCount <= 0 {
		fb.fail(name, operands, "split_count must be > 0")
		return deadN(n)
	}
	if c.UseGlobalDeviceIDs {
		fb.fail(name, operands, "all_to_all has no use_global_device_ids")
		return deadN(n)
	}
	if len(c.ReplicaGroups) > 0 {
		g, err := groupSize(c.ReplicaGroups)
		if err != nil {
			fb.fail(name, operands, "%v", err)
			return deadN(n)
		}
		if g != splitCount {
			fb.fail(name, operands, "split_count %d != replica group size %d", splitCount, g)
			return deadN(n)
		}
	}
	types := make([]Type, n)
	for i, t := range ts {
		r := int64(t.Rank())
		if splitDim < 0 || splitDim >= r || concatDim < 0 || concatDim >= r {
			fb.fail(name, operands, "split_dimension or concat_dimension out of range for operand %d", i)
			return deadN(n)
		}
		dims := slices.Clone(t.Dims)
		if dims[splitDim] != DynamicDim {
			if dims[splitDim]%splitCount != 0 {
				fb.fail(name, operands, "dimension %d (%d) is not divisible by split_count %d", splitDim, dims[splitDim], splitCount)
				return deadN(n)
			}
			dims[splitDim] /= splitCount
		}
		if dims[concatDim] != DynamicDim {
			dims[concatDim] *= splitCount
		}
		types[i] = TensorType{DType: t.DType, Dims: dims}
	}
	attrs := []NamedAttr{
		{Name: "split_dimension", Value: I64Attr(splitDim)},
		{Name: "concat_dimension", Value: I64Attr(concatDim)},
		{Name: "split_count", Value: I64Attr(splitCount)},
	}
	attrs = append(attrs, c.attrs(false)...)
	return fb.emitN(name, slices.Clone(operands), types, attrs...).Results
}

// CollectivePermute adds stablehlo.collective_permute: each (source,
// target) pair sends operand from source to target; processes that no
// pair targets receive zeros.
func (fb *FuncBuilder) CollectivePermute(operand *Value, sourceTargetPairs [][2]int64, channel *ChannelHandle) *Value {
	const name = "stablehlo.collective_permute"
	if !fb.check1(name, operand) {
		return deadValue(nil)
	}
	srcs, dsts := map[int64]bool{}, map[int64]bool{}
	for _, p := range sourceTargetPairs {
		if p[0] < 0 || p[1] < 0 || srcs[p[0]] || dsts[p[1]] {
			fb.fail(name, []*Value{operand}, "source_target_pairs must hold non-negative ids, each source and target at most once")
			return deadValue(nil)
		}
		srcs[p[0]], dsts[p[1]] = true, true
	}
	attrs := []NamedAttr{{Name: "source_target_pairs", Value: PaddingAttr(sourceTargetPairs)}}
	if channel != nil {
		attrs = append(attrs, NamedAttr{Name: "channel_handle", Value: *channel})
	}
	return fb.emit1(name, []*Value{operand}, operand.Type, attrs...)
}

// CollectiveBroadcast adds stablehlo.collective_broadcast: within each
// group, the first process's operand goes to all.
func (fb *FuncBuilder) CollectiveBroadcast(operand *Value, c Collective) *Value {
	const name = "stablehlo.collective_broadcast"
	if !fb.check1(name, operand) || !fb.checkCollective(name, []*Value{operand}, c) {
		return deadValue(nil)
	}
	if c.UseGlobalDeviceIDs {
		fb.fail(name, []*Value{operand}, "collective_broadcast has no use_global_device_ids")
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{operand}, operand.Type, c.attrs(false)...)
}

// ReplicaID adds stablehlo.replica_id: a tensor<ui32>.
func (fb *FuncBuilder) ReplicaID() *Value {
	const name = "stablehlo.replica_id"
	if !fb.ok(name, nil) {
		return deadValue(Scalar(xla.Uint32))
	}
	return fb.emit1(name, nil, Scalar(xla.Uint32))
}

// PartitionID adds stablehlo.partition_id: a tensor<ui32>.
func (fb *FuncBuilder) PartitionID() *Value {
	const name = "stablehlo.partition_id"
	if !fb.ok(name, nil) {
		return deadValue(Scalar(xla.Uint32))
	}
	return fb.emit1(name, nil, Scalar(xla.Uint32))
}

// Op adds any op by name with explicit result types and attributes: ops
// of other dialects, or StableHLO ops built by hand. Ops in the op table
// have their operand count, required attributes and result types checked
// as Verify checks them; a func.call's callee is checked by Build, as
// CallSymbol's. Terminators are not added this way (Return, or a region's
// closure, ends a block).
func (fb *FuncBuilder) Op(name string, operands []*Value, resultTypes []Type, attrs ...NamedAttr) []*Value {
	if !fb.checkOperands(name, operands) || !fb.checkTypes(name, operands, resultTypes) {
		return deadValues(resultTypes)
	}
	if name == "" {
		fb.fail(name, operands, "op name is empty")
		return deadValues(resultTypes)
	}
	if err := checkAttrs(attrs); err != nil {
		fb.fail(name, operands, "%v", err)
		return deadValues(resultTypes)
	}
	if mlirTerminators[name] {
		fb.fail(name, operands, "%s ends a block: use Return, or return the values from a region's closure", name)
		return deadValues(resultTypes)
	}
	probe := NewOp(name, operands, resultTypes, attrs...)
	if err := checkOpSpec(probe); err != nil {
		fb.fail(name, operands, "%v", err)
		return deadValues(resultTypes)
	}
	if _, err := CheckResultTypes(probe); err != nil {
		fb.fail(name, operands, "%v", err)
		return deadValues(resultTypes)
	}
	if _, ok := probe.Attr("callee").(SymbolRefAttr); name == "func.call" && !ok {
		fb.fail(name, operands, "func.call needs a callee attribute (a symbol)")
		return deadValues(resultTypes)
	}
	op := fb.emitN(name, slices.Clone(operands), slices.Clone(resultTypes), slices.Clone(attrs)...)
	if name == "func.call" && fb.s.b.err == nil {
		fb.s.b.noteSymCall(op) // Build checks the callee, as CallSymbol's
	}
	return op.Results
}

// tupleElement is the element of t that indices pick, one tuple level
// each; msg says what is wrong with them.
func tupleElement(t Type, indices []int64) (elem Type, msg string) {
	for _, i := range indices {
		tt, ok := t.(TupleType)
		if !ok {
			return nil, fmt.Sprintf("%v is not a tuple", t)
		}
		if i < 0 || i >= int64(len(tt.Elems)) {
			return nil, fmt.Sprintf("index %d is outside %v", i, t)
		}
		t = tt.Elems[i]
	}
	return t, ""
}
