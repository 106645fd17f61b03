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
	geo, err := shpNewWindow(operand.Shape.Dims, win, stride, ones, ones, lo, hi)
	if err != nil {
		return nil, err
	}
	if !source.Shape.Equal(xla.MakeShape(dt, geo.outDims...)) {
		return nil, shpErrf("source is %v, the windows of the operand need %v", source.Shape, xla.MakeShape(dt, geo.outDims...))
	}
	if len(op.Regions) != 2 {
		return nil, shpErrf("select_and_scatter needs 2 regions, has %d", len(op.Regions))
	}
	sh, err := shpCheckShape(op, 0, dt, operand.Shape.Dims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	if err := shpFill(out, init); err != nil {
		return nil, err
	}
	inStr := Strides(operand.Shape.Dims)
	if sel := shpSelectFast(op.Regions[0], dt); sel != nil {
		if bops := shpRegionBinops(op.Regions[1], []xla.DType{dt}); bops != nil && shpBinSupported(bops[0], dt) {
			if shpSelectScatterFast(operand, source, out, sel, bops[0], geo, inStr) {
				return []Value{out}, nil
			}
		}
	}
	if err := shpSelectScatterGeneral(x, op.Regions[0], op.Regions[1], operand, source, out, geo, inStr); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// shpSelectIndex returns, for the window of source element si, the operand
// offset the select function picks, or -1.
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

func shpSelectScatterGeneral(x *Exec, selR, scatR *stablehlo.Region, operand, source, out *Tensor, geo *shpWindow, inStr []int64) error {
	dt := operand.Shape.DType
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
	ca := shpScalars([]xla.DType{dt, dt})
	scatArgs := []Value{ca[0], ca[1]}
	visit := func(si int, sel int64) error {
		if sel < 0 {
			return nil
		}
		if err := shpSetElem(ca[0], 0, out, int(sel)); err != nil {
			return err
		}
		if err := shpSetElem(ca[1], 0, source, si); err != nil {
			return err
		}
		if err := shpRunScalarRegion(x, scatR, scatArgs, ca[:1]); err != nil {
			return err
		}
		return shpSetElem(out, int(sel), ca[0], 0)
	}
	return shpSelectWindows(geo, inStr, pick, visit)
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

func shpSelectScatterFast(operand, source, out *Tensor, sel *shpSelectFn, bop shpBinop, geo *shpWindow, inStr []int64) bool {
	dt := operand.Shape.DType
	switch d := operand.Data.(type) {
	case []float32:
		f, _ := shpBinF32(bop, dt)
		shpSelScatT(d, source.Data.([]float32), out.Data.([]float32), shpOrdered[float32](sel.dir), f, geo, inStr)
	case []float64:
		f, _ := shpBinF64(bop)
		shpSelScatT(d, source.Data.([]float64), out.Data.([]float64), shpOrdered[float64](sel.dir), f, geo, inStr)
	case []int8:
		f, _ := shpBinInt[int8](bop)
		shpSelScatT(d, source.Data.([]int8), out.Data.([]int8), shpOrdered[int8](sel.dir), f, geo, inStr)
	case []int16:
		f, _ := shpBinInt[int16](bop)
		shpSelScatT(d, source.Data.([]int16), out.Data.([]int16), shpOrdered[int16](sel.dir), f, geo, inStr)
	case []int32:
		f, _ := shpBinInt[int32](bop)
		shpSelScatT(d, source.Data.([]int32), out.Data.([]int32), shpOrdered[int32](sel.dir), f, geo, inStr)
	case []int64:
		f, _ := shpBinInt[int64](bop)
		shpSelScatT(d, source.Data.([]int64), out.Data.([]int64), shpOrdered[int64](sel.dir), f, geo, inStr)
	case []uint8:
		f, _ := shpBinUint[uint8](bop)
		shpSelScatT(d, source.Data.([]uint8), out.Data.([]uint8), shpOrdered[uint8](sel.dir), f, geo, inStr)
	case []uint16:
		f, _ := shpBinUint[uint16](bop)
		shpSelScatT(d, source.Data.([]uint16), out.Data.([]uint16), shpOrdered[uint16](sel.dir), f, geo, inStr)
	case []uint32:
		f, _ := shpBinUint[uint32](bop)
		shpSelScatT(d, source.Data.([]uint32), out.Data.([]uint32), shpOrdered[uint32](sel.dir), f, geo, inStr)
	case []uint64:
		f, _ := shpBinUint[uint64](bop)
		shpSelScatT(d, source.Data.([]uint64), out.Data.([]uint64), shpOrdered[uint64](sel.dir), f, geo, inStr)
	default:
		return false
	}
	shpRewrap(out)
	return true
}

type shpOrderedT interface {
	shpSigned | shpUnsigned | ~float32 | ~float64
}

// shpOrdered returns the comparison for a direction (IEEE semantics for
// floats: any comparison with NaN is false).
func shpOrdered[T shpOrderedT](dir string) func(a, b T) bool {
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

func shpSelScatT[T any](operand, source, out []T, keep func(a, b T) bool, f func(a, b T) T, geo *shpWindow, inStr []int64) {
	_ = shpSelectWindows(geo, inStr, func(cur, cand int64) (bool, error) {
		return keep(operand[cur], operand[cand]), nil
	}, func(si int, sel int64) error {
		if sel >= 0 {
			out[sel] = f(out[sel], source[si])
		}
		return nil
	})
}
