package interpreter

import (
	"fmt"
	"unsafe"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// dot_general and dot.
//
// dot_general computes, for every result index (batch..., lhs free...,
// rhs free...), the sum over the contracting dimensions of lhs × rhs
// (StableHLO spec, dot_general). The kernel brings both operands into the
// layouts [batch, M, K] and [batch, K, N] (M, N, K the products of the free
// and contracting dimensions) and runs one matrix multiplication per batch
// element; the result [batch, M, N] is already in the result's row-major
// order. An operand whose dimensions are already in that order (or in the
// transposed order [batch, K, M] / [batch, N, K]) is not copied: BLAS reads
// it with its transpose flag. float32 and float64 go through internal/gemm;
// other compute types use plain loops. precision_config and algorithm are
// ignored: float32 products are accumulated in float32 (narrow floats too,
// rounded once at the end), float64 in float64.

func init() {
	registerKernel("stablehlo.dot_general", dotGeneralKernel)
	registerKernel("stablehlo.dot", dotKernel)
}

func dotGeneralKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := dotArgs(args, 2)
	if err != nil {
		return nil, err
	}
	dn, ok := op.Attr("dot_dimension_numbers").(stablehlo.DotDimensionNumbers)
	if !ok {
		return nil, fmt.Errorf("dot_dimension_numbers is %T, want a #stablehlo.dot attribute", op.Attr("dot_dimension_numbers"))
	}
	rt, err := laResultType(op, 0)
	if err != nil {
		return nil, err
	}
	t, err := dotGeneralArgs(x, ts[0], ts[1], dn, rt.Shape())
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

// dotKernel evaluates the deprecated stablehlo.dot: lhs of rank 1 or 2
// contracts its last dimension with the first dimension of rhs.
func dotKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := dotArgs(args, 2)
	if err != nil {
		return nil, err
	}
	lr, rr := ts[0].shape.Rank(), ts[1].shape.Rank()
	if lr < 1 || lr > 2 || rr < 1 || rr > 2 {
		return nil, fmt.Errorf("dot takes operands of rank 1 or 2, got %v and %v", ts[0].shape, ts[1].shape)
	}
	rt, err := laResultType(op, 0)
	if err != nil {
		return nil, err
	}
	dn := stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{int64(lr - 1)}, RhsContractingDims: []int64{0}}
	t, err := dotGeneralArgs(x, ts[0], ts[1], dn, rt.Shape())
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

// dotPlan is a dot_general reduced to a batched matrix multiplication.
type dotPlan struct {
	lhsDims, rhsDims []int64
	batch, m, n, k   int
	// lhsNT: lhs is [batch, M, K] after permuting by lhsPerm; lhsT: the
	// permutation [batch, K, M] moves nothing (use the transpose flag).
	lhsPerm, lhsPermT []int
	rhsPerm, rhsPermT []int
	resultDims        []int64
	// The free and contracting dims of each side.
	lhsFree, lhsContract, rhsFree, rhsContract []int
}

func planDot(lhs, rhs xla.Shape, dn stablehlo.DotDimensionNumbers) (*dotPlan, error) {
	lr, rr := lhs.Rank(), rhs.Rank()
	if len(dn.LhsBatchingDims) != len(dn.RhsBatchingDims) {
		return nil, fmt.Errorf("%d lhs batching dimensions but %d rhs batching dimensions", len(dn.LhsBatchingDims), len(dn.RhsBatchingDims))
	}
	if len(dn.LhsContractingDims) != len(dn.RhsContractingDims) {
		return nil, fmt.Errorf("%d lhs contracting dimensions but %d rhs contracting dimensions", len(dn.LhsContractingDims), len(dn.RhsContractingDims))
	}
	lseen, rseen := make([]bool, lr), make([]bool, rr)
	if err := laCheckAxes("lhs_batching_dimensions", dn.LhsBatchingDims, lr, lseen); err != nil {
		return nil, err
	}
	if err := laCheckAxes("lhs_contracting_dimensions", dn.LhsContractingDims, lr, lseen); err != nil {
		return nil, err
	}
	if err := laCheckAxes("rhs_batching_dimensions", dn.RhsBatchingDims, rr, rseen); err != nil {
		return nil, err
	}
	if err := laCheckAxes("rhs_contracting_dimensions", dn.RhsContractingDims, rr, rseen); err != nil {
		return nil, err
	}
	p := &dotPlan{lhsDims: lhs.Dims, rhsDims: rhs.Dims, batch: 1, m: 1, n: 1, k: 1}
	var lb, lc, lf, rb, rc, rf []int
	for i, d := range dn.LhsBatchingDims {
		if lhs.Dims[d] != rhs.Dims[dn.RhsBatchingDims[i]] {
			return nil, fmt.Errorf("batching dimension sizes differ: lhs dimension %d is %d, rhs dimension %d is %d",
				d, lhs.Dims[d], dn.RhsBatchingDims[i], rhs.Dims[dn.RhsBatchingDims[i]])
		}
		lb = append(lb, int(d))
		rb = append(rb, int(dn.RhsBatchingDims[i]))
		p.batch *= int(lhs.Dims[d])
		p.resultDims = append(p.resultDims, lhs.Dims[d])
	}
	for i, d := range dn.LhsContractingDims {
		if lhs.Dims[d] != rhs.Dims[dn.RhsContractingDims[i]] {
			return nil, fmt.Errorf("contracting dimension sizes differ: lhs dimension %d is %d, rhs dimension %d is %d",
				d, lhs.Dims[d], dn.RhsContractingDims[i], rhs.Dims[dn.RhsContractingDims[i]])
		}
		lc = append(lc, int(d))
		rc = append(rc, int(dn.RhsContractingDims[i]))
		p.k *= int(lhs.Dims[d])
	}
	for d := 0; d < lr; d++ {
		if !lseen[d] {
			lf = append(lf, d)
			p.m *= int(lhs.Dims[d])
			p.resultDims = append(p.resultDims, lhs.Dims[d])
		}
	}
	for d := 0; d < rr; d++ {
		if !rseen[d] {
			rf = append(rf, d)
			p.n *= int(rhs.Dims[d])
			p.resultDims = append(p.resultDims, rhs.Dims[d])
		}
	}
	cat := func(parts ...[]int) []int {
		var out []int
		for _, q := range parts {
			out = append(out, q...)
		}
		return out
	}
	p.lhsFree, p.lhsContract, p.rhsFree, p.rhsContract = lf, lc, rf, rc
	p.lhsPerm, p.lhsPermT = cat(lb, lf, lc), cat(lb, lc, lf)
	p.rhsPerm, p.rhsPermT = cat(rb, rc, rf), cat(rb, rf, rc)
	return p, nil
}

func dotGeneral(lhs, rhs *Tensor, dn stablehlo.DotDimensionNumbers, result xla.Shape) (*Tensor, error) {
	return dotGeneralArgs(nil, dotArg{t: lhs, shape: lhs.Shape}, dotArg{t: rhs, shape: rhs.Shape}, dn, result)
}

// dotGeneralArgs is dotGeneral of operands that may be windows; the result
// may take a spare buffer of x (nil: none).
func dotGeneralArgs(x *Exec, lhs, rhs dotArg, dn stablehlo.DotDimensionNumbers, result xla.Shape) (*Tensor, error) {
	p, err := planDot(lhs.shape, rhs.shape, dn)
	if err != nil {
		return nil, err
	}
	if !xla.MakeShape(result.DType, p.resultDims...).Equal(result) {
		return nil, fmt.Errorf("result type %v does not match the operands (want dimensions %v)", stablehlo.TensorOf(result), p.resultDims)
	}
	c, err := laComputeFor(result.DType, lhs.shape.DType, rhs.shape.DType)
	if err != nil {
		return nil, err
	}
	switch c {
	case laF32:
		return dotGeneralT[float32](x, lhs, rhs, p, result)
	case laF64:
		return dotGeneralT[float64](x, lhs, rhs, p, result)
	case laI64:
		return dotGeneralT[int64](x, lhs, rhs, p, result)
	case laC64:
		return dotGeneralT[complex64](x, lhs, rhs, p, result)
	default:
		return dotGeneralT[complex128](x, lhs, rhs, p, result)
	}
}

func dotGeneralT[T laNum](x *Exec, lhs, rhs dotArg, p *dotPlan, result xla.Shape) (*Tensor, error) {
	lhsNoop, lhsNoopT := laPermIsNoop(p.lhsDims, p.lhsPerm), laPermIsNoop(p.lhsDims, p.lhsPermT)
	rhsNoop, rhsNoopT := laPermIsNoop(p.rhsDims, p.rhsPerm), laPermIsNoop(p.rhsDims, p.rhsPermT)
	if err := resolveOperandView[T](&lhs, p, lhsNoop, lhsNoopT, p.lhsFree, p.lhsContract); err != nil {
		return nil, err
	}
	if err := resolveOperandView[T](&rhs, p, rhsNoop, rhsNoopT, p.rhsContract, p.rhsFree); err != nil {
		return nil, err
	}
	a, _, err := laSlice[T](lhs.t)
	if err != nil {
		return nil, err
	}
	b, _, err := laSlice[T](rhs.t)
	if err != nil {
		return nil, err
	}
	a, b = a[lhs.off:], b[rhs.off:]
	m, n, k := p.m, p.n, p.k
	// Operand layouts: use the data in place when the permutation moves
	// nothing, else copy into [batch, M, K] / [batch, K, N]. A window read
	// in place has its own row stride.
	transA, transB := false, false
	lda, ldb := k, n
	switch {
	case lhsNoop:
	case lhsNoopT:
		transA, lda = true, m
	default:
		a = laPermute(a, p.lhsDims, p.lhsPerm)
	}
	switch {
	case rhsNoop:
	case rhsNoopT:
		transB, ldb = true, k
	default:
		b = laPermute(b, p.rhsDims, p.rhsPerm)
	}
	if lhs.ld > 0 {
		lda = lhs.ld
	}
	if rhs.ld > 0 {
		ldb = rhs.ld
	}
	// laStore keeps c as the result's storage when the compute type is the
	// storage type (so c may be a spare: every element is written below),
	// or c is the value the product is added into (dot_add.go).
	sum := sumTarget[T](x, lhs, rhs, p, result)
	var c []T
	if sum != nil {
		c = sum
	} else {
		var z T
		checkBytes(result, int64(p.batch)*int64(m)*int64(n), int64(unsafe.Sizeof(z)))
		c = spareSlice[T](x, p.batch*m*n)
	}
	if lda < 1 {
		lda = 1
	}
	if ldb < 1 {
		ldb = 1
	}
	ldc := max(n, 1)
	add := sum != nil
	one := func(i int) {
		laGemm(transA, transB, m, n, k, a[i*m*k:], lda, b[i*k*n:], ldb, c[i*m*n:], ldc, add, x.stopFlag())
	}
	var pb any
	if rhs.window && p.batch == 1 && m > 0 && n > 0 && k > 0 {
		pb = packedWindow(x, rhs.t, b, rhs.off, transB, k, n, ldb)
	}
	if pb != nil {
		mulPacked(transA, m, a, lda, pb, c, ldc, add, x.stopFlag())
	} else if p.batch > 1 && m*n*k < 64*64*64 {
		// Small matrices: spread the batch across cores.
		laParallelFor(p.batch, int64(p.batch)*int64(m)*int64(n)*int64(k), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				one(i)
			}
		})
	} else {
		for i := 0; i < p.batch; i++ {
			one(i)
		}
	}
	t, err := laStore(result, c)
	if err == nil {
		x.adopt(t) // c, or a new tensor converted from it
	}
	return t, err
}
