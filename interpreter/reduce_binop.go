package interpreter

import (
	"math"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Region fast paths. The regions of reduce, reduce_window, scatter and
// select_and_scatter are nearly always one commutative StableHLO op applied
// to the two block arguments (or, for scatter, "return the update"). Those
// are recognised once per op and run as typed loops; any other region is run
// per element with x.RunRegion on rank-0 tensors.

// shpBinop is a recognised region body.
type shpBinop uint8

const (
	shpBinNone    shpBinop = iota
	shpBinAdd              // stablehlo.add
	shpBinMul              // stablehlo.multiply
	shpBinMax              // stablehlo.maximum
	shpBinMin              // stablehlo.minimum
	shpBinAnd              // stablehlo.and
	shpBinOr               // stablehlo.or
	shpBinXor              // stablehlo.xor
	shpBinReplace          // return the second argument (scatter's "set")
)

var shpBinopNames = map[string]shpBinop{
	"stablehlo.add":      shpBinAdd,
	"stablehlo.multiply": shpBinMul,
	"stablehlo.maximum":  shpBinMax,
	"stablehlo.minimum":  shpBinMin,
	"stablehlo.and":      shpBinAnd,
	"stablehlo.or":       shpBinOr,
	"stablehlo.xor":      shpBinXor,
}

// shpRegionBinops recognises a region with 2n scalar block arguments whose
// k-th result is binop(arg k, arg n+k) (in either order), or arg n+k itself
// (replace). It returns nil when the region is anything else. Element types
// must match the given dtypes.
func shpRegionBinops(r *stablehlo.Region, dts []xla.DType) []shpBinop {
	n := len(dts)
	if r == nil || len(r.Blocks) != 1 {
		return nil
	}
	b := r.Blocks[0]
	if len(b.Args) != 2*n || len(b.Ops) == 0 {
		return nil
	}
	for i, a := range b.Args {
		tt, ok := a.Type.(stablehlo.TensorType)
		if !ok || len(tt.Dims) != 0 || tt.DType != dts[i%n] {
			return nil
		}
	}
	ret := b.Ops[len(b.Ops)-1]
	if !isTerminator(ret.Name) || len(ret.Operands) != n {
		return nil
	}
	out := make([]shpBinop, n)
	used := 0
	for k, v := range ret.Operands {
		if v.Block() == b && v.Index() == n+k {
			out[k] = shpBinReplace
			continue
		}
		def := v.Op()
		if def == nil || def.Parent() != b || len(def.Operands) != 2 || len(def.Results) != 1 ||
			len(def.Regions) != 0 || len(def.Attrs) != 0 {
			return nil
		}
		bop, ok := shpBinopNames[def.Name]
		if !ok {
			return nil
		}
		x, y := def.Operands[0], def.Operands[1]
		if x.Block() != b || y.Block() != b {
			return nil
		}
		i, j := x.Index(), y.Index()
		if !((i == k && j == n+k) || (i == n+k && j == k)) {
			return nil
		}
		if !shpIsScalarOf(def.Results[0].Type, dts[k]) {
			return nil
		}
		out[k] = bop
		used++
	}
	// Every op but the terminator must be one of the recognised ones.
	if len(b.Ops)-1 != used {
		return nil
	}
	return out
}

// shpIsScalarOf reports whether t is tensor<dt>.
func shpIsScalarOf(t stablehlo.Type, dt xla.DType) bool {
	tt, ok := t.(stablehlo.TensorType)
	return ok && len(tt.Dims) == 0 && tt.DType == dt
}

// Typed binary functions. ok is false when the op is not defined for the
// type (the caller then falls back to the general region path).

func shpBinF32(op shpBinop, dt xla.DType) (func(a, b float32) float32, bool) {
	switch op {
	case shpBinMax:
		return shpMaxF32, true
	case shpBinMin:
		return shpMinF32, true
	case shpBinAdd, shpBinMul:
		if IsNarrowFloat(dt) {
			g, _ := shpBinArith[float32](op)
			return func(a, b float32) float32 { return RoundNarrow(dt, g(a, b)) }, true
		}
	}
	return shpBinArith[float32](op)
}

func shpBinF64(op shpBinop) (func(a, b float64) float64, bool) {
	switch op {
	case shpBinMax:
		return shpMaxF64, true
	case shpBinMin:
		return shpMinF64, true
	}
	return shpBinArith[float64](op)
}

// IEEE-754 maximum/minimum for the reductions' function values, written
// out: with ewFMax or ewFMin (even inlined into a wrapper) as f,
// BenchmarkReduceMaxColumnsF32_16M took 25-40% longer.
func shpMaxF32(a, b float32) float32 {
	switch {
	case a != a:
		return a
	case b != b:
		return b
	case a > b:
		return a
	case b > a:
		return b
	case math.Signbit(float64(a)):
		return b
	}
	return a
}

func shpMinF32(a, b float32) float32 {
	switch {
	case a != a:
		return a
	case b != b:
		return b
	case a < b:
		return a
	case b < a:
		return b
	case math.Signbit(float64(a)):
		return a
	}
	return b
}

func shpMaxF64(a, b float64) float64 {
	switch {
	case a != a:
		return a
	case b != b:
		return b
	case a > b:
		return a
	case b > a:
		return b
	case math.Signbit(a):
		return b
	}
	return a
}

func shpMinF64(a, b float64) float64 {
	switch {
	case a != a:
		return a
	case b != b:
		return b
	case a < b:
		return a
	case b < a:
		return b
	case math.Signbit(a):
		return a
	}
	return b
}

// shpBinInt returns the op on an integer storage type. Sub-byte types are
// re-wrapped by the caller after the loop (add, multiply and the bitwise ops
// commute with reduction modulo 2^bits; max/min keep values in range).
func shpBinInt[T ewInt](op shpBinop) (func(a, b T) T, bool) {
	switch op {
	case shpBinMax:
		return func(a, b T) T { return max(a, b) }, true
	case shpBinMin:
		return func(a, b T) T { return min(a, b) }, true
	case shpBinAnd:
		return func(a, b T) T { return a & b }, true
	case shpBinOr:
		return func(a, b T) T { return a | b }, true
	case shpBinXor:
		return func(a, b T) T { return a ^ b }, true
	}
	return shpBinArith[T](op)
}

// shpBinArith returns add, multiply or replace, which every numeric type
// has (and the only ops complex types have).
func shpBinArith[T ewNumber](op shpBinop) (func(a, b T) T, bool) {
	switch op {
	case shpBinAdd:
		return func(a, b T) T { return a + b }, true
	case shpBinMul:
		return func(a, b T) T { return a * b }, true
	case shpBinReplace:
		return func(_, b T) T { return b }, true
	}
	return nil, false
}

// Booleans: add and maximum are OR, multiply and minimum are AND.
func shpBinBool(op shpBinop) (func(a, b bool) bool, bool) {
	switch op {
	case shpBinAdd, shpBinMax, shpBinOr:
		return func(a, b bool) bool { return a || b }, true
	case shpBinMul, shpBinMin, shpBinAnd:
		return func(a, b bool) bool { return a && b }, true
	case shpBinXor:
		return func(a, b bool) bool { return a != b }, true
	case shpBinReplace:
		return func(_, b bool) bool { return b }, true
	}
	return nil, false
}

// shpBinSupported reports whether the typed fast path implements op for dt.
func shpBinSupported(op shpBinop, dt xla.DType) bool {
	switch StorageOf(dt) {
	case StorageBool:
		_, ok := shpBinBool(op)
		return ok
	case StorageI8, StorageI16, StorageI32, StorageI64, StorageU8, StorageU16, StorageU32, StorageU64:
		_, ok := shpBinInt[int64](op)
		return ok
	case StorageF32:
		_, ok := shpBinF32(op, dt)
		return ok
	case StorageF64:
		_, ok := shpBinF64(op)
		return ok
	case StorageC64, StorageC128:
		_, ok := shpBinArith[complex64](op)
		return ok
	}
	return false
}

// shpRewrap re-wraps sub-byte integer tensors after a typed loop.
func shpRewrap(t *Tensor) {
	dt := t.Shape.DType
	if dt.Bits() >= 8 || !(dt.IsInt() || dt.IsUnsigned()) || dt.IsBool() {
		return
	}
	switch d := t.Data.(type) {
	case []int8:
		for i, v := range d {
			d[i] = int8(WrapInt(dt, int64(v)))
		}
	case []uint8:
		for i, v := range d {
			d[i] = uint8(WrapUint(dt, uint64(v)))
		}
	}
}

// shpScalars makes the rank-0 tensors a general region path passes in:
// n accumulators and n element values per call. The kernel owns them and
// overwrites them between calls; results are copied out at once.
func shpScalars(dts []xla.DType) []*Tensor {
	out := make([]*Tensor, len(dts))
	for i, dt := range dts {
		out[i] = NewTensor(xla.MakeShape(dt))
	}
	return out
}

// shpRunScalarRegion runs region r with the given scalar arguments and copies
// the n scalar results into dst (which may alias arguments).
func shpRunScalarRegion(x *Exec, r *stablehlo.Region, args []Value, dst []*Tensor) error {
	res, err := x.RunRegion(r, args)
	if err != nil {
		return err
	}
	if len(res) != len(dst) {
		return shpErrf("region returned %d values, want %d", len(res), len(dst))
	}
	if len(dst) > 1 {
		// A result may be an argument that is (or shares storage with)
		// another destination (a body returning (y, x)): copy such results
		// out before the first destination is written.
		cloned := false
		for k, v := range res {
			t, ok := v.(*Tensor)
			if !ok || t == nil {
				continue
			}
			p, _ := storagePtr(t)
			for _, d := range dst {
				if q, _ := storagePtr(d); t == d || p != 0 && p == q {
					if !cloned {
						res, cloned = append([]Value(nil), res...), true // not the region's own slice
					}
					res[k] = t.Clone()
					break
				}
			}
		}
	}
	for k, v := range res {
		t, ok := v.(*Tensor)
		if !ok || t == nil || t.Len() != 1 {
			return shpErrf("region result %d is %T, want a rank-0 tensor", k, v)
		}
		if t.Shape.DType != dst[k].Shape.DType {
			return shpErrf("region result %d has element type %v, want %v", k, t.Shape.DType, dst[k].Shape.DType)
		}
		if err := shpSetElem(dst[k], 0, t, 0); err != nil {
			return err
		}
	}
	return nil
}

// shpCmp is a recognised comparator: return compare(arg lhs, arg rhs).
type shpCmp struct {
	lhs, rhs   int
	dir        string
	totalOrder bool
}

// shpRegionCompare recognises a region with nargs rank-0 arguments (element
// types dts[i/2] for sort-style pairs, or all dts[0]) whose body is one
// stablehlo.compare of two arguments of the same type whose compare type
// (if given) is the natural one of that type (FLOAT or TOTALORDER for
// floats, SIGNED for signed integers, UNSIGNED for unsigned and booleans).
// Complex compares are not recognised.
func shpRegionCompare(r *stablehlo.Region, dts []xla.DType, nargs int) *shpCmp {
	if r == nil || len(r.Blocks) != 1 {
		return nil
	}
	b := r.Blocks[0]
	if len(b.Args) != nargs || len(b.Ops) != 2 {
		return nil
	}
	cmp, ret := b.Ops[0], b.Ops[1]
	if cmp.Name != "stablehlo.compare" || !isTerminator(ret.Name) || len(ret.Operands) != 1 ||
		ret.Operands[0] != cmp.Results[0] || len(cmp.Operands) != 2 || len(cmp.Regions) != 0 {
		return nil
	}
	x, y := cmp.Operands[0], cmp.Operands[1]
	if x.Block() != b || y.Block() != b {
		return nil
	}
	xt, ok1 := x.Type.(stablehlo.TensorType)
	yt, ok2 := y.Type.(stablehlo.TensorType)
	if !ok1 || !ok2 || len(xt.Dims) != 0 || len(yt.Dims) != 0 || xt.DType != yt.DType {
		return nil
	}
	for i, a := range b.Args {
		at, ok := a.Type.(stablehlo.TensorType)
		want := dts[0]
		if len(dts) > 1 {
			want = dts[i/2]
		}
		if !ok || len(at.Dims) != 0 || at.DType != want {
			return nil
		}
	}
	c := shpCompareOf(cmp, xt.DType)
	if c == nil {
		return nil
	}
	c.lhs, c.rhs = x.Index(), y.Index()
	return c
}

// shpCompareOf reads the direction and compare type of a stablehlo.compare
// of operands of element type dt, or nil when the compare type is not the
// natural one of dt (see shpRegionCompare) or dt has no typed ordering.
func shpCompareOf(cmp *stablehlo.Op, dt xla.DType) *shpCmp {
	c := &shpCmp{}
	for _, a := range cmp.Attrs {
		switch a.Name {
		case "comparison_direction":
			e, ok := a.Value.(stablehlo.EnumAttr)
			if !ok {
				return nil
			}
			c.dir = e.Value
		case "compare_type":
			e, ok := a.Value.(stablehlo.EnumAttr)
			if !ok {
				return nil
			}
			switch {
			case e.Value == "NOTYPE":
			case e.Value == "TOTALORDER" && dt.IsFloat():
				c.totalOrder = true
			case e.Value == "FLOAT" && dt.IsFloat():
			case e.Value == "SIGNED" && dt.IsInt() && !dt.IsUnsigned() && !dt.IsBool():
			case e.Value == "UNSIGNED" && (dt.IsUnsigned() || dt.IsBool()):
			default:
				return nil
			}
		default:
			return nil
		}
	}
	switch c.dir {
	case "EQ", "NE", "GE", "GT", "LE", "LT":
	default:
		return nil
	}
	if dt.IsComplex() || StorageOf(dt) == StorageInvalid {
		return nil
	}
	return c
}
