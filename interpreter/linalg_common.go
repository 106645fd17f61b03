package interpreter

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/halo-ml/halo/internal/gemm"
	"github.com/halo-ml/halo/internal/workers"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Helpers shared by the linear-algebra kernels (dot_general, dot, einsum,
// convolution, fft, cholesky, triangular_solve). They convert operands once
// per op into a compute type (float32, float64, int64, complex64,
// complex128), run a kernel written once with type parameters over that
// type, and store the result in the element type of the op's result:
//
//	result element type          compute type
//	f32, f16, bf16, f8/f6/f4     float32 (narrow results rounded at the end);
//	                             float64 when an operand or the result is f64
//	f64                          float64
//	complex<f32>                 complex64 (complex128 when an operand is)
//	complex<f64>                 complex128
//	integers, i1                 int64, wrapped to the result width at the end
//
// Integer sums of products computed in int64 and wrapped at the end equal
// the products and sums wrapped at every step (two's complement arithmetic
// is exact modulo 2^64).

// laNum is the set of compute types.
type laNum interface {
	~float32 | ~float64 | ~int64 | ~complex64 | ~complex128
}

// laReal is the set of real storage element types.
type laReal interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// laCompute names a compute type.
type laCompute uint8

const (
	laInvalid laCompute = iota
	laF32
	laF64
	laI64
	laC64
	laC128
)

// laComputeFor picks the compute type for a result of element type res
// computed from operands of element types in.
func laComputeFor(res xla.DType, in ...xla.DType) (laCompute, error) {
	anyIs := func(f func(xla.DType) bool) bool {
		for _, d := range in {
			if f(d) {
				return true
			}
		}
		return false
	}
	switch {
	case res.IsComplex():
		if res == xla.Complex128 || anyIs(func(d xla.DType) bool { return d == xla.Complex128 }) {
			return laC128, nil
		}
		return laC64, nil
	case res.IsFloat():
		if anyIs(xla.DType.IsComplex) {
			return laInvalid, fmt.Errorf("complex operands with a real result type %v", res)
		}
		if res == xla.Float64 || anyIs(func(d xla.DType) bool { return d == xla.Float64 }) {
			return laF64, nil
		}
		return laF32, nil
	case res.IsInt() || res.IsBool():
		if anyIs(xla.DType.IsFloat) || anyIs(xla.DType.IsComplex) {
			return laInvalid, fmt.Errorf("floating-point operands with an integer result type %v", res)
		}
		return laI64, nil
	}
	return laInvalid, fmt.Errorf("element type %v is not supported", res)
}

// laSlice returns t's elements in compute type T. shared reports that the
// returned slice is t's own storage (it must not be modified).
func laSlice[T laNum](t *Tensor) (out []T, shared bool, err error) {
	if d, ok := t.Data.([]T); ok {
		return d, true, nil
	}
	out = make([]T, t.Len())
	switch o := any(out).(type) {
	case []float32:
		err = laFillReal(o, t)
	case []float64:
		err = laFillReal(o, t)
	case []int64:
		err = laFillReal(o, t)
	case []complex64:
		err = laFillComplex(o, t)
	case []complex128:
		err = laFillComplex(o, t)
	}
	return out, false, err
}

func laConvInto[D, S laReal](dst []D, src []S) {
	for i, v := range src {
		dst[i] = D(v)
	}
}

func laFillReal[D float32 | float64 | int64](dst []D, t *Tensor) error {
	var z D
	_, toInt := any(z).(int64)
	switch s := t.Data.(type) {
	case []bool:
		for i, v := range s {
			if v {
				dst[i] = 1
			}
		}
	case []int8:
		laConvInto(dst, s)
	case []int16:
		laConvInto(dst, s)
	case []int32:
		laConvInto(dst, s)
	case []int64:
		laConvInto(dst, s)
	case []uint8:
		laConvInto(dst, s)
	case []uint16:
		laConvInto(dst, s)
	case []uint32:
		laConvInto(dst, s)
	case []uint64:
		laConvInto(dst, s)
	case []float32:
		if toInt {
			return fmt.Errorf("cannot compute %v in integers", t.Shape.DType)
		}
		laConvInto(dst, s)
	case []float64:
		if toInt {
			return fmt.Errorf("cannot compute %v in integers", t.Shape.DType)
		}
		laConvInto(dst, s)
	default:
		return fmt.Errorf("cannot compute %v as a real number", t.Shape.DType)
	}
	return nil
}

func laFillComplex[D complex64 | complex128](dst []D, t *Tensor) error {
	switch s := t.Data.(type) {
	case []complex64:
		for i, v := range s {
			dst[i] = D(v)
		}
	case []complex128:
		for i, v := range s {
			dst[i] = D(v)
		}
	default:
		re := make([]float64, len(dst))
		if err := laFillReal(re, t); err != nil {
			return err
		}
		for i, v := range re {
			dst[i] = D(complex(v, 0))
		}
	}
	return nil
}

// laStore returns a tensor of shape holding data (in compute type T)
// converted to shape's element type: narrow floats rounded to nearest even,
// integers wrapped to their width. data may be reused as the tensor's
// storage.
func laStore[T laNum](shape xla.Shape, data []T) (*Tensor, error) {
	if int64(len(data)) != shape.Size() {
		return nil, fmt.Errorf("internal: %d values for %v", len(data), shape)
	}
	dt := shape.DType
	st := StorageOf(dt)
	switch d := any(data).(type) {
	case []float32:
		if st == StorageF32 {
			RoundNarrowSlice(dt, d)
			return &Tensor{Shape: shape.Clone(), Data: d}, nil
		}
		if st == StorageF64 {
			out := make([]float64, len(d))
			laConvInto(out, d)
			return &Tensor{Shape: shape.Clone(), Data: out}, nil
		}
	case []float64:
		switch st {
		case StorageF64:
			return &Tensor{Shape: shape.Clone(), Data: d}, nil
		case StorageF32:
			out := make([]float32, len(d))
			if dt == xla.Float32 {
				laConvInto(out, d)
			} else {
				for i, v := range d {
					out[i] = RoundNarrow64(dt, v)
				}
			}
			return &Tensor{Shape: shape.Clone(), Data: out}, nil
		}
	case []int64:
		return laStoreInt(shape, d)
	case []complex64:
		switch st {
		case StorageC64:
			return &Tensor{Shape: shape.Clone(), Data: d}, nil
		case StorageC128:
			out := make([]complex128, len(d))
			for i, v := range d {
				out[i] = complex128(v)
			}
			return &Tensor{Shape: shape.Clone(), Data: out}, nil
		}
	case []complex128:
		switch st {
		case StorageC128:
			return &Tensor{Shape: shape.Clone(), Data: d}, nil
		case StorageC64:
			out := make([]complex64, len(d))
			for i, v := range d {
				out[i] = complex64(v)
			}
			return &Tensor{Shape: shape.Clone(), Data: out}, nil
		}
	}
	return nil, fmt.Errorf("cannot store %T values as %v", data, dt)
}

func laStoreInt(shape xla.Shape, d []int64) (*Tensor, error) {
	dt := shape.DType
	t := &Tensor{Shape: shape.Clone()}
	switch StorageOf(dt) {
	case StorageBool:
		out := make([]bool, len(d))
		for i, v := range d {
			out[i] = v != 0
		}
		t.Data = out
	case StorageI8:
		out := make([]int8, len(d))
		for i, v := range d {
			out[i] = int8(WrapInt(dt, v))
		}
		t.Data = out
	case StorageI16:
		out := make([]int16, len(d))
		laConvInto(out, d)
		t.Data = out
	case StorageI32:
		out := make([]int32, len(d))
		laConvInto(out, d)
		t.Data = out
	case StorageI64:
		t.Data = d
	case StorageU8:
		out := make([]uint8, len(d))
		for i, v := range d {
			out[i] = uint8(WrapUint(dt, uint64(v)))
		}
		t.Data = out
	case StorageU16:
		out := make([]uint16, len(d))
		laConvInto(out, d)
		t.Data = out
	case StorageU32:
		out := make([]uint32, len(d))
		laConvInto(out, d)
		t.Data = out
	case StorageU64:
		out := make([]uint64, len(d))
		laConvInto(out, d)
		t.Data = out
	default:
		return nil, fmt.Errorf("cannot store integer values as %v", dt)
	}
	return t, nil
}

// laTensorArgs checks that args are n tensors.
func laTensorArgs(args []Value, n int) ([]*Tensor, error) {
	if len(args) != n {
		return nil, fmt.Errorf("want %d operands, got %d", n, len(args))
	}
	out := make([]*Tensor, n)
	for i, a := range args {
		t, ok := a.(*Tensor)
		if !ok || t == nil {
			return nil, fmt.Errorf("operand %d is %T, not a tensor", i, a)
		}
		out[i] = t
	}
	return out, nil
}

// laRecover turns a panic inside a kernel (a BLAS argument check, an index
// the validation missed) into an error.
func laRecover(err *error) {
	if r := recover(); r != nil {
		if e := allocErrorOf(r); e != nil {
			*err = e
			return
		}
		*err = fmt.Errorf("internal error: %v", r)
	}
}

// laI64Array reads an optional DenseArrayAttr of integers; def is returned
// when the attribute is absent.
func laI64Array(op *stablehlo.Op, name string, def []int64) ([]int64, error) {
	a := op.Attr(name)
	if a == nil {
		return def, nil
	}
	switch a := a.(type) {
	case stablehlo.DenseArrayAttr:
		return a.Values, nil
	case stablehlo.DenseElementsAttr:
		v, err := denseInts(a)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("attribute %s is %T, want an integer array", name, a)
}

// laBool reads an optional BoolAttr.
func laBool(op *stablehlo.Op, name string, def bool) (bool, error) {
	switch a := op.Attr(name).(type) {
	case nil:
		return def, nil
	case stablehlo.BoolAttr:
		return bool(a), nil
	case stablehlo.IntAttr:
		return a.Value != 0, nil
	default:
		return false, fmt.Errorf("attribute %s is %T, want a boolean", name, a)
	}
}

// laInt reads an optional IntAttr.
func laInt(op *stablehlo.Op, name string, def int64) (int64, error) {
	switch a := op.Attr(name).(type) {
	case nil:
		return def, nil
	case stablehlo.IntAttr:
		return a.Value, nil
	default:
		return 0, fmt.Errorf("attribute %s is %T, want an integer", name, a)
	}
}

// laEnum reads an EnumAttr's value.
func laEnum(op *stablehlo.Op, name string) (string, error) {
	switch a := op.Attr(name).(type) {
	case stablehlo.EnumAttr:
		return a.Value, nil
	case nil:
		return "", fmt.Errorf("missing attribute %s", name)
	default:
		return "", fmt.Errorf("attribute %s is %T, want an enum", name, a)
	}
}

// laTensorInts reads an integer tensor operand as int64s.
func laTensorInts(t *Tensor) ([]int64, error) {
	if !t.Shape.DType.IsInt() {
		return nil, fmt.Errorf("operand of %v, want integers", t.Shape.DType)
	}
	out, _, err := laSlice[int64](t)
	return out, err
}

// laCheckAxes checks that axes are distinct and in [0, rank).
func laCheckAxes(what string, axes []int64, rank int, seen []bool) error {
	for _, a := range axes {
		if a < 0 || a >= int64(rank) {
			return fmt.Errorf("%s: dimension %d out of range for rank %d", what, a, rank)
		}
		if seen[a] {
			return fmt.Errorf("%s: dimension %d used twice", what, a)
		}
		seen[a] = true
	}
	return nil
}

// laPermIsNoop reports whether transposing dims by perm leaves the elements
// in place (only size-1 dimensions move).
func laPermIsNoop(dims []int64, perm []int) bool {
	last := -1
	for _, p := range perm {
		if dims[p] == 1 {
			continue
		}
		if p < last {
			return false
		}
		last = p
	}
	return true
}

// laPermute returns src (row-major with dims) transposed so that axis i of
// the result is axis perm[i] of src. When nothing moves, src is returned.
func laPermute[T any](src []T, dims []int64, perm []int) []T {
	if laPermIsNoop(dims, perm) {
		return src
	}
	dst := make([]T, len(src))
	laTranspose(dst, src, dims, perm)
	return dst
}

// laTranspose writes src (row-major with dims) transposed by perm to dst.
func laTranspose[T any](dst, src []T, dims []int64, perm []int) {
	r := len(perm)
	if len(dst) == 0 {
		return
	}
	if r == 0 {
		dst[0] = src[0]
		return
	}
	srcStrides := Strides(dims)
	outDims := make([]int64, r)
	st := make([]int64, r)
	for i, p := range perm {
		outDims[i] = dims[p]
		st[i] = srcStrides[p]
	}
	inner := int(outDims[r-1])
	innerStride := st[r-1]
	idx := make([]int64, r)
	var off int64
	for o := 0; o < len(dst); o += inner {
		s := off
		run := dst[o : o+inner]
		for j := range run {
			run[j] = src[s]
			s += innerStride
		}
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			off += st[d]
			if idx[d] < outDims[d] {
				break
			}
			off -= st[d] * outDims[d]
			idx[d] = 0
		}
	}
}

// laParallelFor runs fn over [0, n) split into contiguous chunks, on
// several goroutines when work (an estimate of the multiply-adds in all of
// [0, n)) is large enough to pay for them.
func laParallelFor(n int, work int64, fn func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n)
	if parts <= 1 || work < 1<<17 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	workers.Split(n, parts, fn)
}

// laGemm computes C = op(A) × op(B) for an m×k op(A) and a k×n op(B), with
// A stored m×k (or k×m when transA), B stored k×n (or n×k when transB), and
// C m×n with row stride ldc, overwriting C, or adding to it when add is
// set. float32 and float64 go through internal/gemm (every multiply-add
// computed, on all cores), the other compute types through laGemmLoops.
func laGemm[T laNum](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, add bool, stop *atomic.Bool) {
	o := gemm.Options{Workers: runtime.GOMAXPROCS(0), Add: add, Stop: stop}
	switch a := any(a).(type) {
	case []float32:
		gemm.MulWith(transA, transB, m, n, k, a, lda, any(b).([]float32), ldb, any(c).([]float32), ldc, o)
	case []float64:
		gemm.MulWith(transA, transB, m, n, k, a, lda, any(b).([]float64), ldb, any(c).([]float64), ldc, o)
	default:
		laGemmLoops(transA, transB, m, n, k, any(a).([]T), lda, b, ldb, c, ldc, add, stop)
	}
}

// laGemmLoops is laGemm with plain loops (exact IEEE multiply-adds, every
// compute type), split across cores by rows of C; it ends early, C
// unfinished, once stop is set.
func laGemmLoops[T laNum](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, add bool, stop *atomic.Bool) {
	if m == 0 || n == 0 {
		return // no result (the rows of c past the first may not exist)
	}
	if transB {
		// Make B row-major k×n so the inner loop runs over contiguous rows.
		bt := make([]T, k*n)
		for j := 0; j < n; j++ {
			for p := 0; p < k; p++ {
				bt[p*n+j] = b[j*ldb+p]
			}
		}
		b, ldb = bt, n
	}
	laParallelForStop(m, int64(m)*int64(n)*int64(k), stop, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			crow := c[i*ldc : i*ldc+n]
			if !add {
				clear(crow)
			}
			for p := 0; p < k; p++ {
				if p%256 == 255 && int64(n)*int64(k) > stopPiece && stopped(stop) {
					return // a long row
				}
				var av T
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				brow := b[p*ldb : p*ldb+n]
				for j, bv := range brow {
					crow[j] += av * bv
				}
			}
		}
	})
}

// laMaxElements bounds the elements of one result: with compute buffers of
// up to 16 bytes per element, 64 GiB. A result type asking for more is an
// error rather than an allocation that cannot succeed.
const laMaxElements = 1 << 32

// laResultType returns result i's type after checking that it is a static
// tensor type of a supported element type and of a size the interpreter
// can hold.
func laResultType(op *stablehlo.Op, i int) (stablehlo.TensorType, error) {
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
		if d != 0 && n > laMaxElements/d {
			return rt, fmt.Errorf("result %d: %w", i, &AllocError{Shape: rt.Shape(), Bytes: -1})
		}
		n *= d
	}
	return rt, nil
}
