package interpreter

import (
	"cmp"
	"slices"
	"time"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Scalar fast paths.
//
// A loop's bookkeeping (a pallas grid step's index arithmetic, the
// predicates of its ifs, the reads of one element of a scalar-prefetch
// array) is mostly ops on single i32 and i1 elements. Through the general
// kernels each such op costs a few hundred nanoseconds of operand and
// result checks, a result slice and closures; the plan gives an op whose
// static types the fast path knows a scalarOp that computes the element
// directly (see planScalar). The static types are checked against the
// values at run time: when an operand is not what they promise, the fast
// path declines and the op's kernel runs and reports the problem.

// scalarOp computes an op's one-element result from its operands, or
// returns false when an operand does not have its static type.
type scalarOp func(in []Value) (*Tensor, bool)

// scalarType is an operand's or a result's static type.
type scalarType struct {
	shape xla.Shape
	n     int64
}

// scalarElems returns the storage of v, a tensor of type s stored as a
// []T, or false.
func scalarElems[T any](v Value, s scalarType) ([]T, bool) {
	t, ok := v.(*Tensor)
	if !ok || t == nil || t.Shape.DType != s.shape.DType || !slices.Equal(t.Shape.Dims, s.shape.Dims) {
		return nil, false
	}
	d, ok := t.Data.([]T)
	if !ok || int64(len(d)) != s.n {
		return nil, false
	}
	return d, true
}

// scalarElem returns the element of v, a one-element tensor of type s.
func scalarElem[T any](v Value, s scalarType) (T, bool) {
	d, ok := scalarElems[T](v, s)
	if !ok || len(d) != 1 {
		var zero T
		return zero, false
	}
	return d[0], true
}

// scalarResult returns a new one-element tensor of type s holding v.
func scalarResult[T any](s scalarType, v T) *Tensor {
	t := newOne[T](s.shape)
	t.Data.([]T)[0] = v
	return t
}

// planScalar returns op's fast path, or nil when it has none: the op is
// not one the fast path computes, one of its types is not a one-element
// i32 or i1 tensor (f32 too for the ops that only move an element), or
// its kernel was registered from outside the package.
func planScalar(op *stablehlo.Op) scalarOp {
	kernelsMu.RLock()
	external := externalKernels[op.Name]
	kernelsMu.RUnlock()
	if external || len(op.Results) != 1 || len(op.Regions) != 0 {
		return nil
	}
	res, ok := scalarTypeOf(op.Results[0].Type)
	if !ok {
		return nil
	}
	in := make([]scalarType, len(op.Operands))
	for i, v := range op.Operands {
		t, ok := v.Type.(stablehlo.TensorType)
		if !ok || t.Size() < 0 {
			return nil
		}
		in[i] = scalarType{shape: t.Shape(), n: t.Size()}
	}
	dt := res.shape.DType
	rank0 := func(ts ...scalarType) bool {
		for _, t := range ts {
			if len(t.shape.Dims) != 0 {
				return false
			}
		}
		return true
	}
	if !rank0(res) && op.Name != "stablehlo.reshape" && op.Name != "stablehlo.dynamic_slice" {
		return nil
	}
	if code, ok := ewBinaryOps[op.Name]; ok {
		if len(in) != 2 || !rank0(in...) || in[0].shape.DType != dt || in[1].shape.DType != dt {
			return nil
		}
		switch dt {
		case xla.Int32:
			if f := scalarIntBinary[int32](code); f != nil {
				return scalarBinary(f, in[0], in[1], res)
			}
		case xla.Bool:
			if f := scalarBoolBinary(code); f != nil {
				return scalarBinary(f, in[0], in[1], res)
			}
		}
		return nil
	}
	switch op.Name {
	case "stablehlo.not":
		if len(in) != 1 || !rank0(in...) || in[0].shape.DType != dt {
			return nil
		}
		switch dt {
		case xla.Int32:
			return scalarUnary(func(a int32) int32 { return ^a }, in[0], res)
		case xla.Bool:
			return scalarUnary(func(a bool) bool { return !a }, in[0], res)
		}
	case "stablehlo.compare":
		if len(in) != 2 || !rank0(in...) || dt != xla.Bool || in[0].shape.DType != in[1].shape.DType {
			return nil
		}
		dir, _, err := ewCompareAttrs(op, in[0].shape.DType)
		if err != nil {
			return nil
		}
		switch in[0].shape.DType {
		case xla.Int32:
			return scalarBinary(func(a, b int32) bool { return scalarCompare(dir, a, b) }, in[0], in[1], res)
		case xla.Bool:
			return scalarBinary(func(a, b bool) bool { return scalarCompare(dir, b2i(a), b2i(b)) }, in[0], in[1], res)
		}
	case "stablehlo.convert":
		if len(in) != 1 || !rank0(in...) {
			return nil
		}
		switch {
		case in[0].shape.DType == xla.Bool && dt == xla.Int32:
			return scalarUnary(func(a bool) int32 { return int32(b2i(a)) }, in[0], res)
		case in[0].shape.DType == xla.Int32 && dt == xla.Bool:
			return scalarUnary(func(a int32) bool { return a != 0 }, in[0], res)
		}
	case "stablehlo.select":
		if len(in) != 3 || !rank0(in...) || in[0].shape.DType != xla.Bool || in[1].shape.DType != dt || in[2].shape.DType != dt {
			return nil
		}
		switch dt {
		case xla.Int32:
			return scalarSelect[int32](in, res)
		case xla.Bool:
			return scalarSelect[bool](in, res)
		case xla.Float32:
			return scalarSelect[float32](in, res)
		}
	case "stablehlo.reshape":
		if len(in) != 1 || in[0].n != 1 || res.n != 1 || in[0].shape.DType != dt {
			return nil
		}
		switch dt {
		case xla.Int32:
			return scalarUnary(identity[int32], in[0], res)
		case xla.Bool:
			return scalarUnary(identity[bool], in[0], res)
		case xla.Float32:
			return scalarUnary(identity[float32], in[0], res)
		}
	case "stablehlo.dynamic_slice":
		return planScalarSlice(op, in, res)
	}
	return nil
}

// scalarTypeOf returns t as a scalarType when it is a tensor of one
// element.
func scalarTypeOf(t stablehlo.Type) (scalarType, bool) {
	tt, ok := t.(stablehlo.TensorType)
	if !ok || tt.Size() != 1 {
		return scalarType{}, false
	}
	switch tt.DType {
	case xla.Int32, xla.Bool, xla.Float32:
		return scalarType{shape: tt.Shape(), n: 1}, true
	}
	return scalarType{}, false
}

func scalarUnary[A, R any](f func(A) R, a, res scalarType) scalarOp {
	return func(in []Value) (*Tensor, bool) {
		x, ok := scalarElem[A](in[0], a)
		if !ok {
			return nil, false
		}
		return scalarResult(res, f(x)), true
	}
}

func scalarBinary[A, R any](f func(A, A) R, a, b, res scalarType) scalarOp {
	return func(in []Value) (*Tensor, bool) {
		x, ok := scalarElem[A](in[0], a)
		y, ok2 := scalarElem[A](in[1], b)
		if !ok || !ok2 {
			return nil, false
		}
		return scalarResult(res, f(x, y)), true
	}
}

func scalarSelect[T any](types []scalarType, res scalarType) scalarOp {
	return func(in []Value) (*Tensor, bool) {
		p, ok := scalarElem[bool](in[0], types[0])
		x, ok2 := scalarElem[T](in[1], types[1])
		y, ok3 := scalarElem[T](in[2], types[2])
		if !ok || !ok2 || !ok3 {
			return nil, false
		}
		if !p {
			x = y
		}
		return scalarResult(res, x), true
	}
}

// planScalarSlice is the fast path of a dynamic_slice of one element (a
// read of a scalar-prefetch array) with i32 start indices: each start is
// clamped into its dimension, as the kernel does.
func planScalarSlice(op *stablehlo.Op, in []scalarType, res scalarType) scalarOp {
	if len(in) < 1 || in[0].shape.DType != res.shape.DType || len(in)-1 != len(in[0].shape.Dims) ||
		len(res.shape.Dims) != len(in[0].shape.Dims) || in[0].n < 1 {
		return nil
	}
	for _, t := range in[1:] {
		if t.shape.DType != xla.Int32 || len(t.shape.Dims) != 0 {
			return nil
		}
	}
	sizes, err := shpIntsOfAttr(op.Attr("slice_sizes"))
	if err != nil || len(sizes) != len(in[0].shape.Dims) {
		return nil
	}
	for _, s := range sizes {
		if s != 1 {
			return nil
		}
	}
	src := in[0]
	strides := Strides(src.shape.Dims)
	read := func(in []Value) (int64, bool) {
		var off int64
		for i, t := range in[1:] {
			s, ok := scalarElem[int32](t, i32Index)
			if !ok {
				return 0, false
			}
			off += min(max(int64(s), 0), src.shape.Dims[i]-1) * strides[i]
		}
		return off, true
	}
	switch res.shape.DType {
	case xla.Int32:
		return scalarSliceOf[int32](src, res, read)
	case xla.Bool:
		return scalarSliceOf[bool](src, res, read)
	case xla.Float32:
		return scalarSliceOf[float32](src, res, read)
	}
	return nil
}

// i32Index is the type of a start index: a rank-0 i32.
var i32Index = scalarType{shape: xla.Shape{DType: xla.Int32}, n: 1}

func scalarSliceOf[T any](src, res scalarType, offset func([]Value) (int64, bool)) scalarOp {
	return func(in []Value) (*Tensor, bool) {
		d, ok := scalarElems[T](in[0], src)
		if !ok {
			return nil, false
		}
		off, ok := offset(in)
		if !ok {
			return nil, false
		}
		return scalarResult(res, d[off]), true
	}
}

// scalarIntBinary returns the element function of a binary integer op
// (the general kernel's semantics: ewIntDiv, ewIntRem), or nil for the
// ops the fast path leaves to it.
func scalarIntBinary[T ewInt](code ewBinOp) func(a, b T) T {
	switch code {
	case binAdd:
		return func(a, b T) T { return a + b }
	case binSub:
		return func(a, b T) T { return a - b }
	case binMul:
		return func(a, b T) T { return a * b }
	case binDiv:
		return ewIntDiv[T]
	case binRem:
		return ewIntRem[T]
	case binMax:
		return func(a, b T) T { return max(a, b) }
	case binMin:
		return func(a, b T) T { return min(a, b) }
	case binAnd:
		return func(a, b T) T { return a & b }
	case binOr:
		return func(a, b T) T { return a | b }
	case binXor:
		return func(a, b T) T { return a ^ b }
	}
	return nil
}

// scalarBoolBinary returns the element function of a binary i1 op, as
// ewBoolBinary computes it, or nil.
func scalarBoolBinary(code ewBinOp) func(a, b bool) bool {
	switch code {
	case binAdd, binOr, binMax:
		return func(a, b bool) bool { return a || b }
	case binMul, binAnd, binMin:
		return func(a, b bool) bool { return a && b }
	case binXor:
		return func(a, b bool) bool { return a != b }
	}
	return nil
}

// scalarCompare compares a and b in direction dir.
func scalarCompare[T cmp.Ordered](dir ewCmpDir, a, b T) bool {
	return ewCmpResult(dir, cmp.Compare(a, b))
}

func identity[T any](a T) T { return a }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runScalar runs pl's fast path on in, timing it when x profiles.
func (x *Exec) runScalar(pl *opPlan, in []Value) (*Tensor, bool) {
	if x.prof == nil {
		return pl.scalar(in)
	}
	t0 := time.Now()
	t, ok := pl.scalar(in)
	if ok {
		d := time.Since(t0)
		x.prof.add(pl.op.Name, d)
		x.nested += d
	}
	return t, ok
}
