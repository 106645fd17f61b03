package interpreter

import (
	"fmt"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Dots of slices without the copy.
//
// A dynamic_slice whose only reader is a dot (or dot_general) right after
// it in the same block, with nothing in between that could write into the
// sliced tensor, does not copy its window: it yields a sliceView, and the
// dot reads the window where it lies when it is a matrix with unit column
// stride (at most one dimension of the window longer than 1 on each side
// of the product). Otherwise the dot copies the window first, as the
// slice would have. Block-sparse kernels lowered by pallas slice a block
// of each operand and multiply it at every grid step: the copies were a
// large part of their time.
//
// Until the dot has read it, a view refers to its source's storage as a
// value with that storage would (spare.go: referenced, soleReference): the
// source may die at the slice while ops in between make new values (which
// must not take its storage as a spare, nor may the dot's result), and a
// value the source's tensor was handed to (through an
// optimization_barrier, a tuple, a call ...) may be updated by a loop in
// between (which must then copy it).

// sliceView is the window of src at start (already clamped) of the given
// sizes.
type sliceView struct {
	src          *Tensor
	start, sizes []int64
}

// tensor copies the window out.
func (v *sliceView) tensor() (*Tensor, error) {
	out := NewTensor(xla.MakeShape(v.src.Shape.DType, v.sizes...))
	if out.Len() == 0 {
		return out, nil
	}
	str := Strides(v.src.Shape.Dims)
	if err := shpCopy(out, v.src, v.sizes, 0, Strides(v.sizes), shpOffset(v.start, str), str); err != nil {
		return nil, err
	}
	return out, nil
}

// planSliceViews marks the dynamic_slice ops of block b that may yield a
// view (see above). uses counts the readers of every value of the
// function, nested regions included.
func planSliceViews(fp *funcPlan, b *stablehlo.Block, uses map[*stablehlo.Value]int) {
	ops := b.Ops
	for i, op := range ops {
		if op.Name != "stablehlo.dynamic_slice" || len(op.Results) != 1 || len(op.Operands) == 0 || uses[op.Results[0]] != 1 ||
			fp.ops[op] == nil { // not run (dce.go)
			continue
		}
		res, src := op.Results[0], op.Operands[0]
		for j := i + 1; j < len(ops); j++ {
			next := ops[j]
			if fp.ops[next] == nil {
				continue // not run
			}
			if next.Name == "stablehlo.dot_general" || next.Name == "stablehlo.dot" {
				if next.Operands[0] == res || (len(next.Operands) > 1 && next.Operands[1] == res) {
					fp.ops[op].kernel = dynamicSliceView
					break
				}
			}
			if len(next.Regions) > 0 || readsValue(next, src) || readsValue(next, res) {
				break // could write into src, or reads the slice itself
			}
		}
	}
}

func readsValue(op *stablehlo.Op, v *stablehlo.Value) bool {
	for _, o := range op.Operands {
		if o == v {
			return true
		}
	}
	return false
}

// countUses counts the readers of every value in the ops (and their
// regions).
func countUses(ops []*stablehlo.Op, uses map[*stablehlo.Value]int) {
	for _, op := range ops {
		for _, v := range op.Operands {
			uses[v]++
		}
		for _, r := range op.Regions {
			for _, b := range r.Blocks {
				countUses(b.Ops, uses)
			}
		}
	}
}

// dynamicSliceView is shpDynamicSlice returning a sliceView.
func dynamicSliceView(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, start, sizes, _, err := shpDynamicSliceWindow(op, args)
	if err != nil {
		return nil, err
	}
	return []Value{&sliceView{src: in, start: start, sizes: sizes}}, nil
}

// dotArg is a dot operand: a tensor, or a window of one read in place
// (off, the element offset of its first element, and ld, its row stride).
type dotArg struct {
	t     *Tensor
	shape xla.Shape
	view  *sliceView // non-nil until resolveView decides
	off   int
	ld    int // 0: t is the operand itself
	// window is set when the operand is read in place as a window of t.
	window bool
}

// dotArgs turns the dot's operands into dotArgs; views that are not
// unit-stride matrices for this product are copied.
func dotArgs(args []Value, n int) ([]dotArg, error) {
	if len(args) != n {
		return nil, fmt.Errorf("takes %d operands, got %d", n, len(args))
	}
	out := make([]dotArg, n)
	for i, a := range args {
		switch a := a.(type) {
		case *Tensor:
			if a == nil {
				return nil, fmt.Errorf("operand %d is nil", i)
			}
			out[i] = dotArg{t: a, shape: a.Shape}
		case *sliceView:
			out[i] = dotArg{t: a.src, shape: xla.MakeShape(a.src.Shape.DType, a.sizes...), view: a}
		default:
			return nil, fmt.Errorf("operand %d is %T, want a tensor", i, a)
		}
	}
	return out, nil
}

// resolveOperandView resolves arg when it is a view: rows and cols are
// its dims in the order the product reads it untransposed (lhs: free then
// contracting; rhs: contracting then free); noop and noopT say whether
// that order, or the transposed one, moves nothing.
func resolveOperandView[T laNum](arg *dotArg, p *dotPlan, noop, noopT bool, rows, cols []int) error {
	if arg.view == nil {
		return nil
	}
	rc := [2][]int{rows, cols}
	if !noop {
		rc = [2][]int{cols, rows}
	}
	return resolveView[T](arg, p.batch == 1 && (noop || noopT), rc)
}

// resolveView decides how the dot reads a view operand: in place (off
// and ld set) when inPlace (the product reads the operand without
// permuting it), the source holds T and the window is a matrix with unit
// column stride whose rows run over the dims rowsCols[0] and columns over
// rowsCols[1]; else as a copy.
func resolveView[T laNum](arg *dotArg, inPlace bool, rowsCols [2][]int) error {
	v := arg.view
	arg.view = nil
	if _, ok := v.src.Data.([]T); ok && inPlace {
		if off, ld, ok := viewMatrix(v, rowsCols); ok {
			arg.off, arg.ld, arg.window = off, ld, true
			return nil
		}
	}
	t, err := v.tensor()
	if err != nil {
		return err
	}
	*arg = dotArg{t: t, shape: t.Shape}
	return nil
}

// viewMatrix returns the offset and row stride of the window as a matrix
// whose rows run over the dims in rowsCols[0] and columns over those in
// rowsCols[1], when each side has at most one dim longer than 1 and the
// column dim has stride 1 in the source.
func viewMatrix(v *sliceView, rowsCols [2][]int) (off, ld int, ok bool) {
	str := Strides(v.src.Shape.Dims)
	pick := func(dims []int) (int, bool) {
		found := -1
		for _, d := range dims {
			if v.sizes[d] != 1 {
				if found >= 0 {
					return 0, false
				}
				found = d
			}
		}
		return found, true
	}
	r, ok1 := pick(rowsCols[0])
	c, ok2 := pick(rowsCols[1])
	if !ok1 || !ok2 || (c >= 0 && str[c] != 1) {
		return 0, 0, false
	}
	off = int(shpOffset(v.start, str))
	cols := 1
	if c >= 0 {
		cols = int(v.sizes[c])
	}
	ld = cols
	if r >= 0 {
		ld = int(str[r])
	}
	return off, max(ld, 1), true
}
