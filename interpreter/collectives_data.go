package interpreter

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Data movement and reductions for the collectives: tensors are moved as
// raw bytes of their typed storage (one type switch per tensor, plain
// copies per row), and reductions whose computation is a single
// add/multiply/maximum/minimum/and/or/xor run as typed loops; any other
// computation runs its region once per element.

// rtElemSize is the size in bytes of one element of storage class s.
func rtElemSize(s Storage) int {
	switch s {
	case StorageBool, StorageI8, StorageU8:
		return 1
	case StorageI16, StorageU16:
		return 2
	case StorageI32, StorageU32, StorageF32:
		return 4
	case StorageI64, StorageU64, StorageF64, StorageC64:
		return 8
	case StorageC128:
		return 16
	}
	return 0
}

// rtBytes views t's storage as bytes (no copy).
func rtBytes(t *Tensor) []byte {
	switch d := t.Data.(type) {
	case []bool:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), len(d))
	case []int8:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), len(d))
	case []int16:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 2*len(d))
	case []int32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 4*len(d))
	case []int64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 8*len(d))
	case []uint8:
		return d
	case []uint16:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 2*len(d))
	case []uint32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 4*len(d))
	case []uint64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 8*len(d))
	case []float32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 4*len(d))
	case []float64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 8*len(d))
	case []complex64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 8*len(d))
	case []complex128:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), 16*len(d))
	}
	return nil
}

// rtOuterInner splits dims around dim: the product of the dimensions
// before it and after it.
func rtOuterInner(dims []int64, dim int) (outer, inner int64) {
	outer, inner = 1, 1
	for i, d := range dims {
		switch {
		case i < dim:
			outer *= d
		case i > dim:
			inner *= d
		}
	}
	return outer, inner
}

// rtSliceDim returns t[..., start:start+n, ...] along dim.
func rtSliceDim(t *Tensor, dim int, start, n int64) *Tensor {
	dims := append([]int64(nil), t.Shape.Dims...)
	D := dims[dim]
	dims[dim] = n
	out := NewTensor(xla.MakeShape(t.Shape.DType, dims...))
	es := int64(rtElemSize(StorageOf(t.Shape.DType)))
	outer, inner := rtOuterInner(t.Shape.Dims, dim)
	src, dst := rtBytes(t), rtBytes(out)
	row := n * inner * es
	for o := int64(0); o < outer; o++ {
		s := (o*D + start) * inner * es
		copy(dst[o*row:(o+1)*row], src[s:s+row])
	}
	return out
}

// rtConcat concatenates parts along dim.
func rtConcat(parts []*Tensor, dim int) (*Tensor, error) {
	first := parts[0].Shape
	dims := append([]int64(nil), first.Dims...)
	var total int64
	for i, p := range parts {
		s := p.Shape
		if s.DType != first.DType || len(s.Dims) != len(first.Dims) {
			return nil, fmt.Errorf("part %d is %v, part 0 is %v", i, s, first)
		}
		for k := range s.Dims {
			if k != dim && s.Dims[k] != first.Dims[k] {
				return nil, fmt.Errorf("part %d is %v, part 0 is %v", i, s, first)
			}
		}
		total += s.Dims[dim]
	}
	dims[dim] = total
	out := NewTensor(xla.MakeShape(first.DType, dims...))
	es := int64(rtElemSize(StorageOf(first.DType)))
	outer, inner := rtOuterInner(first.Dims, dim)
	dst := rtBytes(out)
	off := int64(0)
	for o := int64(0); o < outer; o++ {
		for _, p := range parts {
			row := p.Shape.Dims[dim] * inner * es
			src := rtBytes(p)
			off += int64(copy(dst[off:off+row], src[o*row:(o+1)*row]))
		}
	}
	return out, nil
}

// rtScalarAt returns element i of t as a rank-0 tensor.
func rtScalarAt(t *Tensor, i int) *Tensor {
	s := NewTensor(xla.Shape{DType: t.Shape.DType})
	es := rtElemSize(StorageOf(t.Shape.DType))
	copy(rtBytes(s), rtBytes(t)[i*es:(i+1)*es])
	return s
}

// rtSetElem stores the single element of src as element i of dst.
func rtSetElem(dst *Tensor, i int, src *Tensor) error {
	if src.Shape.DType != dst.Shape.DType || src.Len() != 1 {
		return fmt.Errorf("the computation returned %v, want a %v scalar", src.Shape, dst.Shape.DType)
	}
	es := rtElemSize(StorageOf(dst.Shape.DType))
	copy(rtBytes(dst)[i*es:(i+1)*es], rtBytes(src))
	return nil
}

// ---- reductions ----

// reduceTensors reduces parts element-wise, in order, with the
// computation region body (reduce without init values).
func (x *Exec) reduceTensors(body *stablehlo.Region, parts []*Tensor) (*Tensor, error) {
	// The body's element type may be wider than the operands' (an i8
	// all_reduce summing in i32): the parts are converted to it first.
	if e, ok := regionElemType(body); ok && e != parts[0].Shape.DType {
		wide := make([]*Tensor, len(parts))
		for i, p := range parts {
			wide[i] = NewTensor(xla.MakeShape(e, p.Shape.Dims...))
			if err := Convert(wide[i], p); err != nil {
				return nil, err
			}
		}
		parts = wide
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	if name, ok := simpleBinaryBody(body, parts[0].Shape.DType); ok {
		if t, ok := reduceFast(name, parts); ok {
			return t, nil
		}
	}
	out := NewTensor(parts[0].Shape)
	n := out.Len()
	args := make([]Value, 2)
	for i := 0; i < n; i++ {
		acc := rtScalarAt(parts[0], i)
		for _, p := range parts[1:] {
			args[0], args[1] = acc, rtScalarAt(p, i)
			res, err := x.RunRegion(body, args)
			if err != nil {
				return nil, err
			}
			t, ok := firstTensor(res)
			if !ok {
				return nil, fmt.Errorf("the computation must return one tensor, returned %d values", len(res))
			}
			acc = t
		}
		if err := rtSetElem(out, i, acc); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func firstTensor(vs []Value) (*Tensor, bool) {
	if len(vs) != 1 {
		return nil, false
	}
	t, ok := vs[0].(*Tensor)
	return t, ok && t != nil
}

// simpleBinaryBody recognizes a computation that applies one commutative
// element-wise op to its two arguments of element type dt and returns it.
func simpleBinaryBody(r *stablehlo.Region, dt xla.DType) (string, bool) {
	if r == nil || len(r.Blocks) != 1 {
		return "", false
	}
	b := r.Blocks[0]
	if len(b.Args) != 2 || len(b.Ops) != 2 {
		return "", false
	}
	for _, a := range b.Args {
		t, ok := a.Type.(stablehlo.TensorType)
		if !ok || t.DType != dt || len(t.Dims) != 0 {
			return "", false
		}
	}
	op, ret := b.Ops[0], b.Ops[1]
	switch op.Name {
	case "stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
		"stablehlo.and", "stablehlo.or", "stablehlo.xor":
	default:
		return "", false
	}
	if len(op.Operands) != 2 || len(op.Results) != 1 || len(op.Regions) != 0 || len(op.Attrs) != 0 {
		return "", false
	}
	x, y := op.Operands[0], op.Operands[1]
	if !(x == b.Args[0] && y == b.Args[1]) && !(x == b.Args[1] && y == b.Args[0]) {
		return "", false
	}
	if !isTerminator(ret.Name) || len(ret.Operands) != 1 || ret.Operands[0] != op.Results[0] {
		return "", false
	}
	if t, ok := op.Results[0].Type.(stablehlo.TensorType); !ok || t.DType != dt {
		return "", false
	}
	return op.Name, true
}

// reduceFast reduces parts with the element-wise op name in typed loops;
// ok is false when name does not apply to the element type.
func reduceFast(name string, parts []*Tensor) (*Tensor, bool) {
	dt := parts[0].Shape.DType
	acc := parts[0].Clone()
	narrow := IsNarrowFloat(dt)
	for _, p := range parts[1:] {
		var ok bool
		switch d := acc.Data.(type) {
		case []bool:
			ok = combineBools(name, d, p.Data.([]bool))
		case []int8:
			ok = combineInts(name, d, p.Data.([]int8))
		case []int16:
			ok = combineInts(name, d, p.Data.([]int16))
		case []int32:
			ok = combineInts(name, d, p.Data.([]int32))
		case []int64:
			ok = combineInts(name, d, p.Data.([]int64))
		case []uint8:
			ok = combineInts(name, d, p.Data.([]uint8))
		case []uint16:
			ok = combineInts(name, d, p.Data.([]uint16))
		case []uint32:
			ok = combineInts(name, d, p.Data.([]uint32))
		case []uint64:
			ok = combineInts(name, d, p.Data.([]uint64))
		case []float32:
			ok = combineFloats(name, d, p.Data.([]float32))
			if ok && narrow {
				for i, v := range d {
					d[i] = RoundNarrow(dt, v)
				}
			}
		case []float64:
			ok = combineFloats(name, d, p.Data.([]float64))
		case []complex64:
			ok = combineArith(name, d, p.Data.([]complex64))
		case []complex128:
			ok = combineArith(name, d, p.Data.([]complex128))
		}
		if !ok {
			return nil, false
		}
	}
	shpRewrap(acc)
	return acc, true
}

func combineBools(name string, d, s []bool) bool {
	s = s[:len(d)]
	switch name {
	case "stablehlo.add", "stablehlo.or", "stablehlo.maximum":
		for i := range d {
			d[i] = d[i] || s[i]
		}
	case "stablehlo.multiply", "stablehlo.and", "stablehlo.minimum":
		for i := range d {
			d[i] = d[i] && s[i]
		}
	case "stablehlo.xor":
		for i := range d {
			d[i] = d[i] != s[i]
		}
	default:
		return false
	}
	return true
}

func combineInts[T ewInt](name string, d, s []T) bool {
	s = s[:len(d)]
	switch name {
	case "stablehlo.add", "stablehlo.multiply":
		return combineArith(name, d, s)
	case "stablehlo.maximum":
		for i := range d {
			d[i] = max(d[i], s[i])
		}
	case "stablehlo.minimum":
		for i := range d {
			d[i] = min(d[i], s[i])
		}
	case "stablehlo.and":
		for i := range d {
			d[i] &= s[i]
		}
	case "stablehlo.or":
		for i := range d {
			d[i] |= s[i]
		}
	case "stablehlo.xor":
		for i := range d {
			d[i] ^= s[i]
		}
	default:
		return false
	}
	return true
}

// combineFloats implements IEEE addition and multiplication, and the
// spec's maximum/minimum: NaN if either is NaN, -0 < +0.
func combineFloats[T ewFloat](name string, d, s []T) bool {
	s = s[:len(d)]
	switch name {
	case "stablehlo.add", "stablehlo.multiply":
		return combineArith(name, d, s)
	case "stablehlo.maximum":
		for i, b := range s {
			a := d[i]
			switch {
			case a != a:
			case b != b:
				d[i] = b
			case b > a, b == a && a == 0 && math.Signbit(float64(a)):
				d[i] = b
			}
		}
	case "stablehlo.minimum":
		for i, b := range s {
			a := d[i]
			switch {
			case a != a:
			case b != b:
				d[i] = b
			case b < a, b == a && a == 0 && math.Signbit(float64(b)):
				d[i] = b
			}
		}
	default:
		return false
	}
	return true
}

// combineArith implements addition and multiplication, the same for every
// numeric type.
func combineArith[T ewNumber](name string, d, s []T) bool {
	s = s[:len(d)]
	switch name {
	case "stablehlo.add":
		for i := range d {
			d[i] += s[i]
		}
	case "stablehlo.multiply":
		for i := range d {
			d[i] *= s[i]
		}
	default:
		return false
	}
	return true
}

// regionElemType is the element type of a reduction body's first
// argument (tensor<E>), when it has one.
func regionElemType(body *stablehlo.Region) (xla.DType, bool) {
	if body == nil || len(body.Blocks) == 0 || len(body.Blocks[0].Args) == 0 {
		return xla.Invalid, false
	}
	t, ok := body.Blocks[0].Args[0].Type.(stablehlo.TensorType)
	if !ok || !t.DType.Valid() {
		return xla.Invalid, false
	}
	return t.DType, true
}
