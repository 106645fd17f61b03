package interpreter

import (
	"fmt"
	"math"
	"runtime"

	"github.com/halo-ml/halo/internal/workers"
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
	workers.Run((n+chunk-1)/chunk, func(i int) { fn(i*chunk, min(i*chunk+chunk, n)) })
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

// The ewRun helpers run a loop body over whole slices when they are small
// and split across cores otherwise. The closure for the split is made only
// on the large path, so a small op allocates nothing here when its body
// captures nothing.

// ewRun2 runs body(d, a, b).
func ewRun2[T, U, V any](d []T, a []U, b []V, body func(d []T, a []U, b []V)) {
	if len(d) < ewParallelMin {
		body(d, a, b)
		return
	}
	ewSplit(len(d), func(lo, hi int) { body(d[lo:hi], a[lo:hi], b[lo:hi]) })
}

// ewRun2x runs body(x, d, a, b): x carries a small parameter (a comparison
// direction) without a capturing closure.
func ewRun2x[T, U, V any](x int, d []T, a []U, b []V, body func(x int, d []T, a []U, b []V)) {
	if len(d) < ewParallelMin {
		body(x, d, a, b)
		return
	}
	ewSplit(len(d), func(lo, hi int) { body(x, d[lo:hi], a[lo:hi], b[lo:hi]) })
}

// ewRun1x runs body(x, d, a) (see ewRun2x).
func ewRun1x[T, U any](x int, d []T, a []U, body func(x int, d []T, a []U)) {
	if len(d) < ewParallelMin {
		body(x, d, a)
		return
	}
	ewSplit(len(d), func(lo, hi int) { body(x, d[lo:hi], a[lo:hi]) })
}

// ewRun1 runs body(d, a).
func ewRun1[T, U any](d []T, a []U, body func(d []T, a []U)) {
	if len(d) < ewParallelMin {
		body(d, a)
		return
	}
	ewSplit(len(d), func(lo, hi int) { body(d[lo:hi], a[lo:hi]) })
}

// ewPost is what a kernel does to its results after the loop body: round
// them to a narrow float type, or wrap them to a sub-byte integer width.
type ewPost struct {
	narrow xla.DType // a narrow float type, or Invalid
	wrap   bool
	width  uint
	signed bool
}

func (p ewPost) none() bool { return p.narrow == xla.Invalid && !p.wrap }

// ewApply applies p to d.
func ewApply[T any](p ewPost, d []T) {
	switch d := any(d).(type) {
	case []float32:
		if p.narrow != xla.Invalid {
			RoundNarrowSlice(p.narrow, d)
		}
	case []int8:
		if p.wrap {
			ewWrap(d, p.width, p.signed)
		}
	case []uint8:
		if p.wrap {
			ewWrap(d, p.width, p.signed)
		}
	}
}

// ewRunPost2 runs body(d, a, b) and then p over d, block by block.
func ewRunPost2[T any](p ewPost, d, a, b []T, body func(d, a, b []T)) {
	if p.none() {
		ewRun2(d, a, b, body)
		return
	}
	if len(d) < ewParallelMin {
		ewBlocks(0, len(d), func(lo, hi int) {
			body(d[lo:hi], a[lo:hi], b[lo:hi])
			ewApply(p, d[lo:hi])
		})
		return
	}
	ewSplit(len(d), func(lo, hi int) {
		ewBlocks(lo, hi, func(lo, hi int) {
			body(d[lo:hi], a[lo:hi], b[lo:hi])
			ewApply(p, d[lo:hi])
		})
	})
}

// ewRunPost1 runs body(d, a) and then p over d, block by block.
func ewRunPost1[T any](p ewPost, d, a []T, body func(d, a []T)) {
	if p.none() {
		ewRun1(d, a, body)
		return
	}
	if len(d) < ewParallelMin {
		ewBlocks(0, len(d), func(lo, hi int) {
			body(d[lo:hi], a[lo:hi])
			ewApply(p, d[lo:hi])
		})
		return
	}
	ewSplit(len(d), func(lo, hi int) {
		ewBlocks(lo, hi, func(lo, hi int) {
			body(d[lo:hi], a[lo:hi])
			ewApply(p, d[lo:hi])
		})
	})
}

// ewIntPost is the post-processing of integer type dt stored in T.
func ewIntPost[T ewInt](dt xla.DType) ewPost {
	width, sub := ewIntWidth(dt, ewStorageBits[T]())
	return ewPost{wrap: sub, width: width, signed: !dt.IsUnsigned()}
}

// ewFloatPost is the post-processing of float type dt.
func ewFloatPost(dt xla.DType) ewPost {
	if IsNarrowFloat(dt) {
		return ewPost{narrow: dt}
	}
	return ewPost{}
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
		if st := StorageOf(t.Shape.DType); st != StorageInvalid {
			return fmt.Errorf("%v tensor holds %T, want %s", t.Shape.DType, t.Data, storageSlices[st])
		}
		return fmt.Errorf("%v tensor holds %T", t.Shape.DType, t.Data)
	}
	if got != n {
		return fmt.Errorf("%v tensor of %s holds %s", t.Shape.DType, plural(n, "element"), plural(got, "element"))
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
			return rt, fmt.Errorf("result %d: %w", i, &AllocError{Shape: rt.Shape(), Bytes: -1})
		}
		n *= d
	}
	if n*int64(max(rt.DType.HostBytes(), 1)) > ewMaxBytes {
		return rt, fmt.Errorf("result %d: %w", i, &AllocError{Shape: rt.Shape(), Bytes: -1})
	}
	return rt, nil
}

// ewResult allocates result i (see ewResultType).
func ewResult(op *stablehlo.Op, i int) (*Tensor, error) {
	rt, err := ewResultType(op, i)
	if err != nil {
		return nil, err
	}
	return NewTensor(xla.Shape{DType: rt.DType, Dims: rt.Dims}), nil
}

// ewResultOf allocates result i after checking that its type has the
// dimensions of ref and, unless dt is Invalid, element type dt. The error
// says "does not match <what><ref's type>".
func ewResultOf(op *stablehlo.Op, i int, dt xla.DType, ref xla.Shape, what string) (*Tensor, error) {
	s, err := ewResultShape(op, i, dt, ref, what)
	if err != nil {
		return nil, err
	}
	return NewTensor(s), nil
}

// ewResultShape checks result i's type as ewResultOf does and returns it.
func ewResultShape(op *stablehlo.Op, i int, dt xla.DType, ref xla.Shape, what string) (xla.Shape, error) {
	rt, err := ewResultType(op, i)
	if err != nil {
		return xla.Shape{}, err
	}
	if !ewSameDims(xla.Shape{DType: rt.DType, Dims: rt.Dims}, ref) || (dt != xla.Invalid && rt.DType != dt) {
		return xla.Shape{}, fmt.Errorf("result type %v does not match %s%s", rt, what, ewType(ref))
	}
	return xla.Shape{DType: rt.DType, Dims: rt.Dims}, nil
}

// ewResultInPlace is ewResultOf for in-place kernels, which write every
// element of the result: when a dying operand has the result's exact
// type, the result is written into it, else into a spare buffer of the
// run when there is one.
func ewResultInPlace(x *Exec, op *stablehlo.Op, dt xla.DType, ref xla.Shape, what string) (*Tensor, error) {
	s, err := ewResultShape(op, 0, dt, ref, what)
	if err != nil {
		return nil, err
	}
	if x != nil && len(x.dead) > 0 {
		if t := x.TakeDead(s); t != nil {
			return t, nil
		}
	}
	return x.newTensor(s), nil
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
