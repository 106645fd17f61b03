package stablehlo

import (
	"fmt"
	"sort"
	"strings"
)

// EinsumPlan is an einsum_config (the deprecated einsum and unary_einsum
// ops, XLA's notation) read against its operands' dimensions: "ab,bc->ac"
// names every dimension of each operand with a letter; the result has the
// dimensions named after "->", and every label missing from it is summed
// over. A label repeated within one operand takes its diagonal. "..."
// stands for the unnamed leading dimensions, matched right-aligned across
// operands. Without "->" the result is "..." followed by the labels used
// once, in alphabetical order.
type EinsumPlan struct {
	Inputs [][]rune       // each operand's label per dimension
	Result []rune         // the result's labels
	Sizes  map[rune]int64 // each label's size
}

// PlanEinsum reads config against operands of the given dimensions: an
// error names a config that does not fit them (operand count, ranks, a
// label of two sizes, a result label no operand has).
func PlanEinsum(config string, operands ...[]int64) (*EinsumPlan, error) {
	ranks := make([]int, len(operands))
	for i, d := range operands {
		ranks[i] = len(d)
	}
	ins, out, err := parseEinsum(config, ranks)
	if err != nil {
		return nil, err
	}
	sizes := map[rune]int64{}
	for i, labels := range ins {
		for d, l := range labels {
			n := operands[i][d]
			if s, ok := sizes[l]; ok && s != n {
				return nil, fmt.Errorf("einsum_config %q: label %q has sizes %d and %d", config, l, s, n)
			}
			sizes[l] = n
		}
	}
	for _, l := range out {
		if _, ok := sizes[l]; !ok {
			return nil, fmt.Errorf("einsum_config %q: result label %q is not an operand label", config, l)
		}
	}
	return &EinsumPlan{Inputs: ins, Result: out, Sizes: sizes}, nil
}

// ResultDims are the dimensions of the result.
func (p *EinsumPlan) ResultDims() []int64 {
	dims := make([]int64, len(p.Result))
	for i, l := range p.Result {
		dims[i] = p.Sizes[l]
	}
	return dims
}

// einsumEllipsis is the first label given to "..." dimensions.
const einsumEllipsis = rune(0x10000)

// parseEinsum returns each operand's labels and the result's labels.
func parseEinsum(cfg string, ranks []int) ([][]rune, []rune, error) {
	lhs, rhs, explicit := strings.Cut(strings.ReplaceAll(cfg, " ", ""), "->")
	parts := strings.Split(lhs, ",")
	if len(parts) != len(ranks) {
		return nil, nil, fmt.Errorf("einsum_config %q names %d operands, the op has %d", cfg, len(parts), len(ranks))
	}
	maxE := 0
	ins := make([][]rune, len(parts))
	expand := func(s string, rank int) ([]rune, int, error) {
		before, after, dots := strings.Cut(s, "...")
		if !dots {
			r := []rune(s)
			if rank >= 0 && len(r) != rank {
				return nil, 0, fmt.Errorf("einsum_config %q: %q names %d dimensions of an operand of rank %d", cfg, s, len(r), rank)
			}
			return r, 0, nil
		}
		b, a := []rune(before), []rune(after)
		e := rank - len(b) - len(a)
		if rank >= 0 && e < 0 {
			return nil, 0, fmt.Errorf("einsum_config %q: %q names more dimensions than rank %d", cfg, s, rank)
		}
		return append(append(b, make([]rune, max(e, 0))...), a...), e, nil
	}
	var eCount []int
	for i, p := range parts {
		r, e, err := expand(p, ranks[i])
		if err != nil {
			return nil, nil, err
		}
		ins[i] = r
		eCount = append(eCount, e)
		maxE = max(maxE, e)
	}
	for i, p := range parts {
		if e := eCount[i]; e > 0 {
			start := strings.Index(p, "...")
			for k := 0; k < e; k++ {
				ins[i][len([]rune(p[:start]))+k] = einsumEllipsis + rune(maxE-e+k)
			}
		}
	}
	var out []rune
	if explicit {
		before, after, dots := strings.Cut(rhs, "...")
		out = []rune(before)
		if dots {
			for k := 0; k < maxE; k++ {
				out = append(out, einsumEllipsis+rune(k))
			}
			out = append(out, []rune(after)...)
		} else {
			out = []rune(rhs)
		}
	} else {
		count := map[rune]int{}
		for _, in := range ins {
			for _, l := range in {
				count[l]++
			}
		}
		for k := 0; k < maxE; k++ {
			out = append(out, einsumEllipsis+rune(k))
		}
		var once []rune
		for l, c := range count {
			if c == 1 && l < einsumEllipsis {
				once = append(once, l)
			}
		}
		sort.Slice(once, func(i, j int) bool { return once[i] < once[j] })
		out = append(out, once...)
	}
	seen := map[rune]bool{}
	for _, l := range out {
		if seen[l] {
			return nil, nil, fmt.Errorf("einsum_config %q repeats a result label", cfg)
		}
		seen[l] = true
	}
	return ins, out, nil
}
