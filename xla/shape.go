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

// Size is the number of elements (1 for a scalar).
func (s Shape) Size() int64 {
	n := int64(1)
	for _, d := range s.Dims {
		n *= d
	}
	return n
}

// HostBytes is the size of the array in a dense row-major host buffer.
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
	n := int64(max(s.DType.HostBytes(), 1))
	for i, d := range s.Dims {
		if d < 0 {
			return fmt.Errorf("xla: shape %v has negative dimension %d at axis %d", s, d, i)
		}
		if d > 0 && n > math.MaxInt64/d {
			return fmt.Errorf("xla: shape %v has more than 2^63 bytes", s)
		}
		n *= d
	}
	return nil
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
