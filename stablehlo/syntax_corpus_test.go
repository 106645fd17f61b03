package stablehlo

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/halo-ml/halo/xla"
)

// A corpus of programs covering every StableHLO op (and func, builtin,
// check and unknown-dialect ops), built with the IR directly. The printer
// and parser tests, the mlir-opt test and the fuzz seeds all use it.

type mlirCorpusProgram struct {
	name string
	m    *Module
}

// cpBlk appends ops to a block.
type cpBlk struct{ b *Block }

func (k cpBlk) op(name string, operands []*Value, results []Type, attrs ...NamedAttr) *Op {
	op := NewOp(name, operands, results, attrs...)
	k.b.Append(op)
	return op
}

// v adds a one-result op.
func (k cpBlk) v(name string, t Type, operands []*Value, attrs ...NamedAttr) *Value {
	return k.op(name, operands, []Type{t}, attrs...).Results[0]
}

func (k cpBlk) ret(name string, cpVals ...*Value) { k.op(name, cpVals, nil) }

// cpRegion builds a one-block region.
func cpRegion(argTypes []Type, fn func(k cpBlk, args []*Value)) *Region {
	b := NewBlock(argTypes...)
	fn(cpBlk{b}, b.Args)
	return NewRegion(b)
}

// cpFunc adds a function to m and returns a builder for its body.
func cpFunc(m *Module, name string, args []Type, results []Type) (*Func, cpBlk) {
	b := NewBlock(args...)
	f := &Func{Name: name, ResultTypes: results, Body: NewRegion(b)}
	m.AddFunc(f)
	return f, cpBlk{b}
}

func cpVals(vs ...*Value) []*Value { return vs }
func cpTypes(ts ...Type) []Type    { return ts }
func cpNA(name string, a Attribute) NamedAttr {
	return NamedAttr{Name: name, Value: a}
}
func cpI64s(v ...int64) DenseArrayAttr  { return DenseArrayAttr{DType: xla.Int64, Values: v} }
func cpBools(v ...int64) DenseArrayAttr { return DenseArrayAttr{DType: xla.Bool, Values: v} }
func cpEnum(e, v string) EnumAttr       { return EnumAttr{Dialect: "stablehlo", Enum: e, Value: v} }
func cpI64(v int64) IntAttr             { return IntAttr{Value: v, Type: xla.Int64} }
func cpI32(v int64) IntAttr             { return IntAttr{Value: v, Type: xla.Int32} }

// cpI64Dense returns a dense i64 tensor of the given dims.
func cpI64Dense(dims []int64, v ...int64) DenseElementsAttr {
	data := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(x))
	}
	return DenseElementsAttr{Type: Tensor(xla.Int64, dims...), Data: data}
}

func cpF32Data(v ...float32) []byte {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	return data
}

func cpReducer(dt xla.DType, op string) *Region {
	s := Scalar(dt)
	return cpRegion(cpTypes(s, s), func(k cpBlk, a []*Value) {
		k.ret("stablehlo.return", k.v(op, s, cpVals(a[0], a[1])))
	})
}

// mlirTestCorpus returns the corpus.
func mlirTestCorpus() []mlirCorpusProgram {
	var out []mlirCorpusProgram
	add := func(name string, m *Module) { out = append(out, mlirCorpusProgram{name, m}) }

	f32 := Tensor(xla.Float32, 4)
	i32 := Tensor(xla.Int32, 4)
	pred := Tensor(xla.Bool, 4)
	sf32 := Scalar(xla.Float32)
	si32 := Scalar(xla.Int32)
	c64 := Tensor(xla.Complex64, 4)

	// Elementwise ops.
	{
		m := &Module{Name: "elementwise"}
		_, k := cpFunc(m, "main", cpTypes(f32, f32, i32, pred, c64), cpTypes(f32))
		a := k.b.Args
		x := a[0]
		for _, n := range []string{"abs", "cbrt", "ceil", "cosine", "exponential", "exponential_minus_one",
			"floor", "log", "log_plus_one", "logistic", "negate", "round_nearest_afz", "round_nearest_even",
			"rsqrt", "sign", "sine", "sqrt", "square", "tan", "tanh"} {
			x = k.v("stablehlo."+n, f32, cpVals(x))
		}
		k.v("stablehlo.count_leading_zeros", i32, cpVals(a[2]))
		k.v("stablehlo.popcnt", i32, cpVals(a[2]))
		k.v("stablehlo.not", pred, cpVals(a[3]))
		k.v("stablehlo.is_finite", pred, cpVals(x))
		k.v("stablehlo.real", f32, cpVals(a[4]))
		k.v("stablehlo.imag", f32, cpVals(a[4]))
		k.v("stablehlo.abs", f32, cpVals(a[4]))
		k.v("stablehlo.complex", c64, cpVals(x, a[1]))
		k.v("stablehlo.convert", i32, cpVals(x))
		k.v("stablehlo.bitcast_convert", i32, cpVals(x))
		k.v("stablehlo.reduce_precision", f32, cpVals(x), cpNA("exponent_bits", cpI32(5)), cpNA("mantissa_bits", cpI32(10)))
		k.v("stablehlo.exponential", f32, cpVals(x), cpNA("result_accuracy", OpaqueAttr("#stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>")))
		y := x
		for _, n := range []string{"add", "atan2", "divide", "maximum", "minimum", "multiply", "power", "remainder", "subtract"} {
			y = k.v("stablehlo."+n, f32, cpVals(y, a[1]))
		}
		z := a[2]
		for _, n := range []string{"and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical"} {
			z = k.v("stablehlo."+n, i32, cpVals(z, a[2]))
		}
		k.v("stablehlo.and", pred, cpVals(a[3], a[3]))
		c := k.v("stablehlo.compare", pred, cpVals(y, x), cpNA("comparison_direction", cpEnum("comparison_direction", "LT")), cpNA("compare_type", cpEnum("comparison_type", "FLOAT")))
		k.v("stablehlo.compare", pred, cpVals(z, z), cpNA("comparison_direction", cpEnum("comparison_direction", "EQ")))
		s := k.v("stablehlo.select", f32, cpVals(c, y, x))
		k.v("stablehlo.select", f32, cpVals(k.v("stablehlo.constant", Scalar(xla.Bool), nil, cpNA("value", DenseElementsAttr{Type: Scalar(xla.Bool), Data: []byte{1}})), y, x))
		cl := k.v("stablehlo.clamp", f32, cpVals(x, s, a[1]))
		cl = k.v("stablehlo.clamp", f32, cpVals(k.v("stablehlo.constant", sf32, nil, cpNA("value", DenseElementsAttr{Type: sf32, Data: cpF32Data(0)})), cl, a[1]))
		k.ret("func.return", cl)
		add("elementwise", m)
	}

	// Constants of every element type and literal form.
	{
		m := &Module{Name: "constants"}
		_, k := cpFunc(m, "main", nil, nil)
		cst := func(t TensorType, data []byte, splat bool) {
			k.v("stablehlo.constant", t, nil, cpNA("value", DenseElementsAttr{Type: t, Data: data, Splat: splat}))
		}
		cst(Tensor(xla.Float32, 2, 2), cpF32Data(0, 1, 2.5, -3), false)
		cst(Tensor(xla.Float32, 3), cpF32Data(float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))), false)
		cst(Tensor(xla.Float32, 2), append(cpF32Data(0.1), 0x01, 0x00, 0xC0, 0x7F), false) // NaN payload
		cst(Tensor(xla.Float32, 7), cpF32Data(1), true)
		cst(Scalar(xla.Float32), cpF32Data(0.99999988), false)
		cst(Scalar(xla.Float32), cpF32Data(16777216), false)
		cst(Tensor(xla.Float64, 2), binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.1)), math.Float64bits(-1e300)), false)
		cst(Tensor(xla.Float16, 3), []byte{0x66, 0x2E, 0x00, 0x7C, 0x01, 0x00}, false)
		cst(Tensor(xla.BFloat16, 2), []byte{0x80, 0x3F, 0xC0, 0x7F}, false)
		for _, dt := range []xla.DType{xla.Float8E5M2, xla.Float8E4M3FN, xla.Float8E4M3B11FNUZ, xla.Float8E5M2FNUZ,
			xla.Float8E4M3FNUZ, xla.Float8E4M3, xla.Float8E3M4, xla.Float8E8M0FNU} {
			cst(Tensor(dt, 4), []byte{0x01, 0x38, 0x7E, 0x80}, false)
		}
		cst(Tensor(xla.Float4E2M1FN, 3), []byte{0x01, 0x07, 0x0F}, false)
		cst(Tensor(xla.Float6E2M3FN, 2), []byte{0x05, 0x3F}, false)
		cst(Tensor(xla.Float6E3M2FN, 2), []byte{0x05, 0x3F}, false)
		cst(Tensor(xla.Bool, 3), []byte{1, 0, 1}, false)
		cst(Tensor(xla.Bool, 5), []byte{1}, true)
		cst(Tensor(xla.Int2, 4), []byte{0xFE, 0xFF, 0, 1}, false)
		cst(Tensor(xla.Int4, 3), []byte{0xF8, 7, 0xFF}, false)
		cst(Tensor(xla.Uint2, 2), []byte{3, 1}, false)
		cst(Tensor(xla.Uint4, 2), []byte{15, 9}, false)
		cst(Tensor(xla.Int8, 2), []byte{0x80, 0x7F}, false)
		cst(Tensor(xla.Int16, 1), []byte{0x00, 0x80}, false)
		cst(Tensor(xla.Int32, 2, 1), []byte{0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0}, false)
		cst(Tensor(xla.Int64, 2), binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1<<63), 42), false)
		cst(Tensor(xla.Uint8, 1), []byte{0xFF}, false)
		cst(Tensor(xla.Uint16, 1), []byte{0xFF, 0xFF}, false)
		cst(Tensor(xla.Uint32, 1), []byte{0xFF, 0xFF, 0xFF, 0xFF}, false)
		cst(Tensor(xla.Uint64, 1), []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, false)
		cst(Tensor(xla.Complex64, 2), cpF32Data(1, 2, float32(math.NaN()), -0.5), false)
		cst(Tensor(xla.Complex128, 1), binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.5)), math.Float64bits(-2)), false)
		cst(Tensor(xla.Float32, 0), []byte{}, false)
		cst(Tensor(xla.Float32, 2, 0, 3), []byte{}, false)
		big := make([]float32, 120)
		for i := range big {
			big[i] = float32(i) * 0.25
		}
		cst(Tensor(xla.Float32, 4, 30), cpF32Data(big...), false)
		bigb := make([]byte, 130)
		for i := range bigb {
			bigb[i] = byte(i % 3 % 2)
		}
		cst(Tensor(xla.Bool, 130), bigb, false)
		bigi := make([]byte, 101)
		for i := range bigi {
			bigi[i] = byte(int8(i%16 - 8))
		}
		cst(Tensor(xla.Int4, 101), bigi, false)
		k.ret("func.return")
		add("constants", m)
	}

	// Shape ops.
	{
		m := &Module{Name: "shapes"}
		x := Tensor(xla.Float32, 2, 3)
		_, k := cpFunc(m, "main", cpTypes(x, si32, sf32, Tensor(xla.Int64, 2)), cpTypes(x))
		a := k.b.Args
		k.v("stablehlo.iota", Tensor(xla.Int32, 2, 3), nil, cpNA("iota_dimension", cpI64(1)))
		k.v("stablehlo.broadcast_in_dim", Tensor(xla.Float32, 4, 2, 3), cpVals(a[0]), cpNA("broadcast_dimensions", cpI64s(1, 2)))
		k.v("stablehlo.broadcast_in_dim", Tensor(xla.Float32, 2), cpVals(a[2]), cpNA("broadcast_dimensions", cpI64s()))
		k.v("stablehlo.broadcast", Tensor(xla.Float32, 5, 2, 3), cpVals(a[0]), cpNA("broadcast_sizes", cpI64s(5)))
		k.v("stablehlo.reshape", Tensor(xla.Float32, 6), cpVals(a[0]))
		k.v("stablehlo.transpose", Tensor(xla.Float32, 3, 2), cpVals(a[0]), cpNA("permutation", cpI64s(1, 0)))
		k.v("stablehlo.slice", Tensor(xla.Float32, 1, 2), cpVals(a[0]), cpNA("start_indices", cpI64s(1, 0)), cpNA("limit_indices", cpI64s(2, 3)), cpNA("strides", cpI64s(1, 2)))
		k.v("stablehlo.dynamic_slice", Tensor(xla.Float32, 1, 2), cpVals(a[0], a[1], a[1]), cpNA("slice_sizes", cpI64s(1, 2)))
		upd := k.v("stablehlo.constant", Tensor(xla.Float32, 1, 2), nil, cpNA("value", DenseElementsAttr{Type: Tensor(xla.Float32, 1, 2), Data: cpF32Data(1), Splat: true}))
		k.v("stablehlo.dynamic_update_slice", x, cpVals(a[0], upd, a[1], a[1]))
		k.v("stablehlo.concatenate", Tensor(xla.Float32, 4, 3), cpVals(a[0], a[0]), cpNA("dimension", cpI64(0)))
		k.v("stablehlo.pad", Tensor(xla.Float32, 3, 8), cpVals(a[0], a[2]), cpNA("edge_padding_low", cpI64s(0, 1)), cpNA("edge_padding_high", cpI64s(1, 2)), cpNA("interior_padding", cpI64s(0, 1)))
		k.v("stablehlo.reverse", x, cpVals(a[0]), cpNA("dimensions", cpI64s(0, 1)))
		k.v("stablehlo.get_dimension_size", si32, cpVals(a[0]), cpNA("dimension", cpI64(1)))
		k.v("stablehlo.set_dimension_size", x, cpVals(a[0], a[1]), cpNA("dimension", cpI64(1)))
		dyn := Tensor(xla.Float32, DynamicDim, 3)
		d := k.v("stablehlo.dynamic_broadcast_in_dim", dyn, cpVals(a[0], a[3]), cpNA("broadcast_dimensions", cpI64s(0, 1)), cpNA("known_expanding_dimensions", cpI64s(0)))
		k.v("stablehlo.dynamic_iota", Tensor(xla.Int32, DynamicDim, 3), cpVals(a[3]), cpNA("iota_dimension", cpI64(0)))
		k.v("stablehlo.dynamic_reshape", dyn, cpVals(a[0], a[3]))
		k.v("stablehlo.dynamic_pad", dyn, cpVals(d, a[2], a[3], a[3], a[3]))
		k.v("stablehlo.real_dynamic_slice", dyn, cpVals(d, a[3], a[3], a[3]))
		idx := OpaqueType{Text: "tensor<2xindex>"}
		k.v("stablehlo.compute_reshape_shape", idx, cpVals(k.v("foo.index", OpaqueType{Text: "index"}, nil), k.v("foo.shape", idx, nil)))
		k.ret("func.return", a[0])
		add("shapes", m)
	}

	// Indexing: gather, scatter, dynamic_gather, torch_index_select.
	{
		m := &Module{Name: "indexing"}
		x := Tensor(xla.Float32, 3, 4)
		ind := Tensor(xla.Int32, 2, 1)
		_, k := cpFunc(m, "main", cpTypes(x, ind, Tensor(xla.Float32, 2, 4)), cpTypes(Tensor(xla.Float32, 2, 4)))
		a := k.b.Args
		gdn := GatherDimensionNumbers{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}
		g := k.v("stablehlo.gather", Tensor(xla.Float32, 2, 4), cpVals(a[0], a[1]), cpNA("dimension_numbers", gdn), cpNA("slice_sizes", cpI64s(1, 4)), cpNA("indices_are_sorted", BoolAttr(true)))
		k.v("stablehlo.gather", Tensor(xla.Float32, 2, 4), cpVals(a[0], a[1]), cpNA("dimension_numbers", GatherDimensionNumbers{
			OffsetDims: []int64{1}, OperandBatchingDims: []int64{2}, StartIndicesBatchingDims: []int64{0}, StartIndexMap: []int64{0}}), cpNA("slice_sizes", cpI64s(1, 4)))
		sdn := ScatterDimensionNumbers{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
		sc := k.op("stablehlo.scatter", cpVals(a[0], a[1], a[2]), cpTypes(x), cpNA("scatter_dimension_numbers", sdn), cpNA("indices_are_sorted", BoolAttr(false)), cpNA("unique_indices", BoolAttr(true)))
		sc.AddRegion(cpReducer(xla.Float32, "stablehlo.add"))
		sc2 := k.op("stablehlo.scatter", cpVals(a[0], a[0], a[1], a[2], a[2]), cpTypes(x, x), cpNA("scatter_dimension_numbers", ScatterDimensionNumbers{
			UpdateWindowDims: []int64{1}, InputBatchingDims: []int64{1}, ScatterIndicesBatchingDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}}))
		sc2.AddRegion(cpRegion(cpTypes(sf32, sf32, sf32, sf32), func(k cpBlk, a []*Value) {
			k.ret("stablehlo.return", a[2], a[3])
		}))
		k.v("stablehlo.dynamic_gather", Tensor(xla.Float32, 2, 4), cpVals(a[0], a[1], k.v("stablehlo.constant", Tensor(xla.Int64, 2), nil, cpNA("value", cpI64Dense([]int64{2}, 1, 4)))), cpNA("dimension_numbers", gdn))
		k.v("stablehlo.torch_index_select", Tensor(xla.Float32, 2, 1, 4), cpVals(a[0], a[1]), cpNA("dim", cpI64(0)), cpNA("batch_dims", cpI64(0)))
		k.ret("func.return", g)
		add("indexing", m)
	}

	// Linear algebra.
	{
		m := &Module{Name: "linalg", Attrs: []NamedAttr{cpNA("mhlo.num_partitions", cpI32(1)), cpNA("mhlo.num_replicas", cpI32(1))}}
		mat := Tensor(xla.Float32, 2, 3, 4)
		_, k := cpFunc(m, "main", cpTypes(mat, Tensor(xla.Float32, 2, 4, 5), Tensor(xla.Float32, 3, 3), Tensor(xla.Float32, 4), Tensor(xla.Complex64, 8)), cpTypes(Tensor(xla.Float32, 2, 3, 5)))
		a := k.b.Args
		prec := ArrayAttr{cpEnum("precision", "DEFAULT"), cpEnum("precision", "HIGHEST")}
		dg := k.v("stablehlo.dot_general", Tensor(xla.Float32, 2, 3, 5), cpVals(a[0], a[1]), cpNA("dot_dimension_numbers", DotDimensionNumbers{
			LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0}, LhsContractingDims: []int64{2}, RhsContractingDims: []int64{1}}), cpNA("precision_config", prec))
		k.v("stablehlo.dot_general", Tensor(xla.Float32, 3, 3), cpVals(a[2], a[2]), cpNA("dot_dimension_numbers", DotDimensionNumbers{
			LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}), cpNA("algorithm", OpaqueAttr("#stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>")))
		k.v("stablehlo.dot", Scalar(xla.Float32), cpVals(a[3], a[3]), cpNA("precision_config", prec))
		k.v("stablehlo.dot", Tensor(xla.Float32, 3, 3), cpVals(a[2], a[2]))
		k.v("stablehlo.einsum", Tensor(xla.Float32, 3, 3), cpVals(a[2], a[2]), cpNA("einsum_config", StringAttr("ab,bc->ac")))
		k.v("stablehlo.unary_einsum", Tensor(xla.Float32, 3), cpVals(a[2]), cpNA("einsum_config", StringAttr("ab->a")))
		k.v("stablehlo.cholesky", Tensor(xla.Float32, 3, 3), cpVals(a[2]), cpNA("lower", BoolAttr(true)))
		k.v("stablehlo.cholesky", Tensor(xla.Float32, 3, 3), cpVals(a[2]))
		k.v("stablehlo.cholesky", Tensor(xla.Float32, 3, 3), cpVals(a[2]), cpNA("lower", BoolAttr(false)))
		k.v("stablehlo.triangular_solve", Tensor(xla.Float32, 3, 3), cpVals(a[2], a[2]), cpNA("left_side", BoolAttr(true)), cpNA("lower", BoolAttr(true)), cpNA("unit_diagonal", BoolAttr(false)), cpNA("transpose_a", cpEnum("transpose", "NO_TRANSPOSE")))
		k.v("stablehlo.fft", Tensor(xla.Complex64, 8), cpVals(a[4]), cpNA("fft_type", cpEnum("fft_type", "FFT")), cpNA("fft_length", cpI64s(8)))
		img := Tensor(xla.Float32, 1, 8, 8, 3)
		ker := Tensor(xla.Float32, 3, 3, 3, 16)
		conv := ConvDimensionNumbers{InputBatchDim: 0, InputFeatureDim: 3, InputSpatialDims: []int64{1, 2},
			KernelInputFeatureDim: 2, KernelOutputFeature: 3, KernelSpatialDims: []int64{0, 1},
			OutputBatchDim: 0, OutputFeatureDim: 3, OutputSpatialDims: []int64{1, 2}}
		ci := k.v("stablehlo.constant", img, nil, cpNA("value", DenseElementsAttr{Type: img, Data: cpF32Data(1), Splat: true}))
		ck := k.v("stablehlo.constant", ker, nil, cpNA("value", DenseElementsAttr{Type: ker, Data: cpF32Data(0.5), Splat: true}))
		k.v("stablehlo.convolution", Tensor(xla.Float32, 1, 8, 8, 16), cpVals(ci, ck),
			cpNA("window_strides", cpI64s(1, 1)), cpNA("padding", cpI64Dense([]int64{2, 2}, 1, 1, 1, 1)), cpNA("lhs_dilation", cpI64s(1, 1)),
			cpNA("rhs_dilation", cpI64s(1, 1)), cpNA("window_reversal", cpBools(0, 1)), cpNA("dimension_numbers", conv),
			cpNA("feature_group_count", cpI64(1)), cpNA("batch_group_count", cpI64(1)), cpNA("precision_config", prec))
		k.v("stablehlo.convolution", Tensor(xla.Float32, 1, 6, 6, 16), cpVals(ci, ck), cpNA("dimension_numbers", conv),
			cpNA("feature_group_count", cpI64(1)), cpNA("batch_group_count", cpI64(1)))
		// Not expressible in the compact dimension syntax: prints generically.
		k.v("stablehlo.convolution", Tensor(xla.Float32, 1, 6, 6, 16), cpVals(ci, ck), cpNA("dimension_numbers", ConvDimensionNumbers{InputSpatialDims: []int64{1}}),
			cpNA("feature_group_count", cpI64(1)), cpNA("batch_group_count", cpI64(1)), cpNA("padding", DenseElementsAttr{Type: Tensor(xla.Int64, 2, 2), Data: make([]byte, 8), Splat: true}))
		k.v("stablehlo.dynamic_conv", Tensor(xla.Float32, 1, 8, 8, 16), cpVals(ci, ck, k.v("stablehlo.constant", Tensor(xla.Int64, 2, 2), nil, cpNA("value", cpI64Dense([]int64{2, 2}, 1, 1, 1, 1)))),
			cpNA("window_strides", cpI64s(1, 1)), cpNA("dimension_numbers", conv), cpNA("feature_group_count", cpI64(1)), cpNA("batch_group_count", cpI64(1)))
		bn := Tensor(xla.Float32, 2, 3)
		ch := Tensor(xla.Float32, 3)
		xb := k.v("stablehlo.constant", bn, nil, cpNA("value", DenseElementsAttr{Type: bn, Data: cpF32Data(1), Splat: true}))
		cb := k.v("stablehlo.constant", ch, nil, cpNA("value", DenseElementsAttr{Type: ch, Data: cpF32Data(1), Splat: true}))
		eps := cpNA("epsilon", FloatAttr{Value: float64(float32(1e-5)), Type: xla.Float32})
		fi := cpNA("feature_index", cpI64(1))
		k.v("stablehlo.batch_norm_inference", bn, cpVals(xb, cb, cb, cb, cb), eps, fi)
		k.op("stablehlo.batch_norm_training", cpVals(xb, cb, cb), cpTypes(bn, ch, ch), eps, fi)
		k.op("stablehlo.batch_norm_grad", cpVals(xb, cb, cb, cb, xb), cpTypes(bn, ch, ch), eps, fi)
		k.ret("func.return", dg)
		add("linalg", m)
	}

	// Reductions, windows, sort, map.
	{
		m := &Module{Name: "reductions"}
		x := Tensor(xla.Float32, 4, 6)
		_, k := cpFunc(m, "main", cpTypes(x, sf32, Tensor(xla.Int32, 4, 6), si32), cpTypes(Tensor(xla.Float32, 4)))
		a := k.b.Args
		r := k.op("stablehlo.reduce", cpVals(a[0], a[1]), cpTypes(Tensor(xla.Float32, 4)), cpNA("dimensions", cpI64s(1)))
		r.AddRegion(cpReducer(xla.Float32, "stablehlo.add"))
		for _, n := range []string{"multiply", "maximum", "minimum"} {
			rr := k.op("stablehlo.reduce", cpVals(a[0], a[1]), cpTypes(Tensor(xla.Float32)), cpNA("dimensions", cpI64s(0, 1)))
			rr.AddRegion(cpReducer(xla.Float32, "stablehlo."+n))
		}
		for _, n := range []string{"and", "or", "xor"} {
			rr := k.op("stablehlo.reduce", cpVals(a[2], a[3]), cpTypes(Tensor(xla.Int32, 6)), cpNA("dimensions", cpI64s(0)))
			rr.AddRegion(cpReducer(xla.Int32, "stablehlo."+n))
		}
		// Long form: subtract is not commutative; two inputs (argmax-like).
		r2 := k.op("stablehlo.reduce", cpVals(a[0], a[1]), cpTypes(Tensor(xla.Float32, 4)), cpNA("dimensions", cpI64s(1)))
		r2.AddRegion(cpReducer(xla.Float32, "stablehlo.subtract"))
		r3 := k.op("stablehlo.reduce", cpVals(a[0], a[2], a[1], a[3]), cpTypes(Tensor(xla.Float32, 4), Tensor(xla.Int32, 4)), cpNA("dimensions", cpI64s(1)))
		r3.AddRegion(cpRegion(cpTypes(sf32, si32, sf32, si32), func(k cpBlk, b []*Value) {
			gt := k.v("stablehlo.compare", Scalar(xla.Bool), cpVals(b[0], b[2]), cpNA("comparison_direction", cpEnum("comparison_direction", "GT")))
			k.ret("stablehlo.return", k.v("stablehlo.select", sf32, cpVals(gt, b[0], b[2])), k.v("stablehlo.select", si32, cpVals(gt, b[1], b[3])))
		}))
		rw := k.op("stablehlo.reduce_window", cpVals(a[0], a[1]), cpTypes(Tensor(xla.Float32, 2, 3)),
			cpNA("window_dimensions", cpI64s(2, 2)), cpNA("window_strides", cpI64s(2, 2)), cpNA("base_dilations", cpI64s(1, 1)),
			cpNA("window_dilations", cpI64s(1, 1)), cpNA("padding", cpI64Dense([]int64{2, 2}, 0, 0, 0, 0)))
		rw.AddRegion(cpReducer(xla.Float32, "stablehlo.maximum"))
		ss := k.op("stablehlo.select_and_scatter", cpVals(a[0], k.v("stablehlo.constant", Tensor(xla.Float32, 2, 3), nil, cpNA("value", DenseElementsAttr{Type: Tensor(xla.Float32, 2, 3), Data: cpF32Data(1), Splat: true})), a[1]),
			cpTypes(x), cpNA("window_dimensions", cpI64s(2, 2)), cpNA("window_strides", cpI64s(2, 2)), cpNA("padding", cpI64Dense([]int64{2, 2}, 0, 0, 0, 0)))
		ss.AddRegion(cpRegion(cpTypes(sf32, sf32), func(k cpBlk, b []*Value) {
			k.ret("stablehlo.return", k.v("stablehlo.compare", Scalar(xla.Bool), cpVals(b[0], b[1]), cpNA("comparison_direction", cpEnum("comparison_direction", "GE"))))
		}))
		ss.AddRegion(cpReducer(xla.Float32, "stablehlo.add"))
		so := k.op("stablehlo.sort", cpVals(a[0], a[2]), cpTypes(x, Tensor(xla.Int32, 4, 6)), cpNA("dimension", cpI64(1)), cpNA("is_stable", BoolAttr(true)))
		so.AddRegion(cpRegion(cpTypes(sf32, sf32, si32, si32), func(k cpBlk, b []*Value) {
			k.ret("stablehlo.return", k.v("stablehlo.compare", Scalar(xla.Bool), cpVals(b[0], b[1]), cpNA("comparison_direction", cpEnum("comparison_direction", "LT")), cpNA("compare_type", cpEnum("comparison_type", "TOTALORDER"))))
		}))
		mp := k.op("stablehlo.map", cpVals(a[0], a[0]), cpTypes(x), cpNA("dimensions", cpI64s(0, 1)))
		mp.AddRegion(cpReducer(xla.Float32, "stablehlo.multiply"))
		k.ret("func.return", r.Results[0])
		add("reductions", m)
	}

	// Control flow and calls.
	{
		m := &Module{Name: "control"}
		_, cb := cpFunc(m, "callee", cpTypes(sf32, si32), cpTypes(sf32))
		cb.ret("func.return", cb.b.Args[0])
		m.Funcs[0].Private = true
		_, k := cpFunc(m, "main", cpTypes(sf32, si32, Scalar(xla.Bool)), cpTypes(sf32, si32))
		a := k.b.Args
		w := k.op("stablehlo.while", cpVals(a[1], a[0]), cpTypes(si32, sf32))
		w.AddRegion(cpRegion(cpTypes(si32, sf32), func(k cpBlk, b []*Value) {
			ten := k.v("stablehlo.constant", si32, nil, cpNA("value", DenseElementsAttr{Type: si32, Data: []byte{10, 0, 0, 0}}))
			k.ret("stablehlo.return", k.v("stablehlo.compare", Scalar(xla.Bool), cpVals(b[0], ten), cpNA("comparison_direction", cpEnum("comparison_direction", "LT")), cpNA("compare_type", cpEnum("comparison_type", "SIGNED"))))
		}))
		w.AddRegion(cpRegion(cpTypes(si32, sf32), func(k cpBlk, b []*Value) {
			one := k.v("stablehlo.constant", si32, nil, cpNA("value", DenseElementsAttr{Type: si32, Data: []byte{1, 0, 0, 0}}))
			c := k.op("func.call", cpVals(b[1], b[0]), cpTypes(sf32), cpNA("callee", SymbolRefAttr("callee")))
			k.ret("stablehlo.return", k.v("stablehlo.add", si32, cpVals(b[0], one)), c.Results[0])
		}))
		// A nested while (iterArg name conflicts).
		w2 := k.op("stablehlo.while", cpVals(a[1]), cpTypes(si32), cpNA("mhlo.frontend_attributes", DictAttr{cpNA("x", StringAttr("y"))}))
		w2.AddRegion(cpRegion(cpTypes(si32), func(k cpBlk, b []*Value) {
			k.ret("stablehlo.return", k.v("stablehlo.compare", Scalar(xla.Bool), cpVals(b[0], b[0]), cpNA("comparison_direction", cpEnum("comparison_direction", "NE"))))
		}))
		w2.AddRegion(cpRegion(cpTypes(si32), func(k cpBlk, b []*Value) {
			inner := k.op("stablehlo.while", cpVals(b[0]), cpTypes(si32))
			inner.AddRegion(cpRegion(cpTypes(si32), func(k cpBlk, c []*Value) {
				k.ret("stablehlo.return", k.v("stablehlo.compare", Scalar(xla.Bool), cpVals(c[0], b[0]), cpNA("comparison_direction", cpEnum("comparison_direction", "NE"))))
			}))
			inner.AddRegion(cpRegion(cpTypes(si32), func(k cpBlk, c []*Value) { k.ret("stablehlo.return", c[0]) }))
			k.ret("stablehlo.return", inner.Results[0])
		}))
		w0 := k.op("stablehlo.while", nil, nil)
		w0.AddRegion(cpRegion(nil, func(k cpBlk, _ []*Value) {
			k.ret("stablehlo.return", k.v("stablehlo.constant", Scalar(xla.Bool), nil, cpNA("value", DenseElementsAttr{Type: Scalar(xla.Bool), Data: []byte{0}})))
		}))
		w0.AddRegion(cpRegion(nil, func(k cpBlk, _ []*Value) { k.ret("stablehlo.return") }))
		iff := k.op("stablehlo.if", cpVals(a[2]), cpTypes(sf32, si32))
		iff.AddRegion(cpRegion(nil, func(k cpBlk, _ []*Value) { k.ret("stablehlo.return", a[0], a[1]) }))
		iff.AddRegion(cpRegion(nil, func(k cpBlk, _ []*Value) {
			k.ret("stablehlo.return", k.v("stablehlo.negate", sf32, cpVals(a[0])), a[1])
		}))
		cs := k.op("stablehlo.case", cpVals(a[1]), cpTypes(sf32))
		for i := 0; i < 3; i++ {
			cs.AddRegion(cpRegion(nil, func(k cpBlk, _ []*Value) { k.ret("stablehlo.return", a[0]) }))
		}
		ob := k.op("stablehlo.optimization_barrier", cpVals(iff.Results[0], iff.Results[1]), cpTypes(sf32, si32))
		k.op("stablehlo.optimization_barrier", nil, nil)
		cp := k.op("stablehlo.composite", cpVals(a[0], a[1]), cpTypes(sf32), cpNA("name", StringAttr("my.op")),
			cpNA("composite_attributes", DictAttr{cpNA("k", cpI64(1))}), cpNA("decomposition", SymbolRefAttr("callee")), cpNA("version", cpI32(1)))
		_ = cp
		k.ret("func.return", ob.Results[0], w.Results[0])
		add("control", m)
	}

	// Tuples, tokens, custom calls, communication, RNG.
	{
		m := &Module{Name: "effects", Globals: []*Op{NewOp("sdy.mesh", nil, nil, cpNA("sym_name", StringAttr("mesh")), cpNA("mesh", OpaqueAttr(`#sdy.mesh<["x"=2]>`)))}}
		tok := TokenType{}
		_, k := cpFunc(m, "main", cpTypes(f32, tok, Tensor(xla.Uint64, 2)), cpTypes(f32))
		a := k.b.Args
		tt := TupleType{Elems: []Type{f32, TupleType{Elems: []Type{si32}}}}
		inner := k.v("stablehlo.tuple", TupleType{Elems: []Type{si32}}, cpVals(k.v("stablehlo.constant", si32, nil, cpNA("value", DenseElementsAttr{Type: si32, Data: []byte{7, 0, 0, 0}}))))
		t := k.v("stablehlo.tuple", tt, cpVals(a[0], inner))
		k.v("stablehlo.tuple", TupleType{}, nil)
		e := k.v("stablehlo.get_tuple_element", f32, cpVals(t), cpNA("index", cpI32(0)))
		t0 := k.v("stablehlo.create_token", tok, nil)
		t1 := k.v("stablehlo.after_all", tok, cpVals(a[1], t0))
		k.v("stablehlo.after_all", tok, nil)
		k.v("stablehlo.custom_call", f32, cpVals(e), cpNA("call_target_name", StringAttr("foo")), cpNA("backend_config", StringAttr("cfg")),
			cpNA("has_side_effect", BoolAttr(true)), cpNA("api_version", cpI32(2)), cpNA("called_computations", ArrayAttr{SymbolRefAttr("main")}))
		k.op("stablehlo.custom_call", cpVals(t1, e), cpTypes(tok, f32), cpNA("call_target_name", StringAttr("xla_ffi_python_cpu_callback")),
			cpNA("backend_config", DictAttr{cpNA("index", IntAttr{Value: 1, Type: xla.Uint64})}), cpNA("api_version", cpI32(4)), cpNA("has_side_effect", BoolAttr(true)),
			cpNA("operand_layouts", ArrayAttr{OpaqueAttr("dense<> : tensor<0xindex>"), OpaqueAttr("dense<0> : tensor<1xindex>")}),
			cpNA("result_layouts", ArrayAttr{OpaqueAttr("dense<> : tensor<0xindex>"), OpaqueAttr("dense<0> : tensor<1xindex>")}),
			cpNA("output_operand_aliases", ArrayAttr{OutputOperandAlias{OperandIndex: 1}, OutputOperandAlias{OutputTupleIndices: []int64{1}, OperandIndex: 0, OperandTupleIndices: []int64{}}}))
		k.op("stablehlo.custom_call", nil, nil, cpNA("call_target_name", StringAttr("name with spaces-and-dashes")))
		k.v("stablehlo.custom_call", f32, cpVals(e), cpNA("call_target_name", StringAttr("__gpu$xla.gpu.triton")), cpNA("api_version", cpI32(1)), cpNA("backend_config", StringAttr("")),
			cpNA("mhlo.backend_config", DictAttr{cpNA("name", StringAttr("add_one")), cpNA("ir", StringAttr("\x00\x01\"\\\n")), cpNA("grid_x", cpI32(8)), cpNA("grid_y", cpI32(1)), cpNA("grid_z", cpI32(1)), cpNA("num_stages", cpI32(3)), cpNA("num_warps", cpI32(4))}))
		ch := ChannelHandle{Handle: 1, Type: 2}
		st := k.v("stablehlo.send", tok, cpVals(e, t1), cpNA("channel_handle", ch), cpNA("is_host_transfer", BoolAttr(true)))
		rv := k.op("stablehlo.recv", cpVals(st), cpTypes(f32, tok), cpNA("channel_handle", ChannelHandle{Handle: 2, Type: 3}), cpNA("is_host_transfer", BoolAttr(true)))
		inf := k.op("stablehlo.infeed", cpVals(rv.Results[1]), cpTypes(f32, tok), cpNA("infeed_config", StringAttr("")), cpNA("layout", ArrayAttr{ArrayAttr{cpI64(0)}, UnitAttr{}}))
		k.v("stablehlo.outfeed", tok, cpVals(inf.Results[0], inf.Results[1]), cpNA("outfeed_config", StringAttr("x")))
		k.op("stablehlo.trace", cpVals(e), nil, cpNA("tag", StringAttr("here")))
		rb := k.op("stablehlo.rng_bit_generator", cpVals(a[2]), cpTypes(Tensor(xla.Uint64, 2), Tensor(xla.Uint32, 4)), cpNA("rng_algorithm", cpEnum("rng_algorithm", "THREE_FRY")))
		k.op("stablehlo.rng_bit_generator", cpVals(rb.Results[0]), cpTypes(Tensor(xla.Uint64, 2), Tensor(xla.Uint32, 4)), cpNA("rng_algorithm", cpEnum("rng_algorithm", "DEFAULT")))
		z := k.v("stablehlo.constant", sf32, nil, cpNA("value", DenseElementsAttr{Type: sf32, Data: cpF32Data(0)}))
		shp := k.v("stablehlo.constant", Tensor(xla.Int64, 1), nil, cpNA("value", cpI64Dense([]int64{1}, 4)))
		k.v("stablehlo.rng", f32, cpVals(z, z, shp), cpNA("rng_distribution", cpEnum("rng_distribution", "NORMAL")))
		k.v("stablehlo.replica_id", Scalar(xla.Uint32), nil)
		k.v("stablehlo.partition_id", Scalar(xla.Uint32), nil)
		rg := cpNA("replica_groups", cpI64Dense([]int64{1, 2}, 0, 1))
		ar := k.op("stablehlo.all_reduce", cpVals(e), cpTypes(f32), rg, cpNA("channel_handle", ChannelHandle{Handle: 1, Type: 1}), cpNA("use_global_device_ids", UnitAttr{}))
		ar.AddRegion(cpReducer(xla.Float32, "stablehlo.add"))
		k.v("stablehlo.all_gather", Tensor(xla.Float32, 8), cpVals(e), cpNA("all_gather_dim", cpI64(0)), rg)
		cr := k.op("stablehlo.collective_reduce", cpVals(e), cpTypes(f32), rg, cpNA("channel_handle", ChannelHandle{Handle: 2, Type: 1}))
		cr.AddRegion(cpReducer(xla.Float32, "stablehlo.add"))
		rs := k.op("stablehlo.reduce_scatter", cpVals(e), cpTypes(Tensor(xla.Float32, 2)), cpNA("scatter_dimension", cpI64(0)), rg)
		rs.AddRegion(cpReducer(xla.Float32, "stablehlo.add"))
		k.v("stablehlo.all_to_all", f32, cpVals(e), cpNA("split_dimension", cpI64(0)), cpNA("concat_dimension", cpI64(0)), cpNA("split_count", cpI64(2)), rg)
		k.v("stablehlo.collective_permute", f32, cpVals(e), cpNA("source_target_pairs", cpI64Dense([]int64{2, 2}, 0, 1, 1, 0)), cpNA("channel_handle", ChannelHandle{Handle: 3, Type: 1}))
		k.v("stablehlo.collective_broadcast", f32, cpVals(e), rg)
		k.v("stablehlo.cross-replica-sum", f32, cpVals(e), rg)
		q := OpaqueType{Text: "tensor<4x!quant.uniform<i8:f32, 3.400000e+01:16>>"}
		qv := k.v("stablehlo.uniform_quantize", q, cpVals(e))
		k.v("stablehlo.uniform_dequantize", f32, cpVals(qv))
		k.op("check.expect_eq", cpVals(e, e), nil)
		k.op("check.expect_almost_eq", cpVals(e, e), nil, cpNA("tolerance", FloatAttr{Value: 0.001, Type: xla.Float64}))
		k.op("check.expect_close", cpVals(e, e), nil, cpNA("max_ulp_difference", cpI64(3)))
		k.op("check.expect_eq_const", cpVals(e), nil, cpNA("value", DenseElementsAttr{Type: f32, Data: cpF32Data(1, 2, 3, 4)}))
		k.op("check.expect_almost_eq_const", cpVals(e), nil, cpNA("value", DenseElementsAttr{Type: f32, Data: cpF32Data(1), Splat: true}), cpNA("tolerance", FloatAttr{Value: 0.1, Type: xla.Float64}))
		sh := k.v("stablehlo.custom_call", f32, cpVals(e), cpNA("call_target_name", StringAttr("Sharding")), cpNA("mhlo.sharding", StringAttr("{devices=[2]<=[2]}")))
		k.v("sdy.sharding_constraint", f32, cpVals(sh), cpNA("sharding", OpaqueAttr(`#sdy.sharding<@mesh, [{"x"}]>`)))
		u := k.op("foo.unknown_with_region", cpVals(e), cpTypes(f32, f32), cpNA("prop", cpI32(3)), cpNA("unit", UnitAttr{}))
		u.AddRegion(cpRegion(cpTypes(f32), func(k cpBlk, b []*Value) {
			k.ret("foo.yield", b[0])
		}))
		u.AddRegion(&Region{})
		u.Loc = Location{Name: "unknown op", File: "x.py", Line: 3, Col: 4}
		k.ret("func.return", u.Results[1])
		add("effects", m)
	}

	// Functions: visibility, attributes, declarations, locations, several results.
	{
		m := &Module{Loc: Location{File: "m.py", Line: 1, Col: 1}}
		f, k := cpFunc(m, "main", cpTypes(f32, si32), cpTypes(f32, si32))
		f.ArgAttrs = []DictAttr{nil, {cpNA("mhlo.sharding", StringAttr("{replicated}")), cpNA("mhlo.layout_mode", StringAttr("default"))}}
		f.ResultAttrs = []DictAttr{{cpNA("jax.result_info", StringAttr("[0]"))}}
		f.Attrs = []NamedAttr{cpNA("sym_visibility", StringAttr("public")), cpNA("my.attr", UnitAttr{})}
		f.Loc = Location{Name: "main"}
		x := k.v("stablehlo.add", f32, cpVals(k.b.Args[0], k.b.Args[0]))
		x.Op().Loc = Location{Name: "jit(f)/add", File: "f.py", Line: 10, Col: 3}
		y := k.v("stablehlo.multiply", f32, cpVals(x, x))
		y.Op().Loc = Location{Text: `callsite("a"("f.py":1:2) at "g.py":3:4)`}
		z := k.op("func.call", cpVals(y, k.b.Args[1]), cpTypes(f32, si32), cpNA("callee", SymbolRefAttr("two")))
		z.Loc = Location{File: "weird \"file\".py", Line: 0, Col: 7}
		k.ret("func.return", z.Results[0], z.Results[1])
		_, t := cpFunc(m, "two", cpTypes(f32, si32), cpTypes(f32, si32))
		m.Funcs[1].Private = true
		t.ret("func.return", t.b.Args[0], t.b.Args[1])
		decl := &Func{Name: "external", Private: true, ResultTypes: cpTypes(f32),
			Attrs: []NamedAttr{cpNA("function_type", TypeAttr{Type: FunctionType{Inputs: cpTypes(f32, TokenType{}), Results: cpTypes(f32)}})}}
		m.AddFunc(decl)
		_, e := cpFunc(m, "empty", nil, nil)
		e.ret("func.return")
		add("functions", m)
	}
	return out
}

// mlirFloatCorpus is a program of float constants: every bit pattern of
// the 8-, 6- and 4-bit formats and a spread of 16-, 32- and 64-bit ones,
// in groups small enough that MLIR prints them as decimals.
func mlirFloatCorpus() mlirCorpusProgram {
	m := &Module{Name: "floats"}
	_, k := cpFunc(m, "main", nil, nil)
	emit := func(dt xla.DType, patterns []uint64) {
		w := dt.HostBytes()
		for len(patterns) > 0 {
			n := min(len(patterns), 64)
			data := make([]byte, n*w)
			for i, p := range patterns[:n] {
				mlirPutBits(data[i*w:(i+1)*w], p)
			}
			t := Tensor(dt, int64(n))
			k.v("stablehlo.constant", t, nil, cpNA("value", DenseElementsAttr{Type: t, Data: data}))
			patterns = patterns[n:]
		}
	}
	for dt, f := range mlirFloatFormats {
		var ps []uint64
		switch w := f.width(); {
		case w <= 8:
			for p := uint64(0); p < 1<<uint(w); p++ {
				ps = append(ps, p)
			}
		default:
			x := uint64(0x9E3779B97F4A7C15)
			for i := 0; i < 256; i++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				ps = append(ps, x&(1<<uint(w)-1|uint64(w/64)*^uint64(0)))
			}
			// Boundaries: zero, min/max subnormal and normal, around 1.
			one := math.Float64bits(1)
			for _, v := range []float64{0, 1, -1, 0.1, 1.0 / 3, 65504, 3.4028234663852886e38, 1e-45, 2.2250738585072014e-308, 4.9e-324, 16777217, 123456789, 0.5, 1e10, 1e-10} {
				b, ok, _ := f.fromFloat64(v)
				if ok {
					ps = append(ps, b)
				}
			}
			_ = one
		}
		emit(dt, ps)
	}
	// Map iteration order is random: sort the function's ops by type for a
	// stable program.
	ops := k.b.Ops
	mlirSortOpsByType(ops)
	k.ret("func.return")
	return mlirCorpusProgram{"floats", m}
}

func mlirSortOpsByType(ops []*Op) {
	key := func(o *Op) string {
		return string(mlirAppendType(nil, o.Results[0].Type)) + string(mlirAppendAttr(nil, o.Attrs[0].Value, false))
	}
	for i := 1; i < len(ops); i++ {
		for j := i; j > 0 && key(ops[j]) < key(ops[j-1]); j-- {
			ops[j], ops[j-1] = ops[j-1], ops[j]
		}
	}
}

// mlirBuilderCorpus returns programs made with the Builder: the op
// table's kitchen sink (every op the builder has) and the benchmark
// programs.
func mlirBuilderCorpus(t testing.TB) []mlirCorpusProgram {
	var out []mlirCorpusProgram
	for _, c := range []struct {
		name  string
		build func() (*Module, error)
	}{
		{"builder_kitchen_sink", kitchenSink},
		{"builder_elementwise", func() (*Module, error) { return BuildElementwise(64) }},
		{"builder_mlp", func() (*Module, error) { return BuildMLP(4) }},
	} {
		m, err := c.build()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out = append(out, mlirCorpusProgram{c.name, m})
	}
	return out
}

// mlirAllPrograms is the hand-built corpus, the float corpus and the
// builder's programs.
func mlirAllPrograms(t testing.TB) []mlirCorpusProgram {
	progs := append(mlirTestCorpus(), mlirFloatCorpus())
	return append(progs, mlirBuilderCorpus(t)...)
}
