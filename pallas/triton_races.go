package pallas

import (
	"fmt"
	"strings"
)

// On a GPU the programs of the grid run in parallel, in no order, and
// share nothing but device memory. Two kernel shapes that are fine in
// interpret mode (steps in row-major order) then race, so the Triton
// lowering refuses them at build time:
//
//   - an output block that several programs read and write: the kernel
//     loads (itself or the input aliased to it) and stores the output and
//     its index map ignores a grid axis
//     of more than one step (seed 000's matmul with K as a grid axis,
//     accumulating into its output block);
//   - an input aliased to an output (InputOutputAliases) that the kernel
//     loads through another block spec than the output's: a program would
//     read blocks other programs write.
//
// Both are judged from the index maps' code (dependence through a load of
// prefetched data counts); an output's index map that is arithmetic on the
// grid indices alone is also computed at build time, on the whole grid up
// to 65,536 programs and on a corner of a larger one, and two programs
// sent to the same block are an error (g0+g1 uses every axis, yet sends
// (0, 1) and (1, 0) to block 1). Outputs whose blocks are whole but for
// squeezed dims (whole arrays, and Vmap's view of them) are the kernel's
// to split when it reads and writes them at dynamic indices only (each
// program its part); one it loads or stores at static indices outside a
// When (every program the same elements) is checked as a blocked output. Outputs it
// only stores (it picks what each program stores, e.g. with a When on
// ProgramID) are not checked; neither are scalar-prefetch arrays aliased
// to outputs (whole arrays too).

// checkParallelPrograms reports the first of those races in p.
func checkParallelPrograms(p *Program) error {
	// By Refs index: the body's arguments are the refs, in order.
	stored, loaded := map[int]bool{}, map[int]bool{}
	// fixed: a load or store of the ref at static indices only, the same
	// elements in every program (outside any When).
	fixed := map[int]bool{}
	arg := map[*Value]int{}
	for i, a := range p.Body.Args {
		arg[a] = i
	}
	// A static access under a When (the program id may pick one
	// program) is not counted as every program's.
	var walk func(r *Region, cond bool)
	walk = func(r *Region, cond bool) {
		for _, op := range r.Ops {
			for _, sub := range op.Regions {
				walk(sub, cond || op.Name == "when")
			}
			if len(op.Operands) == 0 {
				continue
			}
			i, ok := arg[op.Operands[0]]
			if !ok {
				continue
			}
			switch op.Name {
			case "store":
				stored[i] = true
			case "load":
				loaded[i] = true
			default:
				continue
			}
			if op.Attrs.Indexer.NumOperands == 0 && !cond {
				fixed[i] = true
			}
		}
	}
	walk(p.Body, false)
	nin := p.NumInputs
	for o := 0; o < p.NumOutputs; o++ {
		ri := p.NumPrefetch + nin + o
		r := p.Refs[ri]
		// An aliased input is the output's memory: loading it loads the output.
		read := loaded[ri] || r.AliasOf >= p.NumPrefetch && loaded[r.AliasOf]
		if !stored[ri] || !read || wholeButSqueezed(r) && !fixed[ri] {
			continue
		}
		m := p.IndexMaps[nin+o]
		deps := gridDeps(m, len(p.Grid))
		for g, n := range p.Grid {
			if n > 1 && !deps[g] {
				return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
					"%s: its index map ignores grid axis %d (%d steps), so that many programs load and store each block; "+
						"on a GPU they run in parallel and race. Loop inside the kernel (ForLoop) instead of along that axis", r, g, n)}
			}
		}
		if a, b, block, found := sharedBlock(m, p.Grid); found {
			return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
				"%s: its index map sends grid points %s and %s to the same block %s, which both programs load and store; "+
					"on a GPU they run in parallel and race. Give each program its own block, or loop inside the kernel (ForLoop)", r, tuple(a), tuple(b), tuple(block))}
		}
	}
	for o := 0; o < p.NumOutputs; o++ {
		out := p.Refs[p.NumPrefetch+nin+o]
		if out.AliasOf < p.NumPrefetch {
			continue // none, or a prefetch array (checkAliasedReads)
		}
		in := out.AliasOf // the input's Refs index (operands and refs share their order)
		if in >= p.NumPrefetch+nin || !loaded[in] {
			continue
		}
		inMap, outMap := p.IndexMaps[in-p.NumPrefetch], p.IndexMaps[nin+o]
		if !sameShape(p.Refs[in].Block, out.Block) || regionKey(inMap) != regionKey(outMap) {
			return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
				"%s is aliased to %s (InputOutputAliases) and loaded through another block spec: "+
					"on a GPU a program would read blocks other programs write; give both the same block shape and index map", p.Refs[in], out)}
		}
	}
	return nil
}

// wholeButSqueezed reports whether r's blocks span the array in every dim
// but squeezed ones.
func wholeButSqueezed(r RefInfo) bool {
	for d, b := range r.Block {
		if b != Squeezed && b != r.ArrayShape[d] {
			return false
		}
	}
	return true
}

// gridDeps reports, per grid axis, whether index map m's block indices
// depend on that axis's index (through any op, loads of prefetched data
// included). A nil map (block 0 everywhere) depends on none.
func gridDeps(m *Region, axes int) []bool {
	out := make([]bool, axes)
	if m == nil {
		return out
	}
	deps := map[*Value]uint64{}
	for g := 0; g < axes && g < len(m.Args); g++ {
		deps[m.Args[g]] = 1 << min(g, 63)
	}
	var walk func(r *Region) uint64
	walk = func(r *Region) uint64 {
		var all uint64 // what anything in r depends on, for enclosing ops
		for _, op := range r.Ops {
			var d uint64
			for _, v := range op.Operands {
				d |= deps[v]
			}
			for _, sub := range op.Regions {
				d |= walk(sub)
				for _, y := range sub.Yield {
					d |= deps[y]
				}
			}
			for _, res := range op.Results {
				deps[res] = d
			}
			all |= d
		}
		return all
	}
	walk(m)
	var d uint64
	for _, y := range m.Yield {
		d |= deps[y]
	}
	for g := range out {
		out[g] = d&(1<<min(g, 63)) != 0
	}
	return out
}

// regionKey prints r with its values numbered in order of definition, so
// that two index maps that compute the same thing print the same.
func regionKey(r *Region) string {
	if r == nil {
		return ""
	}
	ids := map[*Value]int{}
	num := func(v *Value) int {
		if n, ok := ids[v]; ok {
			return n
		}
		ids[v] = len(ids) + 1
		return ids[v]
	}
	var b strings.Builder
	printRegionWith(&b, r, 1, num)
	return b.String()
}
