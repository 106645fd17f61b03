package stablehlo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// This file is the table of every StableHLO op: its operands, results,
// regions and inherent attributes with their names and kinds, exactly as
// `stablehlo-opt --mlir-print-op-generic` spells them. The builder, the
// printer, the parser and Verify all read it.
//
// Attribute representation conventions (what each kind holds in the IR):
//
//	attrInt            IntAttr{Value, Type: spec dtype} ("1 : i64", "4 : i32")
//	attrFloat          FloatAttr{Value, Type: spec dtype} ("1.0e-05 : f32")
//	attrBool           BoolAttr
//	attrString         StringAttr
//	attrUnit           UnitAttr
//	attrDict           DictAttr
//	attrArray          ArrayAttr (any elements)
//	attrI64Array       DenseArrayAttr{DType: Int64}   ("array<i64: 1, 2>")
//	attrBoolArray      DenseArrayAttr{DType: Bool}    ("array<i1: true, false>"), values 0/1
//	attrI64Elements    DenseElementsAttr of i64       ("dense<[[0, 1]]> : tensor<1x2xi64>"):
//	                   padding (Nx2), replica_groups (GxS), source_target_pairs (Nx2)
//	attrReplicaGroups  attrI64Elements, or OpaqueAttr of a
//	                   #stablehlo.replica_group_mesh_axes<...> (see ReplicaGroups)
//	attrElements       DenseElementsAttr of any type  (constant's value)
//	attrSymbol         SymbolRefAttr                  ("@f")
//	attrSymbolArray    ArrayAttr of SymbolRefAttr     ("[@f, @g]")
//	attrEnum           EnumAttr{"stablehlo", spec enum, "LT"} ("#stablehlo<comparison_direction LT>")
//	attrPrecision      ArrayAttr of EnumAttr{"stablehlo", "precision", "DEFAULT"|"HIGH"|"HIGHEST"}
//	attrDotDims        DotDimensionNumbers            ("#stablehlo.dot<...>")
//	attrGatherDims     GatherDimensionNumbers         ("#stablehlo.gather<...>")
//	attrScatterDims    ScatterDimensionNumbers        ("#stablehlo.scatter<...>")
//	attrConvDims       ConvDimensionNumbers           ("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>")
//	attrChannel        ChannelHandle                  ("#stablehlo.channel_handle<handle = 1, type = 1>")
//	attrAliases        ArrayAttr of OutputOperandAlias
//	attrLayouts        ArrayAttr of OpaqueAttr, each the exact text of an index
//	                   tensor: OpaqueAttr("dense<[1, 0]> : tensor<2xindex>")
//	                   (index is not an xla.DType; see LayoutAttr / LayoutOf)
//	attrStringOrDict   StringAttr or DictAttr         (custom_call backend_config)
//	attrOpaque         OpaqueAttr with the exact text  (#stablehlo.dot_algorithm<...>,
//	                   #stablehlo.result_accuracy<...>, and other attributes halo does
//	                   not model)
//
// custom_call's api_version is an I32EnumAttr in StableHLO, so the generic
// form prints it as a plain integer: "api_version = 4 : i32" (IntAttr Int32).
// Values: 0 API_VERSION_UNSPECIFIED, 1 ORIGINAL, 2 STATUS_RETURNING,
// 3 STATUS_RETURNING_UNIFIED, 4 TYPED_FFI.
//
// Discardable attributes that any op may carry (mhlo.sharding as StringAttr,
// mhlo.frontend_attributes as DictAttr, mhlo.backend_config as DictAttr ...)
// are not listed: every attribute of an op that is not in its spec is
// discardable (printed in the trailing {...} of the generic form); the
// listed ones are inherent (printed in <{...}> by recent MLIR).

// attrKind is the kind of value an inherent attribute holds.
type attrKind uint8

const (
	attrAny attrKind = iota
	attrInt
	attrFloat
	attrBool
	attrString
	attrUnit
	attrDict
	attrArray
	attrI64Array
	attrBoolArray
	attrI64Elements
	attrReplicaGroups
	attrElements
	attrType
	attrSymbol
	attrSymbolArray
	attrEnum
	attrPrecision
	attrDotDims
	attrGatherDims
	attrScatterDims
	attrConvDims
	attrChannel
	attrAliases
	attrLayouts
	attrStringOrDict
	attrOpaque
)

var attrKindNames = [...]string{
	attrAny:           "any",
	attrInt:           "IntAttr",
	attrFloat:         "FloatAttr",
	attrBool:          "BoolAttr",
	attrString:        "StringAttr",
	attrUnit:          "UnitAttr",
	attrDict:          "DictAttr",
	attrArray:         "ArrayAttr",
	attrI64Array:      "DenseArrayAttr<i64>",
	attrBoolArray:     "DenseArrayAttr<i1>",
	attrI64Elements:   "DenseElementsAttr<i64>",
	attrReplicaGroups: "DenseElementsAttr<i64>|#stablehlo.replica_group_mesh_axes",
	attrElements:      "DenseElementsAttr",
	attrType:          "TypeAttr",
	attrSymbol:        "SymbolRefAttr",
	attrSymbolArray:   "ArrayAttr<SymbolRefAttr>",
	attrEnum:          "EnumAttr",
	attrPrecision:     "ArrayAttr<EnumAttr precision>",
	attrDotDims:       "DotDimensionNumbers",
	attrGatherDims:    "GatherDimensionNumbers",
	attrScatterDims:   "ScatterDimensionNumbers",
	attrConvDims:      "ConvDimensionNumbers",
	attrChannel:       "ChannelHandle",
	attrAliases:       "ArrayAttr<OutputOperandAlias>",
	attrLayouts:       "ArrayAttr<OpaqueAttr dense index>",
	attrStringOrDict:  "StringAttr|DictAttr",
	attrOpaque:        "OpaqueAttr",
}

func (k attrKind) String() string {
	if int(k) < len(attrKindNames) {
		return attrKindNames[k]
	}
	return fmt.Sprintf("attrKind(%d)", uint8(k))
}

// attrSpec describes one inherent attribute of an op.
type attrSpec struct {
	name     string
	kind     attrKind
	dtype    xla.DType // IntAttr / FloatAttr element type
	enum     string    // EnumAttr enum name ("comparison_direction")
	optional bool      // may be absent (the op then uses its default)
}

// opSpec describes one op. Operand, result and region names follow the
// StableHLO spec; a name ending in "..." is variadic (zero or more).
type opSpec struct {
	name       string
	operands   []string
	results    []string
	regions    []string
	attrs      []attrSpec
	deprecated bool // on its way out of StableHLO; kept so old programs round-trip
}

// dialect is the dialect of the op ("stablehlo", "chlo"): the one its
// enum attributes (and precision_config's elements) belong to.
func (s *opSpec) dialect() string {
	d, _, _ := strings.Cut(s.name, ".")
	return d
}

// attr returns the spec of the attribute named name, or nil.
func (s *opSpec) attr(name string) *attrSpec {
	for i := range s.attrs {
		if s.attrs[i].name == name {
			return &s.attrs[i]
		}
	}
	return nil
}

// Shorthands used to write the table.
func req(name string, kind attrKind) attrSpec { return attrSpec{name: name, kind: kind} }
func opt(name string, kind attrKind) attrSpec {
	return attrSpec{name: name, kind: kind, optional: true}
}
func reqInt(name string, dt xla.DType) attrSpec {
	return attrSpec{name: name, kind: attrInt, dtype: dt}
}
func optInt(name string, dt xla.DType) attrSpec {
	return attrSpec{name: name, kind: attrInt, dtype: dt, optional: true}
}
func reqEnum(name, enum string) attrSpec {
	return attrSpec{name: name, kind: attrEnum, enum: enum}
}
func optEnum(name, enum string) attrSpec {
	return attrSpec{name: name, kind: attrEnum, enum: enum, optional: true}
}

var (
	operand1      = []string{"operand"}
	binaryOperand = []string{"lhs", "rhs"}
	result1       = []string{"result"}
	results       = []string{"results..."}
	// result_accuracy is an optional #stablehlo.result_accuracy<...> on
	// transcendental unary ops (kept as OpaqueAttr).
	resultAccuracy = []attrSpec{opt("result_accuracy", attrOpaque)}
	collectiveAttr = []attrSpec{
		req("replica_groups", attrReplicaGroups),
		opt("channel_handle", attrChannel),
		opt("use_global_device_ids", attrUnit),
	}
	convAttrs = []attrSpec{
		opt("window_strides", attrI64Array),
		opt("padding", attrI64Elements),
		opt("lhs_dilation", attrI64Array),
		opt("rhs_dilation", attrI64Array),
		opt("window_reversal", attrBoolArray),
		req("dimension_numbers", attrConvDims),
		reqInt("feature_group_count", xla.Int64),
		reqInt("batch_group_count", xla.Int64),
		opt("precision_config", attrPrecision),
	}
)

func unarySpec(name string, attrs ...attrSpec) opSpec {
	return opSpec{name: "stablehlo." + name, operands: operand1, results: result1, attrs: attrs}
}

func binarySpec(name string) opSpec {
	return opSpec{name: "stablehlo." + name, operands: binaryOperand, results: result1}
}

// opSpecs lists every StableHLO op (plus func.func's func.call and
// func.return), keyed by full name.
var opSpecs = buildOpSpecs()

func buildOpSpecs() map[string]*opSpec {
	list := []opSpec{
		// Elementwise unary.
		unarySpec("abs"),
		unarySpec("cbrt", resultAccuracy...),
		unarySpec("ceil"),
		unarySpec("convert"),
		unarySpec("cosine", resultAccuracy...),
		unarySpec("count_leading_zeros"),
		unarySpec("exponential", resultAccuracy...),
		unarySpec("exponential_minus_one", resultAccuracy...),
		unarySpec("floor"),
		unarySpec("imag"),
		{name: "stablehlo.is_finite", operands: []string{"x"}, results: []string{"y"}},
		unarySpec("log", resultAccuracy...),
		unarySpec("log_plus_one", resultAccuracy...),
		unarySpec("logistic", resultAccuracy...),
		unarySpec("negate"),
		unarySpec("not"),
		unarySpec("popcnt"),
		unarySpec("real"),
		unarySpec("round_nearest_afz"),
		unarySpec("round_nearest_even"),
		unarySpec("rsqrt", resultAccuracy...),
		unarySpec("sign"),
		unarySpec("sine", resultAccuracy...),
		unarySpec("sqrt", resultAccuracy...),
		unarySpec("square", resultAccuracy...),
		unarySpec("tan", resultAccuracy...),
		unarySpec("tanh", resultAccuracy...),
		unarySpec("bitcast_convert"),
		unarySpec("reduce_precision", reqInt("exponent_bits", xla.Int32), reqInt("mantissa_bits", xla.Int32)),
		unarySpec("uniform_quantize"),
		unarySpec("uniform_dequantize"),

		// Elementwise binary.
		binarySpec("add"),
		binarySpec("and"),
		binarySpec("atan2"),
		binarySpec("complex"),
		binarySpec("divide"),
		binarySpec("maximum"),
		binarySpec("minimum"),
		binarySpec("multiply"),
		binarySpec("or"),
		binarySpec("power"),
		binarySpec("remainder"),
		binarySpec("shift_left"),
		binarySpec("shift_right_arithmetic"),
		binarySpec("shift_right_logical"),
		binarySpec("subtract"),
		binarySpec("xor"),
		{name: "stablehlo.compare", operands: binaryOperand, results: result1, attrs: []attrSpec{
			reqEnum("comparison_direction", "comparison_direction"),
			optEnum("compare_type", "comparison_type"),
		}},
		{name: "stablehlo.select", operands: []string{"pred", "on_true", "on_false"}, results: result1},
		{name: "stablehlo.clamp", operands: []string{"min", "operand", "max"}, results: result1},

		// Constants and shape-producing ops.
		{name: "stablehlo.constant", results: []string{"output"}, attrs: []attrSpec{req("value", attrElements)}},
		{name: "stablehlo.iota", results: []string{"output"}, attrs: []attrSpec{reqInt("iota_dimension", xla.Int64)}},

		// Shape manipulation.
		{name: "stablehlo.broadcast_in_dim", operands: operand1, results: result1, attrs: []attrSpec{req("broadcast_dimensions", attrI64Array)}},
		{name: "stablehlo.broadcast", operands: operand1, results: result1, attrs: []attrSpec{req("broadcast_sizes", attrI64Array)}, deprecated: true},
		{name: "stablehlo.reshape", operands: operand1, results: result1},
		{name: "stablehlo.transpose", operands: operand1, results: result1, attrs: []attrSpec{req("permutation", attrI64Array)}},
		{name: "stablehlo.slice", operands: operand1, results: result1, attrs: []attrSpec{
			req("start_indices", attrI64Array), req("limit_indices", attrI64Array), req("strides", attrI64Array),
		}},
		{name: "stablehlo.dynamic_slice", operands: []string{"operand", "start_indices..."}, results: result1, attrs: []attrSpec{req("slice_sizes", attrI64Array)}},
		{name: "stablehlo.dynamic_update_slice", operands: []string{"operand", "update", "start_indices..."}, results: result1},
		{name: "stablehlo.concatenate", operands: []string{"inputs..."}, results: result1, attrs: []attrSpec{reqInt("dimension", xla.Int64)}},
		{name: "stablehlo.pad", operands: []string{"operand", "padding_value"}, results: result1, attrs: []attrSpec{
			req("edge_padding_low", attrI64Array), req("edge_padding_high", attrI64Array), req("interior_padding", attrI64Array),
		}},
		{name: "stablehlo.reverse", operands: operand1, results: result1, attrs: []attrSpec{req("dimensions", attrI64Array)}},
		{name: "stablehlo.get_dimension_size", operands: operand1, results: result1, attrs: []attrSpec{reqInt("dimension", xla.Int64)}},
		{name: "stablehlo.set_dimension_size", operands: []string{"operand", "size"}, results: result1, attrs: []attrSpec{reqInt("dimension", xla.Int64)}, deprecated: true},

		// Indexing.
		{name: "stablehlo.gather", operands: []string{"operand", "start_indices"}, results: result1, attrs: []attrSpec{
			req("dimension_numbers", attrGatherDims), req("slice_sizes", attrI64Array), opt("indices_are_sorted", attrBool),
		}},
		{name: "stablehlo.scatter", operands: []string{"inputs...", "scatter_indices", "updates..."}, results: results,
			regions: []string{"update_computation"}, attrs: []attrSpec{
				req("scatter_dimension_numbers", attrScatterDims), opt("indices_are_sorted", attrBool), opt("unique_indices", attrBool),
			}},
		{name: "stablehlo.torch_index_select", operands: []string{"operand", "index"}, results: result1, attrs: []attrSpec{
			reqInt("dim", xla.Int64), reqInt("batch_dims", xla.Int64),
		}, deprecated: true},

		// Linear algebra.
		{name: "stablehlo.dot_general", operands: binaryOperand, results: result1, attrs: []attrSpec{
			req("dot_dimension_numbers", attrDotDims), opt("precision_config", attrPrecision), opt("algorithm", attrOpaque),
		}},
		{name: "stablehlo.dot", operands: binaryOperand, results: result1, attrs: []attrSpec{opt("precision_config", attrPrecision)}, deprecated: true},
		{name: "stablehlo.einsum", operands: binaryOperand, results: result1, attrs: []attrSpec{req("einsum_config", attrString)}, deprecated: true},
		{name: "stablehlo.unary_einsum", operands: operand1, results: result1, attrs: []attrSpec{req("einsum_config", attrString)}, deprecated: true},
		{name: "stablehlo.convolution", operands: binaryOperand, results: result1, attrs: convAttrs},
		{name: "stablehlo.cholesky", operands: []string{"a"}, results: result1, attrs: []attrSpec{opt("lower", attrBool)}},
		{name: "stablehlo.triangular_solve", operands: []string{"a", "b"}, results: result1, attrs: []attrSpec{
			req("left_side", attrBool), req("lower", attrBool), req("unit_diagonal", attrBool), reqEnum("transpose_a", "transpose"),
		}},
		{name: "stablehlo.fft", operands: operand1, results: result1, attrs: []attrSpec{
			reqEnum("fft_type", "fft_type"), req("fft_length", attrI64Array),
		}},
		{name: "stablehlo.batch_norm_grad", operands: []string{"operand", "scale", "mean", "variance", "grad_output"},
			results: []string{"grad_operand", "grad_scale", "grad_offset"}, attrs: []attrSpec{
				{name: "epsilon", kind: attrFloat, dtype: xla.Float32}, reqInt("feature_index", xla.Int64),
			}},
		{name: "stablehlo.batch_norm_inference", operands: []string{"operand", "scale", "offset", "mean", "variance"},
			results: result1, attrs: []attrSpec{
				{name: "epsilon", kind: attrFloat, dtype: xla.Float32}, reqInt("feature_index", xla.Int64),
			}},
		{name: "stablehlo.batch_norm_training", operands: []string{"operand", "scale", "offset"},
			results: []string{"output", "batch_mean", "batch_var"}, attrs: []attrSpec{
				{name: "epsilon", kind: attrFloat, dtype: xla.Float32}, reqInt("feature_index", xla.Int64),
			}},

		// Reductions and windows.
		{name: "stablehlo.reduce", operands: []string{"inputs...", "init_values..."}, results: results,
			regions: []string{"body"}, attrs: []attrSpec{req("dimensions", attrI64Array)}},
		{name: "stablehlo.reduce_window", operands: []string{"inputs...", "init_values..."}, results: results,
			regions: []string{"body"}, attrs: []attrSpec{
				req("window_dimensions", attrI64Array), opt("window_strides", attrI64Array),
				opt("base_dilations", attrI64Array), opt("window_dilations", attrI64Array), opt("padding", attrI64Elements),
			}},
		{name: "stablehlo.select_and_scatter", operands: []string{"operand", "source", "init_value"}, results: result1,
			regions: []string{"select", "scatter"}, attrs: []attrSpec{
				opt("window_dimensions", attrI64Array), opt("window_strides", attrI64Array), opt("padding", attrI64Elements),
			}},
		{name: "stablehlo.sort", operands: []string{"inputs..."}, results: results, regions: []string{"comparator"},
			attrs: []attrSpec{optInt("dimension", xla.Int64), opt("is_stable", attrBool)}},
		{name: "stablehlo.map", operands: []string{"inputs..."}, results: result1, regions: []string{"computation"},
			attrs: []attrSpec{req("dimensions", attrI64Array)}},

		// Control flow.
		{name: "stablehlo.while", operands: []string{"operand..."}, results: results, regions: []string{"cond", "body"}},
		{name: "stablehlo.if", operands: []string{"pred"}, results: results, regions: []string{"true_branch", "false_branch"}},
		{name: "stablehlo.case", operands: []string{"index"}, results: results, regions: []string{"branches..."}},
		{name: "stablehlo.return", operands: []string{"results..."}},
		{name: "stablehlo.optimization_barrier", operands: []string{"operand..."}, results: results},
		{name: "stablehlo.composite", operands: []string{"inputs..."}, results: results, attrs: []attrSpec{
			req("name", attrString), opt("composite_attributes", attrDict), req("decomposition", attrSymbol),
			optInt("version", xla.Int32),
		}},
		{name: "func.call", operands: []string{"operands..."}, results: results, attrs: []attrSpec{
			req("callee", attrSymbol), opt("arg_attrs", attrArray), opt("res_attrs", attrArray), opt("no_inline", attrUnit),
		}},
		{name: "func.return", operands: []string{"operands..."}},

		// Random numbers.
		{name: "stablehlo.rng_bit_generator", operands: []string{"initial_state"}, results: []string{"output_state", "output"},
			attrs: []attrSpec{reqEnum("rng_algorithm", "rng_algorithm")}},
		{name: "stablehlo.rng", operands: []string{"a", "b", "shape"}, results: result1,
			attrs: []attrSpec{reqEnum("rng_distribution", "rng_distribution")}},

		// Tuples and tokens.
		{name: "stablehlo.tuple", operands: []string{"val..."}, results: result1},
		{name: "stablehlo.get_tuple_element", operands: operand1, results: result1, attrs: []attrSpec{reqInt("index", xla.Int32)}},
		{name: "stablehlo.create_token", results: []string{"output"}, deprecated: true},
		{name: "stablehlo.after_all", operands: []string{"inputs..."}, results: result1},

		// Custom calls.
		{name: "stablehlo.custom_call", operands: []string{"inputs..."}, results: results, attrs: []attrSpec{
			req("call_target_name", attrString),
			opt("has_side_effect", attrBool),
			opt("backend_config", attrStringOrDict),
			optInt("api_version", xla.Int32),
			opt("called_computations", attrSymbolArray),
			opt("operand_layouts", attrLayouts),
			opt("result_layouts", attrLayouts),
			opt("output_operand_aliases", attrAliases),
		}},

		// Dynamism.
		{name: "stablehlo.dynamic_broadcast_in_dim", operands: []string{"operand", "output_dimensions"}, results: result1, attrs: []attrSpec{
			req("broadcast_dimensions", attrI64Array),
			opt("known_expanding_dimensions", attrI64Array),
			opt("known_nonexpanding_dimensions", attrI64Array),
		}},
		{name: "stablehlo.dynamic_conv", operands: []string{"lhs", "rhs", "padding"}, results: result1, attrs: dynamicConvAttrs()},
		{name: "stablehlo.dynamic_gather", operands: []string{"operand", "start_indices", "slice_sizes"}, results: result1, attrs: []attrSpec{
			req("dimension_numbers", attrGatherDims), opt("indices_are_sorted", attrBool),
		}},
		{name: "stablehlo.dynamic_iota", operands: []string{"output_shape"}, results: result1, attrs: []attrSpec{reqInt("iota_dimension", xla.Int64)}},
		{name: "stablehlo.dynamic_pad", operands: []string{"operand", "padding_value", "edge_padding_low", "edge_padding_high", "interior_padding"}, results: result1},
		{name: "stablehlo.dynamic_reshape", operands: []string{"operand", "output_shape"}, results: result1},
		{name: "stablehlo.real_dynamic_slice", operands: []string{"operand", "start_indices", "limit_indices", "strides"}, results: result1},

		// Host and device communication.
		{name: "stablehlo.send", operands: []string{"inputs...", "token"}, results: result1, attrs: []attrSpec{
			req("channel_handle", attrChannel), opt("is_host_transfer", attrBool), opt("source_target_pairs", attrI64Elements),
		}},
		{name: "stablehlo.recv", operands: []string{"token"}, results: results, attrs: []attrSpec{
			req("channel_handle", attrChannel), opt("is_host_transfer", attrBool), opt("source_target_pairs", attrI64Elements),
		}},
		{name: "stablehlo.infeed", operands: []string{"token"}, results: results, attrs: []attrSpec{
			opt("infeed_config", attrString), opt("layout", attrArray),
		}},
		{name: "stablehlo.outfeed", operands: []string{"inputs...", "token"}, results: result1, attrs: []attrSpec{
			opt("outfeed_config", attrString),
		}},

		// Collectives.
		{name: "stablehlo.all_reduce", operands: []string{"operands..."}, results: results, regions: []string{"computation"}, attrs: collectiveAttr},
		// collective_reduce: the reduction lands on the first member of each
		// group; the other members get zeros.
		{name: "stablehlo.collective_reduce", operands: []string{"operands..."}, results: results, regions: []string{"computation"}, attrs: collectiveAttr},
		{name: "stablehlo.all_gather", operands: []string{"operands..."}, results: results,
			attrs: append([]attrSpec{reqInt("all_gather_dim", xla.Int64)}, collectiveAttr...)},
		{name: "stablehlo.reduce_scatter", operands: operand1, results: result1, regions: []string{"computation"},
			attrs: append([]attrSpec{reqInt("scatter_dimension", xla.Int64)}, collectiveAttr...)},
		{name: "stablehlo.all_to_all", operands: []string{"operands..."}, results: results, attrs: []attrSpec{
			reqInt("split_dimension", xla.Int64), reqInt("concat_dimension", xla.Int64), reqInt("split_count", xla.Int64),
			req("replica_groups", attrReplicaGroups), opt("channel_handle", attrChannel),
		}},
		{name: "stablehlo.collective_permute", operands: operand1, results: result1, attrs: []attrSpec{
			req("source_target_pairs", attrI64Elements), opt("channel_handle", attrChannel),
		}},
		{name: "stablehlo.collective_broadcast", operands: operand1, results: result1, attrs: []attrSpec{
			req("replica_groups", attrReplicaGroups), opt("channel_handle", attrChannel),
		}},
		{name: "stablehlo.cross-replica-sum", operands: operand1, results: result1, attrs: []attrSpec{
			req("replica_groups", attrReplicaGroups),
		}, deprecated: true},
		{name: "stablehlo.replica_id", results: result1},
		{name: "stablehlo.partition_id", results: result1},
	}
	m := make(map[string]*opSpec, len(list))
	for i := range list {
		m[list[i].name] = &list[i]
	}
	return m
}

func dynamicConvAttrs() []attrSpec {
	out := make([]attrSpec, 0, len(convAttrs)-1)
	for _, a := range convAttrs {
		if a.name != "padding" {
			out = append(out, a)
		}
	}
	return out
}

// Enum values of the StableHLO enum attributes, by enum name.
var enumValues = map[string][]string{
	"comparison_direction": {"EQ", "NE", "GE", "GT", "LE", "LT"},
	"comparison_type":      {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "WEAKORDER"},
	"precision":            {"DEFAULT", "HIGH", "HIGHEST"},
	"rng_algorithm":        {"DEFAULT", "THREE_FRY", "PHILOX"},
	"rng_distribution":     {"UNIFORM", "NORMAL"},
	"fft_type":             {"FFT", "IFFT", "RFFT", "IRFFT"},
	"transpose":            {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"},
}

// checkEnumValue reports whether e's value is one of its enum's.
func checkEnumValue(name string, e EnumAttr) error {
	if vals, ok := enumValues[e.Enum]; ok && !slices.Contains(vals, e.Value) {
		return fmt.Errorf("attribute %s: %q is not a %s (one of %s)", name, e.Value, e.Enum, strings.Join(vals, ", "))
	}
	return nil
}

// upgradeArrayAttrs rewrites op's attributes that StableHLO now spells
// array<i64: ...> / array<i1: ...> but text from before 2024 (older JAX
// exports) wrote as rank-1 dense elements, "dense<1> : tensor<1xi64>",
// into the current form, as StableHLO's own upgrade of old programs does.
func upgradeArrayAttrs(op *Op) {
	spec := opSpecs[op.Name]
	if spec == nil {
		return
	}
	for i, a := range op.Attrs {
		s := spec.attr(a.Name)
		if s == nil || (s.kind != attrI64Array && s.kind != attrBoolArray) {
			continue
		}
		d, ok := a.Value.(DenseElementsAttr)
		want := xla.Int64
		if s.kind == attrBoolArray {
			want = xla.Bool
		}
		if !ok || d.Type.Rank() > 1 || d.Type.DType != want {
			continue
		}
		vals, err := d.Int64s()
		if err != nil {
			continue // checkAttr names it
		}
		op.Attrs[i].Value = DenseArrayAttr{DType: want, Values: vals}
	}
}

// checkAttr reports whether a has the kind spec wants: for an integer,
// the width the spec gives it (spec.dtype: "5 : i64" is not an i32
// attribute); for an enum (and precision_config's elements), an enum of
// dialect, the op's ("#mhlo<comparison_direction GT>" is not a
// stablehlo.compare's).
func checkAttr(dialect string, spec *attrSpec, a Attribute) error {
	bad := func() error {
		return fmt.Errorf("attribute %s must be %s, got %T", spec.name, spec.kind, a)
	}
	badDialect := func(e EnumAttr) error {
		return fmt.Errorf("attribute %s must be a #%s<%s ...> enum, got #%s<%s %s>", spec.name, dialect, e.Enum, e.Dialect, e.Enum, e.Value)
	}
	switch spec.kind {
	case attrAny:
		return nil
	case attrInt:
		i, ok := a.(IntAttr)
		if !ok {
			return bad()
		}
		if spec.dtype != xla.Invalid && i.Type != spec.dtype {
			return fmt.Errorf("attribute %s must be an %s integer, got %d : %s", spec.name, mlirDTypeName(spec.dtype), i.Value, mlirDTypeName(i.Type))
		}
	case attrFloat:
		if _, ok := a.(FloatAttr); !ok {
			return bad()
		}
	case attrBool:
		if _, ok := a.(BoolAttr); !ok {
			return bad()
		}
	case attrString:
		if _, ok := a.(StringAttr); !ok {
			return bad()
		}
	case attrUnit:
		if _, ok := a.(UnitAttr); !ok {
			return bad()
		}
	case attrDict:
		if _, ok := a.(DictAttr); !ok {
			return bad()
		}
	case attrArray:
		if _, ok := a.(ArrayAttr); !ok {
			return bad()
		}
	case attrI64Array, attrBoolArray:
		d, ok := a.(DenseArrayAttr)
		if !ok {
			return bad()
		}
		want := xla.Int64
		if spec.kind == attrBoolArray {
			want = xla.Bool
		}
		if d.DType != want {
			return fmt.Errorf("attribute %s must be array<%s: ...>, got array<%s: ...>", spec.name, want, d.DType)
		}
	case attrReplicaGroups:
		if o, ok := a.(OpaqueAttr); ok && strings.HasPrefix(string(o), "#stablehlo.replica_group_mesh_axes<") {
			break // its groups are checked with the op's (collectiveGroupSize)
		}
		d, ok := a.(DenseElementsAttr)
		if !ok {
			return bad()
		}
		if d.Type.DType != xla.Int64 {
			return fmt.Errorf("attribute %s must have i64 elements, got %s", spec.name, d.Type)
		}
	case attrI64Elements:
		d, ok := a.(DenseElementsAttr)
		if !ok {
			return bad()
		}
		if d.Type.DType != xla.Int64 {
			return fmt.Errorf("attribute %s must have i64 elements, got %s", spec.name, d.Type)
		}
	case attrElements:
		if _, ok := a.(DenseElementsAttr); !ok {
			if _, ok := a.(OpaqueAttr); !ok {
				return bad()
			}
		}
	case attrType:
		if _, ok := a.(TypeAttr); !ok {
			return bad()
		}
	case attrSymbol:
		if _, ok := a.(SymbolRefAttr); !ok {
			return bad()
		}
	case attrSymbolArray:
		arr, ok := a.(ArrayAttr)
		if !ok {
			return bad()
		}
		for _, e := range arr {
			if _, ok := e.(SymbolRefAttr); !ok {
				return bad()
			}
		}
	case attrEnum:
		e, ok := a.(EnumAttr)
		if !ok {
			return bad()
		}
		if e.Enum != spec.enum {
			return fmt.Errorf("attribute %s must be a %s enum, got %s", spec.name, spec.enum, e.Enum)
		}
		if e.Dialect != dialect {
			return badDialect(e)
		}
		return checkEnumValue(spec.name, e)
	case attrPrecision:
		arr, ok := a.(ArrayAttr)
		if !ok {
			return bad()
		}
		for _, e := range arr {
			if en, ok := e.(EnumAttr); !ok || en.Enum != "precision" {
				return bad()
			} else if en.Dialect != dialect {
				return badDialect(en)
			} else if err := checkEnumValue(spec.name, en); err != nil {
				return err
			}
		}
	case attrDotDims:
		if _, ok := a.(DotDimensionNumbers); !ok {
			return bad()
		}
	case attrGatherDims:
		if _, ok := a.(GatherDimensionNumbers); !ok {
			return bad()
		}
	case attrScatterDims:
		if _, ok := a.(ScatterDimensionNumbers); !ok {
			return bad()
		}
	case attrConvDims:
		if _, ok := a.(ConvDimensionNumbers); !ok {
			return bad()
		}
	case attrChannel:
		if _, ok := a.(ChannelHandle); !ok {
			return bad()
		}
	case attrAliases:
		arr, ok := a.(ArrayAttr)
		if !ok {
			return bad()
		}
		for _, e := range arr {
			if _, ok := e.(OutputOperandAlias); !ok {
				return bad()
			}
		}
	case attrLayouts:
		if _, ok := a.(ArrayAttr); !ok {
			return bad()
		}
	case attrStringOrDict:
		switch a.(type) {
		case StringAttr, DictAttr:
		default:
			return bad()
		}
	case attrOpaque:
		// Any attribute halo can hold is acceptable.
	}
	return nil
}

// LayoutAttr returns the attribute custom_call's operand_layouts and
// result_layouts hold for one operand: the minor-to-major dimension order
// as an index tensor, kept as its exact MLIR text (index is not an
// xla.DType), e.g. OpaqueAttr("dense<[1, 0]> : tensor<2xindex>").
func LayoutAttr(minorToMajor ...int64) OpaqueAttr {
	var b []byte
	b = append(b, "dense<"...)
	switch len(minorToMajor) {
	case 0:
	case 1:
		b = strconv.AppendInt(b, minorToMajor[0], 10)
	default:
		b = append(b, '[')
		for i, d := range minorToMajor {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, d, 10)
		}
		b = append(b, ']')
	}
	b = append(b, "> : tensor<"...)
	b = strconv.AppendInt(b, int64(len(minorToMajor)), 10)
	b = append(b, "xindex>"...)
	return OpaqueAttr(b)
}

// LayoutOf reads back a layout written by LayoutAttr (or parsed from
// text): the minor-to-major order. ok is false for anything else.
func LayoutOf(a Attribute) (minorToMajor []int64, ok bool) {
	var s string
	switch a := a.(type) {
	case OpaqueAttr:
		s = string(a)
	case DenseElementsAttr:
		if !a.Type.DType.IsInt() {
			return nil, false
		}
		return denseInts(a), true
	default:
		return nil, false
	}
	s = strings.TrimSpace(s)
	body, rest, found := strings.Cut(strings.TrimPrefix(s, "dense<"), ">")
	if !found || !strings.HasPrefix(s, "dense<") {
		return nil, false
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, ":") {
		return nil, false
	}
	ty := strings.TrimSpace(rest[1:])
	if !strings.HasPrefix(ty, "tensor<") || !strings.HasSuffix(ty, "xindex>") {
		return nil, false
	}
	n, err := strconv.ParseInt(ty[len("tensor<"):len(ty)-len("xindex>")], 10, 64)
	if err != nil || n < 0 {
		return nil, false
	}
	body = strings.TrimSpace(body)
	splat := !strings.HasPrefix(body, "[")
	body = strings.TrimSuffix(strings.TrimPrefix(body, "["), "]")
	var vals []int64
	if strings.TrimSpace(body) != "" {
		for _, f := range strings.Split(body, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, false
			}
			vals = append(vals, v)
		}
	}
	if splat && len(vals) == 1 {
		out := make([]int64, n)
		for i := range out {
			out[i] = vals[0]
		}
		return out, true
	}
	if int64(len(vals)) != n {
		return nil, false
	}
	return vals, true
}
