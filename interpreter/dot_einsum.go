package interpreter

import (
	"fmt"
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// einsum and unary_einsum (deprecated StableHLO ops, XLA's einsum_config
// notation, stablehlo.EinsumPlan). Products are summed in the compute type
// of dot_general.

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
	t, err := einsum(string(cfg), ts, rt.Shape(), x.stopFlag())
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

func einsum(cfg string, ops []*Tensor, result xla.Shape, stop *atomic.Bool) (*Tensor, error) {
	dims := make([][]int64, len(ops))
	dts := make([]xla.DType, len(ops))
	for i, t := range ops {
		dims[i] = t.Shape.Dims
		dts[i] = t.Shape.DType
	}
	plan, err := stablehlo.PlanEinsum(cfg, dims...)
	if err != nil {
		return nil, err
	}
	ins, out, sizes := plan.Inputs, plan.Result, plan.Sizes
	if outDims := plan.ResultDims(); !xla.MakeShape(result.DType, outDims...).Equal(result) {
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
	allDims := make([]int64, len(all))
	for i, l := range all {
		allDims[i] = sizes[l]
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
		return einsumT[float32](ops, allDims, len(out), strides, result, stop)
	case laF64:
		return einsumT[float64](ops, allDims, len(out), strides, result, stop)
	case laI64:
		return einsumT[int64](ops, allDims, len(out), strides, result, stop)
	case laC64:
		return einsumT[complex64](ops, allDims, len(out), strides, result, stop)
	default:
		return einsumT[complex128](ops, allDims, len(out), strides, result, stop)
	}
}

func einsumT[T laNum](ops []*Tensor, dims []int64, nOut int, strides [][]int64, result xla.Shape, stop *atomic.Bool) (*Tensor, error) {
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
	laParallelForStop(int(total), total*sumN*int64(len(ops)), stop, func(lo, hi int) {
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
