package stablehlo

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Attribute text, as MLIR prints it.

// mlirHexThreshold: dense attributes with more elements than this print
// their raw data as a hex string, as MLIR does by default.
const mlirHexThreshold = 100

func mlirAppendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// mlirIsBareID reports whether s is an MLIR bare identifier
// ([a-zA-Z_][a-zA-Z0-9_$.]*), which prints without quotes.
func mlirIsBareID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '$' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// mlirAppendString appends s as an MLIR string literal.
func mlirAppendString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b = append(b, '\\', '\\')
		case c >= 0x20 && c < 0x7F && c != '"':
			b = append(b, c)
		default:
			b = append(b, '\\', hex[c>>4], hex[c&15])
		}
	}
	return append(b, '"')
}

// mlirAppendKey appends a dictionary key: bare when possible, else quoted.
func mlirAppendKey(b []byte, s string) []byte {
	if mlirIsBareID(s) {
		return append(b, s...)
	}
	return mlirAppendString(b, s)
}

// mlirAppendSymbol appends "@name" (quoted when not a bare identifier);
// nested references "a::@b" print as they are.
func mlirAppendSymbol(b []byte, s string) []byte {
	b = append(b, '@')
	if mlirIsBareID(s) {
		return append(b, s...)
	}
	// Nested reference: every part bare.
	parts := mlirSplitNested(s)
	if len(parts) > 1 {
		ok := true
		for _, p := range parts {
			if !mlirIsBareID(p) {
				ok = false
			}
		}
		if ok {
			return append(b, s...)
		}
	}
	return mlirAppendString(b, s)
}

func mlirSplitNested(s string) []string {
	var parts []string
	for {
		i := strings.Index(s, "::@")
		if i < 0 {
			return append(parts, s)
		}
		parts = append(parts, s[:i])
		s = s[i+3:]
	}
}

// mlirAppendIntOf formats v as an integer of type dt: signed types sign-extend
// their width, unsigned ones print the unsigned value.
func mlirAppendIntOf(b []byte, v int64, dt xla.DType) []byte {
	w := dt.Bits()
	if dt == xla.Invalid {
		w = 64
	}
	if dt.IsUnsigned() || dt == xla.Bool {
		u := uint64(v)
		if w < 64 {
			u &= 1<<uint(w) - 1
		}
		return strconv.AppendUint(b, u, 10)
	}
	if w < 64 && w > 0 {
		shift := uint(64 - w)
		v = v << shift >> shift
	}
	return strconv.AppendInt(b, v, 10)
}

// mlirAppendFloatOf formats the float64 v as a float of type dt.
func mlirAppendFloatOf(b []byte, v float64, dt xla.DType) []byte {
	f := mlirFloatFormats[dt]
	if f == nil {
		f = mlirFloatFormats[xla.Float64]
	}
	bits, ok, _ := f.fromFloat64(v)
	if !ok {
		f = mlirFloatFormats[xla.Float64]
		bits = math.Float64bits(v)
	}
	return append(b, f.format(bits)...)
}

// mlirAppendAttr appends attribute a. elide drops the ": i64" / ": f64"
// of integers and floats of those default types (MLIR does so inside
// arrays).
func mlirAppendAttr(b []byte, a Attribute, elide bool) []byte {
	switch a := a.(type) {
	case nil:
		return append(b, "<<NULL ATTRIBUTE>>"...)
	case IntAttr:
		dt := a.Type
		if dt == xla.Invalid {
			dt = xla.Int64
		}
		b = mlirAppendIntOf(b, a.Value, dt)
		if elide && dt == xla.Int64 {
			return b
		}
		b = append(b, " : "...)
		return append(b, mlirDTypeName(dt)...)
	case FloatAttr:
		dt := a.Type
		if dt == xla.Invalid {
			dt = xla.Float64
		}
		b = mlirAppendFloatOf(b, a.Value, dt)
		if elide && dt == xla.Float64 {
			return b
		}
		b = append(b, " : "...)
		return append(b, mlirDTypeName(dt)...)
	case BoolAttr:
		if a {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case StringAttr:
		return mlirAppendString(b, string(a))
	case UnitAttr:
		return append(b, "unit"...)
	case ArrayAttr:
		b = append(b, '[')
		for i, e := range a {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = mlirAppendAttr(b, e, true)
		}
		return append(b, ']')
	case DictAttr:
		return mlirAppendDict(b, a)
	case DenseArrayAttr:
		b = append(b, "array<"...)
		b = append(b, mlirDTypeName(a.DType)...)
		for i, v := range a.Values {
			if i == 0 {
				b = append(b, ": "...)
			} else {
				b = append(b, ", "...)
			}
			if a.DType == xla.Bool {
				if v != 0 {
					b = append(b, "true"...)
				} else {
					b = append(b, "false"...)
				}
			} else {
				b = mlirAppendIntOf(b, v, a.DType)
			}
		}
		return append(b, '>')
	case DenseFloatArrayAttr:
		b = append(b, "array<"...)
		b = append(b, mlirDTypeName(a.DType)...)
		for i, v := range a.Values {
			if i == 0 {
				b = append(b, ": "...)
			} else {
				b = append(b, ", "...)
			}
			b = mlirAppendFloatOf(b, v, a.DType)
		}
		return append(b, '>')
	case DenseElementsAttr:
		return mlirAppendDense(b, a)
	case TypeAttr:
		return mlirAppendType(b, a.Type)
	case SymbolRefAttr:
		return mlirAppendSymbol(b, string(a))
	case EnumAttr:
		b = append(b, '#')
		b = append(b, a.Dialect...)
		b = append(b, '<')
		b = append(b, a.Enum...)
		b = append(b, ' ')
		b = append(b, a.Value...)
		return append(b, '>')
	case OpaqueAttr:
		return append(b, a...)
	case RaggedDotDimensionNumbers:
		return mlirAppendRaggedDot(b, a)
	case DotDimensionNumbers:
		return mlirAppendStructAttr(b, "#stablehlo.dot<", a.mlirForm())
	case GatherDimensionNumbers:
		return mlirAppendStructAttr(b, "#stablehlo.gather<", a.mlirForm())
	case ScatterDimensionNumbers:
		return mlirAppendStructAttr(b, "#stablehlo.scatter<", a.mlirForm())
	case ConvDimensionNumbers:
		b = append(b, "#stablehlo.conv<"...)
		if raw, ok := mlirConvRaw(nil, a); ok {
			b = append(b, raw...)
		} else {
			// The field form upstream reads is the raw one.
			b = mlirAppendFields(append(b, "raw "...), a.mlirForm())
		}
		return append(b, '>')
	case ChannelHandle:
		return mlirAppendStructAttr(b, "#stablehlo.channel_handle<", a.mlirForm())
	case OutputOperandAlias:
		return mlirAppendStructAttr(b, "#stablehlo.output_operand_alias<", a.mlirForm())
	}
	return append(b, "<<UNKNOWN ATTRIBUTE>>"...)
}

// mlirAppendInts appends "[1, 2]".
func mlirAppendInts(b []byte, vs []int64) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = mlirAppendInt(b, v)
	}
	return append(b, ']')
}

// mlirStructForm is the field form of a struct attribute, "<name = value,
// ...>". The printer and the parser go by the same table, so that both
// spell the same fields in the same order.
type mlirStructForm struct {
	what   string // the attribute, in parse errors: "gather"
	fields []mlirStructField
	// sparse leaves empty lists and zero integers out of the text, as
	// MLIR prints dot, gather and scatter dimension numbers; other forms
	// print every field.
	sparse bool
	// nilEmpty parses a list written "[]" as nil.
	nilEmpty bool
}

// mlirStructField is one field: a list of integers, or one integer when
// one is set.
type mlirStructField struct {
	name string
	list *[]int64
	one  *int64
}

func (d *DotDimensionNumbers) mlirForm() mlirStructForm {
	return mlirStructForm{what: "dot", sparse: true, nilEmpty: true, fields: []mlirStructField{
		{name: "lhs_batching_dimensions", list: &d.LhsBatchingDims},
		{name: "rhs_batching_dimensions", list: &d.RhsBatchingDims},
		{name: "lhs_contracting_dimensions", list: &d.LhsContractingDims},
		{name: "rhs_contracting_dimensions", list: &d.RhsContractingDims},
	}}
}

func (d *GatherDimensionNumbers) mlirForm() mlirStructForm {
	return mlirStructForm{what: "gather", sparse: true, nilEmpty: true, fields: []mlirStructField{
		{name: "offset_dims", list: &d.OffsetDims},
		{name: "collapsed_slice_dims", list: &d.CollapsedSliceDims},
		{name: "operand_batching_dims", list: &d.OperandBatchingDims},
		{name: "start_indices_batching_dims", list: &d.StartIndicesBatchingDims},
		{name: "start_index_map", list: &d.StartIndexMap},
		{name: "index_vector_dim", one: &d.IndexVectorDim},
	}}
}

func (d *ScatterDimensionNumbers) mlirForm() mlirStructForm {
	return mlirStructForm{what: "scatter", sparse: true, nilEmpty: true, fields: []mlirStructField{
		{name: "update_window_dims", list: &d.UpdateWindowDims},
		{name: "inserted_window_dims", list: &d.InsertedWindowDims},
		{name: "input_batching_dims", list: &d.InputBatchingDims},
		{name: "scatter_indices_batching_dims", list: &d.ScatterIndicesBatchingDims},
		{name: "scatter_dims_to_operand_dims", list: &d.ScatterDimsToOperandDims},
		{name: "index_vector_dim", one: &d.IndexVectorDim},
	}}
}

// mlirForm is the field form of conv dimension numbers (the compact form,
// mlirConvRaw and parseConvDimsRaw, is the usual one).
func (c *ConvDimensionNumbers) mlirForm() mlirStructForm {
	return mlirStructForm{what: "conv", fields: []mlirStructField{
		{name: "input_batch_dimension", one: &c.InputBatchDim},
		{name: "input_feature_dimension", one: &c.InputFeatureDim},
		{name: "input_spatial_dimensions", list: &c.InputSpatialDims},
		{name: "kernel_input_feature_dimension", one: &c.KernelInputFeatureDim},
		{name: "kernel_output_feature_dimension", one: &c.KernelOutputFeature},
		{name: "kernel_spatial_dimensions", list: &c.KernelSpatialDims},
		{name: "output_batch_dimension", one: &c.OutputBatchDim},
		{name: "output_feature_dimension", one: &c.OutputFeatureDim},
		{name: "output_spatial_dimensions", list: &c.OutputSpatialDims},
	}}
}

func (c *ChannelHandle) mlirForm() mlirStructForm {
	return mlirStructForm{what: "channel_handle", fields: []mlirStructField{
		{name: "handle", one: &c.Handle},
		{name: "type", one: &c.Type},
	}}
}

func (a *OutputOperandAlias) mlirForm() mlirStructForm {
	return mlirStructForm{what: "output_operand_alias", fields: []mlirStructField{
		{name: "output_tuple_indices", list: &a.OutputTupleIndices},
		{name: "operand_index", one: &a.OperandIndex},
		{name: "operand_tuple_indices", list: &a.OperandTupleIndices},
	}}
}

// mlirAppendStructAttr appends prefix (such as "#stablehlo.gather<"), the
// fields of f and '>'.
func mlirAppendStructAttr(b []byte, prefix string, f mlirStructForm) []byte {
	b = append(b, prefix...)
	b = mlirAppendFields(b, f)
	return append(b, '>')
}

// mlirAppendFields appends "name = value, ..." for the fields of f.
func mlirAppendFields(b []byte, f mlirStructForm) []byte {
	n := 0
	for _, fld := range f.fields {
		if f.sparse && (fld.one != nil && *fld.one == 0 || fld.one == nil && len(*fld.list) == 0) {
			continue
		}
		if n > 0 {
			b = append(b, ", "...)
		}
		n++
		b = append(b, fld.name...)
		b = append(b, " = "...)
		if fld.one != nil {
			b = mlirAppendInt(b, *fld.one)
		} else {
			b = mlirAppendInts(b, *fld.list)
		}
	}
	return b
}

// mlirConvRaw appends the compact form "[b, 0, 1, f]x[0, 1, i, o]->[b, 0,
// 1, f]"; ok is false when the numbers are not a valid layout.
func mlirConvRaw(b []byte, c ConvDimensionNumbers) ([]byte, bool) {
	n := len(c.InputSpatialDims)
	if len(c.KernelSpatialDims) != n || len(c.OutputSpatialDims) != n {
		return b, false
	}
	layout := func(b []byte, first, second int64, x, y string, spatial []int64) ([]byte, bool) {
		rank := int64(n + 2)
		slots := make([]string, rank)
		put := func(i int64, s string) bool {
			if i < 0 || i >= rank || slots[i] != "" {
				return false
			}
			slots[i] = s
			return true
		}
		if !put(first, x) || !put(second, y) {
			return b, false
		}
		for i, d := range spatial {
			if !put(d, strconv.Itoa(i)) {
				return b, false
			}
		}
		b = append(b, '[')
		for i, s := range slots {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, s...)
		}
		return append(b, ']'), true
	}
	var ok bool
	if b, ok = layout(b, c.InputBatchDim, c.InputFeatureDim, "b", "f", c.InputSpatialDims); !ok {
		return b, false
	}
	b = append(b, 'x')
	if b, ok = layout(b, c.KernelInputFeatureDim, c.KernelOutputFeature, "i", "o", c.KernelSpatialDims); !ok {
		return b, false
	}
	b = append(b, "->"...)
	return layout(b, c.OutputBatchDim, c.OutputFeatureDim, "b", "f", c.OutputSpatialDims)
}

// mlirSortedAttrs returns attrs sorted by name (MLIR dictionaries are
// sorted), without copying when they already are.
func mlirSortedAttrs(attrs []NamedAttr) []NamedAttr {
	sorted := true
	for i := 1; i < len(attrs); i++ {
		if attrs[i-1].Name > attrs[i].Name {
			sorted = false
			break
		}
	}
	if sorted {
		return attrs
	}
	out := append([]NamedAttr(nil), attrs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// mlirAppendDict appends "{a = 1 : i64, unit_attr}" in sorted order.
func mlirAppendDict(b []byte, d []NamedAttr) []byte {
	b = append(b, '{')
	for i, a := range mlirSortedAttrs(d) {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = mlirAppendNamedAttr(b, a)
	}
	return append(b, '}')
}

func mlirAppendNamedAttr(b []byte, a NamedAttr) []byte {
	b = mlirAppendKey(b, a.Name)
	if _, unit := a.Value.(UnitAttr); unit {
		return b
	}
	b = append(b, " = "...)
	return mlirAppendAttr(b, a.Value, false)
}

// mlirAppendDense appends "dense<...> : tensor<...>".
func mlirAppendDense(b []byte, a DenseElementsAttr) []byte {
	b = append(b, "dense<"...)
	b = mlirAppendDenseBody(b, a)
	b = append(b, "> : "...)
	return mlirAppendType(b, a.Type)
}

// mlirAppendDenseBody appends the literal between "dense<" and ">".
func mlirAppendDenseBody(b []byte, a DenseElementsAttr) []byte {
	dt := a.Type.DType
	w := dt.HostBytes()
	if w == 0 {
		return b
	}
	n := a.Type.Size()
	if a.Splat || len(a.Type.Dims) == 0 {
		if len(a.Data) < w {
			return b
		}
		return mlirAppendElem(b, dt, a.Data[:w])
	}
	if n <= 0 {
		return b
	}
	if int64(len(a.Data)) < n*int64(w) {
		return b
	}
	if n > mlirHexThreshold && dt != xla.Bool && dt.Bits() != 1 {
		// Booleans are never written as hex: MLIR's raw form for them
		// changed from packed bits to a byte each (LLVM, 2026-02), and each
		// version refuses the other's; the list reads in both.
		return mlirAppendDenseHex(b, dt, a.Data[:n*int64(w)])
	}
	var rec func(b []byte, dim int, off int64) ([]byte, int64)
	rec = func(b []byte, dim int, off int64) ([]byte, int64) {
		b = append(b, '[')
		for i := int64(0); i < a.Type.Dims[dim]; i++ {
			if i > 0 {
				b = append(b, ", "...)
			}
			if dim == len(a.Type.Dims)-1 {
				b = mlirAppendElem(b, dt, a.Data[off*int64(w):(off+1)*int64(w)])
				off++
			} else {
				b, off = rec(b, dim+1, off)
			}
		}
		return append(b, ']'), off
	}
	b, _ = rec(b, 0, 0)
	return b
}

// mlirAppendDenseHex appends the raw data as MLIR stores it: booleans as
// packed bits, sub-byte values masked to their width, one per byte.
func mlirAppendDenseHex(b []byte, dt xla.DType, data []byte) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, "\"0x"...)
	if dt == xla.Bool || dt.Bits() == 1 { // i1 and ui1 too: packed bits
		for i := 0; i < len(data); i += 8 {
			var c byte
			for j := 0; j < 8 && i+j < len(data); j++ {
				if data[i+j] != 0 {
					c |= 1 << uint(j)
				}
			}
			b = append(b, hex[c>>4], hex[c&15])
		}
		return append(b, '"')
	}
	mask := byte(0xFF)
	if bw := dt.Bits(); bw < 8 {
		mask = byte(1)<<uint(bw) - 1
	}
	for _, c := range data {
		c &= mask
		b = append(b, hex[c>>4], hex[c&15])
	}
	return append(b, '"')
}

// mlirReadBits reads a little-endian element of up to 8 bytes.
func mlirReadBits(data []byte) uint64 {
	switch len(data) {
	case 1:
		return uint64(data[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(data))
	case 4:
		return uint64(binary.LittleEndian.Uint32(data))
	case 8:
		return binary.LittleEndian.Uint64(data)
	}
	var v uint64
	for i := len(data) - 1; i >= 0; i-- {
		v = v<<8 | uint64(data[i])
	}
	return v
}

// mlirAppendElem appends one dense element of type dt held in data.
func mlirAppendElem(b []byte, dt xla.DType, data []byte) []byte {
	switch {
	case dt == xla.Bool || dt.Bits() == 1: // MLIR spells 1-bit values so
		if data[0] != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case dt.IsInt():
		v := mlirReadBits(data)
		return mlirAppendIntOf(b, int64(v), dt)
	case dt.IsComplex():
		ft := dt.ComplexElem()
		half := len(data) / 2
		f := mlirFloatFormats[ft]
		b = append(b, '(')
		b = append(b, f.format(mlirReadBits(data[:half]))...)
		b = append(b, ',')
		b = append(b, f.format(mlirReadBits(data[half:]))...)
		return append(b, ')')
	default:
		f := mlirFloatFormats[dt]
		if f == nil {
			return append(b, '0')
		}
		return append(b, f.format(mlirReadBits(data))...)
	}
}
