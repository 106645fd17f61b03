package interpreter

import (
	"math"
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func init() {
	shpRegister("stablehlo.sort", shpSort)
}

// shpSort is stablehlo.sort: sorts the 1-D slices of all inputs along
// dimension together with the comparator region (true when its left
// argument(s) sort before its right ones). Sorting is always stable (a
// merge sort), which satisfies is_stable = true and is one of the orders
// is_stable = false allows.
//
// A comparator that is a single compare of one input's pair of arguments is
// run as a typed comparison; any other comparator is run per comparison with
// x.RunRegion. Both paths use the same merge sort, so they give the same
// order even for comparators that are not strict weak orders. A general
// comparator that vectorises sorts large inputs by a network instead
// (shpSortNetwork), with the merge sort's order for strict weak orders and
// the merge sort itself for comparators that put two elements each before
// the other; a comparator whose incomparability is not transitive (a
// FLOAT compare with NaNs among the keys) may still order those by path.
func shpSort(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) == 0 {
		return nil, shpErrf("sort needs at least one input")
	}
	ins, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	shape := ins[0].Shape
	r := shape.Rank()
	dts := make([]xla.DType, len(ins))
	for k, t := range ins {
		if !t.Shape.Equal(xla.MakeShape(t.Shape.DType, shape.Dims...)) {
			return nil, shpErrf("inputs have different shapes (%v and %v)", shape, t.Shape)
		}
		dts[k] = t.Shape.DType
	}
	dim, ok, err := shpAttrInt(op, "dimension")
	if err != nil {
		return nil, err
	}
	if !ok {
		dim = -1
	}
	if dim < -int64(r) || dim >= int64(r) || r == 0 {
		return nil, shpErrf("dimension %d is out of range for rank %d", dim, r)
	}
	if dim < 0 {
		dim += int64(r)
	}
	if _, err := shpAttrBool(op, "is_stable"); err != nil {
		return nil, err
	}
	if len(op.Results) != len(ins) || len(op.Regions) != 1 {
		return nil, shpErrf("sort has %d results and %d regions, want %d and 1", len(op.Results), len(op.Regions), len(ins))
	}
	outs := make([]*Tensor, len(ins))
	for k := range ins {
		sh, err := shpCheckShape(op, k, dts[k], shape.Dims)
		if err != nil {
			return nil, err
		}
		outs[k] = NewTensor(sh)
	}
	n := shape.Dims[dim]
	total := shape.Size()
	if total == 0 {
		return shpValues(outs), nil
	}
	str := Strides(shape.Dims)
	st := int(str[dim])
	// Walk every slice: all indices but dim.
	outerDims := append([]int64(nil), shape.Dims...)
	outerDims[dim] = 1

	base := 0
	less := shpTypedSortLess(op.Regions[0], ins, dts, &base, st)
	if less == nil {
		if less, err = shpKeyedSortLess(x, op.Regions[0], ins, dts, &base, st); err != nil {
			return nil, err
		}
	}
	if less == nil {
		src, err := shpSortNetwork(x, op.Regions[0], ins, dts, outerDims, str, int(n), st)
		if err != nil {
			return nil, err
		}
		if src != nil {
			for k := range ins {
				if err := shpTake(outs[k], ins[k], src); err != nil {
					return nil, err
				}
			}
			return shpValues(outs), nil
		}
	}
	var errp *error
	if less == nil {
		less, errp = shpSortLess(x, op.Regions[0], ins, dts, &base, st)
	} else {
		errp = new(error)
	}
	src := makeChecked[int](int64(total), xla.MakeShape(xla.Int64, int64(total)))
	perm := makeChecked[int](int64(n), xla.MakeShape(xla.Int64, int64(n)))
	tmp := makeChecked[int](int64(n), xla.MakeShape(xla.Int64, int64(n)))
	stop := x.stopFlag()
	for o := shpNewOdo(outerDims, str, 0); !o.done; o.next() {
		if stopped(stop) {
			return nil, errStopped
		}
		base = int(o.off)
		for i := range perm {
			perm[i] = i
		}
		shpStableSort(perm, tmp, less, stop)
		if *errp != nil {
			return nil, *errp
		}
		for i, p := range perm {
			src[base+i*st] = base + p*st
		}
	}
	for k := range ins {
		if err := shpTake(outs[k], ins[k], src); err != nil {
			return nil, err
		}
	}
	return shpValues(outs), nil
}

func shpValues(ts []*Tensor) []Value {
	out := make([]Value, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// shpSortLess returns the ordering of slice positions a, b (elements at
// *base + a*st and *base + b*st). Errors from a general comparator are kept in
// *errp; the ordering then reports false.
func shpSortLess(x *Exec, r *stablehlo.Region, ins []*Tensor, dts []xla.DType, base *int, st int) (func(a, b int) bool, *error) {
	var err error
	n := len(ins)
	if f := shpTypedSortLess(r, ins, dts, base, st); f != nil {
		return f, &err
	}
	sc := make([]*Tensor, 2*n)
	args := make([]Value, 2*n)
	for i := range sc {
		sc[i] = NewTensor(xla.MakeShape(dts[i/2]))
		args[i] = sc[i]
	}
	less := func(a, b int) bool {
		if err != nil {
			return false
		}
		for k := 0; k < n; k++ {
			if e := shpSetElem(sc[2*k], 0, ins[k], *base+a*st); e != nil {
				err = e
				return false
			}
			if e := shpSetElem(sc[2*k+1], 0, ins[k], *base+b*st); e != nil {
				err = e
				return false
			}
		}
		res, e := x.RunRegion(r, args)
		if e != nil {
			err = e
			return false
		}
		if len(res) != 1 {
			err = shpErrf("comparator returned %d values, want 1", len(res))
			return false
		}
		v, e := shpBoolValue(res[0])
		if e != nil {
			err = shpErrf("comparator result: %w", e)
			return false
		}
		return v
	}
	return less, &err
}

// shpTypedSortLess returns the typed ordering for a comparator that is one
// compare of an input's pair of arguments, or nil.
func shpTypedSortLess(r *stablehlo.Region, ins []*Tensor, dts []xla.DType, base *int, st int) func(a, b int) bool {
	c := shpRegionCompare(r, dts, 2*len(ins))
	if c == nil || c.lhs/2 != c.rhs/2 || c.lhs == c.rhs {
		return nil
	}
	f := shpTypedLess(ins[c.lhs/2], c, base, st)
	if f == nil {
		return nil
	}
	if c.lhs > c.rhs { // compare(%rhs_k, %lhs_k): swap the operands
		return func(a, b int) bool { return f(b, a) }
	}
	return f
}

// shpTypedLess returns the typed comparison of elements of t at slice
// positions a and b, or nil when the type is not handled.
func shpTypedLess(t *Tensor, c *shpCmp, base *int, st int) func(a, b int) bool {
	switch d := t.Data.(type) {
	case []float32:
		if c.totalOrder {
			f := shpOrdered[int32](c.dir)
			return func(a, b int) bool { return f(shpTotalF32(d[*base+a*st]), shpTotalF32(d[*base+b*st])) }
		}
		return shpLessAt(d, shpOrdered[float32](c.dir), base, st)
	case []float64:
		if c.totalOrder {
			f := shpOrdered[int64](c.dir)
			return func(a, b int) bool { return f(shpTotalF64(d[*base+a*st]), shpTotalF64(d[*base+b*st])) }
		}
		return shpLessAt(d, shpOrdered[float64](c.dir), base, st)
	case []int8:
		return shpLessAt(d, shpOrdered[int8](c.dir), base, st)
	case []int16:
		return shpLessAt(d, shpOrdered[int16](c.dir), base, st)
	case []int32:
		return shpLessAt(d, shpOrdered[int32](c.dir), base, st)
	case []int64:
		return shpLessAt(d, shpOrdered[int64](c.dir), base, st)
	case []uint8:
		return shpLessAt(d, shpOrdered[uint8](c.dir), base, st)
	case []uint16:
		return shpLessAt(d, shpOrdered[uint16](c.dir), base, st)
	case []uint32:
		return shpLessAt(d, shpOrdered[uint32](c.dir), base, st)
	case []uint64:
		return shpLessAt(d, shpOrdered[uint64](c.dir), base, st)
	case []bool:
		f := shpOrdered[uint8](c.dir)
		b2u := func(v bool) uint8 {
			if v {
				return 1
			}
			return 0
		}
		return func(a, b int) bool { return f(b2u(d[*base+a*st]), b2u(d[*base+b*st])) }
	}
	return nil
}

func shpLessAt[T any](d []T, f func(a, b T) bool, base *int, st int) func(a, b int) bool {
	return func(a, b int) bool { return f(d[*base+a*st], d[*base+b*st]) }
}

// shpTotalF32 maps a float to an integer whose order is IEEE-754 totalOrder:
// -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN.
func shpTotalF32(v float32) int32 {
	b := int32(math.Float32bits(v))
	if b < 0 {
		b ^= 0x7fffffff
	}
	return b
}

func shpTotalF64(v float64) int64 {
	b := int64(math.Float64bits(v))
	if b < 0 {
		b ^= 0x7fffffffffffffff
	}
	return b
}

// shpStableSort sorts p stably by less (merge sort; tmp has len(p)). It
// ends early, p unsorted, once stop is set.
func shpStableSort(p, tmp []int, less func(a, b int) bool, stop *atomic.Bool) {
	n := len(p)
	if n <= 12 {
		for i := 1; i < n; i++ {
			for j := i; j > 0 && less(p[j], p[j-1]); j-- {
				p[j], p[j-1] = p[j-1], p[j]
			}
		}
		return
	}
	if n >= 1<<12 && stopped(stop) {
		return
	}
	m := n / 2
	shpStableSort(p[:m], tmp[:m], less, stop)
	shpStableSort(p[m:], tmp[m:], less, stop)
	if !less(p[m], p[m-1]) {
		return
	}
	copy(tmp[:n], p)
	i, j, k := 0, m, 0
	for i < m && j < n {
		if less(tmp[j], tmp[i]) {
			p[k] = tmp[j]
			j++
		} else {
			p[k] = tmp[i]
			i++
		}
		k++
	}
	for i < m {
		p[k] = tmp[i]
		i++
		k++
	}
	for j < n {
		p[k] = tmp[j]
		j++
		k++
	}
}
