package stablehlo

import (
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Pretty (custom) forms. Each printer returns false, having printed
// nothing that matters, when op does not fit its form; the op then prints
// generically. Attributes a form does not show print in its trailing
// attribute dictionary, so that parsing gives the op back exactly.

type mlirPrettyPrinter func(p *mlirPrinter, op *Op) bool

// mlirPrettyPrinters are the printers of the custom forms, by op name
// (registered with the parsers, in parse_pretty.go).
var mlirPrettyPrinters = map[string]mlirPrettyPrinter{}

// --- helpers ---------------------------------------------------------------

// mlirShape checks operand/result counts, no regions, no nil values.
func mlirShape(op *Op, nOperands, nResults int) bool {
	if nOperands >= 0 && len(op.Operands) != nOperands || nResults >= 0 && len(op.Results) != nResults || len(op.Regions) != 0 {
		return false
	}
	return mlirNoNil(op)
}

func mlirNoNil(op *Op) bool {
	for _, v := range op.Operands {
		if v == nil || v.Type == nil {
			return false
		}
	}
	for _, v := range op.Results {
		if v == nil || v.Type == nil {
			return false
		}
	}
	return true
}

// rest returns op's attributes other than the taken ones.
func mlirRest(op *Op, taken ...string) []NamedAttr {
	if len(taken) == 0 {
		return op.Attrs
	}
	var out []NamedAttr
outer:
	for _, a := range op.Attrs {
		for _, t := range taken {
			if a.Name == t {
				continue outer
			}
		}
		out = append(out, a)
	}
	return out
}

// attrDict prints " {..}" when attrs is not empty.
func (p *mlirPrinter) attrDict(attrs []NamedAttr) {
	if len(attrs) > 0 {
		p.byte(' ')
		p.dict(attrs)
	}
}

// functional prints " : (ins) -> outs".
func (p *mlirPrinter) functional(op *Op) {
	p.str(" : (")
	for i, v := range op.Operands {
		if i > 0 {
			p.str(", ")
		}
		p.typ(v.Type)
	}
	p.str(") -> ")
	p.resultTypes(mlirValueTypes(op.Results))
}

// sameOrFunctional prints " : t" when every operand and the single result
// have type t, else the functional type.
func (p *mlirPrinter) sameOrFunctional(op *Op) {
	t := op.Results[0].Type
	for _, v := range op.Operands {
		if !mlirTypeEqual(v.Type, t) {
			p.functional(op)
			return
		}
	}
	if _, isFn := t.(FunctionType); isFn {
		p.functional(op)
		return
	}
	p.str(" : ")
	p.typ(t)
}

func (p *mlirPrinter) name(op *Op) { p.opName(op.Name) }

// plainRegion prints r with its ops' full names: the default dialect of
// an op's custom form does not reach into the op's regions.
func (p *mlirPrinter) plainRegion(r *Region) {
	save := p.dialect
	p.dialect = ""
	p.region(r, false)
	p.dialect = save
}

// nameAndOperands prints op's name and, after a blank, its operands (when
// it has any).
func (p *mlirPrinter) nameAndOperands(op *Op) {
	p.name(op)
	if len(op.Operands) > 0 {
		p.byte(' ')
		p.values(op.Operands)
	}
}

func (p *mlirPrinter) ints(vs []int64) { p.buf = mlirAppendInts(p.buf, vs) }

// mlirI64Array returns the values of a DenseArrayAttr of i64.
func mlirI64Array(a Attribute) ([]int64, bool) {
	d, ok := a.(DenseArrayAttr)
	if !ok || d.DType != xla.Int64 {
		return nil, false
	}
	return d.Values, true
}

// mlirIntOf returns an IntAttr's value when it has type dt.
func mlirIntOf(a Attribute, dt xla.DType) (int64, bool) {
	i, ok := a.(IntAttr)
	if !ok || i.Type != dt {
		return 0, false
	}
	return i.Value, true
}

// mlirEnumOf returns a StableHLO enum's value when valid.
func mlirEnumOf(a Attribute, enum string) (string, bool) {
	e, ok := a.(EnumAttr)
	if !ok || e.Dialect != "stablehlo" || e.Enum != enum {
		return "", false
	}
	for _, v := range mlirEnumValues[enum] {
		if v == e.Value {
			return v, true
		}
	}
	return "", false
}

// mlirPrecisions returns the values of a precision_config array.
func mlirPrecisions(a Attribute) ([]string, bool) {
	arr, ok := a.(ArrayAttr)
	if !ok {
		return nil, false
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		v, ok := mlirEnumOf(e, "precision")
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// --- op families ------------------------------------------------------------

// mlirPrintSame: $operands attr-dict : custom<SameOperandsAndResultType>.
func mlirPrintSame(n int) mlirPrettyPrinter {
	return func(p *mlirPrinter, op *Op) bool {
		if !mlirShape(op, n, 1) {
			return false
		}
		p.nameAndOperands(op)
		p.attrDict(op.Attrs)
		p.sameOrFunctional(op)
		return true
	}
}

// mlirPrintFunctional: operands attr-dict : functional-type, for n
// operands (-1: any number, at least one).
func mlirPrintFunctional(n int) mlirPrettyPrinter {
	return func(p *mlirPrinter, op *Op) bool {
		if !mlirShape(op, n, 1) || len(op.Operands) == 0 {
			return false
		}
		p.nameAndOperands(op)
		p.attrDict(op.Attrs)
		p.functional(op)
		return true
	}
}

func mlirPrintComplex(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, 2, 1) {
		return false
	}
	p.nameAndOperands(op)
	p.attrDict(op.Attrs)
	rt, ok := op.Results[0].Type.(TensorType)
	if ok && rt.DType.IsComplex() {
		real := TensorType{DType: rt.DType.ComplexElem(), Dims: rt.Dims}
		if mlirTypeEqual(op.Operands[0].Type, real) && mlirTypeEqual(op.Operands[1].Type, real) {
			p.str(" : ")
			p.typ(rt)
			return true
		}
	}
	p.functional(op)
	return true
}

func mlirPrintConstant(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, 0, 1) {
		return false
	}
	v, ok := op.Attr("value").(DenseElementsAttr)
	if !ok || !mlirTypeEqual(v.Type, op.Results[0].Type) || !mlirDenseValid(v) {
		return false
	}
	p.name(op)
	p.attrDict(mlirRest(op, "value"))
	p.byte(' ')
	p.buf = mlirAppendDense(p.buf, v)
	return true
}

// mlirDenseValid reports whether a's data fits its type.
func mlirDenseValid(a DenseElementsAttr) bool {
	w := int64(a.Type.DType.HostBytes())
	n := a.Type.Size()
	if w == 0 || n < 0 {
		return false
	}
	if a.Splat || len(a.Type.Dims) == 0 {
		return int64(len(a.Data)) == w || n == 0 && len(a.Data) == 0
	}
	return int64(len(a.Data)) == n*w
}

func mlirPrintIota(p *mlirPrinter, op *Op) bool {
	d, ok := mlirIntOf(op.Attr("iota_dimension"), xla.Int64)
	if !mlirShape(op, 0, 1) || !ok {
		return false
	}
	p.name(op)
	p.str(" dim = ")
	p.buf = mlirAppendInt(p.buf, d)
	p.attrDict(mlirRest(op, "iota_dimension"))
	p.str(" : ")
	p.typ(op.Results[0].Type)
	return true
}

func mlirPrintTypeOnly(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, 0, 1) {
		return false
	}
	p.name(op)
	p.attrDict(op.Attrs)
	p.str(" : ")
	p.typ(op.Results[0].Type)
	return true
}

func mlirPrintAfterAll(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, -1, 1) {
		return false
	}
	p.nameAndOperands(op)
	p.attrDict(op.Attrs)
	p.sameOrFunctional(op)
	return true
}

func mlirPrintTuple(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, -1, 1) {
		return false
	}
	tt, ok := op.Results[0].Type.(TupleType)
	if !ok || !mlirTypeListEqual(tt.Elems, mlirValueTypes(op.Operands)) {
		return false
	}
	p.nameAndOperands(op)
	p.attrDict(op.Attrs)
	p.str(" : ")
	p.typ(tt)
	return true
}

func mlirPrintGetTupleElement(p *mlirPrinter, op *Op) bool {
	i, ok := mlirIntOf(op.Attr("index"), xla.Int32)
	if !mlirShape(op, 1, 1) || !ok {
		return false
	}
	p.nameAndOperands(op)
	p.byte('[')
	p.buf = mlirAppendInt(p.buf, i)
	p.byte(']')
	p.attrDict(mlirRest(op, "index"))
	p.functional(op)
	return true
}

func mlirPrintCompare(p *mlirPrinter, op *Op) bool {
	dir, ok := mlirEnumOf(op.Attr("comparison_direction"), "comparison_direction")
	if !mlirShape(op, 2, 1) || !ok {
		return false
	}
	taken := []string{"comparison_direction"}
	ct, hasType := mlirEnumOf(op.Attr("compare_type"), "comparison_type")
	if hasType {
		taken = append(taken, "compare_type")
	}
	p.name(op)
	p.str("  ")
	p.str(dir)
	p.str(", ")
	p.values(op.Operands)
	if hasType {
		p.str(",  ")
		p.str(ct)
	}
	p.attrDict(mlirRest(op, taken...))
	p.functional(op)
	return true
}

func mlirPrintSlice(p *mlirPrinter, op *Op) bool {
	start, ok1 := mlirI64Array(op.Attr("start_indices"))
	limit, ok2 := mlirI64Array(op.Attr("limit_indices"))
	strides, ok3 := mlirI64Array(op.Attr("strides"))
	if !mlirShape(op, 1, 1) || !ok1 || !ok2 || !ok3 || len(start) != len(limit) || len(start) != len(strides) {
		return false
	}
	p.nameAndOperands(op)
	p.str(" [")
	for i := range start {
		if i > 0 {
			p.str(", ")
		}
		p.buf = mlirAppendInt(p.buf, start[i])
		p.byte(':')
		p.buf = mlirAppendInt(p.buf, limit[i])
		if strides[i] != 1 {
			p.byte(':')
			p.buf = mlirAppendInt(p.buf, strides[i])
		}
	}
	p.byte(']')
	p.attrDict(mlirRest(op, "start_indices", "limit_indices", "strides"))
	p.functional(op)
	return true
}

// mlirPrintKeywordOp prints the form of k (see mlirKeywordOp).
func mlirPrintKeywordOp(k mlirKeywordOp) mlirPrettyPrinter {
	operands, results := k.operands, 1
	if k.variadic {
		operands = -1
	}
	if k.anyResults {
		results = -1
	}
	return func(p *mlirPrinter, op *Op) bool {
		if !mlirShape(op, operands, results) || len(op.Operands) < k.operands {
			return false
		}
		p.name(op)
		p.byte(' ')
		for _, v := range op.Operands {
			p.value(v)
			p.str(", ")
		}
		p.str(k.kw)
		p.str(" =")
		if !k.value.print(p, op.Attr(k.attr)) {
			return false
		}
		p.attrDict(mlirRest(op, k.attr))
		if k.same {
			p.sameOrFunctional(op)
		} else {
			p.functional(op)
		}
		return true
	}
}

func mlirPrintCholesky(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, 1, 1) {
		return false
	}
	p.nameAndOperands(op)
	rest := op.Attrs
	if l, ok := op.Attr("lower").(BoolAttr); ok && bool(l) {
		p.str(", lower = true")
		rest = mlirRest(op, "lower")
	}
	p.attrDict(rest)
	p.sameOrFunctional(op)
	return true
}

func mlirPrintConvolution(p *mlirPrinter, op *Op) bool {
	dn, ok := op.Attr("dimension_numbers").(ConvDimensionNumbers)
	operands := 2 // lhs, rhs (dynamic_conv adds the padding operand)
	if op.Name == "stablehlo.dynamic_conv" {
		operands = 3
	}
	if !mlirShape(op, operands, 1) || !ok {
		return false
	}
	raw, ok := mlirConvRaw(nil, dn)
	if !ok {
		return false
	}
	taken := []string{"dimension_numbers"}
	p.name(op)
	p.byte('(')
	p.values(op.Operands)
	p.str(") dim_numbers = ")
	p.buf = append(p.buf, raw...)
	p.str(", window = {")
	n := 0
	field := func(name string) {
		if n > 0 {
			p.str(", ")
		}
		n++
		p.str(name)
		p.str(" = ")
	}
	if v, ok := mlirI64Array(op.Attr("window_strides")); ok {
		field("stride")
		p.ints(v)
		taken = append(taken, "window_strides")
	}
	if pad, ok := op.Attr("padding").(DenseElementsAttr); ok && mlirIsPadding(pad) {
		field("pad")
		p.byte('[')
		for i := 0; i < len(pad.Data)/16; i++ {
			if i > 0 {
				p.str(", ")
			}
			p.ints([]int64{int64(mlirReadBits(pad.Data[16*i : 16*i+8])), int64(mlirReadBits(pad.Data[16*i+8 : 16*i+16]))})
		}
		p.byte(']')
		taken = append(taken, "padding")
	}
	if v, ok := mlirI64Array(op.Attr("lhs_dilation")); ok {
		field("lhs_dilate")
		p.ints(v)
		taken = append(taken, "lhs_dilation")
	}
	if v, ok := mlirI64Array(op.Attr("rhs_dilation")); ok {
		field("rhs_dilate")
		p.ints(v)
		taken = append(taken, "rhs_dilation")
	}
	if d, ok := op.Attr("window_reversal").(DenseArrayAttr); ok && d.DType == xla.Bool && mlirAllBits(d.Values) {
		field("reverse")
		p.byte('[')
		for i, v := range d.Values {
			if i > 0 {
				p.str(", ")
			}
			if v != 0 {
				p.str("true")
			} else {
				p.str("false")
			}
		}
		p.byte(']')
		taken = append(taken, "window_reversal")
	}
	p.byte('}')
	p.attrDict(mlirRest(op, taken...))
	p.functional(op)
	return true
}

func mlirAllBits(vs []int64) bool {
	for _, v := range vs {
		if v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// mlirIsPadding reports whether a is a full (not splat) Nx2 i64 tensor.
func mlirIsPadding(a DenseElementsAttr) bool {
	return !a.Splat && a.Type.DType == xla.Int64 && len(a.Type.Dims) == 2 && a.Type.Dims[1] == 2 &&
		int64(len(a.Data)) == a.Type.Dims[0]*16
}

// mlirPrintCallForm: "@sym(operands) attr-dict : functional-type", sym
// being attribute attr (custom_call's target, func.call's callee).
func mlirPrintCallForm(attr string, sym mlirAttrSyntax) mlirPrettyPrinter {
	return func(p *mlirPrinter, op *Op) bool {
		if !mlirShape(op, -1, -1) {
			return false
		}
		p.name(op)
		if !sym.print(p, op.Attr(attr)) {
			return false
		}
		p.byte('(')
		p.values(op.Operands)
		p.byte(')')
		p.attrDict(mlirRest(op, attr))
		p.functional(op)
		return true
	}
}

func mlirPrintDot(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, 2, 1) {
		return false
	}
	p.nameAndOperands(op)
	rest := op.Attrs
	if prec, ok := mlirPrecisions(op.Attr("precision_config")); ok {
		p.str(", precision = [")
		p.str(strings.Join(prec, ", "))
		p.byte(']')
		rest = mlirRest(op, "precision_config")
	}
	p.attrDict(rest)
	p.functional(op)
	return true
}

func mlirPrintDotGeneral(p *mlirPrinter, op *Op) bool {
	dn, ok := op.Attr("dot_dimension_numbers").(DotDimensionNumbers)
	if !mlirShape(op, 2, 1) || !ok {
		return false
	}
	taken := []string{"dot_dimension_numbers"}
	p.nameAndOperands(op)
	p.str(", ")
	if len(dn.LhsBatchingDims) > 0 || len(dn.RhsBatchingDims) > 0 {
		p.str("batching_dims = ")
		p.ints(dn.LhsBatchingDims)
		p.str(" x ")
		p.ints(dn.RhsBatchingDims)
		p.str(", ")
	}
	p.str("contracting_dims = ")
	p.ints(dn.LhsContractingDims)
	p.str(" x ")
	p.ints(dn.RhsContractingDims)
	if prec, ok := mlirPrecisions(op.Attr("precision_config")); ok {
		p.str(", precision = [")
		p.str(strings.Join(prec, ", "))
		p.byte(']')
		taken = append(taken, "precision_config")
	}
	if alg, ok := op.Attr("algorithm").(OpaqueAttr); ok {
		if body, ok := strings.CutPrefix(string(alg), "#stablehlo.dot_algorithm"); ok && strings.HasPrefix(body, "<") && mlirBalancedText(body) {
			p.str(", algorithm = ")
			p.str(body)
			taken = append(taken, "algorithm")
		}
	}
	p.attrDict(mlirRest(op, taken...))
	p.functional(op)
	return true
}

// mlirBalancedText reports whether s is one balanced <...> group.
func mlirBalancedText(s string) bool {
	sc := mlirScanner{src: []byte(s)}
	ok := func() (ok bool) {
		defer func() {
			if r := recover(); r != nil {
				if _, isFail := r.(mlirParseFailure); !isFail {
					panic(r)
				}
				ok = false
			}
		}()
		sc.balanced()
		return sc.atEnd()
	}()
	return ok
}

func mlirPrintFft(p *mlirPrinter, op *Op) bool {
	t, ok1 := mlirEnumOf(op.Attr("fft_type"), "fft_type")
	l, ok2 := mlirI64Array(op.Attr("fft_length"))
	if !mlirShape(op, 1, 1) || !ok1 || !ok2 {
		return false
	}
	p.nameAndOperands(op)
	p.str(", type =  ")
	p.str(t)
	p.str(", length = ")
	p.ints(l)
	p.attrDict(mlirRest(op, "fft_type", "fft_length"))
	p.functional(op)
	return true
}

func mlirPrintSelect(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, 3, 1) {
		return false
	}
	p.nameAndOperands(op)
	p.attrDict(op.Attrs)
	rt := op.Results[0].Type
	_, predFn := op.Operands[0].Type.(FunctionType)
	_, resFn := rt.(FunctionType)
	if !predFn && !resFn && mlirTypeEqual(op.Operands[1].Type, rt) && mlirTypeEqual(op.Operands[2].Type, rt) {
		p.str(" : ")
		p.typ(op.Operands[0].Type)
		p.str(", ")
		p.typ(rt)
		return true
	}
	p.functional(op)
	return true
}

func mlirPrintPad(p *mlirPrinter, op *Op) bool {
	lo, ok1 := mlirI64Array(op.Attr("edge_padding_low"))
	hi, ok2 := mlirI64Array(op.Attr("edge_padding_high"))
	in, ok3 := mlirI64Array(op.Attr("interior_padding"))
	if !mlirShape(op, 2, 1) || !ok1 || !ok2 || !ok3 {
		return false
	}
	p.nameAndOperands(op)
	p.str(", low = ")
	p.ints(lo)
	p.str(", high = ")
	p.ints(hi)
	p.str(", interior = ")
	p.ints(in)
	p.attrDict(mlirRest(op, "edge_padding_low", "edge_padding_high", "interior_padding"))
	p.functional(op)
	return true
}

func mlirPrintTrace(p *mlirPrinter, op *Op) bool {
	tag, ok := op.Attr("tag").(StringAttr)
	if !mlirShape(op, 1, 0) || !ok {
		return false
	}
	p.nameAndOperands(op)
	p.str(", ")
	p.buf = mlirAppendString(p.buf, string(tag))
	p.attrDict(mlirRest(op, "tag"))
	p.str(" : ")
	p.typ(op.Operands[0].Type)
	return true
}

func mlirPrintReturn(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, -1, 0) {
		return false
	}
	if op.Name == "func.return" && len(op.Attrs) > 0 {
		// func.return's format puts the attributes first (attr-dict
		// ($operands^ : type($operands))?); stablehlo.return's after.
		p.name(op)
		p.attrDict(op.Attrs)
		if len(op.Operands) > 0 {
			p.byte(' ')
			p.values(op.Operands)
		}
	} else {
		p.nameAndOperands(op)
		p.attrDict(op.Attrs)
	}
	if len(op.Operands) > 0 {
		p.str(" : ")
		p.typeList(mlirValueTypes(op.Operands))
	}
	return true
}

func mlirPrintOptimizationBarrier(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, -1, -1) || !mlirTypeListEqual(mlirValueTypes(op.Operands), mlirValueTypes(op.Results)) {
		return false
	}
	p.name(op)
	p.attrDict(op.Attrs)
	if len(op.Operands) == 0 {
		p.str("()")
		return true
	}
	p.byte(' ')
	p.values(op.Operands)
	p.str(" : ")
	p.typeList(mlirValueTypes(op.Operands))
	return true
}

func mlirPrintReducePrecision(p *mlirPrinter, op *Op) bool {
	e, ok1 := mlirIntOf(op.Attr("exponent_bits"), xla.Int32)
	m, ok2 := mlirIntOf(op.Attr("mantissa_bits"), xla.Int32)
	if !mlirShape(op, 1, 1) || !ok1 || !ok2 || e < 0 || m < 0 {
		return false
	}
	p.nameAndOperands(op)
	p.str(", format = e")
	p.buf = mlirAppendInt(p.buf, e)
	p.byte('m')
	p.buf = mlirAppendInt(p.buf, m)
	p.attrDict(mlirRest(op, "exponent_bits", "mantissa_bits"))
	p.sameOrFunctional(op)
	return true
}

func mlirPrintComposite(p *mlirPrinter, op *Op) bool {
	name, ok := op.Attr("name").(StringAttr)
	if !mlirShape(op, -1, -1) || !ok {
		return false
	}
	p.name(op)
	p.byte(' ')
	p.buf = mlirAppendString(p.buf, string(name))
	if len(op.Operands) > 0 {
		p.byte(' ')
		p.values(op.Operands)
	}
	p.attrDict(mlirRest(op, "name"))
	p.functional(op)
	return true
}

// mlirSingleBlock returns r's only block.
func mlirSingleBlock(r *Region) (*Block, bool) {
	if r == nil || len(r.Blocks) != 1 || r.Blocks[0] == nil {
		return nil, false
	}
	return r.Blocks[0], true
}

// mlirPrintWhile prints
//
//	stablehlo.while(%iterArg = %0, ...) : t, ... attributes {...}
//	 cond { ... } do { ... }
func mlirPrintWhile(p *mlirPrinter, op *Op) bool {
	if len(op.Regions) != 2 || !mlirNoNil(op) {
		return false
	}
	cond, ok1 := mlirSingleBlock(op.Regions[0])
	body, ok2 := mlirSingleBlock(op.Regions[1])
	types := mlirValueTypes(op.Operands)
	if !ok1 || !ok2 || !mlirTypeListEqual(types, mlirValueTypes(op.Results)) ||
		!mlirTypeListEqual(types, mlirBlockArgTypes(cond)) || !mlirTypeListEqual(types, mlirBlockArgTypes(body)) {
		return false
	}
	// Both regions' arguments print once: they must have the same names.
	for i := range cond.Args {
		if p.names[cond.Args[i]] != p.names[body.Args[i]] {
			return false
		}
	}
	p.name(op)
	p.byte('(')
	for i, v := range op.Operands {
		if i > 0 {
			p.str(", ")
		}
		p.value(body.Args[i])
		p.str(" = ")
		p.value(v)
	}
	p.byte(')')
	if len(types) > 0 {
		p.str(" : ")
		p.typeList(types)
	}
	if len(op.Attrs) > 0 {
		p.str(" attributes ")
		p.dict(op.Attrs)
	}
	p.nl()
	p.str(" cond ")
	p.plainRegion(op.Regions[0])
	p.str(" do ")
	p.plainRegion(op.Regions[1])
	return true
}

// mlirPrintReduce prints the two custom forms of stablehlo.reduce.
func mlirPrintReduce(p *mlirPrinter, op *Op) bool {
	dims, ok := mlirI64Array(op.Attr("dimensions"))
	n := len(op.Operands) / 2
	if !ok || len(op.Regions) != 1 || len(op.Operands)%2 != 0 || n == 0 || !mlirNoNil(op) {
		return false
	}
	body, ok := mlirSingleBlock(op.Regions[0])
	if !ok || len(body.Args) != 2*n {
		return false
	}
	compact := mlirCompactReducer(op, body, p.opts.Locations)
	p.name(op)
	for i := 0; i < n; i++ {
		if i > 0 {
			p.str(", ")
		}
		p.byte('(')
		p.value(op.Operands[i])
		p.str(" init: ")
		p.value(op.Operands[n+i])
		p.byte(')')
	}
	if compact != "" {
		p.str(" applies ")
		p.str(compact)
	}
	p.str(" across dimensions = ")
	p.ints(dims)
	p.attrDict(mlirRest(op, "dimensions"))
	p.functional(op)
	if compact != "" {
		return true
	}
	p.nl()
	p.str(" reducer")
	for i := 0; i < n; i++ {
		p.byte('(')
		for j, a := range []*Value{body.Args[i], body.Args[n+i]} {
			if j > 0 {
				p.str(", ")
			}
			p.value(a)
			p.str(": ")
			p.typ(a.Type)
		}
		p.str(") ")
	}
	p.byte(' ')
	p.plainRegion(op.Regions[0])
	return true
}

// mlirCompactReducer returns the inner op's name when a reduce's body is a
// single commutative binary op on the block's arguments, returned as is,
// with the scalar type of the input's elements and (when locations are
// printed) the reduce's location: what "applies" spells.
func mlirCompactReducer(op *Op, body *Block, locs bool) string {
	if len(op.Operands) != 2 || len(body.Ops) != 2 {
		return ""
	}
	inner, ret := body.Ops[0], body.Ops[1]
	if inner == nil || ret == nil || !mlirCompactReduceOps[inner.Name] || len(inner.Attrs) != 0 || len(inner.Regions) != 0 ||
		len(inner.Operands) != 2 || len(inner.Results) != 1 || !mlirNoNil(inner) ||
		ret.Name != "stablehlo.return" || len(ret.Operands) != 1 || len(ret.Attrs) != 0 || len(ret.Results) != 0 {
		return ""
	}
	et, ok := mlirElemDType(op.Operands[0].Type)
	if !ok {
		return ""
	}
	st := TensorType{DType: et}
	if inner.Operands[0] != body.Args[0] || inner.Operands[1] != body.Args[1] || ret.Operands[0] != inner.Results[0] {
		return ""
	}
	for _, a := range body.Args {
		if !mlirTypeEqual(a.Type, st) {
			return ""
		}
	}
	if !mlirTypeEqual(inner.Results[0].Type, st) {
		return ""
	}
	if locs && (inner.Loc != op.Loc || ret.Loc != op.Loc) {
		return ""
	}
	return inner.Name
}

// mlirPrintFuncOp prints a func.func op nested in another op.
func mlirPrintFuncOp(p *mlirPrinter, op *Op) bool {
	if !mlirNoNil(op) {
		return false
	}
	f, err := mlirFuncFromOp(op, false)
	if err != nil || f.Loc != op.Loc {
		return false
	}
	// The custom form must give back exactly these attributes.
	if string(mlirAppendDict(nil, mlirOpFromFunc(f).Attrs)) != string(mlirAppendDict(nil, op.Attrs)) {
		return false
	}
	p.fnPretty(f)
	return true
}

// mlirPrintModuleOp prints a builtin.module op nested in another op.
func mlirPrintModuleOp(p *mlirPrinter, op *Op) bool {
	if len(op.Operands) != 0 || len(op.Results) != 0 || len(op.Regions) != 1 {
		return false
	}
	b, ok := mlirSingleBlock(op.Regions[0])
	if !ok || len(b.Args) != 0 {
		return false
	}
	p.str("module")
	rest := op.Attrs
	if s, ok := op.Attr("sym_name").(StringAttr); ok {
		p.byte(' ')
		p.buf = mlirAppendSymbol(p.buf, string(s))
		rest = mlirRest(op, "sym_name")
	}
	if len(rest) > 0 {
		p.str(" attributes ")
		p.dict(rest)
	}
	p.byte(' ')
	p.plainRegion(op.Regions[0])
	return true
}

// mlirPrintCheckPair prints check.expect_eq / expect_almost_eq / expect_close.
func mlirPrintCheckPair(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, 2, 0) {
		return false
	}
	var taken []string
	p.nameAndOperands(op)
	switch op.Name {
	case "check.expect_almost_eq":
		if t, ok := op.Attr("tolerance").(FloatAttr); ok && t.Type == xla.Float64 {
			p.str(", tolerance = ")
			p.buf = mlirAppendFloatOf(p.buf, t.Value, xla.Float64)
			taken = append(taken, "tolerance")
		}
	case "check.expect_close":
		for _, k := range []string{"max_ulp_difference", "min_ulp_difference"} {
			if v, ok := mlirIntOf(op.Attr(k), xla.Int64); ok {
				p.str(", ")
				p.str(k)
				p.str(" = ")
				p.buf = mlirAppendInt(p.buf, v)
				taken = append(taken, k)
			}
		}
	}
	p.attrDict(mlirRest(op, taken...))
	p.str(" : ")
	if mlirTypeEqual(op.Operands[0].Type, op.Operands[1].Type) {
		p.typ(op.Operands[0].Type)
	} else {
		p.typeList(mlirValueTypes(op.Operands))
	}
	return true
}

// mlirPrintCheckConst prints check.expect_eq_const / expect_almost_eq_const.
func mlirPrintCheckConst(p *mlirPrinter, op *Op) bool {
	v, ok := op.Attr("value").(DenseElementsAttr)
	if !mlirShape(op, 1, 0) || !ok || !mlirTypeEqual(v.Type, op.Operands[0].Type) || !mlirDenseValid(v) {
		return false
	}
	p.nameAndOperands(op)
	p.str(", ")
	p.buf = mlirAppendDense(p.buf, v)
	p.attrDict(mlirRest(op, "value"))
	return true
}
