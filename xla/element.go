package xla

import (
	"reflect"
	"strconv"
)

// Element is a Go type whose values are the elements of a host array:
// bool, the sized integers, int and uint (as wide as the platform's int),
// float32, float64, complex64, complex128, BF16 and F16, and named types
// built on them.
type Element interface {
	~bool | ~int8 | ~int16 | ~int32 | ~int64 | ~int |
		~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// DTypeOf returns the element type whose host layout Go type T has: BF16
// and F16 are BFloat16 and Float16, int and uint are Int64 and Uint64 on
// 64-bit platforms (Int32 and Uint32 on 32-bit ones), and a named type is
// the element type of the type it is built on (type Celsius float32 is
// Float32). The exception: a type built on BF16 or F16 is Uint16, the
// type they are built on; use BF16 and F16 themselves for 16-bit floats.
func DTypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case BF16:
		return BFloat16
	case F16:
		return Float16
	}
	if k := reflect.TypeFor[T]().Kind(); int(k) < len(dtypeOfKind) {
		return dtypeOfKind[k]
	}
	return Invalid
}

// dtypeOfKind is the element type of each kind of Go type an Element can
// be (Invalid for the others).
var dtypeOfKind = [...]DType{
	reflect.Bool: Bool,
	reflect.Int8: Int8, reflect.Int16: Int16, reflect.Int32: Int32, reflect.Int64: Int64, reflect.Int: platformInt,
	reflect.Uint8: Uint8, reflect.Uint16: Uint16, reflect.Uint32: Uint32, reflect.Uint64: Uint64, reflect.Uint: platformUint,
	reflect.Float32: Float32, reflect.Float64: Float64,
	reflect.Complex64: Complex64, reflect.Complex128: Complex128,
}

// platformInt and platformUint are the element types as wide as Go's int
// and uint.
var platformInt, platformUint = func() (DType, DType) {
	if strconv.IntSize == 32 {
		return Int32, Uint32
	}
	return Int64, Uint64
}()
