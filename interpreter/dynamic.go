package interpreter

import (
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The dynamism ops take shapes, sizes and paddings as tensor operands. The
// interpreter evaluates them with those run-time values; a declared static
// result dimension must agree with them.

func init() {
	shpRegister("stablehlo.dynamic_broadcast_in_dim", shpDynamicBroadcastInDim)
	shpRegister("stablehlo.dynamic_iota", shpDynamicIota)
	shpRegister("stablehlo.dynamic_pad", shpDynamicPad)
	shpRegister("stablehlo.dynamic_reshape", shpDynamicReshape)
	shpRegister("stablehlo.real_dynamic_slice", shpRealDynamicSlice)
}

// shpShapeOperand reads a 1-D integer tensor operand (a shape or a list of
// per-dimension values).
func shpShapeOperand(args []Value, i int, what string) ([]int64, error) {
	t, err := shpTensorArg(args, i)
	if err != nil {
		return nil, err
	}
	if t.Shape.Rank() != 1 {
		return nil, shpErrf("%s must be a 1-D integer tensor, got %v", what, t.Shape)
	}
	v, err := shpInts(t)
	if err != nil {
		return nil, shpErrf("%s: %w", what, err)
	}
	return v, nil
}

func shpDynamicBroadcastInDim(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 2 {
		return nil, shpErrf("dynamic_broadcast_in_dim takes 2 operands, got %d", len(args))
	}
	in, err := shpTensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	dims, err := shpShapeOperand(args, 1, "output_dimensions")
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
	for _, name := range []string{"known_expanding_dimensions", "known_nonexpanding_dimensions"} {
		if _, _, err := shpAttrInts(op, name); err != nil {
			return nil, err
		}
	}
	if _, err := shpCheckShape(op, 0, in.Shape.DType, dims); err != nil {
		return nil, err
	}
	out, err := shpDoBroadcast(in, bd, dims)
	if err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

func shpDynamicIota(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 1 {
		return nil, shpErrf("dynamic_iota takes 1 operand, got %d", len(args))
	}
	dims, err := shpShapeOperand(args, 0, "output_shape")
	if err != nil {
		return nil, err
	}
	rtDType := xla.Invalid
	if rt, err := ResultTensorType(op, 0); err == nil {
		rtDType = rt.DType
	}
	if err := shpCheckDims(rtDType, dims); err != nil {
		return nil, err
	}
	dim, ok, err := shpAttrInt(op, "iota_dimension")
	if err != nil {
		return nil, err
	}
	if !ok || dim < 0 || dim >= int64(len(dims)) {
		return nil, shpErrf("iota_dimension %d is out of range for rank %d", dim, len(dims))
	}
	rt, err := ResultTensorType(op, 0)
	if err != nil {
		return nil, err
	}
	sh, err := shpCheckShape(op, 0, rt.DType, dims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	if err := shpIotaFill(out, int(dim)); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// shpIotaFill sets every element to its index along dim.
func shpIotaFill(t *Tensor, dim int) error {
	dims := t.Shape.Dims
	dt := t.Shape.DType
	str := Strides(dims)
	n := t.Len()
	at := func(i int) int64 { return (int64(i) / str[dim]) % dims[dim] }
	switch d := t.Data.(type) {
	case []int8:
		for i := range d {
			d[i] = int8(WrapInt(dt, at(i)))
		}
	case []int16:
		for i := range d {
			d[i] = int16(at(i))
		}
	case []int32:
		for i := range d {
			d[i] = int32(at(i))
		}
	case []int64:
		for i := range d {
			d[i] = at(i)
		}
	case []uint8:
		for i := range d {
			d[i] = uint8(WrapUint(dt, uint64(at(i))))
		}
	case []uint16:
		for i := range d {
			d[i] = uint16(at(i))
		}
	case []uint32:
		for i := range d {
			d[i] = uint32(at(i))
		}
	case []uint64:
		for i := range d {
			d[i] = uint64(at(i))
		}
	case []float32:
		for i := range d {
			d[i] = RoundNarrow(dt, float32(at(i)))
		}
	case []float64:
		for i := range d {
			d[i] = float64(at(i))
		}
	case []complex64:
		for i := range d {
			d[i] = complex(float32(at(i)), 0)
		}
	case []complex128:
		for i := range d {
			d[i] = complex(float64(at(i)), 0)
		}
	default:
		if n > 0 {
			return shpErrf("iota of element type %v is not defined", dt)
		}
	}
	return nil
}

func shpDynamicPad(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 5 {
		return nil, shpErrf("dynamic_pad takes 5 operands, got %d", len(args))
	}
	in, err := shpTensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	padv, err := shpTensorArg(args, 1)
	if err != nil {
		return nil, err
	}
	var pads [3][]int64
	for i, name := range []string{"edge_padding_low", "edge_padding_high", "interior_padding"} {
		if pads[i], err = shpShapeOperand(args, 2+i, name); err != nil {
			return nil, err
		}
	}
	out, err := shpDoPad(in, padv, pads[0], pads[1], pads[2])
	if err != nil {
		return nil, err
	}
	if _, err := shpCheckShape(op, 0, in.Shape.DType, out.Shape.Dims); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

func shpDynamicReshape(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 2 {
		return nil, shpErrf("dynamic_reshape takes 2 operands, got %d", len(args))
	}
	in, err := shpTensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	dims, err := shpShapeOperand(args, 1, "output_shape")
	if err != nil {
		return nil, err
	}
	if _, err := shpCheckShape(op, 0, in.Shape.DType, dims); err != nil {
		return nil, err
	}
	out, err := shpDoReshape(in, dims)
	if err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

func shpRealDynamicSlice(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 4 {
		return nil, shpErrf("real_dynamic_slice takes 4 operands, got %d", len(args))
	}
	in, err := shpTensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	var v [3][]int64
	for i, name := range []string{"start_indices", "limit_indices", "strides"} {
		if v[i], err = shpShapeOperand(args, 1+i, name); err != nil {
			return nil, err
		}
	}
	out, err := shpDoSlice(in, v[0], v[1], v[2])
	if err != nil {
		return nil, err
	}
	if _, err := shpCheckShape(op, 0, in.Shape.DType, out.Shape.Dims); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}
