package interpreter

import (
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func init() {
	shpRegister("stablehlo.select_and_scatter", shpSelectAndScatter)
}

// shpSelectAndScatter is stablehlo.select_and_scatter. For every window (one
// per source element) it selects one operand element with the select region,
// folding left to right over the window in row-major order (the current
// selection is kept while select(current, candidate) is true), then combines
// the source value into that position of the result, which starts as
// init_value everywhere, with the scatter region. Padding positions are never
// selected (as in XLA); a window made only of padding selects nothing.
func shpSelectAndScatter(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 3 {
		return nil, shpErrf("select_and_scatter takes 3 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	operand, source, init := ts[0], ts[1], ts[2]
	dt := operand.Shape.DType
	if source.Shape.DType != dt || init.Shape.DType != dt || init.Shape.Rank() != 0 {
		return nil, shpErrf("operand %v, source %v and init value %v must share the element type (init rank 0)",
			operand.Shape, source.Shape, init.Shape)
	}
	r := operand.Shape.Rank()
	win, err := shpAttrIntsDefault(op, "window_dimensions", r, 1)
	if err != nil {
		return nil, err
	}
	stride, err := shpAttrIntsDefault(op, "window_strides", r, 1)
	if err != nil {
		return nil, err
	}
	lo, hi, err := shpPadding(op, "padding", r)
	if err != nil {
		return nil, err
	}
	ones := make([]int64, r)
	for d := range ones {
		ones[d] = 1
		if win[d] <= 0 {
			return nil, shpErrf("window_dimensions[%d] = %d must be positive", d, win[d])
		}
	}
	geo, err := shpNewWindow(operand.Shape.Dims, win, stride, ones, ones, lo, hi, x.stopFlag())
	if err != nil {
		return nil, err
	}
	if !source.Shape.Equal(xla.MakeShape(dt, geo.outDims...)) {
		return nil, shpErrf("source is %v, the windows of the operand need %v", source.Shape, xla.MakeShape(dt, geo.outDims...))
	}
	if len(op.Regions) != 2 {
		return nil, shpErrf("select_and_scatter needs 2 regions, has %d", len(op.Regions))
	}
	// The scatter body may work in a promotion of the operand's type
	// (spec C11): the result, the source and the init value take it.
	sdt := dt
	if b := op.Regions[1]; b != nil && len(b.Blocks) > 0 && b.Blocks[0] != nil && len(b.Blocks[0].Args) > 0 && b.Blocks[0].Args[0] != nil {
		if tt, ok := b.Blocks[0].Args[0].Type.(stablehlo.TensorType); ok && tt.DType != dt {
			if !stablehlo.Promotable(dt, tt.DType) {
				return nil, shpErrf("the scatter body works in %v, not a promotion of the operand's %v (same kind, at least as wide)", tt.DType, dt)
			}
			sdt = tt.DType
			for _, t := range []**Tensor{&source, &init} {
				c := NewTensor(xla.MakeShape(sdt, (*t).Shape.Dims...))
				if err := Convert(c, *t); err != nil {
					return nil, err
				}
				*t = c
			}
		}
	}
	sh, err := shpCheckShape(op, 0, sdt, operand.Shape.Dims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	if err := shpFill(out, init); err != nil {
		return nil, err
	}
	inStr := Strides(operand.Shape.Dims)
	sel, err := shpSelectPositions(x, op.Regions[0], operand, geo, inStr)
	if err == errStopped || err == nil && geo.stopped() {
		return nil, x.Ctx.Err() // the selection may be unfinished
	}
	if err != nil {
		return nil, err
	}
	if err := shpScatterSelected(x, op.Regions[1], out, source, sel); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// shpSelectPositions returns, for every window (one per source element),
// the operand offset the select region picks, or -1 when the window holds
// only padding. A select region that is one compare runs as a typed
// comparison; any other runs on vectors of all windows when it vectorises,
// else once per comparison.
func shpSelectPositions(x *Exec, selR *stablehlo.Region, operand *Tensor, geo *shpWindow, inStr []int64) ([]int64, error) {
	dt := operand.Shape.DType
	nWin := 1
	for _, d := range geo.outDims {
		nWin *= int(d)
	}
	if f := shpSelectFast(selR, dt); f != nil {
		if sel := shpSelectTyped(operand, f, geo, inStr); sel != nil {
			return sel, nil
		}
	}
	if nWin >= 2 && operand.Len() > 0 {
		if v := shpVectorize(x, selR, int64(nWin)); v != nil {
			return shpSelectVector(x, v, operand, geo, inStr, nWin)
		}
	}
	sa := shpScalars([]xla.DType{dt, dt})
	selArgs := []Value{sa[0], sa[1]}
	pick := func(cur, cand int64) (bool, error) {
		if err := shpSetElem(sa[0], 0, operand, int(cur)); err != nil {
			return false, err
		}
		if err := shpSetElem(sa[1], 0, operand, int(cand)); err != nil {
			return false, err
		}
		res, err := x.RunRegion(selR, selArgs)
		if err != nil {
			return false, err
		}
		if len(res) != 1 {
			return false, shpErrf("select region returned %d values, want 1", len(res))
		}
		return shpBoolValue(res[0])
	}
	sel := make([]int64, 0, nWin)
	err := shpSelectWindows(geo, inStr, pick, func(_ int, s int64) error {
		sel = append(sel, s)
		return nil
	})
	return sel, err
}

// shpSelectVector runs the selection on vectors of all windows, window
// positions in row-major order.
func shpSelectVector(x *Exec, v *shpVecRegion, operand *Tensor, geo *shpWindow, inStr []int64, nWin int) ([]int64, error) {
	dt := operand.Shape.DType
	outIx := shpOutIndices(geo.outDims)
	sel := make([]int, nWin)
	for i := range sel {
		sel[i] = -1
	}
	cand := make([]int, nWin)
	curIdx := make([]int, nWin)
	candIdx := make([]int, nWin)
	for w := shpNewOdo(geo.winDims, make([]int64, len(geo.winDims)), 0); !w.done; w.next() {
		if err := x.Ctx.Err(); err != nil {
			return nil, err
		}
		shpWinOffsets(geo, inStr, outIx, w.idx, cand)
		need := false
		for o := range sel {
			curIdx[o], candIdx[o] = 0, 0
			if sel[o] >= 0 {
				curIdx[o] = sel[o]
			}
			if cand[o] >= 0 {
				candIdx[o] = cand[o]
				if sel[o] >= 0 {
					need = true
				}
			}
		}
		if need {
			cur, cv := shpVecTensor(dt, int64(nWin)), shpVecTensor(dt, int64(nWin))
			if err := shpTake(cur, operand, curIdx); err != nil {
				return nil, err
			}
			if err := shpTake(cv, operand, candIdx); err != nil {
				return nil, err
			}
			res, err := v.run(x, []*Tensor{cur, cv})
			if err != nil {
				return nil, err
			}
			if err := shpVecResults(res, []xla.DType{xla.Bool}); err != nil {
				return nil, err
			}
			keep := res[0].Data.([]bool)
			for o := range sel {
				if sel[o] >= 0 && cand[o] >= 0 && !keep[o] {
					sel[o] = cand[o]
				}
			}
		}
		for o := range sel {
			if sel[o] < 0 && cand[o] >= 0 {
				sel[o] = cand[o]
			}
		}
	}
	out := make([]int64, nWin)
	for i, s := range sel {
		out[i] = int64(s)
	}
	return out, nil
}

// shpScatterSelected combines each source value into the result at its
// selected position, source elements in row-major order.
func shpScatterSelected(x *Exec, scatR *stablehlo.Region, out, source *Tensor, sel []int64) error {
	dt := out.Shape.DType
	if bops := shpRegionBinops(scatR, []xla.DType{dt}); bops != nil && shpBinSupported(bops[0], dt) {
		for si, s := range sel {
			if s < 0 {
				continue
			}
			if err := shpScatterFast(out, source, bops[0], nil, s, nil, int64(si), nil); err != nil {
				return err
			}
		}
		shpRewrap(out)
		return nil
	}
	ca := shpScalars([]xla.DType{dt, dt})
	args := []Value{ca[0], ca[1]}
	for si, s := range sel {
		if s < 0 {
			continue
		}
		if err := shpSetElem(ca[0], 0, out, int(s)); err != nil {
			return err
		}
		if err := shpSetElem(ca[1], 0, source, si); err != nil {
			return err
		}
		if err := shpRunScalarRegion(x, scatR, args, ca[:1]); err != nil {
			return err
		}
		if err := shpSetElem(out, int(s), ca[0], 0); err != nil {
			return err
		}
	}
	return nil
}

// shpSelectWindows walks the windows in row-major order and, for each,
// folds its non-padding positions left to right: the current selection is
// kept while pick(current, candidate) is true. visit gets the selected
// offset, or -1 for a window of padding only.
func shpSelectWindows(geo *shpWindow, inStr []int64, pick func(cur, cand int64) (bool, error), visit func(si int, sel int64) error) error {
	walk := &shpWinWalk{geo: geo, str: inStr, winIx: make([]int64, len(geo.winDims))}
	si := 0
	for out := shpNewOdo(geo.outDims, make([]int64, len(geo.outDims)), 0); !out.done; out.next() {
		walk.outIx = out.idx
		sel := int64(-1)
		err := walk.each(func(off int64) error {
			if off < 0 {
				return nil
			}
			if sel < 0 {
				sel = off
				return nil
			}
			keep, err := pick(sel, off)
			if err != nil {
				return err
			}
			if !keep {
				sel = off
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := visit(si, sel); err != nil {
			return err
		}
		si++
	}
	return nil
}

// shpSelectFn is a recognised select region: compare(arg0, arg1) with
// direction GE, GT, LE or LT and the element type's natural compare type.
type shpSelectFn struct {
	dir string
}

// shpSelectFast recognises select regions of the form
// return compare(%arg0, %arg1, DIR).
func shpSelectFast(r *stablehlo.Region, dt xla.DType) *shpSelectFn {
	c := shpRegionCompare(r, []xla.DType{dt}, 2)
	if c == nil || c.lhs != 0 || c.rhs != 1 || c.totalOrder {
		return nil
	}
	switch c.dir {
	case "GE", "GT", "LE", "LT":
		return &shpSelectFn{dir: c.dir}
	}
	return nil
}

// shpSelectTyped runs a recognised compare select region as a typed
// comparison; nil when the type is not handled.
func shpSelectTyped(operand *Tensor, sel *shpSelectFn, geo *shpWindow, inStr []int64) []int64 {
	switch d := operand.Data.(type) {
	case []float32:
		return shpSelectT(d, shpOrdered[float32](sel.dir), geo, inStr)
	case []float64:
		return shpSelectT(d, shpOrdered[float64](sel.dir), geo, inStr)
	case []int8:
		return shpSelectT(d, shpOrdered[int8](sel.dir), geo, inStr)
	case []int16:
		return shpSelectT(d, shpOrdered[int16](sel.dir), geo, inStr)
	case []int32:
		return shpSelectT(d, shpOrdered[int32](sel.dir), geo, inStr)
	case []int64:
		return shpSelectT(d, shpOrdered[int64](sel.dir), geo, inStr)
	case []uint8:
		return shpSelectT(d, shpOrdered[uint8](sel.dir), geo, inStr)
	case []uint16:
		return shpSelectT(d, shpOrdered[uint16](sel.dir), geo, inStr)
	case []uint32:
		return shpSelectT(d, shpOrdered[uint32](sel.dir), geo, inStr)
	case []uint64:
		return shpSelectT(d, shpOrdered[uint64](sel.dir), geo, inStr)
	}
	return nil
}

func shpSelectT[T any](operand []T, keep func(a, b T) bool, geo *shpWindow, inStr []int64) []int64 {
	sel := []int64{}
	_ = shpSelectWindows(geo, inStr, func(cur, cand int64) (bool, error) {
		return keep(operand[cur], operand[cand]), nil
	}, func(_ int, s int64) error {
		sel = append(sel, s)
		return nil
	})
	return sel
}

// shpOrdered returns the comparison for a direction (IEEE semantics for
// floats: any comparison with NaN is false).
func shpOrdered[T ewReal](dir string) func(a, b T) bool {
	switch dir {
	case "GE":
		return func(a, b T) bool { return a >= b }
	case "GT":
		return func(a, b T) bool { return a > b }
	case "LE":
		return func(a, b T) bool { return a <= b }
	case "LT":
		return func(a, b T) bool { return a < b }
	case "EQ":
		return func(a, b T) bool { return a == b }
	case "NE":
		return func(a, b T) bool { return a != b }
	}
	return nil
}
