package effects

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
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
	var b strings.Builder
	if !a.writeElems(&b, func(p []byte) { b.WriteString(formatElem(a.DType, p)) }) {
		return fmt.Sprintf("<%v array with %d data bytes>", a.Shape(), len(a.Data))
	}
	return b.String()
}

// Format implements fmt.Formatter, so that a format verb applies to the
// elements, nested as String nests them. %v and %s print String's form
// (%s as a string, with its width and precision); %#v prints the Array
// struct in Go syntax. Any other verb, and %v with flags, width or
// precision, formats each element as fmt formats a Go value of its type
// (bf16 and f16 as float32), padded one by one as fmt pads the elements of
// a slice: %d on an i32 array prints "[1 2 3]", %.3f on an f32 array
// "[1.000 2.000]", %5d "[    1     2     3]". The verbs an element type
// takes are fmt's for its Go type: %t for bool; %b %c %d %o %O %q %x %X
// %U for the integers; %b %e %E %f %F %g %G %x %X for the floating-point
// and complex types; only %v and %s for the element types without a Go
// type (float8 and the other narrow floats, the sub-byte integers). Another
// verb prints %!verb(effects.Array=...), as fmt does for a bad verb.
func (a Array) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		// Data through reflect, as fmt prints a field: []uint8, not []byte.
		fmt.Fprintf(f, "effects.Array{DType:%#v, Dims:%#v, Data:%#v}", a.DType, a.Dims, reflect.ValueOf(a.Data))
	case verb == 's':
		fmt.Fprintf(f, fmt.FormatString(f, 's'), a.String())
	case !verbFormats(a.DType, verb):
		fmt.Fprintf(f, "%%!%c(effects.Array=%s)", verb, a.String())
	case verb == 'v' && fmt.FormatString(f, 'v') == "%v":
		io.WriteString(f, a.String())
	default:
		spec := fmt.FormatString(f, verb)
		var b strings.Builder
		if !a.writeElems(&b, func(p []byte) {
			if v := elemValue(a.DType, p); v != nil {
				fmt.Fprintf(&b, spec, v)
			} else {
				fmt.Fprintf(&b, spec, formatElem(a.DType, p))
			}
		}) {
			io.WriteString(f, a.String())
			return
		}
		io.WriteString(f, b.String())
	}
}

// writeElems writes a's elements to b, each with elem, nested in brackets
// as Go prints slices. It reports false, writing nothing, when a's shape is
// not valid or its data does not hold its elements.
func (a Array) writeElems(b *strings.Builder, elem func(p []byte)) bool {
	shape := a.Shape()
	if shape.Validate() != nil {
		return false
	}
	n := shape.Size()
	eb := int64(a.DType.HostBytes())
	if n < 0 || int64(len(a.Data)) < n*eb {
		return false
	}
	idx := int64(0)
	var rec func(dim int)
	rec = func(dim int) {
		if dim == len(a.Dims) {
			elem(a.Data[idx*eb : (idx+1)*eb])
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
	return true
}

// elemValue returns the element at p (its host encoding) as the Go value
// that Format formats: bf16 and f16 as float32; nil for the element types
// without a Go type (the narrow floats, the sub-byte integers).
func elemValue(dt xla.DType, p []byte) any {
	le := binary.LittleEndian
	switch dt {
	case xla.Bool:
		return p[0] != 0
	case xla.Int8:
		return int8(p[0])
	case xla.Int16:
		return int16(le.Uint16(p))
	case xla.Int32:
		return int32(le.Uint32(p))
	case xla.Int64:
		return int64(le.Uint64(p))
	case xla.Uint8:
		return p[0]
	case xla.Uint16:
		return le.Uint16(p)
	case xla.Uint32:
		return le.Uint32(p)
	case xla.Uint64:
		return le.Uint64(p)
	case xla.Float32:
		return math.Float32frombits(le.Uint32(p))
	case xla.Float64:
		return math.Float64frombits(le.Uint64(p))
	case xla.BFloat16:
		return xla.BF16(le.Uint16(p)).Float32()
	case xla.Float16:
		return xla.F16(le.Uint16(p)).Float32()
	case xla.Complex64:
		return complex(math.Float32frombits(le.Uint32(p)), math.Float32frombits(le.Uint32(p[4:])))
	case xla.Complex128:
		return complex(math.Float64frombits(le.Uint64(p)), math.Float64frombits(le.Uint64(p[8:])))
	}
	return nil
}

// elementVerbs returns the verbs, besides %v and %s, that Format applies
// to the elements of an array of dt: fmt's verbs for their Go type.
func elementVerbs(dt xla.DType) string {
	var zero [16]byte // the widest element, complex128
	switch elemValue(dt, zero[:]).(type) {
	case bool:
		return "t"
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return "bcdoOqxXU"
	case float32, float64, complex64, complex128:
		return "beEfFgGxX"
	}
	return ""
}

// verbFormats reports whether Format formats an array of dt with verb.
func verbFormats(dt xla.DType, verb rune) bool {
	return verb == 'v' || verb == 's' || strings.ContainsRune(elementVerbs(dt), verb)
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
