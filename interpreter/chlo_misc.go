package interpreter

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// chlo.top_k, chlo.constant_like and chlo.ragged_dot.

func init() {
	registerKernel("chlo.top_k", chloTopKKernel)
	mustRegister(RegisterOpCheck("chlo.top_k", chloCheckTopK))
	registerKernel("chlo.constant_like", chloConstantLikeKernel)
	mustRegister(RegisterOpCheck("chlo.constant_like", func(op *stablehlo.Op) error {
		_, err := chloConstantLikeValue(op)
		return err
	}))
	registerKernel("chlo.ragged_dot", chloRaggedDotKernel)
	mustRegister(RegisterOpCheck("chlo.ragged_dot", func(op *stablehlo.Op) error {
		_, err := chloRaggedPlanOf(op)
		return err
	}))
}

// chloTopKArgs reads k and checks the operand and result types.
func chloTopKArgs(op *stablehlo.Op) (k int64, err error) {
	ts, err := chloOperandTypes(op, 1)
	if err != nil {
		return 0, err
	}
	a := op.Attr("k")
	ia, ok := a.(stablehlo.IntAttr)
	if !ok {
		return 0, fmt.Errorf("k must be an integer attribute, got %T", a)
	}
	k = ia.Value
	t := ts[0]
	if len(t.Dims) == 0 {
		return 0, fmt.Errorf("operand %v must have rank >= 1", t)
	}
	last := t.Dims[len(t.Dims)-1]
	if last == stablehlo.DynamicDim {
		return 0, fmt.Errorf("operand %v has a dynamic last dimension: top_k needs its size", t)
	}
	if k < 0 || k > last {
		return 0, fmt.Errorf("k = %d is not in [0, %d] (the last dimension)", k, last)
	}
	if t.DType.IsComplex() || StorageOf(t.DType) == StorageInvalid {
		return 0, ewDTypeError(op, t.DType)
	}
	if len(op.Results) != 2 {
		return 0, fmt.Errorf("has %d results, want 2 (values, indices)", len(op.Results))
	}
	want := append(slices.Clone(t.Dims[:len(t.Dims)-1]), k)
	for i, dt := range []xla.DType{t.DType, xla.Int32} {
		rt, err := ResultTensorType(op, i)
		if err != nil {
			return 0, err
		}
		if rt.DType != dt || !chloSameDims(rt.Dims, want) {
			return 0, fmt.Errorf("result %d is %v, want %v", i, rt, stablehlo.TensorOf(xla.MakeShape(dt, want...)))
		}
	}
	return k, nil
}

func chloCheckTopK(op *stablehlo.Op) error {
	_, err := chloTopKArgs(op)
	return err
}

// chloTopKKernel finds the k largest elements of every row (the last
// dimension), sorted descending; equal elements keep their order (the
// lower index first). Floats are ordered totally, as XLA's TopK does:
// -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN.
func chloTopKKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	k, err := chloTopKArgs(op)
	if err != nil {
		return nil, err
	}
	a, err := ewTensor(args, 0)
	if err != nil {
		return nil, err
	}
	dims := a.Shape.Dims
	if len(dims) == 0 || k > dims[len(dims)-1] {
		return nil, fmt.Errorf("operand %s does not fit k = %d", ewType(a.Shape), k)
	}
	n := int(dims[len(dims)-1])
	rows := 0
	if n > 0 {
		rows = a.Len() / n
	}
	outDims := append(slices.Clone(dims[:len(dims)-1]), k)
	vals := NewTensor(xla.Shape{DType: a.Shape.DType, Dims: outDims})
	idx := NewTensor(xla.MakeShape(xla.Int32, outDims...))
	id := idx.Data.([]int32)
	stop := x.stopFlag()
	var ok bool
	switch ad := a.Data.(type) {
	case []float32:
		ok = chloTopK(ad, vals.Data.([]float32), id, rows, n, int(k), stop, ewTotalKey32)
	case []float64:
		ok = chloTopK(ad, vals.Data.([]float64), id, rows, n, int(k), stop, ewTotalKey64)
	case []int8:
		ok = chloTopK(ad, vals.Data.([]int8), id, rows, n, int(k), stop, func(v int8) int8 { return v })
	case []int16:
		ok = chloTopK(ad, vals.Data.([]int16), id, rows, n, int(k), stop, func(v int16) int16 { return v })
	case []int32:
		ok = chloTopK(ad, vals.Data.([]int32), id, rows, n, int(k), stop, func(v int32) int32 { return v })
	case []int64:
		ok = chloTopK(ad, vals.Data.([]int64), id, rows, n, int(k), stop, func(v int64) int64 { return v })
	case []uint8:
		ok = chloTopK(ad, vals.Data.([]uint8), id, rows, n, int(k), stop, func(v uint8) uint8 { return v })
	case []uint16:
		ok = chloTopK(ad, vals.Data.([]uint16), id, rows, n, int(k), stop, func(v uint16) uint16 { return v })
	case []uint32:
		ok = chloTopK(ad, vals.Data.([]uint32), id, rows, n, int(k), stop, func(v uint32) uint32 { return v })
	case []uint64:
		ok = chloTopK(ad, vals.Data.([]uint64), id, rows, n, int(k), stop, func(v uint64) uint64 { return v })
	case []bool: // false < true, as i1 (what chlo's decomposition gives)
		ok = chloTopK(ad, vals.Data.([]bool), id, rows, n, int(k), stop, func(v bool) uint8 {
			if v {
				return 1
			}
			return 0
		})
	}
	if !ok {
		return nil, ewDTypeError(op, a.Shape.DType)
	}
	return []Value{vals, idx}, nil
}

// chloTopK fills vals and idx with the k largest elements of each n-long
// row of a and their positions, ordered by key (the first of equal keys
// first); it ends early, rows unfilled, once stop is set. It reports
// false when n does not fit the i32 indices. A small k keeps the best k
// in a heap (n log k steps), a large one sorts the row.
func chloTopK[T any, K cmp.Ordered](a, vals []T, idx []int32, rows, n, k int, stop *atomic.Bool, key func(T) K) bool {
	if int64(n) > math.MaxInt32 {
		return false
	}
	if k == 0 {
		return true
	}
	ewSplit(rows, func(lo, hi int) {
		keys := make([]K, n)
		// before reports whether position p comes before q in the result.
		before := func(p, q int) bool { return keys[p] > keys[q] || keys[p] == keys[q] && p < q }
		heap := chloTopKHeapOn && k*8 < n
		var order, tmp []int
		if heap {
			order = make([]int, 0, k)
		} else {
			order, tmp = make([]int, n), make([]int, n)
		}
		for r := lo; r < hi; r++ {
			row := a[r*n : (r+1)*n]
			for i, v := range row {
				if i%stopPiece == 0 && stopped(stop) {
					return
				}
				keys[i] = key(v)
			}
			if heap {
				order = chloTopKHeap(order[:0], n, k, before, stop)
			} else {
				for i := range order {
					order[i] = i
				}
				shpStableSort(order, tmp, before, stop)
			}
			if stopped(stop) {
				return // order is partial
			}
			for j, p := range order[:k] {
				vals[r*k+j] = row[p]
				idx[r*k+j] = int32(p)
			}
		}
	})
	return true
}

// chloTopKHeapOn lets a small k use chloTopKHeap (a var for benchmarks to
// compare it with sorting the row).
var chloTopKHeapOn = true

// chloTopKHeap returns the k positions of 0..n-1 that come first by
// before, in that order, using h (capacity k) as a heap whose root is the
// last of those found so far. Once stop is set it returns what it has.
func chloTopKHeap(h []int, n, k int, before func(p, q int) bool, stop *atomic.Bool) []int {
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && before(h[c], h[c+1]) {
				c++ // the later child
			}
			if !before(h[i], h[c]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for p := 0; p < n; p++ {
		if p%stopPiece == 0 && stopped(stop) {
			return h
		}
		if len(h) < k {
			h = append(h, p)
			for i := len(h) - 1; i > 0; {
				parent := (i - 1) / 2
				if !before(h[parent], h[i]) {
					break
				}
				h[parent], h[i] = h[i], h[parent]
				i = parent
			}
			continue
		}
		if before(p, h[0]) {
			h[0] = p
			down(0)
		}
	}
	slices.SortFunc(h, func(p, q int) int {
		if before(p, q) {
			return -1
		}
		return 1
	})
	return h
}

// chloConstantLikeValue reads the value attribute of constant_like as a
// one-element tensor of the result's element type.
func chloConstantLikeValue(op *stablehlo.Op) (*Tensor, error) {
	ts, err := chloOperandTypes(op, 1)
	if err != nil {
		return nil, err
	}
	rt, err := ewResultType(op, 0)
	if err != nil {
		return nil, err
	}
	if !chloSameDims(rt.Dims, ts[0].Dims) {
		return nil, fmt.Errorf("result %v does not have the operand's shape %v", rt, ts[0])
	}
	v := NewTensor(xla.MakeShape(rt.DType))
	switch a := op.Attr("value").(type) {
	case stablehlo.FloatAttr:
		if a.Type != xla.Invalid && a.Type != rt.DType {
			return nil, fmt.Errorf("value %v has type %v, the result %v", a.Value, a.Type, rt.DType)
		}
		if !chloSetScalar(v, a.Value, 0) {
			return nil, fmt.Errorf("float value for result element type %v", rt.DType)
		}
	case stablehlo.IntAttr:
		if a.Type != xla.Invalid && a.Type != rt.DType && a.Type != xla.Int64 {
			return nil, fmt.Errorf("value %v has type %v, the result %v", a.Value, a.Type, rt.DType)
		}
		if rt.DType.IsUnsigned() {
			if !chloSetScalar(v, float64(uint64(a.Value)), uint64(a.Value)) {
				return nil, fmt.Errorf("integer value for result element type %v", rt.DType)
			}
		} else if !chloSetScalar(v, float64(a.Value), uint64(a.Value)) {
			return nil, fmt.Errorf("integer value for result element type %v", rt.DType)
		}
	case stablehlo.BoolAttr:
		if rt.DType != xla.Bool {
			return nil, fmt.Errorf("bool value for result element type %v", rt.DType)
		}
		v.Data.([]bool)[0] = bool(a)
	case stablehlo.DenseElementsAttr:
		// One element, or a splat (of any static shape) standing for
		// its one value: only that is decoded, a splat is not expanded.
		n := a.Type.Size()
		if a.Type.DType != rt.DType || !(n == 1 || a.Splat && n > 0) {
			return nil, fmt.Errorf("value %v must be one element (or a splat) of type %v", a.Type, rt.DType)
		}
		t, err := TensorFromHost(v.Shape, a.Data)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		return t, nil
	case nil:
		return nil, fmt.Errorf("missing value attribute")
	default:
		return nil, fmt.Errorf("value must be a typed scalar attribute, got %T", a)
	}
	return v, nil
}

// chloSetScalar stores f (floats, complex) or the bits u (integers) into
// the one-element tensor t.
func chloSetScalar(t *Tensor, f float64, u uint64) bool {
	dt := t.Shape.DType
	switch d := t.Data.(type) {
	case []float32:
		d[0] = chloRound(dt)(f)
	case []float64:
		d[0] = f
	case []complex64:
		d[0] = complex(float32(f), 0)
	case []complex128:
		d[0] = complex(f, 0)
	case []int8:
		d[0] = int8(WrapInt(dt, int64(u)))
	case []int16:
		d[0] = int16(u)
	case []int32:
		d[0] = int32(u)
	case []int64:
		d[0] = int64(u)
	case []uint8:
		d[0] = uint8(WrapUint(dt, u))
	case []uint16:
		d[0] = uint16(u)
	case []uint32:
		d[0] = uint32(u)
	case []uint64:
		d[0] = u
	default:
		return false
	}
	if dt.IsInt() && f != math.Trunc(f) {
		return false
	}
	return true
}

func chloConstantLikeKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	v, err := chloConstantLikeValue(op)
	if err != nil {
		return nil, err
	}
	if _, err := ewTensor(args, 0); err != nil {
		return nil, err
	}
	out, err := ewResult(op, 0)
	if err != nil {
		return nil, err
	}
	if err := shpFill(out, v); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// chloRaggedPlan is a checked ragged_dot: its operand and result types
// and the role of every dimension.
type chloRaggedPlan struct {
	*stablehlo.RaggedDotPlan
	dims                  stablehlo.RaggedDotDimensionNumbers
	lhs, rhs, groups, res stablehlo.TensorType
}

func chloRaggedPlanOf(op *stablehlo.Op) (*chloRaggedPlan, error) {
	ts, err := chloOperandTypes(op, 3)
	if err != nil {
		return nil, err
	}
	a := op.Attr("ragged_dot_dimension_numbers")
	d, ok := a.(stablehlo.RaggedDotDimensionNumbers)
	if !ok {
		if a == nil {
			return nil, fmt.Errorf("missing ragged_dot_dimension_numbers")
		}
		return nil, fmt.Errorf("ragged_dot_dimension_numbers is %v, not #chlo.ragged_dot<...>", a)
	}
	rt, err := ewResultType(op, 0)
	if err != nil {
		return nil, err
	}
	for _, t := range append(ts[:2:2], rt) {
		if slices.Contains(t.Dims, stablehlo.DynamicDim) {
			return nil, fmt.Errorf("dynamic shape %v is not supported", t)
		}
	}
	want, err := stablehlo.InferRaggedDot(ts[0], ts[1], ts[2], d, rt.DType)
	if err != nil {
		return nil, err
	}
	for _, t := range append(ts[:2:2], rt) {
		if !t.DType.IsFloat() {
			// Valid, but this kernel sums in float64: chlo.Expand turns
			// the op into dot_general, which the interpreter runs for
			// every type.
			return nil, fmt.Errorf("the interpreter evaluates chlo.ragged_dot of float types only, not %s (chlo.Expand rewrites it as dot_general, which takes every type)", t.DType)
		}
	}
	if !chloSameDims(want.Dims, rt.Dims) {
		return nil, fmt.Errorf("result %v does not have the dimensions %v", rt, want.Dims)
	}
	p, err := stablehlo.PlanRaggedDot(ts[0], ts[1], ts[2], d)
	if err != nil {
		return nil, err
	}
	return &chloRaggedPlan{RaggedDotPlan: p, dims: d, lhs: ts[0], rhs: ts[1], groups: ts[2], res: rt}, nil
}

// chloFloatAt returns a reader of a float tensor's elements as float64.
func chloFloatAt(t *Tensor) func(int64) float64 {
	switch d := t.Data.(type) {
	case []float32:
		return func(i int64) float64 { return float64(d[i]) }
	case []float64:
		return func(i int64) float64 { return d[i] }
	}
	return nil
}

// chloRaggedDotKernel evaluates ragged_dot: the lhs ragged dimension is cut
// into consecutive groups of group_sizes entries (group_sizes of shape
// [prefix..., g] gives each index of the prefix dimensions its own sizes;
// [g] is broadcast). Ragged non-contracting: rows of group i multiply rhs
// group i. Ragged contracting: result group i contracts over group i's
// slice only. Ragged batch: an ordinary batched dot. Entries past the sum
// of the group sizes give zeros; negative sizes or sums beyond the ragged
// dimension are errors. Accumulation is in float64, rounded once to the
// result type.
func chloRaggedDotKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	p, err := chloRaggedPlanOf(op)
	if err != nil {
		return nil, err
	}
	var ts [3]*Tensor
	for i := range ts {
		if ts[i], err = ewTensor(args, i); err != nil {
			return nil, err
		}
	}
	lhs, rhs := ts[0], ts[1]
	if !chloSameDims(lhs.Shape.Dims, p.lhs.Dims) || !chloSameDims(rhs.Shape.Dims, p.rhs.Dims) {
		return nil, fmt.Errorf("operands %s, %s do not match the op's types", ewType(lhs.Shape), ewType(rhs.Shape))
	}
	gs, err := shpInts(ts[2])
	if err != nil {
		return nil, err
	}
	// starts[r*(g+1)+j] is where group j of group_sizes row r begins.
	ng := int(p.NumGroups)
	rows := 1
	if ng > 0 {
		rows = len(gs) / ng
	}
	lim := lhs.Shape.Dims[p.Ragged]
	starts := make([]int64, rows*(ng+1))
	for r := 0; r < rows; r++ {
		for j := 0; j < ng; j++ {
			g := gs[r*ng+j]
			if g < 0 {
				return nil, fmt.Errorf("group_sizes[%d] = %d is negative", r*ng+j, g)
			}
			starts[r*(ng+1)+j+1] = starts[r*(ng+1)+j] + g
		}
		if s := starts[r*(ng+1)+ng]; s > lim {
			return nil, fmt.Errorf("group_sizes sum to %d, more than the ragged dimension's %d", s, lim)
		}
	}
	// rowOf maps a full lhs index to its group_sizes row.
	prefixStride := make([]int64, len(p.GroupPrefix))
	if len(gs) > ng {
		st := int64(1)
		for i := len(p.GroupPrefix) - 1; i >= 0; i-- {
			prefixStride[i] = st
			st *= lhs.Shape.Dims[p.GroupPrefix[i]]
		}
	}
	rowOf := func(li []int64) int {
		r := int64(0)
		for i, d := range p.GroupPrefix {
			r += li[d] * prefixStride[i]
		}
		return int(r)
	}
	groupOf := func(row int, i int64) int64 { // -1 past the last group
		st := starts[row*(ng+1) : (row+1)*(ng+1)]
		for g := 0; g < ng; g++ {
			if i < st[g+1] {
				return int64(g)
			}
		}
		return -1
	}
	out, err := ewResult(op, 0)
	if err != nil {
		return nil, err
	}
	la, ra := chloFloatAt(lhs), chloFloatAt(rhs)
	if la == nil {
		return nil, ewDTypeError(op, lhs.Shape.DType)
	}
	if ra == nil {
		return nil, ewDTypeError(op, rhs.Shape.DType)
	}
	ls, rs := Strides(lhs.Shape.Dims), Strides(rhs.Shape.Dims)
	d := p.dims
	kDims := make([]int64, len(d.LhsContractingDims))
	for i, c := range d.LhsContractingDims {
		kDims[i] = lhs.Shape.Dims[c]
	}
	nK := int64(1)
	for _, k := range kDims {
		nK *= k
	}
	res := make([]float64, out.Len())
	idx := make([]int64, len(p.Dims))
	kIdx := make([]int64, len(kDims))
	li := make([]int64, len(lhs.Shape.Dims))
	ri := make([]int64, len(rhs.Shape.Dims))
	offset := func(ix, st []int64) int64 {
		o := int64(0)
		for i, v := range ix {
			o += v * st[i]
		}
		return o
	}
	poll := stopCounter{stop: x.stopFlag()}
	for o := range res {
		if poll.add(max(nK, 1)) {
			return nil, errStopped
		}
		if o > 0 {
			NextIndex(idx, p.Dims)
		}
		pos := 0
		g := int64(-1)
		if p.Mode == stablehlo.RaggedContracting {
			g = idx[0]
			pos = 1
		}
		for i := range d.LhsBatchingDims {
			li[d.LhsBatchingDims[i]] = idx[pos]
			ri[d.RhsBatchingDims[i]] = idx[pos]
			pos++
		}
		for _, i := range p.LhsFree {
			li[i] = idx[pos]
			pos++
		}
		for _, i := range p.RhsFree {
			ri[i] = idx[pos]
			pos++
		}
		switch p.Mode {
		case stablehlo.RaggedNonContracting:
			g = groupOf(rowOf(li), li[p.Ragged])
			if g < 0 {
				continue // past the last group: zero
			}
			ri[d.RhsGroupDims[0]] = g
		case stablehlo.RaggedBatch:
			if groupOf(rowOf(li), li[p.Ragged]) < 0 {
				continue
			}
		}
		sum := 0.0
		clear(kIdx)
		for k := int64(0); k < nK; k++ {
			if k > 0 {
				NextIndex(kIdx, kDims)
			}
			for i, kk := range kIdx {
				li[d.LhsContractingDims[i]] = kk
				ri[d.RhsContractingDims[i]] = kk
			}
			if p.Mode == stablehlo.RaggedContracting {
				row := rowOf(li)
				st := starts[row*(ng+1):]
				if r := li[p.Ragged]; r < st[g] || r >= st[g+1] {
					continue
				}
			}
			sum += la(offset(li, ls)) * ra(offset(ri, rs))
		}
		res[o] = sum
	}
	switch od := out.Data.(type) {
	case []float32:
		round := chloRound(out.Shape.DType)
		for i, v := range res {
			od[i] = round(v)
		}
	case []float64:
		copy(od, res)
	default:
		return nil, ewDTypeError(op, out.Shape.DType)
	}
	return []Value{out}, nil
}
