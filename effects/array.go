package effects

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/halo-ml/halo/interpreter"
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
// "[1 2 3]" for a vector, nested brackets for higher ranks. Each element
// is written as interpreter.FormatElement writes it, as Tensor.String and
// halo run print results: the element's value (-1 for an i4 whose host
// byte is 0xff, 0.1015625 for that f8E4M3FN value), complex numbers as
// (1-2i). An array of no elements shows three of its empty rows at each
// end of a dim longer than seven, "..." between.
func (a Array) String() string {
	t := a.decoded()
	if t == nil {
		return fmt.Sprintf("<%v array with %d data bytes>", a.Shape(), len(a.Data))
	}
	var b strings.Builder
	a.writeElems(&b, func(i int) { b.WriteString(interpreter.FormatElement(t, i)) })
	return b.String()
}

// Format implements fmt.Formatter, so that a format verb applies to the
// elements, nested as String nests them. %v and %s print String's form
// (%s as a string, with its width and precision); %#v prints the Array
// struct in Go syntax. Any other verb, and %v with flags, width or
// precision, formats each element's value as fmt formats a Go value of
// the type the interpreter holds it in (see interpreter.Tensor: int8 for
// the signed sub-byte integers, uint8 for the unsigned ones, float32 for
// bf16, f16, the f8, f6 and f4 kinds), padded one by one as fmt pads the
// elements of a slice: %d on an i32 array prints "[1 2 3]", %.3f on an f32
// array "[1.000 2.000]", %5d "[    1     2     3]", %d on an i4 array
// "[-1 7]". The verbs an element type takes are fmt's for that Go type:
// %t for bool; %b %c %d %o %O %q %x %X %U for the integers; %b %e %E %f
// %F %g %G %x %X for the floating-point and complex types. Another verb
// prints %!verb(effects.Array=...), as fmt does for a bad verb.
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
		t := a.decoded()
		if t == nil {
			io.WriteString(f, a.String())
			return
		}
		spec := fmt.FormatString(f, verb)
		elems := reflect.ValueOf(t.Data)
		var b strings.Builder
		a.writeElems(&b, func(i int) { fmt.Fprintf(&b, spec, elems.Index(i).Interface()) })
		io.WriteString(f, b.String())
	}
}

// decoded returns a's elements as the interpreter holds them
// (interpreter.TensorFromHost decodes the host bytes: the sub-byte
// integers to int8 or uint8 values, the narrow floats to float32 values
// ...), or nil when a's shape is not valid, the interpreter does not hold
// its element type, or its data does not hold its elements (bytes past
// them are not looked at).
func (a Array) decoded() *interpreter.Tensor {
	shape := a.Shape()
	if shape.Validate() != nil {
		return nil
	}
	n := shape.HostBytes() // no overflow: Validate counts the bytes
	if int64(len(a.Data)) < n {
		return nil
	}
	t, err := interpreter.TensorFromHost(shape, a.Data[:n])
	if err != nil {
		return nil
	}
	return t
}

// emptyEdge is how many of the empty rows at each end of a dim an array
// of no elements shows, when the dim is longer than twice that and one;
// emptyBudget is how many empty rows ("[]") it shows in all.
const (
	emptyEdge   = 3
	emptyBudget = 64
)

// writeElems writes the elements of a (whose shape is valid) to b, each
// with elem given its row-major index, nested in brackets as Go prints
// slices. An array of no elements shows "[[] [] [] ... [] [] []]" for a
// long dim (emptyEdge rows at each end), and "..." for the rest once it
// has shown emptyBudget empty rows: its text is bounded, as it is by the
// data of an array of elements, whatever its dims ([2^40, 0] would
// otherwise be 2^41 bytes of brackets, and [7, 7, ..., 0] 7^rank).
func (a Array) writeElems(b *strings.Builder, elem func(i int)) {
	empty := a.Shape().Size() == 0
	idx, shown := 0, 0
	var rec func(dim int)
	rec = func(dim int) {
		if dim == len(a.Dims) {
			elem(idx)
			idx++
			return
		}
		n := a.Dims[dim]
		if empty && n == 0 {
			b.WriteString("[]")
			shown++
			return
		}
		b.WriteByte('[')
		for i := int64(0); i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			if empty && (shown >= emptyBudget || n > 2*emptyEdge+1 && i == emptyEdge) {
				b.WriteString("...")
				if shown >= emptyBudget {
					break
				}
				i = n - emptyEdge - 1
				continue
			}
			rec(dim + 1)
		}
		b.WriteByte(']')
	}
	rec(0)
}

// elementVerbs returns the verbs, besides %v and %s, that Format applies
// to the elements of an array of dt: fmt's verbs for the Go type the
// interpreter holds them in (interpreter.StorageOf).
func elementVerbs(dt xla.DType) string {
	switch interpreter.StorageOf(dt) {
	case interpreter.StorageInvalid:
		return ""
	case interpreter.StorageBool:
		return "t"
	case interpreter.StorageF32, interpreter.StorageF64, interpreter.StorageC64, interpreter.StorageC128:
		return "beEfFgGxX"
	}
	return "bcdoOqxXU" // the integers
}

// verbFormats reports whether Format formats an array of dt with verb.
func verbFormats(dt xla.DType, verb rune) bool {
	return verb == 'v' || verb == 's' || strings.ContainsRune(elementVerbs(dt), verb)
}
