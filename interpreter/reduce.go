package interpreter

import (
	"slices"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func init() {
	shpRegister("stablehlo.reduce", shpReduce)
}

// shpRedGeom is the iteration geometry of a reduction: the kept dimensions
// (the output, row-major) and the reduced dimensions (walked in ascending
// lexicographic order of the input index, as the spec's schedule lists the
// values), both with their strides in the input.
type shpRedGeom struct {
	keptDims, keptStr []int64
	redDims, redStr   []int64
	redCount          int64
	// keptInner: the kept dimensions are the trailing ones, so every reduced
	// position is a contiguous row of all outputs.
	keptInner bool
}

func shpNewRedGeom(dims []int64, reduced []int64) *shpRedGeom {
	str := Strides(dims)
	g := &shpRedGeom{redCount: 1}
	for d := range dims {
		if shpContains(reduced, int64(d)) {
			g.redDims = append(g.redDims, dims[d])
			g.redStr = append(g.redStr, str[d])
			g.redCount *= dims[d]
		} else {
			g.keptDims = append(g.keptDims, dims[d])
			g.keptStr = append(g.keptStr, str[d])
		}
	}
	// Merge contiguous reduced dimensions so that the common case (reducing
	// trailing dimensions) is one contiguous run.
	g.redDims, g.redStr, _ = shpCoalesce(g.redDims, g.redStr, g.redStr)
	kd, ks, _ := shpCoalesce(g.keptDims, g.keptStr, g.keptStr)
	g.keptInner = len(kd) == 1 && ks[0] == 1
	return g
}

// shpReduce is stablehlo.reduce: inputs..., init_values... with a body region
// and the dimensions attribute.
func shpReduce(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, shpErrf("reduce takes inputs and as many init values, got %d operands", len(args))
	}
	n := len(args) / 2
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	ins, inits := ts[:n], ts[n:]
	dims, ok, err := shpAttrInts(op, "dimensions")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, shpErrf("missing attribute dimensions")
	}
	shape := ins[0].Shape
	if err := shpDimsIn("dimensions", dims, shape.Rank()); err != nil {
		return nil, err
	}
	dts := make([]xla.DType, n)
	for k := range ins {
		if !ins[k].Shape.Equal(xla.MakeShape(ins[k].Shape.DType, shape.Dims...)) {
			return nil, shpErrf("inputs have different shapes (%v and %v)", shape, ins[k].Shape)
		}
		if inits[k].Shape.Rank() != 0 || inits[k].Shape.DType != ins[k].Shape.DType {
			return nil, shpErrf("init value %d is %v, want a rank-0 %v", k, inits[k].Shape, ins[k].Shape.DType)
		}
		dts[k] = ins[k].Shape.DType
	}
	if len(op.Results) != n || len(op.Regions) != 1 {
		return nil, shpErrf("reduce has %d results and %d regions, want %d and 1", len(op.Results), len(op.Regions), n)
	}
	if ins, inits, dts, err = shpPromote(op, ins, inits, dts); err != nil {
		return nil, err
	}
	var outDims []int64
	for d, s := range shape.Dims {
		if !shpContains(dims, int64(d)) {
			outDims = append(outDims, s)
		}
	}
	outs := make([]*Tensor, n)
	for k := range outs {
		sh, err := shpCheckShape(op, k, dts[k], outDims)
		if err != nil {
			return nil, err
		}
		outs[k] = NewTensor(sh)
	}
	g := shpNewRedGeom(shape.Dims, dims)
	if bops := shpRegionBinops(op.Regions[0], dts); bops != nil && shpAllSupported(bops, dts) {
		for k := range outs {
			shpReduceFast(ins[k], outs[k], inits[k], bops[k], g)
		}
	} else if err := shpReduceGeneral(x, op.Regions[0], ins, inits, outs, g); err != nil {
		return nil, err
	}
	res := make([]Value, n)
	for k := range outs {
		res[k] = outs[k]
	}
	return res, nil
}

// shpPromote returns a reduction's inputs and the values combined with
// them (init values, or a scatter's updates), of element types dts, in the
// element types its body works in, converted where those are wider
// (StableHLO lets a body accumulate in a promotion of the inputs' types,
// stablehlo.Promotable; the results take the body's types), and those
// types.
func shpPromote(op *stablehlo.Op, ins, inits []*Tensor, dts []xla.DType) ([]*Tensor, []*Tensor, []xla.DType, error) {
	if len(op.Regions) == 0 || op.Regions[0] == nil || len(op.Regions[0].Blocks) == 0 || op.Regions[0].Blocks[0] == nil {
		return ins, inits, dts, nil
	}
	args := op.Regions[0].Blocks[0].Args
	var out []xla.DType
	for k, dt := range dts {
		if k >= len(args) || args[k] == nil {
			break
		}
		tt, ok := args[k].Type.(stablehlo.TensorType)
		if !ok || tt.DType == dt {
			continue
		}
		if !stablehlo.Promotable(dt, tt.DType) {
			return nil, nil, nil, shpErrf("the body works in %v, not a promotion of input %d's %v (same kind, at least as wide)", tt.DType, k, dt)
		}
		if out == nil {
			out = slices.Clone(dts)
			ins, inits = slices.Clone(ins), slices.Clone(inits)
		}
		out[k] = tt.DType
		for _, ts := range [][]*Tensor{ins, inits} {
			c := NewTensor(xla.MakeShape(tt.DType, ts[k].Shape.Dims...))
			if err := Convert(c, ts[k]); err != nil {
				return nil, nil, nil, err
			}
			ts[k] = c
		}
	}
	if out == nil {
		return ins, inits, dts, nil
	}
	return ins, inits, out, nil
}

func shpAllSupported(bops []shpBinop, dts []xla.DType) bool {
	for k, b := range bops {
		if !shpBinSupported(b, dts[k]) {
			return false
		}
	}
	return true
}

// shpReduceGeneral runs the body region once per element, or once per
// reduced position on vectors of all outputs when the region vectorises.
func shpReduceGeneral(x *Exec, body *stablehlo.Region, ins, inits, outs []*Tensor, g *shpRedGeom) error {
	if nOut := int64(outs[0].Len()); nOut >= 2 && g.redCount > 0 {
		if v := shpVectorize(x, body, nOut); v != nil {
			return shpReduceVector(x, v, ins, inits, outs, g)
		}
	}
	n := len(ins)
	dts := make([]xla.DType, n)
	for k := range ins {
		dts[k] = ins[k].Shape.DType
	}
	acc, xs := shpScalars(dts), shpScalars(dts)
	args := make([]Value, 2*n)
	for k := 0; k < n; k++ {
		args[k], args[n+k] = acc[k], xs[k]
	}
	red := shpNewOdo(g.redDims, g.redStr, 0)
	o := 0
	for kept := shpNewOdo(g.keptDims, g.keptStr, 0); !kept.done; kept.next() {
		for k := 0; k < n; k++ {
			if err := shpSetElem(acc[k], 0, inits[k], 0); err != nil {
				return err
			}
		}
		for red.reset(kept.off); !red.done; red.next() {
			for k := 0; k < n; k++ {
				if err := shpSetElem(xs[k], 0, ins[k], int(red.off)); err != nil {
					return err
				}
			}
			if err := shpRunScalarRegion(x, body, args, acc); err != nil {
				return err
			}
		}
		for k := 0; k < n; k++ {
			if err := shpSetElem(outs[k], o, acc[k], 0); err != nil {
				return err
			}
		}
		o++
	}
	return nil
}

// shpReduceVector folds the inputs into vectors of all outputs, one reduced
// position at a time, in the order of the per-element path.
func shpReduceVector(x *Exec, v *shpVecRegion, ins, inits, outs []*Tensor, g *shpRedGeom) error {
	n := len(ins)
	nOut := outs[0].Len()
	dts := make([]xla.DType, n)
	for k := range ins {
		dts[k] = ins[k].Shape.DType
	}
	kept := make([]int, 0, nOut)
	for o := shpNewOdo(g.keptDims, g.keptStr, 0); !o.done; o.next() {
		kept = append(kept, int(o.off))
	}
	args := make([]*Tensor, 2*n)
	for k := range ins {
		acc, err := shpDoBroadcast(inits[k], nil, []int64{int64(nOut)})
		if err != nil {
			return err
		}
		args[k] = acc
	}
	idx := make([]int, nOut)
	for red := shpNewOdo(g.redDims, g.redStr, 0); !red.done; red.next() {
		if err := x.Ctx.Err(); err != nil {
			return err
		}
		for o, b := range kept {
			idx[o] = b + int(red.off)
		}
		for k := range ins {
			xk := shpVecTensor(dts[k], int64(nOut))
			if err := shpTake(xk, ins[k], idx); err != nil {
				return err
			}
			args[n+k] = xk
		}
		res, err := v.run(x, args)
		if err != nil {
			return err
		}
		if err := shpVecResults(res, dts); err != nil {
			return err
		}
		copy(args, res)
	}
	for k := range outs {
		if err := shpCopy(outs[k], args[k], []int64{int64(nOut)}, 0, []int64{1}, 0, []int64{1}); err != nil {
			return err
		}
	}
	return nil
}

// shpReduceFast reduces one input with a recognised binary op.
func shpReduceFast(in, out, init *Tensor, op shpBinop, g *shpRedGeom) {
	dt := in.Shape.DType
	switch d := in.Data.(type) {
	case []float32:
		if op == shpBinAdd && dt == xla.Float32 {
			shpReduceT(d, out.Data.([]float32), init.Data.([]float32)[0], shpSumFold[float32](), g)
			return
		}
		f, _ := shpBinF32(op, dt)
		shpReduceT(d, out.Data.([]float32), init.Data.([]float32)[0], shpFoldOf(f), g)
	case []float64:
		if op == shpBinAdd {
			shpReduceT(d, out.Data.([]float64), init.Data.([]float64)[0], shpSumFold[float64](), g)
			return
		}
		f, _ := shpBinF64(op)
		shpReduceT(d, out.Data.([]float64), init.Data.([]float64)[0], shpFoldOf(f), g)
	case []bool:
		f, _ := shpBinBool(op)
		shpReduceT(d, out.Data.([]bool), init.Data.([]bool)[0], shpFoldOf(f), g)
	case []int8:
		f, _ := shpBinInt[int8](op)
		shpReduceT(d, out.Data.([]int8), init.Data.([]int8)[0], shpFoldOf(f), g)
	case []int16:
		f, _ := shpBinInt[int16](op)
		shpReduceT(d, out.Data.([]int16), init.Data.([]int16)[0], shpFoldOf(f), g)
	case []int32:
		f, _ := shpBinInt[int32](op)
		shpReduceT(d, out.Data.([]int32), init.Data.([]int32)[0], shpFoldOf(f), g)
	case []int64:
		f, _ := shpBinInt[int64](op)
		shpReduceT(d, out.Data.([]int64), init.Data.([]int64)[0], shpFoldOf(f), g)
	case []uint8:
		f, _ := shpBinInt[uint8](op)
		shpReduceT(d, out.Data.([]uint8), init.Data.([]uint8)[0], shpFoldOf(f), g)
	case []uint16:
		f, _ := shpBinInt[uint16](op)
		shpReduceT(d, out.Data.([]uint16), init.Data.([]uint16)[0], shpFoldOf(f), g)
	case []uint32:
		f, _ := shpBinInt[uint32](op)
		shpReduceT(d, out.Data.([]uint32), init.Data.([]uint32)[0], shpFoldOf(f), g)
	case []uint64:
		f, _ := shpBinInt[uint64](op)
		shpReduceT(d, out.Data.([]uint64), init.Data.([]uint64)[0], shpFoldOf(f), g)
	case []complex64:
		f, _ := shpBinArith[complex64](op)
		shpReduceT(d, out.Data.([]complex64), init.Data.([]complex64)[0], shpFoldOf(f), g)
	case []complex128:
		f, _ := shpBinArith[complex128](op)
		shpReduceT(d, out.Data.([]complex128), init.Data.([]complex128)[0], shpFoldOf(f), g)
	}
	shpRewrap(out)
}

// shpFold is a binary op with loops over runs of elements: run folds a
// contiguous run into an accumulator, rows folds a row into a row of
// accumulators (acc[j] = f(acc[j], row[j])).
type shpFold[T any] struct {
	f    func(a, b T) T
	run  func(acc T, xs []T) T
	rows func(acc, row []T)
}

func shpFoldOf[T any](f func(a, b T) T) shpFold[T] {
	return shpFold[T]{
		f: f,
		run: func(acc T, xs []T) T {
			for _, v := range xs {
				acc = f(acc, v)
			}
			return acc
		},
		rows: func(acc, row []T) {
			for j, v := range row {
				acc[j] = f(acc[j], v)
			}
		},
	}
}

// shpSumFold is addition with the loops written out (no call per element).
func shpSumFold[T float32 | float64]() shpFold[T] {
	return shpFold[T]{
		f: func(a, b T) T { return a + b },
		run: func(acc T, xs []T) T {
			for _, v := range xs {
				acc += v
			}
			return acc
		},
		rows: func(acc, row []T) {
			acc = acc[:len(row)]
			for j, v := range row {
				acc[j] += v
			}
		},
	}
}

// shpReduceT folds every output's elements in ascending input index order.
// Large reductions are split across cores by output.
func shpReduceT[T any](in, out []T, init T, fd shpFold[T], g *shpRedGeom) {
	nOut := int64(len(out))
	total := int64(len(in))
	contiguous := len(g.redDims) == 1 && g.redStr[0] == 1
	if !contiguous && g.keptInner {
		// Fold row after row into all outputs: each output still sees its
		// elements in ascending order.
		shpSplit(nOut, total, func(lo, hi int64) {
			acc := out[lo:hi]
			for j := range acc {
				acc[j] = init
			}
			for red := shpNewOdo(g.redDims, g.redStr, 0); !red.done; red.next() {
				fd.rows(acc, in[red.off+lo:red.off+hi])
			}
		})
		return
	}
	kept := make([]int64, 0, nOut)
	for o := shpNewOdo(g.keptDims, g.keptStr, 0); !o.done; o.next() {
		kept = append(kept, o.off)
	}
	shpSplit(nOut, total, func(lo, hi int64) {
		if contiguous {
			n := g.redDims[0]
			for o := lo; o < hi; o++ {
				out[o] = fd.run(init, in[kept[o]:kept[o]+n])
			}
			return
		}
		red := shpNewOdo(g.redDims, g.redStr, 0)
		for o := lo; o < hi; o++ {
			acc := init
			for red.reset(kept[o]); !red.done; red.next() {
				acc = fd.f(acc, in[red.off])
			}
			out[o] = acc
		}
	})
}
