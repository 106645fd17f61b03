package interpreter

import (
	"slices"

	"github.com/halo-ml/halo/internal/gemm"
	"github.com/halo-ml/halo/xla"
)

// Dots that add into a dying value.
//
// In `%d = dot_general %a, %b` followed by `%s = add %acc, %d` (or
// `add %d, %acc`), where nothing reads %d or %acc after the add, the dot
// may add its product into %acc's storage (gemm's C += A·B) instead of
// writing a new tensor that the add then reads again: a pallas kernel's
// accumulator, updated at every grid step, costs no pass of its own. The
// add sees both operands in one storage and passes the sum on.
//
// The dot does so only when the run owns %acc's storage and no other live
// value refers to it (spare.go), no op that may keep its operands has
// seen it, it is neither operand of the dot, the result is float32 or
// float64 (not a narrow float, rounded after each op) of %acc's shape,
// the product is one matrix multiplication, and K is 1 to gemm.KBlock:
// then every element is %acc + (the product as the dot alone computes
// it), rounded once, the numbers of the two ops apart (but for which
// payload a NaN plus a NaN keeps). Otherwise the two ops run as written.

// The add may also open a branch of the if right after the dot, as in
// pallas's accumulator that a grid step either resets or adds to:
//
//	%d = dot_general ...
//	%r = if %reset { return %d } else { %s = add %acc, %d; return %s }
//
// The dot then adds into %acc only when %reset picks the add's branch.

// planDotAdd marks dot and next when next is the op after dot (small
// constants between aside) and adds dot's result to a value nothing
// reads after it, or is an if one of whose branches does so first
// (live: the slots read by what runs after next).
func planDotAdd(fp *funcPlan, dot, next *opPlan, live map[int]bool) {
	if (dot.op.Name != "stablehlo.dot_general" && dot.op.Name != "stablehlo.dot") || len(dot.out) != 1 || dot.keeps {
		return
	}
	d := dot.out[0]
	if live[d] {
		return
	}
	if next.op.Name != "stablehlo.if" {
		if acc, at, ok := addsTo(next, d, live); ok && !slices.Contains(dot.in, acc) {
			dot.sumInto, next.addsDot = acc+1, at+1
		}
		return
	}
	for k, r := range next.op.Regions {
		if len(r.Blocks) != 1 {
			return
		}
		plans := fp.blocks[r.Blocks[0]]
		i := 0
		for i < len(plans) && plans[i].konst != nil {
			i++
		}
		if i == len(plans) {
			continue
		}
		acc, at, ok := addsTo(plans[i], d, live)
		if !ok || slices.Contains(dot.in, acc) || !onlyConstantsThenReturn(plans[i+1:], acc, d) {
			continue
		}
		dot.sumInto, dot.sumBranch, plans[i].addsDot = acc+1, k+1, at+1
		dot.sumCond = next.in[0]
		return
	}
}

// addsTo reports whether pl adds the value in slot d to another, acc, that
// nothing reads after pl; at is d's operand position.
func addsTo(pl *opPlan, d int, live map[int]bool) (acc, at int, ok bool) {
	if pl.op.Name != "stablehlo.add" || len(pl.in) != 2 || len(pl.out) != 1 {
		return 0, 0, false
	}
	switch {
	case pl.in[1] == d && pl.in[0] != d:
		acc, at = pl.in[0], 1
	case pl.in[0] == d && pl.in[1] != d:
		acc, at = pl.in[1], 0
	default:
		return 0, 0, false
	}
	return acc, at, !live[acc]
}

// onlyConstantsThenReturn reports whether plans are small constants and a
// terminator that hands over neither acc nor d.
func onlyConstantsThenReturn(plans []*opPlan, acc, d int) bool {
	for _, pl := range plans {
		switch {
		case pl.konst != nil:
		case isTerminator(pl.op.Name):
			return !slices.Contains(pl.in, acc) && !slices.Contains(pl.in, d)
		default:
			return false
		}
	}
	return false
}

// sumTaken reports whether the add the dot of pl was planned with runs:
// always, or when the if's condition picks its branch.
func sumTaken(pl *opPlan, vals []Value) bool {
	if pl.sumBranch == 0 {
		return true
	}
	c, err := shpBoolValue(vals[pl.sumCond])
	if err != nil {
		return false
	}
	taken := 2 // the else branch
	if c {
		taken = 1
	}
	return taken == pl.sumBranch
}

// sameStorage reports whether a and b are tensors with one storage.
func sameStorage(a, b Value) bool {
	ta, ok := a.(*Tensor)
	if !ok || ta == nil {
		return false
	}
	tb, ok := b.(*Tensor)
	if !ok || tb == nil {
		return false
	}
	pa, _ := storagePtr(ta)
	pb, _ := storagePtr(tb)
	return pa != 0 && pa == pb
}

// overwritable returns v when the running kernel may write into it (a
// value nothing reads after the op, as planned): storage the run owns,
// that no other live value refers to and no op that may keep its operands
// has seen; else nil.
func (x *Exec) overwritable(v Value) *Tensor {
	t, ok := v.(*Tensor)
	if !ok || t == nil || len(x.sp.own) == 0 {
		return nil
	}
	p, _ := storagePtr(t)
	if _, mine := x.sp.own[p]; !mine || x.isKept(t) || !x.soleReference(t) {
		return nil
	}
	return t
}

// sumTarget returns the storage of x.sumInto when the dot planned by p
// may add its product into it (see above), else nil.
func sumTarget[T laNum](x *Exec, lhs, rhs dotArg, p *dotPlan, result xla.Shape) []T {
	// K = 0 adds +0, which turns a -0 into +0: that add must run. A
	// narrow float result (bf16, f16 ...) is stored as float32 but rounded
	// after each op: a product added before rounding would round once
	// instead of twice.
	if x == nil || x.sumInto == nil || p.batch != 1 || p.k == 0 || p.k > gemm.KBlock || p.m == 0 || p.n == 0 ||
		(result.DType != xla.Float32 && result.DType != xla.Float64) {
		return nil
	}
	t := x.sumInto
	c, ok := t.Data.([]T)
	if !ok || !t.Shape.Equal(result) {
		return nil
	}
	q, _ := storagePtr(t)
	for _, o := range []*Tensor{lhs.t, rhs.t} {
		if r, _ := storagePtr(o); r == q {
			return nil
		}
	}
	x.sums++
	return c
}
