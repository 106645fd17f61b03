package interpreter

import (
	"fmt"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
)

// stablehlo.constant: the value attribute is a DenseElementsAttr holding
// the elements in host layout (one element when Splat is set); it must have
// the result's type.

func init() {
	registerKernel("stablehlo.constant", constantKernel)
}

// constantValueError says why a constant's value is not one the
// interpreter reads (nil for a dense elements attribute).
func constantValueError(v stablehlo.Attribute) error {
	switch v := v.(type) {
	case stablehlo.DenseElementsAttr:
		return nil
	case stablehlo.OpaqueAttr:
		if strings.HasPrefix(string(v), "dense_resource<") {
			return fmt.Errorf("value %s: the module holds no data for this resource (printed with its resources elided? print it with its {-# dialect_resources #-} section)", v)
		}
		return fmt.Errorf("value %s is not dense elements the interpreter reads", v)
	case nil:
		return fmt.Errorf("no value attribute")
	}
	return fmt.Errorf("value must be a dense elements attribute, got %T", v)
}

func constantKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 0 {
		return nil, fmt.Errorf("takes no operands, got %d", len(args))
	}
	a, ok := op.Attr("value").(stablehlo.DenseElementsAttr)
	if !ok {
		return nil, constantValueError(op.Attr("value"))
	}
	rt, err := ewResultType(op, 0)
	if err != nil {
		return nil, err
	}
	if !stablehlo.TypesEqual(rt, a.Type) {
		return nil, fmt.Errorf("value has type %v, the result %v", a.Type, rt)
	}
	t, err := constantTensor(x, a)
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

// constantTensor decodes a dense elements attribute. A splat is decoded
// once and repeated, into a spare of x when there is one (a run's large
// splats, decoded at every run, then fill memory a run before left warm).
func constantTensor(x *Exec, a stablehlo.DenseElementsAttr) (*Tensor, error) {
	n := a.Type.Size()
	if n < 0 {
		return nil, fmt.Errorf("value has a dynamic type %v", a.Type)
	}
	shape := a.Type.Shape()
	if !a.Splat || n == 1 {
		return TensorFromHost(shape, a.Data)
	}
	one, err := TensorFromHost(stablehlo.Scalar(a.Type.DType).Shape(), a.Data)
	if err != nil {
		return nil, fmt.Errorf("splat value: %w", err)
	}
	if allZeroBytes(a.Data) {
		return x.newZeroTensor(shape), nil
	}
	t := x.newTensor(shape)
	switch d := t.Data.(type) {
	case []bool:
		constantFill(d, one.Data.([]bool)[0])
	case []int8:
		constantFill(d, one.Data.([]int8)[0])
	case []int16:
		constantFill(d, one.Data.([]int16)[0])
	case []int32:
		constantFill(d, one.Data.([]int32)[0])
	case []int64:
		constantFill(d, one.Data.([]int64)[0])
	case []uint8:
		constantFill(d, one.Data.([]uint8)[0])
	case []uint16:
		constantFill(d, one.Data.([]uint16)[0])
	case []uint32:
		constantFill(d, one.Data.([]uint32)[0])
	case []uint64:
		constantFill(d, one.Data.([]uint64)[0])
	case []float32:
		constantFill(d, one.Data.([]float32)[0])
	case []float64:
		constantFill(d, one.Data.([]float64)[0])
	case []complex64:
		constantFill(d, one.Data.([]complex64)[0])
	case []complex128:
		constantFill(d, one.Data.([]complex128)[0])
	default:
		return nil, fmt.Errorf("element type %v is not supported", a.Type.DType)
	}
	return t, nil
}

// allZeroBytes reports whether every byte of b is zero.
func allZeroBytes(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// constantFill sets every element of d to v, on several cores for a large
// d (shpCopyParMin elements and more, as a copy).
func constantFill[T any](d []T, v T) {
	n := int64(len(d))
	shpSplitFrom(n, n, shpCopyParMin, func(lo, hi int64) {
		part := d[lo:hi]
		for i := range part {
			part[i] = v
		}
	})
}
