package stablehlo

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// IR utilities for transformations: walking, finding users, replacing
// uses, cloning, erasing, and verifying.

// Walk calls fn for every op of m's functions and of the regions nested in
// them, in program order (an op before the ops of its regions). When fn
// returns false, the op's regions are skipped. Module globals are not
// visited; a nil m has no ops.
func (m *Module) Walk(fn func(op *Op) bool) {
	if m == nil {
		return
	}
	for _, f := range m.Funcs {
		f.Walk(fn)
	}
}

// Walk calls fn for every op of f's body and nested regions (see Module.Walk).
func (f *Func) Walk(fn func(op *Op) bool) {
	if f != nil && f.Body != nil {
		f.Body.Walk(fn)
	}
}

// Walk calls fn for every op of r's blocks and nested regions.
func (r *Region) Walk(fn func(op *Op) bool) {
	if r == nil {
		return // hand-built IR may hold nil parts: Verify reports them
	}
	for _, b := range r.Blocks {
		b.Walk(fn)
	}
}

// Walk calls fn for every op of b and of the regions nested in its ops.
func (b *Block) Walk(fn func(op *Op) bool) {
	if b == nil {
		return
	}
	for _, op := range b.Ops {
		op.Walk(fn)
	}
}

// Walk calls fn for op and then, unless fn returns false, for the ops of
// its regions.
func (op *Op) Walk(fn func(op *Op) bool) {
	if op == nil || !fn(op) {
		return
	}
	for _, r := range op.Regions {
		r.Walk(fn)
	}
}

// CallCycle returns a call cycle among m's functions reachable from the
// function named root (from any function when root is ""): the names
// from a function of the cycle back to it, as [a b a]; nil when there is
// none. Calls are the ops with a Callee (func.call, a composite's
// decomposition), in any region. StableHLO programs cannot recurse: XLA
// rejects call cycles. A nil m has none.
func (m *Module) CallCycle(root string) []string {
	if m == nil {
		return nil
	}
	funcs := make(map[string]*Func, len(m.Funcs))
	for _, f := range m.Funcs {
		if f != nil {
			funcs[f.Name] = f
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[*Func]int, len(funcs))
	var path []string
	var cycle []string
	var visit func(f *Func) bool
	visit = func(f *Func) bool {
		state[f] = onPath
		path = append(path, f.Name)
		found := false
		f.Walk(func(op *Op) bool {
			c := funcs[op.Callee()]
			switch {
			case found || c == nil:
			case state[c] == onPath:
				i := slices.Index(path, c.Name)
				cycle = append(slices.Clone(path[i:]), c.Name)
				found = true
			case state[c] == unseen:
				found = visit(c)
			}
			return !found
		})
		path = path[:len(path)-1]
		state[f] = done
		return found
	}
	for _, f := range m.Funcs {
		if f != nil && (root == "" || f.Name == root) && state[f] == unseen && visit(f) {
			break
		}
	}
	return cycle
}

// Use is one use of a value: operand Index of Op.
type Use struct {
	Op    *Op
	Index int
}

// definingBlock returns the block where v is defined.
func definingBlock(v *Value) *Block {
	if v.op != nil {
		return v.op.parent
	}
	return v.block
}

// Users returns the uses of v in program order. Only the block that
// defines v and the regions nested in it can use v, so only those are
// searched.
func Users(v *Value) []Use {
	if v == nil {
		return nil
	}
	b := definingBlock(v)
	if b == nil {
		return nil
	}
	var uses []Use
	b.Walk(func(op *Op) bool {
		for i, o := range op.Operands {
			if o == v {
				uses = append(uses, Use{Op: op, Index: i})
			}
		}
		return true
	})
	return uses
}

// UseMap returns the uses of every value used in r (one walk, for passes
// that look up many values).
func UseMap(r *Region) map[*Value][]Use {
	uses := map[*Value][]Use{}
	r.Walk(func(op *Op) bool {
		for i, o := range op.Operands {
			uses[o] = append(uses[o], Use{Op: op, Index: i})
		}
		return true
	})
	return uses
}

// HasUsers reports whether v is used.
func HasUsers(v *Value) bool {
	if v == nil {
		return false
	}
	b := definingBlock(v)
	if b == nil {
		return false
	}
	found := false
	b.Walk(func(op *Op) bool {
		if found {
			return false
		}
		if slices.Contains(op.Operands, v) {
			found = true
			return false
		}
		return true
	})
	return found
}

// ReplaceAllUsesWith makes every use of old use replacement instead and
// returns how many uses changed. It does not check types (Verify does).
func ReplaceAllUsesWith(old, replacement *Value) int {
	if old == nil || old == replacement {
		return 0
	}
	b := definingBlock(old)
	if b == nil {
		return 0
	}
	n := 0
	b.Walk(func(op *Op) bool {
		for i, o := range op.Operands {
			if o == old {
				op.Operands[i] = replacement
				n++
			}
		}
		return true
	})
	return n
}

// ReplaceUsesIf replaces the uses of old for which replace returns true and
// returns how many it replaced.
func ReplaceUsesIf(old, replacement *Value, replace func(u Use) bool) int {
	n := 0
	for _, u := range Users(old) {
		if replace(u) {
			u.Op.Operands[u.Index] = replacement
			n++
		}
	}
	return n
}

// InsertAfter inserts op into b just after the op after (which must be in b).
func (b *Block) InsertAfter(after, op *Op) error {
	i := slices.Index(b.Ops, after)
	if i < 0 {
		return fmt.Errorf("stablehlo: InsertAfter: %s is not in this block", after.Name)
	}
	op.parent = b
	b.Ops = slices.Insert(b.Ops, i+1, op)
	return nil
}

// Erase removes op from its block; its results must be unused.
func (op *Op) Erase() error {
	for _, r := range op.Results {
		if HasUsers(r) {
			return fmt.Errorf("stablehlo: Erase: result %d of %s is still used", r.index, op.Name)
		}
	}
	if op.parent != nil {
		op.parent.Remove(op)
	}
	return nil
}

// CloneOp returns a deep copy of op (regions included) whose operands are
// remapped through mapping (operands not in it are kept). The results of
// the copy and of every op inside its regions are added to mapping.
func CloneOp(op *Op, mapping map[*Value]*Value) *Op {
	c := &Op{Name: op.Name, Attrs: slices.Clone(op.Attrs), Loc: op.Loc}
	c.Operands = make([]*Value, len(op.Operands))
	for i, v := range op.Operands {
		if m, ok := mapping[v]; ok {
			c.Operands[i] = m
		} else {
			c.Operands[i] = v
		}
	}
	c.Results = make([]*Value, len(op.Results))
	for i, r := range op.Results {
		nr := &Value{Type: r.Type, op: c, index: i}
		c.Results[i] = nr
		mapping[r] = nr
	}
	for _, r := range op.Regions {
		c.AddRegion(CloneRegion(r, mapping))
	}
	return c
}

// CloneRegion returns a deep copy of r, remapping values through mapping
// (block arguments and op results of the copy are added to it).
func CloneRegion(r *Region, mapping map[*Value]*Value) *Region {
	nr := &Region{}
	for _, b := range r.Blocks {
		nb := &Block{}
		for _, a := range b.Args {
			mapping[a] = nb.AddArg(a.Type)
		}
		nr.AddBlock(nb)
	}
	for i, b := range r.Blocks {
		nb := nr.Blocks[i]
		nb.Ops = make([]*Op, 0, len(b.Ops))
		for _, op := range b.Ops {
			c := CloneOp(op, mapping)
			c.parent = nb
			nb.Ops = append(nb.Ops, c)
		}
	}
	return nr
}

// CloneFunc returns a deep copy of f named newName, not added to any
// module (use Module.AddFunc).
func CloneFunc(f *Func, newName string) *Func {
	c := &Func{
		Name:        newName,
		Private:     f.Private,
		ArgAttrs:    slices.Clone(f.ArgAttrs),
		ResultTypes: slices.Clone(f.ResultTypes),
		ResultAttrs: slices.Clone(f.ResultAttrs),
		Attrs:       slices.Clone(f.Attrs),
		Loc:         f.Loc,
	}
	if f.Body != nil {
		c.Body = CloneRegion(f.Body, map[*Value]*Value{})
	}
	return c
}

// ---- verification ----

// errNilModuleVerify is Verify's error for a nil module (as Print's).
var errNilModuleVerify = errors.New("stablehlo: Verify: nil module")

// Verify checks m: every function's body is well formed (operands defined
// before use and visible, terminators present and of the right types,
// func.call targets present with matching types), every op in the op
// table has its operand count, regions (of exactly one block each, for
// StableHLO ops) and required attributes (of the kinds, integer widths
// and enum dialects the table gives), and ops whose result types can be
// inferred (InferResultTypes) have those types. A nil m is an error.
func (m *Module) Verify() error {
	if m == nil {
		return errNilModuleVerify
	}
	names := map[string]*Func{}
	for i, f := range m.Funcs {
		if f == nil {
			return fmt.Errorf("stablehlo: function %d is nil", i)
		}
		if names[f.Name] != nil {
			return fmt.Errorf("stablehlo: duplicate function @%s", f.Name)
		}
		names[f.Name] = f
	}
	for _, f := range m.Funcs {
		if err := f.verify(names); err != nil {
			return err
		}
	}
	return nil
}

// Verify checks f alone (calls are checked against f's module when it has
// one).
func (f *Func) Verify() error {
	var names map[string]*Func
	if f.module != nil {
		names = map[string]*Func{}
		for _, g := range f.module.Funcs {
			names[g.Name] = g
		}
	}
	return f.verify(names)
}

type verifier struct {
	fn      *Func
	funcs   map[string]*Func
	defined map[*Value]bool
}

func (f *Func) verify(funcs map[string]*Func) error {
	if f.Body == nil {
		return nil
	}
	if len(f.Body.Blocks) != 1 {
		return fmt.Errorf("stablehlo: @%s: body must have one block, has %d", f.Name, len(f.Body.Blocks))
	}
	v := &verifier{fn: f, funcs: funcs, defined: map[*Value]bool{}}
	b := f.Body.Blocks[0]
	if err := v.block(b, "func.return"); err != nil {
		return fmt.Errorf("stablehlo: @%s: %w", f.Name, err)
	}
	ret := b.Terminator()
	if !typesEqual(valueTypes(ret.Operands), f.ResultTypes) {
		return fmt.Errorf("stablehlo: @%s: returns %s, declared %s", f.Name, typeList(valueTypes(ret.Operands)), typeList(f.ResultTypes))
	}
	return nil
}

func (v *verifier) block(b *Block, terminator string) error {
	if b == nil {
		return fmt.Errorf("nil block")
	}
	var added []*Value
	for _, a := range b.Args {
		v.defined[a] = true
		added = append(added, a)
	}
	defer func() {
		for _, a := range added {
			delete(v.defined, a)
		}
	}()
	if len(b.Ops) == 0 {
		return fmt.Errorf("empty block: missing %s", terminator)
	}
	for i, op := range b.Ops {
		if op == nil {
			return fmt.Errorf("op %d of the block is nil", i)
		}
		if op.parent != b {
			return fmt.Errorf("%s: parent pointer does not point to its block", op.Name)
		}
		for j, o := range op.Operands {
			if o == nil {
				return fmt.Errorf("%s: operand %d is nil", op.Name, j)
			}
			if !v.defined[o] {
				return fmt.Errorf("%s: operand %d (%s) is not defined before this use or not visible here", opAt(op), j, o.Type)
			}
		}
		isLast := i == len(b.Ops)-1
		if isLast && op.Name != terminator {
			return fmt.Errorf("block must end with %s, ends with %s", terminator, op.Name)
		}
		if !isLast && (op.Name == terminator || mlirTerminators[op.Name]) {
			return fmt.Errorf("%s before the end of a block", op.Name)
		}
		if err := CheckOp(op); err != nil {
			return err
		}
		if op.Name == "func.call" {
			if err := v.call(op); err != nil {
				return err
			}
		}
		isHLO := strings.HasPrefix(op.Name, "stablehlo.")
		for ri, r := range op.Regions {
			if r == nil {
				return fmt.Errorf("%s: region %d is nil", op.Name, ri)
			}
			if isHLO && len(r.Blocks) != 1 {
				// Every StableHLO region is a SizedRegion<1>; other
				// dialects' ops may branch between blocks.
				return fmt.Errorf("%s: region %s has %d blocks, want exactly 1", opAt(op), regionName(op, ri), len(r.Blocks))
			}
			for _, rb := range r.Blocks {
				term := "stablehlo.return"
				if !isHLO && rb != nil {
					term = "" // other dialects: any terminator
					if t := rb.Terminator(); t != nil {
						term = t.Name
					}
				}
				if err := v.block(rb, term); err != nil {
					return fmt.Errorf("in a region of %s: %w", opAt(op), err)
				}
			}
		}
		for _, r := range op.Results {
			if r.op != op {
				return fmt.Errorf("%s: result does not point to its op", op.Name)
			}
			v.defined[r] = true
			added = append(added, r)
		}
	}
	return nil
}

// CheckRegionTypes checks what the regions of if, case and while return
// (and take) against the op's types, a dynamic dimension matching any
// size: a branch returning another type than the op's result would hand
// its value on under the wrong type. The operand that picks an if's or a
// case's branch must be the scalar the builder asks for (see
// checkBranchSelector). Other ops pass.
func CheckRegionTypes(op *Op) error {
	// What the region's entry block returns (what a runtime that runs
	// that block hands on).
	returns := func(r *Region) []Type {
		if r == nil || len(r.Blocks) == 0 || r.Blocks[0] == nil {
			return nil
		}
		if t := r.Blocks[0].Terminator(); t != nil && (t.Name == "stablehlo.return" || t.Name == "func.return") && !slices.Contains(t.Operands, nil) {
			return valueTypes(t.Operands)
		}
		return nil
	}
	results := valueTypes(op.Results)
	switch op.Name {
	case "stablehlo.if", "stablehlo.case":
		if err := checkBranchSelector(op); err != nil {
			return err
		}
		for i, r := range op.Regions {
			if got := returns(r); got != nil && !slices.EqualFunc(got, results, TypesCompatible) {
				return fmt.Errorf("branch %d returns %s, the op's results are %s", i, typeList(got), typeList(results))
			}
		}
	case "stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.scatter":
		// The body combines N accumulators with N values of the same
		// scalar types (the inputs' element types or promotions of them,
		// which InferResultTypes checks) and returns N of them.
		n := len(op.Results)
		if len(op.Regions) != 1 || n == 0 {
			return nil
		}
		args := regionArgs(op.Regions[0])
		if args == nil || slices.ContainsFunc(args, func(t Type) bool { return scalarOf(t) == nil }) {
			return nil // no entry block, or types this package keeps as text (quantized)
		}
		if len(args) != 2*n || !allScalars(args) || !slices.EqualFunc(args[:n], args[n:], TypesEqual) {
			return fmt.Errorf("the body takes %s, want %d scalars twice over (one per result)", typeList(args), n)
		}
		if got := returns(op.Regions[0]); got != nil && !slices.EqualFunc(got, args[:n], TypesEqual) {
			return fmt.Errorf("the body returns %s, want %s", typeList(got), typeList(args[:n]))
		}
	case "stablehlo.sort":
		if len(op.Regions) != 1 {
			return nil
		}
		var want []Type
		for _, t := range valueTypes(op.Operands) {
			s := scalarOf(t)
			want = append(want, s, s)
		}
		if err := checkRegionSig(op.Regions[0], "the comparator", want, []Type{Scalar(xla.Bool)}, returns); err != nil {
			return err
		}
	case "stablehlo.map":
		if len(op.Regions) != 1 || len(op.Results) != 1 {
			return nil
		}
		var want []Type
		for _, t := range valueTypes(op.Operands) {
			want = append(want, scalarOf(t))
		}
		if err := checkRegionSig(op.Regions[0], "the computation", want, []Type{scalarOf(op.Results[0].Type)}, returns); err != nil {
			return err
		}
	case "stablehlo.select_and_scatter":
		if len(op.Regions) != 2 || len(op.Operands) != 3 {
			return nil
		}
		e := scalarOf(op.Operands[0].Type)
		if err := checkRegionSig(op.Regions[0], "select", []Type{e, e}, []Type{Scalar(xla.Bool)}, returns); err != nil {
			return err
		}
		// The scatter body may work in a promotion of the operand's type
		// (InferResultTypes checks which): its own.
		if args := regionArgs(op.Regions[1]); len(args) > 0 && scalarOf(args[0]) != nil {
			e = args[0]
		}
		if err := checkRegionSig(op.Regions[1], "scatter", []Type{e, e}, []Type{e}, returns); err != nil {
			return err
		}
	case "stablehlo.while":
		if len(op.Regions) != 2 {
			return nil // checkOpSpec reports it
		}
		operands := valueTypes(op.Operands)
		for i, r := range op.Regions {
			if r != nil && len(r.Blocks) > 0 && r.Blocks[0] != nil {
				if args := valueTypes(r.Blocks[0].Args); !slices.EqualFunc(args, operands, TypesCompatible) {
					return fmt.Errorf("region %d takes %s, the operands are %s", i, typeList(args), typeList(operands))
				}
			}
		}
		if got := returns(op.Regions[0]); got != nil && !slices.EqualFunc(got, []Type{Tensor(xla.Bool)}, TypesCompatible) {
			return fmt.Errorf("the condition returns %s, want tensor<i1>", typeList(got))
		}
		if got := returns(op.Regions[1]); got != nil && !slices.EqualFunc(got, operands, TypesCompatible) {
			return fmt.Errorf("the body returns %s, the operands are %s", typeList(got), typeList(operands))
		}
		if !slices.EqualFunc(results, operands, TypesCompatible) {
			return fmt.Errorf("results %s, operands %s", typeList(results), typeList(operands))
		}
	}
	return nil
}

// regionArgs are the types of r's entry block arguments (nil when r has
// no entry block).
func regionArgs(r *Region) []Type {
	if r == nil || len(r.Blocks) == 0 || r.Blocks[0] == nil || slices.Contains(r.Blocks[0].Args, nil) {
		return nil
	}
	return valueTypes(r.Blocks[0].Args)
}

// checkRegionSig checks that r's entry block takes args and returns rets
// (what returns reads from its terminator; nil: not checked here). A nil
// entry in args or rets (a type scalarOf does not know) skips the check.
func checkRegionSig(r *Region, what string, args, rets []Type, returns func(*Region) []Type) error {
	if hasNil(args) || hasNil(rets) {
		return nil
	}
	if got := regionArgs(r); got != nil && !slices.EqualFunc(got, args, TypesEqual) {
		return fmt.Errorf("%s takes %s, want %s", what, typeList(got), typeList(args))
	}
	if got := returns(r); got != nil && !slices.EqualFunc(got, rets, TypesEqual) {
		return fmt.Errorf("%s returns %s, want %s", what, typeList(got), typeList(rets))
	}
	return nil
}

// scalarOf is the rank-0 tensor of t's element type (nil when t is not a
// TensorType: a quantized tensor this package keeps as text).
func scalarOf(t Type) Type {
	if tt, ok := t.(TensorType); ok {
		return TensorType{DType: tt.DType}
	}
	return nil
}

func hasNil(ts []Type) bool {
	for _, t := range ts {
		if t == nil {
			return true
		}
	}
	return false
}

func allScalars(ts []Type) bool {
	for _, t := range ts {
		if tt, ok := t.(TensorType); !ok || tt.Rank() != 0 {
			return false
		}
	}
	return true
}

func (v *verifier) call(op *Op) error {
	callee, _ := op.Attr("callee").(SymbolRefAttr)
	if v.funcs == nil {
		return nil
	}
	f := v.funcs[string(callee)]
	if f == nil {
		return fmt.Errorf("func.call: no function @%s", callee)
	}
	params, results, ok := f.signature()
	if !ok {
		return nil // a declaration without function_type: nothing to check against
	}
	if !typesEqual(valueTypes(op.Operands), params) {
		return fmt.Errorf("func.call @%s: arguments %s, function takes %s", callee, typeList(valueTypes(op.Operands)), typeList(params))
	}
	if !typesEqual(valueTypes(op.Results), results) {
		return fmt.Errorf("func.call @%s: results %s, function returns %s", callee, typeList(valueTypes(op.Results)), typeList(results))
	}
	return nil
}

// opAt names op for messages: its name and, for a parsed op, its line.
func opAt(op *Op) string { return op.Name + lineOf(op) }

// lineOf is " (line N)" for an op parsed from text, "" for one built in Go.
func lineOf(op *Op) string {
	if op.Line <= 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", op.Line)
}

// CheckOp checks op by itself, as Verify checks each op it walks: its
// operand, result and region counts and required attributes (the op
// table), its operands and result types (CheckResultTypes) and what its
// regions take and return (CheckRegionTypes). Where its operands come
// from, and the ops in its regions, are not checked. The error names the
// op (and its line, for a parsed op).
func CheckOp(op *Op) error {
	for i, o := range op.Operands {
		if o == nil {
			return fmt.Errorf("%s: operand %d is nil", opAt(op), i)
		}
	}
	for i, r := range op.Results {
		if r == nil {
			return fmt.Errorf("%s: result %d is nil", opAt(op), i)
		}
	}
	if err := checkOpSpec(op); err != nil {
		return fmt.Errorf("%s: %w", opAt(op), err)
	}
	if _, err := CheckResultTypes(op); err != nil {
		return fmt.Errorf("%s%s%s: %w", op.Name, typeList(valueTypes(op.Operands)), lineOf(op), err)
	}
	if err := CheckRegionTypes(op); err != nil {
		return fmt.Errorf("%s: %w", opAt(op), err)
	}
	return nil
}

// CheckResultTypes checks op's result types against those its operands
// and attributes give (InferResultTypes; a dynamic dimension matches any
// size), or, for an op whose result shape is its own (broadcast_in_dim,
// reshape, convert, iota), that its operand can become that result. known
// is false for an op it does not know, which it then does not check.
func CheckResultTypes(op *Op) (known bool, err error) {
	if givenResultShape[op.Name] {
		return checkGivenResult(op)
	}
	types, known, err := InferResultTypes(op)
	if !known || err != nil {
		return known, err
	}
	if len(types) != len(op.Results) {
		return true, fmt.Errorf("has %d results, want %d", len(op.Results), len(types))
	}
	for i, t := range types {
		if !TypesCompatible(t, op.Results[i].Type) {
			return true, fmt.Errorf("result %d is %s, want %s", i, op.Results[i].Type, t)
		}
	}
	return true, nil
}

// givenResultShape names the ops whose result shape is not a function of
// their operands and attributes but part of the op, as its result type.
var givenResultShape = map[string]bool{
	"stablehlo.broadcast_in_dim": true, "stablehlo.reshape": true,
	"stablehlo.convert": true, "stablehlo.iota": true,
}

// checkGivenResult checks an op of givenResultShape: one static tensor
// result that its operand (none for iota) can become. Types it does not
// model (quantized, bounded: OpaqueType) leave the op unchecked.
func checkGivenResult(op *Op) (known bool, err error) {
	if len(op.Results) != 1 {
		return true, fmt.Errorf("has %d results, want 1", len(op.Results))
	}
	rt, ok := op.Results[0].Type.(TensorType)
	if !ok || rt.Size() < 0 {
		// A dynamic result, or a type this package keeps as text (quantized
		// or bounded element types): not checked here.
		return false, nil
	}
	if op.Name == "stablehlo.iota" {
		if len(op.Operands) != 0 {
			return true, fmt.Errorf("has %d operands, want none", len(op.Operands))
		}
		d, ok := op.Attr("iota_dimension").(IntAttr)
		if !ok {
			return true, fmt.Errorf("iota_dimension must be an integer")
		}
		return true, inferIota(rt, d.Value)
	}
	if len(op.Operands) != 1 || op.Operands[0] == nil {
		return true, fmt.Errorf("has %d operands, want 1", len(op.Operands))
	}
	t, ok := op.Operands[0].Type.(TensorType)
	if !ok || t.Size() < 0 {
		return false, nil
	}
	if op.Name == "stablehlo.convert" {
		if !sameDims(t.Dims, rt.Dims) {
			return true, fmt.Errorf("converts %s to %s: the shapes differ", t, rt)
		}
		return true, nil
	}
	if t.DType != rt.DType {
		return true, fmt.Errorf("operand is %s, the result %s: the element types differ", t, rt)
	}
	if op.Name == "stablehlo.reshape" {
		return true, inferReshape(t, rt.Dims)
	}
	bdims, ok := op.Attr("broadcast_dimensions").(DenseArrayAttr)
	if !ok {
		return true, fmt.Errorf("broadcast_dimensions must be an i64 array")
	}
	return true, inferBroadcastInDim(t, rt.Dims, bdims.Values)
}

// TypesCompatible is TypesEqual where a dynamic dimension matches any size.
func TypesCompatible(a, b Type) bool {
	at, ok1 := a.(TensorType)
	bt, ok2 := b.(TensorType)
	if ok1 && ok2 {
		return at.DType == bt.DType && sameDims(at.Dims, bt.Dims)
	}
	return TypesEqual(a, b)
}

// checkOpSpec checks op against the op table: operand and result counts,
// region count, required attributes and the kinds of inherent attributes.
// Ops not in the table pass.
func checkOpSpec(op *Op) error {
	spec := opSpecs[op.Name]
	if spec == nil {
		return nil
	}
	if err := checkCount("operands", len(op.Operands), spec.operands); err != nil {
		return err
	}
	if op.Results != nil || len(spec.results) > 0 {
		if err := checkCount("results", len(op.Results), spec.results); err != nil {
			return err
		}
	}
	if err := checkCount("regions", len(op.Regions), spec.regions); err != nil {
		return err
	}
	for i := range spec.attrs {
		as := &spec.attrs[i]
		a := op.Attr(as.name)
		if a == nil {
			if !as.optional {
				return fmt.Errorf("missing attribute %s (%s)", as.name, as.kind)
			}
			continue
		}
		if err := checkAttr(spec.dialect(), as, a); err != nil {
			return err
		}
	}
	return nil
}

// checkBranchSelector checks the operand that picks an if's branch (pred,
// a tensor<i1>) or a case's (index, a tensor<i32>): rank 0 and of that
// element type, as the builder (If, Case) and the spec's input types
// require.
func checkBranchSelector(op *Op) error {
	name, want := "pred", Scalar(xla.Bool)
	if op.Name == "stablehlo.case" {
		name, want = "index", Scalar(xla.Int32)
	}
	if len(op.Operands) != 1 || op.Operands[0] == nil {
		return nil // checkOpSpec and CheckOp name it
	}
	if t := op.Operands[0].Type; !TypesEqual(t, want) {
		return fmt.Errorf("%s must be %s, got %s", name, want, t)
	}
	return nil
}

// regionName names op's region i as the op table does ("body",
// "true_branch"; "branches[1]" for the second of case's variadic
// branches), or "#i" for an op the table does not list.
func regionName(op *Op, i int) string {
	if spec := opSpecs[op.Name]; spec != nil {
		names := spec.regions
		if i < len(names) && !strings.HasSuffix(names[i], "...") {
			return names[i]
		}
		if n := len(names); n > 0 && i >= n-1 && strings.HasSuffix(names[n-1], "...") {
			return fmt.Sprintf("%s[%d]", strings.TrimSuffix(names[n-1], "..."), i-(n-1))
		}
	}
	return fmt.Sprintf("#%d", i)
}

// checkCount checks n against a list of names where "x..." is variadic.
func checkCount(what string, n int, names []string) error {
	fixed, variadic := 0, false
	for _, s := range names {
		if strings.HasSuffix(s, "...") {
			variadic = true
		} else {
			fixed++
		}
	}
	if (!variadic && n != fixed) || (variadic && n < fixed) {
		want := fmt.Sprint(fixed)
		if variadic {
			want = "at least " + want
		}
		return fmt.Errorf("has %d %s, want %s", n, what, want)
	}
	return nil
}
