package stablehlo

import (
	"math"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// The custom ("pretty") assembly formats of StableHLO, func, builtin and
// check ops, as the dialects define them. print_pretty.go writes the same
// forms; init registers each form's printer and parser together.

type mlirPrettyParser func(p *mlirParser, name string, pos int) *Op

var mlirPrettyParsers = map[string]mlirPrettyParser{}

func init() {
	reg := func(print mlirPrettyPrinter, parse mlirPrettyParser, names ...string) {
		for _, n := range names {
			mlirPrettyPrinters[n] = print
			mlirPrettyParsers[n] = parse
		}
	}
	for _, n := range mlirUnaryOps {
		reg(mlirPrintSame(1), mlirParseUnary, "stablehlo."+n)
	}
	for _, n := range mlirBinaryOps {
		reg(mlirPrintSame(2), mlirParseBinary, "stablehlo."+n)
	}
	for _, n := range mlirFunctionalOps {
		reg(mlirPrintFunctional(-1), mlirParseFunctional, "stablehlo."+n)
	}
	for n, k := range mlirKeywordOps {
		reg(mlirPrintKeywordOp(k), mlirParseKeywordOp(k), n)
	}
	reg(mlirPrintComplex, mlirParseComplex, "stablehlo.complex")
	reg(mlirPrintConstant, mlirParseConstant, "stablehlo.constant")
	reg(mlirPrintIota, mlirParseIota, "stablehlo.iota")
	reg(mlirPrintTypeOnly, mlirParseTypeOnly, "stablehlo.create_token", "stablehlo.replica_id", "stablehlo.partition_id")
	reg(mlirPrintAfterAll, mlirParseAfterAll, "stablehlo.after_all")
	reg(mlirPrintTuple, mlirParseTuple, "stablehlo.tuple")
	reg(mlirPrintGetTupleElement, mlirParseGetTupleElement, "stablehlo.get_tuple_element")
	reg(mlirPrintCompare, mlirParseCompare, "stablehlo.compare")
	reg(mlirPrintSlice, mlirParseSlice, "stablehlo.slice")
	reg(mlirPrintCholesky, mlirParseCholesky, "stablehlo.cholesky")
	reg(mlirPrintSame(3), mlirParseClamp, "stablehlo.clamp")
	reg(mlirPrintConvolution, mlirParseConvolution, "stablehlo.convolution", "stablehlo.dynamic_conv")
	reg(mlirPrintCallForm("call_target_name", mlirSymbolNameSyntax), mlirParseCallForm("call_target_name", mlirSymbolNameSyntax),
		"stablehlo.custom_call")
	reg(mlirPrintDot, mlirParseDot, "stablehlo.dot")
	reg(mlirPrintDotGeneral, mlirParseDotGeneral, "stablehlo.dot_general")
	reg(mlirPrintFft, mlirParseFft, "stablehlo.fft")
	reg(mlirPrintSelect, mlirParseSelect, "stablehlo.select")
	reg(mlirPrintPad, mlirParsePad, "stablehlo.pad")
	reg(mlirPrintTrace, mlirParseTrace, "stablehlo.trace")
	reg(mlirPrintReturn, mlirParseReturn, "stablehlo.return", "func.return")
	reg(mlirPrintOptimizationBarrier, mlirParseOptimizationBarrier, "stablehlo.optimization_barrier")
	reg(mlirPrintReducePrecision, mlirParseReducePrecision, "stablehlo.reduce_precision")
	reg(mlirPrintComposite, mlirParseComposite, "stablehlo.composite")
	reg(mlirPrintWhile, mlirParseWhile, "stablehlo.while")
	reg(mlirPrintReduce, mlirParseReduce, "stablehlo.reduce")
	reg(mlirPrintCallForm("callee", mlirSymbolRefSyntax), mlirParseCallForm("callee", mlirSymbolRefSyntax), "func.call")
	reg(mlirPrintFuncOp, mlirParseFunc, "func.func")
	reg(mlirPrintModuleOp, mlirParseModule, "builtin.module")
	reg(mlirPrintCheckPair, mlirParseCheckPair, "check.expect_eq", "check.expect_almost_eq", "check.expect_close")
	reg(mlirPrintCheckConst, mlirParseCheckConst, "check.expect_eq_const", "check.expect_almost_eq_const")
}

// Op families sharing one assembly format.
var (
	// $operand attr-dict : custom<SameOperandsAndResultType>
	mlirUnaryOps = []string{"abs", "cbrt", "ceil", "convert", "count_leading_zeros", "cosine",
		"exponential", "exponential_minus_one", "floor", "imag", "log", "log_plus_one", "logistic",
		"not", "negate", "popcnt", "real", "round_nearest_afz", "round_nearest_even", "rsqrt",
		"sign", "sine", "sqrt", "square", "tan", "tanh", "uniform_quantize", "uniform_dequantize"}
	// $lhs, $rhs attr-dict : custom<SameOperandsAndResultType>
	mlirBinaryOps = []string{"add", "atan2", "divide", "maximum", "minimum", "multiply", "power",
		"remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical", "subtract",
		"and", "or", "xor"}
	// operands attr-dict : functional-type(operands, results)
	mlirFunctionalOps = []string{"is_finite", "bitcast_convert", "reshape", "dynamic_reshape",
		"dynamic_update_slice", "real_dynamic_slice", "dynamic_pad", "compute_reshape_shape",
		"cstr_reshapable"}
)

// mlirKeywordOp is the custom form of an op that shows one attribute after
// a keyword:
//
//	%a, %b, kw = VALUE attr-dict : functional-type(operands, results)
//
// or, with same, ": custom<SameOperandsAndResultType>" for the types.
// The printer and the parser go by the same table, mlirKeywordOps.
type mlirKeywordOp struct {
	kw, attr   string
	value      mlirAttrSyntax
	operands   int  // the operands before kw
	variadic   bool // any number of further operands may follow them
	anyResults bool // else the op has one result
	same       bool
}

// mlirAttrSyntax is how a keyword op spells its attribute after "kw =".
type mlirAttrSyntax struct {
	// print appends the text of a, blank(s) first; false when a has no
	// such text.
	print func(p *mlirPrinter, a Attribute) bool
	parse func(p *mlirParser) Attribute
}

var (
	// [1, 2] for array<i64: 1, 2>.
	mlirDimsSyntax = mlirAttrSyntax{
		print: func(p *mlirPrinter, a Attribute) bool {
			dims, ok := mlirI64Array(a)
			if ok {
				p.byte(' ')
				p.ints(dims)
			}
			return ok
		},
		parse: func(p *mlirParser) Attribute { return p.dimsArray() },
	}
	// 1 for 1 : i64.
	mlirDimSyntax = mlirAttrSyntax{
		print: func(p *mlirPrinter, a Attribute) bool {
			d, ok := mlirIntOf(a, xla.Int64)
			if ok {
				p.byte(' ')
				p.buf = mlirAppendInt(p.buf, d)
			}
			return ok
		},
		parse: func(p *mlirParser) Attribute { return mlirI64(p.integer()) },
	}
	// A string literal.
	mlirStringSyntax = mlirAttrSyntax{
		print: func(p *mlirPrinter, a Attribute) bool {
			s, ok := a.(StringAttr)
			if ok {
				p.byte(' ')
				p.buf = mlirAppendString(p.buf, string(s))
			}
			return ok
		},
		parse: func(p *mlirParser) Attribute { return StringAttr(p.stringLit()) },
	}
	// @name for a string (custom_call's call_target_name) or a symbol
	// reference (func.call's callee).
	mlirSymbolNameSyntax = mlirSymbolSyntax[StringAttr]()
	mlirSymbolRefSyntax  = mlirSymbolSyntax[SymbolRefAttr]()
)

// mlirSymbolSyntax is @name for an attribute of type A.
func mlirSymbolSyntax[A interface {
	StringAttr | SymbolRefAttr
	Attribute
}]() mlirAttrSyntax {
	return mlirAttrSyntax{
		print: func(p *mlirPrinter, a Attribute) bool {
			s, ok := a.(A)
			if ok {
				p.byte(' ')
				p.buf = mlirAppendSymbol(p.buf, string(s))
			}
			return ok
		},
		parse: func(p *mlirParser) Attribute {
			p.skipSpace()
			return A(p.parseSymbolRef())
		},
	}
}

// mlirEnumSyntax is a bare value of StableHLO enum (printed after two
// blanks, as StableHLO does).
func mlirEnumSyntax(enum string) mlirAttrSyntax {
	return mlirAttrSyntax{
		print: func(p *mlirPrinter, a Attribute) bool {
			v, ok := mlirEnumOf(a, enum)
			if ok {
				p.str("  ")
				p.str(v)
			}
			return ok
		},
		parse: func(p *mlirParser) Attribute { return p.enumAttr(enum) },
	}
}

var mlirKeywordOps = map[string]mlirKeywordOp{
	"stablehlo.broadcast":                {kw: "sizes", attr: "broadcast_sizes", value: mlirDimsSyntax, operands: 1},
	"stablehlo.broadcast_in_dim":         {kw: "dims", attr: "broadcast_dimensions", value: mlirDimsSyntax, operands: 1},
	"stablehlo.dynamic_broadcast_in_dim": {kw: "dims", attr: "broadcast_dimensions", value: mlirDimsSyntax, operands: 2},
	"stablehlo.transpose":                {kw: "dims", attr: "permutation", value: mlirDimsSyntax, operands: 1},
	"stablehlo.reverse":                  {kw: "dims", attr: "dimensions", value: mlirDimsSyntax, operands: 1, same: true},
	"stablehlo.dynamic_slice":            {kw: "sizes", attr: "slice_sizes", value: mlirDimsSyntax, operands: 1, variadic: true},
	"stablehlo.concatenate":              {kw: "dim", attr: "dimension", value: mlirDimSyntax, variadic: true},
	"stablehlo.get_dimension_size":       {kw: "dim", attr: "dimension", value: mlirDimSyntax, operands: 1},
	"stablehlo.set_dimension_size":       {kw: "dim", attr: "dimension", value: mlirDimSyntax, operands: 2},
	"stablehlo.dynamic_iota":             {kw: "dim", attr: "iota_dimension", value: mlirDimSyntax, operands: 1},
	"stablehlo.einsum":                   {kw: "config", attr: "einsum_config", value: mlirStringSyntax, operands: 2},
	"stablehlo.unary_einsum":             {kw: "config", attr: "einsum_config", value: mlirStringSyntax, operands: 1},
	"stablehlo.rng": {kw: "distribution", attr: "rng_distribution", value: mlirEnumSyntax("rng_distribution"),
		operands: 3, anyResults: true},
	"stablehlo.rng_bit_generator": {kw: "algorithm", attr: "rng_algorithm", value: mlirEnumSyntax("rng_algorithm"),
		operands: 1, anyResults: true},
}

// parsePrettyOp parses an op in custom form; id is its (possibly bare) name.
func (p *mlirParser) parsePrettyOp(id string, pos int, groups []mlirResultGroup) *Op {
	name := id
	if strings.IndexByte(id, '.') < 0 {
		switch {
		case id == "module":
			name = "builtin.module"
		case p.defaultDialect != "":
			name = p.defaultDialect + "." + id
		default:
			name = "func." + id
		}
	}
	fn := mlirPrettyParsers[name]
	if fn == nil {
		p.errAt(pos, "custom form of operation %q is not known; write it in the generic form \"%s\"(...)", id, name)
	}
	return fn(p, name, pos)
}

// --- helpers ---------------------------------------------------------------

// optAttrDict parses an optional attribute dictionary.
func (p *mlirParser) optAttrDict(attrs []NamedAttr) []NamedAttr {
	if p.peek() == '{' {
		return p.parseDictEntries(attrs)
	}
	return attrs
}

// optDictAttr parses an optional attribute dictionary as a DictAttr (empty
// when there is none).
func (p *mlirParser) optDictAttr() DictAttr {
	if p.peek() != '{' {
		return DictAttr{}
	}
	return DictAttr(p.parseDictEntries(nil))
}

// functionalType parses ": (ins) -> outs".
func (p *mlirParser) functionalType() (FunctionType, int) {
	p.expect(':')
	p.skipSpace()
	pos := p.pos
	return p.parseFunctionType(), pos
}

// functionalOp parses ": (ins) -> outs" and builds op name on refs.
func (p *mlirParser) functionalOp(name string, refs []mlirValueRef, attrs []NamedAttr) *Op {
	ft, tpos := p.functionalType()
	return p.newOp(name, refs, ft.Inputs, ft.Results, attrs, tpos)
}

// mlirTypes is a list of operand types: ins, or n times same.
type mlirTypes struct {
	ins  []Type
	same Type
}

// sameType parses ": t" (every operand and the result have type t) or ":
// (ins) -> out" for n operands.
func (p *mlirParser) sameType(n int) (mlirTypes, Type) {
	p.expect(':')
	p.skipSpace()
	pos := p.pos
	t := p.parseType()
	if ft, ok := t.(FunctionType); ok {
		if len(ft.Inputs) != n {
			p.errAt(pos, "%d operands present, but expected %d", n, len(ft.Inputs))
		}
		if len(ft.Results) != 1 {
			p.errAt(pos, "expected single output")
		}
		return mlirTypes{ins: ft.Inputs}, ft.Results[0]
	}
	return mlirTypes{same: t}, t
}

// newOp resolves operands against ins and builds the op.
func (p *mlirParser) newOp(name string, refs []mlirValueRef, ins, outs []Type, attrs []NamedAttr, pos int) *Op {
	return p.newOpTypes(name, refs, mlirTypes{ins: ins}, outs, attrs, pos)
}

// newOpTypes builds an op, in one allocation for the common shape (one
// result, up to three operands).
func (p *mlirParser) newOpTypes(name string, refs []mlirValueRef, ins mlirTypes, outs []Type, attrs []NamedAttr, pos int) *Op {
	if ins.same == nil && len(refs) != len(ins.ins) {
		p.errAt(pos, "%d operands present, but expected %d", len(refs), len(ins.ins))
	}
	if len(attrs) == 0 {
		attrs = nil
	}
	var op *Op
	var operands []*Value
	if len(outs) == 1 && len(refs) <= 3 {
		x := &mlirOpBlock{}
		x.v = Value{Type: outs[0], op: &x.op}
		x.res[0] = &x.v
		x.op = Op{Name: name, Attrs: attrs, Results: x.res[:]}
		if len(refs) > 0 {
			operands = x.operands[:len(refs):len(refs)]
		}
		op = &x.op
	} else {
		op = &Op{Name: name, Attrs: attrs}
		if len(outs) > 0 {
			vs := make([]Value, len(outs))
			op.Results = make([]*Value, len(outs))
			for i, t := range outs {
				vs[i] = Value{Type: t, op: op, index: i}
				op.Results[i] = &vs[i]
			}
		}
		if len(refs) > 0 {
			operands = make([]*Value, len(refs))
		}
	}
	for i, r := range refs {
		t := ins.same
		if t == nil {
			t = ins.ins[i]
		}
		operands[i] = p.resolve(r, t)
	}
	op.Operands = operands
	return op
}

// mlirOpBlock is an op with one result and up to three operands, allocated
// together.
type mlirOpBlock struct {
	op       Op
	res      [1]*Value
	v        Value
	operands [3]*Value
}

// expectKV parses "key =".
func (p *mlirParser) expectKV(key string) {
	p.expectKeyword(key)
	p.expect('=')
}

// dimsArray parses "[1, 2]" as array<i64: 1, 2>.
func (p *mlirParser) dimsArray() DenseArrayAttr {
	return DenseArrayAttr{DType: xla.Int64, Values: mlirNilIfEmpty(p.parseIntList())}
}

// operandsWithTrailingComma parses "%a, %b," (each operand followed by a
// comma), stopping at the first non-value.
func (p *mlirParser) operandsWithTrailingComma() []mlirValueRef {
	var refs []mlirValueRef
	for p.peek() == '%' {
		refs = append(refs, p.parseValueRef())
		p.expect(',')
	}
	return refs
}

// enumValue parses a bare enum value and checks it against the known values.
func (p *mlirParser) enumAttr(enum string) EnumAttr {
	p.skipSpace()
	pos := p.pos
	v := p.bareID()
	if len(v) == 0 {
		p.fail("expected %s value%s", enum, p.found())
	}
	if vals, ok := mlirEnumValues[enum]; ok {
		found := false
		for _, x := range vals {
			if x == string(v) {
				found = true
			}
		}
		if !found {
			p.errAt(pos, "unknown %s value %q", enum, v)
		}
	}
	return EnumAttr{Dialect: "stablehlo", Enum: enum, Value: p.intern(v)}
}

// mlirEnumValues are the values of StableHLO's enums.
var mlirEnumValues = map[string][]string{
	"comparison_direction": {"EQ", "NE", "GE", "GT", "LE", "LT"},
	"comparison_type":      {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "WEAKORDER"},
	"precision":            {"DEFAULT", "HIGH", "HIGHEST"},
	"rng_algorithm":        {"DEFAULT", "THREE_FRY", "PHILOX"},
	"rng_distribution":     {"UNIFORM", "NORMAL"},
	"fft_type":             {"FFT", "IFFT", "RFFT", "IRFFT"},
	"transpose":            {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"},
}

// precisionList parses "[DEFAULT, HIGH]".
func (p *mlirParser) precisionList() ArrayAttr {
	p.expect('[')
	arr := ArrayAttr{}
	if p.tryByte(']') {
		return arr
	}
	for {
		arr = append(arr, p.enumAttr("precision"))
		if !p.tryByte(',') {
			break
		}
	}
	p.expect(']')
	return arr
}

func mlirI64(v int64) IntAttr { return IntAttr{Value: v, Type: xla.Int64} }
func mlirI32(v int64) IntAttr { return IntAttr{Value: v, Type: xla.Int32} }

// --- op families -------------------------------------------------------------

func mlirParseUnary(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	attrs := p.optAttrDict(nil)
	ins, out := p.sameType(1)
	return p.newOpTypes(name, []mlirValueRef{x}, ins, []Type{out}, attrs, pos)
}

func mlirParseBinary(p *mlirParser, name string, pos int) *Op {
	a := p.parseValueRef()
	p.expect(',')
	b := p.parseValueRef()
	attrs := p.optAttrDict(nil)
	ins, out := p.sameType(2)
	return p.newOpTypes(name, []mlirValueRef{a, b}, ins, []Type{out}, attrs, pos)
}

func mlirParseFunctional(p *mlirParser, name string, pos int) *Op {
	refs := p.parseValueRefList()
	attrs := p.optAttrDict(nil)
	return p.functionalOp(name, refs, attrs)
}

func mlirParseComplex(p *mlirParser, name string, pos int) *Op {
	a := p.parseValueRef()
	p.expect(',')
	b := p.parseValueRef()
	attrs := p.optAttrDict(nil)
	p.expect(':')
	p.skipSpace()
	tpos := p.pos
	t := p.parseType()
	if ft, ok := t.(FunctionType); ok {
		if len(ft.Results) != 1 {
			p.errAt(tpos, "expected single output")
		}
		return p.newOp(name, []mlirValueRef{a, b}, ft.Inputs, ft.Results, attrs, tpos)
	}
	tt, ok := t.(TensorType)
	if !ok || !tt.DType.IsComplex() {
		p.errAt(tpos, "expected tensor with complex element type")
	}
	real := TensorType{DType: tt.DType.ComplexElem(), Dims: tt.Dims}
	return p.newOp(name, []mlirValueRef{a, b}, []Type{real, real}, []Type{t}, attrs, tpos)
}

func mlirParseConstant(p *mlirParser, name string, pos int) *Op {
	if p.peek() == '(' {
		return p.parseGenericTail(name, pos)
	}
	attrs := p.optAttrDict(nil)
	p.skipSpace()
	apos := p.pos
	v, t := p.parseAttr()
	if t == nil {
		p.errAt(apos, "expected a dense elements attribute")
	}
	attrs = append(attrs, NamedAttr{Name: "value", Value: v})
	return NewOp(name, nil, []Type{t}, attrs...)
}

func mlirParseIota(p *mlirParser, name string, pos int) *Op {
	p.expectKV("dim")
	d := p.integer()
	attrs := p.optAttrDict([]NamedAttr{{Name: "iota_dimension", Value: mlirI64(d)}})
	p.expect(':')
	t := p.parseType()
	return NewOp(name, nil, []Type{t}, attrs...)
}

func mlirParseTypeOnly(p *mlirParser, name string, pos int) *Op {
	attrs := p.optAttrDict(nil)
	p.expect(':')
	t := p.parseType()
	return p.newOp(name, nil, nil, []Type{t}, attrs, pos)
}

func mlirParseAfterAll(p *mlirParser, name string, pos int) *Op {
	refs := p.parseValueRefList()
	attrs := p.optAttrDict(nil)
	ins, out := p.sameType(len(refs))
	return p.newOpTypes(name, refs, ins, []Type{out}, attrs, pos)
}

func mlirParseTuple(p *mlirParser, name string, pos int) *Op {
	refs := p.parseValueRefList()
	attrs := p.optAttrDict(nil)
	p.expect(':')
	p.skipSpace()
	tpos := p.pos
	t := p.parseType()
	tt, ok := t.(TupleType)
	if !ok {
		p.errAt(tpos, "expected tuple type")
	}
	return p.newOp(name, refs, tt.Elems, []Type{t}, attrs, tpos)
}

func mlirParseGetTupleElement(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	p.expect('[')
	ipos := p.pos
	i := p.integer()
	if i < 0 || i > math.MaxInt32 {
		p.errAt(ipos, "tuple index %d is outside i32's range", i)
	}
	p.expect(']')
	attrs := p.optAttrDict([]NamedAttr{{Name: "index", Value: mlirI32(i)}})
	return p.functionalOp(name, []mlirValueRef{x}, attrs)
}

func mlirParseCompare(p *mlirParser, name string, pos int) *Op {
	attrs := []NamedAttr{{Name: "comparison_direction", Value: p.enumAttr("comparison_direction")}}
	p.expect(',')
	a := p.parseValueRef()
	p.expect(',')
	b := p.parseValueRef()
	if p.tryByte(',') {
		attrs = append(attrs, NamedAttr{Name: "compare_type", Value: p.enumAttr("comparison_type")})
	}
	attrs = p.optAttrDict(attrs)
	return p.functionalOp(name, []mlirValueRef{a, b}, attrs)
}

func mlirParseSlice(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	p.expect('[')
	var start, limit, strides []int64
	if !p.tryByte(']') {
		for {
			start = append(start, p.integer())
			p.expect(':')
			limit = append(limit, p.integer())
			if p.tryByte(':') {
				strides = append(strides, p.integer())
			} else {
				strides = append(strides, 1)
			}
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(']')
	}
	attrs := p.optAttrDict([]NamedAttr{
		{Name: "start_indices", Value: DenseArrayAttr{DType: xla.Int64, Values: start}},
		{Name: "limit_indices", Value: DenseArrayAttr{DType: xla.Int64, Values: limit}},
		{Name: "strides", Value: DenseArrayAttr{DType: xla.Int64, Values: strides}},
	})
	return p.functionalOp(name, []mlirValueRef{x}, attrs)
}

// mlirParseKeywordOp parses the form of k (see mlirKeywordOp).
func mlirParseKeywordOp(k mlirKeywordOp) mlirPrettyParser {
	return func(p *mlirParser, name string, pos int) *Op {
		var refs []mlirValueRef
		for i := 0; i < k.operands; i++ {
			refs = append(refs, p.parseValueRef())
			p.expect(',')
		}
		if k.variadic {
			refs = append(refs, p.operandsWithTrailingComma()...)
		}
		p.expectKV(k.kw)
		attrs := p.optAttrDict([]NamedAttr{{Name: k.attr, Value: k.value.parse(p)}})
		if k.same {
			ins, out := p.sameType(len(refs))
			return p.newOpTypes(name, refs, ins, []Type{out}, attrs, pos)
		}
		return p.functionalOp(name, refs, attrs)
	}
}

func mlirParseCholesky(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	var attrs []NamedAttr
	if p.tryByte(',') {
		p.expectKV("lower")
		switch {
		case p.tryKeyword("true"):
			attrs = append(attrs, NamedAttr{Name: "lower", Value: BoolAttr(true)})
		case p.tryKeyword("false"):
			attrs = append(attrs, NamedAttr{Name: "lower", Value: BoolAttr(false)})
		default:
			p.fail("expected true or false%s", p.found())
		}
	}
	attrs = p.optAttrDict(attrs)
	ins, out := p.sameType(1)
	return p.newOpTypes(name, []mlirValueRef{x}, ins, []Type{out}, attrs, pos)
}

func mlirParseClamp(p *mlirParser, name string, pos int) *Op {
	refs := p.parseValueRefList()
	if len(refs) != 3 {
		p.errAt(pos, "stablehlo.clamp takes 3 operands")
	}
	attrs := p.optAttrDict(nil)
	ins, out := p.sameType(3)
	return p.newOpTypes(name, refs, ins, []Type{out}, attrs, pos)
}

func mlirParseConvolution(p *mlirParser, name string, pos int) *Op {
	p.expect('(')
	refs := p.parseValueRefList()
	p.expect(')')
	p.expectKV("dim_numbers")
	attrs := []NamedAttr{{Name: "dimension_numbers", Value: p.parseConvDimsRaw()}}
	p.expect(',')
	p.expectKV("window")
	p.expect('{')
	seen := map[string]bool{}
	if !p.tryByte('}') {
		for {
			p.skipSpace()
			kpos := p.pos
			k := string(p.bareID())
			if seen[k] {
				p.errAt(kpos, "duplicate window attribute %q", k)
			}
			seen[k] = true
			p.expect('=')
			switch k {
			case "stride":
				attrs = append(attrs, NamedAttr{Name: "window_strides", Value: p.dimsArray()})
			case "lhs_dilate":
				attrs = append(attrs, NamedAttr{Name: "lhs_dilation", Value: p.dimsArray()})
			case "rhs_dilate":
				attrs = append(attrs, NamedAttr{Name: "rhs_dilation", Value: p.dimsArray()})
			case "pad":
				attrs = append(attrs, NamedAttr{Name: "padding", Value: p.padding()})
			case "reverse":
				attrs = append(attrs, NamedAttr{Name: "window_reversal", Value: p.boolArray()})
			default:
				p.errAt(kpos, "unknown window attribute %q", k)
			}
			if !p.tryByte(',') {
				break
			}
		}
		p.expect('}')
	}
	attrs = p.optAttrDict(attrs)
	return p.functionalOp(name, refs, attrs)
}

// padding parses "[[0, 1], [2, 3]]" as dense<...> : tensor<Nx2xi64>.
func (p *mlirParser) padding() DenseElementsAttr {
	p.expect('[')
	var vals []int64
	if !p.tryByte(']') {
		for {
			pair := p.parseIntList()
			if len(pair) != 2 {
				p.fail("expected padding pairs [low, high]")
			}
			vals = append(vals, pair...)
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(']')
	}
	data := make([]byte, 8*len(vals))
	for i, v := range vals {
		mlirPutBits(data[8*i:8*i+8], uint64(v))
	}
	return DenseElementsAttr{Type: TensorType{DType: xla.Int64, Dims: []int64{int64(len(vals) / 2), 2}}, Data: data}
}

// boolArray parses "[true, false]" or "[1, 0]" as array<i1: ...>.
func (p *mlirParser) boolArray() DenseArrayAttr {
	p.expect('[')
	out := DenseArrayAttr{DType: xla.Bool}
	if p.tryByte(']') {
		return out
	}
	for {
		switch {
		case p.tryKeyword("true"):
			out.Values = append(out.Values, 1)
		case p.tryKeyword("false"):
			out.Values = append(out.Values, 0)
		default:
			v := p.integer()
			if v != 0 && v != 1 {
				p.fail("expected boolean")
			}
			out.Values = append(out.Values, v)
		}
		if !p.tryByte(',') {
			break
		}
	}
	p.expect(']')
	return out
}

// mlirParseCallForm parses "@sym(%a, ...) attr-dict : functional-type",
// sym being attribute attr.
func mlirParseCallForm(attr string, sym mlirAttrSyntax) mlirPrettyParser {
	return func(p *mlirParser, name string, pos int) *Op {
		a := sym.parse(p)
		p.expect('(')
		refs := p.parseValueRefList()
		p.expect(')')
		attrs := p.optAttrDict([]NamedAttr{{Name: attr, Value: a}})
		return p.functionalOp(name, refs, attrs)
	}
}

func mlirParseDot(p *mlirParser, name string, pos int) *Op {
	a := p.parseValueRef()
	p.expect(',')
	b := p.parseValueRef()
	var attrs []NamedAttr
	if p.tryByte(',') {
		p.expectKV("precision")
		attrs = append(attrs, NamedAttr{Name: "precision_config", Value: p.precisionList()})
	}
	attrs = p.optAttrDict(attrs)
	return p.functionalOp(name, []mlirValueRef{a, b}, attrs)
}

func mlirParseDotGeneral(p *mlirParser, name string, pos int) *Op {
	a := p.parseValueRef()
	p.expect(',')
	b := p.parseValueRef()
	p.expect(',')
	var d DotDimensionNumbers
	if p.tryKeyword("batching_dims") {
		p.expect('=')
		d.LhsBatchingDims = mlirNilIfEmpty(p.parseIntList())
		p.expectKeyword("x")
		d.RhsBatchingDims = mlirNilIfEmpty(p.parseIntList())
		p.expect(',')
	}
	p.expectKV("contracting_dims")
	d.LhsContractingDims = mlirNilIfEmpty(p.parseIntList())
	p.expectKeyword("x")
	d.RhsContractingDims = mlirNilIfEmpty(p.parseIntList())
	attrs := []NamedAttr{{Name: "dot_dimension_numbers", Value: d}}
	for p.tryByte(',') {
		switch {
		case p.tryKeyword("precision"):
			p.expect('=')
			attrs = append(attrs, NamedAttr{Name: "precision_config", Value: p.precisionList()})
		case p.tryKeyword("algorithm"):
			p.expect('=')
			p.skipSpace()
			body := p.balanced()
			attrs = append(attrs, NamedAttr{Name: "algorithm", Value: OpaqueAttr("#stablehlo.dot_algorithm" + string(body))})
		default:
			p.fail("expected precision or algorithm%s", p.found())
		}
	}
	attrs = p.optAttrDict(attrs)
	return p.functionalOp(name, []mlirValueRef{a, b}, attrs)
}

func mlirParseFft(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	p.expect(',')
	p.expectKV("type")
	attrs := []NamedAttr{{Name: "fft_type", Value: p.enumAttr("fft_type")}}
	p.expect(',')
	p.expectKV("length")
	attrs = p.optAttrDict(append(attrs, NamedAttr{Name: "fft_length", Value: p.dimsArray()}))
	return p.functionalOp(name, []mlirValueRef{x}, attrs)
}

func mlirParseSelect(p *mlirParser, name string, pos int) *Op {
	refs := p.parseValueRefList()
	if len(refs) != 3 {
		p.errAt(pos, "stablehlo.select takes 3 operands")
	}
	attrs := p.optAttrDict(nil)
	p.expect(':')
	p.skipSpace()
	tpos := p.pos
	ts := p.parseTypeList()
	if len(ts) == 1 {
		ft, ok := ts[0].(FunctionType)
		if !ok || len(ft.Results) != 1 {
			p.errAt(tpos, "expected functional type or list of two types")
		}
		return p.newOp(name, refs, ft.Inputs, ft.Results, attrs, tpos)
	}
	if len(ts) != 2 {
		p.errAt(tpos, "expected functional type or list of two types")
	}
	return p.newOp(name, refs, []Type{ts[0], ts[1], ts[1]}, []Type{ts[1]}, attrs, tpos)
}

func mlirParsePad(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	p.expect(',')
	v := p.parseValueRef()
	p.expect(',')
	p.expectKV("low")
	low := p.dimsArray()
	p.expect(',')
	p.expectKV("high")
	high := p.dimsArray()
	p.expect(',')
	p.expectKV("interior")
	interior := p.dimsArray()
	attrs := p.optAttrDict([]NamedAttr{
		{Name: "edge_padding_low", Value: low},
		{Name: "edge_padding_high", Value: high},
		{Name: "interior_padding", Value: interior},
	})
	return p.functionalOp(name, []mlirValueRef{x, v}, attrs)
}

func mlirParseTrace(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	p.expect(',')
	tag := p.stringLit()
	attrs := p.optAttrDict([]NamedAttr{{Name: "tag", Value: StringAttr(tag)}})
	p.expect(':')
	t := p.parseType()
	return p.newOp(name, []mlirValueRef{x}, []Type{t}, nil, attrs, pos)
}

func mlirParseReturn(p *mlirParser, name string, pos int) *Op {
	attrs := p.optAttrDict(nil) // func.return's place for them
	refs := p.parseValueRefList()
	if attrs == nil {
		attrs = p.optAttrDict(nil) // stablehlo.return's
	}
	var ts []Type
	if len(refs) > 0 {
		p.expect(':')
		ts = p.parseTypeList()
	}
	return p.newOp(name, refs, ts, nil, attrs, pos)
}

func mlirParseOptimizationBarrier(p *mlirParser, name string, pos int) *Op {
	attrs := p.optAttrDict(nil)
	if p.tryByte('(') {
		p.expect(')')
		return p.newOp(name, nil, nil, nil, attrs, pos)
	}
	refs := p.parseValueRefList()
	if len(refs) == 0 {
		p.fail("expected operands or '()'%s", p.found())
	}
	p.expect(':')
	ts := p.parseTypeList()
	return p.newOp(name, refs, ts, ts, attrs, pos)
}

func mlirParseReducePrecision(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	p.expect(',')
	p.expectKV("format")
	p.skipSpace()
	fpos := p.pos
	f := string(p.bareID())
	e, m, ok := mlirParseExpMan(f)
	if !ok {
		p.errAt(fpos, "expected exponent mantissa in format e#m#, saw %q", f)
	}
	attrs := p.optAttrDict([]NamedAttr{
		{Name: "exponent_bits", Value: mlirI32(e)},
		{Name: "mantissa_bits", Value: mlirI32(m)},
	})
	ins, out := p.sameType(1)
	return p.newOpTypes(name, []mlirValueRef{x}, ins, []Type{out}, attrs, pos)
}

// mlirParseExpMan reads "e5m10".
func mlirParseExpMan(s string) (e, m int64, ok bool) {
	if len(s) < 4 || s[0] != 'e' {
		return 0, 0, false
	}
	i := strings.IndexByte(s, 'm')
	if i < 2 || i == len(s)-1 {
		return 0, 0, false
	}
	ev, err1 := strconv.ParseInt(s[1:i], 10, 32)
	mv, err2 := strconv.ParseInt(s[i+1:], 10, 32)
	if err1 != nil || err2 != nil || ev < 0 || mv < 0 || s[1] == '+' || s[i+1] == '+' {
		return 0, 0, false
	}
	return ev, mv, true
}

func mlirParseComposite(p *mlirParser, name string, pos int) *Op {
	cname := p.stringLit()
	refs := p.parseValueRefList()
	attrs := p.optAttrDict([]NamedAttr{{Name: "name", Value: StringAttr(cname)}})
	return p.functionalOp(name, refs, attrs)
}

// mlirParseWhile parses
//
//	stablehlo.while(%iterArg = %init, ...) : t, ... attributes {...}
//	  cond { ... } do { ... }
func mlirParseWhile(p *mlirParser, name string, pos int) *Op {
	p.expect('(')
	var args []mlirArgDef
	var refs []mlirValueRef
	if !p.tryByte(')') {
		for {
			a := p.parseValueRef()
			if a.idx >= 0 {
				p.errAt(a.pos, "iteration argument names cannot have a result number")
			}
			p.expect('=')
			refs = append(refs, p.parseValueRef())
			args = append(args, mlirArgDef{name: a.name, pos: a.pos})
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(')')
	}
	var ts []Type
	tpos := p.pos
	if len(refs) > 0 {
		p.expect(':')
		p.skipSpace()
		tpos = p.pos
		ts = p.parseTypeList()
	}
	operands := p.resolveAll(refs, ts, tpos)
	for i := range args {
		args[i].typ = ts[i]
	}
	var attrs []NamedAttr
	if p.tryKeyword("attributes") {
		attrs = p.parseDictEntries(nil)
	}
	if args == nil {
		args = []mlirArgDef{}
	}
	p.expectKeyword("cond")
	cond := p.parseRegion(args, false, "")
	p.expectKeyword("do")
	body := p.parseRegion(args, false, "")
	op := NewOp(name, operands, ts, attrs...)
	if len(attrs) == 0 {
		op.Attrs = nil
	}
	op.AddRegion(cond)
	op.AddRegion(body)
	return op
}

// mlirCompactReduceOps are the ops "applies" may name: commutative binary
// StableHLO ops.
var mlirCompactReduceOps = map[string]bool{
	"stablehlo.add": true, "stablehlo.multiply": true, "stablehlo.maximum": true,
	"stablehlo.minimum": true, "stablehlo.and": true, "stablehlo.or": true, "stablehlo.xor": true,
}

// mlirParseReduce parses the two forms of stablehlo.reduce:
//
//	stablehlo.reduce(%x init: %i) applies stablehlo.add across dimensions = [1] : (...) -> ...
//	stablehlo.reduce(%x init: %i) across dimensions = [1] : (...) -> ...
//	  reducer(%a: t, %b: t) { ... }
func mlirParseReduce(p *mlirParser, name string, pos int) *Op {
	var inputs, inits []mlirValueRef
	for {
		if !p.tryByte('(') {
			break
		}
		inputs = append(inputs, p.parseValueRef())
		p.expectKeyword("init")
		p.expect(':')
		inits = append(inits, p.parseValueRef())
		p.expect(')')
		if !p.tryByte(',') {
			break
		}
	}
	refs := append(inputs, inits...)
	compact := ""
	if p.tryKeyword("applies") {
		p.skipSpace()
		ipos := p.pos
		if p.peek() == '"' {
			compact = p.stringLit()
		} else {
			compact = string(p.bareID())
		}
		if !mlirCompactReduceOps[compact] {
			p.errAt(ipos, "expected the inner-op to be a commutative binary-op from the stablehlo dialect, with zero region, producing single result")
		}
	}
	p.expectKeyword("across")
	p.expectKV("dimensions")
	attrs := p.optAttrDict([]NamedAttr{{Name: "dimensions", Value: p.dimsArray()}})
	ft, tpos := p.functionalType()
	operands := p.resolveAll(refs, ft.Inputs, tpos)
	if compact != "" {
		if len(ft.Inputs) == 0 {
			p.errAt(tpos, "input types missing in reduce-op function type")
		}
		st, ok := mlirScalarOf(ft.Inputs[0])
		if !ok {
			p.errAt(tpos, "reduce input must be a ranked tensor")
		}
		b := NewBlock(st, st)
		inner := NewOp(compact, []*Value{b.Args[0], b.Args[1]}, []Type{st})
		b.Append(inner)
		ret := NewOp("stablehlo.return", []*Value{inner.Results[0]}, nil)
		b.Append(ret)
		op := NewOp(name, operands, ft.Results, attrs...)
		// The trailing location is the reduce's and its body's.
		p.parseTrailingLoc(&op.Loc)
		p.locCopies = append(p.locCopies, [2]*Location{&inner.Loc, &op.Loc}, [2]*Location{&ret.Loc, &op.Loc})
		op.AddRegion(NewRegion(b))
		return op
	}
	p.expectKeyword("reducer")
	var firsts, seconds []mlirArgDef
	for p.tryByte('(') {
		arg := func() mlirArgDef {
			r := p.parseValueRef()
			if r.idx >= 0 {
				p.errAt(r.pos, "block argument names cannot have a result number")
			}
			p.expect(':')
			t := p.parseType()
			var loc Location
			p.parseTrailingLoc(&loc)
			return mlirArgDef{name: r.name, typ: t, pos: r.pos}
		}
		firsts = append(firsts, arg())
		p.expect(',')
		seconds = append(seconds, arg())
		p.expect(')')
	}
	args := append(firsts, seconds...)
	if args == nil {
		args = []mlirArgDef{}
	}
	body := p.parseRegion(args, false, "")
	op := NewOp(name, operands, ft.Results, attrs...)
	op.AddRegion(body)
	return op
}

// mlirParseFunc parses
//
//	func.func [visibility] @name(%arg0: t {attrs}, ...) [-> results] [attributes {...}] [{ body }]
func mlirParseFunc(p *mlirParser, name string, pos int) *Op {
	var attrs []NamedAttr
	for _, vis := range []string{"public", "private", "nested"} {
		if p.tryKeyword(vis) {
			attrs = append(attrs, NamedAttr{Name: "sym_visibility", Value: StringAttr(vis)})
			break
		}
	}
	p.skipSpace()
	sym := p.parseSymbolRef()
	attrs = append(attrs, NamedAttr{Name: "sym_name", Value: StringAttr(sym)})
	p.expect('(')
	var args []mlirArgDef
	var ins []Type
	var argAttrs ArrayAttr
	anyArgAttr := false
	named := p.peek() == '%'
	if !p.tryByte(')') {
		for {
			if named {
				r := p.parseValueRef()
				if r.idx >= 0 {
					p.errAt(r.pos, "argument names cannot have a result number")
				}
				p.expect(':')
				t := p.parseType()
				args = append(args, mlirArgDef{name: r.name, typ: t, pos: r.pos})
				ins = append(ins, t)
			} else {
				ins = append(ins, p.parseType())
			}
			d := p.optDictAttr()
			anyArgAttr = anyArgAttr || len(d) > 0
			argAttrs = append(argAttrs, d)
			var loc Location
			p.parseTrailingLoc(&loc)
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(')')
	}
	var outs []Type
	var resAttrs ArrayAttr
	anyResAttr := false
	if p.tryArrow() {
		if p.peek() == '(' {
			p.pos++
			if !p.tryByte(')') {
				for {
					outs = append(outs, p.parseType())
					d := p.optDictAttr()
					anyResAttr = anyResAttr || len(d) > 0
					resAttrs = append(resAttrs, d)
					if !p.tryByte(',') {
						break
					}
				}
				p.expect(')')
			}
		} else {
			outs = []Type{p.parseType()}
			resAttrs = ArrayAttr{DictAttr{}}
		}
	}
	attrs = append(attrs, NamedAttr{Name: "function_type", Value: TypeAttr{Type: FunctionType{Inputs: ins, Results: outs}}})
	if anyArgAttr {
		attrs = append(attrs, NamedAttr{Name: "arg_attrs", Value: argAttrs})
	}
	if anyResAttr {
		attrs = append(attrs, NamedAttr{Name: "res_attrs", Value: resAttrs})
	}
	if p.tryKeyword("attributes") {
		at := p.pos
		n := len(attrs)
		attrs = p.parseDictEntries(attrs)
		for _, a := range attrs[n:] {
			// Two values of one attribute: which one holds would depend
			// on the printer. (arg_attrs and res_attrs may come in the
			// dictionary when the signature gives none.)
			if a.Name == "sym_name" || a.Name == "sym_visibility" || a.Name == "function_type" ||
				a.Name == "arg_attrs" && anyArgAttr || a.Name == "res_attrs" && anyResAttr {
				p.errAt(at, "func.func @%s: %s is given by the function's own syntax, not in its attributes", sym, a.Name)
			}
		}
	}
	var body *Region
	if p.peek() == '{' {
		if !named && len(ins) > 0 {
			p.fail("a function with a body needs named arguments")
		}
		if args == nil {
			args = []mlirArgDef{}
		}
		body = p.parseRegion(args, true, "func")
	} else {
		body = &Region{}
	}
	op := NewOp(name, nil, nil, attrs...)
	op.AddRegion(body)
	return op
}

// mlirParseModule parses "module [@name] [attributes {...}] { ... }".
func mlirParseModule(p *mlirParser, name string, pos int) *Op {
	var attrs []NamedAttr
	if p.peek() == '@' {
		attrs = append(attrs, NamedAttr{Name: "sym_name", Value: StringAttr(p.parseSymbolRef())})
	}
	if p.tryKeyword("attributes") {
		attrs = p.parseDictEntries(attrs)
	}
	body := p.parseRegion(nil, true, "")
	if len(body.Blocks) == 0 {
		body.AddBlock(&Block{})
	}
	op := NewOp(name, nil, nil, attrs...)
	if len(attrs) == 0 {
		op.Attrs = nil
	}
	op.AddRegion(body)
	return op
}

// mlirParseCheckPair parses the check dialect's two-operand forms:
//
//	check.expect_eq %a, %b : t
//	check.expect_almost_eq %a, %b, tolerance = 0.1 : t
//	check.expect_close %a, %b, max_ulp_difference = 3 : t, t
func mlirParseCheckPair(p *mlirParser, name string, pos int) *Op {
	a := p.parseValueRef()
	p.expect(',')
	b := p.parseValueRef()
	attrs := p.optAttrDict(mlirParseCheckParams(p, name, nil))
	p.expect(':')
	p.skipSpace()
	tpos := p.pos
	ts := p.parseTypeList()
	switch len(ts) {
	case 1:
		ts = []Type{ts[0], ts[0]}
	case 2:
	default:
		p.errAt(tpos, "expected one or two types")
	}
	return p.newOp(name, []mlirValueRef{a, b}, ts, nil, attrs, tpos)
}

// mlirParseCheckConst parses "check.expect_eq_const %a, dense<...> : t {attrs}".
func mlirParseCheckConst(p *mlirParser, name string, pos int) *Op {
	a := p.parseValueRef()
	p.expect(',')
	p.skipSpace()
	apos := p.pos
	v, t := p.parseAttr()
	if t == nil {
		p.errAt(apos, "expected a dense elements attribute")
	}
	// The parameters may follow the literal's type, as the upstream
	// interpreter tests write them: "dense<...> : t, tolerance = 1e-6".
	attrs := p.optAttrDict(mlirParseCheckParams(p, name, []NamedAttr{{Name: "value", Value: v}}))
	return p.newOp(name, []mlirValueRef{a}, []Type{t}, nil, attrs, apos)
}

// mlirParseCheckParams parses ", key = value" parameters of the check ops
// (tolerance, min_ulp_difference, max_ulp_difference) and appends them.
func mlirParseCheckParams(p *mlirParser, name string, attrs []NamedAttr) []NamedAttr {
	for p.tryByte(',') {
		p.skipSpace()
		kpos := p.pos
		k := p.bareID()
		p.expect('=')
		switch string(k) {
		case "tolerance":
			n, ok := p.number()
			if !ok {
				p.fail("expected number%s", p.found())
			}
			attrs = append(attrs, NamedAttr{Name: "tolerance", Value: FloatAttr{Value: mlirFloatFormats[xla.Float64].toFloat64(p.floatBits(n, xla.Float64)), Type: xla.Float64}})
		case "max_ulp_difference", "min_ulp_difference":
			attrs = append(attrs, NamedAttr{Name: string(k), Value: mlirI64(p.integer())})
		default:
			p.errAt(kpos, "unknown %s parameter %q", name, k)
		}
	}
	return attrs
}
