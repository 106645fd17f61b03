package xla

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Shape is the type of a dense array: an element type and static dimensions.
// A Shape with no Dims is a scalar.
type Shape struct {
	DType DType
	Dims  []int64
}

// MakeShape returns a Shape with the given element type and dimensions.
func MakeShape(dtype DType, dims ...int64) Shape {
	return Shape{DType: dtype, Dims: append([]int64(nil), dims...)}
}

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s.Dims) }

// Size is the number of elements (1 for a scalar) of a shape Validate
// accepts; of another (negative or dynamic dims, a product past int64)
// the number means nothing.
func (s Shape) Size() int64 {
	n := int64(1)
	for _, d := range s.Dims {
		n *= d
	}
	return n
}

// HostBytes is the size of the array in a dense row-major host buffer,
// for a shape Validate accepts (it checks that the bytes fit in an int64).
func (s Shape) HostBytes() int64 { return s.Size() * int64(s.DType.HostBytes()) }

// Equal reports whether s and o have the same element type and dimensions.
func (s Shape) Equal(o Shape) bool {
	if s.DType != o.DType || len(s.Dims) != len(o.Dims) {
		return false
	}
	for i := range s.Dims {
		if s.Dims[i] != o.Dims[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy of s that shares no memory with it.
func (s Shape) Clone() Shape { return MakeShape(s.DType, s.Dims...) }

// Validate reports an error for an invalid element type, a negative
// dimension, or more bytes than an int64 counts.
func (s Shape) Validate() error {
	if !s.DType.Valid() {
		return fmt.Errorf("xla: shape has invalid element type %v", s.DType)
	}
	empty := false
	for i, d := range s.Dims {
		if d < 0 {
			return fmt.Errorf("xla: shape %v has negative dimension %d at axis %d", s, d, i)
		}
		empty = empty || d == 0
	}
	if empty { // no bytes, whatever the other dimensions
		return nil
	}
	n := int64(max(s.DType.HostBytes(), 1))
	for _, d := range s.Dims {
		if n > math.MaxInt64/d {
			return fmt.Errorf("xla: shape %v has more than 2^63 bytes", s)
		}
		n *= d
	}
	return nil
}

// StridedBytes is how many bytes host data laid out with these byte
// strides (one per dimension, as PJRT's byte_strides) must hold: the
// offset of the last element plus its size; 0 for a shape without
// elements. Negative strides on dimensions longer than one, and offsets
// past 2^63, are errors, as is an invalid s (Validate's error).
func (s Shape) StridedBytes(strides []int64) (int64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if len(strides) != s.Rank() {
		return 0, fmt.Errorf("xla: %d byte strides for rank-%d shape %v", len(strides), s.Rank(), s)
	}
	if s.Size() == 0 {
		return 0, nil
	}
	eb := int64(s.DType.HostBytes())
	var last int64
	for i, st := range strides {
		if s.Dims[i] > 1 && st < 0 {
			return 0, fmt.Errorf("xla: negative byte stride %d for dimension %d of %v", st, i, s)
		}
		if st > 0 && s.Dims[i]-1 > (math.MaxInt64-eb-last)/st {
			return 0, fmt.Errorf("xla: byte strides %v for %v reach past byte 2^63", strides, s)
		}
		last += (s.Dims[i] - 1) * max(st, 0)
	}
	return last + eb, nil
}

// String prints s as an MLIR tensor type: "tensor<2x3xf32>".
func (s Shape) String() string {
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range s.Dims {
		b.WriteString(strconv.FormatInt(d, 10))
		b.WriteByte('x')
	}
	b.WriteString(s.DType.String())
	b.WriteByte('>')
	return b.String()
}
