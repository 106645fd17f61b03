package interpreter

import (
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Shape kernels: reshape, transpose, broadcast_in_dim, broadcast, slice,
// dynamic_slice, dynamic_update_slice, concatenate, pad, reverse,
// get_dimension_size and set_dimension_size. They move elements with
// shpCopy (strided views, contiguous rows moved with copy()), so they work
// for every element type, and never write to their operands: tensors are
// values, and reshape returns a tensor that shares its operand's storage.

func init() {
	shpRegister("stablehlo.reshape", shpReshape)
	shpRegister("stablehlo.transpose", shpTranspose)
	shpRegister("stablehlo.broadcast_in_dim", shpBroadcastInDim)
	shpRegister("stablehlo.broadcast", shpBroadcast)
	shpRegister("stablehlo.slice", shpSlice)
	shpRegister("stablehlo.dynamic_slice", shpDynamicSlice)
	shpRegister("stablehlo.dynamic_update_slice", shpDynamicUpdateSlice)
	shpRegister("stablehlo.concatenate", shpConcatenate)
	shpRegister("stablehlo.pad", shpPad)
	shpRegister("stablehlo.reverse", shpReverse)
	shpRegister("stablehlo.get_dimension_size", shpGetDimensionSize)
	shpRegister("stablehlo.set_dimension_size", shpSetDimensionSize)
}

func shpOneTensor(args []Value, want int) (*Tensor, error) {
	if len(args) != want {
		return nil, shpErrf("want %d operands, got %d", want, len(args))
	}
	return shpTensorArg(args, 0)
}

// shpReshape: result[i] = operand[i] in row-major order.
func shpReshape(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, err := shpOneTensor(args, 1)
	if err != nil {
		return nil, err
	}
	sh, err := shpResultShape(op, 0)
	if err != nil {
		return nil, err
	}
	t, err := shpDoReshape(in, sh.Dims)
	if err != nil {
		return nil, err
	}
	if sh.DType != in.Shape.DType {
		return nil, shpErrf("result element type %v differs from the operand's %v", sh.DType, in.Shape.DType)
	}
	if x != nil && x.Program != nil && x.Program.unshared {
		t = t.Clone()
	}
	return []Value{t}, nil
}

func shpDoReshape(in *Tensor, dims []int64) (*Tensor, error) {
	if err := shpCheckDims(in.Shape.DType, dims); err != nil {
		return nil, err
	}
	sh := xla.MakeShape(in.Shape.DType, dims...)
	if sh.Size() != in.Shape.Size() {
		return nil, shpErrf("cannot reshape %v (%d elements) to %v (%d elements)", in.Shape, in.Shape.Size(), sh, sh.Size())
	}
	return &Tensor{Shape: sh, Data: in.Data}, nil
}

// shpTranspose: result[i] = operand[j] where i[d] = j[permutation[d]].
func shpTranspose(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, err := shpOneTensor(args, 1)
	if err != nil {
		return nil, err
	}
	perm, ok, err := shpAttrInts(op, "permutation")
	if err != nil {
		return nil, err
	}
	r := in.Shape.Rank()
	if !ok || !shpIsPerm(perm, r) {
		return nil, shpErrf("permutation %v is not a permutation of 0..%d", perm, r-1)
	}
	inStr := Strides(in.Shape.Dims)
	outDims := make([]int64, r)
	srcStr := make([]int64, r)
	for d, p := range perm {
		outDims[d] = in.Shape.Dims[p]
		srcStr[d] = inStr[p]
	}
	sh, err := shpCheckShape(op, 0, in.Shape.DType, outDims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	if err := shpCopy(out, in, outDims, 0, Strides(outDims), 0, srcStr); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// shpBroadcastInDim: result[i] = operand[j] with j[k] = dim(operand, k) == 1
// ? 0 : i[broadcast_dimensions[k]].
func shpBroadcastInDim(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, err := shpOneTensor(args, 1)
	if err != nil {
		return nil, err
	}
	bd, ok, err := shpAttrInts(op, "broadcast_dimensions")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, shpErrf("missing attribute broadcast_dimensions")
	}
	sh, err := shpResultShape(op, 0)
	if err != nil {
		return nil, err
	}
	if sh.DType != in.Shape.DType {
		return nil, shpErrf("result element type %v differs from the operand's %v", sh.DType, in.Shape.DType)
	}
	out, err := shpBroadcastFor(x, in, bd, sh.Dims)
	if err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

func shpDoBroadcast(in *Tensor, bd, outDims []int64) (*Tensor, error) {
	return shpBroadcastFor(nil, in, bd, outDims)
}

// shpBroadcastFor is shpDoBroadcast with a result that may be a spare of x
// (every element is copied in).
func shpBroadcastFor(x *Exec, in *Tensor, bd, outDims []int64) (*Tensor, error) {
	r := in.Shape.Rank()
	if len(bd) != r {
		return nil, shpErrf("broadcast_dimensions has %d entries for an operand of rank %d", len(bd), r)
	}
	if err := shpCheckDims(in.Shape.DType, outDims); err != nil {
		return nil, err
	}
	if err := shpDimsIn("broadcast_dimensions", bd, len(outDims)); err != nil {
		return nil, err
	}
	inStr := Strides(in.Shape.Dims)
	srcStr := make([]int64, len(outDims))
	for k, d := range bd {
		switch in.Shape.Dims[k] {
		case 1:
		case outDims[d]:
			srcStr[d] = inStr[k]
		default:
			return nil, shpErrf("operand dimension %d has size %d, cannot broadcast to result dimension %d of size %d",
				k, in.Shape.Dims[k], d, outDims[d])
		}
	}
	out := x.newTensor(xla.MakeShape(in.Shape.DType, outDims...))
	if out.Len() == 0 {
		return out, nil
	}
	if err := shpCopy(out, in, outDims, 0, Strides(outDims), 0, srcStr); err != nil {
		return nil, err
	}
	return out, nil
}

// shpBroadcast is the deprecated broadcast: result dims are broadcast_sizes
// followed by the operand's dims.
func shpBroadcast(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, err := shpOneTensor(args, 1)
	if err != nil {
		return nil, err
	}
	sizes, ok, err := shpAttrInts(op, "broadcast_sizes")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, shpErrf("missing attribute broadcast_sizes")
	}
	outDims := append(append([]int64(nil), sizes...), in.Shape.Dims...)
	if _, err := shpCheckShape(op, 0, in.Shape.DType, outDims); err != nil {
		return nil, err
	}
	bd := make([]int64, in.Shape.Rank())
	for k := range bd {
		bd[k] = int64(len(sizes) + k)
	}
	out, err := shpDoBroadcast(in, bd, outDims)
	if err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// shpSlice: result[i] = operand[start + i*strides].
func shpSlice(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, err := shpOneTensor(args, 1)
	if err != nil {
		return nil, err
	}
	r := in.Shape.Rank()
	start, ok1, err := shpAttrInts(op, "start_indices")
	if err != nil {
		return nil, err
	}
	limit, ok2, err := shpAttrInts(op, "limit_indices")
	if err != nil {
		return nil, err
	}
	if !ok1 || !ok2 {
		return nil, shpErrf("missing attribute start_indices or limit_indices")
	}
	strides, err := shpAttrIntsDefault(op, "strides", r, 1)
	if err != nil {
		return nil, err
	}
	out, err := shpDoSlice(in, start, limit, strides)
	if err != nil {
		return nil, err
	}
	if _, err := shpCheckShape(op, 0, in.Shape.DType, out.Shape.Dims); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

func shpDoSlice(in *Tensor, start, limit, strides []int64) (*Tensor, error) {
	r := in.Shape.Rank()
	if len(start) != r || len(limit) != r || len(strides) != r {
		return nil, shpErrf("start_indices %v, limit_indices %v and strides %v must have %d entries", start, limit, strides, r)
	}
	inStr := Strides(in.Shape.Dims)
	outDims := make([]int64, r)
	srcStr := make([]int64, r)
	var off int64
	for d := 0; d < r; d++ {
		if start[d] < 0 || start[d] > limit[d] || limit[d] > in.Shape.Dims[d] || strides[d] <= 0 {
			return nil, shpErrf("dimension %d: slice [%d:%d:%d] is out of range for size %d",
				d, start[d], limit[d], strides[d], in.Shape.Dims[d])
		}
		outDims[d] = (limit[d] - start[d]) / strides[d]
		if (limit[d]-start[d])%strides[d] != 0 {
			outDims[d]++
		}
		srcStr[d] = inStr[d] * strides[d]
		off += start[d] * inStr[d]
	}
	out := shpNew(in.Shape.DType, outDims)
	if out.Len() == 0 {
		return out, nil
	}
	if err := shpCopy(out, in, outDims, 0, Strides(outDims), off, srcStr); err != nil {
		return nil, err
	}
	return out, nil
}

// shpStartIndices reads the scalar start index operands of dynamic_slice and
// dynamic_update_slice and clamps them to [0, dim - size].
func shpStartIndices(args []Value, dims, sizes []int64) ([]int64, error) {
	if len(args) != len(dims) {
		return nil, shpErrf("got %d start indices for rank %d", len(args), len(dims))
	}
	out := make([]int64, len(dims))
	for d := range dims {
		t, err := shpTensorArg(args, d)
		if err != nil {
			return nil, err
		}
		if t.Shape.Rank() != 0 {
			return nil, shpErrf("start index %d must be a rank-0 tensor, got %v", d, t.Shape)
		}
		v, err := shpScalarInt(t)
		if err != nil {
			return nil, shpErrf("start index %d: %w", d, err)
		}
		out[d] = shpClamp(0, v, dims[d]-sizes[d])
	}
	return out, nil
}

// shpDynamicSlice: result = operand[clamp(0, start, dim - size) + i].
func shpDynamicSlice(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, start, sizes, sh, err := shpDynamicSliceWindow(op, args)
	if err != nil {
		return nil, err
	}
	out := x.newTensor(sh) // every element is copied in below
	inStr := Strides(in.Shape.Dims)
	if out.Len() > 0 {
		if err := shpCopy(out, in, sizes, 0, Strides(sizes), shpOffset(start, inStr), inStr); err != nil {
			return nil, err
		}
	}
	return []Value{out}, nil
}

// shpDynamicSliceWindow checks a dynamic_slice and returns its operand,
// the clamped start, the sizes and the result shape.
func shpDynamicSliceWindow(op *stablehlo.Op, args []Value) (in *Tensor, start, sizes []int64, sh xla.Shape, err error) {
	if len(args) == 0 {
		return nil, nil, nil, sh, shpErrf("missing operand")
	}
	in, err = shpTensorArg(args, 0)
	if err != nil {
		return nil, nil, nil, sh, err
	}
	sizes, ok, err := shpAttrInts(op, "slice_sizes")
	if err != nil {
		return nil, nil, nil, sh, err
	}
	r := in.Shape.Rank()
	if !ok || len(sizes) != r {
		return nil, nil, nil, sh, shpErrf("slice_sizes must have %d entries", r)
	}
	for d, s := range sizes {
		if s < 0 || s > in.Shape.Dims[d] {
			return nil, nil, nil, sh, shpErrf("slice_sizes[%d] = %d is out of range for size %d", d, s, in.Shape.Dims[d])
		}
	}
	start, err = shpStartIndices(args[1:], in.Shape.Dims, sizes)
	if err != nil {
		return nil, nil, nil, sh, err
	}
	sh, err = shpCheckShape(op, 0, in.Shape.DType, sizes)
	if err != nil {
		return nil, nil, nil, sh, err
	}
	return in, start, sizes, sh, nil
}

// shpDynamicUpdateSlice: the operand with the window at clamp(0, start,
// dim - update dim) replaced by update.
func shpDynamicUpdateSlice(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) < 2 {
		return nil, shpErrf("dynamic_update_slice takes an operand, an update and start indices")
	}
	in, err := shpTensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	upd, err := shpTensorArg(args, 1)
	if err != nil {
		return nil, err
	}
	if err := shpSameDType("operand and update", in, upd); err != nil {
		return nil, err
	}
	r := in.Shape.Rank()
	if upd.Shape.Rank() != r {
		return nil, shpErrf("update %v must have the operand's rank %d", upd.Shape, r)
	}
	for d := 0; d < r; d++ {
		if upd.Shape.Dims[d] > in.Shape.Dims[d] {
			return nil, shpErrf("update %v does not fit in operand %v", upd.Shape, in.Shape)
		}
	}
	start, err := shpStartIndices(args[2:], in.Shape.Dims, upd.Shape.Dims)
	if err != nil {
		return nil, err
	}
	if _, err := shpCheckShape(op, 0, in.Shape.DType, in.Shape.Dims); err != nil {
		return nil, err
	}
	// The operand is overwritten when the running while loop owns it alone
	// and nothing reads it after this op (planned: opPlan.consume);
	// otherwise the result is a copy, which the loop may own next time.
	out := x.TakeDead(in.Shape)
	if out != in {
		out = in.Clone()
		x.markFresh(out)
	}
	inStr := Strides(in.Shape.Dims)
	if upd.Len() > 0 {
		if err := shpCopy(out, upd, upd.Shape.Dims, shpOffset(start, inStr), inStr, 0, Strides(upd.Shape.Dims)); err != nil {
			return nil, err
		}
	}
	return []Value{out}, nil
}

// shpConcatenate joins the inputs along dimension.
func shpConcatenate(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ins, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return nil, shpErrf("concatenate needs at least one input")
	}
	dim, ok, err := shpAttrInt(op, "dimension")
	if err != nil {
		return nil, err
	}
	r := ins[0].Shape.Rank()
	if !ok || dim < 0 || dim >= int64(r) {
		return nil, shpErrf("dimension %d is out of range for rank %d", dim, r)
	}
	outDims := append([]int64(nil), ins[0].Shape.Dims...)
	outDims[dim] = 0
	for i, t := range ins {
		if err := shpSameDType("inputs", ins[0], t); err != nil {
			return nil, err
		}
		if t.Shape.Rank() != r {
			return nil, shpErrf("input %d has rank %d, want %d", i, t.Shape.Rank(), r)
		}
		for d := 0; d < r; d++ {
			if int64(d) != dim && t.Shape.Dims[d] != ins[0].Shape.Dims[d] {
				return nil, shpErrf("input %d is %v, incompatible with %v along dimension %d", i, t.Shape, ins[0].Shape, d)
			}
		}
		outDims[dim] += t.Shape.Dims[dim]
	}
	sh, err := shpCheckShape(op, 0, ins[0].Shape.DType, outDims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	outStr := Strides(outDims)
	var at int64
	for _, t := range ins {
		if t.Len() > 0 {
			if err := shpCopy(out, t, t.Shape.Dims, at*outStr[dim], outStr, 0, Strides(t.Shape.Dims)); err != nil {
				return nil, err
			}
		}
		at += t.Shape.Dims[dim]
	}
	return []Value{out}, nil
}

// shpPad: result[lo + j*(interior+1)] = operand[j], padding_value elsewhere;
// negative edge padding removes elements.
func shpPad(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 2 {
		return nil, shpErrf("pad takes 2 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	r := ts[0].Shape.Rank()
	lo, ok1, err := shpAttrInts(op, "edge_padding_low")
	if err != nil {
		return nil, err
	}
	hi, ok2, err := shpAttrInts(op, "edge_padding_high")
	if err != nil {
		return nil, err
	}
	if !ok1 || !ok2 {
		return nil, shpErrf("missing attribute edge_padding_low or edge_padding_high")
	}
	interior, err := shpAttrIntsDefault(op, "interior_padding", r, 0)
	if err != nil {
		return nil, err
	}
	out, err := shpDoPad(ts[0], ts[1], lo, hi, interior)
	if err != nil {
		return nil, err
	}
	if _, err := shpCheckShape(op, 0, ts[0].Shape.DType, out.Shape.Dims); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

func shpDoPad(in, padv *Tensor, lo, hi, interior []int64) (*Tensor, error) {
	r := in.Shape.Rank()
	if len(lo) != r || len(hi) != r || len(interior) != r {
		return nil, shpErrf("padding %v/%v/%v must have %d entries", lo, hi, interior, r)
	}
	if padv.Shape.Rank() != 0 || padv.Shape.DType != in.Shape.DType {
		return nil, shpErrf("padding value %v must be a rank-0 %v", padv.Shape, in.Shape.DType)
	}
	outDims := make([]int64, r)
	for d := 0; d < r; d++ {
		n := in.Shape.Dims[d]
		if interior[d] < 0 {
			return nil, shpErrf("interior_padding[%d] = %d is negative", d, interior[d])
		}
		if max(lo[d], -lo[d], hi[d], -hi[d], interior[d]) > shpMaxElems {
			return nil, shpErrf("dimension %d: padding %d/%d/%d is too large", d, lo[d], hi[d], interior[d])
		}
		if interior[d] > 0 && n > 1 && n-1 > shpMaxElems/interior[d] {
			return nil, shpErrf("dimension %d: interior padding %d of size %d is too large", d, interior[d], n)
		}
		outDims[d] = lo[d] + hi[d] + n + max(n-1, 0)*interior[d]
		if outDims[d] < 0 {
			return nil, shpErrf("dimension %d: padding %d/%d/%d of size %d gives a negative size", d, lo[d], hi[d], interior[d], n)
		}
	}
	if err := shpCheckDims(in.Shape.DType, outDims); err != nil {
		return nil, err
	}
	out := shpNew(in.Shape.DType, outDims)
	if out.Len() == 0 {
		return out, nil
	}
	if err := shpFill(out, padv); err != nil {
		return nil, err
	}
	inStr, outStr := Strides(in.Shape.Dims), Strides(outDims)
	cnt := make([]int64, r)
	dstStr := make([]int64, r)
	var srcOff, dstOff int64
	for d := 0; d < r; d++ {
		step := interior[d] + 1
		jmin := int64(0)
		if lo[d] < 0 {
			jmin = (-lo[d] + step - 1) / step
		}
		last := outDims[d] - 1 - lo[d] // the largest j*step that still lands inside
		if last < 0 {
			return out, nil
		}
		jmax := min(in.Shape.Dims[d], last/step+1)
		if jmax <= jmin {
			return out, nil
		}
		cnt[d] = jmax - jmin
		srcOff += jmin * inStr[d]
		dstOff += (lo[d] + jmin*step) * outStr[d]
		dstStr[d] = step * outStr[d]
	}
	if err := shpCopy(out, in, cnt, dstOff, dstStr, srcOff, inStr); err != nil {
		return nil, err
	}
	return out, nil
}

// shpReverse reverses the order of elements along dimensions.
func shpReverse(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, err := shpOneTensor(args, 1)
	if err != nil {
		return nil, err
	}
	dims, ok, err := shpAttrInts(op, "dimensions")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, shpErrf("missing attribute dimensions")
	}
	r := in.Shape.Rank()
	if err := shpDimsIn("dimensions", dims, r); err != nil {
		return nil, err
	}
	sh, err := shpCheckShape(op, 0, in.Shape.DType, in.Shape.Dims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	if out.Len() == 0 {
		return []Value{out}, nil
	}
	inStr := Strides(in.Shape.Dims)
	srcStr := append([]int64(nil), inStr...)
	var off int64
	for _, d := range dims {
		off += (in.Shape.Dims[d] - 1) * inStr[d]
		srcStr[d] = -inStr[d]
	}
	if err := shpCopy(out, in, in.Shape.Dims, 0, inStr, off, srcStr); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// shpGetDimensionSize returns dim(operand, dimension) as the result type
// (tensor<i32>).
func shpGetDimensionSize(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	in, err := shpOneTensor(args, 1)
	if err != nil {
		return nil, err
	}
	dim, ok, err := shpAttrInt(op, "dimension")
	if err != nil {
		return nil, err
	}
	if !ok || dim < 0 || dim >= int64(in.Shape.Rank()) {
		return nil, shpErrf("dimension %d is out of range for %v", dim, in.Shape)
	}
	sh, err := shpResultShape(op, 0)
	if err != nil {
		return nil, err
	}
	out, err := shpIntScalar(sh, in.Shape.Dims[dim])
	if err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// shpIntScalar returns a tensor of shape sh (one element) holding v.
func shpIntScalar(sh xla.Shape, v int64) (*Tensor, error) {
	if sh.Size() != 1 {
		return nil, shpErrf("result %v is not a scalar", sh)
	}
	out := NewTensor(sh)
	switch d := out.Data.(type) {
	case []int8:
		d[0] = int8(WrapInt(sh.DType, v))
	case []int16:
		d[0] = int16(v)
	case []int32:
		d[0] = int32(v)
	case []int64:
		d[0] = v
	case []uint8:
		d[0] = uint8(WrapUint(sh.DType, uint64(v)))
	case []uint16:
		d[0] = uint16(v)
	case []uint32:
		d[0] = uint32(v)
	case []uint64:
		d[0] = uint64(v)
	default:
		return nil, shpErrf("result %v is not an integer tensor", sh)
	}
	return out, nil
}

// shpSetDimensionSize (deprecated) marks a dimension as dynamic with the
// given size in XLA. The interpreter only has static shapes, so the result is
// the operand; the size must be within the dimension.
func shpSetDimensionSize(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 2 {
		return nil, shpErrf("set_dimension_size takes 2 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	in := ts[0]
	dim, ok, err := shpAttrInt(op, "dimension")
	if err != nil {
		return nil, err
	}
	if !ok || dim < 0 || dim >= int64(in.Shape.Rank()) {
		return nil, shpErrf("dimension %d is out of range for %v", dim, in.Shape)
	}
	size, err := shpScalarInt(ts[1])
	if err != nil {
		return nil, shpErrf("size: %w", err)
	}
	if size < 0 || size > in.Shape.Dims[dim] {
		return nil, shpErrf("size %d is out of range for dimension %d of %v", size, dim, in.Shape)
	}
	if _, err := shpCheckShape(op, 0, in.Shape.DType, in.Shape.Dims); err != nil {
		return nil, err
	}
	return []Value{in}, nil
}
