package effects

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/xla"
)

// Effect is the kind of a host callback's side effect. Ordered effects are
// identified by name: the callbacks of one ordered effect happen in program
// order inside a computation and in dispatch order across the
// computations of a Stream, each effect with its own token chain. The
// zero Effect is Unordered.
type Effect struct {
	name    string
	ordered bool
}

// Unordered is the effect of callbacks that need no order: they happen
// while their computation runs, and Barrier waits for them.
var Unordered = Effect{}

// Ordered returns the ordered effect called name. Callbacks of the same
// name share one token chain; different names are not ordered against
// each other.
func Ordered(name string) Effect { return Effect{name: name, ordered: true} }

// IsOrdered reports whether e is an ordered effect.
func (e Effect) IsOrdered() bool { return e.ordered }

// Name is the ordered effect's name ("" for Unordered).
func (e Effect) Name() string { return e.name }

// String is `ordered("name")` (the name quoted) or "unordered".
func (e Effect) String() string {
	if !e.ordered {
		return "unordered"
	}
	return "ordered(" + strconv.Quote(e.name) + ")"
}

// Array is a host copy of an array that a callback receives or returns:
// element type, dimensions, and the elements in dense row-major order as
// their little-endian host encoding (xla.Shape.HostBytes bytes; one byte
// per element for bool and sub-byte types).
type Array struct {
	DType xla.DType
	Dims  []int64
	Data  []byte
}

// Shape is the array's element type and dimensions.
func (a Array) Shape() xla.Shape { return xla.MakeShape(a.DType, a.Dims...) }

// ArrayOf copies a Go slice into an Array with the given dimensions (none
// for a scalar). It fails when T has no element type or when the
// dimensions do not hold len(data) elements.
func ArrayOf[T pjrt.Element](data []T, dims ...int64) (Array, error) {
	dt := pjrt.DTypeOf[T]()
	if dt == xla.Invalid {
		var z T
		return Array{}, fmt.Errorf("effects: Go type %T has no element type", z)
	}
	shape := xla.MakeShape(dt, dims...)
	if err := shape.Validate(); err != nil {
		return Array{}, fmt.Errorf("effects: %w", err)
	}
	if shape.Size() != int64(len(data)) {
		return Array{}, fmt.Errorf("effects: dimensions %v hold %d elements, got %d", dims, shape.Size(), len(data))
	}
	out := Array{DType: dt, Dims: append([]int64(nil), dims...), Data: make([]byte, shape.HostBytes())}
	if len(data) > 0 {
		var z T
		copy(out.Data, unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(z))))
	}
	if dt == xla.Bool { // one byte per element, 0 or 1
		for i, b := range out.Data {
			if b != 0 {
				out.Data[i] = 1
			}
		}
	}
	return out, nil
}

// Values copies the elements of a out as a Go slice. T must match a's
// element type.
func Values[T pjrt.Element](a Array) ([]T, error) {
	dt := pjrt.DTypeOf[T]()
	if dt != a.DType {
		var z T
		return nil, fmt.Errorf("effects: array holds %v, not %T (%v)", a.DType, z, dt)
	}
	if err := a.Shape().Validate(); err != nil {
		return nil, fmt.Errorf("effects: %w", err)
	}
	n := a.Shape().Size()
	var z T
	if int64(len(a.Data)) != n*int64(unsafe.Sizeof(z)) {
		return nil, fmt.Errorf("effects: %v array has %d data bytes, want %d", a.Shape(), len(a.Data), n*int64(unsafe.Sizeof(z)))
	}
	out := make([]T, n)
	if n > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(a.Data)), a.Data)
	}
	return out, nil
}

// String formats the array as Go prints slices: a scalar as its value,
// "[1 2 3]" for a vector, nested brackets for higher ranks.
func (a Array) String() string {
	shape := a.Shape()
	if shape.Validate() != nil {
		return fmt.Sprintf("<%v array with %d data bytes>", shape, len(a.Data))
	}
	n := shape.Size()
	eb := int64(a.DType.HostBytes())
	if n < 0 || int64(len(a.Data)) < n*eb {
		return fmt.Sprintf("<%v array with %d data bytes>", shape, len(a.Data))
	}
	var b strings.Builder
	idx := int64(0)
	var rec func(dim int)
	rec = func(dim int) {
		if dim == len(a.Dims) {
			b.WriteString(formatElem(a.DType, a.Data[idx*eb:(idx+1)*eb]))
			idx++
			return
		}
		b.WriteByte('[')
		for i := int64(0); i < a.Dims[dim]; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			rec(dim + 1)
		}
		b.WriteByte(']')
	}
	rec(0)
	return b.String()
}

// formatElem formats one element from its host encoding.
func formatElem(dt xla.DType, p []byte) string {
	le := binary.LittleEndian
	switch dt {
	case xla.Bool:
		return strconv.FormatBool(p[0] != 0)
	case xla.Int8:
		return strconv.FormatInt(int64(int8(p[0])), 10)
	case xla.Int16:
		return strconv.FormatInt(int64(int16(le.Uint16(p))), 10)
	case xla.Int32:
		return strconv.FormatInt(int64(int32(le.Uint32(p))), 10)
	case xla.Int64:
		return strconv.FormatInt(int64(le.Uint64(p)), 10)
	case xla.Uint8:
		return strconv.FormatUint(uint64(p[0]), 10)
	case xla.Uint16:
		return strconv.FormatUint(uint64(le.Uint16(p)), 10)
	case xla.Uint32:
		return strconv.FormatUint(uint64(le.Uint32(p)), 10)
	case xla.Uint64:
		return strconv.FormatUint(le.Uint64(p), 10)
	case xla.Float32:
		return strconv.FormatFloat(float64(math.Float32frombits(le.Uint32(p))), 'g', -1, 32)
	case xla.Float64:
		return strconv.FormatFloat(math.Float64frombits(le.Uint64(p)), 'g', -1, 64)
	case xla.BFloat16:
		return strconv.FormatFloat(float64(xla.BF16(le.Uint16(p)).Float32()), 'g', -1, 32)
	case xla.Float16:
		return strconv.FormatFloat(float64(xla.F16(le.Uint16(p)).Float32()), 'g', -1, 32)
	case xla.Complex64:
		c := complex(math.Float32frombits(le.Uint32(p)), math.Float32frombits(le.Uint32(p[4:])))
		return strconv.FormatComplex(complex128(c), 'g', -1, 64)
	case xla.Complex128:
		c := complex(math.Float64frombits(le.Uint64(p)), math.Float64frombits(le.Uint64(p[8:])))
		return strconv.FormatComplex(c, 'g', -1, 128)
	}
	return fmt.Sprintf("0x%x", p)
}
