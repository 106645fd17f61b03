package interpreter

import (
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Vectorised regions. A region body made of elementwise ops on rank-0
// tensors (the argmax reducer of jnp.argmax, a select region, a map body)
// computes the same thing lane by lane when every value is a vector of n
// lanes instead of a scalar. Where a kernel applies its region
// independently to many positions (reduce to many outputs, reduce_window,
// select_and_scatter's selection, map), it runs the region once per step on
// vectors of all positions instead of once per position: the same ops in the
// same order on each lane, so the results are those of the per-element path,
// without a region call (and its allocations) per element.

// shpVecOps are the ops a vectorised region may hold: elementwise kernels
// that accept any shape whose results have the shape of their operands.
var shpVecOps = map[string]bool{}

func init() {
	for _, n := range []string{"abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex",
		"convert", "cosine", "count_leading_zeros", "divide", "exponential", "exponential_minus_one", "floor",
		"imag", "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply", "negate", "not",
		"or", "popcnt", "power", "real", "remainder", "round_nearest_afz", "round_nearest_even", "rsqrt", "select",
		"shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan",
		"tanh", "xor", "reduce_precision", "bitcast_convert", "optimization_barrier"} {
		shpVecOps["stablehlo."+n] = true
	}
}

// shpVecRef names a value of a vectorised region: a slot of the region's
// own values, or a value captured from the enclosing function.
type shpVecRef struct {
	slot  int
	outer *stablehlo.Value
}

type shpVecOp struct {
	op       *stablehlo.Op // the op in the region
	shadow   *stablehlo.Op // the same op with vector operand and result types
	kernel   Kernel
	in       []shpVecRef
	out      []int
	constant bool
}

// shpVecRegion is a region compiled for n lanes.
type shpVecRegion struct {
	n      int64
	nargs  int
	nslots int
	ops    []shpVecOp
	ret    []shpVecRef
}

type shpVecKey struct {
	r   *stablehlo.Region
	n   int64
	ret *stablehlo.Value // the one value returned instead of the region's results (nil: those)
}

// shpVectorize returns the region compiled for n lanes, or nil when it holds
// anything but elementwise ops on rank-0 tensors.
func shpVectorize(x *Exec, r *stablehlo.Region, n int64) *shpVecRegion {
	return shpVectorizeFor(x, r, n, nil)
}

// shpVectorizeFor is shpVectorize returning ret, a value of the region's
// block, instead of the region's results (nil: those). The compiled
// regions are kept with x's program (Program.vecRegions), so they go
// when it does.
func shpVectorizeFor(x *Exec, r *stablehlo.Region, n int64, ret *stablehlo.Value) *shpVecRegion {
	if x == nil || x.Program == nil || x.Program.vecRegions == nil {
		return shpBuildVec(r, n, ret)
	}
	key := shpVecKey{r, n, ret}
	cache := x.Program.vecRegions
	if v, ok := cache.Load(key); ok {
		return v.(*shpVecRegion)
	}
	v := shpBuildVec(r, n, ret)
	cache.Store(key, v)
	return v
}

func shpScalarType(t stablehlo.Type) (xla.DType, bool) {
	tt, ok := t.(stablehlo.TensorType)
	if !ok || len(tt.Dims) != 0 || StorageOf(tt.DType) == StorageInvalid {
		return 0, false
	}
	return tt.DType, true
}

func shpBuildVec(r *stablehlo.Region, n int64, ret *stablehlo.Value) *shpVecRegion {
	if r == nil || len(r.Blocks) != 1 || n < 1 {
		return nil
	}
	b := r.Blocks[0]
	if len(b.Ops) == 0 || !isTerminator(b.Ops[len(b.Ops)-1].Name) {
		return nil
	}
	v := &shpVecRegion{n: n, nargs: len(b.Args)}
	slots := map[*stablehlo.Value]int{}
	for i, a := range b.Args {
		if _, ok := shpScalarType(a.Type); !ok {
			return nil
		}
		slots[a] = i
	}
	v.nslots = len(b.Args)
	vecType := func(t stablehlo.Type) stablehlo.Type {
		dt, _ := shpScalarType(t)
		return stablehlo.Tensor(dt, n)
	}
	ref := func(x *stablehlo.Value) (shpVecRef, bool) {
		if s, ok := slots[x]; ok {
			return shpVecRef{slot: s}, true
		}
		if _, ok := shpScalarType(x.Type); !ok {
			return shpVecRef{}, false
		}
		// Defined outside the region (an enclosing block's value).
		if x.Block() == b || (x.Op() != nil && x.Op().Parent() == b) {
			return shpVecRef{}, false // defined later in this block: not SSA
		}
		return shpVecRef{slot: -1, outer: x}, true
	}
	for _, op := range b.Ops[:len(b.Ops)-1] {
		if len(op.Regions) != 0 || len(op.Results) == 0 {
			return nil
		}
		for _, res := range op.Results {
			if _, ok := shpScalarType(res.Type); !ok {
				return nil
			}
		}
		vo := shpVecOp{op: op}
		switch {
		case op.Name == "stablehlo.constant" && len(op.Operands) == 0:
			vo.constant = true
		case shpVecOps[op.Name]:
		default:
			return nil
		}
		if vo.kernel = kernelFor(op.Name); vo.kernel == nil {
			return nil
		}
		inTypes := make([]stablehlo.Type, len(op.Operands))
		for i, x := range op.Operands {
			rf, ok := ref(x)
			if !ok {
				return nil
			}
			vo.in = append(vo.in, rf)
			inTypes[i] = vecType(x.Type)
		}
		if !vo.constant {
			outTypes := make([]stablehlo.Type, len(op.Results))
			for i, res := range op.Results {
				outTypes[i] = vecType(res.Type)
			}
			operands := stablehlo.NewOp("shp.vector_operands", nil, inTypes).Results
			vo.shadow = stablehlo.NewOp(op.Name, operands, outTypes, op.Attrs...)
		}
		for _, res := range op.Results {
			slots[res] = v.nslots
			vo.out = append(vo.out, v.nslots)
			v.nslots++
		}
		v.ops = append(v.ops, vo)
	}
	rets := b.Ops[len(b.Ops)-1].Operands
	if ret != nil {
		rets = []*stablehlo.Value{ret}
	}
	for _, x := range rets {
		rf, ok := ref(x)
		if !ok {
			return nil
		}
		v.ret = append(v.ret, rf)
	}
	return v
}

// run evaluates the region on vectors of n lanes (args are rank-1 tensors of
// n elements); the results are rank-1 tensors of n elements.
func (v *shpVecRegion) run(x *Exec, args []*Tensor) ([]*Tensor, error) {
	if len(args) != v.nargs {
		return nil, shpErrf("vectorised region takes %d arguments, got %d", v.nargs, len(args))
	}
	vals := make([]*Tensor, v.nslots)
	copy(vals, args)
	get := func(r shpVecRef) (*Tensor, error) {
		if r.outer == nil {
			return vals[r.slot], nil
		}
		t, err := shpOuterValue(x, r.outer)
		if err != nil {
			return nil, err
		}
		return shpDoBroadcast(t, nil, []int64{v.n})
	}
	in := make([]Value, 0, 4)
	for i := range v.ops {
		vo := &v.ops[i]
		if vo.constant {
			out, err := vo.kernel(x, vo.op, nil)
			if err != nil {
				return nil, shpOpErr(x, vo.op, err)
			}
			for j, o := range out {
				t, ok := o.(*Tensor)
				if !ok || t.Len() != 1 {
					return nil, shpErrf("constant in a region must be a scalar tensor")
				}
				if vals[vo.out[j]], err = shpDoBroadcast(t, nil, []int64{v.n}); err != nil {
					return nil, err
				}
			}
			continue
		}
		in = in[:0]
		for _, r := range vo.in {
			t, err := get(r)
			if err != nil {
				return nil, err
			}
			in = append(in, t)
		}
		if err := x.Ctx.Err(); err != nil {
			return nil, err
		}
		out, err := vo.kernel(x, vo.shadow, in)
		if err != nil {
			return nil, shpOpErr(x, vo.op, err)
		}
		if len(out) != len(vo.out) {
			return nil, shpErrf("%s returned %d values for %d results", vo.op.Name, len(out), len(vo.out))
		}
		for j, o := range out {
			t, ok := o.(*Tensor)
			if !ok || int64(t.Len()) != v.n {
				return nil, shpErrf("%s returned %T for a vector of %d lanes", vo.op.Name, o, v.n)
			}
			vals[vo.out[j]] = t
		}
	}
	res := make([]*Tensor, len(v.ret))
	for i, r := range v.ret {
		t, err := get(r)
		if err != nil {
			return nil, err
		}
		res[i] = t
	}
	return res, nil
}

// shpOpErr wraps an error of an op inside a region like the evaluator does.
func shpOpErr(x *Exec, op *stablehlo.Op, err error) error {
	var f *stablehlo.Func
	if len(x.frames) > 0 {
		f = x.frames[len(x.frames)-1].plan.fn
	}
	return opError(f, op, err)
}

// shpTakeOr sets dst[i] = src[idx[i]], or def's single element where
// idx[i] < 0.
func shpTakeOr(dst, src, def *Tensor, idx []int) error {
	ok := false
	switch d := dst.Data.(type) {
	case []bool:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []int8:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []int16:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []int32:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []int64:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []uint8:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []uint16:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []uint32:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []uint64:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []float32:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []float64:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []complex64:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	case []complex128:
		ok = shpTakeOrT(d, src.Data, def.Data, idx)
	}
	if !ok {
		return shpErrf("cannot move %v elements into %v", src.Shape.DType, dst.Shape.DType)
	}
	return nil
}

func shpTakeOrT[T any](d []T, srcAny, defAny any, idx []int) bool {
	s, ok1 := srcAny.([]T)
	def, ok2 := defAny.([]T)
	if !ok1 || !ok2 || len(def) != 1 {
		return false
	}
	for i, j := range idx {
		if j < 0 {
			d[i] = def[0]
		} else {
			d[i] = s[j]
		}
	}
	return true
}

// shpVecResults checks that a vectorised region returned vectors of the
// wanted element types.
func shpVecResults(res []*Tensor, dts []xla.DType) error {
	if len(res) != len(dts) {
		return shpErrf("region returned %d values, want %d", len(res), len(dts))
	}
	for k, t := range res {
		if t.Shape.DType != dts[k] {
			return shpErrf("region result %d has element type %v, want %v", k, t.Shape.DType, dts[k])
		}
	}
	return nil
}

// shpOuterValue reads a value of the enclosing function from the current
// frame.
func shpOuterValue(x *Exec, v *stablehlo.Value) (*Tensor, error) {
	if len(x.frames) == 0 {
		return nil, shpErrf("no frame for a captured value")
	}
	fr := x.frames[len(x.frames)-1]
	s, ok := fr.plan.slots[v]
	if !ok {
		return nil, shpErrf("captured value is not in this function")
	}
	t, ok := fr.vals[s].(*Tensor)
	if !ok || t == nil || t.Len() != 1 {
		return nil, shpErrf("captured value is %T, want a rank-0 tensor", fr.vals[s])
	}
	return t, nil
}

// shpVecTensor returns an n-element rank-1 tensor of dtype dt.
func shpVecTensor(dt xla.DType, n int64) *Tensor {
	return NewTensor(xla.MakeShape(dt, n))
}
