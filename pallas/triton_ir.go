package pallas

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// A small in-memory form of the Triton IR (TTIR) the Triton lowering
// emits, printed as MLIR text. Building a tree first (instead of writing
// text directly) gives values names in print order and lets tests walk the
// kernel.
//
// Printing: builtin.module, arith, math and scf ops in their pretty forms;
// tt ops (tt.func, tt.load, ...) in the generic form with properties
// (`"tt.load"(%p, %m, %o) <{operandSegmentSizes = ...}> : (...) -> ...`),
// which Triton's parser reads like the pretty form and which
// `mlir-opt --allow-unregistered-dialect` (without the Triton dialect)
// parses and verifies, including the arith/math/scf ops nested inside.

// ttType is a TTIR type: an element type (f32, i32, i1, !tt.ptr<f32>) and a
// shape (empty: a scalar).
type ttType struct {
	elem  string
	shape []int64
}

func (t ttType) String() string {
	if len(t.shape) == 0 {
		return t.elem
	}
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range t.shape {
		fmt.Fprintf(&b, "%dx", d)
	}
	b.WriteString(t.elem + ">")
	return b.String()
}

func (t ttType) scalar() bool { return len(t.shape) == 0 }

// with returns t's element type with another shape.
func (t ttType) with(shape []int64) ttType { return ttType{elem: t.elem, shape: clone(shape)} }

// as returns t's shape with another element type.
func (t ttType) as(elem string) ttType { return ttType{elem: elem, shape: clone(t.shape)} }

func (t ttType) isFloat() bool { return strings.HasPrefix(t.elem, "f") || t.elem == "bf16" }

// bits is the width of an integer or float element type.
func (t ttType) bits() int {
	switch t.elem {
	case "bf16":
		return 16
	}
	if n, err := strconv.Atoi(strings.TrimLeft(t.elem, "fi")); err == nil {
		return n
	}
	return 0
}

func ptrType(elem string) string { return "!tt.ptr<" + elem + ">" }

// ttVal is an SSA value: an op result or a region argument.
type ttVal struct {
	t   ttType
	def *ttOp // nil for region arguments
	idx int   // result index
	// lit is the literal text when the value is an arith.constant (a
	// scalar, or a splat tensor); isInt/ival hold an integer constant.
	lit   string
	isInt bool
	ival  int64
}

// ttAttr is an attribute (a property of a generic tt op, or an attribute
// of a pretty op): its printed text and, for tests, its Go value.
type ttAttr struct {
	name string
	text string
	val  any
}

func i32Attr(name string, v int64) ttAttr {
	return ttAttr{name: name, text: fmt.Sprintf("%d : i32", v), val: v}
}

func i32ArrayAttr(name string, vs []int64) ttAttr {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprint(v)
	}
	if len(vs) == 0 {
		return ttAttr{name: name, text: "array<i32>", val: []int64{}}
	}
	return ttAttr{name: name, text: "array<i32: " + strings.Join(parts, ", ") + ">", val: clone(vs)}
}

func strAttr(name, v string) ttAttr { return ttAttr{name: name, text: mlirString(v), val: v} }

func boolAttr(name string, v bool) ttAttr {
	return ttAttr{name: name, text: strconv.FormatBool(v), val: v}
}

// mlirString is s as an MLIR string literal: printable ASCII as is, other
// bytes (quotes, backslashes, newlines, UTF-8) as \XX hex escapes.
func mlirString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7F && c != '"' && c != '\\' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%02X", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ttOp is one operation. For arith.cmpi/cmpf pred holds the predicate.
type ttOp struct {
	name     string
	operands []*ttVal
	results  []*ttVal
	attrs    []ttAttr
	regions  []*ttRegion
	pred     string
}

func (o *ttOp) attr(name string) any {
	for _, a := range o.attrs {
		if a.name == name {
			return a.val
		}
	}
	return nil
}

// ttRegion is a single-block region.
type ttRegion struct {
	args []*ttVal
	ops  []*ttOp
}

// ttFunc is the kernel: tt.func public @name with pointer arguments.
type ttFunc struct {
	name string
	body *ttRegion
}

// ttPrinter names values in print order and writes the module.
type ttPrinter struct {
	b     strings.Builder
	names map[*ttVal]string
	next  int
	args  int
}

func (f *ttFunc) String() string {
	p := &ttPrinter{names: map[*ttVal]string{}}
	p.b.WriteString("module {\n")
	argTypes := make([]string, len(f.body.args))
	argAttrs := make([]string, len(f.body.args))
	for i, a := range f.body.args {
		argTypes[i] = a.t.String()
		argAttrs[i] = "{tt.divisibility = 32 : i32}"
	}
	fmt.Fprintf(&p.b, "  \"tt.func\"() <{arg_attrs = [%s], function_type = (%s) -> (), sym_name = %q, sym_visibility = \"public\"}> ({\n",
		strings.Join(argAttrs, ", "), strings.Join(argTypes, ", "), f.name)
	p.blockHeader(f.body, 1)
	p.ops(f.body, 2)
	p.b.WriteString("  }) : () -> ()\n}\n")
	return p.b.String()
}

func (p *ttPrinter) argName(v *ttVal) string {
	n := fmt.Sprintf("%%arg%d", p.args)
	p.args++
	p.names[v] = n
	return n
}

// blockHeader writes "^bb0(%arg0: t, ...):" for a region with arguments.
func (p *ttPrinter) blockHeader(r *ttRegion, depth int) {
	if len(r.args) == 0 {
		return
	}
	parts := make([]string, len(r.args))
	for i, a := range r.args {
		parts[i] = p.argName(a) + ": " + a.t.String()
	}
	fmt.Fprintf(&p.b, "%s^bb0(%s):\n", strings.Repeat("  ", depth), strings.Join(parts, ", "))
}

func (p *ttPrinter) name(v *ttVal) string {
	if n, ok := p.names[v]; ok {
		return n
	}
	return "%<undefined>"
}

func (p *ttPrinter) names2(vs []*ttVal) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = p.name(v)
	}
	return strings.Join(parts, ", ")
}

func typeList(vs []*ttVal) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.t.String()
	}
	return strings.Join(parts, ", ")
}

// defineResults names op's results and returns the "%5 = " / "%5:2 = "
// prefix.
func (p *ttPrinter) defineResults(op *ttOp) string {
	switch len(op.results) {
	case 0:
		return ""
	case 1:
		n := fmt.Sprintf("%%%d", p.next)
		p.next++
		p.names[op.results[0]] = n
		return n + " = "
	}
	base := fmt.Sprintf("%%%d", p.next)
	p.next++
	for i, r := range op.results {
		p.names[r] = fmt.Sprintf("%s#%d", base, i)
	}
	return fmt.Sprintf("%s:%d = ", base, len(op.results))
}

func (p *ttPrinter) ops(r *ttRegion, depth int) {
	for _, op := range r.ops {
		p.op(op, depth)
	}
}

func (p *ttPrinter) op(op *ttOp, depth int) {
	ind := strings.Repeat("  ", depth)
	switch {
	case op.name == "scf.for":
		p.forOp(op, depth)
		return
	case op.name == "scf.while":
		p.whileOp(op, depth)
		return
	case op.name == "scf.if":
		c := p.name(op.operands[0])
		res := p.defineResults(op)
		if len(op.results) > 0 {
			fmt.Fprintf(&p.b, "%s%sscf.if %s -> (%s) {\n", ind, res, c, typeList(op.results))
		} else {
			fmt.Fprintf(&p.b, "%sscf.if %s {\n", ind, c)
		}
		for i, r := range op.regions {
			if i > 0 {
				fmt.Fprintf(&p.b, "%s} else {\n", ind)
			}
			p.ops(r, depth+1)
		}
		fmt.Fprintf(&p.b, "%s}\n", ind)
		return
	case op.name == "scf.yield" || op.name == "scf.condition":
		args := p.names2(op.operands)
		if op.name == "scf.condition" {
			fmt.Fprintf(&p.b, "%sscf.condition(%s)", ind, p.name(op.operands[0]))
			args = p.names2(op.operands[1:])
			if args != "" {
				fmt.Fprintf(&p.b, " %s : %s", args, typeList(op.operands[1:]))
			}
			p.b.WriteString("\n")
			return
		}
		if args == "" {
			fmt.Fprintf(&p.b, "%sscf.yield\n", ind)
		} else {
			fmt.Fprintf(&p.b, "%sscf.yield %s : %s\n", ind, args, typeList(op.operands))
		}
		return
	}
	// Operands are named before results are defined.
	operands := p.names2(op.operands)
	res := p.defineResults(op)
	b := &p.b
	switch {
	case op.name == "arith.constant":
		if t := op.results[0].t; t.scalar() && t.elem == "i1" {
			// true/false carry their type.
			fmt.Fprintf(b, "%s%sarith.constant %s\n", ind, res, constText(op.results[0]))
		} else {
			fmt.Fprintf(b, "%s%sarith.constant %s : %s\n", ind, res, constText(op.results[0]), t)
		}
	case op.name == "arith.cmpi" || op.name == "arith.cmpf":
		fmt.Fprintf(b, "%s%s%s %s, %s : %s\n", ind, res, op.name, op.pred, operands, op.operands[0].t)
	case op.name == "arith.select":
		ts := op.results[0].t.String()
		if !op.operands[0].t.scalar() {
			ts = op.operands[0].t.String() + ", " + ts
		}
		fmt.Fprintf(b, "%s%sarith.select %s : %s\n", ind, res, operands, ts)
	case isCastOp(op.name):
		fmt.Fprintf(b, "%s%s%s %s : %s to %s\n", ind, res, op.name, operands, op.operands[0].t, op.results[0].t)
	case strings.HasPrefix(op.name, "arith.") || strings.HasPrefix(op.name, "math."):
		fmt.Fprintf(b, "%s%s%s %s : %s\n", ind, res, op.name, operands, op.results[0].t)
	default:
		// Generic form.
		fmt.Fprintf(b, "%s%s%q(%s)", ind, res, op.name, operands)
		if len(op.attrs) > 0 {
			parts := make([]string, len(op.attrs))
			for i, a := range op.attrs {
				parts[i] = a.name + " = " + a.text
			}
			fmt.Fprintf(b, " <{%s}>", strings.Join(parts, ", "))
		}
		if len(op.regions) > 0 {
			b.WriteString(" (")
			for i, r := range op.regions {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("{\n")
				p.blockHeader(r, depth)
				p.ops(r, depth+1)
				b.WriteString(ind + "}")
			}
			b.WriteString(")")
		}
		rt := typeList(op.results)
		if len(op.results) != 1 {
			rt = "(" + rt + ")"
		}
		fmt.Fprintf(b, " : (%s) -> %s\n", typeList(op.operands), rt)
	}
}

func isCastOp(name string) bool {
	switch name {
	case "arith.extf", "arith.truncf", "arith.extsi", "arith.extui", "arith.trunci",
		"arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui":
		return true
	}
	return false
}

func (p *ttPrinter) forOp(op *ttOp, depth int) {
	ind := strings.Repeat("  ", depth)
	lo, hi, step := p.name(op.operands[0]), p.name(op.operands[1]), p.name(op.operands[2])
	inits := op.operands[3:]
	initNames := make([]string, len(inits))
	for i, v := range inits {
		initNames[i] = p.name(v)
	}
	res := p.defineResults(op)
	r := op.regions[0]
	iv := p.argName(r.args[0])
	fmt.Fprintf(&p.b, "%s%sscf.for %s = %s to %s step %s", ind, res, iv, lo, hi, step)
	if len(inits) > 0 {
		parts := make([]string, len(inits))
		for i := range inits {
			parts[i] = p.argName(r.args[1+i]) + " = " + initNames[i]
		}
		fmt.Fprintf(&p.b, " iter_args(%s) -> (%s)", strings.Join(parts, ", "), typeList(op.results))
	}
	fmt.Fprintf(&p.b, " : %s {\n", r.args[0].t)
	p.ops(r, depth+1)
	fmt.Fprintf(&p.b, "%s}\n", ind)
}

func (p *ttPrinter) whileOp(op *ttOp, depth int) {
	ind := strings.Repeat("  ", depth)
	initNames := make([]string, len(op.operands))
	for i, v := range op.operands {
		initNames[i] = p.name(v)
	}
	res := p.defineResults(op)
	before, after := op.regions[0], op.regions[1]
	parts := make([]string, len(op.operands))
	for i := range op.operands {
		parts[i] = p.argName(before.args[i]) + " = " + initNames[i]
	}
	fmt.Fprintf(&p.b, "%s%sscf.while (%s) : (%s) -> (%s) {\n", ind, res, strings.Join(parts, ", "), typeList(op.operands), typeList(op.results))
	p.ops(before, depth+1)
	fmt.Fprintf(&p.b, "%s} do {\n", ind)
	p.blockHeader(after, depth)
	p.ops(after, depth+1)
	fmt.Fprintf(&p.b, "%s}\n", ind)
}

// constText is an arith.constant's value: "1.000000e+00", "dense<0> :"...
func constText(v *ttVal) string {
	if v.t.scalar() {
		return v.lit
	}
	return "dense<" + v.lit + ">"
}

// floatLit writes x as an MLIR literal of element type elem: decimal when
// that reads back exactly, the bit pattern in hex otherwise (NaN, Inf,
// f16, bf16).
func floatLit(x float64, elem string) string {
	switch elem {
	case "f32":
		f := float32(x)
		if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
			return fmt.Sprintf("0x%08X", math.Float32bits(f))
		}
		return decimal(strconv.FormatFloat(float64(f), 'e', -1, 32))
	case "f64":
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Sprintf("0x%016X", math.Float64bits(x))
		}
		return decimal(strconv.FormatFloat(x, 'e', -1, 64))
	case "f16":
		return fmt.Sprintf("0x%04X", uint16(xla.F16FromFloat64(x)))
	case "bf16":
		return fmt.Sprintf("0x%04X", uint16(xla.BF16FromFloat64(x)))
	}
	return fmt.Sprint(x)
}

// decimal makes "1e+00" a float token MLIR accepts ("1.0e+00").
func decimal(s string) string {
	if strings.ContainsRune(s, '.') {
		return s
	}
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		return s[:i] + ".0" + s[i:]
	}
	return s + ".0"
}

// intLit is v wrapped to a signless integer of the given width.
func intLit(v int64, bits int) int64 {
	if bits <= 0 || bits >= 64 {
		return v
	}
	if bits == 1 {
		return v & 1
	}
	shift := 64 - bits
	return v << shift >> shift
}

// pureOp reports whether an op may be dropped when its results are unused.
func pureOp(name string) bool {
	switch name {
	case "tt.splat", "tt.make_range", "tt.expand_dims", "tt.broadcast", "tt.addptr",
		"tt.get_program_id", "tt.trans", "tt.join", "tt.split", "tt.gather", "tt.reshape", "tt.extern_elementwise", "tt.precise_divf":
		return true
	}
	return strings.HasPrefix(name, "arith.") || strings.HasPrefix(name, "math.")
}

// prune drops pure ops whose results are never used (constants folded
// away by the lowering's index arithmetic, mostly).
func (f *ttFunc) prune() {
	for {
		used := map[*ttVal]bool{}
		var mark func(r *ttRegion)
		mark = func(r *ttRegion) {
			for _, op := range r.ops {
				for _, o := range op.operands {
					used[o] = true
				}
				for _, sub := range op.regions {
					mark(sub)
				}
			}
		}
		mark(f.body)
		removed := false
		var sweep func(r *ttRegion)
		sweep = func(r *ttRegion) {
			kept := r.ops[:0]
			for _, op := range r.ops {
				dead := pureOp(op.name) && len(op.results) > 0
				for _, res := range op.results {
					dead = dead && !used[res]
				}
				if dead {
					removed = true
					continue
				}
				for _, sub := range op.regions {
					sweep(sub)
				}
				kept = append(kept, op)
			}
			r.ops = kept
		}
		sweep(f.body)
		if !removed {
			return
		}
	}
}
