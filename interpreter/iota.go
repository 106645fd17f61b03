package interpreter

import (
	"fmt"

	"github.com/halo-ml/halo/stablehlo"
)

// stablehlo.iota: output[index] = index[iota_dimension], converted to the
// element type (integers wrap at their width, narrow floats round).

func init() {
	registerKernel("stablehlo.iota", iotaKernel)
}

func iotaKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 0 {
		return nil, fmt.Errorf("takes no operands, got %d", len(args))
	}
	dim, err := cvIntAttr(op, "iota_dimension")
	if err != nil {
		return nil, err
	}
	out, err := ewResult(op, 0)
	if err != nil {
		return nil, err
	}
	dims := out.Shape.Dims
	if dim < 0 || dim >= int64(len(dims)) {
		return nil, fmt.Errorf("iota_dimension %d is out of range for %s", dim, ewType(out.Shape))
	}
	// The flat array is outer blocks of dims[dim] runs of inner elements.
	inner := int64(1)
	for _, d := range dims[dim+1:] {
		inner *= d
	}
	size, n := dims[dim], int64(out.Len())
	dt := out.Shape.DType
	switch d := out.Data.(type) {
	case []int8:
		iotaFill(d, size, inner, n, func(k int64) int8 { return int8(WrapInt(dt, k)) })
	case []int16:
		iotaFill(d, size, inner, n, func(k int64) int16 { return int16(k) })
	case []int32:
		iotaFill(d, size, inner, n, func(k int64) int32 { return int32(k) })
	case []int64:
		iotaFill(d, size, inner, n, func(k int64) int64 { return k })
	case []uint8:
		iotaFill(d, size, inner, n, func(k int64) uint8 { return uint8(WrapUint(dt, uint64(k))) })
	case []uint16:
		iotaFill(d, size, inner, n, func(k int64) uint16 { return uint16(k) })
	case []uint32:
		iotaFill(d, size, inner, n, func(k int64) uint32 { return uint32(k) })
	case []uint64:
		iotaFill(d, size, inner, n, func(k int64) uint64 { return uint64(k) })
	case []float32:
		iotaFill(d, size, inner, n, func(k int64) float32 { return RoundNarrow64(dt, float64(k)) })
	case []float64:
		iotaFill(d, size, inner, n, func(k int64) float64 { return float64(k) })
	case []complex64:
		iotaFill(d, size, inner, n, func(k int64) complex64 { return complex(float32(k), 0) })
	case []complex128:
		iotaFill(d, size, inner, n, func(k int64) complex128 { return complex(float64(k), 0) })
	default:
		return nil, fmt.Errorf("iota of %v is not supported", dt)
	}
	return []Value{out}, nil
}

// iotaFill writes value(k) over each run of inner elements, k counting
// 0..size-1 and starting again for every outer block.
func iotaFill[T any](d []T, size, inner, n int64, value func(int64) T) {
	if n == 0 {
		return
	}
	for k := int64(0); k < size; k++ {
		v := value(k) // once per run, not per element
		for start := k * inner; start < n; start += size * inner {
			run := d[start : start+inner]
			for i := range run {
				run[i] = v
			}
		}
	}
}
