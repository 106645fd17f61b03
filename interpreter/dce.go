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
// accumulator that a later add made redundant). An op whose types do not
// check out (wellTyped) runs anyway, to report what is wrong with it.

// effectOps are the ops that do more than compute their results, besides
// those that may keep their operands (mayKeepsOperands: transfers,
// collectives, custom calls, ops registered from outside).
var effectOps = map[string]bool{"stablehlo.rng": true, "func.call": true, "stablehlo.composite": true}

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
				if unread(op, uses) && effectFree(op) && wellTyped(op) {
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
	if effectOps[op.Name] || mayKeepsOperands(op.Name) {
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

// wellTyped reports whether op's result types are those its operands and
// attributes give: for a constant, its value's type; for if, case and
// while, when every op in their regions is well typed too; for other ops,
// when stablehlo.InferResultTypes knows them. Only such ops are left out:
// a malformed op runs, and reports what is wrong with it.
func wellTyped(op *stablehlo.Op) bool {
	switch op.Name {
	case "stablehlo.constant":
		a, ok := op.Attr("value").(stablehlo.DenseElementsAttr)
		return ok && len(op.Results) == 1 && stablehlo.TypesEqual(op.Results[0].Type, a.Type)
	case "stablehlo.if", "stablehlo.case", "stablehlo.while":
		for _, r := range op.Regions {
			for _, b := range r.Blocks {
				for _, inner := range b.Ops {
					if !isTerminator(inner.Name) && !wellTyped(inner) {
						return false
					}
				}
			}
		}
		return true
	}
	known, err := stablehlo.CheckResultTypes(op)
	return known && err == nil
}
