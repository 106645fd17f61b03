package stablehlo

import (
	"fmt"
	"math"
	"sort"

	"github.com/halo-ml/halo/xla"
)

// equalModules compares two modules structurally: names, attributes (as
// dictionaries, semantically for dense data), types, the shape of the op
// graph (operands matched through a value correspondence built in program
// order) and, when locs is set, locations. It returns "" or the first
// difference.
func equalModules(a, b *Module, locs bool) string {
	return equalModulesOpaque(a, b, locs, false)
}

// equalModulesOpaque is equalModules that, with looseOpaque, takes any two
// opaque types (other dialects', whose text a tool may canonicalize) as
// equal.
func equalModulesOpaque(a, b *Module, locs, looseOpaque bool) string {
	e := &mlirEq{vals: map[*Value]*Value{}, locs: locs, loose: looseOpaque}
	e.module(a, b)
	return e.diff
}

type mlirEq struct {
	vals  map[*Value]*Value
	locs  bool
	loose bool
	diff  string
	path  []string
}

func (e *mlirEq) failf(format string, args ...any) {
	if e.diff == "" {
		e.diff = fmt.Sprintf("%v: ", e.path) + fmt.Sprintf(format, args...)
	}
}

func (e *mlirEq) in(s string) func() {
	e.path = append(e.path, s)
	return func() { e.path = e.path[:len(e.path)-1] }
}

func (e *mlirEq) module(a, b *Module) {
	if a.Name != b.Name {
		e.failf("module name %q vs %q", a.Name, b.Name)
	}
	if d := mlirAttrsDiff(a.Attrs, b.Attrs); d != "" {
		e.failf("module attrs: %s", d)
	}
	e.loc(a.Loc, b.Loc)
	if len(a.Globals) != len(b.Globals) {
		e.failf("%d vs %d globals", len(a.Globals), len(b.Globals))
		return
	}
	for i := range a.Globals {
		e.op(a.Globals[i], b.Globals[i])
	}
	if len(a.Funcs) != len(b.Funcs) {
		e.failf("%d vs %d funcs", len(a.Funcs), len(b.Funcs))
		return
	}
	for i := range a.Funcs {
		e.fn(a.Funcs[i], b.Funcs[i])
	}
}

func (e *mlirEq) loc(a, b Location) {
	if e.locs && a != b {
		e.failf("location %+v vs %+v", a, b)
	}
}

func mlirDictAt(ds []DictAttr, i int) DictAttr {
	if i < len(ds) {
		return ds[i]
	}
	return nil
}

func (e *mlirEq) fn(a, b *Func) {
	defer e.in("@" + a.Name)()
	if a.Name != b.Name || a.Private != b.Private {
		e.failf("func %q private=%v vs %q private=%v", a.Name, a.Private, b.Name, b.Private)
	}
	if !mlirTypeListEqual(a.ResultTypes, b.ResultTypes) {
		e.failf("result types differ")
	}
	n := len(a.ArgTypes())
	if m := len(b.ArgTypes()); m > n {
		n = m
	}
	for i := 0; i < n || i < len(a.ArgAttrs) || i < len(b.ArgAttrs); i++ {
		if d := mlirAttrsDiff(mlirDictAt(a.ArgAttrs, i), mlirDictAt(b.ArgAttrs, i)); d != "" {
			e.failf("arg %d attrs: %s", i, d)
		}
	}
	for i := 0; i < len(a.ResultTypes) || i < len(a.ResultAttrs) || i < len(b.ResultAttrs); i++ {
		if d := mlirAttrsDiff(mlirDictAt(a.ResultAttrs, i), mlirDictAt(b.ResultAttrs, i)); d != "" {
			e.failf("result %d attrs: %s", i, d)
		}
	}
	if d := mlirAttrsDiff(a.Attrs, b.Attrs); d != "" {
		e.failf("func attrs: %s", d)
	}
	e.loc(a.Loc, b.Loc)
	if (a.Body == nil) != (b.Body == nil) {
		e.failf("body presence differs")
		return
	}
	if a.Body != nil {
		e.region(a.Body, b.Body)
	}
}

func (e *mlirEq) region(a, b *Region) {
	if len(a.Blocks) != len(b.Blocks) {
		e.failf("%d vs %d blocks", len(a.Blocks), len(b.Blocks))
		return
	}
	for i := range a.Blocks {
		ba, bb := a.Blocks[i], b.Blocks[i]
		if len(ba.Args) != len(bb.Args) {
			e.failf("block %d: %d vs %d args", i, len(ba.Args), len(bb.Args))
			return
		}
		for j := range ba.Args {
			if !e.typeEqual(ba.Args[j].Type, bb.Args[j].Type) {
				e.failf("block arg %d type %v vs %v", j, ba.Args[j].Type, bb.Args[j].Type)
			}
			e.vals[ba.Args[j]] = bb.Args[j]
		}
		if len(ba.Ops) != len(bb.Ops) {
			e.failf("block %d: %d vs %d ops", i, len(ba.Ops), len(bb.Ops))
			return
		}
		for j := range ba.Ops {
			e.op(ba.Ops[j], bb.Ops[j])
		}
	}
}

func (e *mlirEq) op(a, b *Op) {
	defer e.in(a.Name)()
	if a.Name != b.Name {
		e.failf("op %s vs %s", a.Name, b.Name)
		return
	}
	if len(a.Operands) != len(b.Operands) {
		e.failf("%d vs %d operands", len(a.Operands), len(b.Operands))
		return
	}
	for i := range a.Operands {
		if m, ok := e.vals[a.Operands[i]]; !ok || m != b.Operands[i] {
			e.failf("operand %d does not correspond", i)
		}
	}
	if len(a.Results) != len(b.Results) {
		e.failf("%d vs %d results", len(a.Results), len(b.Results))
		return
	}
	for i := range a.Results {
		if !e.typeEqual(a.Results[i].Type, b.Results[i].Type) {
			e.failf("result %d type %s vs %s", i, mlirAppendType(nil, a.Results[i].Type), mlirAppendType(nil, b.Results[i].Type))
		}
		e.vals[a.Results[i]] = b.Results[i]
	}
	if d := mlirAttrsDiff(a.Attrs, b.Attrs); d != "" {
		e.failf("attrs: %s", d)
	}
	e.loc(a.Loc, b.Loc)
	if len(a.Regions) != len(b.Regions) {
		e.failf("%d vs %d regions", len(a.Regions), len(b.Regions))
		return
	}
	for i := range a.Regions {
		e.region(a.Regions[i], b.Regions[i])
	}
}

// mlirAttrsDiff compares two attribute dictionaries (order does not matter).
func mlirAttrsDiff(a, b []NamedAttr) string {
	sa := append([]NamedAttr(nil), a...)
	sb := append([]NamedAttr(nil), b...)
	sort.SliceStable(sa, func(i, j int) bool { return sa[i].Name < sa[j].Name })
	sort.SliceStable(sb, func(i, j int) bool { return sb[i].Name < sb[j].Name })
	if len(sa) != len(sb) {
		return fmt.Sprintf("%s vs %s", string(mlirAppendDict(nil, a)), string(mlirAppendDict(nil, b)))
	}
	for i := range sa {
		if sa[i].Name != sb[i].Name {
			return fmt.Sprintf("key %q vs %q", sa[i].Name, sb[i].Name)
		}
		if !mlirAttrEqual(sa[i].Value, sb[i].Value) {
			return fmt.Sprintf("%s: %s vs %s", sa[i].Name, mlirAppendAttr(nil, sa[i].Value, false), mlirAppendAttr(nil, sb[i].Value, false))
		}
	}
	return ""
}

func mlirIntsEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mlirAttrEqual compares attribute values semantically.
func mlirAttrEqual(a, b Attribute) bool {
	switch a := a.(type) {
	case IntAttr:
		b, ok := b.(IntAttr)
		if !ok {
			return false
		}
		ta, tb := a.Type, b.Type
		if ta == xla.Invalid {
			ta = xla.Int64
		}
		if tb == xla.Invalid {
			tb = xla.Int64
		}
		return ta == tb && string(mlirAppendIntOf(nil, a.Value, ta)) == string(mlirAppendIntOf(nil, b.Value, tb))
	case FloatAttr:
		b, ok := b.(FloatAttr)
		if !ok || a.Type != b.Type {
			return false
		}
		return math.Float64bits(a.Value) == math.Float64bits(b.Value) || math.IsNaN(a.Value) && math.IsNaN(b.Value)
	case ArrayAttr:
		b, ok := b.(ArrayAttr)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !mlirAttrEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case DictAttr:
		b, ok := b.(DictAttr)
		return ok && mlirAttrsDiff(a, b) == ""
	case DenseArrayAttr:
		b, ok := b.(DenseArrayAttr)
		return ok && a.DType == b.DType && mlirIntsEqual(a.Values, b.Values)
	case DenseFloatArrayAttr:
		b, ok := b.(DenseFloatArrayAttr)
		if !ok || a.DType != b.DType || len(a.Values) != len(b.Values) {
			return false
		}
		for i := range a.Values {
			if math.Float64bits(a.Values[i]) != math.Float64bits(b.Values[i]) {
				return false
			}
		}
		return true
	case DenseElementsAttr:
		b, ok := b.(DenseElementsAttr)
		if !ok || !mlirTypeEqual(a.Type, b.Type) {
			return false
		}
		if a.Splat && b.Splat || a.Type.Size() > 1<<16 {
			// Compare as stored (do not expand huge splats).
			one := func(d DenseElementsAttr) DenseElementsAttr {
				return DenseElementsAttr{Type: TensorType{DType: d.Type.DType}, Data: d.Data}
			}
			return a.Splat == b.Splat && string(mlirDenseExpand(one(a))) == string(mlirDenseExpand(one(b)))
		}
		return string(mlirDenseExpand(a)) == string(mlirDenseExpand(b))
	case TypeAttr:
		b, ok := b.(TypeAttr)
		return ok && mlirTypeEqual(a.Type, b.Type)
	case DotDimensionNumbers:
		b, ok := b.(DotDimensionNumbers)
		return ok && mlirIntsEqual(a.LhsBatchingDims, b.LhsBatchingDims) && mlirIntsEqual(a.RhsBatchingDims, b.RhsBatchingDims) &&
			mlirIntsEqual(a.LhsContractingDims, b.LhsContractingDims) && mlirIntsEqual(a.RhsContractingDims, b.RhsContractingDims)
	case GatherDimensionNumbers:
		b, ok := b.(GatherDimensionNumbers)
		return ok && mlirIntsEqual(a.OffsetDims, b.OffsetDims) && mlirIntsEqual(a.CollapsedSliceDims, b.CollapsedSliceDims) &&
			mlirIntsEqual(a.OperandBatchingDims, b.OperandBatchingDims) && mlirIntsEqual(a.StartIndicesBatchingDims, b.StartIndicesBatchingDims) &&
			mlirIntsEqual(a.StartIndexMap, b.StartIndexMap) && a.IndexVectorDim == b.IndexVectorDim
	case ScatterDimensionNumbers:
		b, ok := b.(ScatterDimensionNumbers)
		return ok && mlirIntsEqual(a.UpdateWindowDims, b.UpdateWindowDims) && mlirIntsEqual(a.InsertedWindowDims, b.InsertedWindowDims) &&
			mlirIntsEqual(a.InputBatchingDims, b.InputBatchingDims) && mlirIntsEqual(a.ScatterIndicesBatchingDims, b.ScatterIndicesBatchingDims) &&
			mlirIntsEqual(a.ScatterDimsToOperandDims, b.ScatterDimsToOperandDims) && a.IndexVectorDim == b.IndexVectorDim
	case ConvDimensionNumbers:
		b, ok := b.(ConvDimensionNumbers)
		return ok && a.InputBatchDim == b.InputBatchDim && a.InputFeatureDim == b.InputFeatureDim &&
			mlirIntsEqual(a.InputSpatialDims, b.InputSpatialDims) && a.KernelInputFeatureDim == b.KernelInputFeatureDim &&
			a.KernelOutputFeature == b.KernelOutputFeature && mlirIntsEqual(a.KernelSpatialDims, b.KernelSpatialDims) &&
			a.OutputBatchDim == b.OutputBatchDim && a.OutputFeatureDim == b.OutputFeatureDim &&
			mlirIntsEqual(a.OutputSpatialDims, b.OutputSpatialDims)
	case OutputOperandAlias:
		b, ok := b.(OutputOperandAlias)
		return ok && mlirIntsEqual(a.OutputTupleIndices, b.OutputTupleIndices) && a.OperandIndex == b.OperandIndex &&
			mlirIntsEqual(a.OperandTupleIndices, b.OperandTupleIndices)
	}
	return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

// mlirDenseExpand returns the full, canonical element data of a (splats
// expanded, booleans 0/1, sub-byte values masked).
func mlirDenseExpand(a DenseElementsAttr) []byte {
	w := a.Type.DType.HostBytes()
	n := a.Type.Size()
	if w == 0 || n < 0 {
		return a.Data
	}
	var out []byte
	if (a.Splat || n == 1) && len(a.Data) >= w {
		for i := int64(0); i < n; i++ {
			out = append(out, a.Data[:w]...)
		}
	} else {
		out = append(out, a.Data...)
	}
	if a.Type.DType == xla.Bool {
		for i := range out {
			if out[i] != 0 {
				out[i] = 1
			}
		}
	} else if bw := a.Type.DType.Bits(); bw < 8 {
		for i := range out {
			out[i] &= byte(1)<<uint(bw) - 1
		}
	}
	return out
}

func (e *mlirEq) typeEqual(a, b Type) bool {
	if e.loose {
		if tensorOf, ok := a.(OpaqueType); ok {
			_, ok2 := b.(OpaqueType)
			return ok2 && len(tensorOf.Text) > 0
		}
	}
	return mlirTypeEqual(a, b)
}
