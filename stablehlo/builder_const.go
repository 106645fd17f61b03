package stablehlo

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/halo-ml/halo/xla"
)

// Element is a Go type a constant can be built from (xla.Element).
type Element = xla.Element

// DTypeOf returns the element type of Go type T (xla.DTypeOf: BF16 → bf16,
// F16 → f16, int → i64 on 64-bit platforms).
func DTypeOf[T Element]() xla.DType { return xla.DTypeOf[T]() }

// elementBytes copies data into host-layout bytes (little-endian hosts).
func elementBytes[T Element](data []T) []byte {
	if len(data) == 0 {
		return []byte{}
	}
	size := int(unsafe.Sizeof(data[0]))
	src := unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*size)
	out := make([]byte, len(src))
	copy(out, src)
	if b, ok := any(data).([]bool); ok { // normalise to 0/1
		for i, v := range b {
			out[i] = 0
			if v {
				out[i] = 1
			}
		}
	}
	return out
}

// Constant adds stablehlo.constant holding data (row-major) with the given
// dimensions; with no dimensions the constant is the 1-D tensor of data.
// A negative dimension (DynamicDim too: a constant is static) is an error
// naming it.
func Constant[T Element](fb *FuncBuilder, data []T, dims ...int64) *Value {
	if dims == nil {
		dims = []int64{int64(len(data))}
	}
	t := Tensor(DTypeOf[T](), dims...)
	if err := checkSizedType("dimension", dims, t); err != nil {
		fb.fail("stablehlo.constant", nil, "%v", err)
		return deadValue(t)
	}
	if n := t.Size(); n != int64(len(data)) {
		fb.fail("stablehlo.constant", nil, "%d elements do not fill %s", len(data), t)
		return deadValue(t)
	}
	return fb.ConstantAttr(DenseElementsAttr{Type: t, Data: elementBytes(data)})
}

// checkSizedType checks the sizes a caller gives (checkSizes: what they
// are, "dimension" say; sizes are static), then the element count of the
// type t made of them (checkDims).
func checkSizedType(what string, sizes []int64, t TensorType) error {
	if err := checkSizes(what, sizes); err != nil {
		return err
	}
	return checkDims(t)
}

// ConstantScalar adds a rank-0 constant.
func ConstantScalar[T Element](fb *FuncBuilder, v T) *Value {
	return fb.ConstantAttr(DenseElementsAttr{Type: TensorType{DType: DTypeOf[T]()}, Data: elementBytes([]T{v})})
}

// Splat adds a constant of the given dimensions with every element v (a
// negative dimension is an error, as for Constant).
func Splat[T Element](fb *FuncBuilder, v T, dims ...int64) *Value {
	t := Tensor(DTypeOf[T](), dims...)
	if err := checkSizedType("dimension", dims, t); err != nil {
		fb.fail("stablehlo.constant", nil, "%v", err)
		return deadValue(t)
	}
	return fb.ConstantAttr(DenseElementsAttr{Type: t, Data: elementBytes([]T{v}), Splat: true})
}

// ConstantBytes adds a constant of type t from host-layout bytes (one
// element per byte for booleans and sub-byte types): the way to build
// constants of float8 and other types without a Go equivalent. A boolean
// or sub-byte element's byte must be in host form (0 or 1 for booleans,
// 0 or 0xff for xla.Int1, the value sign-extended for the other signed
// sub-byte integers, the high bits 0 for the unsigned ones and the
// sub-byte floats): another byte is an error naming the element.
func (fb *FuncBuilder) ConstantBytes(t TensorType, data []byte) *Value {
	return fb.ConstantAttr(DenseElementsAttr{Type: t, Data: append([]byte{}, data...)})
}

// ConstantAttr adds stablehlo.constant with value a (its data must fill
// a's type, in host form as ConstantBytes says).
func (fb *FuncBuilder) ConstantAttr(a DenseElementsAttr) *Value {
	const name = "stablehlo.constant"
	if !fb.ok(name, nil) {
		return deadValue(a.Type)
	}
	if err := validType(a.Type); err != nil {
		fb.fail(name, nil, "%v", err)
		return deadValue(a.Type)
	}
	if err := checkDense(a); err != nil {
		fb.fail(name, nil, "%v", err)
		return deadValue(a.Type)
	}
	op := NewOp(name, nil, []Type{a.Type}, NamedAttr{Name: "value", Value: a})
	fb.emit(op)
	return op.Results[0]
}

// Zero adds a splat constant 0 (false for booleans) of type t.
func (fb *FuncBuilder) Zero(t TensorType) *Value {
	return fb.ConstantAttr(DenseElementsAttr{Type: t, Data: make([]byte, t.DType.HostBytes()), Splat: true})
}

// ScalarOf adds a rank-0 constant of dtype holding v converted to dtype
// (floats and complex numbers take v's value, rounded to nearest even for
// the narrow kinds, integers its truncation wrapped to their width (a NaN
// or infinite v is an error), booleans v != 0).
func (fb *FuncBuilder) ScalarOf(dtype xla.DType, v float64) *Value {
	data, err := encodeFloat(dtype, v)
	if err != nil {
		fb.fail("stablehlo.constant", nil, "%v", err)
		return deadValue(TensorType{DType: dtype})
	}
	return fb.ConstantAttr(DenseElementsAttr{Type: TensorType{DType: dtype}, Data: data})
}

// SplatOf adds a constant of dtype and dims with every element v (see ScalarOf).
func (fb *FuncBuilder) SplatOf(dtype xla.DType, v float64, dims ...int64) *Value {
	data, err := encodeFloat(dtype, v)
	t := Tensor(dtype, dims...)
	if err == nil {
		err = checkSizedType("dimension", dims, t)
	}
	if err != nil {
		fb.fail("stablehlo.constant", nil, "%v", err)
		return deadValue(t)
	}
	return fb.ConstantAttr(DenseElementsAttr{Type: t, Data: data, Splat: true})
}

// wrapTrunc is the truncation of v modulo 2^64, as the bits of a uint64
// (Go's conversion of an out-of-range float to an integer is left to the
// machine: amd64 and arm64 differ).
func wrapTrunc(v float64) (uint64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%v has no integer value", v)
	}
	m := math.Mod(math.Trunc(v), 0x1p64) // exact, in (-2^64, 2^64)
	if m < 0 {
		return -uint64(-m), nil
	}
	return uint64(m), nil
}

func encodeFloat(dt xla.DType, v float64) ([]byte, error) {
	if dt.IsInt() {
		bits, err := wrapTrunc(v)
		if err != nil {
			return nil, fmt.Errorf("a constant of element type %s: %w", dt, err)
		}
		switch dt {
		case xla.Int8, xla.Uint8:
			return []byte{byte(bits)}, nil
		case xla.Int16, xla.Uint16:
			return elementBytes([]uint16{uint16(bits)}), nil
		case xla.Int32, xla.Uint32:
			return elementBytes([]uint32{uint32(bits)}), nil
		case xla.Int64, xla.Uint64:
			return elementBytes([]uint64{bits}), nil
		}
		if dt.Bits() < 8 {
			// i1, i2, i4 and their unsigned kinds: one value a byte,
			// wrapped to the type's width (sign-extended for the signed).
			shift := 64 - dt.Bits()
			x := bits << shift
			if dt.IsUnsigned() {
				return []byte{byte(x >> shift)}, nil
			}
			return []byte{byte(int64(x) >> shift)}, nil
		}
	}
	switch dt {
	case xla.Bool:
		if v != 0 {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case xla.Float16:
		return elementBytes([]F16{F16FromFloat64(v)}), nil
	case xla.BFloat16:
		return elementBytes([]BF16{BF16FromFloat64(v)}), nil
	case xla.Float32:
		return elementBytes([]float32{float32(v)}), nil
	case xla.Float64:
		return elementBytes([]float64{v}), nil
	case xla.Complex64:
		return elementBytes([]complex64{complex(float32(v), 0)}), nil
	case xla.Complex128:
		return elementBytes([]complex128{complex(v, 0)}), nil
	}
	if f := xla.NarrowFloatOf(dt); f != nil && dt.HostBytes() == 1 {
		// f8, f6 and f4 kinds: one code a byte.
		return []byte{byte(f.Encode64(v))}, nil
	}
	return nil, fmt.Errorf("no scalar encoding for element type %s: use ConstantBytes", dt)
}

// checkDense checks that a's data fills its type, each element in its
// host form: a boolean or sub-byte element's byte must be what hostByte
// makes of it (the printer would write only some of its bits).
func checkDense(a DenseElementsAttr) error {
	w := a.Type.DType.HostBytes()
	if w == 0 {
		return fmt.Errorf("constant of element type %s", a.Type.DType)
	}
	n := a.Type.Size()
	if n < 0 {
		return fmt.Errorf("constant of dynamic type %s", a.Type)
	}
	if n > math.MaxInt64/int64(w) {
		return fmt.Errorf("constant of %s has more than 2^63 bytes", a.Type)
	}
	if a.Splat {
		if len(a.Data) != w {
			return fmt.Errorf("splat of %s holds %d bytes, want %d", a.Type, len(a.Data), w)
		}
	} else if int64(len(a.Data)) != n*int64(w) {
		return fmt.Errorf("constant of %s holds %d bytes, want %d", a.Type, len(a.Data), n*int64(w))
	}
	if dt := a.Type.DType; hostBits(dt) < 8 {
		for i, c := range a.Data {
			if want := hostByte(dt, c); c != want {
				return fmt.Errorf("element %d of %s is byte %#02x: host bytes of %s %s", i, a.Type, c, dt, hostForm(dt))
			}
		}
	}
	return nil
}

// hostForm describes the host bytes of dt, a boolean or a sub-byte
// type, for errors.
func hostForm(dt xla.DType) string {
	switch {
	case dt == xla.Int1:
		return "are 0 or 0xff (-1)"
	case hostBits(dt) == 1:
		return "are 0 or 1"
	case dt.IsInt() && !dt.IsUnsigned():
		return fmt.Sprintf("hold the %d-bit value sign-extended", dt.Bits())
	case dt.IsInt():
		return fmt.Sprintf("hold the %d-bit value, the high bits 0", dt.Bits())
	}
	return fmt.Sprintf("hold the %d-bit code, the high bits 0", dt.Bits())
}
