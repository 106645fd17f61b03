package interpreter

import (
	"fmt"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The chlo.broadcast_* ops broadcast their operands to the result shape
// (numpy style: trailing dimensions aligned, or operand dimension i mapped
// to result dimension broadcast_dimensions[i]; a dimension of size 1
// stretches) and then apply the StableHLO op of the same name (or the
// CHLO op for polygamma, zeta and next_after), so their semantics are
// exactly those ops' (integer division by zero, shifts, NaN rules ...).

var chloBroadcastOps = map[string]string{
	"chlo.broadcast_add":                    "stablehlo.add",
	"chlo.broadcast_atan2":                  "stablehlo.atan2",
	"chlo.broadcast_divide":                 "stablehlo.divide",
	"chlo.broadcast_maximum":                "stablehlo.maximum",
	"chlo.broadcast_minimum":                "stablehlo.minimum",
	"chlo.broadcast_multiply":               "stablehlo.multiply",
	"chlo.broadcast_next_after":             "chlo.next_after",
	"chlo.broadcast_polygamma":              "chlo.polygamma",
	"chlo.broadcast_power":                  "stablehlo.power",
	"chlo.broadcast_remainder":              "stablehlo.remainder",
	"chlo.broadcast_shift_left":             "stablehlo.shift_left",
	"chlo.broadcast_shift_right_arithmetic": "stablehlo.shift_right_arithmetic",
	"chlo.broadcast_shift_right_logical":    "stablehlo.shift_right_logical",
	"chlo.broadcast_subtract":               "stablehlo.subtract",
	"chlo.broadcast_and":                    "stablehlo.and",
	"chlo.broadcast_or":                     "stablehlo.or",
	"chlo.broadcast_xor":                    "stablehlo.xor",
	"chlo.broadcast_complex":                "stablehlo.complex",
	"chlo.broadcast_compare":                "stablehlo.compare",
	"chlo.broadcast_zeta":                   "chlo.zeta",
	"chlo.broadcast_select":                 "stablehlo.select",
}

func init() {
	for name, target := range chloBroadcastOps {
		registerKernel(name, chloBroadcastKernel(target))
		mustRegister(RegisterOpCheck(name, chloCheckBroadcast))
	}
}

// chloBroadcastDims returns, for an operand of dims in, the result
// dimension each of its dimensions maps to, after checking them against
// the result dims out.
func chloBroadcastDims(op *stablehlo.Op, in, out []int64) ([]int64, error) {
	m := make([]int64, len(in))
	// broadcast_dimensions maps the lower-rank operand; an operand of the
	// result's rank maps identically.
	if a := op.Attr("broadcast_dimensions"); a != nil && op.Name != "chlo.broadcast_select" && len(in) != len(out) {
		vals, err := shpIntsOfAttr(a)
		if err != nil {
			return nil, fmt.Errorf("broadcast_dimensions: %w", err)
		}
		if len(vals) != len(in) {
			return nil, fmt.Errorf("broadcast_dimensions %v has %d entries for an operand of rank %d", vals, len(vals), len(in))
		}
		copy(m, vals)
	} else {
		if len(in) > len(out) {
			return nil, fmt.Errorf("operand of rank %d does not broadcast to the result rank %d", len(in), len(out))
		}
		for i := range in {
			m[i] = int64(len(out)-len(in)) + int64(i)
		}
	}
	seen := map[int64]bool{}
	for i, d := range m {
		if d < 0 || d >= int64(len(out)) || seen[d] {
			return nil, fmt.Errorf("broadcast dimension %d of operand dimension %d is out of range or repeated for result rank %d", d, i, len(out))
		}
		seen[d] = true
		if in[i] != out[d] && in[i] != 1 {
			return nil, fmt.Errorf("operand dimension %d of size %d does not broadcast to result dimension %d of size %d", i, in[i], d, out[d])
		}
	}
	return m, nil
}

func chloCheckBroadcast(op *stablehlo.Op) error {
	n := 2
	if op.Name == "chlo.broadcast_select" {
		n = 3
	}
	ts, err := chloOperandTypes(op, n)
	if err != nil {
		return err
	}
	if len(op.Results) != 1 {
		return fmt.Errorf("has %d results, want 1", len(op.Results))
	}
	rt, err := ResultTensorType(op, 0)
	if err != nil {
		return err
	}
	// With a ? dim anywhere the shapes are checked at run time, when the
	// op is refined (InferResultTypes broadcasts the run-time shapes).
	dynamic := rt.Size() < 0
	for _, t := range ts {
		dynamic = dynamic || t.Size() < 0
	}
	if !dynamic {
		if rt, err = ewResultType(op, 0); err != nil {
			return err
		}
		for i, t := range ts {
			if _, err := chloBroadcastDims(op, t.Dims, rt.Dims); err != nil {
				return fmt.Errorf("operand %d: %w", i, err)
			}
		}
	} else if StorageOf(rt.DType) == StorageInvalid {
		return fmt.Errorf("result element type %v is not supported", rt.DType)
	}
	// The element types must be those of the underlying op.
	a, b := ts[0].DType, ts[1].DType
	if n == 3 {
		a, b = ts[1].DType, ts[2].DType
		if ts[0].DType != xla.Bool {
			return fmt.Errorf("pred must be i1, got %v", ts[0].DType)
		}
	}
	if a != b {
		return fmt.Errorf("operand element types %v and %v differ", a, b)
	}
	switch op.Name {
	case "chlo.broadcast_compare":
		if rt.DType != xla.Bool {
			return fmt.Errorf("result element type %v is not i1", rt.DType)
		}
		if _, _, err := ewCompareAttrs(chloStableAttrs(op), a); err != nil {
			return err
		}
	case "chlo.broadcast_complex":
		if !a.IsFloat() || (a != xla.Float32 && a != xla.Float64) || !rt.DType.IsComplex() || rt.DType.ComplexElem() != a {
			return fmt.Errorf("takes f32 or f64 parts and makes their complex type, got %v parts and %v", a, rt.DType)
		}
	case "chlo.broadcast_and", "chlo.broadcast_or", "chlo.broadcast_xor", "chlo.broadcast_shift_left",
		"chlo.broadcast_shift_right_arithmetic", "chlo.broadcast_shift_right_logical":
		if !a.IsInt() && !(a == xla.Bool && !strings.Contains(op.Name, "shift")) {
			return ewDTypeError(op, a)
		}
	case "chlo.broadcast_polygamma", "chlo.broadcast_zeta":
		if !a.IsFloat() {
			return ewDTypeError(op, a)
		}
	case "chlo.broadcast_next_after":
		if !chloNextAfterType(a) {
			return ewDTypeError(op, a)
		}
	case "chlo.broadcast_atan2":
		if !a.IsFloat() && !a.IsComplex() {
			return ewDTypeError(op, a)
		}
	case "chlo.broadcast_remainder":
		if err := ewRemainderType(op, a); err != nil {
			return err
		}
	}
	if op.Name != "chlo.broadcast_compare" && op.Name != "chlo.broadcast_complex" && rt.DType != a {
		return fmt.Errorf("result element type %v differs from the operands' %v", rt.DType, a)
	}
	return nil
}

// chloStableAttrs returns op with its CHLO comparison enums as StableHLO
// ones (the kernels of compare read the values only).
func chloStableAttrs(op *stablehlo.Op) *stablehlo.Op {
	c := &stablehlo.Op{Name: op.Name, Operands: op.Operands, Results: op.Results, Loc: op.Loc}
	for _, a := range op.Attrs {
		if e, ok := a.Value.(stablehlo.EnumAttr); ok && e.Dialect == "chlo" {
			e.Dialect = "stablehlo"
			a.Value = e
		}
		c.Attrs = append(c.Attrs, a)
	}
	return c
}

// chloBroadcastTo returns t broadcast to dims (t itself when it already
// has them).
func chloBroadcastTo(op *stablehlo.Op, t *Tensor, dims []int64) (*Tensor, error) {
	m, err := chloBroadcastDims(op, t.Shape.Dims, dims)
	if err != nil {
		return nil, err
	}
	if chloSameDims(t.Shape.Dims, dims) {
		identity := true
		for i, d := range m {
			identity = identity && d == int64(i)
		}
		if identity {
			return t, nil
		}
	}
	out := NewTensor(xla.Shape{DType: t.Shape.DType, Dims: dims})
	if out.Len() == 0 {
		return out, nil
	}
	src := Strides(t.Shape.Dims)
	srcStr := make([]int64, len(dims))
	for i, d := range m {
		if t.Shape.Dims[i] != 1 {
			srcStr[d] = src[i]
		}
	}
	if err := shpCopy(out, t, dims, 0, Strides(dims), 0, srcStr); err != nil {
		return nil, err
	}
	return out, nil
}

func chloBroadcastKernel(target string) Kernel {
	return func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		k := kernelFor(target)
		if k == nil {
			return nil, fmt.Errorf("no kernel for %s", target)
		}
		rt, err := ewResultType(op, 0)
		if err != nil {
			return nil, err
		}
		in := make([]Value, len(args))
		for i := range args {
			t, err := ewTensor(args, i)
			if err != nil {
				return nil, err
			}
			if in[i], err = chloBroadcastTo(op, t, rt.Dims); err != nil {
				return nil, fmt.Errorf("operand %d: %w", i, err)
			}
		}
		inner := chloStableAttrs(op)
		inner.Name = target
		// No operand storage may be overwritten: the broadcast copies (or the
		// arguments themselves) are not planned for reuse.
		return k(nil, inner, in)
	}
}
