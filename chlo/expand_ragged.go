package chlo

import (
	"fmt"
	"slices"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// expandRaggedDot rewrites chlo.ragged_dot into StableHLO. The operands are
// brought to a canonical layout (lhs [batch, free, contracting], rhs
// [batch, (group,) contracting, free]) and flattened to rank 3 or 4; the
// group of every index of the ragged dimension is counted from the running
// sums of group_sizes. Per mode:
//
//   - ragged non-contracting: each lhs row gathers the rhs slice of its
//     group, then one batched dot_general over (batch, row). Cost: the
//     flops of one dense dot of the operands, and a gathered rhs of
//     rows·k·n elements.
//   - ragged contracting: both operands are masked to each group's slice
//     of k ([batch, g, m, k] and [batch, g, k, n], zeros elsewhere) and
//     contracted in one dot_general batched over (batch, group). Cost: g
//     times the flops and the operands' memory of the dense dot (every
//     result group is a full m·n block; each sums its own slice of k).
//   - ragged batch: both operands are zeroed past the groups and multiplied
//     in an ordinary batched dot_general. Cost: one dense dot.
//
// Masked entries are selected, never multiplied by a 0/1 mask, so an Inf
// or NaN outside a group does not reach it (0·Inf is NaN).
//
// f16, bf16 and f32 operands are computed in f32, f64 in f64, complex
// ones in complex64 (complex128 when any type is complex128 or f64), and
// the result converted once to its element type; integer operands are
// computed in the result's integer type, wrapping as dot_general does.
// Group ids cost rows·g comparisons.
func expandRaggedDot(fb *FuncBuilder, op *stablehlo.Op) ([]*Value, error) {
	lhs, rhs, gs := op.Operands[0], op.Operands[1], op.Operands[2]
	lt, _ := lhs.TensorType()
	rt, _ := rhs.TensorType()
	gt, _ := gs.TensorType()
	res, ok := op.Results[0].TensorType()
	if !ok {
		return nil, fmt.Errorf("result is not a tensor")
	}
	d, ok := op.Attr("ragged_dot_dimension_numbers").(stablehlo.RaggedDotDimensionNumbers)
	if !ok {
		return nil, fmt.Errorf("ragged_dot_dimension_numbers is not #chlo.ragged_dot<...>")
	}
	for _, t := range []stablehlo.TensorType{lt, rt, gt, res} {
		if slices.Contains(t.Dims, stablehlo.DynamicDim) {
			return nil, fmt.Errorf("dynamic shape %s has no decomposition", t)
		}
	}
	if lt.DType.IsBool() || rt.DType.IsBool() || res.DType.IsBool() {
		return nil, fmt.Errorf("no decomposition for element types %s, %s -> %s", lt.DType, rt.DType, res.DType)
	}
	p, err := stablehlo.PlanRaggedDot(lt, rt, gt, d)
	if err != nil {
		return nil, err
	}
	acc := raggedAccType(lt.DType, rt.DType, res.DType)
	if p.NumGroups == 0 || prod(res.Dims) == 0 {
		return []*Value{fb.SplatOf(res.DType, 0, res.Dims...)}, nil
	}
	if lt.DType != acc {
		lhs = fb.Convert(lhs, acc)
	}
	if rt.DType != acc {
		rhs = fb.Convert(rhs, acc)
	}
	g := p.NumGroups
	nb, nl := len(d.LhsBatchingDims), len(p.LhsFree)
	// lhs in [batch, free, contracting] order, and where each lhs dimension
	// went.
	lperm := slices.Concat(d.LhsBatchingDims, p.LhsFree, d.LhsContractingDims)
	lpos := make([]int64, len(lperm))
	for i, v := range lperm {
		lpos[v] = int64(i)
	}
	lhsT := transpose(fb, lhs, lperm)
	ltd := permuted(lt.Dims, lperm)
	bn, fn, kn := prod(ltd[:nb]), prod(ltd[nb:nb+nl]), prod(ltd[nb+nl:])
	nn := prod(permuted(rt.Dims, p.RhsFree))
	zero := func(dims ...int64) *Value { return fb.SplatOf(acc, 0, dims...) }
	posOf := func(dims []int64) []int64 {
		out := make([]int64, len(dims))
		for i, v := range dims {
			out[i] = lpos[v]
		}
		return out
	}
	var out *Value
	switch p.Mode {
	case stablehlo.RaggedNonContracting:
		rowDims := ltd[:nb+nl]
		gid := fb.Reshape(groupIDs(fb, gs, g, posOf(p.GroupPrefix), lpos[p.Ragged], rowDims), bn, fn)
		valid := fb.Compare(gid, fb.SplatOf(xla.Int64, float64(g), bn, fn), stablehlo.CompareLT, stablehlo.CompareSigned)
		lhs3 := fb.Reshape(lhsT, bn, fn, kn)
		lhs3 = fb.Select(fb.BroadcastInDim(valid, []int64{bn, fn, kn}, []int64{0, 1}), lhs3, zero(bn, fn, kn))
		rperm := slices.Concat(d.RhsBatchingDims, d.RhsGroupDims, d.RhsContractingDims, p.RhsFree)
		rhs3 := fb.Reshape(transpose(fb, rhs, rperm), bn*g, kn, nn)
		// Row (b, f) reads rhs block b·g + its group (the last group past
		// the end, masked above).
		grp := fb.Clamp(fb.SplatOf(xla.Int64, 0, bn, fn), gid, fb.SplatOf(xla.Int64, float64(g-1), bn, fn))
		base := fb.Multiply(fb.Iota(stablehlo.Tensor(xla.Int64, bn, fn), 0), fb.SplatOf(xla.Int64, float64(g), bn, fn))
		idx := fb.Reshape(fb.Add(base, grp), bn, fn, 1)
		sel := fb.Gather(rhs3, idx, stablehlo.GatherDimensionNumbers{
			OffsetDims: []int64{2, 3}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 2,
		}, []int64{1, kn, nn}, false)
		// Rows past the groups multiply zeros on both sides (an Inf or
		// NaN of the last group's rhs made 0·Inf = NaN there).
		sel = fb.Select(fb.BroadcastInDim(valid, []int64{bn, fn, kn, nn}, []int64{0, 1}), sel, zero(bn, fn, kn, nn))
		out = fb.DotGeneral(lhs3, sel, stablehlo.DotDimensionNumbers{
			LhsBatchingDims: []int64{0, 1}, RhsBatchingDims: []int64{0, 1},
			LhsContractingDims: []int64{2}, RhsContractingDims: []int64{2},
		}) // [bn, fn, nn]
	case stablehlo.RaggedContracting:
		// Group ids over the lhs's [batch, contracting] dimensions.
		kl := slices.Concat(d.LhsBatchingDims, d.LhsContractingDims)
		kpos := make(map[int64]int64, len(kl))
		for i, v := range kl {
			kpos[v] = int64(i)
		}
		pre := make([]int64, len(p.GroupPrefix))
		for i, v := range p.GroupPrefix {
			pre[i] = kpos[v]
		}
		gid := fb.Reshape(groupIDs(fb, gs, g, pre, kpos[p.Ragged], permuted(lt.Dims, kl)), bn, kn)
		onehot := fb.Compare(fb.BroadcastInDim(gid, []int64{bn, kn, g}, []int64{0, 1}),
			fb.Iota(stablehlo.Tensor(xla.Int64, bn, kn, g), 2), stablehlo.CompareEQ, stablehlo.CompareSigned)
		// Each group's slice of k on both sides, zeros elsewhere (selected,
		// not multiplied: an Inf or NaN of one group's slice stays out of
		// the others'), then one dot batched over (batch, group).
		rperm := slices.Concat(d.RhsBatchingDims, d.RhsContractingDims, p.RhsFree)
		rhs3 := fb.Reshape(transpose(fb, rhs, rperm), bn, kn, nn)
		t := fb.Select(fb.BroadcastInDim(onehot, []int64{bn, g, kn, nn}, []int64{0, 2, 1}),
			fb.BroadcastInDim(rhs3, []int64{bn, g, kn, nn}, []int64{0, 2, 3}), zero(bn, g, kn, nn))
		lhs3 := fb.Reshape(lhsT, bn, fn, kn)
		l4 := fb.Select(fb.BroadcastInDim(onehot, []int64{bn, g, fn, kn}, []int64{0, 3, 1}),
			fb.BroadcastInDim(lhs3, []int64{bn, g, fn, kn}, []int64{0, 2, 3}), zero(bn, g, fn, kn))
		o := fb.DotGeneral(l4, t, stablehlo.DotDimensionNumbers{
			LhsBatchingDims: []int64{0, 1}, RhsBatchingDims: []int64{0, 1},
			LhsContractingDims: []int64{3}, RhsContractingDims: []int64{2},
		}) // [bn, g, fn, nn]
		out = fb.Transpose(o, 1, 0, 2, 3)
	case stablehlo.RaggedBatch:
		bd := ltd[:nb]
		gid := fb.Reshape(groupIDs(fb, gs, g, posOf(p.GroupPrefix), lpos[p.Ragged], bd), bn)
		valid := fb.Compare(gid, fb.SplatOf(xla.Int64, float64(g), bn), stablehlo.CompareLT, stablehlo.CompareSigned)
		lhs3 := fb.Reshape(lhsT, bn, fn, kn)
		lhs3 = fb.Select(fb.BroadcastInDim(valid, []int64{bn, fn, kn}, []int64{0}), lhs3, zero(bn, fn, kn))
		rperm := slices.Concat(d.RhsBatchingDims, d.RhsContractingDims, p.RhsFree)
		rhs3 := fb.Reshape(transpose(fb, rhs, rperm), bn, kn, nn)
		// Zeros on both sides past the groups (0·Inf was NaN).
		rhs3 = fb.Select(fb.BroadcastInDim(valid, []int64{bn, kn, nn}, []int64{0}), rhs3, zero(bn, kn, nn))
		out = fb.DotGeneral(lhs3, rhs3, stablehlo.DotDimensionNumbers{
			LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0},
			LhsContractingDims: []int64{2}, RhsContractingDims: []int64{1},
		}) // [bn, fn, nn]
	}
	out = fb.Reshape(out, res.Dims...)
	if res.DType != acc {
		out = fb.Convert(out, res.DType)
	}
	return []*Value{out}, nil
}

// groupIDs returns an i64 tensor of shape dims: for every index, the group
// its coordinate along dimension ragged falls in, g past the last group.
// gs holds the group sizes, of shape [g] (the same for every index) or
// [prefix..., g] whose leading dimensions are dims' dimensions prefixPos.
// The running sums of gs are formed with a [.., g, g] triangular mask
// (O(g²) per row of gs); the count costs |dims|·g comparisons.
func groupIDs(fb *FuncBuilder, gs *Value, g int64, prefixPos []int64, ragged int64, dims []int64) *Value {
	gt, _ := gs.TensorType()
	gs64 := gs
	if gt.DType != xla.Int64 {
		gs64 = fb.Convert(gs, xla.Int64)
	}
	pre := gt.Dims[:gt.Rank()-1]
	np := int64(len(pre))
	sq := append(slices.Clone(pre), g, g)
	bmap := make([]int64, 0, np+1)
	for i := int64(0); i <= np; i++ {
		bmap = append(bmap, i)
	}
	gsB := fb.BroadcastInDim(gs64, sq, bmap) // [pre..., l, j] = gs[pre..., l]
	tri := fb.Compare(fb.Iota(stablehlo.Tensor(xla.Int64, sq...), np), fb.Iota(stablehlo.Tensor(xla.Int64, sq...), np+1),
		stablehlo.CompareLE, stablehlo.CompareSigned)
	ends := fb.ReduceSum(fb.Select(tri, gsB, fb.SplatOf(xla.Int64, 0, sq...)), np) // [pre..., g]
	full := append(slices.Clone(dims), g)
	emap := []int64{int64(len(dims))}
	if np > 0 {
		emap = append(slices.Clone(prefixPos), int64(len(dims)))
	}
	endsB := fb.BroadcastInDim(ends, full, emap)
	past := fb.Compare(fb.Iota(stablehlo.Tensor(xla.Int64, full...), ragged), endsB, stablehlo.CompareGE, stablehlo.CompareSigned)
	return fb.ReduceSum(fb.Convert(past, xla.Int64), int64(len(dims)))
}

// transpose is fb.Transpose, or x itself for the identity permutation.
func transpose(fb *FuncBuilder, x *Value, perm []int64) *Value {
	for i, v := range perm {
		if v != int64(i) {
			return fb.Transpose(x, perm...)
		}
	}
	return x
}

// permuted returns dims[perm[i]] for each i.
func permuted(dims, perm []int64) []int64 {
	out := make([]int64, len(perm))
	for i, v := range perm {
		out[i] = dims[v]
	}
	return out
}

func prod(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

// raggedAccType is the element type a ragged_dot of lhs and rhs elements
// into result elements is computed in.
func raggedAccType(lhs, rhs, result xla.DType) xla.DType {
	types := []xla.DType{lhs, rhs, result}
	wide := slices.Contains(types, xla.Float64) || slices.Contains(types, xla.Complex128)
	switch {
	case lhs.IsComplex() || rhs.IsComplex() || result.IsComplex():
		if wide {
			return xla.Complex128
		}
		return xla.Complex64
	case lhs.IsInt() && rhs.IsInt() && result.IsInt():
		return result
	case wide:
		return xla.Float64
	}
	return xla.Float32
}
