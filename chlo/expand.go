package chlo

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// ExpandOptions select what Expand rewrites.
type ExpandOptions struct {
	// Ops lists the CHLO ops to rewrite by full name ("chlo.erf"); empty
	// means every CHLO op.
	Ops []string
}

// expanders rewrite one CHLO op: they build its StableHLO equivalent with
// fb (inserting before op) and return the values replacing its results.
type expander func(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error)

var expanders = map[string]expander{}

func init() {
	unaryFn := map[string]func(e *em, x *Value) *Value{
		"tan": expandTan, "sinh": expandSinh, "cosh": expandCosh,
		"asin": expandAsin, "acos": expandAcos, "atan": expandAtan,
		"asinh": expandAsinh, "acosh": expandAcosh, "atanh": expandAtanh,
		"erf": expandErf, "erfc": expandErfc, "erf_inv": expandErfInv,
		"lgamma": expandLgamma, "digamma": expandDigamma, "bessel_i1e": expandBesselI1e,
	}
	for name, fn := range unaryFn {
		expanders["chlo."+name] = unaryExpander(name, fn)
	}
	expanders["chlo.square"] = expandSquare
	expanders["chlo.conj"] = expandConj
	for _, n := range []string{"is_inf", "is_pos_inf", "is_neg_inf"} {
		expanders["chlo."+n] = expandIsInf
	}
	expanders["chlo.next_after"] = binaryExpander(expandNextAfter, false)
	expanders["chlo.zeta"] = binaryExpander(expandZeta, true)
	expanders["chlo.polygamma"] = binaryExpander(expandPolygamma, true)
	expanders["chlo.igamma"] = binaryExpander(expandIgammaOp(true), true)
	expanders["chlo.igammac"] = binaryExpander(expandIgammaOp(false), true)
	for _, n := range []string{"add", "and", "atan2", "compare", "complex", "divide", "maximum", "minimum",
		"multiply", "next_after", "or", "polygamma", "power", "remainder", "shift_left",
		"shift_right_arithmetic", "shift_right_logical", "subtract", "xor", "zeta"} {
		expanders["chlo.broadcast_"+n] = expandBroadcast
	}
	expanders["chlo.broadcast_select"] = expandBroadcast
	expanders["chlo.top_k"] = expandTopK
	expanders["chlo.ragged_dot"] = expandRaggedDot
	expanders["chlo.constant"] = expandConstant
	expanders["chlo.constant_like"] = expandConstantLike
}

// Expandable reports whether Expand can rewrite op name (a full name such
// as "chlo.erf") into StableHLO. Some ops are expandable only for some
// element types (Expand says which when it cannot).
func Expandable(opName string) bool { return expanders[opName] != nil }

// ExpandableOps returns the names of the CHLO ops Expand rewrites, sorted.
func ExpandableOps() []string {
	out := make([]string, 0, len(expanders))
	for n := range expanders {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Expand rewrites the CHLO ops of m (all of them, or those opts selects)
// into StableHLO ops in place, in every function and nested region. An op
// it cannot rewrite (an op or element type without a decomposition) is an
// error naming the op and the type; m is then left unchanged.
func Expand(m *stablehlo.Module, opts ExpandOptions) error {
	if m == nil {
		return errors.New("chlo: Expand: nil module")
	}
	want := func(name string) bool {
		return strings.HasPrefix(name, "chlo.") && (len(opts.Ops) == 0 || slices.Contains(opts.Ops, name))
	}
	var ops, trial []*stablehlo.Op
	for _, f := range m.Funcs {
		if f == nil {
			continue
		}
		n := len(ops)
		ops = appendOps(ops, f, want)
		if len(ops) > n {
			// A copy to expand first: what fails to expand fails there,
			// and m is left unchanged.
			trial = appendOps(trial, stablehlo.CloneFunc(f, f.Name), want)
		}
	}
	for _, op := range ops {
		if err := checkExpandable(op); err != nil {
			return err
		}
	}
	if err := expandOps(trial); err != nil {
		return err
	}
	return expandOps(ops)
}

// appendOps appends the ops of f that want selects.
func appendOps(ops []*stablehlo.Op, f *stablehlo.Func, want func(string) bool) []*stablehlo.Op {
	f.Walk(func(op *stablehlo.Op) bool {
		if want(op.Name) {
			ops = append(ops, op)
		}
		return true
	})
	return ops
}

// expandOps replaces each op by its expansion.
func expandOps(ops []*stablehlo.Op) error {
	for _, op := range ops {
		fb := stablehlo.BuilderAt(op)
		vals, err := expanders[op.Name](fb, op)
		if err == nil {
			err = fb.Err()
		}
		if err != nil {
			return fmt.Errorf("chlo: Expand %s: %w", describe(op), err)
		}
		if len(vals) != len(op.Results) {
			return fmt.Errorf("chlo: Expand %s: %d values for %d results", describe(op), len(vals), len(op.Results))
		}
		for i, r := range op.Results {
			if !stablehlo.TypesEqual(vals[i].Type, r.Type) {
				return fmt.Errorf("chlo: Expand %s: result %d is %s, its expansion %s", describe(op), i, r.Type, vals[i].Type)
			}
			stablehlo.ReplaceAllUsesWith(r, vals[i])
		}
		if err := op.Erase(); err != nil {
			return fmt.Errorf("chlo: Expand %s: %w", describe(op), err)
		}
	}
	return nil
}

// describe names op with its operand types.
func describe(op *stablehlo.Op) string {
	parts := make([]string, len(op.Operands))
	for i, v := range op.Operands {
		if v == nil {
			parts[i] = "nil"
		} else {
			parts[i] = v.Type.String()
		}
	}
	return op.Name + "(" + strings.Join(parts, ", ") + ")"
}

// checkExpandable reports ops Expand has no rewrite for, and ops that are
// not well formed (operand and result counts, attributes, types: what
// Verify checks of an op, stablehlo.CheckOp), which the rewrites rely on.
func checkExpandable(op *stablehlo.Op) error {
	if expanders[op.Name] == nil {
		return fmt.Errorf("chlo: Expand: %s has no StableHLO decomposition", op.Name)
	}
	for i, v := range op.Operands {
		if v == nil {
			return fmt.Errorf("chlo: Expand %s: operand %d is nil", op.Name, i)
		}
		if _, ok := v.TensorType(); !ok {
			return fmt.Errorf("chlo: Expand %s: operand %d is not a tensor", describe(op), i)
		}
	}
	if err := stablehlo.CheckOp(op); err != nil {
		return fmt.Errorf("chlo: Expand: %w", err)
	}
	if len(op.Operands) == 0 {
		return nil
	}
	t, _ := op.Operands[0].TensorType()
	name := strings.TrimPrefix(op.Name, "chlo.")
	if t.DType.IsComplex() {
		switch name {
		case "square", "conj", "sinh", "cosh", "tan", "constant_like", "ragged_dot",
			"asin", "acos", "atan", "asinh", "acosh", "atanh":
		default:
			if !strings.HasPrefix(name, "broadcast_") {
				return fmt.Errorf("chlo: Expand %s: no decomposition for element type %s", describe(op), t.DType)
			}
		}
	}
	return nil
}

func unaryExpander(name string, fn func(e *em, x *Value) *Value) expander {
	return func(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
		x := op.Operands[0]
		t, _ := x.TensorType()
		if t.DType.IsComplex() {
			switch name {
			case "sinh", "cosh", "tan":
				return []*Value{complexTrig(fb, name, x, t)}, nil
			case "asin", "acos", "atan", "asinh", "acosh", "atanh":
				return []*Value{expandComplexInverse(fb, name, x, t)}, nil
			}
			return nil, fmt.Errorf("no decomposition for element type %s", t.DType)
		}
		if !t.DType.IsFloat() {
			return nil, fmt.Errorf("element type %s is not a float", t.DType)
		}
		return []*Value{inF64(fb, x, fn)}, nil
	}
}

// binaryExpander expands a binary op with fn, in float64 when widen is
// set, else in the operands' own type.
func binaryExpander(fn func(e *em, x, y *Value) *Value, widen bool) expander {
	return func(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
		x, y := op.Operands[0], op.Operands[1]
		t, _ := x.TensorType()
		if !t.DType.IsFloat() {
			return nil, fmt.Errorf("element type %s is not a float", t.DType)
		}
		if t.DType == xla.Float64 || !widen {
			return []*Value{fn(newEm(fb, t), x, y)}, nil
		}
		wide := stablehlo.TensorType{DType: xla.Float64, Dims: t.Dims}
		e := newEm(fb, wide)
		r := fn(e, fb.Convert(x, xla.Float64), fb.Convert(y, xla.Float64))
		return []*Value{fb.Convert(r, t.DType)}, nil
	}
}

// inF64 computes fn on x in float64 (f16, bf16 and f32 inputs are widened
// and the result rounded back once).
func inF64(fb *FuncBuilder, x *Value, fn func(e *em, x *Value) *Value) *Value {
	t, _ := x.TensorType()
	if t.DType == xla.Float64 {
		return fn(newEm(fb, t), x)
	}
	wide := stablehlo.TensorType{DType: xla.Float64, Dims: t.Dims}
	r := fn(newEm(fb, wide), fb.Convert(x, xla.Float64))
	return fb.Convert(r, t.DType)
}

// --- simple ops ------------------------------------------------------------------

func expandSquare(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
	x := op.Operands[0]
	t, _ := x.TensorType()
	if !t.DType.IsComplex() {
		return []*Value{fb.Multiply(x, x)}, nil
	}
	// (re² - im², 2 re im), with re² - im² as (re - im)(re + im), exactly
	// zero when |re| = |im| is finite (re + im may overflow), in f64 (as
	// the interpreter's stablehlo.square).
	re, im := fb.Real(x), fb.Imag(x)
	rt, _ := re.TensorType()
	e := newEm(fb, stablehlo.TensorType{DType: xla.Float64, Dims: rt.Dims})
	a, b := fb.Convert(re, xla.Float64), fb.Convert(im, xla.Float64)
	r := e.mul(e.sub(a, b), e.add(a, b))
	r = e.sel(e.and(e.eq(e.abs(a), e.abs(b)), e.fb.Not(e.isInf(a))), e.c(0), r)
	i := e.mul(e.mul(a, b), e.c(2))
	return []*Value{fb.Complex(fb.Convert(r, rt.DType), fb.Convert(i, rt.DType))}, nil
}

func expandConj(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
	x := op.Operands[0]
	t, _ := x.TensorType()
	if !t.DType.IsComplex() {
		return []*Value{x}, nil
	}
	return []*Value{fb.Complex(fb.Real(x), fb.Negate(fb.Imag(x)))}, nil
}

func expandIsInf(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
	x := op.Operands[0]
	t, _ := x.TensorType()
	if !t.DType.IsFloat() {
		return nil, fmt.Errorf("element type %s is not a float", t.DType)
	}
	inf := fb.SplatOf(t.DType, posInf, t.Dims...)
	switch op.Name {
	case "chlo.is_inf":
		return []*Value{fb.Compare(fb.Abs(x), inf, stablehlo.CompareEQ, stablehlo.CompareAuto)}, nil
	case "chlo.is_pos_inf":
		return []*Value{fb.Compare(x, inf, stablehlo.CompareEQ, stablehlo.CompareAuto)}, nil
	}
	return []*Value{fb.Compare(x, fb.Negate(inf), stablehlo.CompareEQ, stablehlo.CompareAuto)}, nil
}

func expandConstant(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
	a, ok := op.Attr("value").(stablehlo.DenseElementsAttr)
	if !ok {
		return nil, fmt.Errorf("value is not a dense elements attribute")
	}
	return []*Value{fb.ConstantAttr(a)}, nil
}

func expandConstantLike(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
	rt, ok := op.Results[0].TensorType()
	if !ok {
		return nil, fmt.Errorf("result is not a tensor")
	}
	var v float64
	switch a := op.Attr("value").(type) {
	case stablehlo.FloatAttr:
		v = a.Value
	case stablehlo.IntAttr:
		// 64-bit integers past 2^53 keep every bit; other types take the
		// value as the interpreter does (float64(value) for floats).
		switch rt.DType {
		case xla.Int64:
			return []*Value{stablehlo.Splat(fb, a.Value, rt.Dims...)}, nil
		case xla.Uint64:
			return []*Value{stablehlo.Splat(fb, uint64(a.Value), rt.Dims...)}, nil
		}
		v = float64(a.Value)
	case stablehlo.BoolAttr:
		if a {
			v = 1
		}
	case stablehlo.DenseElementsAttr:
		// One element, or a splat: the only way to write a complex value
		// with an imaginary part.
		if a.Type.DType != rt.DType {
			return nil, fmt.Errorf("value of type %s for a result of element type %s", a.Type, rt.DType)
		}
		if !a.Splat && a.Type.Size() != 1 {
			return nil, fmt.Errorf("value %s holds %d elements, want one (or a splat)", a.Type, a.Type.Size())
		}
		return []*Value{fb.ConstantAttr(stablehlo.DenseElementsAttr{Type: rt, Data: a.Data, Splat: true})}, nil
	default:
		return nil, fmt.Errorf("value %v is not a float, integer, bool or one-element dense attribute", op.Attr("value"))
	}
	if rt.DType.IsComplex() {
		et := rt.DType.ComplexElem()
		re := fb.SplatOf(et, v, rt.Dims...)
		return []*Value{fb.Complex(re, fb.SplatOf(et, 0, rt.Dims...))}, nil
	}
	return []*Value{fb.SplatOf(rt.DType, v, rt.Dims...)}, nil
}

// --- broadcasting ops ----------------------------------------------------------------

// broadcastTo broadcasts x to dims, its dimension i going to m[i].
func broadcastTo(fb *FuncBuilder, x *Value, dims, m []int64) *Value {
	t, _ := x.TensorType()
	if slices.Equal(t.Dims, dims) {
		return x
	}
	return fb.BroadcastInDim(x, dims, m)
}

func expandBroadcast(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
	rt, ok := op.Results[0].TensorType()
	if !ok {
		return nil, fmt.Errorf("result is not a tensor")
	}
	dims := rt.Dims
	if slices.Contains(dims, stablehlo.DynamicDim) {
		return nil, fmt.Errorf("dynamic result shape %s", rt)
	}
	if op.Name == "chlo.broadcast_select" {
		vs := make([]*Value, 3)
		for i, v := range op.Operands {
			t, _ := v.TensorType()
			_, m, _, err := stablehlo.ChloBroadcastMaps(len(dims), t.Rank(), nil)
			if err != nil {
				return nil, err
			}
			vs[i] = broadcastTo(fb, v, dims, m)
		}
		return []*Value{fb.Select(vs[0], vs[1], vs[2])}, nil
	}
	x, y := op.Operands[0], op.Operands[1]
	xt, _ := x.TensorType()
	yt, _ := y.TensorType()
	var bdims []int64
	if a, ok := op.Attr("broadcast_dimensions").(stablehlo.DenseArrayAttr); ok {
		bdims = a.Values
	}
	mx, my, _, err := stablehlo.ChloBroadcastMaps(xt.Rank(), yt.Rank(), bdims)
	if err != nil {
		return nil, err
	}
	x, y = broadcastTo(fb, x, dims, mx), broadcastTo(fb, y, dims, my)
	base := strings.TrimPrefix(op.Name, "chlo.broadcast_")
	var r *Value
	switch base {
	case "add":
		r = fb.Add(x, y)
	case "subtract":
		r = fb.Subtract(x, y)
	case "multiply":
		r = fb.Multiply(x, y)
	case "divide":
		r = fb.Divide(x, y)
	case "remainder":
		r = fb.Remainder(x, y)
	case "power":
		r = fb.Power(x, y)
	case "maximum":
		r = fb.Maximum(x, y)
	case "minimum":
		r = fb.Minimum(x, y)
	case "atan2":
		r = fb.Atan2(x, y)
	case "and":
		r = fb.And(x, y)
	case "or":
		r = fb.Or(x, y)
	case "xor":
		r = fb.Xor(x, y)
	case "shift_left":
		r = fb.ShiftLeft(x, y)
	case "shift_right_arithmetic":
		r = fb.ShiftRightArithmetic(x, y)
	case "shift_right_logical":
		r = fb.ShiftRightLogical(x, y)
	case "complex":
		r = fb.Complex(x, y)
	case "compare":
		dir, _ := op.Attr("comparison_direction").(stablehlo.EnumAttr)
		ct, _ := op.Attr("compare_type").(stablehlo.EnumAttr)
		r = fb.Compare(x, y, stablehlo.ComparisonDirection(dir.Value), stablehlo.CompareType(ct.Value))
	case "next_after", "zeta", "polygamma":
		fn := map[string]func(e *em, x, y *Value) *Value{"next_after": expandNextAfter, "zeta": expandZeta, "polygamma": expandPolygamma}[base]
		if !xt.DType.IsFloat() {
			return nil, fmt.Errorf("element type %s is not a float", xt.DType)
		}
		if xt.DType == xla.Float64 || base == "next_after" {
			r = fn(newEm(fb, stablehlo.TensorType{DType: xt.DType, Dims: dims}), x, y)
		} else {
			e := newEm(fb, stablehlo.TensorType{DType: xla.Float64, Dims: dims})
			r = fb.Convert(fn(e, fb.Convert(x, xla.Float64), fb.Convert(y, xla.Float64)), xt.DType)
		}
	default:
		return nil, fmt.Errorf("unknown broadcasting op %s", op.Name)
	}
	return []*Value{r}, nil
}

// --- top_k -------------------------------------------------------------------------

func expandTopK(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
	x := op.Operands[0]
	t, _ := x.TensorType()
	k, _ := op.Attr("k").(stablehlo.IntAttr)
	if t.Rank() == 0 || slices.Contains(t.Dims, stablehlo.DynamicDim) {
		return nil, fmt.Errorf("operand must be a static tensor of rank >= 1")
	}
	last := int64(t.Rank() - 1)
	idx := fb.Iota(stablehlo.TensorType{DType: xla.Int32, Dims: t.Dims}, last)
	ct := stablehlo.CompareAuto
	if t.DType.IsFloat() {
		ct = stablehlo.CompareTotalOrder
	}
	sorted := fb.Sort([]*Value{x, idx}, last, true, func(rb *FuncBuilder, args []*Value) *Value {
		return rb.Compare(args[0], args[1], stablehlo.CompareGT, ct)
	})
	start := make([]int64, t.Rank())
	limit := slices.Clone(t.Dims)
	limit[last] = k.Value
	return []*Value{fb.Slice(sorted[0], start, limit, nil), fb.Slice(sorted[1], start, limit, nil)}, nil
}
