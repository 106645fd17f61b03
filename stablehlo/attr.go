package stablehlo

import "github.com/halo-ml/halo/xla"

// Attribute is an MLIR attribute value. The concrete types below cover what
// StableHLO uses; OpaqueAttr keeps anything else as text.
type Attribute interface{ isAttribute() }

// NamedAttr is one entry of an attribute dictionary.
type NamedAttr struct {
	Name  string
	Value Attribute
}

// IntAttr is a typed integer: "5 : i64". Unsigned values are stored in
// Value as their bit pattern.
type IntAttr struct {
	Value int64
	Type  xla.DType // element type; Int64 when printed without a type
}

// FloatAttr is a typed float: "1.5 : f32".
type FloatAttr struct {
	Value float64
	Type  xla.DType
}

// BoolAttr is "true" or "false".
type BoolAttr bool

// StringAttr is a quoted string.
type StringAttr string

// UnitAttr is a present-but-valueless attribute (printed as its name alone).
type UnitAttr struct{}

// ArrayAttr is "[a, b, ...]".
type ArrayAttr []Attribute

// DictAttr is "{name = value, ...}".
type DictAttr []NamedAttr

// Get returns the entry named name, or nil.
func (d DictAttr) Get(name string) Attribute {
	for _, a := range d {
		if a.Name == name {
			return a.Value
		}
	}
	return nil
}

// DenseArrayAttr is "array<i64: 1, 2>" (also i1, i32 ...; booleans as 0/1).
type DenseArrayAttr struct {
	DType  xla.DType
	Values []int64
}

// DenseFloatArrayAttr is "array<f32: 1.0, 2.0>".
type DenseFloatArrayAttr struct {
	DType  xla.DType
	Values []float64
}

// DenseElementsAttr is "dense<...> : tensor<...>". Data holds the elements
// in row-major order in host layout: little-endian, one byte per element
// for booleans and sub-byte types, complex numbers as (real, imag) pairs.
// A splat is stored as a single element with Splat set.
type DenseElementsAttr struct {
	Type  TensorType
	Data  []byte
	Splat bool
}

// TypeAttr is a type used as an attribute (e.g. a function_type).
type TypeAttr struct{ Type Type }

// SymbolRefAttr is "@name".
type SymbolRefAttr string

// EnumAttr is a dialect enum such as "#stablehlo<comparison_direction LT>":
// Dialect "stablehlo", Enum "comparison_direction", Value "LT".
type EnumAttr struct {
	Dialect string
	Enum    string
	Value   string
}

// OpaqueAttr is an attribute halo does not model, kept as its exact text
// (e.g. "#sdy.sharding<@mesh, [{"x"}]>").
type OpaqueAttr string

// DotDimensionNumbers is #stablehlo.dot<...>.
type DotDimensionNumbers struct {
	LhsBatchingDims, RhsBatchingDims       []int64
	LhsContractingDims, RhsContractingDims []int64
}

// GatherDimensionNumbers is #stablehlo.gather<...>.
type GatherDimensionNumbers struct {
	OffsetDims               []int64
	CollapsedSliceDims       []int64
	OperandBatchingDims      []int64
	StartIndicesBatchingDims []int64
	StartIndexMap            []int64
	IndexVectorDim           int64
}

// ScatterDimensionNumbers is #stablehlo.scatter<...>.
type ScatterDimensionNumbers struct {
	UpdateWindowDims           []int64
	InsertedWindowDims         []int64
	InputBatchingDims          []int64
	ScatterIndicesBatchingDims []int64
	ScatterDimsToOperandDims   []int64
	IndexVectorDim             int64
}

// ConvDimensionNumbers is #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>.
type ConvDimensionNumbers struct {
	InputBatchDim, InputFeatureDim             int64
	InputSpatialDims                           []int64
	KernelInputFeatureDim, KernelOutputFeature int64
	KernelSpatialDims                          []int64
	OutputBatchDim, OutputFeatureDim           int64
	OutputSpatialDims                          []int64
}

// ChannelHandle is #stablehlo.channel_handle<handle = 1, type = 1>.
type ChannelHandle struct{ Handle, Type int64 }

// OutputOperandAlias is #stablehlo.output_operand_alias<...>.
type OutputOperandAlias struct {
	OutputTupleIndices  []int64
	OperandIndex        int64
	OperandTupleIndices []int64
}

func (IntAttr) isAttribute()                 {}
func (FloatAttr) isAttribute()               {}
func (BoolAttr) isAttribute()                {}
func (StringAttr) isAttribute()              {}
func (UnitAttr) isAttribute()                {}
func (ArrayAttr) isAttribute()               {}
func (DictAttr) isAttribute()                {}
func (DenseArrayAttr) isAttribute()          {}
func (DenseFloatArrayAttr) isAttribute()     {}
func (DenseElementsAttr) isAttribute()       {}
func (TypeAttr) isAttribute()                {}
func (SymbolRefAttr) isAttribute()           {}
func (EnumAttr) isAttribute()                {}
func (OpaqueAttr) isAttribute()              {}
func (DotDimensionNumbers) isAttribute()     {}
func (GatherDimensionNumbers) isAttribute()  {}
func (ScatterDimensionNumbers) isAttribute() {}
func (ConvDimensionNumbers) isAttribute()    {}
func (ChannelHandle) isAttribute()           {}
func (OutputOperandAlias) isAttribute()      {}
