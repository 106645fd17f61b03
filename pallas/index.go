package pallas

import (
	"fmt"
	"math"

	"github.com/halo-ml/halo/xla"
)

// SliceIndex is a static slice [Start, Stop) of one ref dim (see Slice).
type SliceIndex struct {
	Start, Stop int64 // the elements [Start, Stop)
}

// DSIndex is a dynamic slice of Size elements from Start (a Go int or an
// integer scalar Value) of one ref dim (see DS).
type DSIndex struct {
	Start any   // a Go integer or an integer scalar *Value
	Size  int64 // how many elements
}

type allIndex struct{}

// All indexes a whole dim (Python's ":").
var All = allIndex{}

// Slice is the static slice [start, stop) of a dim.
func Slice(start, stop int64) SliceIndex { return SliceIndex{start, stop} }

// DS is the dynamic slice of size elements from start (pl.ds): start is a
// Go int or an integer scalar Value.
func DS(start any, size int64) DSIndex { return DSIndex{start, size} }

// Load reads ref at idx (one entry per leading ref dim; missing trailing
// dims are All). An entry is a Go int or integer scalar Value (picks one
// element, drops the dim), Slice, DS, All, or an integer array Value
// (advanced indexing, as in NumPy: all arrays broadcast together and their
// dims replace the indexed dims; with arrays present, integer indices are
// advanced indices too, and the broadcast dims sit where the advanced
// indices are when those are adjacent, else in front). With mask (a bool Value broadcastable to the
// result) elements where mask is false are other (a Value or Go scalar;
// nil means zero, except for complex refs, which need one) and are not read, so they may lie outside the ref,
// whether the indices are static or dynamic, and a masked Slice or DS
// may be longer than its dim (the bounds checks report
// unmasked elements outside it; without a mask a static index outside
// the ref is a trace error).
func Load(ref *Ref, idx []any, mask *Value, other any) *Value {
	return kernelOfRef("load", ref).load(ref, idx, mask, other)
}

// Store writes value (a Value or Go scalar broadcastable to the indexed
// shape, of the ref's dtype) into ref at idx (as Load); with mask only
// the elements where mask is true are written. Index arrays that repeat
// an element write it from several places at once: interpret mode keeps
// the last, a GPU any of them, so keep one store's indices distinct.
func Store(ref *Ref, idx []any, value any, mask *Value) {
	kernelOfRef("store", ref).store(ref, idx, value, mask)
}

// AtomicAdd adds value to ref at idx (as Store: value broadcasts to the
// indexed shape, mask picks the elements) as one read-modify-write per
// element, and returns the elements' values before it (zero where the mask
// is false). Programs of a GPU grid may update the same elements at once
// without losing any update: the way to accumulate into shared output
// elements (a split-K product, a histogram, a scatter-add at repeated
// indices). i32, i64 and their unsigned kinds, f16, bf16, f32 and f64.
// See docs/pallas.md ("Atomic updates") for the order of updates and
// what the race check allows.
func AtomicAdd(ref *Ref, idx []any, value any, mask *Value) *Value {
	return kernelOfRef("atomic_add", ref).atomic("add", ref, idx, nil, value, mask)
}

// AtomicMax replaces ref's elements at idx by their maximum with value, as
// AtomicAdd (32- and 64-bit integers, unsigned refs compared unsigned; f32
// and f64, -0 below +0, with NaN unspecified on a GPU).
func AtomicMax(ref *Ref, idx []any, value any, mask *Value) *Value {
	return kernelOfRef("atomic_max", ref).atomic("max", ref, idx, nil, value, mask)
}

// AtomicMin replaces ref's elements at idx by their minimum with value, as
// AtomicMax.
func AtomicMin(ref *Ref, idx []any, value any, mask *Value) *Value {
	return kernelOfRef("atomic_min", ref).atomic("min", ref, idx, nil, value, mask)
}

// AtomicAnd is the bitwise and of ref's elements at idx with value, as
// AtomicAdd (32- and 64-bit integers).
func AtomicAnd(ref *Ref, idx []any, value any, mask *Value) *Value {
	return kernelOfRef("atomic_and", ref).atomic("and", ref, idx, nil, value, mask)
}

// AtomicOr is the bitwise or of ref's elements at idx with value, as
// AtomicAnd.
func AtomicOr(ref *Ref, idx []any, value any, mask *Value) *Value {
	return kernelOfRef("atomic_or", ref).atomic("or", ref, idx, nil, value, mask)
}

// AtomicXor is the bitwise exclusive or of ref's elements at idx with
// value, as AtomicAnd.
func AtomicXor(ref *Ref, idx []any, value any, mask *Value) *Value {
	return kernelOfRef("atomic_xor", ref).atomic("xor", ref, idx, nil, value, mask)
}

// AtomicXchg stores value into ref at idx and returns what was there, as
// AtomicAdd (32- and 64-bit integers, f32 and f64). Unlike the others its
// result in memory depends on the order of the updates, so on a GPU two
// programs may not exchange the same element (the race check refuses it).
func AtomicXchg(ref *Ref, idx []any, value any, mask *Value) *Value {
	return kernelOfRef("atomic_xchg", ref).atomic("xchg", ref, idx, nil, value, mask)
}

// AtomicCas is a compare-and-swap of ref's elements at idx, as
// pl.atomic_cas: each element the mask keeps that holds cmp becomes value
// (floats compare their bits: -0 is not +0, a NaN matches its own bits);
// it returns the elements' values before it (zero where the mask is
// false), so a lane won where its old value equals cmp. 32- and 64-bit
// integers, f32 and f64. The winner among programs that swap one element
// depends on their order: the race check takes that only under
// CompilerParams.OrderDependentAtomics (a lock-free claim of a slot, a
// first-come index); lanes of one update that reach one element swap in
// row-major order in interpret mode and on the evaluator, in some order on
// a GPU.
func AtomicCas(ref *Ref, idx []any, cmp, value any, mask *Value) *Value {
	return kernelOfRef("atomic_cas", ref).atomic("cas", ref, idx, cmp, value, mask)
}

// kernelOfRef is the trace of ref (see kernelOf).
func kernelOfRef(op string, ref *Ref) *Kernel {
	if ref == nil {
		panic(misuse{op, "ref is nil"})
	}
	if ref.k == nil {
		panic(misuse{op, "ref is not a kernel argument"})
	}
	ref.k.live(op)
	return ref.k
}

// Load reads ref[idx...] (see the package function Load); no idx reads
// the whole ref.
func (r *Ref) Load(idx ...any) *Value { return Load(r, idx, nil, nil) }

// Store writes ref[idx...] = value (see the package function Store).
func (r *Ref) Store(value any, idx ...any) { Store(r, idx, value, nil) }

// indexer resolves idx against the ref's shape; operands are the dynamic
// index Values (i32) in Indexer order. A masked access may start outside
// the ref: its static indices that do are made dynamic, so that they are
// checked element by element, after the mask, as dynamic ones are.
func (k *Kernel) indexer(op string, ref *Ref, idx []any, masked bool) (Indexer, []*Value, bool) {
	var ix Indexer
	if !k.check(op, ref.v) {
		return ix, nil, false
	}
	shape := ref.v.Type.Shape
	nb := len(ref.batch) // leading batch dims, indexed here (see Ref.batch)
	if len(idx) > len(shape)-nb {
		k.failf(op, "%d indices for %s of rank %d", len(idx), ref.v.Ref, len(shape)-nb)
		return ix, nil, false
	}
	if nb > 0 {
		idx = append(k.batchIndices(ref), idx...)
	}
	var operands []*Value
	var arrays []int // dims indexed by arrays
	for d, dim := range shape {
		var e any = All
		if d < len(idx) {
			e = idx[d]
		}
		di := DimIndex{Kind: DimSlice, Size: dim, Operand: -1}
		switch x := e.(type) {
		case allIndex:
		case SliceIndex:
			if x.Start > x.Stop || x.Stop-x.Start < 0 || (x.Start < 0 || x.Stop > dim) && !masked {
				k.failf(op, "slice %d:%d of dim %d (size %d) of %s: %s", x.Start, x.Stop, d-nb, dim, ref.v.Ref, sliceProblem(x.Start, x.Stop))
				return ix, nil, false
			}
			di.Start, di.Size = x.Start, x.Stop-x.Start
			if x.Start < 0 || x.Stop > dim {
				di.Start, di.Operand = 0, len(operands)
				operands = append(operands, k.outsideIndex(x.Start))
			}
		case DSIndex:
			if x.Size < 0 || x.Size > dim && !masked {
				k.failf(op, "dynamic slice of size %d of dim %d (size %d) of %s: %s", x.Size, d-nb, dim, ref.v.Ref, sizeProblem(x.Size))
				return ix, nil, false
			}
			di.Size = x.Size
			if s, ok, err := staticInt(x.Start); err != nil {
				k.failf(op, "slice start of dim %d: %v", d-nb, err)
				return ix, nil, false
			} else if ok {
				if s < 0 || s > dim-x.Size { // not s+x.Size > dim: it may overflow
					if s > math.MaxInt64-x.Size {
						k.failf(op, "slice of size %d starting at %d of dim %d (size %d) of %s", x.Size, s, d-nb, dim, ref.v.Ref)
						return ix, nil, false
					}
					if !masked {
						k.failf(op, "slice %d:%d of dim %d (size %d) of %s: %s", s, s+x.Size, d-nb, dim, ref.v.Ref, sliceProblem(s, s+x.Size))
						return ix, nil, false
					}
					di.Operand = len(operands)
					operands = append(operands, k.outsideIndex(s))
				} else {
					di.Start = s
				}
			} else {
				v, ok := k.intScalar(op, x.Start)
				if !ok {
					return ix, nil, false
				}
				di.Operand = len(operands)
				operands = append(operands, v)
			}
		case *Value:
			if x == nil {
				k.failf(op, "index %d is a nil *Value", d-nb)
				return ix, nil, false
			}
			if !k.check(op, x) {
				return ix, nil, false
			}
			if !x.Type.DType.IsInt() {
				k.failf(op, "index %d is %s, not an integer", d-nb, x.Type)
				return ix, nil, false
			}
			if x.Type.Rank() == 0 {
				v, _ := k.intScalar(op, x)
				di = DimIndex{Kind: DimPoint, Size: 1, Operand: len(operands)}
				operands = append(operands, v)
			} else {
				di = DimIndex{Kind: DimArray, Size: 1, Operand: len(operands)}
				operands = append(operands, x)
				arrays = append(arrays, d)
			}
		default:
			s, ok, err := staticInt(e)
			if err != nil {
				k.failf(op, "index %d: %v", d-nb, err)
				return ix, nil, false
			}
			if !ok {
				k.failf(op, "index %d has unsupported type %T (want a Go integer, Value, Slice, DS or All)", d-nb, e)
				return ix, nil, false
			}
			di = DimIndex{Kind: DimPoint, Start: s, Size: 1, Operand: -1}
			if s < 0 || s >= dim {
				if !masked {
					k.failf(op, "index %d is outside dim %d (size %d) of %s%s", s, d-nb, dim, ref.v.Ref, negativeHint(s))
					return ix, nil, false
				}
				di.Start, di.Operand = 0, len(operands)
				operands = append(operands, k.outsideIndex(s))
			}
		}
		ix.Dims = append(ix.Dims, di)
	}
	if len(arrays) > 0 {
		var bshape []int64
		for _, d := range arrays {
			s, ok := broadcastShapes(bshape, operands[ix.Dims[d].Operand].Type.Shape)
			if !ok {
				k.failf(op, "index arrays of shapes %v and %v do not broadcast", bshape, operands[ix.Dims[d].Operand].Type.Shape)
				return ix, nil, false
			}
			bshape = s
		}
		for _, d := range arrays {
			o := ix.Dims[d].Operand
			operands[o] = k.broadcastTo(op, k.asIndex(operands[o]), bshape)
		}
		ix.ArrayShape = bshape
		// As in NumPy, integer indices next to arrays are advanced indices
		// too: when all advanced indices are adjacent the broadcast dims
		// take their place, else they come first.
		first, last, n := -1, -1, 0
		for d, di := range ix.Dims {
			if di.Kind != DimSlice && d >= nb { // not a Vmap batch index: the kernel has none
				if first < 0 {
					first = d
				}
				last = d
				n++
			}
		}
		if last-first == n-1 {
			for _, d := range ix.Dims[:first] {
				if d.Kind == DimSlice {
					ix.ArrayPos++
				}
			}
		}
	}
	for _, d := range ix.Dims {
		if d.Kind == DimSlice {
			ix.Shape = append(ix.Shape, d.Size)
		}
	}
	if len(arrays) > 0 {
		s := append([]int64{}, ix.Shape[:ix.ArrayPos]...)
		s = append(s, ix.ArrayShape...)
		ix.Shape = append(s, ix.Shape[ix.ArrayPos:]...)
	}
	if ix.Shape == nil {
		ix.Shape = []int64{}
	}
	ix.NumOperands = len(operands)
	return ix, operands, k.st.err == nil
}

// batchIndices are the indices of the batch element ref shows (see
// Ref.batch): the grid indices of its batch axes, read in an index map
// from its arguments and in a kernel body with program_id.
func (k *Kernel) batchIndices(ref *Ref) []any {
	idx := make([]any, len(ref.batch))
	for i, a := range ref.batch {
		if k.grid != nil {
			idx[i] = k.grid[a]
			continue
		}
		idx[i] = k.emit("program_id", nil, []Type{{DType: xla.Int32}}, Attrs{Axis: a}).Results[0]
	}
	return idx
}

// staticInt is the value of e when it is a Go integer of any kind (an
// index or constant known at trace time); ok is false for other types, and
// err is set for an unsigned value beyond int64's range.
// outsideIndex is the i32 Value of a static start outside a masked
// access's ref (saturated to i32's range: outside every dim either way).
func (k *Kernel) outsideIndex(s int64) *Value {
	return k.Const(xla.Int32, max(min(s, math.MaxInt32), math.MinInt32))
}

func staticInt(e any) (v int64, ok bool, err error) {
	switch x := e.(type) {
	case int:
		return int64(x), true, nil
	case int8:
		return int64(x), true, nil
	case int16:
		return int64(x), true, nil
	case int32:
		return int64(x), true, nil
	case int64:
		return x, true, nil
	case uint8:
		return int64(x), true, nil
	case uint16:
		return int64(x), true, nil
	case uint32:
		return int64(x), true, nil
	}
	u, wide := wideUnsigned(e)
	if !wide {
		return 0, false, nil
	}
	if u > math.MaxInt64 {
		return 0, true, fmt.Errorf("constant %d overflows int64", u)
	}
	return int64(u), true, nil
}

// wideUnsigned returns v as a uint64 when it is a uint, uint64 or uintptr
// (the Go integer kinds that may exceed int64).
func wideUnsigned(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint:
		return uint64(x), true
	case uint64:
		return x, true
	case uintptr:
		return uint64(x), true
	}
	return 0, false
}

func (k *Kernel) maskOperand(op string, mask *Value, shape []int64) (*Value, bool) {
	if !k.check(op, mask) {
		return nil, false
	}
	if !mask.Type.DType.IsBool() {
		k.failf(op, "mask is %s, not bool", mask.Type)
		return nil, false
	}
	if _, ok := broadcastShapes(mask.Type.Shape, shape); !ok || len(mask.Type.Shape) > len(shape) {
		k.failf(op, "mask of shape %v does not broadcast to the indexed shape %v", mask.Type.Shape, shape)
		return nil, false
	}
	m := k.broadcastTo(op, mask, shape)
	return m, k.st.err == nil
}

// sliceProblem says what is wrong with the static slice [start, stop) of
// an unmasked access that the dim refused.
func sliceProblem(start, stop int64) string {
	if start > stop {
		return "its stop is before its start"
	}
	return "it reaches outside the dim (mask the access to reach past its ends)" + negativeHint(start)
}

// sizeProblem says what is wrong with an unmasked dynamic slice's size.
func sizeProblem(size int64) string {
	if size < 0 {
		return "a negative size"
	}
	return "larger than the dim (mask the access to reach past its end)"
}

// negativeHint is the note for a negative static index or start: Python's
// counting from the end is not the kernel language's.
func negativeHint(s int64) string {
	if s < 0 {
		return "; a negative index does not count from the end, as in Python: write size-1"
	}
	return ""
}

// valueOperand converts v to dtype's value broadcast to shape.
func (k *Kernel) valueOperand(op, what string, v any, dtype xla.DType, shape []int64) (*Value, bool) {
	x, ok := k.asValueOf(op, what, v, dtype)
	if !ok {
		return nil, false
	}
	if x.Type.DType != dtype {
		k.failf(op, "%s is %s, the ref holds %v (convert with Astype)", what, x.Type, dtype)
		return nil, false
	}
	if _, ok := broadcastShapes(x.Type.Shape, shape); !ok || len(x.Type.Shape) > len(shape) {
		k.failf(op, "%s of shape %v does not broadcast to the indexed shape %v", what, x.Type.Shape, shape)
		return nil, false
	}
	x = k.broadcastTo(op, x, shape)
	return x, k.st.err == nil
}

func (k *Kernel) load(ref *Ref, idx []any, mask *Value, other any) *Value {
	t := Type{DType: ref.v.Type.DType}
	if k.st.err != nil {
		return k.placeholder(t)
	}
	ix, operands, ok := k.indexer("load", ref, idx, mask != nil)
	if !ok {
		return k.placeholder(t)
	}
	t.Shape = ix.Shape
	ops := append([]*Value{ref.v}, operands...)
	if mask != nil {
		m, ok := k.maskOperand("load", mask, ix.Shape)
		if !ok {
			return k.placeholder(t)
		}
		if other == nil {
			if t.DType.IsComplex() {
				k.failf("load", "a masked load of a %v ref needs other, the value where the mask is false: the kernel language has no complex constants (load one from a ref)", t.DType)
				return k.placeholder(t)
			}
			other = 0
		}
		o, ok := k.valueOperand("load", "other", other, t.DType, ix.Shape)
		if !ok {
			return k.placeholder(t)
		}
		ops = append(ops, m, o)
		ix.HasMask, ix.HasOther = true, true
	} else if other != nil {
		k.failf("load", "other given without a mask")
		return k.placeholder(t)
	}
	return k.emit("load", ops, []Type{t}, Attrs{Indexer: ix}).Results[0]
}

// atomicKinds are the atomic updates, each with the dtypes it takes on
// every backend (Triton's atomic_rmw: 32- and 64-bit words, and the
// 16-bit floats for add).
var atomicKinds = map[string]func(xla.DType) bool{
	"add": func(dt xla.DType) bool {
		return atomicWord(dt) || dt == xla.Float16 || dt == xla.BFloat16
	},
	"max":  atomicWord,
	"min":  atomicWord,
	"and":  atomicInt,
	"or":   atomicInt,
	"xor":  atomicInt,
	"xchg": atomicWord,
	"cas":  atomicWord,
}

// atomicInt reports whether dt is a 32- or 64-bit integer.
func atomicInt(dt xla.DType) bool {
	return dt.IsInt() && !dt.IsBool() && (dt.Bits() == 32 || dt.Bits() == 64)
}

// atomicWord reports whether dt is a 32- or 64-bit integer or float.
func atomicWord(dt xla.DType) bool {
	return atomicInt(dt) || dt == xla.Float32 || dt == xla.Float64
}

// atomic traces an atomic update of kind; cmp is the compared value of a
// cas (nil for the others).
func (k *Kernel) atomic(kind string, ref *Ref, idx []any, cmp, value any, mask *Value) *Value {
	op := "atomic_" + kind
	t := Type{DType: ref.v.Type.DType}
	if k.st.err != nil {
		return k.placeholder(t)
	}
	ix, operands, ok := k.indexer(op, ref, idx, mask != nil)
	if !ok {
		return k.placeholder(t)
	}
	t.Shape = ix.Shape
	if r := ref.v.Ref; r != nil && (r.Kind == InputRef || r.Kind == PrefetchRef) {
		k.failf(op, "%s is an input ref (read-only)", r)
		return k.placeholder(t)
	}
	if k.inCond > 0 {
		k.failf(op, "updates %s inside the condition of a While (a condition may only load)", ref.v.Ref)
		return k.placeholder(t)
	}
	if !atomicKinds[kind](t.DType) {
		k.failf(op, "%s is a %v ref: atomic %s takes %s", ref.v.Ref, t.DType, kind, atomicDTypes(kind))
		return k.placeholder(t)
	}
	v, ok := k.valueOperand(op, "value", value, t.DType, ix.Shape)
	if !ok {
		return k.placeholder(t)
	}
	ops := append(append([]*Value{ref.v}, operands...), v)
	if mask != nil {
		m, ok := k.maskOperand(op, mask, ix.Shape)
		if !ok {
			return k.placeholder(t)
		}
		ops = append(ops, m)
		ix.HasMask = true
	}
	if kind == "cas" { // the compared value comes last
		c, ok := k.valueOperand(op, "cmp", cmp, t.DType, ix.Shape)
		if !ok {
			return k.placeholder(t)
		}
		ops = append(ops, c)
	}
	return k.emit("atomic", ops, []Type{t}, Attrs{Kind: kind, Indexer: ix}).Results[0]
}

// atomicDTypes lists the dtypes atomic kind takes, for errors.
func atomicDTypes(kind string) string {
	switch kind {
	case "add":
		return "32- and 64-bit integers, f16, bf16, f32 and f64"
	case "xchg", "cas", "max", "min":
		return "32- and 64-bit integers, f32 and f64"
	}
	return "32- and 64-bit integers (a bitwise update)"
}

func (k *Kernel) store(ref *Ref, idx []any, value any, mask *Value) {
	if k.st.err != nil {
		return
	}
	ix, operands, ok := k.indexer("store", ref, idx, mask != nil)
	if !ok {
		return
	}
	if ref.v.Ref != nil && (ref.v.Ref.Kind == InputRef || ref.v.Ref.Kind == PrefetchRef) {
		// Inputs and scalar-prefetch arrays are read-only in every
		// backend (on a GPU they are the caller's buffers).
		k.failf("store", "%s is an input ref (read-only)", ref.v.Ref)
		return
	}
	if k.inCond > 0 {
		k.failf("store", "stores to %s inside the condition of a While (a condition may only load)", ref.v.Ref)
		return
	}
	v, ok := k.valueOperand("store", "value", value, ref.v.Type.DType, ix.Shape)
	if !ok {
		return
	}
	ops := append(append([]*Value{ref.v}, operands...), v)
	if mask != nil {
		m, ok := k.maskOperand("store", mask, ix.Shape)
		if !ok {
			return
		}
		ops = append(ops, m)
		ix.HasMask = true
	}
	k.emit("store", ops, nil, Attrs{Indexer: ix})
}

// refIndexName names a Slice, DS or All index as the kernel wrote it.
func refIndexName(e any) string {
	switch x := e.(type) {
	case SliceIndex:
		return fmt.Sprintf("Slice(%d, %d)", x.Start, x.Stop)
	case DSIndex:
		return fmt.Sprintf("DS(..., %d)", x.Size)
	}
	return "All"
}
