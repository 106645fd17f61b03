package stablehlo

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// PrintOptions control Print.
type PrintOptions struct {
	// Generic prints every op in MLIR's generic form
	// ("stablehlo.add"(%0, %1) : (...) -> ...), which any MLIR tool reads
	// without the dialects registered. The default is the pretty form
	// StableHLO's own printer uses.
	Generic bool
	// Locations prints each op's location as a trailing loc(...).
	Locations bool
}

// Print writes m as MLIR text. The output is deterministic: values are
// numbered per function in print order (%0, %1 ...; %arg0 ... for entry
// block arguments; %iterArg, %c and %cst names in the pretty form, as
// MLIR prints them) and attribute dictionaries are sorted. Ops without a
// known pretty form print in the generic form in both modes.
func Print(w io.Writer, m *Module, opts PrintOptions) error {
	p := newMLIRPrinter(w, opts)
	p.strict = true
	p.module(m)
	p.flush()
	return p.err
}

// String returns m in the pretty form.
func (m *Module) String() string {
	var b strings.Builder
	_ = Print(&b, m, PrintOptions{})
	return b.String()
}

// String returns f (a func.func) in the pretty form.
func (f *Func) String() string {
	p := newMLIRPrinter(nil, PrintOptions{})
	p.names = mlirNameFunc(f, false)
	p.fn(f)
	return strings.TrimPrefix(string(p.buf), "\n")
}

// String returns op in the pretty form, for debugging. Values defined
// outside op print as %<?>.
func (op *Op) String() string {
	p := newMLIRPrinter(nil, PrintOptions{})
	n := newMLIRNamer(false)
	n.numberOps([]*Op{op}, mlirNameState{})
	p.names = n.names
	p.op(op)
	return strings.TrimPrefix(string(p.buf), "\n")
}

var mlirErrNilModule = errors.New("stablehlo: Print: nil module")

// mlirPrinter accumulates output.
type mlirPrinter struct {
	buf    []byte
	w      io.Writer
	err    error
	opts   PrintOptions
	names  map[*Value]string
	indent int
	// dialect is the default dialect of the enclosing region ("func"
	// directly inside a func.func body): its ops print without prefix.
	dialect string
	// strict makes nil ops and values used out of scope errors (Print);
	// the String methods print them as placeholders.
	strict bool
}

func newMLIRPrinter(w io.Writer, opts PrintOptions) *mlirPrinter {
	return &mlirPrinter{w: w, opts: opts}
}

func (p *mlirPrinter) flush() {
	if p.w == nil || p.err != nil {
		return
	}
	if len(p.buf) > 0 {
		_, p.err = p.w.Write(p.buf)
		p.buf = p.buf[:0]
	}
}

func (p *mlirPrinter) str(s string) { p.buf = append(p.buf, s...) }
func (p *mlirPrinter) byte(c byte)  { p.buf = append(p.buf, c) }

// nl starts a new line at the current indentation.
func (p *mlirPrinter) nl() {
	p.buf = append(p.buf, '\n')
	for i := 0; i < p.indent; i++ {
		p.buf = append(p.buf, ' ', ' ')
	}
}

func (p *mlirPrinter) typ(t Type)         { p.buf = mlirAppendType(p.buf, t) }
func (p *mlirPrinter) dict(d []NamedAttr) { p.buf = mlirAppendDict(p.buf, d) }
func (p *mlirPrinter) typeList(ts []Type) { p.buf = mlirAppendTypeList(p.buf, ts) }
func (p *mlirPrinter) resultTypes(ts []Type) {
	p.buf = mlirAppendResultTypes(p.buf, ts)
}

// value prints a use of v.
func (p *mlirPrinter) value(v *Value) {
	if n, ok := p.names[v]; ok {
		p.str(n)
		return
	}
	p.str("%<?>")
	if p.strict && p.err == nil {
		if v == nil {
			p.err = errors.New("stablehlo: Print: nil value")
		} else {
			p.err = errors.New("stablehlo: Print: a value is used outside the region that defines it")
		}
	}
}

func (p *mlirPrinter) values(vs []*Value) {
	for i, v := range vs {
		if i > 0 {
			p.str(", ")
		}
		p.value(v)
	}
}

// loc prints " loc(...)" when locations are on and l is known.
func (p *mlirPrinter) loc(l Location) {
	if !p.opts.Locations || l.IsUnknown() {
		return
	}
	p.str(" loc(")
	p.buf = mlirAppendLocBody(p.buf, l)
	p.byte(')')
}

// mlirAppendLocBody appends what goes between "loc(" and ")".
func mlirAppendLocBody(b []byte, l Location) []byte {
	switch {
	case l.Text != "":
		return append(b, l.Text...)
	case l.Name != "" && l.File != "":
		b = mlirAppendString(b, l.Name)
		b = append(b, '(')
		b = mlirAppendFileLoc(b, l)
		return append(b, ')')
	case l.File != "":
		return mlirAppendFileLoc(b, l)
	case l.Name != "":
		return mlirAppendString(b, l.Name)
	}
	if l.Line != 0 || l.Col != 0 {
		return mlirAppendFileLoc(b, l)
	}
	return append(b, "unknown"...)
}

func mlirAppendFileLoc(b []byte, l Location) []byte {
	b = mlirAppendString(b, l.File)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(l.Line), 10)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(l.Col), 10)
}

// --- module and functions ---------------------------------------------------

func (p *mlirPrinter) module(m *Module) {
	if m == nil {
		p.err = mlirErrNilModule
		return
	}
	p.names = mlirNameModule(m, p.opts.Generic)
	if p.opts.Generic {
		p.str(`"builtin.module"() `)
		var props, rest []NamedAttr
		if m.Name != "" {
			props = append(props, NamedAttr{Name: "sym_name", Value: StringAttr(m.Name)})
		}
		for _, a := range m.Attrs {
			if a.Name == "sym_visibility" {
				props = append(props, a)
			} else {
				rest = append(rest, a)
			}
		}
		if len(props) > 0 {
			p.str("<")
			p.dict(props)
			p.str("> ")
		}
		p.str("({")
		p.moduleBody(m)
		p.nl()
		p.str("})")
		if len(rest) > 0 {
			p.byte(' ')
			p.dict(rest)
		}
		p.str(" : () -> ()")
	} else {
		p.str("module")
		if m.Name != "" {
			p.byte(' ')
			p.buf = mlirAppendSymbol(p.buf, m.Name)
		}
		if len(m.Attrs) > 0 {
			p.str(" attributes ")
			p.dict(m.Attrs)
		}
		p.str(" {")
		p.moduleBody(m)
		p.nl()
		p.byte('}')
	}
	p.loc(m.Loc)
	p.byte('\n')
}

func (p *mlirPrinter) moduleBody(m *Module) {
	p.indent++
	saveDialect := p.dialect
	p.dialect = ""
	for _, g := range m.Globals {
		p.op(g)
		if len(p.buf) > 1<<16 {
			p.flush()
		}
	}
	for _, f := range m.Funcs {
		if f == nil {
			if p.err == nil {
				p.err = errors.New("stablehlo: Print: nil function")
			}
			continue
		}
		p.fn(f)
		if len(p.buf) > 1<<16 {
			p.flush()
		}
	}
	p.dialect = saveDialect
	p.indent--
}

// fn prints a func.func on a new line.
func (p *mlirPrinter) fn(f *Func) {
	p.nl()
	if p.opts.Generic {
		p.genericOp(mlirOpFromFunc(f))
		p.loc(f.Loc)
		return
	}
	p.fnPretty(f)
	p.loc(f.Loc)
}

// fnPretty prints f's custom form (without location).
func (p *mlirPrinter) fnPretty(f *Func) {
	p.str("func.func ")
	visKeyword := false
	if f.Private {
		p.str("private ")
	} else if v, ok := mlirAttrNamed(f.Attrs, "sym_visibility").(StringAttr); ok && (v == "public" || v == "nested") {
		p.str(string(v))
		p.byte(' ')
		visKeyword = true
	}
	p.buf = mlirAppendSymbol(p.buf, f.Name)
	p.byte('(')
	var args []*Value
	var argTypes []Type
	if f.Body != nil && len(f.Body.Blocks) > 0 {
		args = f.Body.Blocks[0].Args
		for _, a := range args {
			argTypes = append(argTypes, a.Type)
		}
	} else if ta, ok := mlirAttrNamed(f.Attrs, "function_type").(TypeAttr); ok {
		if ft, ok := ta.Type.(FunctionType); ok {
			argTypes = ft.Inputs
		}
	}
	for i, t := range argTypes {
		if i > 0 {
			p.str(", ")
		}
		if args != nil {
			p.value(args[i])
			p.str(": ")
		}
		p.typ(t)
		if i < len(f.ArgAttrs) && len(f.ArgAttrs[i]) > 0 {
			p.byte(' ')
			p.dict(f.ArgAttrs[i])
		}
	}
	p.byte(')')
	if len(f.ResultTypes) > 0 {
		p.str(" -> ")
		anyAttrs := false
		for i := range f.ResultTypes {
			if i < len(f.ResultAttrs) && len(f.ResultAttrs[i]) > 0 {
				anyAttrs = true
			}
		}
		_, isFn := f.ResultTypes[0].(FunctionType)
		if len(f.ResultTypes) == 1 && !anyAttrs && !isFn {
			p.typ(f.ResultTypes[0])
		} else {
			p.byte('(')
			for i, t := range f.ResultTypes {
				if i > 0 {
					p.str(", ")
				}
				p.typ(t)
				if i < len(f.ResultAttrs) && len(f.ResultAttrs[i]) > 0 {
					p.byte(' ')
					p.dict(f.ResultAttrs[i])
				}
			}
			p.byte(')')
		}
	}
	var rest []NamedAttr
	for _, a := range f.Attrs {
		if a.Name == "sym_visibility" && visKeyword || a.Name == "function_type" && (f.Body == nil || len(f.Body.Blocks) == 0) {
			continue
		}
		rest = append(rest, a)
	}
	if len(rest) > 0 {
		p.str(" attributes ")
		p.dict(rest)
	}
	if f.Body != nil && len(f.Body.Blocks) > 0 {
		p.byte(' ')
		saveDialect := p.dialect
		p.dialect = "func"
		p.region(f.Body, false)
		p.dialect = saveDialect
	}
}

// mlirOpFromFunc returns f as a generic func.func op (sharing f's body).
func mlirOpFromFunc(f *Func) *Op {
	var ins []Type
	if f.Body != nil && len(f.Body.Blocks) > 0 {
		ins = mlirBlockArgTypes(f.Body.Blocks[0])
	} else if ta, ok := mlirAttrNamed(f.Attrs, "function_type").(TypeAttr); ok {
		if ft, ok := ta.Type.(FunctionType); ok {
			ins = ft.Inputs
		}
	}
	attrs := []NamedAttr{
		{Name: "sym_name", Value: StringAttr(f.Name)},
		{Name: "function_type", Value: TypeAttr{Type: FunctionType{Inputs: ins, Results: f.ResultTypes}}},
	}
	if f.Private {
		attrs = append(attrs, NamedAttr{Name: "sym_visibility", Value: StringAttr("private")})
	}
	dicts := func(ds []DictAttr, n int) (ArrayAttr, bool) {
		any := false
		arr := make(ArrayAttr, n)
		for i := range arr {
			arr[i] = DictAttr{}
			if i < len(ds) && len(ds[i]) > 0 {
				arr[i] = ds[i]
				any = true
			}
		}
		return arr, any
	}
	if arr, any := dicts(f.ArgAttrs, len(ins)); any {
		attrs = append(attrs, NamedAttr{Name: "arg_attrs", Value: arr})
	}
	if arr, any := dicts(f.ResultAttrs, len(f.ResultTypes)); any {
		attrs = append(attrs, NamedAttr{Name: "res_attrs", Value: arr})
	}
	for _, a := range f.Attrs {
		if a.Name == "function_type" || (a.Name == "sym_visibility" && f.Private) {
			continue
		}
		attrs = append(attrs, a)
	}
	op := &Op{Name: "func.func", Attrs: attrs, Loc: f.Loc}
	if f.Body != nil {
		op.Regions = []*Region{f.Body}
	} else {
		op.Regions = []*Region{{}}
	}
	return op
}

func mlirAttrNamed(attrs []NamedAttr, name string) Attribute {
	for _, a := range attrs {
		if a.Name == name {
			return a.Value
		}
	}
	return nil
}

// --- ops ------------------------------------------------------------------

// nilPart records a nil region or block of hand-built IR as the error of
// a strict print (what it prints is not MLIR).
func (p *mlirPrinter) nilPart(what string) {
	p.str("<<NULL " + strings.ToUpper(what) + ">>")
	if p.strict && p.err == nil {
		p.err = errors.New("stablehlo: Print: nil " + what)
	}
}

// op prints one op on a new line.
func (p *mlirPrinter) op(op *Op) {
	p.nl()
	if op == nil {
		p.str(`"<<NULL OP>>"() : () -> ()`)
		if p.strict && p.err == nil {
			p.err = errors.New("stablehlo: Print: nil op")
		}
		return
	}
	p.resultDefs(op)
	if !p.opts.Generic {
		if fn := mlirPrettyPrinters[op.Name]; fn != nil {
			mark := len(p.buf)
			if fn(p, op) {
				p.loc(op.Loc)
				p.flushIfLarge()
				return
			}
			p.buf = p.buf[:mark]
		}
	}
	p.genericOp(op)
	p.loc(op.Loc)
	p.flushIfLarge()
}

// flushIfLarge writes the buffer out once it holds 64 KiB, so printing a
// huge function does not keep its whole text in memory.
func (p *mlirPrinter) flushIfLarge() {
	if len(p.buf) >= 64<<10 && p.w != nil {
		p.flush()
	}
}

// resultDefs prints "%0 = ", "%0:2 = " or "%a, %b = ".
func (p *mlirPrinter) resultDefs(op *Op) {
	switch len(op.Results) {
	case 0:
		return
	case 1:
		p.value(op.Results[0])
	default:
		n := p.names[op.Results[0]]
		if base, ok := strings.CutSuffix(n, "#0"); ok {
			p.str(base)
			p.byte(':')
			p.buf = strconv.AppendInt(p.buf, int64(len(op.Results)), 10)
		} else {
			p.values(op.Results)
		}
	}
	p.str(" = ")
}

// opName prints the op's name, without the default dialect's prefix.
func (p *mlirPrinter) opName(name string) {
	if p.dialect != "" && len(name) > len(p.dialect)+1 && name[len(p.dialect)] == '.' && strings.HasPrefix(name, p.dialect) {
		p.str(name[len(p.dialect)+1:])
		return
	}
	p.str(name)
}

// genericOp prints op in the generic form (without results and location).
func (p *mlirPrinter) genericOp(op *Op) {
	p.buf = mlirAppendString(p.buf, op.Name)
	p.byte('(')
	p.values(op.Operands)
	p.byte(')')
	props, rest := mlirSplitInherent(op)
	if len(props) > 0 {
		p.str(" <")
		p.dict(props)
		p.byte('>')
	}
	if len(op.Regions) > 0 {
		p.str(" (")
		saveDialect := p.dialect
		p.dialect = mlirRegionDialect(op.Name)
		for i, r := range op.Regions {
			if i > 0 {
				p.str(", ")
			}
			p.region(r, true)
		}
		p.dialect = saveDialect
		p.byte(')')
	}
	if len(rest) > 0 {
		p.byte(' ')
		p.dict(rest)
	}
	p.str(" : (")
	for i, v := range op.Operands {
		if i > 0 {
			p.str(", ")
		}
		if v == nil {
			p.str("<<NULL VALUE>>")
		} else {
			p.typ(v.Type)
		}
	}
	p.str(") -> ")
	p.resultTypes(mlirValueTypes(op.Results))
}

func mlirValueTypes(vs []*Value) []Type {
	ts := make([]Type, len(vs))
	for i, v := range vs {
		if v != nil {
			ts[i] = v.Type
		}
	}
	return ts
}

// mlirSplitInherent splits op's attributes into inherent ones (printed as
// properties, <{...}>) and discardable ones ({...}).
func mlirSplitInherent(op *Op) (props, rest []NamedAttr) {
	for _, a := range op.Attrs {
		if mlirIsInherent(op.Name, a.Name) {
			props = append(props, a)
		} else {
			rest = append(rest, a)
		}
	}
	return props, rest
}

// mlirIsInherent reports whether attr is an inherent attribute of op.
func mlirIsInherent(op, attr string) bool {
	switch op {
	case "func.func":
		switch attr {
		case "sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs", "no_inline":
			return true
		}
		return false
	case "builtin.module":
		return attr == "sym_name" || attr == "sym_visibility"
	}
	if s := opSpecs[op]; s != nil {
		return s.attr(attr) != nil
	}
	for _, a := range mlirSdyInherent[op] {
		if a == attr {
			return true
		}
	}
	return false
}

// region prints "{ ... }". printEntryArgs prints the entry block's label
// with its arguments (the generic form); custom forms print them
// themselves.
func (p *mlirPrinter) region(r *Region, printEntryArgs bool) {
	p.byte('{')
	if r == nil {
		p.nilPart("region")
		p.byte('}')
		return
	}
	for bi, b := range r.Blocks {
		if b == nil {
			p.nilPart("block")
			continue
		}
		if bi > 0 || printEntryArgs && (len(b.Args) > 0 || len(b.Ops) == 0) {
			p.nl()
			p.str("^bb")
			p.buf = strconv.AppendInt(p.buf, int64(bi), 10)
			if len(b.Args) > 0 {
				p.byte('(')
				for i, a := range b.Args {
					if i > 0 {
						p.str(", ")
					}
					p.value(a)
					p.str(": ")
					p.typ(a.Type)
				}
				p.byte(')')
			}
			p.byte(':')
		}
		p.indent++
		for _, op := range b.Ops {
			p.op(op)
		}
		p.indent--
	}
	p.nl()
	p.byte('}')
}

// --- value names ------------------------------------------------------------

// mlirNameState is the naming counters MLIR carries into nested regions.
type mlirNameState struct {
	nextValue, nextArg, nextConflict int
}

// mlirNamer assigns the names MLIR's printer gives values. It follows
// MLIR's SSANameState: a region's values are numbered, then its nested
// regions, each from the counters as they were after the enclosing region
// (the pretty form), or from counters running through the whole module
// (the generic form, where MLIR prints unique IDs). Regions wait on a
// stack, so the last one pushed is numbered first, as in MLIR.
type mlirNamer struct {
	generic bool
	names   map[*Value]string
	used    map[string]bool
	usedLog []string
	stack   []mlirNameCtx
	running mlirNameState
}

type mlirNameCtx struct {
	r     *Region
	owner string
	st    mlirNameState
	mark  int
}

func newMLIRNamer(generic bool) *mlirNamer {
	return &mlirNamer{generic: generic, names: map[*Value]string{}, used: map[string]bool{}}
}

// mlirNameModule names every value of m.
func mlirNameModule(m *Module, generic bool) map[*Value]string {
	n := newMLIRNamer(generic)
	n.names = make(map[*Value]string, countValues(m))
	st := mlirNameState{}
	for _, g := range m.Globals {
		n.numberOp(g, &st)
	}
	n.running = st
	for _, g := range m.Globals {
		if g != nil {
			for _, r := range g.Regions {
				n.push(r, g.Name, st)
			}
		}
	}
	for _, f := range m.Funcs {
		if f != nil && f.Body != nil {
			n.push(f.Body, "func.func", st)
		}
	}
	n.drain()
	return n.names
}

// countValues counts the values m defines (results and block arguments), so
// the name map is allocated once at its final size.
func countValues(m *Module) int {
	n := 0
	var region func(r *Region)
	region = func(r *Region) {
		if r == nil {
			return
		}
		for _, b := range r.Blocks {
			if b == nil {
				continue
			}
			n += len(b.Args)
			for _, op := range b.Ops {
				if op == nil {
					continue
				}
				n += len(op.Results)
				for _, sub := range op.Regions {
					region(sub)
				}
			}
		}
	}
	for _, g := range m.Globals {
		if g != nil {
			n += len(g.Results)
			for _, r := range g.Regions {
				region(r)
			}
		}
	}
	for _, f := range m.Funcs {
		if f != nil {
			region(f.Body)
		}
	}
	return n
}

// mlirNameFunc names the values of one function.
func mlirNameFunc(f *Func, generic bool) map[*Value]string {
	n := newMLIRNamer(generic)
	if f.Body != nil {
		n.push(f.Body, "func.func", mlirNameState{})
		n.drain()
	}
	return n.names
}

// numberOps numbers a list of ops (a block's) and their nested regions.
func (n *mlirNamer) numberOps(ops []*Op, st mlirNameState) {
	for _, op := range ops {
		n.numberOp(op, &st)
	}
	n.running = st
	for _, op := range ops {
		if op == nil {
			continue
		}
		for _, r := range op.Regions {
			n.push(r, op.Name, st)
		}
	}
	n.drain()
}

func (n *mlirNamer) push(r *Region, owner string, st mlirNameState) {
	if r == nil {
		return
	}
	n.stack = append(n.stack, mlirNameCtx{r: r, owner: owner, st: st, mark: len(n.usedLog)})
}

func (n *mlirNamer) drain() {
	for len(n.stack) > 0 {
		c := n.stack[len(n.stack)-1]
		n.stack = n.stack[:len(n.stack)-1]
		n.numberRegion(c)
	}
}

// unique returns name, or name_N when name is taken.
func (n *mlirNamer) unique(name string, st *mlirNameState) string {
	if !n.used[name] {
		n.used[name] = true
		n.usedLog = append(n.usedLog, name)
		return name
	}
	for {
		probe := name + "_" + strconv.Itoa(st.nextConflict)
		st.nextConflict++
		if !n.used[probe] {
			n.used[probe] = true
			n.usedLog = append(n.usedLog, probe)
			return probe
		}
	}
}

// numberRegion numbers the values of one region and queues its nested
// regions.
func (n *mlirNamer) numberRegion(c mlirNameCtx) {
	for _, name := range n.usedLog[c.mark:] {
		delete(n.used, name)
	}
	n.usedLog = n.usedLog[:c.mark]
	st := c.st
	if n.generic {
		st = n.running
	}
	r := c.r
	if !n.generic && c.owner == "stablehlo.while" && len(r.Blocks) > 0 && r.Blocks[0] != nil {
		for _, a := range r.Blocks[0].Args {
			n.names[a] = "%" + n.unique("iterArg", &st)
		}
	}
	for bi, b := range r.Blocks {
		if b == nil {
			continue
		}
		for _, a := range b.Args {
			if _, done := n.names[a]; done {
				continue
			}
			if bi == 0 {
				n.names[a] = "%" + n.unique("arg"+strconv.Itoa(st.nextArg), &st)
				st.nextArg++
			} else {
				n.names[a] = "%" + strconv.Itoa(st.nextValue)
				st.nextValue++
			}
		}
		for _, op := range b.Ops {
			n.numberOp(op, &st)
		}
	}
	n.running = st
	for _, b := range r.Blocks {
		if b == nil {
			continue
		}
		for _, op := range b.Ops {
			if op == nil {
				continue
			}
			for _, sub := range op.Regions {
				n.push(sub, op.Name, st)
			}
		}
	}
}

// numberOp names op's results.
func (n *mlirNamer) numberOp(op *Op, st *mlirNameState) {
	if op == nil || len(op.Results) == 0 {
		return
	}
	if !n.generic {
		switch op.Name {
		case "stablehlo.constant":
			if len(op.Results) == 1 && op.Results[0] != nil {
				name := "cst"
				if dt, ok := mlirElemDType(op.Results[0].Type); ok && (dt.IsInt() || dt == xla.Bool) {
					name = "c"
				}
				n.names[op.Results[0]] = "%" + n.unique(name, st)
				return
			}
		case "stablehlo.rng_bit_generator":
			if len(op.Results) == 2 {
				n.names[op.Results[0]] = "%" + n.unique("output_state", st)
				n.names[op.Results[1]] = "%" + n.unique("output", st)
				return
			}
		}
	}
	id := "%" + strconv.Itoa(st.nextValue)
	st.nextValue++
	if len(op.Results) == 1 {
		n.names[op.Results[0]] = id
		return
	}
	for i, v := range op.Results {
		n.names[v] = id + "#" + strconv.Itoa(i)
	}
}
