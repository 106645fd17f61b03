package stablehlo

import (
	"math"
	"slices"

	"github.com/halo-ml/halo/xla"
)

// Reduce adds stablehlo.reduce of inputs along dims, starting from inits
// (one scalar per input). body receives 2N scalars (the N accumulators,
// then the N elements) and returns the N new accumulators.
func (fb *FuncBuilder) Reduce(inputs, inits []*Value, dims []int64, body func(rb *FuncBuilder, args []*Value) []*Value) []*Value {
	const name = "stablehlo.reduce"
	ops := append(slices.Clone(inputs), inits...)
	n := len(inputs)
	if !fb.checkOperands(name, ops) {
		return deadN(n)
	}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadN(n)
	}
	if len(inits) != n {
		fb.fail(name, ops, "needs as many init values as inputs, got %d and %d", len(inits), n)
		return deadN(n)
	}
	rts, err := inferReduce(ts[:n], ts[n:], dims, nil)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadN(n)
	}
	initTypes := valueTypes(inits)
	region, rets, ok := fb.buildRegion(name, ops, "body", append(slices.Clone(initTypes), initTypes...), body)
	if !ok {
		return deadN(n)
	}
	if !typesEqual(valueTypes(rets), initTypes) {
		fb.fail(name, ops, "body must return %s, got %s", typeList(initTypes), typeList(valueTypes(rets)))
		return deadN(n)
	}
	op := NewOp(name, ops, rts, NamedAttr{Name: "dimensions", Value: I64Array(dims...)})
	op.AddRegion(region)
	fb.emit(op)
	return op.Results
}

// reduceWith reduces x along dims with a binary op and init value; what
// (ReduceMax ...) names the method in errors about x's element type.
func (fb *FuncBuilder) reduceWith(what string, x *Value, init func(dt xla.DType) ([]byte, bool), combine func(rb *FuncBuilder, a, b *Value) *Value, dims []int64) *Value {
	const name = "stablehlo.reduce"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "%s: operand must be a tensor", what)
		return deadValue(nil)
	}
	data, ok := init(t.DType)
	if !ok {
		fb.fail(name, []*Value{x}, "%s: no initial value for element type %s", what, t.DType)
		return deadValue(nil)
	}
	if dims == nil {
		for i := range t.Rank() {
			dims = append(dims, int64(i))
		}
	}
	iv := fb.ConstantBytes(TensorType{DType: t.DType}, data)
	return fb.Reduce([]*Value{x}, []*Value{iv}, dims, func(rb *FuncBuilder, args []*Value) []*Value {
		return []*Value{combine(rb, args[0], args[1])}
	})[0]
}

// ReduceSum sums x along dims (all dimensions when none are given).
func (fb *FuncBuilder) ReduceSum(x *Value, dims ...int64) *Value {
	return fb.reduceWith("ReduceSum", x, func(dt xla.DType) ([]byte, bool) { return scalarBytes(dt, 0) },
		(*FuncBuilder).Add, dims)
}

// ReduceProd multiplies x along dims (all dimensions when none are given).
func (fb *FuncBuilder) ReduceProd(x *Value, dims ...int64) *Value {
	return fb.reduceWith("ReduceProd", x, func(dt xla.DType) ([]byte, bool) { return scalarBytes(dt, 1) },
		(*FuncBuilder).Multiply, dims)
}

// ReduceMax takes the maximum of x along dims (all dimensions when none
// are given), starting from -inf (the smallest value of integers and of
// the narrow floats without infinities).
func (fb *FuncBuilder) ReduceMax(x *Value, dims ...int64) *Value {
	return fb.reduceWith("ReduceMax", x, func(dt xla.DType) ([]byte, bool) { return extremumBytes(dt, false) },
		(*FuncBuilder).Maximum, dims)
}

// ReduceMin takes the minimum of x along dims (all dimensions when none
// are given), starting from +inf (the largest value of integers and of
// the narrow floats without infinities).
func (fb *FuncBuilder) ReduceMin(x *Value, dims ...int64) *Value {
	return fb.reduceWith("ReduceMin", x, func(dt xla.DType) ([]byte, bool) { return extremumBytes(dt, true) },
		(*FuncBuilder).Minimum, dims)
}

// scalarBytes encodes v as one element of dt (see ScalarOf).
func scalarBytes(dt xla.DType, v float64) ([]byte, bool) {
	b, err := encodeFloat(dt, v)
	return b, err == nil
}

// extremum returns the largest (max) or smallest value of dt as a scalar.
func (fb *FuncBuilder) extremum(dt xla.DType, largest bool) *Value {
	b, ok := extremumBytes(dt, largest)
	if !ok {
		fb.fail("stablehlo.constant", nil, "no extremum for element type %s", dt)
		return deadValue(TensorType{DType: dt})
	}
	return fb.ConstantBytes(TensorType{DType: dt}, b)
}

// extremumBytes encodes the largest (max) or smallest value of dt: +-inf
// for floats (the extreme finite values of the narrow formats without
// infinities), the bounds of the type's bit width for integers (-8 and 7
// for i4), false and true for booleans. ok is false for types without one.
func extremumBytes(dt xla.DType, largest bool) (b []byte, ok bool) {
	switch {
	case dt.IsBool():
		if largest {
			return []byte{1}, true
		}
		return []byte{0}, true
	case dt.IsFloat():
		switch dt {
		case xla.Float32:
			return elementBytes([]float32{float32(inf(largest))}), true
		case xla.Float64:
			return elementBytes([]float64{inf(largest)}), true
		case xla.BFloat16:
			return elementBytes([]BF16{BF16FromFloat64(inf(largest))}), true
		case xla.Float16:
			return elementBytes([]F16{F16FromFloat64(inf(largest))}), true
		}
		if f := xla.NarrowFloatOf(dt); f != nil && dt.HostBytes() == 1 {
			// f8, f6, f4: ±inf where the format has it, else its
			// extreme finite value (an identity of max and min all the
			// same: no value is past it).
			if f.HasInf() {
				return []byte{byte(f.Encode64(inf(largest)))}, true
			}
			bits, _, _ := f.Layout()
			best, found := uint32(0), false
			for c := uint32(0); c < 1<<bits; c++ {
				if f.IsNaN(c) {
					continue
				}
				v := f.Decode64(c)
				if !found || largest && v > f.Decode64(best) || !largest && v < f.Decode64(best) {
					best, found = c, true
				}
			}
			return []byte{byte(best)}, found
		}
	case dt.IsInt():
		// Host layout: little-endian, sub-byte kinds one value a byte
		// (signed ones sign-extended, as encodeFloat writes them).
		bits, w := dt.Bits(), dt.HostBytes()
		if bits < 1 || bits > 64 || w < 1 || w > 8 {
			return nil, false
		}
		shift := uint(64 - bits)
		var v uint64
		switch {
		case dt.IsUnsigned() && largest:
			v = uint64(math.MaxUint64) >> shift
		case dt.IsUnsigned():
			v = 0
		case largest:
			v = uint64(int64(math.MaxInt64) >> shift)
		default:
			v = uint64(int64(math.MinInt64) >> shift)
		}
		b = make([]byte, w)
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		return b, true
	}
	return nil, false
}

func inf(positive bool) float64 {
	if positive {
		return math.Inf(1)
	}
	return math.Inf(-1)
}

// Window describes reduce_window and select_and_scatter windows. Nil
// slices take the defaults (strides and dilations 1, padding 0).
type Window struct {
	Dimensions      []int64
	Strides         []int64
	BaseDilations   []int64 // reduce_window only
	WindowDilations []int64 // reduce_window only
	Padding         [][2]int64
}

func (w Window) params(rank int) windowParams {
	p := windowParams{dims: w.Dimensions, strides: w.Strides, baseDil: w.BaseDilations, winDil: w.WindowDilations, padding: w.Padding}
	if p.strides == nil {
		p.strides = ones(rank)
	}
	if p.baseDil == nil {
		p.baseDil = ones(rank)
	}
	if p.winDil == nil {
		p.winDil = ones(rank)
	}
	if p.padding == nil {
		p.padding = make([][2]int64, rank)
	}
	return p
}

// ReduceWindow adds stablehlo.reduce_window. body is as for Reduce.
func (fb *FuncBuilder) ReduceWindow(inputs, inits []*Value, w Window, body func(rb *FuncBuilder, args []*Value) []*Value) []*Value {
	const name = "stablehlo.reduce_window"
	ops := append(slices.Clone(inputs), inits...)
	n := len(inputs)
	if !fb.checkOperands(name, ops) {
		return deadN(n)
	}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadN(n)
	}
	if n == 0 || len(inits) != n {
		fb.fail(name, ops, "needs as many init values as inputs (at least one), got %d and %d", len(inits), n)
		return deadN(n)
	}
	p := w.params(ts[0].Rank())
	rts, err := inferReduceWindow(ts[:n], ts[n:], p, nil)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadN(n)
	}
	initTypes := valueTypes(inits)
	region, rets, ok := fb.buildRegion(name, ops, "body", append(slices.Clone(initTypes), initTypes...), body)
	if !ok {
		return deadN(n)
	}
	if !typesEqual(valueTypes(rets), initTypes) {
		fb.fail(name, ops, "body must return %s, got %s", typeList(initTypes), typeList(valueTypes(rets)))
		return deadN(n)
	}
	attrs := []NamedAttr{
		{Name: "window_dimensions", Value: I64Array(p.dims...)},
		{Name: "window_strides", Value: I64Array(p.strides...)},
		{Name: "base_dilations", Value: I64Array(p.baseDil...)},
		{Name: "window_dilations", Value: I64Array(p.winDil...)},
		{Name: "padding", Value: PaddingAttr(p.padding)},
	}
	op := NewOp(name, ops, rts, attrs...)
	op.AddRegion(region)
	fb.emit(op)
	return op.Results
}

// SelectAndScatter adds stablehlo.select_and_scatter: in each window of x
// the element chosen by selectFn (given two scalars, returns an i1 scalar)
// receives source's value, combined by scatterFn with what is there
// (starting from init).
func (fb *FuncBuilder) SelectAndScatter(x, source, init *Value, w Window,
	selectFn func(rb *FuncBuilder, a, b *Value) *Value, scatterFn func(rb *FuncBuilder, a, b *Value) *Value) *Value {
	const name = "stablehlo.select_and_scatter"
	if !fb.check3(name, x, source, init) {
		return deadValue(nil)
	}
	ops := []*Value{x, source, init}
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return deadValue(nil)
	}
	if w.BaseDilations != nil || w.WindowDilations != nil {
		fb.fail(name, ops, "select_and_scatter has no dilations")
		return deadValue(nil)
	}
	p := w.params(ts[0].Rank())
	if err := inferSelectAndScatter(ts[0], ts[1], ts[2], p); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	scalar := TensorType{DType: ts[0].DType}
	if selectFn == nil || scatterFn == nil {
		fb.fail(name, ops, "select and scatter closures must not be nil")
		return deadValue(nil)
	}
	selR, rets, ok := fb.buildRegion(name, ops, "select", []Type{scalar, scalar}, func(rb *FuncBuilder, args []*Value) []*Value {
		return []*Value{selectFn(rb, args[0], args[1])}
	})
	if !ok {
		return deadValue(nil)
	}
	if !TypesEqual(rets[0].Type, Scalar(xla.Bool)) {
		fb.fail(name, ops, "select must return tensor<i1>, got %s", rets[0].Type)
		return deadValue(nil)
	}
	scaR, rets, ok := fb.buildRegion(name, ops, "scatter", []Type{scalar, scalar}, func(rb *FuncBuilder, args []*Value) []*Value {
		return []*Value{scatterFn(rb, args[0], args[1])}
	})
	if !ok {
		return deadValue(nil)
	}
	if !TypesEqual(rets[0].Type, scalar) {
		fb.fail(name, ops, "scatter must return %s, got %s", scalar, rets[0].Type)
		return deadValue(nil)
	}
	op := NewOp(name, ops, []Type{x.Type},
		NamedAttr{Name: "window_dimensions", Value: I64Array(p.dims...)},
		NamedAttr{Name: "window_strides", Value: I64Array(p.strides...)},
		NamedAttr{Name: "padding", Value: PaddingAttr(p.padding)})
	op.AddRegion(selR)
	op.AddRegion(scaR)
	fb.emit(op)
	return op.Results[0]
}

// Sort adds stablehlo.sort of inputs (all of one shape) along dimension.
// comparator receives 2N scalars (lhs and rhs of input 0, then of input
// 1, ...) and returns an i1 scalar: true when lhs sorts before rhs.
func (fb *FuncBuilder) Sort(inputs []*Value, dimension int64, isStable bool, comparator func(rb *FuncBuilder, args []*Value) *Value) []*Value {
	const name = "stablehlo.sort"
	n := len(inputs)
	if !fb.checkOperands(name, inputs) {
		return deadN(n)
	}
	ts, ok := fb.tensorOperands(name, inputs, inputs...)
	if !ok {
		return deadN(n)
	}
	if err := inferSort(ts, dimension); err != nil {
		fb.fail(name, inputs, "%v", err)
		return deadN(n)
	}
	if comparator == nil {
		fb.fail(name, inputs, "comparator closure is nil")
		return deadN(n)
	}
	argTypes := make([]Type, 0, 2*n)
	for _, t := range ts {
		s := TensorType{DType: t.DType}
		argTypes = append(argTypes, s, s)
	}
	region, rets, ok := fb.buildRegion(name, inputs, "comparator", argTypes, func(rb *FuncBuilder, args []*Value) []*Value {
		return []*Value{comparator(rb, args)}
	})
	if !ok {
		return deadN(n)
	}
	if !TypesEqual(rets[0].Type, Scalar(xla.Bool)) {
		fb.fail(name, inputs, "comparator must return tensor<i1>, got %s", rets[0].Type)
		return deadN(n)
	}
	op := NewOp(name, slices.Clone(inputs), valueTypes(inputs),
		NamedAttr{Name: "dimension", Value: I64Attr(dimension)},
		NamedAttr{Name: "is_stable", Value: BoolAttr(isStable)})
	op.AddRegion(region)
	fb.emit(op)
	return op.Results
}

// Map adds stablehlo.map: computation receives one scalar per input and
// returns one scalar; dims must be all the inputs' dimensions in order.
func (fb *FuncBuilder) Map(inputs []*Value, dims []int64, computation func(rb *FuncBuilder, args []*Value) *Value) *Value {
	const name = "stablehlo.map"
	if !fb.checkOperands(name, inputs) {
		return deadValue(nil)
	}
	ts, ok := fb.tensorOperands(name, inputs, inputs...)
	if !ok {
		return deadValue(nil)
	}
	if err := inferMap(ts, dims); err != nil {
		fb.fail(name, inputs, "%v", err)
		return deadValue(nil)
	}
	if computation == nil {
		fb.fail(name, inputs, "computation closure is nil")
		return deadValue(nil)
	}
	region, rets, ok := fb.buildRegion(name, inputs, "computation", scalarTypes(inputs), func(rb *FuncBuilder, args []*Value) []*Value {
		return []*Value{computation(rb, args)}
	})
	if !ok {
		return deadValue(nil)
	}
	rt, isT := rets[0].TensorType()
	if !isT || rt.Rank() != 0 {
		fb.fail(name, inputs, "computation must return a scalar tensor, got %s", rets[0].Type)
		return deadValue(nil)
	}
	op := NewOp(name, slices.Clone(inputs), []Type{Tensor(rt.DType, ts[0].Dims...)}, NamedAttr{Name: "dimensions", Value: I64Array(dims...)})
	op.AddRegion(region)
	fb.emit(op)
	return op.Results[0]
}

// While adds stablehlo.while: starting from init, body runs while cond
// returns true. cond receives the loop values and returns an i1 scalar;
// body receives them and returns the next ones (of the same types).
func (fb *FuncBuilder) While(init []*Value, cond func(rb *FuncBuilder, args []*Value) *Value, body func(rb *FuncBuilder, args []*Value) []*Value) []*Value {
	const name = "stablehlo.while"
	n := len(init)
	if !fb.checkOperands(name, init) {
		return deadN(n)
	}
	types := valueTypes(init)
	if cond == nil {
		fb.fail(name, init, "cond closure is nil")
		return deadN(n)
	}
	condR, rets, ok := fb.buildRegion(name, init, "cond", types, func(rb *FuncBuilder, args []*Value) []*Value {
		return []*Value{cond(rb, args)}
	})
	if !ok {
		return deadValues(types)
	}
	if !TypesEqual(rets[0].Type, Scalar(xla.Bool)) {
		fb.fail(name, init, "cond must return tensor<i1>, got %s", rets[0].Type)
		return deadValues(types)
	}
	bodyR, rets, ok := fb.buildRegion(name, init, "body", types, body)
	if !ok {
		return deadValues(types)
	}
	if !typesEqual(valueTypes(rets), types) {
		fb.fail(name, init, "body must return %s, got %s", typeList(types), typeList(valueTypes(rets)))
		return deadValues(types)
	}
	op := NewOp(name, slices.Clone(init), types)
	op.AddRegion(condR)
	op.AddRegion(bodyR)
	fb.emit(op)
	return op.Results
}

// If adds stablehlo.if: pred (an i1 scalar) picks the branch whose
// returned values become the results; both branches must return the same
// types. When it fails it returns one placeholder per value the branches
// return: after an error, a branch closure that has not run yet is run on
// a builder that builds nothing, to count them.
func (fb *FuncBuilder) If(pred *Value, thenFn, elseFn func(rb *FuncBuilder) []*Value) []*Value {
	const name = "stablehlo.if"
	fns := []func(rb *FuncBuilder) []*Value{thenFn, elseFn}
	if !fb.check1(name, pred) {
		return fb.deadBranchResults(fns)
	}
	ops := []*Value{pred}
	if !TypesEqual(pred.Type, Scalar(xla.Bool)) {
		fb.fail(name, ops, "pred must be tensor<i1>")
		return fb.deadBranchResults(fns)
	}
	rs, types, ok := fb.branches(name, ops, fns, []string{"true_branch", "false_branch"})
	if !ok {
		if types == nil {
			return fb.deadBranchResults(fns)
		}
		return deadValues(types)
	}
	op := NewOp(name, ops, types)
	for _, r := range rs {
		op.AddRegion(r)
	}
	fb.emit(op)
	return op.Results
}

// Case adds stablehlo.case: index (an i32 scalar) picks the branch to run
// (out-of-range indices run the last); every branch returns the same types.
// When it fails it returns placeholders as If does (one without branches).
func (fb *FuncBuilder) Case(index *Value, branches ...func(rb *FuncBuilder) []*Value) []*Value {
	const name = "stablehlo.case"
	if !fb.check1(name, index) {
		return fb.deadBranchResults(branches)
	}
	ops := []*Value{index}
	if !TypesEqual(index.Type, Scalar(xla.Int32)) {
		fb.fail(name, ops, "index must be tensor<i32>")
		return fb.deadBranchResults(branches)
	}
	if len(branches) == 0 {
		fb.fail(name, ops, "needs at least one branch")
		return deadN(1)
	}
	what := make([]string, len(branches))
	for i := range what {
		what[i] = "branch " + itoa(i)
	}
	rs, types, ok := fb.branches(name, ops, branches, what)
	if !ok {
		if types == nil {
			return fb.deadBranchResults(branches)
		}
		return deadValues(types)
	}
	op := NewOp(name, ops, types)
	for _, r := range rs {
		op.AddRegion(r)
	}
	fb.emit(op)
	return op.Results
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// branches builds argument-less regions that must return the same types.
// On failure, types are those of the first branch's values (nil when the
// first branch did not run), for placeholders.
func (fb *FuncBuilder) branches(name string, ops []*Value, fns []func(rb *FuncBuilder) []*Value, what []string) ([]*Region, []Type, bool) {
	var types []Type
	rs := make([]*Region, len(fns))
	for i, fn := range fns {
		if fn == nil {
			fb.fail(name, ops, "%s closure is nil", what[i])
			return nil, types, false
		}
		r, rets, ok := fb.buildRegion(name, ops, what[i], nil, func(rb *FuncBuilder, _ []*Value) []*Value { return fn(rb) })
		if !ok {
			if i == 0 {
				types = placeholderTypes(rets)
			}
			return nil, types, false
		}
		ts := valueTypes(rets)
		if i == 0 {
			types = ts
		} else if !typesEqual(ts, types) {
			fb.fail(name, ops, "%s returns %s, %s returns %s", what[0], typeList(types), what[i], typeList(ts))
			return nil, types, false
		}
		rs[i] = r
	}
	return rs, types, true
}

// placeholderTypes returns the types of vs (nil for a nil value), never a
// nil slice.
func placeholderTypes(vs []*Value) []Type {
	ts := make([]Type, len(vs))
	for i, v := range vs {
		if v != nil {
			ts[i] = v.Type
		}
	}
	return ts
}

// deadBranchResults returns the placeholders of a failed if or case, after
// its error was recorded: one per value its first non-nil branch closure
// returns, run on a detached block where every op is skipped (the sticky
// error), or one when there is no closure to run. A nil fb runs the
// closure with a nil FuncBuilder, which builds nothing either.
func (fb *FuncBuilder) deadBranchResults(fns []func(rb *FuncBuilder) []*Value) []*Value {
	if fb.live() && fb.s.b.err == nil {
		return deadN(1)
	}
	for _, fn := range fns {
		if fn == nil {
			continue
		}
		if !fb.live() {
			return deadValues(placeholderTypes(fn(nil)))
		}
		s := &scope{b: fb.s.b, fn: fb.s.fn, top: fb.s.top, block: NewBlock(), parent: fb.s}
		rets := fn(&FuncBuilder{s: s, loc: fb.loc, hasLoc: fb.hasLoc})
		s.closed = true
		return deadValues(placeholderTypes(rets))
	}
	return deadN(1)
}

// OptimizationBarrier adds stablehlo.optimization_barrier: the results are
// the operands, and no computation moves across it.
func (fb *FuncBuilder) OptimizationBarrier(values ...*Value) []*Value {
	const name = "stablehlo.optimization_barrier"
	if !fb.checkOperands(name, values) {
		return deadN(len(values))
	}
	return fb.emitN(name, slices.Clone(values), valueTypes(values)).Results
}

// Composite adds stablehlo.composite named name (e.g. "my.op") whose
// meaning is the call of decomposition; its results have the
// decomposition's result types. attrs become composite_attributes.
func (fb *FuncBuilder) Composite(name string, decomposition *FuncBuilder, inputs []*Value, attrs DictAttr, version int32) []*Value {
	const op = "stablehlo.composite"
	// A failed composite returns one placeholder per result of the
	// decomposition when they are known, one otherwise.
	dead := func() []*Value {
		if decomposition.live() && decomposition.s.top.declared {
			return deadValues(decomposition.s.fn.ResultTypes)
		}
		return deadN(1)
	}
	if !fb.checkOperands(op, inputs) {
		return dead()
	}
	if !decomposition.live() || decomposition.s.b != fb.s.b {
		fb.fail(op, inputs, "decomposition must be a function of this module builder")
		return dead()
	}
	df := decomposition.s.fn
	if !decomposition.s.top.declared {
		fb.fail(op, inputs, "decomposition @%s has no known result types", df.Name)
		return dead()
	}
	if !typesEqual(df.ArgTypes(), valueTypes(inputs)) {
		fb.fail(op, inputs, "decomposition @%s takes %s", df.Name, typeList(df.ArgTypes()))
		return deadValues(df.ResultTypes)
	}
	if err := checkAttrs(attrs); err != nil {
		fb.fail(op, inputs, "composite_attributes: %v", err)
		return deadValues(df.ResultTypes)
	}
	if name == "" {
		fb.fail(op, inputs, "composite name is empty")
		return deadValues(df.ResultTypes)
	}
	na := []NamedAttr{{Name: "name", Value: StringAttr(name)}}
	if attrs != nil {
		na = append(na, NamedAttr{Name: "composite_attributes", Value: attrs})
	}
	na = append(na, NamedAttr{Name: "decomposition", Value: SymbolRefAttr(df.Name)})
	if version != 0 {
		na = append(na, NamedAttr{Name: "version", Value: I32Attr(version)})
	}
	return fb.emitN(op, slices.Clone(inputs), slices.Clone(df.ResultTypes), na...).Results
}
