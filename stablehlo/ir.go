package stablehlo

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// The IR is generic: every operation, whatever its dialect, is an *Op with a
// name, operands, results, attributes and regions. Ops of other dialects
// (sdy, check, chlo, tt ...) are kept as they were read, so a module that
// holds them still round-trips. The builder, the printer, the parser and
// later transformations all work on these few types.

// Type is the type of a Value: TensorType, TokenType, TupleType,
// or OpaqueType for types of other dialects.
type Type interface {
	String() string
	isType()
}

// DynamicDim marks a dimension whose size is not known statically ("?").
const DynamicDim int64 = -1

// TensorType is a ranked tensor: an element type and dimensions.
type TensorType struct {
	DType xla.DType
	Dims  []int64
}

// Tensor returns the tensor type with the given element type and dimensions.
func Tensor(dtype xla.DType, dims ...int64) TensorType {
	return TensorType{DType: dtype, Dims: append([]int64(nil), dims...)}
}

// Scalar returns the rank-0 tensor type of dtype.
func Scalar(dtype xla.DType) TensorType { return TensorType{DType: dtype} }

// TensorOf returns the tensor type of an xla.Shape.
func TensorOf(s xla.Shape) TensorType { return Tensor(s.DType, s.Dims...) }

// Shape returns t as an xla.Shape.
func (t TensorType) Shape() xla.Shape { return xla.MakeShape(t.DType, t.Dims...) }

// Rank is the number of dimensions.
func (t TensorType) Rank() int { return len(t.Dims) }

// Size is the number of elements, or -1 when a dimension is dynamic or
// there are more than an int64 counts.
func (t TensorType) Size() int64 {
	for _, d := range t.Dims {
		if d < 0 {
			return -1
		}
	}
	if slices.Contains(t.Dims, 0) {
		return 0 // however large the other dims
	}
	n := int64(1)
	for _, d := range t.Dims {
		if n > math.MaxInt64/d {
			return -1 // more elements than an int64 counts
		}
		n *= d
	}
	return n
}

// String prints t as MLIR does: "tensor<2x?xf32>".
func (t TensorType) String() string {
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range t.Dims {
		if d == DynamicDim {
			b.WriteByte('?')
		} else {
			fmt.Fprintf(&b, "%d", d)
		}
		b.WriteByte('x')
	}
	b.WriteString(t.DType.String())
	b.WriteByte('>')
	return b.String()
}

func (TensorType) isType() {}

// TokenType is !stablehlo.token, the type of side-effect ordering tokens.
type TokenType struct{}

// String returns "!stablehlo.token".
func (TokenType) String() string { return "!stablehlo.token" }
func (TokenType) isType()        {}

// TupleType is tuple<...>.
type TupleType struct{ Elems []Type }

// String prints the tuple type, e.g. "tuple<tensor<f32>, !stablehlo.token>".
func (t TupleType) String() string {
	parts := make([]string, len(t.Elems))
	for i, e := range t.Elems {
		parts[i] = "<nil>" // a hand-built tuple's missing element
		if e != nil {
			parts[i] = e.String()
		}
	}
	return "tuple<" + strings.Join(parts, ", ") + ">"
}
func (TupleType) isType() {}

// OpaqueType is a type halo does not model (another dialect's, such as
// "!tt.ptr<f32>" or "index"), kept as its text.
type OpaqueType struct{ Text string }

// String returns the type's text.
func (t OpaqueType) String() string { return t.Text }
func (OpaqueType) isType()          {}

// TypesEqual reports whether a and b are the same type.
func TypesEqual(a, b Type) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch a := a.(type) {
	case TensorType:
		b, ok := b.(TensorType)
		if !ok || a.DType != b.DType || len(a.Dims) != len(b.Dims) {
			return false
		}
		for i := range a.Dims {
			if a.Dims[i] != b.Dims[i] {
				return false
			}
		}
		return true
	case TupleType:
		b, ok := b.(TupleType)
		if !ok || len(a.Elems) != len(b.Elems) {
			return false
		}
		for i := range a.Elems {
			if !TypesEqual(a.Elems[i], b.Elems[i]) {
				return false
			}
		}
		return true
	default:
		return a.String() == b.String()
	}
}

// Value is an SSA value: the result of an Op or an argument of a Block.
type Value struct {
	Type  Type
	op    *Op    // defining op, nil for a block argument
	block *Block // owning block for a block argument
	index int    // result index or argument index
}

// Op returns the operation that defines v, or nil when v is a block argument.
func (v *Value) Op() *Op { return v.op }

// Block returns the block whose argument v is, or nil when v is an op result.
func (v *Value) Block() *Block { return v.block }

// Index is v's position among its op's results or its block's arguments.
func (v *Value) Index() int { return v.index }

// TensorType returns v's type as a TensorType; ok is false for other types.
func (v *Value) TensorType() (t TensorType, ok bool) {
	t, ok = v.Type.(TensorType)
	return t, ok
}

// Location is where an op came from: loc("name"), loc("file":line:col),
// or both (loc("name"("file":line:col))). Forms halo does not model (fused,
// callsite) are kept verbatim in Text, the content between "loc(" and ")".
type Location struct {
	Name string
	File string
	Line int
	Col  int
	Text string
}

// Where is l's name and position for messages: its own fields, or, for a
// location kept as text (a call-site chain, as JAX writes them), the
// leading name and the first "file":line:col in it (the innermost frame).
func (l Location) Where() (name, file string, line, col int) {
	if l.Text == "" {
		return l.Name, l.File, l.Line, l.Col
	}
	return locParts([]byte(l.Text))
}

// IsUnknown reports whether l carries no information.
func (l Location) IsUnknown() bool { return l == Location{} }

// Op is one operation. Name is the full dialect-qualified name
// ("stablehlo.add", "func.return", "sdy.mesh").
type Op struct {
	Name     string
	Operands []*Value
	Results  []*Value
	Attrs    []NamedAttr
	Regions  []*Region
	Loc      Location
	// Line is the 1-based line the op starts on in the MLIR text it was
	// parsed from (0 for an op built in Go), for messages.
	Line   int
	parent *Block
}

// Parent returns the block that holds op, or nil.
func (op *Op) Parent() *Block { return op.parent }

// Attr returns the attribute named name, or nil.
func (op *Op) Attr(name string) Attribute {
	for _, a := range op.Attrs {
		if a.Name == name {
			return a.Value
		}
	}
	return nil
}

// SetAttr sets (or replaces) the attribute named name.
func (op *Op) SetAttr(name string, value Attribute) {
	for i, a := range op.Attrs {
		if a.Name == name {
			op.Attrs[i].Value = value
			return
		}
	}
	op.Attrs = append(op.Attrs, NamedAttr{Name: name, Value: value})
}

// NewOp returns a detached op with fresh results of the given types.
func NewOp(name string, operands []*Value, resultTypes []Type, attrs ...NamedAttr) *Op {
	op := &Op{Name: name, Operands: operands, Attrs: attrs}
	op.Results = make([]*Value, len(resultTypes))
	for i, t := range resultTypes {
		op.Results[i] = &Value{Type: t, op: op, index: i}
	}
	return op
}

// Result returns result i.
func (op *Op) Result(i int) *Value { return op.Results[i] }

// Callee is the name of the function op runs: a func.call's callee, a
// stablehlo.composite's decomposition; "" for other ops, or when the
// attribute is not a symbol.
func (op *Op) Callee() string {
	attr := "callee"
	switch op.Name {
	case "func.call":
	case "stablehlo.composite":
		attr = "decomposition"
	default:
		return ""
	}
	c, _ := op.Attr(attr).(SymbolRefAttr)
	return string(c)
}

// Block is a list of ops with arguments. The last op of a block in a region
// is its terminator (stablehlo.return, func.return ...).
type Block struct {
	Args   []*Value
	Ops    []*Op
	parent *Region
}

// NewBlock returns a block with arguments of the given types.
func NewBlock(argTypes ...Type) *Block {
	b := &Block{}
	for _, t := range argTypes {
		b.AddArg(t)
	}
	return b
}

// AddArg appends an argument of type t and returns it.
func (b *Block) AddArg(t Type) *Value {
	v := &Value{Type: t, block: b, index: len(b.Args)}
	b.Args = append(b.Args, v)
	return v
}

// Parent returns the region that holds b, or nil.
func (b *Block) Parent() *Region { return b.parent }

// Append adds op at the end of b.
func (b *Block) Append(op *Op) {
	op.parent = b
	b.Ops = append(b.Ops, op)
}

// InsertBefore inserts op into b just before the op before (which must be in b).
func (b *Block) InsertBefore(before, op *Op) error {
	for i, o := range b.Ops {
		if o == before {
			op.parent = b
			b.Ops = append(b.Ops, nil)
			copy(b.Ops[i+1:], b.Ops[i:])
			b.Ops[i] = op
			return nil
		}
	}
	return fmt.Errorf("stablehlo: InsertBefore: %s is not in this block", before.Name)
}

// Remove removes op from b. It does not check that op's results are unused.
func (b *Block) Remove(op *Op) {
	for i, o := range b.Ops {
		if o == op {
			b.Ops = append(b.Ops[:i], b.Ops[i+1:]...)
			op.parent = nil
			return
		}
	}
}

// Terminator returns the last op of b, or nil if b is empty.
func (b *Block) Terminator() *Op {
	if len(b.Ops) == 0 {
		return nil
	}
	return b.Ops[len(b.Ops)-1]
}

// Region is a list of blocks owned by an op (a reduce body, a while
// condition, a function body).
type Region struct {
	Blocks []*Block
	parent *Op
}

// NewRegion returns a region holding the given blocks.
func NewRegion(blocks ...*Block) *Region {
	r := &Region{}
	for _, b := range blocks {
		r.AddBlock(b)
	}
	return r
}

// AddBlock appends b to r.
func (r *Region) AddBlock(b *Block) {
	b.parent = r
	r.Blocks = append(r.Blocks, b)
}

// Parent returns the op that owns r (nil for a function body).
func (r *Region) Parent() *Op { return r.parent }

// AddRegion appends r to op's regions.
func (op *Op) AddRegion(r *Region) {
	r.parent = op
	op.Regions = append(op.Regions, r)
}

// Func is a func.func: a named function with a body region whose entry
// block's arguments are the function's arguments.
type Func struct {
	Name        string
	Private     bool        // sym_visibility = "private"
	ArgAttrs    []DictAttr  // per argument, nil entries allowed
	ResultTypes []Type      // the function type's results
	ResultAttrs []DictAttr  // per result, nil entries allowed
	Attrs       []NamedAttr // other attributes of the func op
	Body        *Region     // nil for a declaration
	Loc         Location
	// Line is the function's line in the text it was parsed from (0 for
	// a function built in Go), as Op.Line.
	Line   int
	module *Module
}

// Args returns the entry block's arguments.
func (f *Func) Args() []*Value {
	if f.Body == nil || len(f.Body.Blocks) == 0 {
		return nil
	}
	return f.Body.Blocks[0].Args
}

// ArgTypes returns the types of the function's arguments.
func (f *Func) ArgTypes() []Type {
	args := f.Args()
	ts := make([]Type, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	return ts
}

// signature returns f's argument and result types: those of its entry
// block and ResultTypes, or for a declaration (no body) those of its
// function_type attribute (ok is false when it has none).
func (f *Func) signature() (params, results []Type, ok bool) {
	if f.Body != nil && len(f.Body.Blocks) > 0 {
		return f.ArgTypes(), f.ResultTypes, true
	}
	for _, a := range f.Attrs {
		if ta, isType := a.Value.(TypeAttr); isType && a.Name == "function_type" {
			if ft, isFn := ta.Type.(FunctionType); isFn {
				return ft.Inputs, ft.Results, true
			}
		}
	}
	return nil, f.ResultTypes, false
}

// Module returns the module that holds f, or nil.
func (f *Func) Module() *Module { return f.module }

// Module is a builtin.module: module attributes, top-level ops of other
// dialects (kept in order), and functions.
type Module struct {
	Name    string      // sym_name, "" when unnamed
	Attrs   []NamedAttr // e.g. mhlo.num_partitions
	Globals []*Op       // non-function top-level ops, e.g. sdy.mesh
	Funcs   []*Func
	Loc     Location
}

// AddFunc appends f to m (a nil f too, which Verify reports; on a nil m
// it does nothing: there is no module to add to).
func (m *Module) AddFunc(f *Func) {
	if m == nil {
		return
	}
	if f != nil {
		f.module = m
	}
	m.Funcs = append(m.Funcs, f)
}

// Func returns the function named name, or nil (also for a nil m).
func (m *Module) Func(name string) *Func {
	if m == nil {
		return nil
	}
	for _, f := range m.Funcs {
		if f != nil && f.Name == name {
			return f
		}
	}
	return nil
}

// EntryName is the name of the function a runtime runs when none is
// named: "main", or the only public function with a body when there is no
// @main (otherwise "main", which then names nothing).
func (m *Module) EntryName() string {
	if m == nil || m.Func("main") != nil {
		return "main"
	}
	name, n := "main", 0
	for _, f := range m.Funcs {
		if f != nil && !f.Private && f.Body != nil {
			name, n = f.Name, n+1
		}
	}
	if n != 1 {
		return "main"
	}
	return name
}

// Attr returns the module attribute named name, or nil (also for a nil m).
func (m *Module) Attr(name string) Attribute {
	if m == nil {
		return nil
	}
	for _, a := range m.Attrs {
		if a.Name == name {
			return a.Value
		}
	}
	return nil
}

// SetAttr sets (or replaces) the module attribute named name (on a nil m
// it does nothing: there is no module to set it on).
func (m *Module) SetAttr(name string, value Attribute) {
	if m == nil {
		return
	}
	for i, a := range m.Attrs {
		if a.Name == name {
			m.Attrs[i].Value = value
			return
		}
	}
	m.Attrs = append(m.Attrs, NamedAttr{Name: name, Value: value})
}
