package stablehlo

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Builder builds a Module: functions, their ops with shape inference, and
// module attributes. Errors are sticky: an op given bad input records a
// *BuildError (op name, operand types, the caller's file:line), returns a
// placeholder value, and every later op is skipped; Build returns the first
// error. The builder never panics on bad input. A Builder and its
// FuncBuilders are not safe for concurrent use.
//
// The zero Builder builds an unnamed module, as NewBuilder("") does. A nil
// *Builder builds nothing: Build and Err report it, NewFunction returns a
// FuncBuilder whose Err reports it, and its other methods do nothing.
//
//	b := stablehlo.NewBuilder("jit_f")
//	f := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4))
//	x := f.Arg(0)
//	f.Return(f.Add(x, x))
//	mod, err := b.Build()
type Builder struct {
	mod     *Module
	err     *BuildError
	funcs   []*FuncBuilder
	autoLoc bool
	// regionOwner maps the blocks of regions built by closures to their
	// function (to explain scope errors).
	regionOwner map[*Block]*Func
	// Node slabs for the ops built most (see slab).
	node1s   slab[node1]
	node2s   slab[node2]
	dotNodes slab[dotNode]
	// The last dot_general dimension numbers, shared by the next one
	// when equal.
	lastDotDN DotDimensionNumbers
	lastDot   Attribute
	// names indexes the module's function names, for the first
	// len(named) of its functions.
	names map[string]bool
	named []*Func
	// symCalls are the func.call ops CallSymbol built, whose callees
	// Build looks up.
	symCalls []symCall
	// built is set when Build has returned the module: the builder no
	// longer changes it (see frozen).
	built bool
	// calls is set once an op that calls a function (func.call,
	// stablehlo.composite) is built: Build then looks for call cycles.
	calls bool
}

// symCall is a func.call built by CallSymbol and where the user built it.
type symCall struct {
	op   *Op
	file string
	line int
}

// hasFunc reports whether the module has a function called name. It
// indexes the functions added since the last call (the module's function
// list may also change outside the builder: a list that no longer starts
// as indexed is indexed again).
func (b *Builder) hasFunc(name string) bool {
	fs := b.mod.Funcs
	if len(fs) < len(b.named) || (len(b.named) > 0 && &fs[0] != &b.named[0]) || b.names == nil {
		b.names, b.named = map[string]bool{}, nil
	}
	for _, f := range fs[len(b.named):] {
		if f != nil {
			b.names[f.Name] = true
		}
	}
	b.named = fs
	return b.names[name]
}

// NewBuilder returns a builder of a module named name ("" for an unnamed
// module).
func NewBuilder(name string) *Builder {
	return &Builder{mod: &Module{Name: name}}
}

// Extend returns a builder that adds functions to the existing module m
// (a parsed one, say). Functions already in m are called with CallSymbol.
func Extend(m *Module) *Builder {
	if m == nil {
		m = &Module{}
	}
	return &Builder{mod: m}
}

// errNilBuilder and errNilBuild are what a nil *Builder's Err and Build
// return.
var (
	errNilBuilder = errors.New("stablehlo: nil *Builder (make one with NewBuilder or Extend)")
	errNilBuild   = errors.New("stablehlo: Build: nil *Builder (make one with NewBuilder or Extend)")
)

// Err returns the first error recorded, or nil.
func (b *Builder) Err() error {
	if b == nil {
		return errNilBuilder
	}
	if b.err == nil {
		return nil
	}
	return b.err
}

// module returns the module under construction, made on first use by the
// zero Builder (nil for a nil b).
func (b *Builder) module() *Module {
	if b == nil {
		return nil
	}
	if b.mod == nil {
		b.mod = &Module{}
	}
	return b.mod
}

// Module returns the module under construction. It is complete only once
// Build has returned without error (and then no longer changes).
func (b *Builder) Module() *Module { return b.module() }

// AutoLocations makes every op built from now on carry the file:line of
// the user code that built it as its location (off by default: finding the
// caller costs about a microsecond per op).
func (b *Builder) AutoLocations(on bool) {
	if b != nil {
		b.autoLoc = on
	}
}

// SetAttr sets a module attribute. The name must not be empty, nor
// sym_name (the module's name is NewBuilder's argument).
func (b *Builder) SetAttr(name string, value Attribute) {
	if b.frozen("module") {
		return
	}
	if value == nil {
		b.fail(nil, "module", nil, "attribute %s is nil", name)
		return
	}
	if name == "sym_name" {
		b.fail(nil, "module", nil, "attribute sym_name is the module's name, given to NewBuilder: it cannot be set as an attribute")
		return
	}
	if err := checkAttrs([]NamedAttr{{Name: name, Value: value}}); err != nil {
		b.fail(nil, "module", nil, "%v", err)
		return
	}
	b.mod.SetAttr(name, value)
}

// SetNumPartitions sets mhlo.num_partitions (an i32, as JAX writes it).
func (b *Builder) SetNumPartitions(n int) {
	if b.frozen("module") {
		return
	}
	if n < 1 {
		b.fail(nil, "module", nil, "mhlo.num_partitions must be >= 1, got %d", n)
		return
	}
	b.mod.SetAttr("mhlo.num_partitions", IntAttr{Value: int64(n), Type: xla.Int32})
}

// SetNumReplicas sets mhlo.num_replicas (an i32, as JAX writes it).
func (b *Builder) SetNumReplicas(n int) {
	if b.frozen("module") {
		return
	}
	if n < 1 {
		b.fail(nil, "module", nil, "mhlo.num_replicas must be >= 1, got %d", n)
		return
	}
	b.mod.SetAttr("mhlo.num_replicas", IntAttr{Value: int64(n), Type: xla.Int32})
}

// AddGlobal appends a top-level op of another dialect (e.g. sdy.mesh).
func (b *Builder) AddGlobal(op *Op) {
	if b.frozen("module") {
		return
	}
	if op == nil {
		b.fail(nil, "module", nil, "global op is nil")
		return
	}
	b.mod.Globals = append(b.mod.Globals, op)
}

// Function returns the function builder named name, or nil.
func (b *Builder) Function(name string) *FuncBuilder {
	if b == nil {
		return nil
	}
	for _, f := range b.funcs {
		if f.s.fn.Name == name {
			return f
		}
	}
	return nil
}

// NewFunction starts a public function with arguments of the given types.
// Its result types are those of the values given to Return (or declared
// earlier with DeclareResults). On a nil *Builder it returns a FuncBuilder
// of a module of its own, whose Err reports the nil Builder and which
// builds nothing.
func (b *Builder) NewFunction(name string, argTypes ...Type) *FuncBuilder {
	if b == nil {
		b = &Builder{mod: &Module{}}
		b.fail(nil, "func.func", nil, "NewFunction(%q) called on a nil *Builder (make one with NewBuilder or Extend)", name)
	}
	fn := &Func{Name: name, Body: NewRegion(NewBlock())}
	s := &scope{b: b, fn: fn, block: fn.Body.Blocks[0]}
	s.top = s
	s.file, s.line = callerLocation()
	fb := &FuncBuilder{s: s}
	if b.frozen("func.func") {
		return fb // not added: the built module does not change
	}
	if name == "" {
		b.fail(fb.s, "func.func", nil, "function name is empty")
	} else if b.hasFunc(name) {
		b.fail(fb.s, "func.func", nil, "function @%s already exists", name)
	}
	for i, t := range argTypes {
		if t == nil {
			b.fail(fb.s, "func.func", nil, "@%s: argument %d has a nil type", name, i)
			t = TensorType{}
		} else if err := validType(t); err != nil {
			b.fail(fb.s, "func.func", nil, "@%s: argument %d: %v", name, i, err)
		}
		s.block.AddArg(t)
	}
	b.mod.AddFunc(fn)
	b.funcs = append(b.funcs, fb)
	return fb
}

// Build finishes the module: every function must have returned, and no
// function may call itself, directly or through others. It returns the
// module, or the first error recorded while building.
//
// The module Build returns is the builder's own (the one Module returns,
// or the one given to Extend), not a copy, and it is final: the builder
// no longer changes it. Building on afterwards (an op, a new function, an
// attribute) changes nothing and records an error, which Err and a later
// Build return; a later Build with no such use returns the same module.
// To build another module, start a new Builder; to add to this one, use
// Extend(module). On a nil *Builder, Build returns an error.
func (b *Builder) Build() (*Module, error) {
	if b == nil {
		return nil, errNilBuild
	}
	b.module()
	if b.err != nil {
		return nil, b.err
	}
	if b.built {
		return b.mod, nil
	}
	for _, f := range b.funcs {
		if !f.s.returned && f.s.fn.Body != nil {
			b.err = &BuildError{Op: "func.func", File: f.s.file, Line: f.s.line, Msg: fmt.Sprintf("function @%s (started here) has no Return", f.s.fn.Name)}
			return nil, b.err
		}
		if n := len(f.s.fn.ResultAttrs); n > len(f.s.fn.ResultTypes) {
			b.err = &BuildError{Op: "func.func", Msg: fmt.Sprintf("function @%s: result attribute set on result %d of %d", f.s.fn.Name, n-1, len(f.s.fn.ResultTypes))}
			return nil, b.err
		}
	}
	if err := b.checkSymCalls(); err != nil {
		b.err = err
		return nil, b.err
	}
	if b.calls {
		if err := b.checkRecursion(); err != nil {
			b.err = err
			return nil, b.err
		}
	}
	b.built = true
	return b.mod, nil
}

// checkRecursion reports a function of the module that calls itself,
// directly or through others (Module.CallCycle), naming the cycle and
// where the builder started its first function. Build calls it only once
// the builder has built a call: without one, it made no cycle (a module
// given to Extend is not checked for the cycles it had).
func (b *Builder) checkRecursion() *BuildError {
	cycle := b.mod.CallCycle("")
	if cycle == nil {
		return nil
	}
	names := make([]string, len(cycle))
	for i, f := range cycle {
		names[i] = "@" + f
	}
	e := &BuildError{Op: "func.call", Msg: fmt.Sprintf("recursive call %s: StableHLO functions cannot call themselves, directly or through others (XLA rejects call cycles)", strings.Join(names, " -> "))}
	for _, fb := range b.funcs {
		if fb.s.fn.Name == cycle[0] {
			e.File, e.Line = fb.s.file, fb.s.line
			e.Msg += fmt.Sprintf("; @%s was started here", cycle[0])
			break
		}
	}
	return e
}

// frozen reports whether Build has returned the module, recording an
// error for op when it has: the builder no longer changes a built module.
// Every method that changes the module asks it first: a nil b is frozen
// (it has no module to change), and the zero Builder gets its module.
func (b *Builder) frozen(op string) bool {
	if b.module() == nil {
		return true
	}
	if !b.built {
		return false
	}
	b.fail(nil, op, nil, "the module was already built: Build returned it, and the builder no longer changes it (start a new Builder, or add to the module with Extend)")
	return true
}

// checkSymCalls checks that the callee of every call CallSymbol built (and
// that is still in a block) is a function of the module, whose signature
// matches the call.
func (b *Builder) checkSymCalls() *BuildError {
	if len(b.symCalls) == 0 {
		return nil
	}
	funcs := make(map[string]*Func, len(b.mod.Funcs))
	for _, f := range b.mod.Funcs {
		if f != nil {
			funcs[f.Name] = f
		}
	}
	for _, c := range b.symCalls {
		if c.op.parent == nil {
			continue
		}
		name, _ := c.op.Attr("callee").(SymbolRefAttr)
		fail := func(format string, args ...any) *BuildError {
			e := &BuildError{Op: "func.call", File: c.file, Line: c.line, Msg: fmt.Sprintf(format, args...)}
			e.Operands = valueTypes(c.op.Operands)
			return e
		}
		f := funcs[string(name)]
		if f == nil {
			return fail("callee @%s is not a function of the module (add it, or a declaration of it, before Build)", name)
		}
		params, results, ok := f.signature()
		if !ok {
			continue
		}
		if got := valueTypes(c.op.Operands); !typesEqual(got, params) {
			return fail("callee @%s takes %s, got %s", name, typeList(params), typeList(got))
		}
		if got := valueTypes(c.op.Results); !typesEqual(got, results) {
			return fail("callee @%s returns %s, the call's result types are %s", name, typeList(results), typeList(got))
		}
	}
	return nil
}

// BuildError is the error the builder records: the op that failed, the
// types of its operands, where the user's code called it, and why.
type BuildError struct {
	Op       string // "stablehlo.add"
	Operands []Type // operand types (nil for a nil operand)
	File     string // base name of the caller's file
	Line     int
	Msg      string
	// Err is the underlying error when a package built on the builder
	// recorded it with FuncBuilder.Fail (nil otherwise).
	Err error
}

// Error formats e as
// "stablehlo: stablehlo.add(tensor<2xf32>, tensor<3xf32>) at f.go:12: msg".
func (e *BuildError) Error() string {
	var sb strings.Builder
	sb.WriteString("stablehlo: ")
	sb.WriteString(e.Op)
	sb.WriteByte('(')
	for i, t := range e.Operands {
		if i > 0 {
			sb.WriteString(", ")
		}
		if t == nil {
			sb.WriteString("nil")
		} else {
			sb.WriteString(t.String())
		}
	}
	sb.WriteByte(')')
	if e.File != "" {
		fmt.Fprintf(&sb, " at %s:%d", e.File, e.Line)
	}
	sb.WriteString(": ")
	sb.WriteString(e.Msg)
	return sb.String()
}

// FuncBuilder builds the ops of one function, or of one region of an op
// (the closures given to Reduce, While, If ... receive a FuncBuilder for
// the region's block). Values may be used in the block they were built in
// and in the regions nested in it.
//
// A nil *FuncBuilder (or the zero FuncBuilder) has no builder to record an
// error in: it builds nothing, its methods that return values return
// placeholders (as a failed op does), the others do nothing, and Err
// reports the nil FuncBuilder.
type FuncBuilder struct {
	s      *scope
	loc    Location
	hasLoc bool
}

// scope is the mutable state shared by a FuncBuilder and its WithLoc views.
type scope struct {
	b        *Builder
	fn       *Func
	top      *scope // the function's own scope
	block    *Block
	parent   *scope // enclosing scope of a region
	before   *Op    // insert before this op instead of appending
	closed   bool   // a region whose closure has returned
	returned bool   // (top) Return was called
	declared bool   // (top) result types known
	// file and line are where the function was started (top), for an
	// error about the function as a whole.
	file string
	line int
	// limit is, in a builder made by BuilderAt or BuilderAtEnd, the first
	// op of block that comes after the insertion point (before, or the op
	// holding the inner scope's region): its results and those of the ops
	// after it are not visible. limitAt is its index in block.Ops when
	// last looked up.
	limit   *Op
	limitAt int
}

// errNilFuncBuilder is what Err returns for a nil (or zero) FuncBuilder.
var errNilFuncBuilder = errors.New("stablehlo: nil *FuncBuilder: it builds nothing (get one from Builder.NewFunction, BuilderAt or BuilderAtEnd)")

// live reports whether fb has a function to build: it is not nil nor
// the zero FuncBuilder. The checks every method makes before it changes
// anything (frozen, ok, checkOperands, fail) ask it first.
func (fb *FuncBuilder) live() bool { return fb != nil && fb.s != nil }

// Builder returns the module builder (nil for a nil FuncBuilder).
func (fb *FuncBuilder) Builder() *Builder {
	if !fb.live() {
		return nil
	}
	return fb.s.b
}

// Func returns the function being built (nil for a nil FuncBuilder).
func (fb *FuncBuilder) Func() *Func {
	if !fb.live() {
		return nil
	}
	return fb.s.fn
}

// Block returns the block ops are added to (nil for a nil FuncBuilder).
func (fb *FuncBuilder) Block() *Block {
	if !fb.live() {
		return nil
	}
	return fb.s.block
}

// Err returns the first error recorded by the module builder, or nil; for
// a nil FuncBuilder, an error saying so.
func (fb *FuncBuilder) Err() error {
	if !fb.live() {
		return errNilFuncBuilder
	}
	return fb.s.b.Err()
}

// WithLoc returns a view of fb whose ops carry loc as their location.
// Name and File may hold any text (they print as escaped strings); Text,
// which prints as it is, must be a location body the parser reads back:
// otherwise WithLoc records an error and the view's ops carry no location.
func (fb *FuncBuilder) WithLoc(loc Location) *FuncBuilder {
	if !fb.live() {
		return fb
	}
	if err := validLocText(loc.Text); err != nil {
		fb.fail("WithLoc", nil, "%v", err)
		return &FuncBuilder{s: fb.s}
	}
	return &FuncBuilder{s: fb.s, loc: loc, hasLoc: !loc.IsUnknown()}
}

// validLocText checks that a Location's Text, printed as it is between
// "loc(" and ")", is read back by the parser as one location: balanced,
// its strings closed on their line, with no location aliases (#loc1: a
// built module defines none) and no NUL byte.
func validLocText(text string) (err error) {
	if text == "" {
		return nil
	}
	if strings.IndexByte(text, 0) >= 0 {
		return fmt.Errorf("location text %q holds a NUL byte", text)
	}
	p := newMLIRParser([]byte("("+text+")"), 0)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(mlirParseFailure)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("location text %q does not parse: %s", text, f.err.Msg)
		}
	}()
	var l Location
	p.parseLocBody(&l)
	if p.pos != len(p.src) {
		return fmt.Errorf("location text %q closes the location early: its parentheses are unbalanced", text)
	}
	p.resolveLocations()
	return nil
}

// Arg returns argument i of the function (or region) being built.
func (fb *FuncBuilder) Arg(i int) *Value {
	args := fb.Args()
	if i < 0 || i >= len(args) {
		fb.fail("arg", nil, "argument %d out of range [0, %d)", i, len(args))
		return deadValue(TensorType{})
	}
	return args[i]
}

// Args returns the arguments of the function (or region) being built.
func (fb *FuncBuilder) Args() []*Value {
	if !fb.live() {
		return nil
	}
	return fb.s.block.Args
}

// Private marks the function private (sym_visibility = "private").
func (fb *FuncBuilder) Private() *FuncBuilder {
	if fb.frozen("func.func") {
		return fb
	}
	fb.s.fn.Private = true
	return fb
}

// funcSyntaxAttrs are the attributes of func.func that its own syntax
// prints (and the methods that set them).
var funcSyntaxAttrs = map[string]string{
	"sym_name":       "the function's name, given to NewFunction",
	"sym_visibility": "set by Private",
	"function_type":  "the function's signature, from its arguments and Return",
	"arg_attrs":      "set by SetArgAttr",
	"res_attrs":      "set by SetResultAttr",
}

// SetAttr sets an attribute of the func.func op itself. The name must not
// be empty, nor one of those the function's syntax gives (sym_name,
// sym_visibility, function_type, arg_attrs, res_attrs).
func (fb *FuncBuilder) SetAttr(name string, value Attribute) {
	if fb.frozen("func.func") {
		return
	}
	if value == nil {
		fb.fail("func.func", nil, "attribute %s is nil", name)
		return
	}
	if why, ok := funcSyntaxAttrs[name]; ok {
		fb.fail("func.func", nil, "attribute %s is %s: it cannot be set as an attribute", name, why)
		return
	}
	if err := checkAttrs([]NamedAttr{{Name: name, Value: value}}); err != nil {
		fb.fail("func.func", nil, "%v", err)
		return
	}
	setNamed(&fb.s.fn.Attrs, name, value)
}

// SetArgAttr sets attribute name of argument i (e.g. mhlo.sharding,
// mhlo.layout_mode, jax.buffer_donor).
func (fb *FuncBuilder) SetArgAttr(i int, name string, value Attribute) {
	if fb.frozen("func.func") {
		return
	}
	fn := fb.s.fn
	if n := len(fn.Args()); i < 0 || i >= n {
		fb.fail("func.func", nil, "argument %d out of range [0, %d)", i, n)
		return
	}
	if err := checkAttrs([]NamedAttr{{Name: name, Value: value}}); err != nil {
		fb.fail("func.func", nil, "argument %d: %v", i, err)
		return
	}
	for len(fn.ArgAttrs) < len(fn.Args()) {
		fn.ArgAttrs = append(fn.ArgAttrs, nil)
	}
	setDict(&fn.ArgAttrs[i], name, value)
}

// SetResultAttr sets attribute name of result i (e.g. jax.result_info,
// mhlo.sharding). It may be called before Return.
func (fb *FuncBuilder) SetResultAttr(i int, name string, value Attribute) {
	if fb.frozen("func.func") {
		return
	}
	fn := fb.s.fn
	if i < 0 || (fb.s.top.declared && i >= len(fn.ResultTypes)) {
		fb.fail("func.func", nil, "result %d out of range [0, %d)", i, len(fn.ResultTypes))
		return
	}
	if !fb.s.top.declared && i >= maxUndeclaredResult {
		// Before Return the result count is unknown: the attributes of
		// results up to i are kept, so i is bounded (MaxInt ran the
		// process out of memory).
		fb.fail("func.func", nil, "result %d: before Return, results past %d take attributes only after DeclareResults", i, maxUndeclaredResult-1)
		return
	}
	if err := checkAttrs([]NamedAttr{{Name: name, Value: value}}); err != nil {
		fb.fail("func.func", nil, "result %d: %v", i, err)
		return
	}
	for len(fn.ResultAttrs) <= i {
		fn.ResultAttrs = append(fn.ResultAttrs, nil)
	}
	setDict(&fn.ResultAttrs[i], name, value)
}

// maxUndeclaredResult bounds the result index SetResultAttr takes before
// the function's results are known (Return, DeclareResults).
const maxUndeclaredResult = 1 << 16

// SetArgSharding sets mhlo.sharding of argument i ("{replicated}", "{devices=[2,1]<=[2]}").
func (fb *FuncBuilder) SetArgSharding(i int, sharding string) {
	fb.SetArgAttr(i, "mhlo.sharding", StringAttr(sharding))
}

// SetResultSharding sets mhlo.sharding of result i.
func (fb *FuncBuilder) SetResultSharding(i int, sharding string) {
	fb.SetResultAttr(i, "mhlo.sharding", StringAttr(sharding))
}

// SetOpAttr sets a (discardable) attribute on the op that defined v. It
// does not replace the op's own attributes (those its builder set, such
// as dimensions), except dialect-prefixed ones like mhlo.sharding.
func (fb *FuncBuilder) SetOpAttr(v *Value, name string, value Attribute) {
	if fb.frozen("SetOpAttr") || fb.s.b.err != nil {
		return
	}
	if v == nil || v.op == nil {
		fb.fail("SetOpAttr", nil, "value is nil or not an op result")
		return
	}
	if err := checkAttrs([]NamedAttr{{Name: name, Value: value}}); err != nil {
		fb.fail("SetOpAttr", nil, "%v", err)
		return
	}
	if v.op.Attr(name) != nil && !strings.Contains(name, ".") {
		fb.fail("SetOpAttr", nil, "%s already has attribute %q (SetOpAttr replaces only dialect-prefixed ones, such as mhlo.sharding)", v.op.Name, name)
		return
	}
	v.op.SetAttr(name, value)
}

// SetSharding sets mhlo.sharding on the op that defined v.
func (fb *FuncBuilder) SetSharding(v *Value, sharding string) {
	fb.SetOpAttr(v, "mhlo.sharding", StringAttr(sharding))
}

// SetFrontendAttributes sets mhlo.frontend_attributes on the op that defined v.
func (fb *FuncBuilder) SetFrontendAttributes(v *Value, attrs DictAttr) {
	fb.SetOpAttr(v, "mhlo.frontend_attributes", attrs)
}

// DeclareResults fixes the function's result types before Return, so that
// other functions can Call it first.
func (fb *FuncBuilder) DeclareResults(types ...Type) {
	if fb.frozen("func.func") {
		return
	}
	top := fb.s.top
	if top.declared {
		if !typesEqual(top.fn.ResultTypes, types) {
			fb.fail("func.func", nil, "@%s: result types already declared as %s", top.fn.Name, typeList(top.fn.ResultTypes))
		}
		return
	}
	for i, t := range types {
		if t == nil {
			fb.fail("func.func", nil, "@%s: result %d has a nil type", top.fn.Name, i)
			return
		}
		if err := validType(t); err != nil {
			fb.fail("func.func", nil, "@%s: result %d: %v", top.fn.Name, i, err)
			return
		}
	}
	top.fn.ResultTypes = append([]Type(nil), types...)
	top.declared = true
}

// Return ends the function with func.return of values; their types become
// the function's result types (or must match the declared ones). In a
// region builder, use the closure's return values instead.
func (fb *FuncBuilder) Return(values ...*Value) {
	const name = "func.return"
	if fb.frozen(name) {
		return
	}
	s := fb.s
	if s.parent != nil {
		fb.fail(name, values, "Return called on a region builder: return the values from the closure")
		return
	}
	if s.returned {
		fb.fail(name, values, "function @%s already returned", s.fn.Name)
		return
	}
	if s.before != nil {
		fb.fail(name, values, "the builder inserts before %s: a return must end its block", s.before.Name)
		return
	}
	if !fb.checkOperands(name, values) {
		return
	}
	types := make([]Type, len(values))
	for i, v := range values {
		types[i] = v.Type
	}
	if s.declared {
		if !typesEqual(s.fn.ResultTypes, types) {
			fb.fail(name, values, "function @%s declared results %s", s.fn.Name, typeList(s.fn.ResultTypes))
			return
		}
	} else {
		s.fn.ResultTypes = types
		s.declared = true
	}
	if len(s.fn.ResultAttrs) > len(types) {
		fb.fail(name, values, "result attribute set on result %d of %d", len(s.fn.ResultAttrs)-1, len(types))
		return
	}
	fb.emit(NewOp(name, append([]*Value(nil), values...), nil))
	s.returned = true
}

// Call calls another function of the same module (func.call) and returns
// its results. The callee's result types must be known: it has returned,
// or declared them with DeclareResults.
func (fb *FuncBuilder) Call(callee *FuncBuilder, args ...*Value) []*Value {
	const name = "func.call"
	// A failed call returns one placeholder per result when the callee's
	// result types are known, and one otherwise (so that r[0] does not
	// panic before Build reports the error).
	dead := func() []*Value {
		if callee.live() && callee.s.top.declared {
			return deadValues(callee.s.fn.ResultTypes)
		}
		return deadN(1)
	}
	if !fb.checkOperands(name, args) {
		return dead()
	}
	if !callee.live() {
		fb.fail(name, args, "callee is nil")
		return dead()
	}
	if callee.s.b != fb.s.b {
		fb.fail(name, args, "callee @%s belongs to another module builder", callee.s.fn.Name)
		return dead()
	}
	cf := callee.s.fn
	if !callee.s.top.declared {
		fb.fail(name, args, "callee @%s has no known result types: Return or DeclareResults first", cf.Name)
		return dead()
	}
	params := cf.ArgTypes()
	if len(params) != len(args) {
		fb.fail(name, args, "callee @%s takes %d arguments, got %d", cf.Name, len(params), len(args))
		return deadValues(cf.ResultTypes)
	}
	for i, v := range args {
		if !TypesEqual(v.Type, params[i]) {
			fb.fail(name, args, "argument %d of @%s must be %s", i, cf.Name, params[i])
			return deadValues(cf.ResultTypes)
		}
	}
	op := NewOp(name, append([]*Value(nil), args...), cf.ResultTypes, NamedAttr{Name: "callee", Value: SymbolRefAttr(cf.Name)})
	fb.emit(op)
	return op.Results
}

// CallSymbol calls a function by name with explicitly given result types
// (for functions that are not built by this builder, e.g. those of a
// parsed module given to Extend, or a declaration added to the module).
// Build checks that the module has the function, with this signature.
func (fb *FuncBuilder) CallSymbol(callee string, resultTypes []Type, args ...*Value) []*Value {
	const name = "func.call"
	if !fb.checkOperands(name, args) || !fb.checkTypes(name, args, resultTypes) {
		return deadValues(resultTypes)
	}
	if callee == "" {
		fb.fail(name, args, "callee name is empty")
		return deadValues(resultTypes)
	}
	op := NewOp(name, append([]*Value(nil), args...), append([]Type(nil), resultTypes...), NamedAttr{Name: "callee", Value: SymbolRefAttr(callee)})
	fb.emit(op)
	if fb.s.b.err == nil {
		fb.s.b.noteSymCall(op)
	}
	return op.Results
}

// noteSymCall keeps a func.call built by symbol for Build to check its
// callee, with the user's file:line.
func (b *Builder) noteSymCall(op *Op) {
	file, line := callerLocation()
	b.symCalls = append(b.symCalls, symCall{op: op, file: file, line: line})
}

// BuilderAt returns a FuncBuilder that inserts new ops just before op, in
// op's block, so rewrites can reuse the typed constructors. Values visible
// there (op's block and the blocks enclosing it) can be used. Its errors
// are reported by the returned builder's Err.
func BuilderAt(op *Op) *FuncBuilder {
	b := &Builder{mod: &Module{}}
	if op == nil || op.parent == nil {
		s := &scope{b: b, fn: &Func{}, block: NewBlock()}
		s.top = s
		fb := &FuncBuilder{s: s}
		fb.fail("BuilderAt", nil, "op is nil or not in a block")
		return fb
	}
	fb := BuilderAtEnd(op.parent)
	fb.s.before = op
	fb.s.limit = op
	return fb
}

// BuilderAtEnd returns a FuncBuilder that appends new ops at the end of
// block (after its terminator, if any: use BuilderAt(terminator) to add
// ops before it).
func BuilderAtEnd(block *Block) *FuncBuilder {
	b := &Builder{mod: &Module{}}
	var chain []*Block
	for blk := block; blk != nil; {
		chain = append(chain, blk)
		r := blk.parent
		if r == nil || r.parent == nil {
			break
		}
		blk = r.parent.parent
	}
	var s *scope
	fn := &Func{}
	for i := len(chain) - 1; i >= 0; i-- {
		ns := &scope{b: b, fn: fn, block: chain[i], parent: s}
		if i > 0 {
			ns.limit = chain[i-1].parent.parent
		}
		if s == nil {
			ns.top = ns
		} else {
			ns.top = s.top
		}
		s = ns
	}
	if s == nil {
		s = &scope{b: b, fn: fn, block: NewBlock()}
		s.top = s
	}
	return &FuncBuilder{s: s}
}

// ---- internals ----

// emit adds op to the current block (or before the insertion point) and
// sets its location.
func (fb *FuncBuilder) emit(op *Op) {
	s := fb.s
	if s.parent == nil && s.before == nil && s.top.returned {
		// ok() let the op start before func.return was added: the
		// function's own builder returned from inside one of the op's
		// region closures.
		fb.fail(op.Name, op.Operands, "%s after func.return: function @%s returned while the op's regions were being built (return the region's values from its closure instead)", op.Name, s.fn.Name)
		return
	}
	for _, r := range op.Results {
		if err := validType(r.Type); err != nil {
			fb.fail(op.Name, op.Operands, "result type: %v", err)
			return
		}
	}
	if op.Name == "func.call" || op.Name == "stablehlo.composite" {
		s.b.calls = true
	}
	if fb.hasLoc {
		op.Loc = fb.loc
	} else if s.b.autoLoc {
		file, line := callerLocation()
		op.Loc = Location{File: file, Line: line}
	}
	if s.before != nil {
		if err := s.block.InsertBefore(s.before, op); err != nil {
			fb.fail(op.Name, op.Operands, "%v", err)
		} else if at := s.limitAt + 1; at < len(s.block.Ops) && s.block.Ops[at] == s.limit {
			s.limitAt = at // the op went in before the limit
		}
		return
	}
	op.parent = s.block
	s.block.Ops = append(s.block.Ops, op)
}

// fail records the first error (a nil FuncBuilder has no builder to
// record it in: its Err reports the nil FuncBuilder).
func (fb *FuncBuilder) fail(op string, operands []*Value, format string, args ...any) {
	if fb.live() {
		fb.s.b.fail(fb.s, op, operands, format, args...)
	}
}

// frozen reports whether fb may change nothing: it is nil, or Build
// returned its module (Builder.frozen records the error).
func (fb *FuncBuilder) frozen(op string) bool {
	return !fb.live() || fb.s.b.frozen(op)
}

func (b *Builder) fail(_ *scope, op string, operands []*Value, format string, args ...any) {
	if b == nil || b.err != nil {
		return
	}
	e := &BuildError{Op: op, Msg: fmt.Sprintf(format, args...)}
	if operands != nil {
		e.Operands = make([]Type, len(operands))
		for i, v := range operands {
			if v != nil {
				e.Operands[i] = v.Type
			}
		}
	}
	e.File, e.Line = callerLocation()
	b.err = e
}

var pkgPrefix = reflect.TypeFor[Builder]().PkgPath() + "."

// callerLocation returns the first frame outside this package's non-test
// files: the user's call.
func callerLocation() (string, int) {
	var pcs [64]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		internal := isBuilderFrame(f.Function, f.File) && !strings.HasSuffix(f.File, "_test.go")
		if !internal && f.File != "" && !strings.HasPrefix(f.Function, "runtime.") {
			return filepath.Base(f.File), f.Line
		}
		if !more {
			return "", 0
		}
	}
}

// ok reports whether building may go on (no error recorded and the scope
// is open; a nil FuncBuilder builds nothing).
func (fb *FuncBuilder) ok(op string, operands []*Value) bool {
	if !fb.live() {
		return false
	}
	s := fb.s
	if s.b.err != nil || s.b.frozen(op) {
		return false
	}
	if s.closed {
		fb.fail(op, operands, "region builder used after its closure returned")
		return false
	}
	if s.top.returned && s.parent == nil && s.before == nil {
		fb.fail(op, operands, "function @%s already returned", s.fn.Name)
		return false
	}
	return true
}

// visible reports whether v may be used in fb's block.
func (s *scope) visible(v *Value) bool {
	var blk *Block
	if v.op != nil {
		blk = v.op.parent
	} else {
		blk = v.block
	}
	if blk == nil {
		return false
	}
	for t := s; t != nil; t = t.parent {
		if t.block == blk {
			return v.op == nil || t.precedesLimit(v.op)
		}
	}
	return false
}

// precedesLimit reports whether op, an op of s.block, comes before the
// scope's limit (any op does when there is none, or when the limit has
// left the block). It looks back from the limit, where the values a
// rewrite uses are usually defined.
func (s *scope) precedesLimit(op *Op) bool {
	if s.limit == nil {
		return true
	}
	ops := s.block.Ops
	if s.limitAt >= len(ops) || ops[s.limitAt] != s.limit {
		s.limitAt = slices.Index(ops, s.limit)
		if s.limitAt < 0 {
			s.limitAt = 0
			return true
		}
	}
	for i := s.limitAt - 1; i >= 0; i-- {
		if ops[i] == op {
			return true
		}
	}
	return false
}

// checkOperands checks the builder state and that every operand is a
// non-nil value visible here.
func (fb *FuncBuilder) checkOperands(op string, operands []*Value) bool {
	if !fb.ok(op, operands) {
		return false
	}
	for i, v := range operands {
		if v == nil {
			fb.fail(op, operands, "operand %d is nil", i)
			return false
		}
		if !fb.s.visible(v) {
			fb.fail(op, operands, "operand %d %s", i, fb.whyInvisible(v))
			return false
		}
	}
	return true
}

// check1, check2 and check3 are allocation-free forms of checkOperands.
func (fb *FuncBuilder) check1(op string, a *Value) bool {
	if fb.live() && fb.s.b.err == nil && !fb.s.closed && a != nil && fb.s.visible(a) && (fb.s.parent != nil || !fb.s.returned || fb.s.before != nil) {
		return true
	}
	return fb.checkOperands(op, []*Value{a})
}

func (fb *FuncBuilder) check2(op string, a, b *Value) bool {
	if fb.live() && fb.s.b.err == nil && !fb.s.closed && a != nil && b != nil && fb.s.visible(a) && fb.s.visible(b) && (fb.s.parent != nil || !fb.s.returned || fb.s.before != nil) {
		return true
	}
	return fb.checkOperands(op, []*Value{a, b})
}

func (fb *FuncBuilder) check3(op string, a, b, c *Value) bool {
	if fb.live() && fb.s.b.err == nil && !fb.s.closed && a != nil && b != nil && c != nil && fb.s.visible(a) && fb.s.visible(b) && fb.s.visible(c) && (fb.s.parent != nil || !fb.s.returned || fb.s.before != nil) {
		return true
	}
	return fb.checkOperands(op, []*Value{a, b, c})
}

func (fb *FuncBuilder) whyInvisible(v *Value) string {
	var blk *Block
	if v.op != nil {
		blk = v.op.parent
	} else {
		blk = v.block
	}
	if blk == nil {
		if v.op == nil {
			return "is a placeholder returned by a failed op"
		}
		return "is the result of a detached op"
	}
	for t := fb.s; t != nil; t = t.parent {
		if t.block == blk {
			return fmt.Sprintf("is a result of %s, which comes after the point where ops are inserted", v.op.Name)
		}
	}
	// Find the function that holds blk.
	var owner *Func
	for top := blk; owner == nil; {
		if fn, ok := fb.s.b.regionOwner[top]; ok {
			owner = fn
			break
		}
		for _, f := range fb.s.b.funcs {
			if f.s.fn.Body != nil && len(f.s.fn.Body.Blocks) > 0 && f.s.fn.Body.Blocks[0] == top {
				owner = f.s.fn
			}
		}
		r := top.parent
		if r == nil || r.parent == nil || r.parent.parent == nil {
			break
		}
		top = r.parent.parent
	}
	switch {
	case owner == nil:
	case owner == fb.s.fn:
		return "is defined in a region that is not visible here"
	default:
		return fmt.Sprintf("is defined in another function (@%s)", owner.Name)
	}
	return "is defined outside this function"
}

// checkTypes reports an error unless every type is non-nil.
func (fb *FuncBuilder) checkTypes(op string, operands []*Value, types []Type) bool {
	for i, t := range types {
		if t == nil {
			fb.fail(op, operands, "result type %d is nil", i)
			return false
		}
		if err := validType(t); err != nil {
			fb.fail(op, operands, "result type %d: %v", i, err)
			return false
		}
	}
	return true
}

func validType(t Type) error {
	switch t := t.(type) {
	case TensorType:
		if !t.DType.Valid() {
			return fmt.Errorf("invalid element type in %s", t)
		}
		return checkDims(t)
	case TupleType:
		for _, e := range t.Elems {
			if e == nil {
				return fmt.Errorf("nil element in tuple type")
			}
			if err := validType(e); err != nil {
				return err
			}
		}
	case OpaqueType:
		return validOpaqueType(t)
	}
	return nil
}

// checkDims checks the dimensions of a type t: none negative (but
// DynamicDim, "?"), and at most 2^63-1 elements. validType checks types
// with it. The builders that make a result type from sizes the caller
// gives check those with checkSizes first, then the result type with
// checkDims (for its element count), so the error names the bad size
// rather than what follows from it.
func checkDims(t TensorType) error {
	for _, d := range t.Dims {
		if d < 0 && d != DynamicDim {
			return fmt.Errorf("negative dimension in %s", t)
		}
	}
	if t.Size() < 0 && !slices.Contains(t.Dims, DynamicDim) {
		return fmt.Errorf("%s has more than 2^63 elements", t)
	}
	return nil
}

// checkSizes checks sizes the caller gives for the dimensions of a
// builder's result (Constant's and Splat's dims, Broadcast's sizes,
// BroadcastInDim's and Reshape's result dimensions, Rng's dims, Fft's
// lengths; Verify checks broadcast_sizes and fft_length with it too):
// every one must be >= 0. Unlike a type's dimension (checkDims), a size is never
// DynamicDim: -1 is a negative size like any other, as these ops' results
// are static (the dynamic ops, DynamicBroadcastInDim, DynamicIota,
// DynamicReshape ..., take their result type and the sizes as an
// operand). what names a size in the error ("broadcast size").
func checkSizes(what string, sizes []int64) error {
	for _, d := range sizes {
		switch {
		case d == DynamicDim:
			return fmt.Errorf("negative %s %d in %v (DynamicDim marks a type's dynamic dimension; a size is static)", what, d, sizes)
		case d < 0:
			return fmt.Errorf("negative %s %d in %v", what, d, sizes)
		}
	}
	return nil
}

// checkStatic is the error of a result type t that has a dynamic
// dimension, for an op whose result type the caller gives but whose result
// is static (op: iota); its dynamic form (dynamic) takes the sizes as an
// operand.
func checkStatic(t TensorType, op, dynamic string) error {
	for i, d := range t.Dims {
		if d == DynamicDim {
			return fmt.Errorf("%s has a dynamic dimension (axis %d): %s's result is static (%s takes the sizes as an operand)", t, i, op, dynamic)
		}
	}
	return nil
}

// validOpaqueType checks that an OpaqueType's text is one type the parser
// reads back as the same opaque type: not empty or malformed, and not a
// type halo models (TensorType, TokenType ...), which would print and
// parse as that type.
func validOpaqueType(t OpaqueType) (err error) {
	p := newMLIRParser([]byte(t.Text), 0)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(mlirParseFailure)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("opaque type %q does not parse: %s", t.Text, f.err.Msg)
		}
	}()
	if p.atEnd() {
		return fmt.Errorf("opaque type with empty text")
	}
	got := p.parseType()
	if !p.atEnd() {
		return fmt.Errorf("opaque type %q is more than one type", t.Text)
	}
	if o, ok := got.(OpaqueType); !ok || o.Text != strings.TrimSpace(t.Text) {
		return fmt.Errorf("opaque type %q is a type halo models (%T): use that", t.Text, got)
	}
	return nil
}

// deadValue is what a failed op returns: a value of type t (or an invalid
// tensor type) that belongs to no block, so using it is itself an error
// (which the sticky error hides).
func deadValue(t Type) *Value {
	if t == nil {
		t = TensorType{}
	}
	return &Value{Type: t}
}

func deadValues(types []Type) []*Value {
	out := make([]*Value, len(types))
	for i, t := range types {
		out[i] = deadValue(t)
	}
	return out
}

func deadN(n int) []*Value {
	out := make([]*Value, n)
	for i := range out {
		out[i] = deadValue(nil)
	}
	return out
}

func typesEqual(a, b []Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !TypesEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func typeList(ts []Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		if t == nil {
			parts[i] = "nil"
		} else {
			parts[i] = t.String()
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func valueTypes(vs []*Value) []Type {
	ts := make([]Type, len(vs))
	for i, v := range vs {
		ts[i] = v.Type
	}
	return ts
}

func setNamed(list *[]NamedAttr, name string, value Attribute) {
	for i, a := range *list {
		if a.Name == name {
			(*list)[i].Value = value
			return
		}
	}
	*list = append(*list, NamedAttr{Name: name, Value: value})
}

func setDict(d *DictAttr, name string, value Attribute) {
	for i, a := range *d {
		if a.Name == name {
			(*d)[i].Value = value
			return
		}
	}
	*d = append(*d, NamedAttr{Name: name, Value: value})
}

// ---- regions ----

// regionFn is the closure that builds a region's block; it returns the
// values the block's stablehlo.return yields.
type regionFn = func(rb *FuncBuilder, args []*Value) []*Value

// buildRegion builds a one-block region with arguments of argTypes by
// calling fn, and appends its stablehlo.return. It returns the region and
// the returned values, or ok=false after recording an error (with the
// values fn returned, if it ran).
func (fb *FuncBuilder) buildRegion(op string, operands []*Value, what string, argTypes []Type, fn regionFn) (*Region, []*Value, bool) {
	if fn == nil {
		fb.fail(op, operands, "%s closure is nil", what)
		return nil, nil, false
	}
	block := NewBlock(argTypes...)
	if fb.s.b.regionOwner == nil {
		fb.s.b.regionOwner = map[*Block]*Func{}
	}
	fb.s.b.regionOwner[block] = fb.s.fn
	s := &scope{b: fb.s.b, fn: fb.s.fn, top: fb.s.top, block: block, parent: fb.s}
	rb := &FuncBuilder{s: s, loc: fb.loc, hasLoc: fb.hasLoc}
	rets := fn(rb, block.Args)
	s.closed = true
	// On failure after the closure ran, rets is still returned: what it
	// returned tells how many results the op would have had.
	if fb.s.b.err != nil {
		return nil, rets, false
	}
	for i, v := range rets {
		if v == nil {
			fb.fail(op, operands, "%s returned a nil value (#%d)", what, i)
			return nil, rets, false
		}
		if !s.visible(v) {
			fb.fail(op, operands, "%s returned value #%d that %s", what, i, rb.whyInvisible(v))
			return nil, rets, false
		}
	}
	ret := NewOp("stablehlo.return", append([]*Value(nil), rets...), nil)
	ret.Loc = fb.loc
	block.Append(ret)
	return NewRegion(block), rets, true
}

// scalarTypes returns tensor<dtype> for the element type of each value.
func scalarTypes(vs []*Value) []Type {
	ts := make([]Type, len(vs))
	for i, v := range vs {
		t, _ := v.TensorType()
		ts[i] = TensorType{DType: t.DType}
	}
	return ts
}
