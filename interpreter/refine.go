package interpreter

import (
	"fmt"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Run-time shape refinement. A program exported with symbolic shapes
// (JAX's shape polymorphism) declares `?` dimensions on values whose
// sizes only the run knows. The dynamism ops (dynamic_iota,
// dynamic_broadcast_in_dim, dynamic_reshape ...) make their results'
// shapes from their operands themselves; for the other ops whose result
// types stablehlo.InferResultTypes knows (elementwise ops, dot_general,
// reductions, slices, concatenate, transpose, convert ...), a result
// declared with a `?` dimension is refined before the kernel runs: the
// kernel sees a copy of the op whose operand types are those of the
// run-time values and whose result types are what they give.

// refinable reports whether op's results are refined at run time: one of
// them has a dynamic dimension, and its kernel does not make its shapes
// from run-time operands itself, run other code (regions, calls, custom
// calls) or meet other devices (collectives meet at the op itself).
func refinable(op *stablehlo.Op) bool {
	if !strings.HasPrefix(op.Name, "stablehlo.") && !strings.HasPrefix(op.Name, "chlo.") {
		return false
	}
	if mayKeepsOperands(op.Name) { // collectives, transfers, custom calls, outside kernels
		return false
	}
	switch strings.TrimPrefix(op.Name, "stablehlo.") {
	case "dynamic_broadcast_in_dim", "dynamic_iota", "dynamic_pad", "dynamic_reshape", "real_dynamic_slice",
		"dynamic_gather", "dynamic_conv", "while", "if", "case", "composite":
		return false
	}
	for _, r := range op.Results {
		if t, ok := r.Type.(stablehlo.TensorType); ok && t.Size() < 0 {
			return true
		}
	}
	return false
}

// refineOp returns op with the types of the run-time values in as its
// operand types and what those give as its result types, or op itself
// when it cannot tell (an operand that is not a tensor, an op whose
// results InferResultTypes does not know): the kernel then reports the
// dynamic result as before.
func refineOp(op *stablehlo.Op, in []Value) (*stablehlo.Op, error) {
	if len(in) != len(op.Operands) {
		return op, nil
	}
	probe := &stablehlo.Op{Name: op.Name, Attrs: op.Attrs, Regions: op.Regions, Loc: op.Loc, Line: op.Line, Results: op.Results}
	probe.Operands = make([]*stablehlo.Value, len(in))
	for i, v := range in {
		var shape xla.Shape
		switch v := v.(type) {
		case *Tensor:
			if v == nil {
				return op, nil
			}
			shape = v.Shape
		case *sliceView: // a dynamic_slice a dot_general reads in place
			shape = xla.MakeShape(v.src.Shape.DType, v.sizes...)
		default:
			return op, nil
		}
		probe.Operands[i] = &stablehlo.Value{Type: stablehlo.TensorOf(shape)}
	}
	var types []stablehlo.Type
	if op.Name == "stablehlo.convert" && len(op.Results) == 1 && len(in) == 1 {
		rt, _ := op.Results[0].Type.(stablehlo.TensorType)
		types = []stablehlo.Type{stablehlo.TensorType{DType: rt.DType, Dims: in[0].(*Tensor).Shape.Dims}}
	} else {
		var known bool
		var err error
		types, known, err = stablehlo.InferResultTypes(probe)
		if err != nil {
			return nil, err
		}
		if !known || len(types) != len(op.Results) {
			return op, nil
		}
	}
	probe.Results = make([]*stablehlo.Value, len(types))
	for i, t := range types {
		if !stablehlo.TypesCompatible(t, op.Results[i].Type) {
			return nil, fmt.Errorf("result %d is declared %v, the run-time operands give %v", i, op.Results[i].Type, t)
		}
		probe.Results[i] = &stablehlo.Value{Type: t}
	}
	return probe, nil
}
