package interpreter

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/halo-ml/halo/xla"
)

// Go slices in and out of tensors, and tensors as text.

// TensorFrom returns a tensor with the given dimensions (none for a
// scalar, as effects.ArrayOf takes them) holding a copy of data, whose
// element type is Go type T's (xla.DTypeOf, as pjrt.BufferFrom: float32
// is f32, int is i64 on 64-bit platforms, xla.BF16 and xla.F16 are bf16
// and f16, and a named type is the type it is built on). It is an error
// when T has no element type, a dimension is negative, or data does not
// hold one value per element (checked before anything is allocated); a
// tensor that cannot be allocated is an *AllocError.
func TensorFrom[T xla.Element](data []T, dims ...int64) (*Tensor, error) {
	dt := xla.DTypeOf[T]()
	if dt == xla.Invalid {
		var z T
		return nil, fmt.Errorf("interpreter: TensorFrom: Go type %T has no element type", z)
	}
	shape := xla.MakeShape(dt, dims...)
	n, err := elemCount(shape)
	if err != nil {
		return nil, fmt.Errorf("interpreter: TensorFrom: %w", err)
	}
	if n != len(data) {
		if len(dims) == 0 {
			return nil, fmt.Errorf("interpreter: TensorFrom: no dims: a scalar; pass the dims (data %s)", plural(len(data), "element"))
		}
		return nil, fmt.Errorf("interpreter: TensorFrom: %v has %s, data %d", shape, plural(n, "element"), len(data))
	}
	t, err := AllocTensor(shape)
	if err != nil {
		return nil, err
	}
	if IsNarrowFloat(dt) { // bf16 and f16 bits, decoded to float32
		d := t.Data.([]float32)
		for i, b := range sameLayout[T, uint16](data) {
			d[i] = DecodeNarrow(dt, uint32(b))
		}
		return t, nil
	}
	copy(storageBytes(t), sameLayout[T, byte](data))
	return t, nil
}

// ToSlice returns a copy of the elements of tensor v as a []T, for the Go
// type T of v's element type (xla.DTypeOf[T] is it: []float32 for f32,
// []xla.BF16 for bf16, []bool for i1). It is an error, naming both, when T
// is another element type's, and an error when v is not a valid tensor
// (Tensor.Validate).
func ToSlice[T xla.Element](v Value) ([]T, error) {
	t, ok := v.(*Tensor)
	if !ok {
		return nil, fmt.Errorf("interpreter: ToSlice: value is %T, not a *Tensor", v)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("interpreter: ToSlice: %w", err)
	}
	dt := t.Shape.DType
	if want := xla.DTypeOf[T](); want != dt {
		var z T
		return nil, fmt.Errorf("interpreter: ToSlice: tensor holds %v, not %T (%v)", dt, z, want)
	}
	out := make([]T, t.Len())
	if len(out) == 0 { // Data may be nil (Validate)
		return out, nil
	}
	if IsNarrowFloat(dt) {
		bits := sameLayout[T, uint16](out)
		for i, f := range t.Data.([]float32) {
			bits[i] = uint16(EncodeNarrow(dt, f))
		}
		return out, nil
	}
	copy(sameLayout[T, byte](out), storageBytes(t))
	return out, nil
}

// sameLayout views s as a slice of E: T is an xla.Element whose values
// have E's layout (E is byte: its bytes).
func sameLayout[T, E any](s []T) []E {
	if len(s) == 0 {
		return nil
	}
	var t T
	var e E
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(t))/int(unsafe.Sizeof(e)))
}

// storageBytes views the storage of a valid tensor as bytes (nil when it
// has none: no elements, and Data nil or empty).
func storageBytes(t *Tensor) []byte {
	if t.Data == nil {
		return nil
	}
	v := reflect.ValueOf(t.Data)
	n := v.Len() * int(v.Type().Elem().Size())
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), n)
}

// tensorStringMax is how many elements Tensor.String prints.
const tensorStringMax = 16

// String prints t's type and its elements, the first 16 then "...", as
// the halo CLI prints a result: "tensor<2x2xf32> [1 2 3 4]", each element
// as FormatElement writes it (-1 for an i4 of bits 1111, (1-2i) for a
// complex number). A nil tensor is "<nil>", and a malformed one (see
// Validate) its type and what is wrong.
func (t *Tensor) String() string {
	if t == nil {
		return "<nil>"
	}
	if err := t.Validate(); err != nil {
		return fmt.Sprintf("%v (invalid: %v)", t.Shape, err)
	}
	var b strings.Builder
	b.WriteString(t.Shape.String())
	b.WriteString(" [")
	for i := range min(t.Len(), tensorStringMax) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(FormatElement(t, i))
	}
	if t.Len() > tensorStringMax {
		b.WriteString(" ...")
	}
	b.WriteByte(']')
	return b.String()
}
