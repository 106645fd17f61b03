package interpreter

import "github.com/halo-ml/halo/stablehlo"

// Dead ops.
//
// An op whose results nothing reads and that does nothing else (no
// transfer, collective, custom call, call of another function, random
// numbers from the run's state, or op registered from outside this
// package; an if, case or while only when every op in its regions is
// such an op) is not run: it could change nothing but the run's time.
// Removing one can make the producers of its operands dead in turn.
// pallas's interpret lowering leaves such ops behind (the reset of an
// accumulator that a later add made redundant). Compile still checks
// them.

// effectOps are the ops that do more than compute their results.
var effectOps = map[string]bool{
	"stablehlo.custom_call": true, "stablehlo.infeed": true, "stablehlo.outfeed": true,
	"stablehlo.send": true, "stablehlo.recv": true, "stablehlo.rng": true,
	"stablehlo.all_reduce": true, "stablehlo.all_gather": true, "stablehlo.all_to_all": true,
	"stablehlo.reduce_scatter": true, "stablehlo.collective_permute": true, "stablehlo.collective_broadcast": true,
	"func.call": true, "stablehlo.composite": true,
}

// deadOps returns the ops of f (at any depth) that need not run.
func deadOps(f *stablehlo.Func) map[*stablehlo.Op]bool {
	uses := map[*stablehlo.Value]int{}
	for _, b := range f.Body.Blocks {
		countUses(b.Ops, uses)
	}
	dead := map[*stablehlo.Op]bool{}
	for changed := true; changed; {
		changed = false
		var walk func(ops []*stablehlo.Op)
		walk = func(ops []*stablehlo.Op) {
			for i := len(ops) - 1; i >= 0; i-- {
				op := ops[i]
				if dead[op] {
					continue
				}
				if unread(op, uses) && effectFree(op) {
					dead[op] = true
					uncount([]*stablehlo.Op{op}, uses)
					changed = true
					continue
				}
				for _, r := range op.Regions {
					for _, b := range r.Blocks {
						walk(b.Ops)
					}
				}
			}
		}
		for _, b := range f.Body.Blocks {
			walk(b.Ops)
		}
	}
	return dead
}

// unread reports whether op has results and nothing reads any of them.
func unread(op *stablehlo.Op, uses map[*stablehlo.Value]int) bool {
	if len(op.Results) == 0 || isTerminator(op.Name) {
		return false
	}
	for _, v := range op.Results {
		if uses[v] > 0 {
			return false
		}
	}
	return true
}

// effectFree reports whether running op (its regions included) does
// nothing but compute its results.
func effectFree(op *stablehlo.Op) bool {
	if effectOps[op.Name] || isExternal(op.Name) {
		return false
	}
	for _, r := range op.Regions {
		for _, b := range r.Blocks {
			for _, inner := range b.Ops {
				if !isTerminator(inner.Name) && !effectFree(inner) {
					return false
				}
			}
		}
	}
	return true
}

// isExternal reports whether the kernel of the op name was registered
// from outside this package (it may do anything).
func isExternal(name string) bool {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	return externalKernels[name]
}

// uncount takes the reads of ops (their regions included) out of uses.
func uncount(ops []*stablehlo.Op, uses map[*stablehlo.Value]int) {
	for _, op := range ops {
		for _, v := range op.Operands {
			uses[v]--
		}
		for _, r := range op.Regions {
			for _, b := range r.Blocks {
				uncount(b.Ops, uses)
			}
		}
	}
}
