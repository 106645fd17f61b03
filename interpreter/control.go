package interpreter

import (
	"context"
	"fmt"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Control flow and structural ops: while, if, case, func.call, map, tuple,
// get_tuple_element, optimization_barrier, create_token, after_all and
// composite. Regions run in the frame of the function that holds the op, so
// their bodies can use values defined outside them.

func init() {
	shpRegister("stablehlo.while", shpWhile)
	shpRegister("stablehlo.if", shpIf)
	shpRegister("stablehlo.case", shpCase)
	shpRegister("func.call", shpCall)
	shpRegister("stablehlo.map", shpMap)
	shpRegister("stablehlo.tuple", shpTuple)
	shpRegister("stablehlo.get_tuple_element", shpGetTupleElement)
	shpRegister("stablehlo.optimization_barrier", shpIdentity)
	shpRegister("stablehlo.create_token", shpToken)
	shpRegister("stablehlo.after_all", shpToken)
	shpRegister("stablehlo.composite", shpComposite)
}

// shpWhile runs body while cond holds; the loop-carried values start as the
// operands. A cancelled context stops the loop.
func shpWhile(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(op.Regions) != 2 {
		return nil, shpErrf("while needs cond and body regions, has %d", len(op.Regions))
	}
	if len(op.Results) != len(args) {
		return nil, shpErrf("while has %d operands but %d results", len(args), len(op.Results))
	}
	cond, body := op.Regions[0], op.Regions[1]
	checkBody := !yieldsResultTypes(body, op.Results)
	vals := args
	// excl are the carried tensors the loop alone refers to: at first the
	// operands the compiler handed over (fresh values used only here, in
	// x.dead), then those the body made (a dynamic_update_slice of a
	// loop-owned operand writes in place).
	var excl map[*Tensor]bool
	for _, t := range x.dead {
		if t == nil || t.Len() == 0 {
			continue
		}
		if excl == nil {
			excl = map[*Tensor]bool{}
		}
		excl[t] = true
	}
	x.dead = x.dead[:0]
	for iter := 0; ; iter++ {
		if x.Ctx.Err() != nil {
			return nil, context.Cause(x.Ctx)
		}
		c, err := x.RunRegion(cond, vals)
		if err != nil {
			return nil, err
		}
		if len(c) != 1 {
			return nil, shpErrf("cond returned %d values, want 1", len(c))
		}
		ok, err := shpBoolValue(c[0])
		if err != nil {
			return nil, shpErrf("cond result: %w", err)
		}
		if !ok {
			break
		}
		next, owned, err := x.runLoopBody(body, vals, excl)
		if err != nil {
			return nil, err
		}
		excl = owned
		if len(next) != len(vals) {
			return nil, shpErrf("body returned %d values in iteration %d, want %d", len(next), iter, len(vals))
		}
		if checkBody {
			if err := checkForwarded(next, op.Results, fmt.Sprintf("body's value %%d in iteration %d", iter)); err != nil {
				return nil, err
			}
		}
		vals = next
	}
	out := make([]Value, len(vals))
	copy(out, vals)
	return out, nil
}

// shpRunBranch runs a branch region (no arguments) and checks its result
// count.
func shpRunBranch(x *Exec, op *stablehlo.Op, i int) ([]Value, error) {
	res, err := x.RunRegion(op.Regions[i], nil)
	if err != nil {
		return nil, err
	}
	if len(res) != len(op.Results) {
		return nil, shpErrf("branch %d returned %d values, want %d", i, len(res), len(op.Results))
	}
	if !yieldsResultTypes(op.Regions[i], op.Results) {
		if err := checkForwarded(res, op.Results, fmt.Sprintf("branch %d's value %%d", i)); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// yieldsResultTypes reports whether region r returns values of exactly
// the types of results, so that what it yields needs no run-time check
// (the values' own ops made them so).
func yieldsResultTypes(r *stablehlo.Region, results []*stablehlo.Value) bool {
	if len(r.Blocks) != 1 {
		return false
	}
	term := r.Blocks[0].Terminator()
	if term == nil || len(term.Operands) != len(results) {
		return false
	}
	for i, v := range term.Operands {
		if !stablehlo.TypesEqual(v.Type, results[i].Type) {
			return false
		}
	}
	return true
}

// checkForwarded checks values an op passes on unchanged (a branch's or a
// loop body's results, optimization_barrier's operands) against the op's
// result types: a region may yield a `?` value where the op declares a
// static type, and nothing else checks it at run time (a 12-element
// tensor flowed on as tensor<3xf32>). what names value %d.
func checkForwarded(vals []Value, results []*stablehlo.Value, what string) error {
	for i, v := range vals {
		if i >= len(results) {
			break
		}
		if err := checkValue(results[i].Type, v); err != nil { // a ? dim takes any size
			return shpErrf(what+" does not have the result's type %v: %v", i, results[i].Type, err)
		}
	}
	return nil
}

// shpIf runs true_branch when pred is true, else false_branch.
func shpIf(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 1 || len(op.Regions) != 2 {
		return nil, shpErrf("if takes one predicate and two regions")
	}
	p, err := shpBoolValue(args[0])
	if err != nil {
		return nil, shpErrf("pred: %w", err)
	}
	if p {
		return shpRunBranch(x, op, 0)
	}
	return shpRunBranch(x, op, 1)
}

// shpCase runs branches[index], or the last branch when index is out of
// [0, N).
func shpCase(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 1 || len(op.Regions) == 0 {
		return nil, shpErrf("case takes one index and at least one branch")
	}
	t, ok := args[0].(*Tensor)
	if !ok || t == nil || t.Shape.Rank() != 0 {
		return nil, shpErrf("index must be a rank-0 integer tensor, got %T", args[0])
	}
	i, err := shpScalarInt(t)
	if err != nil {
		return nil, shpErrf("index: %w", err)
	}
	n := int64(len(op.Regions))
	if i < 0 || i >= n {
		i = n - 1
	}
	return shpRunBranch(x, op, int(i))
}

// shpCall is func.call: runs the callee in a new frame.
func shpCall(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	sym, ok := op.Attr("callee").(stablehlo.SymbolRefAttr)
	if !ok {
		return nil, shpErrf("callee must be a symbol, got %T", op.Attr("callee"))
	}
	return shpCallFunc(x, op, string(sym), args)
}

func shpCallFunc(x *Exec, op *stablehlo.Op, name string, args []Value) ([]Value, error) {
	f := x.Program.Module.Func(name)
	if f == nil {
		return nil, shpErrf("function @%s is not defined", name)
	}
	// StableHLO programs cannot recurse (XLA rejects call cycles); a cycle
	// would otherwise only end when the stack does.
	for _, fr := range x.frames {
		if fr.plan.fn == f {
			return nil, shpErrf("recursive call of @%s", name)
		}
	}
	res, err := x.Call(f, args)
	if err != nil {
		return nil, err
	}
	if len(res) != len(op.Results) {
		return nil, shpErrf("@%s returned %d values, want %d", name, len(res), len(op.Results))
	}
	return res, nil
}

// shpComposite runs the composite's decomposition function.
func shpComposite(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	sym, ok := op.Attr("decomposition").(stablehlo.SymbolRefAttr)
	if !ok {
		return nil, shpErrf("decomposition must be a symbol, got %T", op.Attr("decomposition"))
	}
	return shpCallFunc(x, op, string(sym), args)
}

// shpMap applies the computation region to the elements of the inputs at
// every index.
func shpMap(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ins, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 || len(op.Regions) != 1 {
		return nil, shpErrf("map takes at least one input and one region")
	}
	shape := ins[0].Shape
	dts := make([]xla.DType, len(ins))
	for k, t := range ins {
		if !t.Shape.Equal(xla.MakeShape(t.Shape.DType, shape.Dims...)) {
			return nil, shpErrf("inputs have different shapes (%v and %v)", shape, t.Shape)
		}
		dts[k] = t.Shape.DType
	}
	if dims, ok, err := shpAttrInts(op, "dimensions"); err != nil {
		return nil, err
	} else if ok {
		if len(dims) != shape.Rank() {
			return nil, shpErrf("dimensions %v must be [0, ..., %d]", dims, shape.Rank()-1)
		}
		for i, d := range dims {
			if d != int64(i) {
				return nil, shpErrf("dimensions %v must be [0, ..., %d]", dims, shape.Rank()-1)
			}
		}
	}
	rt, err := ResultTensorType(op, 0)
	if err != nil {
		return nil, err
	}
	sh, err := shpCheckShape(op, 0, rt.DType, shape.Dims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	if n := int64(out.Len()); n >= 2 {
		if v := shpVectorize(x, op.Regions[0], n); v != nil {
			// One run on vectors of all elements.
			flat := make([]*Tensor, len(ins))
			for k, t := range ins {
				flat[k] = &Tensor{Shape: xla.MakeShape(t.Shape.DType, n), Data: t.Data}
			}
			res, err := v.run(x, flat)
			if err != nil {
				return nil, err
			}
			if err := shpVecResults(res, []xla.DType{rt.DType}); err != nil {
				return nil, err
			}
			return []Value{&Tensor{Shape: sh, Data: res[0].Data}}, nil
		}
	}
	xs := shpScalars(dts)
	fargs := make([]Value, len(xs))
	for k := range xs {
		fargs[k] = xs[k]
	}
	res := shpScalars([]xla.DType{rt.DType})
	for i := 0; i < out.Len(); i++ {
		for k := range ins {
			if err := shpSetElem(xs[k], 0, ins[k], i); err != nil {
				return nil, err
			}
		}
		if err := shpRunScalarRegion(x, op.Regions[0], fargs, res); err != nil {
			return nil, err
		}
		if err := shpSetElem(out, i, res[0], 0); err != nil {
			return nil, err
		}
	}
	return []Value{out}, nil
}

func shpTuple(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	t := make(Tuple, len(args))
	copy(t, args)
	return []Value{t}, nil
}

func shpGetTupleElement(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 1 {
		return nil, shpErrf("get_tuple_element takes 1 operand, got %d", len(args))
	}
	t, ok := args[0].(Tuple)
	if !ok {
		return nil, shpErrf("operand is %T, not a tuple", args[0])
	}
	i, ok, err := shpAttrInt(op, "index")
	if err != nil {
		return nil, err
	}
	if !ok || i < 0 || i >= int64(len(t)) {
		return nil, shpErrf("index %d is out of range for a tuple of %d elements", i, len(t))
	}
	return []Value{t[i]}, nil
}

// shpIdentity is optimization_barrier: results are the operands.
func shpIdentity(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != len(op.Results) {
		return nil, shpErrf("%d operands for %d results", len(args), len(op.Results))
	}
	if err := checkForwarded(args, op.Results, "operand %d"); err != nil {
		return nil, err
	}
	out := make([]Value, len(args))
	copy(out, args)
	return out, nil
}

// shpToken is create_token and after_all: ordering only, the value is a
// token.
func shpToken(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	for i, a := range args {
		if _, ok := a.(Token); !ok {
			return nil, shpErrf("operand %d is %T, not a token", i, a)
		}
	}
	return []Value{Token{}}, nil
}
