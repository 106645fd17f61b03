package interpreter

import (
	"math/bits"

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
// exactly the stable order the merge sort gives.

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
	v := shpVectorize(r, int64(lanes))
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
