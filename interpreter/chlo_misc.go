package interpreter

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// chlo.top_k, chlo.constant_like and chlo.ragged_dot.

func init() {
	RegisterKernel("chlo.top_k", chloTopKKernel)
	RegisterOpCheck("chlo.top_k", chloCheckTopK)
	RegisterKernel("chlo.constant_like", chloConstantLikeKernel)
	RegisterOpCheck("chlo.constant_like", func(op *stablehlo.Op) error {
		_, err := chloConstantLikeValue(op)
		return err
	})
	RegisterKernel("chlo.ragged_dot", chloRaggedDotKernel)
	RegisterOpCheck("chlo.ragged_dot", func(op *stablehlo.Op) error {
		_, err := chloRaggedPlanOf(op)
		return err
	})
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
	if k < 0 || k > last {
		return 0, fmt.Errorf("k = %d is not in [0, %d] (the last dimension)", k, last)
	}
	if t.DType == xla.Bool || t.DType.IsComplex() || StorageOf(t.DType) == StorageInvalid {
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
	var ok bool
	switch ad := a.Data.(type) {
	case []float32:
		ok = chloTopK(ad, vals.Data.([]float32), id, rows, n, int(k), ewTotalKey32)
	case []float64:
		ok = chloTopK(ad, vals.Data.([]float64), id, rows, n, int(k), ewTotalKey64)
	case []int8:
		ok = chloTopK(ad, vals.Data.([]int8), id, rows, n, int(k), func(v int8) int8 { return v })
	case []int16:
		ok = chloTopK(ad, vals.Data.([]int16), id, rows, n, int(k), func(v int16) int16 { return v })
	case []int32:
		ok = chloTopK(ad, vals.Data.([]int32), id, rows, n, int(k), func(v int32) int32 { return v })
	case []int64:
		ok = chloTopK(ad, vals.Data.([]int64), id, rows, n, int(k), func(v int64) int64 { return v })
	case []uint8:
		ok = chloTopK(ad, vals.Data.([]uint8), id, rows, n, int(k), func(v uint8) uint8 { return v })
	case []uint16:
		ok = chloTopK(ad, vals.Data.([]uint16), id, rows, n, int(k), func(v uint16) uint16 { return v })
	case []uint32:
		ok = chloTopK(ad, vals.Data.([]uint32), id, rows, n, int(k), func(v uint32) uint32 { return v })
	case []uint64:
		ok = chloTopK(ad, vals.Data.([]uint64), id, rows, n, int(k), func(v uint64) uint64 { return v })
	}
	if !ok {
		return nil, ewDTypeError(op, a.Shape.DType)
	}
	return []Value{vals, idx}, nil
}

func chloTopK[T any, K cmp.Ordered](a, vals []T, idx []int32, rows, n, k int, key func(T) K) bool {
	if int64(n) > math.MaxInt32 {
		return false
	}
	ewSplit(rows, func(lo, hi int) {
		order := make([]int32, n)
		keys := make([]K, n)
		for r := lo; r < hi; r++ {
			row := a[r*n : (r+1)*n]
			for i := range order {
				order[i] = int32(i)
				keys[i] = key(row[i])
			}
			slices.SortStableFunc(order, func(p, q int32) int { return cmp.Compare(keys[q], keys[p]) })
			for j := 0; j < k; j++ {
				vals[r*k+j] = row[order[j]]
				idx[r*k+j] = order[j]
			}
		}
	})
	return true
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
		t, err := TensorFromAttr(a)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		if t.Len() != 1 || t.Shape.DType != rt.DType {
			return nil, fmt.Errorf("value %v must be one element of type %v", a.Type, rt.DType)
		}
		return &Tensor{Shape: v.Shape, Data: t.Data}, nil
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

// chloRaggedDims is #chlo.ragged_dot<...>.
type chloRaggedDims struct {
	lhsBatch, rhsBatch, lhsContract, rhsContract, lhsRagged, rhsGroup []int64
}

var chloRaggedField = regexp.MustCompile(`(\w+)\s*=\s*\[([^\]]*)\]`)

// chloParseRaggedDims parses the text of #chlo.ragged_dot<name = [..], ...>.
func chloParseRaggedDims(a stablehlo.Attribute) (chloRaggedDims, error) {
	var d chloRaggedDims
	var text string
	switch a := a.(type) {
	case stablehlo.OpaqueAttr:
		text = string(a)
	case fmt.Stringer:
		text = a.String()
	case nil:
		return d, fmt.Errorf("missing ragged_dot_dimension_numbers")
	default:
		return d, fmt.Errorf("ragged_dot_dimension_numbers is %T, not #chlo.ragged_dot<...>", a)
	}
	body, ok := strings.CutPrefix(strings.TrimSpace(text), "#chlo.ragged_dot<")
	if !ok || !strings.HasSuffix(body, ">") {
		return d, fmt.Errorf("ragged_dot_dimension_numbers %q is not #chlo.ragged_dot<...>", text)
	}
	fields := map[string]*[]int64{
		"lhs_batching_dimensions": &d.lhsBatch, "rhs_batching_dimensions": &d.rhsBatch,
		"lhs_contracting_dimensions": &d.lhsContract, "rhs_contracting_dimensions": &d.rhsContract,
		"lhs_ragged_dimensions": &d.lhsRagged, "rhs_group_dimensions": &d.rhsGroup,
	}
	for _, m := range chloRaggedField.FindAllStringSubmatch(body, -1) {
		p, ok := fields[m[1]]
		if !ok {
			return d, fmt.Errorf("ragged_dot_dimension_numbers: unknown field %s", m[1])
		}
		for _, s := range strings.Split(m[2], ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return d, fmt.Errorf("ragged_dot_dimension_numbers: %s: %w", m[1], err)
			}
			*p = append(*p, v)
		}
	}
	return d, nil
}

// chloRaggedPlan is a checked ragged_dot: the role of every dimension.
type chloRaggedPlan struct {
	dims                  chloRaggedDims
	lhs, rhs, groups, res stablehlo.TensorType
	mode                  int     // 0: ragged non-contracting, 1: ragged contracting, 2: ragged batch
	lhsFree, rhsFree      []int64 // dimensions that are neither batch, contracting nor group
	ragged                int64
	numGroups             int64
	resDims               []int64
}

func chloRaggedPlanOf(op *stablehlo.Op) (*chloRaggedPlan, error) {
	ts, err := chloOperandTypes(op, 3)
	if err != nil {
		return nil, err
	}
	d, err := chloParseRaggedDims(op.Attr("ragged_dot_dimension_numbers"))
	if err != nil {
		return nil, err
	}
	rt, err := ewResultType(op, 0)
	if err != nil {
		return nil, err
	}
	p := &chloRaggedPlan{dims: d, lhs: ts[0], rhs: ts[1], groups: ts[2], res: rt}
	if !p.lhs.DType.IsFloat() || p.lhs.DType != p.rhs.DType || !rt.DType.IsFloat() {
		return nil, fmt.Errorf("takes float operands of one type and a float result, got %v, %v -> %v", p.lhs.DType, p.rhs.DType, rt.DType)
	}
	if !p.groups.DType.IsInt() || len(p.groups.Dims) != 1 {
		return nil, fmt.Errorf("group_sizes %v must be a 1-D integer tensor", p.groups)
	}
	p.numGroups = p.groups.Dims[0]
	lr, rr := int64(len(p.lhs.Dims)), int64(len(p.rhs.Dims))
	inRange := func(what string, v []int64, rank int64) error {
		for _, x := range v {
			if x < 0 || x >= rank {
				return fmt.Errorf("%s %v out of range for rank %d", what, v, rank)
			}
		}
		return nil
	}
	for _, c := range []struct {
		what string
		v    []int64
		rank int64
	}{{"lhs_batching_dimensions", d.lhsBatch, lr}, {"rhs_batching_dimensions", d.rhsBatch, rr},
		{"lhs_contracting_dimensions", d.lhsContract, lr}, {"rhs_contracting_dimensions", d.rhsContract, rr},
		{"lhs_ragged_dimensions", d.lhsRagged, lr}, {"rhs_group_dimensions", d.rhsGroup, rr}} {
		if err := inRange(c.what, c.v, c.rank); err != nil {
			return nil, err
		}
	}
	if len(d.lhsBatch) != len(d.rhsBatch) || len(d.lhsContract) != len(d.rhsContract) {
		return nil, fmt.Errorf("batching or contracting dimension lists of lhs and rhs differ in length")
	}
	for i := range d.lhsBatch {
		if p.lhs.Dims[d.lhsBatch[i]] != p.rhs.Dims[d.rhsBatch[i]] {
			return nil, fmt.Errorf("batching dimensions %d and %d differ in size", d.lhsBatch[i], d.rhsBatch[i])
		}
	}
	for i := range d.lhsContract {
		if p.lhs.Dims[d.lhsContract[i]] != p.rhs.Dims[d.rhsContract[i]] {
			return nil, fmt.Errorf("contracting dimensions %d and %d differ in size", d.lhsContract[i], d.rhsContract[i])
		}
	}
	if len(d.lhsRagged) != 1 {
		return nil, fmt.Errorf("lhs_ragged_dimensions %v must hold one dimension", d.lhsRagged)
	}
	p.ragged = d.lhsRagged[0]
	switch {
	case slices.Contains(d.lhsContract, p.ragged):
		p.mode = 1
	case slices.Contains(d.lhsBatch, p.ragged):
		p.mode = 2
	}
	if p.mode == 0 {
		if len(d.rhsGroup) != 1 || p.rhs.Dims[d.rhsGroup[0]] != p.numGroups {
			return nil, fmt.Errorf("a ragged non-contracting dimension needs one rhs_group_dimensions of size %d, got %v", p.numGroups, d.rhsGroup)
		}
	} else if len(d.rhsGroup) != 0 {
		return nil, fmt.Errorf("rhs_group_dimensions %v must be empty when the ragged dimension is a %s dimension", d.rhsGroup, map[int]string{1: "contracting", 2: "batching"}[p.mode])
	}
	for i := int64(0); i < lr; i++ {
		if !slices.Contains(d.lhsBatch, i) && !slices.Contains(d.lhsContract, i) {
			p.lhsFree = append(p.lhsFree, i)
		}
	}
	for i := int64(0); i < rr; i++ {
		if !slices.Contains(d.rhsBatch, i) && !slices.Contains(d.rhsContract, i) && !slices.Contains(d.rhsGroup, i) {
			p.rhsFree = append(p.rhsFree, i)
		}
	}
	if p.mode == 1 {
		p.resDims = append(p.resDims, p.numGroups)
	}
	for _, i := range d.lhsBatch {
		p.resDims = append(p.resDims, p.lhs.Dims[i])
	}
	for _, i := range p.lhsFree {
		p.resDims = append(p.resDims, p.lhs.Dims[i])
	}
	for _, i := range p.rhsFree {
		p.resDims = append(p.resDims, p.rhs.Dims[i])
	}
	if !chloSameDims(p.resDims, rt.Dims) {
		return nil, fmt.Errorf("result %v does not have the dimensions %v", rt, p.resDims)
	}
	return p, nil
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
// into consecutive groups of group_sizes rows. Ragged non-contracting:
// rows of group g multiply rhs group g. Ragged contracting: result group g
// contracts over group g's slice only. Ragged batch: an ordinary batched
// dot. Rows past the sum of the group sizes give zeros. Accumulation is in
// float64, rounded once to the result type.
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
	starts := make([]int64, len(gs)+1)
	for i, g := range gs {
		if g < 0 {
			return nil, fmt.Errorf("group_sizes[%d] = %d is negative", i, g)
		}
		starts[i+1] = starts[i] + g
	}
	if lim := lhs.Shape.Dims[p.ragged]; starts[len(gs)] > lim {
		return nil, fmt.Errorf("group_sizes sum to %d, more than the ragged dimension's %d", starts[len(gs)], lim)
	}
	groupOf := func(i int64) int64 { // -1 past the last group
		for g := range gs {
			if i < starts[g+1] {
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
	if la == nil || ra == nil {
		return nil, ewDTypeError(op, lhs.Shape.DType)
	}
	ls, rs := Strides(lhs.Shape.Dims), Strides(rhs.Shape.Dims)
	d := p.dims
	kDims := make([]int64, len(d.lhsContract))
	for i, c := range d.lhsContract {
		kDims[i] = lhs.Shape.Dims[c]
	}
	nK := int64(1)
	for _, k := range kDims {
		nK *= k
	}
	res := make([]float64, out.Len())
	idx := make([]int64, len(p.resDims))
	kIdx := make([]int64, len(kDims))
	raggedPos := slices.Index(d.lhsContract, p.ragged)
	for o := range res {
		if o > 0 {
			NextIndex(idx, p.resDims)
		}
		pos := 0
		g := int64(-1)
		if p.mode == 1 {
			g = idx[0]
			pos = 1
		}
		var lo, ro int64
		for i := range d.lhsBatch {
			lo += idx[pos] * ls[d.lhsBatch[i]]
			ro += idx[pos] * rs[d.rhsBatch[i]]
			if p.mode == 2 && d.lhsBatch[i] == p.ragged && groupOf(idx[pos]) < 0 {
				lo = -1
			}
			pos++
		}
		for _, i := range p.lhsFree {
			if lo >= 0 {
				lo += idx[pos] * ls[i]
			}
			if p.mode == 0 && i == p.ragged {
				g = groupOf(idx[pos])
				if g < 0 {
					lo = -1
				}
			}
			pos++
		}
		if lo < 0 {
			continue // past the last group: zero
		}
		for _, i := range p.rhsFree {
			ro += idx[pos] * rs[i]
			pos++
		}
		if p.mode == 0 {
			ro += g * rs[d.rhsGroup[0]]
		}
		sum := 0.0
		clear(kIdx)
		for k := int64(0); k < nK; k++ {
			if k > 0 {
				NextIndex(kIdx, kDims)
			}
			if p.mode == 1 && (kIdx[raggedPos] < starts[g] || kIdx[raggedPos] >= starts[g+1]) {
				continue
			}
			l, r := lo, ro
			for i, kk := range kIdx {
				l += kk * ls[d.lhsContract[i]]
				r += kk * rs[d.rhsContract[i]]
			}
			sum += la(l) * ra(r)
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
