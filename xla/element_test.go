package xla

import (
	"strconv"
	"testing"
)

func TestDTypeOf(t *testing.T) {
	type celsius float32
	type flag bool
	type half BF16
	wantInt, wantUint := Int64, Uint64
	if strconv.IntSize == 32 {
		wantInt, wantUint = Int32, Uint32
	}
	for _, c := range []struct {
		got, want DType
		name      string
	}{
		{DTypeOf[bool](), Bool, "bool"},
		{DTypeOf[int8](), Int8, "int8"},
		{DTypeOf[int16](), Int16, "int16"},
		{DTypeOf[int32](), Int32, "int32"},
		{DTypeOf[int64](), Int64, "int64"},
		{DTypeOf[int](), wantInt, "int"},
		{DTypeOf[uint8](), Uint8, "uint8"},
		{DTypeOf[uint16](), Uint16, "uint16"},
		{DTypeOf[uint32](), Uint32, "uint32"},
		{DTypeOf[uint64](), Uint64, "uint64"},
		{DTypeOf[uint](), wantUint, "uint"},
		{DTypeOf[float32](), Float32, "float32"},
		{DTypeOf[float64](), Float64, "float64"},
		{DTypeOf[complex64](), Complex64, "complex64"},
		{DTypeOf[complex128](), Complex128, "complex128"},
		{DTypeOf[BF16](), BFloat16, "BF16"},
		{DTypeOf[F16](), Float16, "F16"},
		{DTypeOf[celsius](), Float32, "a named float32"},
		{DTypeOf[flag](), Bool, "a named bool"},
		// A type built on BF16 has its layout, not its meaning.
		{DTypeOf[half](), Uint16, "a named BF16"},
	} {
		if c.got != c.want {
			t.Errorf("DTypeOf[%s]() = %v, want %v", c.name, c.got, c.want)
		}
	}
}
