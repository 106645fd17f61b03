package stablehlo

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/halo-ml/halo/xla"
)

// CHLO ("client HLO") ops: the ops JAX emits beside StableHLO (chlo.erf,
// chlo.top_k, chlo.broadcast_add ...). This file registers them in the op
// table, the pretty parser and printer (the forms of ChloOps.td's
// assemblyFormat), and shape inference; package chlo builds them and
// decomposes them into StableHLO.

// Op families, by their operand and element-type rules.
var (
	// Unary ops on float or complex tensors: $operand attr-dict : type -> type.
	chloUnaryFloatCplx = []string{"acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e",
		"conj", "cosh", "sinh", "tan"}
	// Unary ops on float tensors only.
	chloUnaryFloat = []string{"digamma", "erf", "erf_inv", "erfc", "lgamma"}
	// Unary predicates on float tensors (i1 results).
	chloUnaryPred = []string{"is_inf", "is_neg_inf", "is_pos_inf"}
	// Binary ops on float tensors of one type: $a, $b attr-dict : type, type -> type.
	// igamma and igammac are not in upstream ChloOps.td; halo spells them
	// like zeta.
	chloBinaryFloat = map[string][2]string{
		"next_after": {"x", "y"},
		"polygamma":  {"n", "x"},
		"zeta":       {"x", "q"},
		"igamma":     {"a", "x"},
		"igammac":    {"a", "x"},
	}
	// Broadcasting binary ops: $lhs, $rhs attr-dict : (type, type) -> type.
	chloBroadcastOps = []string{"add", "and", "atan2", "compare", "complex", "divide", "maximum",
		"minimum", "multiply", "next_after", "or", "polygamma", "power", "remainder", "shift_left",
		"shift_right_arithmetic", "shift_right_logical", "subtract", "xor", "zeta"}
	// The element-type class of each broadcasting op's operands.
	chloBroadcastClass = map[string]dtypeClass{
		"add": clsAll, "multiply": clsAll, "maximum": clsAll, "minimum": clsAll, "compare": clsAll,
		"subtract": clsNumeric, "divide": clsNumeric, "remainder": clsNumeric, "power": clsNumeric,
		"atan2": clsFloatCplx, "shift_left": clsInt, "shift_right_arithmetic": clsInt,
		"shift_right_logical": clsInt, "and": clsIntOrBool, "or": clsIntOrBool, "xor": clsIntOrBool,
		"next_after": clsFloat, "polygamma": clsFloat, "zeta": clsFloat, "complex": clsFloat,
	}
)

func init() {
	add := func(s opSpec) { opSpecs[s.name] = &s }
	unary := func(n string) {
		add(opSpec{name: "chlo." + n, operands: operand1, results: result1})
		mlirPrettyParsers["chlo."+n] = mlirParseChloElementwise(1)
		mlirPrettyPrinters["chlo."+n] = mlirPrintChloElementwise(1)
	}
	for _, n := range chloUnaryFloatCplx {
		unary(n)
	}
	for _, n := range chloUnaryFloat {
		unary(n)
	}
	for _, n := range chloUnaryPred {
		unary(n)
	}
	unary("square")
	for n, ops := range chloBinaryFloat {
		add(opSpec{name: "chlo." + n, operands: []string{ops[0], ops[1]}, results: result1})
		mlirPrettyParsers["chlo."+n] = mlirParseChloElementwise(2)
		mlirPrettyPrinters["chlo."+n] = mlirPrintChloElementwise(2)
	}
	for _, n := range chloBroadcastOps {
		s := opSpec{name: "chlo.broadcast_" + n, operands: binaryOperand, results: result1,
			attrs: []attrSpec{opt("broadcast_dimensions", attrI64Array)}}
		if n == "compare" {
			s.attrs = append(s.attrs, reqEnum("comparison_direction", "comparison_direction"),
				optEnum("compare_type", "comparison_type"))
		}
		add(s)
		mlirPrettyParsers[s.name] = mlirParseChloBroadcast
		mlirPrettyPrinters[s.name] = mlirPrintFunctional(2)
	}
	add(opSpec{name: "chlo.broadcast_select", operands: []string{"pred", "on_true", "on_false"}, results: result1})
	mlirPrettyParsers["chlo.broadcast_select"] = mlirParseChloBroadcast
	mlirPrettyPrinters["chlo.broadcast_select"] = mlirPrintFunctional(3)

	add(opSpec{name: "chlo.top_k", operands: operand1, results: []string{"values", "indices"},
		attrs: []attrSpec{reqInt("k", xla.Int64)}})
	mlirPrettyParsers["chlo.top_k"] = mlirParseChloTopK
	mlirPrettyPrinters["chlo.top_k"] = mlirPrintChloTopK

	add(opSpec{name: "chlo.constant", results: []string{"output"}, attrs: []attrSpec{req("value", attrElements)}})
	mlirPrettyParsers["chlo.constant"] = mlirParseConstant
	mlirPrettyPrinters["chlo.constant"] = mlirPrintConstant

	// No custom assembly format upstream: generic form only.
	add(opSpec{name: "chlo.constant_like", operands: operand1, results: result1, attrs: []attrSpec{req("value", attrAny)}})
	add(opSpec{name: "chlo.ragged_dot", operands: []string{"lhs", "rhs", "group_sizes"}, results: result1,
		attrs: []attrSpec{req("ragged_dot_dimension_numbers", attrOpaque), opt("precision_config", attrPrecision)}})
	// ragged_dot_dimension_numbers is a RaggedDotDimensionNumbers (see
	// chlo_ragged.go); inference checks it.
}

// ChloOps returns the names of the CHLO ops halo parses, prints, builds
// and infers, sorted.
func ChloOps() []string {
	var out []string
	for n := range opSpecs {
		if strings.HasPrefix(n, "chlo.") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// --- pretty forms ------------------------------------------------------------

// The unary and binary ops on n operands:
//
//	chlo.erf %x attr-dict : tensor<4xf32> -> tensor<4xf32>
//	chlo.zeta %x, %q attr-dict : tensor<f32>, tensor<f32> -> tensor<f32>
func mlirParseChloElementwise(n int) mlirPrettyParser {
	return func(p *mlirParser, name string, pos int) *Op {
		refs := make([]mlirValueRef, n)
		for i := range refs {
			if i > 0 {
				p.expect(',')
			}
			refs[i] = p.parseValueRef()
		}
		attrs := p.optAttrDict(nil)
		p.expect(':')
		p.skipSpace()
		tpos := p.pos
		ins := make([]Type, n)
		for i := range ins {
			if i > 0 {
				p.expect(',')
			}
			ins[i] = p.parseType()
		}
		p.expectArrow()
		out := p.parseType()
		return p.newOp(name, refs, ins, []Type{out}, attrs, tpos)
	}
}

func mlirPrintChloElementwise(n int) mlirPrettyPrinter {
	return func(p *mlirPrinter, op *Op) bool {
		if !mlirShape(op, n, 1) {
			return false
		}
		p.nameAndOperands(op)
		p.attrDict(op.Attrs)
		p.str(" : ")
		p.typeList(mlirValueTypes(op.Operands))
		p.str(" -> ")
		p.typ(op.Results[0].Type)
		return true
	}
}

// chlo.broadcast_add %a, %b attr-dict : (ta, tb) -> t (and broadcast_select
// with three operands); mlirPrintFunctional prints it.
func mlirParseChloBroadcast(p *mlirParser, name string, pos int) *Op {
	refs := p.parseValueRefList()
	attrs := p.optAttrDict(nil)
	ft, tpos := p.functionalType()
	if len(ft.Results) != 1 {
		p.errAt(tpos, "expected single output")
	}
	return p.newOp(name, refs, ft.Inputs, ft.Results, attrs, tpos)
}

// chlo.top_k(%x, k = 3) attr-dict : tensor<4x5xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)
func mlirParseChloTopK(p *mlirParser, name string, pos int) *Op {
	p.expect('(')
	x := p.parseValueRef()
	p.expect(',')
	p.expectKV("k")
	k := p.integer()
	p.expect(')')
	attrs := p.optAttrDict([]NamedAttr{{Name: "k", Value: mlirI64(k)}})
	p.expect(':')
	p.skipSpace()
	tpos := p.pos
	in := p.parseType()
	p.expectArrow()
	p.expect('(')
	vals := p.parseType()
	p.expect(',')
	idx := p.parseType()
	p.expect(')')
	return p.newOp(name, []mlirValueRef{x}, []Type{in}, []Type{vals, idx}, attrs, tpos)
}

func mlirPrintChloTopK(p *mlirPrinter, op *Op) bool {
	k, ok := mlirIntOf(op.Attr("k"), xla.Int64)
	if !mlirShape(op, 1, 2) || !ok {
		return false
	}
	p.name(op)
	p.byte('(')
	p.value(op.Operands[0])
	p.str(", k = ")
	p.buf = mlirAppendInt(p.buf, k)
	p.byte(')')
	p.attrDict(mlirRest(op, "k"))
	p.str(" : ")
	p.typ(op.Operands[0].Type)
	p.str(" -> (")
	p.typ(op.Results[0].Type)
	p.str(", ")
	p.typ(op.Results[1].Type)
	p.byte(')')
	return true
}

// --- shape inference ---------------------------------------------------------

// inferChlo is InferResultTypes for the chlo dialect.
func inferChlo(op *Op) ([]Type, bool, error) {
	ts := make([]TensorType, len(op.Operands))
	for i, v := range op.Operands {
		if v == nil {
			return nil, true, fmt.Errorf("operand %d is nil", i)
		}
		t, ok := v.Type.(TensorType)
		if !ok {
			return nil, false, nil
		}
		ts[i] = t
	}
	name := strings.TrimPrefix(op.Name, "chlo.")
	class := func(t TensorType, cls dtypeClass) error {
		if dtypeClasses[t.DType]&cls == 0 {
			return fmt.Errorf("element type %s is not %s", t.DType, cls)
		}
		return nil
	}
	if spec := opSpecs[op.Name]; spec != nil {
		if err := checkCount("operands", len(op.Operands), spec.operands); err != nil {
			return nil, true, err
		}
	}
	switch {
	case slices.Contains(chloUnaryFloatCplx, name) || slices.Contains(chloUnaryFloat, name) || name == "square":
		cls := clsFloatCplx
		if slices.Contains(chloUnaryFloat, name) {
			cls = clsFloat
		} else if name == "square" {
			cls = clsNumeric
		}
		if err := class(ts[0], cls); err != nil {
			return nil, true, err
		}
		return []Type{ts[0]}, true, nil
	case slices.Contains(chloUnaryPred, name):
		if err := class(ts[0], clsFloat); err != nil {
			return nil, true, err
		}
		return []Type{TensorType{DType: xla.Bool, Dims: ts[0].Dims}}, true, nil
	case chloBinaryFloat[name] != [2]string{}:
		if ts[0].DType != ts[1].DType || !sameDims(ts[0].Dims, ts[1].Dims) {
			return nil, true, fmt.Errorf("operands must have the same type")
		}
		if err := class(ts[0], clsFloat); err != nil {
			return nil, true, err
		}
		return []Type{ts[0]}, true, nil
	case name == "broadcast_select":
		if ts[0].DType != xla.Bool {
			return nil, true, fmt.Errorf("pred must have element type i1, got %s", ts[0].DType)
		}
		if ts[1].DType != ts[2].DType {
			return nil, true, fmt.Errorf("on_true and on_false must have the same element type")
		}
		dims, err := ChloBroadcastDims(ts[1].Dims, ts[2].Dims, nil)
		if err == nil {
			dims, err = ChloBroadcastDims(ts[0].Dims, dims, nil)
		}
		if err != nil {
			return nil, true, err
		}
		return []Type{TensorType{DType: ts[1].DType, Dims: dims}}, true, nil
	case strings.HasPrefix(name, "broadcast_"):
		base := strings.TrimPrefix(name, "broadcast_")
		if ts[0].DType != ts[1].DType {
			return nil, true, fmt.Errorf("operands must have the same element type")
		}
		if err := class(ts[0], chloBroadcastClass[base]); err != nil {
			return nil, true, err
		}
		var bdims []int64
		if a, ok := op.Attr("broadcast_dimensions").(DenseArrayAttr); ok {
			bdims = a.Values
		}
		dims, err := ChloBroadcastDims(ts[0].Dims, ts[1].Dims, bdims)
		if err != nil {
			return nil, true, err
		}
		dt := ts[0].DType
		switch base {
		case "compare":
			dt = xla.Bool
		case "complex":
			switch dt {
			case xla.Float32:
				dt = xla.Complex64
			case xla.Float64:
				dt = xla.Complex128
			default:
				return nil, true, fmt.Errorf("operands must both be f32 or f64")
			}
		}
		return []Type{TensorType{DType: dt, Dims: dims}}, true, nil
	case name == "ragged_dot":
		return inferChloRaggedDot(op, ts)
	case name == "top_k":
		k, ok := op.Attr("k").(IntAttr)
		if !ok {
			return nil, true, fmt.Errorf("missing attribute k")
		}
		t := ts[0]
		if t.DType.IsComplex() {
			// As JAX: complex numbers have no order to take the top of.
			return nil, true, fmt.Errorf("top_k is not defined for complex element type %s (complex numbers are not ordered)", t.DType)
		}
		if t.Rank() == 0 {
			return nil, true, fmt.Errorf("operand must have rank >= 1")
		}
		last := t.Dims[t.Rank()-1]
		if k.Value < 0 || last != DynamicDim && k.Value > last {
			return nil, true, fmt.Errorf("k = %d is not in [0, %d] (the last dimension)", k.Value, last)
		}
		dims := append(slices.Clone(t.Dims[:t.Rank()-1]), k.Value)
		return []Type{TensorType{DType: t.DType, Dims: dims}, TensorType{DType: xla.Int32, Dims: slices.Clone(dims)}}, true, nil
	case name == "constant":
		if v, ok := op.Attr("value").(DenseElementsAttr); ok {
			return []Type{v.Type}, true, nil
		}
		return nil, false, nil
	case name == "constant_like":
		var dt xla.DType
		switch v := op.Attr("value").(type) {
		case FloatAttr:
			dt = v.Type
		case IntAttr:
			dt = v.Type
		case BoolAttr:
			dt = xla.Bool
		case DenseElementsAttr: // a splat, or one element
			if n := v.Type.Size(); !(n == 1 || v.Splat && n > 0) {
				return nil, true, fmt.Errorf("value %s must be one element or a splat", v.Type)
			}
			dt = v.Type.DType
		case nil:
			return nil, true, fmt.Errorf("missing value attribute")
		default:
			return nil, true, fmt.Errorf("value must be a float, integer or bool attribute, got %T", v)
		}
		return []Type{TensorType{DType: dt, Dims: ts[0].Dims}}, true, nil
	}
	return nil, false, nil
}

// ChloBroadcastDims returns the shape the CHLO broadcasting ops give two
// operands of shapes a and b: with broadcastDims empty, numpy rules (the
// shorter shape is padded with 1s on the left; a size-1 dimension
// stretches); with broadcastDims, the lower-rank operand's dimension i
// lines up with result dimension broadcastDims[i] (equal ranks: the
// identity when given). DynamicDim sizes match anything.
func ChloBroadcastDims(a, b []int64, broadcastDims []int64) ([]int64, error) {
	ma, mb, rank, err := ChloBroadcastMaps(len(a), len(b), broadcastDims)
	if err != nil {
		return nil, err
	}
	out := make([]int64, rank)
	for i := range out {
		out[i] = 1
	}
	merge := func(dims []int64, m []int64) error {
		for i, d := range dims {
			r := m[i]
			switch cur := out[r]; {
			case d == cur || d == 1:
			case cur == 1:
				out[r] = d
			case d == DynamicDim:
			case cur == DynamicDim:
				out[r] = d
			default:
				return fmt.Errorf("shapes %v and %v do not broadcast (dimension %d: %d vs %d)", a, b, r, cur, d)
			}
		}
		return nil
	}
	if err := merge(a, ma); err != nil {
		return nil, err
	}
	if err := merge(b, mb); err != nil {
		return nil, err
	}
	return out, nil
}

// ChloBroadcastMaps returns, for operands of ranks ra and rb, the result
// dimension each operand dimension lines up with, and the result rank (see
// ChloBroadcastDims).
func ChloBroadcastMaps(ra, rb int, broadcastDims []int64) (ma, mb []int64, rank int, err error) {
	rank = max(ra, rb)
	ident := func(n int) []int64 {
		m := make([]int64, n)
		for i := range m {
			m[i] = int64(i)
		}
		return m
	}
	pad := func(n int) []int64 {
		m := make([]int64, n)
		for i := range m {
			m[i] = int64(rank - n + i)
		}
		return m
	}
	if len(broadcastDims) == 0 {
		return pad(ra), pad(rb), rank, nil
	}
	lowRank := min(ra, rb)
	if len(broadcastDims) != lowRank {
		return nil, nil, 0, fmt.Errorf("broadcast_dimensions %v must have %d entries (the lower operand rank)", broadcastDims, lowRank)
	}
	for i, d := range broadcastDims {
		if d < 0 || d >= int64(rank) {
			return nil, nil, 0, fmt.Errorf("broadcast_dimensions %v: %d is out of range [0, %d)", broadcastDims, d, rank)
		}
		if i > 0 && d <= broadcastDims[i-1] {
			return nil, nil, 0, fmt.Errorf("broadcast_dimensions %v must be strictly increasing", broadcastDims)
		}
	}
	low := slices.Clone(broadcastDims)
	if ra < rb {
		return low, ident(rb), rank, nil
	}
	if rb < ra {
		return ident(ra), low, rank, nil
	}
	return ident(ra), low, rank, nil
}

// --- builder hooks -------------------------------------------------------------

// EmitInferred adds the op name with operands and attrs to the block and
// returns its results, whose types InferResultTypes computes (StableHLO
// elementwise and shape ops, the CHLO ops). It is how packages that extend
// the builder (package chlo) add ops: bad input (nil or foreign values, a
// wrong attribute, operand types the op rejects) records a *BuildError like
// every builder op and returns placeholders.
func (fb *FuncBuilder) EmitInferred(name string, operands []*Value, attrs ...NamedAttr) []*Value {
	n := 1
	if s := opSpecs[name]; s != nil {
		n = 0
		for _, r := range s.results {
			if !strings.HasSuffix(r, "...") {
				n++
			}
		}
	}
	if !fb.checkOperands(name, operands) {
		return deadN(n)
	}
	probe := &Op{Name: name, Operands: operands, Results: make([]*Value, n), Attrs: attrs}
	if err := checkOpSpec(probe); err != nil {
		fb.fail(name, operands, "%v", err)
		return deadN(n)
	}
	types, known, err := InferResultTypes(probe)
	if err != nil {
		fb.fail(name, operands, "%v", err)
		return deadN(n)
	}
	if !known || len(types) != n {
		fb.fail(name, operands, "result types of %s cannot be inferred: use Op with explicit types", name)
		return deadN(n)
	}
	return fb.emitN(name, slices.Clone(operands), types, slices.Clone(attrs)...).Results
}

var (
	builderPkgMu       sync.RWMutex
	builderPkgPrefixes []string
	// builderDirs are the source directories of this package and of the
	// registered extensions whose init registered them.
	builderDirs = []string{thisDir()}
)

// thisDir returns the directory of this package's source files.
func thisDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return fileDir(file)
}

// fileDir returns the directory part of a frame's file name (runtime file
// names use forward slashes on every system).
func fileDir(file string) string {
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[:i]
	}
	return ""
}

// RegisterBuilderPackage marks the package with import path pkgPath as an
// extension of the builder: like this package's own frames, its frames are
// skipped when a builder error or an automatic location names the user's
// file:line. Package chlo calls it from init: called from pkgPath's own
// code, it also marks the caller's source directory, which recognizes the
// package's frames even where the compiler inlined them into user code.
func RegisterBuilderPackage(pkgPath string) {
	p := pkgPath + "."
	var dir string
	var pcs [1]uintptr
	if runtime.Callers(2, pcs[:]) == 1 {
		f, _ := runtime.CallersFrames(pcs[:]).Next()
		if strings.HasPrefix(f.Function, p) {
			dir = fileDir(f.File)
		}
	}
	builderPkgMu.Lock()
	defer builderPkgMu.Unlock()
	if !slices.Contains(builderPkgPrefixes, p) {
		builderPkgPrefixes = append(builderPkgPrefixes, p)
	}
	if dir != "" && !slices.Contains(builderDirs, dir) {
		builderDirs = append(builderDirs, dir)
	}
}

// isBuilderFrame reports whether a frame of function fn in file belongs to
// the builder (this package or a registered extension), by its function's
// package or by its file's directory: when the compiler inlines a builder
// method into user code, the closures of that method take the user
// function's name (userpkg.F.(*FuncBuilder).ReduceMax.func1) but keep
// their file.
func isBuilderFrame(fn, file string) bool {
	if strings.HasPrefix(fn, pkgPrefix) {
		return true
	}
	builderPkgMu.RLock()
	defer builderPkgMu.RUnlock()
	if dir := fileDir(file); dir != "" && slices.Contains(builderDirs, dir) {
		return true
	}
	for _, p := range builderPkgPrefixes {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
