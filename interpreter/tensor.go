package interpreter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/halo-ml/halo/xla"
)

// Tensor is a dense array in row-major order. Its elements live in one
// typed Go slice chosen by the element type (see Storage):
//
//	Bool                          []bool
//	Int2, Int4, Int8              []int8   (values kept in range by wrap-around)
//	Int16, Int32, Int64           []int16, []int32, []int64
//	Uint2, Uint4, Uint8           []uint8  (values kept in range by wrap-around)
//	Uint16, Uint32, Uint64        []uint16, []uint32, []uint64
//	Float32, Float64              []float32, []float64
//	Float16, BFloat16, f8/f6/f4   []float32 holding values exactly representable
//	                              in the narrow type (arithmetic is done in
//	                              float32 and rounded back, see RoundNarrow)
//	Complex64, Complex128         []complex64, []complex128
//
// with one entry per element: a tensor whose Data disagrees with its
// Shape is malformed (Validate), and Program.Run rejects it. A tensor
// without elements may leave Data nil.
type Tensor struct {
	Shape xla.Shape
	Data  any
}

// Storage is the Go element type class a dtype is stored as.
type Storage uint8

// The storage classes.
const (
	StorageInvalid Storage = iota
	StorageBool
	StorageI8
	StorageI16
	StorageI32
	StorageI64
	StorageU8
	StorageU16
	StorageU32
	StorageU64
	StorageF32
	StorageF64
	StorageC64
	StorageC128
)

// StorageOf returns the storage class of dt.
func StorageOf(dt xla.DType) Storage {
	switch dt {
	case xla.Bool:
		return StorageBool
	case xla.Int1, xla.Int2, xla.Int4, xla.Int8:
		return StorageI8
	case xla.Int16:
		return StorageI16
	case xla.Int32:
		return StorageI32
	case xla.Int64:
		return StorageI64
	case xla.Uint1, xla.Uint2, xla.Uint4, xla.Uint8:
		return StorageU8
	case xla.Uint16:
		return StorageU16
	case xla.Uint32:
		return StorageU32
	case xla.Uint64:
		return StorageU64
	case xla.Float32:
		return StorageF32
	case xla.Float64:
		return StorageF64
	case xla.Complex64:
		return StorageC64
	case xla.Complex128:
		return StorageC128
	}
	if dt.IsFloat() {
		return StorageF32 // narrow floats
	}
	return StorageInvalid
}

// IsNarrowFloat reports whether dt is a float type stored as float32 but
// narrower than it (f16, bf16, the f8/f6/f4 kinds).
func IsNarrowFloat(dt xla.DType) bool { return dt.IsFloat() && dt != xla.Float32 && dt != xla.Float64 }

// NewFloatTensor returns a tensor of float type dt (f32, f64, or a narrow
// float such as bf16, kept as float32 values of that type) with the given
// dimensions, holding data rounded to dt (to nearest even). It is an error
// when dt is not a real float type or data does not have as many elements
// as the dimensions.
func NewFloatTensor(dt xla.DType, data []float32, dims ...int64) (*Tensor, error) {
	shape := xla.MakeShape(dt, dims...)
	if !dt.IsFloat() {
		return nil, fmt.Errorf("interpreter: NewFloatTensor: %v is not a float type", dt)
	}
	if n, err := elemCount(shape); err != nil {
		return nil, fmt.Errorf("interpreter: NewFloatTensor: %w", err)
	} else if n != len(data) {
		return nil, fmt.Errorf("interpreter: NewFloatTensor: %v has %s, data %d", shape, plural(n, "element"), len(data))
	}
	t, err := AllocTensor(shape)
	if err != nil {
		return nil, err
	}
	switch d := t.Data.(type) {
	case []float64:
		for i, v := range data {
			d[i] = float64(v)
		}
	case []float32:
		copy(d, data)
		RoundNarrowSlice(dt, d)
	}
	return t, nil
}

// oneElem is a one-element tensor (a scalar of index arithmetic, say)
// allocated together with its element: one allocation less.
type oneElem[T any] struct {
	t Tensor
	v [1]T
}

func newOne[T any](shape xla.Shape) *Tensor {
	o := &oneElem[T]{t: Tensor{Shape: shape.Clone()}}
	o.t.Data = o.v[:]
	return &o.t
}

// NewTensor returns a zero tensor of the given shape. It panics with an
// *AllocError when the shape has a negative dimension, overflows or needs
// more memory than is available (the interpreter's kernels report that as
// the op's error); AllocTensor returns it instead.
func NewTensor(shape xla.Shape) *Tensor {
	checkAlloc(shape)
	n := int(shape.Size())
	if n == 1 {
		switch StorageOf(shape.DType) {
		case StorageI32:
			return newOne[int32](shape)
		case StorageF32:
			return newOne[float32](shape)
		case StorageBool:
			return newOne[bool](shape)
		}
	}
	t := &Tensor{Shape: shape.Clone()}
	switch StorageOf(shape.DType) {
	case StorageBool:
		t.Data = make([]bool, n)
	case StorageI8:
		t.Data = make([]int8, n)
	case StorageI16:
		t.Data = make([]int16, n)
	case StorageI32:
		t.Data = make([]int32, n)
	case StorageI64:
		t.Data = make([]int64, n)
	case StorageU8:
		t.Data = make([]uint8, n)
	case StorageU16:
		t.Data = make([]uint16, n)
	case StorageU32:
		t.Data = make([]uint32, n)
	case StorageU64:
		t.Data = make([]uint64, n)
	case StorageF32:
		t.Data = make([]float32, n)
	case StorageF64:
		t.Data = make([]float64, n)
	case StorageC64:
		t.Data = make([]complex64, n)
	case StorageC128:
		t.Data = make([]complex128, n)
	}
	return t
}

// AllocTensor is NewTensor with its failure as an error: an *AllocError
// when the shape has a negative dimension, overflows or needs more memory
// than is available, and an error naming an element type the interpreter
// does not store (see Tensor).
func AllocTensor(shape xla.Shape) (t *Tensor, err error) {
	if StorageOf(shape.DType) == StorageInvalid {
		return nil, fmt.Errorf("interpreter: element type %v is not supported", shape.DType)
	}
	defer catchAlloc(&err)
	return NewTensor(shape), nil
}

// Len is the number of elements of t's shape (0 for a nil t).
func (t *Tensor) Len() int {
	if t == nil {
		return 0
	}
	return int(t.Shape.Size())
}

// Validate reports what is wrong with t, or nil when it is well formed:
// not nil, of an element type the interpreter stores, without a negative
// dimension or more elements than an int counts, and with Data the slice
// its element type is stored in (see Tensor), one entry per element.
// Program.Run checks its arguments with it; the kernels take their
// operands to be valid.
//
// A tensor without elements may leave Data nil (the zero value of the
// field): it is valid, and Program.Run, Host, ToSlice, FormatElement and
// Convert take it as the empty slice of its element type.
func (t *Tensor) Validate() error {
	if t == nil {
		return errors.New("nil *Tensor")
	}
	s := t.Shape
	if StorageOf(s.DType) == StorageInvalid {
		return fmt.Errorf("element type %v is not supported", s.DType)
	}
	n, err := elemCount(s)
	if err != nil {
		return err
	}
	if n == 0 && t.Data == nil {
		return nil
	}
	return ewCheckStorage(t)
}

// elemCount is the number of elements of shape s, or an error naming its
// first negative dimension, or saying that an int does not count its
// elements. Validate and TensorFrom check shapes with it, before anything
// is allocated.
func elemCount(s xla.Shape) (int, error) {
	for i, d := range s.Dims {
		if d < 0 {
			return 0, fmt.Errorf("%v has negative dimension %d at axis %d", s, d, i)
		}
	}
	if slices.Contains(s.Dims, 0) {
		return 0, nil // no elements, however large the other dimensions
	}
	n := int64(1)
	for _, d := range s.Dims {
		if n > math.MaxInt/d {
			return 0, fmt.Errorf("%v has more elements than an int counts", s)
		}
		n *= d
	}
	return int(n), nil
}

// withStorage returns t, or, when t has no elements and a nil Data (which
// Validate accepts), a tensor of t's shape whose Data is the empty slice
// of its element type, as the kernels expect.
func withStorage(t *Tensor) *Tensor {
	if t == nil || t.Data != nil || t.Len() != 0 || StorageOf(t.Shape.DType) == StorageInvalid {
		return t
	}
	return NewTensor(t.Shape)
}

// plural is "1 element" or "n elements" (what: "element").
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// storageSlices names the Go slice type each storage class is held in.
var storageSlices = [...]string{
	StorageBool: "[]bool",
	StorageI8:   "[]int8", StorageI16: "[]int16", StorageI32: "[]int32", StorageI64: "[]int64",
	StorageU8: "[]uint8", StorageU16: "[]uint16", StorageU32: "[]uint32", StorageU64: "[]uint64",
	StorageF32: "[]float32", StorageF64: "[]float64",
	StorageC64: "[]complex64", StorageC128: "[]complex128",
}

// Clone returns a deep copy of t (nil for a nil t). Like NewTensor, it
// panics with an *AllocError when t's shape cannot be allocated.
func (t *Tensor) Clone() *Tensor {
	if t == nil {
		return nil
	}
	checkAlloc(t.Shape)
	if t.Len() == 0 {
		return NewTensor(t.Shape)
	}
	n := t.Len()
	var d any
	switch s := t.Data.(type) {
	case []bool:
		d = cloneLen(s, n)
	case []int8:
		d = cloneLen(s, n)
	case []int16:
		d = cloneLen(s, n)
	case []int32:
		d = cloneLen(s, n)
	case []int64:
		d = cloneLen(s, n)
	case []uint8:
		d = cloneLen(s, n)
	case []uint16:
		d = cloneLen(s, n)
	case []uint32:
		d = cloneLen(s, n)
	case []uint64:
		d = cloneLen(s, n)
	case []float32:
		d = cloneLen(s, n)
	case []float64:
		d = cloneLen(s, n)
	case []complex64:
		d = cloneLen(s, n)
	case []complex128:
		d = cloneLen(s, n)
	default:
		return NewTensor(t.Shape)
	}
	return &Tensor{Shape: t.Shape.Clone(), Data: d}
}

// cloneLen copies s into a new slice of length n. When the lengths agree
// the new slice is not cleared first (slices.Clone).
func cloneLen[T any](s []T, n int) []T {
	if len(s) == n {
		return slices.Clone(s)
	}
	c := make([]T, n)
	copy(c, s)
	return c
}

// TensorFromHost decodes host bytes (dense row-major, little-endian, one
// byte per element for booleans and sub-byte types) into a tensor.
func TensorFromHost(shape xla.Shape, data []byte) (*Tensor, error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	eb := shape.DType.HostBytes()
	n := int(shape.Size())
	if len(data) != n*eb {
		return nil, fmt.Errorf("interpreter: host data has %d bytes, %v needs %d", len(data), shape, n*eb)
	}
	t, err := AllocTensor(shape)
	if err != nil {
		return nil, err
	}
	dt := shape.DType
	switch d := t.Data.(type) {
	case []bool:
		for i := range d {
			d[i] = data[i] != 0
		}
	case []int8:
		for i := range d {
			d[i] = int8(WrapInt(dt, int64(int8(data[i]))))
		}
	case []int16:
		for i := range d {
			d[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
		}
	case []int32:
		for i := range d {
			d[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case []int64:
		for i := range d {
			d[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
	case []uint8:
		for i := range d {
			d[i] = uint8(WrapUint(dt, uint64(data[i])))
		}
	case []uint16:
		for i := range d {
			d[i] = binary.LittleEndian.Uint16(data[2*i:])
		}
	case []uint32:
		for i := range d {
			d[i] = binary.LittleEndian.Uint32(data[4*i:])
		}
	case []uint64:
		for i := range d {
			d[i] = binary.LittleEndian.Uint64(data[8*i:])
		}
	case []float32:
		if dt == xla.Float32 {
			for i := range d {
				d[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			}
		} else {
			for i := range d {
				var bits uint32
				for k := 0; k < eb; k++ {
					bits |= uint32(data[eb*i+k]) << (8 * k)
				}
				d[i] = DecodeNarrow(dt, bits)
			}
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
	case []complex64:
		for i := range d {
			re := math.Float32frombits(binary.LittleEndian.Uint32(data[8*i:]))
			im := math.Float32frombits(binary.LittleEndian.Uint32(data[8*i+4:]))
			d[i] = complex(re, im)
		}
	case []complex128:
		for i := range d {
			re := math.Float64frombits(binary.LittleEndian.Uint64(data[16*i:]))
			im := math.Float64frombits(binary.LittleEndian.Uint64(data[16*i+8:]))
			d[i] = complex(re, im)
		}
	default:
		return nil, fmt.Errorf("interpreter: element type %v is not supported", dt)
	}
	return t, nil
}

// Host encodes t as host bytes (the inverse of TensorFromHost). It is nil
// when t is nil or malformed (Validate's error): a tensor without elements
// gives an empty slice, not nil.
func (t *Tensor) Host() []byte {
	if t.Validate() != nil {
		return nil
	}
	dt := t.Shape.DType
	eb := dt.HostBytes()
	out := make([]byte, t.Len()*eb)
	switch d := t.Data.(type) {
	case []bool:
		for i, v := range d {
			if v {
				out[i] = 1
			}
		}
	case []int8:
		for i, v := range d {
			out[i] = byte(v)
		}
	case []int16:
		for i, v := range d {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
		}
	case []int32:
		for i, v := range d {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		}
	case []int64:
		for i, v := range d {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
		}
	case []uint8:
		copy(out, d)
	case []uint16:
		for i, v := range d {
			binary.LittleEndian.PutUint16(out[2*i:], v)
		}
	case []uint32:
		for i, v := range d {
			binary.LittleEndian.PutUint32(out[4*i:], v)
		}
	case []uint64:
		for i, v := range d {
			binary.LittleEndian.PutUint64(out[8*i:], v)
		}
	case []float32:
		if dt == xla.Float32 {
			for i, v := range d {
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
			}
		} else {
			for i, v := range d {
				bits := EncodeNarrow(dt, v)
				for k := 0; k < eb; k++ {
					out[eb*i+k] = byte(bits >> (8 * k))
				}
			}
		}
	case []float64:
		for i, v := range d {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(v))
		}
	case []complex64:
		for i, v := range d {
			binary.LittleEndian.PutUint32(out[8*i:], math.Float32bits(real(v)))
			binary.LittleEndian.PutUint32(out[8*i+4:], math.Float32bits(imag(v)))
		}
	case []complex128:
		for i, v := range d {
			binary.LittleEndian.PutUint64(out[16*i:], math.Float64bits(real(v)))
			binary.LittleEndian.PutUint64(out[16*i+8:], math.Float64bits(imag(v)))
		}
	}
	return out
}

// WrapInt wraps a signed value to the width of dt (two's complement), so
// i4 arithmetic wraps at 4 bits.
func WrapInt(dt xla.DType, v int64) int64 {
	bits := uint(dt.Bits())
	if dt == xla.Bool || bits >= 64 || bits == 0 {
		return v
	}
	shift := 64 - bits
	return (v << shift) >> shift
}

// WrapUint wraps an unsigned value to the width of dt.
func WrapUint(dt xla.DType, v uint64) uint64 {
	bits := uint(dt.Bits())
	if bits >= 64 || bits == 0 {
		return v
	}
	return v & (1<<bits - 1)
}

// dataPointer is the address of t's storage (0 when empty): two tensors
// with the same address share it (reshape, tuples ...).
func (t *Tensor) dataPointer() uintptr {
	v := reflect.ValueOf(t.Data)
	if v.Kind() != reflect.Slice || v.Len() == 0 {
		return 0
	}
	return v.Pointer()
}
