package interpreter

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/halo-ml/halo/internal/workers"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Helpers shared by the shape, reduction, sort, gather/scatter, control-flow
// and dynamic-shape kernels. Names start with "shp" so that they stay out of
// the way of the other kernel files of this package.
//
// Element movement is done by a few typed primitives (shpCopy, shpFill,
// shpTake): each switches on the storage type once and then runs a generic
// loop over the typed slices, so no kernel pays an interface call or an
// allocation per element.

// shpRegister binds a kernel of these files. A panic inside it (a bug: the
// kernels check their inputs and return errors) becomes an error naming the
// op instead of taking the process down.
func shpRegister(name string, k Kernel) {
	registerKernel(name, func(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
		defer func() {
			if r := recover(); r != nil {
				if e := allocErrorOf(r); e != nil {
					out, err = nil, e
					return
				}
				out, err = nil, fmt.Errorf("internal error in the %s kernel (please report): %v", name, r)
			}
		}()
		return k(x, op, args)
	})
}

// shpAttrInts reads an integer-list attribute: array<i64: ...> (any integer
// element type), dense<...> : tensor<Nxi64> (older printers) or [1, 2].
// present is false when the attribute is absent.
func shpAttrInts(op *stablehlo.Op, name string) (vals []int64, present bool, err error) {
	a := op.Attr(name)
	if a == nil {
		return nil, false, nil
	}
	vals, err = shpIntsOfAttr(a)
	if err != nil {
		return nil, true, fmt.Errorf("attribute %s: %w", name, err)
	}
	return vals, true, nil
}

// shpIntsOfAttr decodes an integer list from an attribute value.
func shpIntsOfAttr(a stablehlo.Attribute) ([]int64, error) {
	switch a := a.(type) {
	case stablehlo.DenseArrayAttr:
		if a.DType.IsFloat() || a.DType.IsComplex() {
			return nil, fmt.Errorf("want integers, got array<%v: ...>", a.DType)
		}
		return append([]int64(nil), a.Values...), nil
	case stablehlo.DenseElementsAttr:
		return denseInts(a)
	case stablehlo.ArrayAttr:
		out := make([]int64, len(a))
		for i, e := range a {
			ia, ok := e.(stablehlo.IntAttr)
			if !ok {
				return nil, fmt.Errorf("element %d is %T, not an integer", i, e)
			}
			out[i] = ia.Value
		}
		return out, nil
	case stablehlo.IntAttr:
		return []int64{a.Value}, nil
	}
	return nil, fmt.Errorf("want an integer array, got %T", a)
}

// maxIntAttr is the most elements denseInts decodes. The integer list
// attributes of the ops (permutations, dimensions, start indices,
// paddings, strides, fft lengths ...) hold a few values per dimension of a
// tensor; a splat of a larger type (dense<0> : tensor<1000000000000xi64>,
// stored as one element) would otherwise be expanded into more memory
// than there is. It is the bound stablehlo.DenseElementsAttr.Int64s puts
// on splats.
const maxIntAttr = 1 << 20

// denseInts decodes the integer (or i1) elements of a dense elements
// attribute as int64s, each wrapped to its element type's width; it
// refuses more than maxIntAttr elements before allocating.
func denseInts(a stablehlo.DenseElementsAttr) ([]int64, error) {
	dt := a.Type.DType
	if !(dt.IsInt() || dt.IsBool()) {
		return nil, fmt.Errorf("want integer elements, got %v", a.Type)
	}
	if slices.ContainsFunc(a.Type.Dims, func(d int64) bool { return d < 0 }) {
		return nil, fmt.Errorf("dense attribute has a dynamic type %v", a.Type)
	}
	n := a.Type.Size()
	if n < 0 || n > maxIntAttr {
		return nil, fmt.Errorf("%v has more elements than an integer list attribute holds (%d)", a.Type, maxIntAttr)
	}
	w := dt.HostBytes()
	count := n
	if a.Splat {
		count = 1
	}
	if int64(len(a.Data)) < count*int64(w) {
		return nil, fmt.Errorf("dense attribute of type %v holds %d bytes, want %d", a.Type, len(a.Data), count*int64(w))
	}
	out := make([]int64, n)
	for i := range out {
		off := i * w
		if a.Splat {
			off = 0
		}
		var bits uint64
		for k := 0; k < w; k++ {
			bits |= uint64(a.Data[off+k]) << (8 * k)
		}
		switch {
		case dt.IsBool():
			out[i] = int64(bits)
		case dt.IsUnsigned():
			out[i] = int64(WrapUint(dt, bits))
		default:
			shift := uint(64 - 8*w)
			out[i] = WrapInt(dt, int64(bits<<shift)>>shift)
		}
	}
	return out, nil
}

// shpAttrIntsDefault reads an optional integer-list attribute; when absent it
// returns n copies of def. The list must have n entries.
func shpAttrIntsDefault(op *stablehlo.Op, name string, n int, def int64) ([]int64, error) {
	v, ok, err := shpAttrInts(op, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		v = make([]int64, n)
		for i := range v {
			v[i] = def
		}
		return v, nil
	}
	if len(v) != n {
		return nil, fmt.Errorf("attribute %s has %d entries, want %d", name, len(v), n)
	}
	return v, nil
}

// shpAttrInt reads an integer attribute.
func shpAttrInt(op *stablehlo.Op, name string) (v int64, present bool, err error) {
	a := op.Attr(name)
	if a == nil {
		return 0, false, nil
	}
	switch a := a.(type) {
	case stablehlo.IntAttr:
		return a.Value, true, nil
	case stablehlo.DenseElementsAttr:
		vs, err := denseInts(a)
		if err != nil || len(vs) != 1 {
			return 0, true, fmt.Errorf("attribute %s must be an integer, got %v", name, a.Type)
		}
		return vs[0], true, nil
	}
	return 0, true, fmt.Errorf("attribute %s must be an integer, got %T", name, a)
}

// shpAttrBool reads an optional boolean attribute (false when absent).
func shpAttrBool(op *stablehlo.Op, name string) (bool, error) {
	switch a := op.Attr(name).(type) {
	case nil:
		return false, nil
	case stablehlo.BoolAttr:
		return bool(a), nil
	case stablehlo.UnitAttr:
		return true, nil
	case stablehlo.IntAttr:
		return a.Value != 0, nil
	default:
		return false, fmt.Errorf("attribute %s must be a boolean, got %T", name, a)
	}
}

// shpPadding reads an optional Nx2 padding attribute (dense<[[lo, hi], ...]>)
// for rank n; absent means no padding.
func shpPadding(op *stablehlo.Op, name string, n int) (lo, hi []int64, err error) {
	lo, hi = make([]int64, n), make([]int64, n)
	a := op.Attr(name)
	if a == nil {
		return lo, hi, nil
	}
	vals, err := shpIntsOfAttr(a)
	if err != nil {
		return nil, nil, fmt.Errorf("attribute %s: %w", name, err)
	}
	if d, ok := a.(stablehlo.DenseElementsAttr); ok && !d.Splat {
		if len(d.Type.Dims) != 2 || d.Type.Dims[1] != 2 || d.Type.Dims[0] != int64(n) {
			if !(n == 0 && len(vals) == 0) {
				return nil, nil, fmt.Errorf("attribute %s has type %v, want tensor<%dx2xi64>", name, d.Type, n)
			}
		}
	}
	if len(vals) != 2*n {
		return nil, nil, fmt.Errorf("attribute %s has %d values, want %d (%d pairs)", name, len(vals), 2*n, n)
	}
	for i := 0; i < n; i++ {
		lo[i], hi[i] = vals[2*i], vals[2*i+1]
	}
	return lo, hi, nil
}

// shpTensorArg returns argument i as a tensor.
func shpTensorArg(args []Value, i int) (*Tensor, error) {
	if i >= len(args) {
		return nil, fmt.Errorf("missing operand %d", i)
	}
	t, ok := args[i].(*Tensor)
	if !ok || t == nil {
		return nil, fmt.Errorf("operand %d is %T, not a tensor", i, args[i])
	}
	if err := shpValidTensor(t); err != nil {
		return nil, fmt.Errorf("operand %d: %w", i, err)
	}
	return t, nil
}

// shpValidTensor checks that a tensor's storage matches its shape, so that a
// malformed tensor handed in from outside is an error, not an index panic.
func shpValidTensor(t *Tensor) error {
	n := -1
	var st Storage
	switch d := t.Data.(type) {
	case []bool:
		n, st = len(d), StorageBool
	case []int8:
		n, st = len(d), StorageI8
	case []int16:
		n, st = len(d), StorageI16
	case []int32:
		n, st = len(d), StorageI32
	case []int64:
		n, st = len(d), StorageI64
	case []uint8:
		n, st = len(d), StorageU8
	case []uint16:
		n, st = len(d), StorageU16
	case []uint32:
		n, st = len(d), StorageU32
	case []uint64:
		n, st = len(d), StorageU64
	case []float32:
		n, st = len(d), StorageF32
	case []float64:
		n, st = len(d), StorageF64
	case []complex64:
		n, st = len(d), StorageC64
	case []complex128:
		n, st = len(d), StorageC128
	}
	if st == StorageInvalid || st != StorageOf(t.Shape.DType) {
		return fmt.Errorf("tensor %v holds %T", t.Shape, t.Data)
	}
	for _, d := range t.Shape.Dims {
		if d < 0 {
			return fmt.Errorf("tensor shape %v has a negative dimension", t.Shape)
		}
	}
	if int64(n) != t.Shape.Size() {
		return fmt.Errorf("tensor %v holds %d elements", t.Shape, n)
	}
	return nil
}

// shpTensorArgs returns all arguments as tensors.
func shpTensorArgs(args []Value) ([]*Tensor, error) {
	out := make([]*Tensor, len(args))
	for i := range args {
		t, err := shpTensorArg(args, i)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// shpResultShape returns result i's static shape; it rejects dynamic
// dimensions.
func shpResultShape(op *stablehlo.Op, i int) (xla.Shape, error) {
	tt, err := ResultTensorType(op, i)
	if err != nil {
		return xla.Shape{}, err
	}
	for d, n := range tt.Dims {
		if n < 0 {
			return xla.Shape{}, fmt.Errorf("result %d has a dynamic dimension %d (%v)", i, d, tt)
		}
	}
	return tt.Shape(), nil
}

// shpCheckShape reports an error when the shape a kernel computed differs from
// the result type the program declares.
func shpCheckShape(op *stablehlo.Op, i int, dt xla.DType, dims []int64) (xla.Shape, error) {
	tt, err := ResultTensorType(op, i)
	if err != nil {
		return xla.Shape{}, err
	}
	want := xla.MakeShape(dt, dims...)
	if tt.DType != dt || len(tt.Dims) != len(dims) {
		return xla.Shape{}, fmt.Errorf("result %d is declared %v but the op computes %v", i, tt, want)
	}
	for d := range dims {
		if tt.Dims[d] != dims[d] && tt.Dims[d] != stablehlo.DynamicDim {
			return xla.Shape{}, fmt.Errorf("result %d is declared %v but the op computes %v", i, tt, want)
		}
	}
	return want, nil
}

// shpSameDType reports an error unless a and b have the same element type.
func shpSameDType(what string, a, b *Tensor) error {
	if a.Shape.DType != b.Shape.DType {
		return fmt.Errorf("%s: element types differ (%v and %v)", what, a.Shape.DType, b.Shape.DType)
	}
	return nil
}

// shpInts returns the elements of an integer (or boolean) tensor as int64.
func shpInts(t *Tensor) ([]int64, error) {
	out := make([]int64, t.Len())
	switch d := t.Data.(type) {
	case []int8:
		for i, v := range d {
			out[i] = int64(v)
		}
	case []int16:
		for i, v := range d {
			out[i] = int64(v)
		}
	case []int32:
		for i, v := range d {
			out[i] = int64(v)
		}
	case []int64:
		copy(out, d)
	case []uint8:
		for i, v := range d {
			out[i] = int64(v)
		}
	case []uint16:
		for i, v := range d {
			out[i] = int64(v)
		}
	case []uint32:
		for i, v := range d {
			out[i] = int64(v)
		}
	case []uint64:
		for i, v := range d {
			// Values above MaxInt64 saturate: they are out of range for any
			// index computation anyway, and stay "large" for clamping.
			if v > 1<<63-1 {
				out[i] = 1<<63 - 1
			} else {
				out[i] = int64(v)
			}
		}
	case []bool:
		for i, v := range d {
			if v {
				out[i] = 1
			}
		}
	default:
		return nil, fmt.Errorf("want an integer tensor, got %v", t.Shape)
	}
	return out, nil
}

// shpScalarInt returns the value of a rank-0 (or one-element) integer tensor.
func shpScalarInt(t *Tensor) (int64, error) {
	if t.Len() != 1 {
		return 0, fmt.Errorf("want a scalar, got %v", t.Shape)
	}
	v, err := shpInts(t)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// shpScalarBool returns the value of a rank-0 boolean tensor.
func shpScalarBool(t *Tensor) (bool, error) {
	d, ok := t.Data.([]bool)
	if !ok || len(d) != 1 {
		return false, fmt.Errorf("want tensor<i1>, got %v", t.Shape)
	}
	return d[0], nil
}

// shpBoolValue returns the value of v, a rank-0 boolean tensor.
func shpBoolValue(v Value) (bool, error) {
	t, ok := v.(*Tensor)
	if !ok || t == nil {
		return false, fmt.Errorf("want tensor<i1>, got %T", v)
	}
	return shpScalarBool(t)
}

// shpNew returns a zero tensor of element type dt and the given dims.
func shpNew(dt xla.DType, dims []int64) *Tensor {
	return NewTensor(xla.MakeShape(dt, dims...))
}

// shpMaxElems bounds the size of a tensor these kernels create (2^40
// elements): beyond it the shape is an error rather than an allocation that
// cannot succeed.
const shpMaxElems = 1 << 40

// shpCheckDims reports negative dimensions, and sizes that do not fit in
// memory-indexable ints (an *AllocError for a result of element type dt).
func shpCheckDims(dt xla.DType, dims []int64) error {
	for i, d := range dims {
		if d < 0 {
			return fmt.Errorf("dimension %d is negative (%d)", i, d)
		}
	}
	if slices.Contains(dims, 0) {
		return nil // no elements, however large the other dims
	}
	n := int64(1)
	for _, d := range dims {
		if n > shpMaxElems/d {
			return &AllocError{Shape: xla.MakeShape(dt, dims...), Bytes: -1}
		}
		n *= d
	}
	return nil
}

// --- strided element movement ------------------------------------------------

// shpCopy copies a strided view of src into a strided view of dst: for every
// index i over dims, dst[dstOff + i·dstStr] = src[srcOff + i·srcStr].
// Strides may be zero (broadcast) or negative (reverse). The two tensors must
// have the same storage type.
func shpCopy(dst, src *Tensor, dims []int64, dstOff int64, dstStr []int64, srcOff int64, srcStr []int64) error {
	dims, dstStr, srcStr = shpCoalesce(dims, dstStr, srcStr)
	return shpCopyRaw(dst, src, dims, dstOff, dstStr, srcOff, srcStr)
}

// shpCopyRaw is shpCopy for views already simplified by shpCoalesce (callers
// that copy many windows of one geometry coalesce once).
func shpCopyRaw(dst, src *Tensor, dims []int64, dstOff int64, dstStr []int64, srcOff int64, srcStr []int64) error {
	ok := false
	switch d := dst.Data.(type) {
	case []bool:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []int8:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []int16:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []int32:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []int64:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []uint8:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []uint16:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []uint32:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []uint64:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []float32:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []float64:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []complex64:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	case []complex128:
		ok = shpCopyT(d, src.Data, dims, dstOff, dstStr, srcOff, srcStr)
	}
	if !ok {
		return fmt.Errorf("cannot copy %v elements into %v", src.Shape.DType, dst.Shape.DType)
	}
	return nil
}

// shpCoalesce drops unit dimensions and merges neighbouring dimensions that
// are contiguous in both views, so that whole rows move with copy().
func shpCoalesce(dims, a, b []int64) ([]int64, []int64, []int64) {
	if len(dims) == 1 && dims[0] > 1 {
		return dims, a, b // nothing to merge (and no allocation)
	}
	for _, n := range dims {
		if n == 0 {
			return []int64{0}, []int64{0}, []int64{0}
		}
	}
	var od, oa, ob []int64
	for i, n := range dims {
		if n == 1 {
			continue
		}
		k := len(od) - 1
		if k >= 0 && oa[k] == a[i]*n && ob[k] == b[i]*n {
			od[k] *= n
			oa[k], ob[k] = a[i], b[i]
			continue
		}
		od = append(od, n)
		oa = append(oa, a[i])
		ob = append(ob, b[i])
	}
	return od, oa, ob
}

func shpCopyT[T any](d []T, srcAny any, dims []int64, doff int64, dstr []int64, soff int64, sstr []int64) bool {
	s, ok := srcAny.([]T)
	if !ok {
		return false
	}
	if len(dims) == 0 {
		d[doff] = s[soff]
		return true
	}
	total := int64(1)
	for _, n := range dims {
		total *= n
	}
	if total < shpCopyParMin {
		shpCopySeq(d, s, dims, doff, dstr, soff, sstr)
		return true
	}
	// Large copies split the outermost dimension across cores (the
	// destination views of the parts are disjoint).
	shpSplitFrom(dims[0], total, shpCopyParMin, func(lo, hi int64) {
		part := append([]int64{hi - lo}, dims[1:]...)
		shpCopySeq(d, s, part, doff+lo*dstr[0], dstr, soff+lo*sstr[0], sstr)
	})
	return true
}

// shpParMin is the element count from which these kernels split work
// across cores.
const shpParMin = 1 << 17

// shpCopyParMin is the element count from which a copy is split across
// cores: a block written back into a large array (256x256 f32) goes
// faster on two cores, above all into memory not yet touched.
const shpCopyParMin = 1 << 15

// shpSplit runs fn over [0, n) in contiguous parts, on several goroutines
// when total (the work, in elements) is large enough to pay for them.
func shpSplit(n, total int64, fn func(lo, hi int64)) { shpSplitFrom(n, total, shpParMin, fn) }

// shpSplitFrom is shpSplit splitting from parMin elements of work, in
// parts of at least parMin/4.
func shpSplitFrom(n, total, parMin int64, fn func(lo, hi int64)) {
	p := int64(runtime.GOMAXPROCS(0))
	p = min(p, n, total/(parMin/4))
	if total < parMin || p < 2 {
		fn(0, n)
		return
	}
	chunk := (n + p - 1) / p
	workers.Run(int((n+chunk-1)/chunk), func(i int) { fn(int64(i)*chunk, min(int64(i)*chunk+chunk, n)) })
}

func shpCopySeq[T any](d, s []T, dims []int64, doff int64, dstr []int64, soff int64, sstr []int64) {
	r := len(dims)
	if r == 0 {
		d[doff] = s[soff]
		return
	}
	for _, n := range dims {
		if n == 0 {
			return
		}
	}
	// A transpose-like copy (contiguous writes, strided reads, and another
	// dimension that reads contiguously) goes tile by tile so that both
	// sides stay in cache.
	if r >= 2 && dstr[r-1] == 1 && sstr[r-1] != 1 && sstr[r-1] != 0 && dims[r-1] >= shpTile {
		for k := 0; k < r-1; k++ {
			if sstr[k] == 1 && dims[k] >= shpTile {
				shpCopyTiled(d, s, dims, doff, dstr, soff, sstr, k)
				return
			}
		}
	}
	n := dims[r-1]
	ds, ss := dstr[r-1], sstr[r-1]
	var idx []int64
	if r > 1 {
		idx = make([]int64, r-1)
	}
	for {
		switch {
		case ds == 1 && ss == 1:
			copy(d[doff:doff+n], s[soff:soff+n])
		case ds == 1 && ss == 0:
			v := s[soff]
			dd := d[doff : doff+n]
			for i := range dd {
				dd[i] = v
			}
		default:
			di, si := doff, soff
			for i := int64(0); i < n; i++ {
				d[di] = s[si]
				di += ds
				si += ss
			}
		}
		k := r - 2
		for ; k >= 0; k-- {
			idx[k]++
			doff += dstr[k]
			soff += sstr[k]
			if idx[k] < dims[k] {
				break
			}
			doff -= dstr[k] * dims[k]
			soff -= sstr[k] * dims[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// shpTile is the tile edge of shpCopyTiled.
const shpTile = 32

// shpCopyTiled copies like shpCopyT where the last dimension is contiguous
// in dst and dimension k is contiguous in src: the other dimensions are
// walked one by one, and the (k, last) plane in shpTile×shpTile tiles.
func shpCopyTiled[T any](d, s []T, dims []int64, doff int64, dstr []int64, soff int64, sstr []int64, k int) {
	r := len(dims)
	var odims, odst, osrc []int64
	for i := 0; i < r-1; i++ {
		if i != k {
			odims = append(odims, dims[i])
			odst = append(odst, dstr[i])
			osrc = append(osrc, sstr[i])
		}
	}
	ni, nj := dims[k], dims[r-1]
	di, sj := dstr[k], sstr[r-1]
	for o := shpNewOdo2(odims, odst, osrc, doff, soff); !o.done; o.next() {
		for i0 := int64(0); i0 < ni; i0 += shpTile {
			i1 := min(i0+shpTile, ni)
			for j0 := int64(0); j0 < nj; j0 += shpTile {
				j1 := min(j0+shpTile, nj)
				for i := i0; i < i1; i++ {
					row := d[o.a+i*di+j0 : o.a+i*di+j1]
					si := o.b + i + j0*sj
					for j := range row {
						row[j] = s[si]
						si += sj
					}
				}
			}
		}
	}
}

// shpFill sets every element of dst to the single element of v.
func shpFill(dst, v *Tensor) error {
	if v.Len() != 1 {
		return fmt.Errorf("fill value must be a scalar, got %v", v.Shape)
	}
	n := int64(dst.Len())
	return shpCopy(dst, v, []int64{n}, 0, []int64{1}, 0, []int64{0})
}

// shpTake sets dst[i] = src[idx[i]] for every i.
func shpTake(dst, src *Tensor, idx []int) error {
	ok := false
	switch d := dst.Data.(type) {
	case []bool:
		ok = shpTakeT(d, src.Data, idx)
	case []int8:
		ok = shpTakeT(d, src.Data, idx)
	case []int16:
		ok = shpTakeT(d, src.Data, idx)
	case []int32:
		ok = shpTakeT(d, src.Data, idx)
	case []int64:
		ok = shpTakeT(d, src.Data, idx)
	case []uint8:
		ok = shpTakeT(d, src.Data, idx)
	case []uint16:
		ok = shpTakeT(d, src.Data, idx)
	case []uint32:
		ok = shpTakeT(d, src.Data, idx)
	case []uint64:
		ok = shpTakeT(d, src.Data, idx)
	case []float32:
		ok = shpTakeT(d, src.Data, idx)
	case []float64:
		ok = shpTakeT(d, src.Data, idx)
	case []complex64:
		ok = shpTakeT(d, src.Data, idx)
	case []complex128:
		ok = shpTakeT(d, src.Data, idx)
	}
	if !ok {
		return fmt.Errorf("cannot move %v elements into %v", src.Shape.DType, dst.Shape.DType)
	}
	return nil
}

func shpTakeT[T any](d []T, srcAny any, idx []int) bool {
	s, ok := srcAny.([]T)
	if !ok {
		return false
	}
	for i, j := range idx {
		d[i] = s[j]
	}
	return true
}

// shpSetElem sets dst[di] = src[si] (one element; used by the general region
// paths, which already pay for a region call per element).
func shpSetElem(dst *Tensor, di int, src *Tensor, si int) error {
	return shpCopy(dst, src, nil, int64(di), nil, int64(si), nil)
}

// shpScalarFrom returns a new rank-0 tensor holding t[i].
func shpScalarFrom(t *Tensor, i int) *Tensor {
	s := NewTensor(xla.MakeShape(t.Shape.DType))
	_ = shpSetElem(s, 0, t, i)
	return s
}

// shpOffset is Σ idx[d]·strides[d].
func shpOffset(idx, strides []int64) int64 {
	var o int64
	for d, i := range idx {
		o += i * strides[d]
	}
	return o
}

// shpIsPerm reports whether p is a permutation of 0..n-1.
func shpIsPerm(p []int64, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, v := range p {
		if v < 0 || v >= int64(n) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// shpDimsIn checks that every entry of ds is a valid, unique dimension of a
// rank-r tensor.
func shpDimsIn(what string, ds []int64, r int) error {
	seen := make(map[int64]bool, len(ds))
	for _, d := range ds {
		if d < 0 || d >= int64(r) {
			return fmt.Errorf("%s: dimension %d is out of range for rank %d", what, d, r)
		}
		if seen[d] {
			return fmt.Errorf("%s: dimension %d appears twice", what, d)
		}
		seen[d] = true
	}
	return nil
}

func shpContains(ds []int64, d int64) bool {
	for _, v := range ds {
		if v == d {
			return true
		}
	}
	return false
}

func shpClamp(lo, v, hi int64) int64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// shpErrf is fmt.Errorf (kept short for the many checks of these kernels).
func shpErrf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// shpOdo walks a multi-dimensional index in row-major order and keeps the
// matching offset into a strided view:
//
//	for o := shpNewOdo(dims, strides, base); !o.done; o.next() { ... o.off ... }
type shpOdo struct {
	dims, str, idx []int64
	off            int64
	done           bool
}

func shpNewOdo(dims, str []int64, base int64) *shpOdo {
	o := &shpOdo{dims: dims, str: str, idx: make([]int64, len(dims)), off: base}
	for _, n := range dims {
		if n == 0 {
			o.done = true
		}
	}
	return o
}

func (o *shpOdo) next() {
	for k := len(o.dims) - 1; k >= 0; k-- {
		o.idx[k]++
		o.off += o.str[k]
		if o.idx[k] < o.dims[k] {
			return
		}
		o.off -= o.str[k] * o.dims[k]
		o.idx[k] = 0
	}
	o.done = true
}

// reset restarts the walk at base.
func (o *shpOdo) reset(base int64) {
	for i := range o.idx {
		o.idx[i] = 0
	}
	o.off = base
	o.done = false
	for _, n := range o.dims {
		if n == 0 {
			o.done = true
		}
	}
}
