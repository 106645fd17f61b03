package interpreter

import (
	"fmt"
	"sort"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// einsum and unary_einsum (deprecated StableHLO ops, XLA's einsum_config
// notation): "ab,bc->ac" names every dimension of each operand with a
// letter; the result has the dimensions named after "->", and every label
// missing from the result is summed over. A label repeated within one
// operand takes its diagonal. "..." stands for the unnamed leading
// dimensions, matched right-aligned across operands. Without "->" the
// result is "..." followed by the labels used once, in alphabetical order.
// Products are summed in the compute type of dot_general.

func init() {
	registerKernel("stablehlo.einsum", einsumKernel)
	registerKernel("stablehlo.unary_einsum", einsumKernel)
}

func einsumKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	n := 2
	if op.Name == "stablehlo.unary_einsum" {
		n = 1
	}
	ts, err := laTensorArgs(args, n)
	if err != nil {
		return nil, err
	}
	cfg, ok := op.Attr("einsum_config").(stablehlo.StringAttr)
	if !ok {
		return nil, fmt.Errorf("einsum_config is %T, want a string", op.Attr("einsum_config"))
	}
	rt, err := laResultType(op, 0)
	if err != nil {
		return nil, err
	}
	t, err := einsum(string(cfg), ts, rt.Shape())
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

// einsumEllipsis is the first label given to "..." dimensions.
const einsumEllipsis = rune(0x10000)

// einsumParse returns each operand's labels and the result's labels.
func einsumParse(cfg string, ranks []int) ([][]rune, []rune, error) {
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

func einsum(cfg string, ops []*Tensor, result xla.Shape) (*Tensor, error) {
	ranks := make([]int, len(ops))
	dts := make([]xla.DType, len(ops))
	for i, t := range ops {
		ranks[i] = t.Shape.Rank()
		dts[i] = t.Shape.DType
	}
	ins, out, err := einsumParse(cfg, ranks)
	if err != nil {
		return nil, err
	}
	sizes := map[rune]int64{}
	for i, labels := range ins {
		for d, l := range labels {
			n := ops[i].Shape.Dims[d]
			if s, ok := sizes[l]; ok && s != n {
				return nil, fmt.Errorf("einsum_config %q: label %q has sizes %d and %d", cfg, l, s, n)
			}
			sizes[l] = n
		}
	}
	outDims := make([]int64, len(out))
	for i, l := range out {
		s, ok := sizes[l]
		if !ok {
			return nil, fmt.Errorf("einsum_config %q: result label %q is not an operand label", cfg, l)
		}
		outDims[i] = s
	}
	if !xla.MakeShape(result.DType, outDims...).Equal(result) {
		return nil, fmt.Errorf("result type %v does not match einsum_config %q (want dimensions %v)", stablehlo.TensorOf(result), cfg, outDims)
	}
	// Summed labels after the result labels, in order of appearance.
	all := append([]rune(nil), out...)
	inAll := map[rune]bool{}
	for _, l := range out {
		inAll[l] = true
	}
	for _, labels := range ins {
		for _, l := range labels {
			if !inAll[l] {
				inAll[l] = true
				all = append(all, l)
			}
		}
	}
	dims := make([]int64, len(all))
	for i, l := range all {
		dims[i] = sizes[l]
	}
	// strides[op][i]: how far operand op moves when label all[i] advances.
	strides := make([][]int64, len(ops))
	for i, labels := range ins {
		st := Strides(ops[i].Shape.Dims)
		strides[i] = make([]int64, len(all))
		for d, l := range labels {
			for k, m := range all {
				if m == l {
					strides[i][k] += st[d]
				}
			}
		}
	}
	c, err := laComputeFor(result.DType, dts...)
	if err != nil {
		return nil, err
	}
	switch c {
	case laF32:
		return einsumT[float32](ops, dims, len(out), strides, result)
	case laF64:
		return einsumT[float64](ops, dims, len(out), strides, result)
	case laI64:
		return einsumT[int64](ops, dims, len(out), strides, result)
	case laC64:
		return einsumT[complex64](ops, dims, len(out), strides, result)
	default:
		return einsumT[complex128](ops, dims, len(out), strides, result)
	}
}

func einsumT[T laNum](ops []*Tensor, dims []int64, nOut int, strides [][]int64, result xla.Shape) (*Tensor, error) {
	data := make([][]T, len(ops))
	for i, t := range ops {
		d, _, err := laSlice[T](t)
		if err != nil {
			return nil, err
		}
		data[i] = d
	}
	outDims, sumDims := dims[:nOut], dims[nOut:]
	total := int64(1)
	for _, d := range outDims {
		total *= d
	}
	sumN := int64(1)
	for _, d := range sumDims {
		sumN *= d
	}
	out := makeChecked[T](total, result)
	laParallelFor(int(total), total*sumN*int64(len(ops)), func(lo, hi int) {
		oi := make([]int64, len(outDims))
		si := make([]int64, len(sumDims))
		laUnflatten(oi, int64(lo), outDims)
		base := make([]int64, len(ops))
		for o := lo; o < hi; o++ {
			for k := range ops {
				base[k] = 0
				for d, x := range oi {
					base[k] += x * strides[k][d]
				}
			}
			var acc T
			clear(si)
			for s := int64(0); s < sumN; s++ {
				prod := T(1)
				for k := range ops {
					off := base[k]
					for d, x := range si {
						off += x * strides[k][nOut+d]
					}
					prod *= data[k][off]
				}
				acc += prod
				NextIndex(si, sumDims)
			}
			out[o] = acc
			NextIndex(oi, outDims)
		}
	})
	return laStore(result, out)
}
