package interpreter

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Elementwise kernels share this file's helpers: operand and result checks,
// typed element constraints, sub-byte integer wrap-around and the split of
// large ops across cores.
//
// Every kernel switches on the storage type once per op and then runs a
// typed loop over flat slices; narrow floats are computed in float32 and
// rounded back (RoundNarrowSlice), sub-byte integers are computed in their
// 8-bit storage and wrapped back to their width.

// ewParallelMin is the element count from which elementwise kernels split
// their work across runtime.GOMAXPROCS goroutines.
const ewParallelMin = 1 << 16

// ewSplit runs fn over [0, n) in contiguous chunks, in parallel when n is
// large enough for it to pay off.
func ewSplit(n int, fn func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if n < ewParallelMin || p < 2 {
		fn(0, n)
		return
	}
	if most := n / (ewParallelMin / 4); p > most {
		p = most // at least 16K elements per chunk
	}
	chunk := (n + p - 1) / p
	chunk = (chunk + 63) &^ 63 // whole cache lines for every element size
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// ewBlock is the number of elements a kernel that makes a second pass over
// its results (rounding narrow floats, wrapping sub-byte integers) handles
// at a time, so that the second pass reads from cache.
const ewBlock = 4096

// ewBlocks calls fn over [lo, hi) in blocks of ewBlock elements.
func ewBlocks(lo, hi int, fn func(lo, hi int)) {
	for s := lo; s < hi; s += ewBlock {
		fn(s, min(s+ewBlock, hi))
	}
}

// Element type classes of the typed loops.
type (
	ewSigned interface {
		~int8 | ~int16 | ~int32 | ~int64
	}
	ewUnsigned interface {
		~uint8 | ~uint16 | ~uint32 | ~uint64
	}
	ewInt     interface{ ewSigned | ewUnsigned }
	ewFloat   interface{ ~float32 | ~float64 }
	ewComplex interface{ ~complex64 | ~complex128 }
	ewReal    interface{ ewInt | ewFloat }
	ewNumber  interface{ ewReal | ewComplex }
)

// ewTensor returns argument i as a tensor whose storage matches its type.
func ewTensor(args []Value, i int) (*Tensor, error) {
	if i >= len(args) {
		return nil, fmt.Errorf("missing operand %d", i)
	}
	t, ok := args[i].(*Tensor)
	if !ok || t == nil {
		return nil, fmt.Errorf("operand %d is %T, not a tensor", i, args[i])
	}
	if err := ewCheckStorage(t); err != nil {
		return nil, fmt.Errorf("operand %d: %w", i, err)
	}
	return t, nil
}

// ewCheckStorage reports whether t's Data is the slice its element type is
// stored in, with one element per array element.
func ewCheckStorage(t *Tensor) error {
	n := t.Len()
	var ok bool
	var got int
	switch d := t.Data.(type) {
	case []bool:
		ok, got = StorageOf(t.Shape.DType) == StorageBool, len(d)
	case []int8:
		ok, got = StorageOf(t.Shape.DType) == StorageI8, len(d)
	case []int16:
		ok, got = StorageOf(t.Shape.DType) == StorageI16, len(d)
	case []int32:
		ok, got = StorageOf(t.Shape.DType) == StorageI32, len(d)
	case []int64:
		ok, got = StorageOf(t.Shape.DType) == StorageI64, len(d)
	case []uint8:
		ok, got = StorageOf(t.Shape.DType) == StorageU8, len(d)
	case []uint16:
		ok, got = StorageOf(t.Shape.DType) == StorageU16, len(d)
	case []uint32:
		ok, got = StorageOf(t.Shape.DType) == StorageU32, len(d)
	case []uint64:
		ok, got = StorageOf(t.Shape.DType) == StorageU64, len(d)
	case []float32:
		ok, got = StorageOf(t.Shape.DType) == StorageF32, len(d)
	case []float64:
		ok, got = StorageOf(t.Shape.DType) == StorageF64, len(d)
	case []complex64:
		ok, got = StorageOf(t.Shape.DType) == StorageC64, len(d)
	case []complex128:
		ok, got = StorageOf(t.Shape.DType) == StorageC128, len(d)
	}
	if !ok {
		return fmt.Errorf("%v tensor holds %T", t.Shape.DType, t.Data)
	}
	if got != n {
		return fmt.Errorf("%v tensor of %d elements holds %d", t.Shape.DType, n, got)
	}
	return nil
}

// ewMaxBytes bounds the size of one result tensor: a type asking for more
// is an error rather than an allocation that cannot succeed.
const ewMaxBytes = 1 << 36

// ewResultType returns the type of result i after checking that it is a
// static tensor type of a supported element type and of a size the
// interpreter can hold.
func ewResultType(op *stablehlo.Op, i int) (stablehlo.TensorType, error) {
	rt, err := ResultTensorType(op, i)
	if err != nil {
		return rt, err
	}
	if StorageOf(rt.DType) == StorageInvalid {
		return rt, fmt.Errorf("result element type %v is not supported", rt.DType)
	}
	n := int64(1)
	for _, d := range rt.Dims {
		if d < 0 {
			return rt, fmt.Errorf("result %d has a dynamic shape %v", i, rt)
		}
		if d != 0 && n > ewMaxBytes/d {
			return rt, fmt.Errorf("result %d of type %v is too large", i, rt)
		}
		n *= d
	}
	if n*int64(max(rt.DType.HostBytes(), 1)) > ewMaxBytes {
		return rt, fmt.Errorf("result %d of type %v is too large", i, rt)
	}
	return rt, nil
}

// ewResult allocates result i (see ewResultType).
func ewResult(op *stablehlo.Op, i int) (*Tensor, error) {
	rt, err := ewResultType(op, i)
	if err != nil {
		return nil, err
	}
	return NewTensor(rt.Shape()), nil
}

// ewResultOf allocates result i after checking that its type has dims and
// element type dt (Invalid: any element type); what describes the
// expected type in the error.
func ewResultOf(op *stablehlo.Op, i int, dt xla.DType, dims []int64, what string) (*Tensor, error) {
	rt, err := ewResultType(op, i)
	if err != nil {
		return nil, err
	}
	if !ewSameDims(rt.Shape(), xla.MakeShape(rt.DType, dims...)) || (dt != xla.Invalid && rt.DType != dt) {
		return nil, fmt.Errorf("result type %v does not match %s", rt, what)
	}
	return NewTensor(rt.Shape()), nil
}

// ewSameDims reports whether a and b have the same dimensions.
func ewSameDims(a, b xla.Shape) bool {
	if len(a.Dims) != len(b.Dims) {
		return false
	}
	for i := range a.Dims {
		if a.Dims[i] != b.Dims[i] {
			return false
		}
	}
	return true
}

// ewDimsString prints a shape as a tensor type.
func ewType(s xla.Shape) string { return stablehlo.TensorOf(s).String() }

// ewIntWidth returns the width of integer type dt and whether values must
// be wrapped back after 8-bit storage arithmetic (i1, i2, i4, ui1, ...).
func ewIntWidth(dt xla.DType, storageBits int) (width uint, sub bool) {
	w := dt.Bits()
	return uint(w), w < storageBits
}

// ewWrap wraps d's values to width bits (two's complement when signed).
func ewWrap[T ewInt](d []T, width uint, signed bool) {
	if signed {
		shift := 64 - width
		for i, v := range d {
			d[i] = T(int64(uint64(v)<<shift) >> shift)
		}
		return
	}
	mask := T(uint64(1)<<width - 1)
	for i := range d {
		d[i] &= mask
	}
}

// ewStorageBits is the bit size of T.
func ewStorageBits[T ewInt]() int {
	var z T
	switch any(z).(type) {
	case int8, uint8:
		return 8
	case int16, uint16:
		return 16
	case int32, uint32:
		return 32
	}
	return 64
}

// ewRoundNarrow rounds d to narrow float type dt when d holds one.
func ewRoundNarrow[T ewFloat](dt xla.DType, d []T) {
	if !IsNarrowFloat(dt) {
		return
	}
	if f, ok := any(d).([]float32); ok {
		RoundNarrowSlice(dt, f)
	}
}

// ewFMax is IEEE-754 maximum: NaN if either operand is NaN, and +0 > -0.
func ewFMax[T ewFloat](a, b T) T {
	switch {
	case a != a:
		return a
	case b != b:
		return b
	case a > b:
		return a
	case b > a:
		return b
	case a == 0 && math.Signbit(float64(a)):
		return b
	}
	return a
}

// ewFMin is IEEE-754 minimum: NaN if either operand is NaN, and -0 < +0.
func ewFMin[T ewFloat](a, b T) T {
	switch {
	case a != a:
		return a
	case b != b:
		return b
	case a < b:
		return a
	case b < a:
		return b
	case a == 0 && math.Signbit(float64(b)):
		return b
	}
	return a
}

// ewCGreater reports whether a > b in the lexicographic (real, imag) order.
func ewCGreater[T ewComplex](a, b T) bool {
	ar, br := real(complex128(a)), real(complex128(b))
	if ar != br {
		return ar > br
	}
	return imag(complex128(a)) > imag(complex128(b))
}

// ewCLess reports whether a < b in the lexicographic (real, imag) order.
func ewCLess[T ewComplex](a, b T) bool {
	ar, br := real(complex128(a)), real(complex128(b))
	if ar != br {
		return ar < br
	}
	return imag(complex128(a)) < imag(complex128(b))
}

// ewDTypeError is the error of an op applied to an element type it is not
// defined for.
func ewDTypeError(op *stablehlo.Op, dt xla.DType) error {
	return fmt.Errorf("%s is not defined for element type %v", op.Name, dt)
}
