package interpreter

import (
	"math/bits"
	"reflect"
	"slices"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// A comparator that is a general region (jnp.sort's float comparator, which
// canonicalises NaNs and signed zeros before a TOTALORDER compare, or a
// multi-key comparator) would cost a region call per comparison in the merge
// sort. When the region vectorises and there is enough to sort, the slices
// are sorted instead by a bitonic network: each of its log²(n)/2 stages
// compares every pair of one stage in both directions in a single vectorised
// region run. Ties are broken by the original position, so for a comparator
// that is a strict weak order (what the spec's sort needs) the result is
// exactly the stable order the merge sort gives. A comparator found to put
// two elements each before the other (LE, GE) leaves the sort to the merge
// sort, so that the order does not depend on the path either.

// shpSortNetworkMin is the number of elements (all slices together) from
// which the network is used.
const shpSortNetworkMin = 64

// shpSortNetwork sorts every slice with the vectorised comparator and
// returns src (result position -> operand offset); nil when the comparator
// does not vectorise.
func shpSortNetwork(x *Exec, r *stablehlo.Region, ins []*Tensor, dts []xla.DType, outerDims, str []int64, n, st int) ([]int, error) {
	total := ins[0].Len()
	if n < 2 || total < shpSortNetworkMin {
		return nil, nil
	}
	slices := total / n
	m := 1 << bits.Len(uint(n-1)) // next power of two
	half := slices * m / 2        // pairs per stage
	lanes := 2 * half             // each pair compared both ways
	v := shpVectorize(x, r, int64(lanes))
	if v == nil {
		return nil, nil
	}
	bases := make([]int, 0, slices)
	for o := shpNewOdo(outerDims, str, 0); !o.done; o.next() {
		bases = append(bases, int(o.off))
	}
	perm := make([]int, slices*m)
	for s := 0; s < slices; s++ {
		for i := 0; i < m; i++ {
			perm[s*m+i] = i // positions >= n are sentinels, after every element
		}
	}
	lhsIdx := make([]int, lanes)
	rhsIdx := make([]int, lanes)
	args := make([]*Tensor, 2*len(ins))
	elem := func(s, p int) int {
		if p >= n {
			p = 0 // a sentinel: any element; its comparisons are ignored
		}
		return bases[s] + p*st
	}
	for k := 2; k <= m; k <<= 1 {
		for j := k >> 1; j > 0; j >>= 1 {
			if err := x.Ctx.Err(); err != nil {
				return nil, err
			}
			// Lane q < half compares (a, b) = (perm[i], perm[i^j]);
			// lane half+q compares (b, a).
			q := 0
			for s := 0; s < slices; s++ {
				for i := 0; i < m; i++ {
					l := i ^ j
					if l <= i {
						continue
					}
					a, b := perm[s*m+i], perm[s*m+l]
					lhsIdx[q], rhsIdx[q] = elem(s, a), elem(s, b)
					lhsIdx[half+q], rhsIdx[half+q] = elem(s, b), elem(s, a)
					q++
				}
			}
			for kk, t := range ins {
				lt, rt := shpVecTensor(dts[kk], int64(lanes)), shpVecTensor(dts[kk], int64(lanes))
				if err := shpTake(lt, t, lhsIdx); err != nil {
					return nil, err
				}
				if err := shpTake(rt, t, rhsIdx); err != nil {
					return nil, err
				}
				args[2*kk], args[2*kk+1] = lt, rt
			}
			res, err := v.run(x, args)
			if err != nil {
				return nil, err
			}
			if err := shpVecResults(res, []xla.DType{xla.Bool}); err != nil {
				return nil, shpErrf("comparator: %w", err)
			}
			less := res[0].Data.([]bool)
			q = 0
			for s := 0; s < slices; s++ {
				for i := 0; i < m; i++ {
					l := i ^ j
					if l <= i {
						continue
					}
					a, b := perm[s*m+i], perm[s*m+l]
					var abFirst bool // a sorts before b
					switch {
					case a >= n || b >= n:
						abFirst = a < b // sentinels last, in position order
					case less[q] && less[half+q]:
						// Each before the other (LE, GE): no strict weak
						// order, whose result would depend on the
						// comparisons made. The merge sort decides, as for
						// every comparator that does not vectorise.
						return nil, nil
					case less[q]:
						abFirst = true
					case less[half+q]:
						abFirst = false
					default:
						abFirst = a < b // equivalent: original order
					}
					if ascending := i&k == 0; ascending != abFirst {
						perm[s*m+i], perm[s*m+l] = b, a
					}
					q++
				}
			}
		}
	}
	src := make([]int, total)
	for s, base := range bases {
		for i := 0; i < n; i++ {
			src[base+i*st] = base + perm[s*m+i]*st
		}
	}
	return src, nil
}

// A comparator of the form compare(f(a...), f(b...)), where f is the same
// computation on the first and on the second argument of each pair
// (jnp.sort's: canonicalise NaNs and signed zeros, then a TOTALORDER
// compare), orders elements by their keys f(x): the keys are computed
// once per element, in one vectorised run of f over every element, and
// the slices are sorted by the typed comparison of their keys. The merge
// sort takes the same decisions as with the region, so the order is the
// same.

// shpSortByKeys turns the keyed sort on (a var for benchmarks to compare
// it with the network).
var shpSortByKeys = true

// shpKeyedSortLess returns the ordering of slice positions by keys, for a
// comparator of that form (keys computed for every element of ins), or
// nil when the comparator is not of that form or its f does not
// vectorise.
func shpKeyedSortLess(x *Exec, r *stablehlo.Region, ins []*Tensor, dts []xla.DType, base *int, st int) (func(a, b int) bool, error) {
	total := ins[0].Len()
	if !shpSortByKeys || r == nil || len(r.Blocks) != 1 || total < shpSortNetworkMin {
		return nil, nil
	}
	b := r.Blocks[0]
	if len(b.Args) != 2*len(ins) || len(b.Ops) < 2 {
		return nil, nil
	}
	ret := b.Ops[len(b.Ops)-1]
	if !isTerminator(ret.Name) || len(ret.Operands) != 1 || ret.Operands[0].Op() == nil {
		return nil, nil
	}
	cmp := ret.Operands[0].Op()
	if cmp.Name != "stablehlo.compare" || len(cmp.Operands) != 2 || cmp.Parent() != b {
		return nil, nil
	}
	lhs, rhs := cmp.Operands[0], cmp.Operands[1]
	kt, ok := shpScalarType(lhs.Type)
	if !ok {
		return nil, nil
	}
	c := shpCompareOf(cmp, kt)
	if c == nil || !shpMirrored(b, lhs, rhs, map[[2]*stablehlo.Value]bool{}) {
		return nil, nil
	}
	v := shpVectorizeFor(x, r, int64(total), lhs)
	if v == nil {
		return nil, nil
	}
	args := make([]*Tensor, 2*len(ins))
	for k, t := range ins {
		flat := &Tensor{Shape: xla.MakeShape(dts[k], int64(total)), Data: t.Data}
		args[2*k], args[2*k+1] = flat, flat
	}
	res, err := v.run(x, args)
	if err != nil {
		return nil, err
	}
	if err := shpVecResults(res, []xla.DType{kt}); err != nil {
		return nil, shpErrf("comparator keys: %w", err)
	}
	return shpTypedLess(res[0], c, base, st), nil
}

// shpMirrored reports whether value r of block b computes what value l
// does with every pair's first argument (2k) replaced by its second
// (2k+1), l depending on first arguments only: the same ops with the
// same attributes, or the very same value where neither depends on the
// arguments (a constant, a value from outside the region).
func shpMirrored(b *stablehlo.Block, l, r *stablehlo.Value, seen map[[2]*stablehlo.Value]bool) bool {
	if seen[[2]*stablehlo.Value{l, r}] {
		return true
	}
	li, lArg := slices.Index(b.Args, l), slices.Contains(b.Args, l)
	ri := slices.Index(b.Args, r)
	switch {
	case lArg || ri >= 0:
		return li >= 0 && li%2 == 0 && ri == li+1
	case l == r:
		return !shpUsesArgs(b, l)
	}
	lo, ro := l.Op(), r.Op()
	if lo == nil || ro == nil || lo.Parent() != b || ro.Parent() != b || lo.Name != ro.Name ||
		l.Index() != r.Index() || len(lo.Operands) != len(ro.Operands) || len(lo.Regions) != 0 || len(ro.Regions) != 0 ||
		!reflect.DeepEqual(lo.Attrs, ro.Attrs) {
		return false
	}
	for i := range lo.Operands {
		if !shpMirrored(b, lo.Operands[i], ro.Operands[i], seen) {
			return false
		}
	}
	seen[[2]*stablehlo.Value{l, r}] = true
	return true
}

// shpUsesArgs reports whether value v of block b depends on b's arguments.
func shpUsesArgs(b *stablehlo.Block, v *stablehlo.Value) bool {
	if slices.Contains(b.Args, v) {
		return true
	}
	op := v.Op()
	if op == nil || op.Parent() != b {
		return false // from outside the region
	}
	for _, x := range op.Operands {
		if shpUsesArgs(b, x) {
			return true
		}
	}
	return false
}
