package pallas

// A reference evaluator of *Program written only from ir.go's contract
// comment and the exported types' doc comments, not from the lowerings:
// TestIRReferenceEvaluator runs it against interpret mode, so that the
// contract a new lowering (Mosaic) is written from stays complete and
// true. The comments marked "contract:" are the rules it relies on that
// ir.go states since it was first written (guesses then).

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"slices"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// zt is a dense row-major block value: floats as float64 (rounded to the
// dtype), integers as int64 (wrapped to the dtype; u64 as its bits), bools.
type zt struct {
	dt    xla.DType
	shape []int64
	f     []float64
	i     []int64
	b     []bool
}

func zsize(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}

func newZT(dt xla.DType, shape []int64) *zt {
	t := &zt{dt: dt, shape: append([]int64{}, shape...)}
	n := zsize(shape)
	switch {
	case dt.IsFloat():
		t.f = make([]float64, n)
	case dt.IsInt():
		t.i = make([]int64, n)
	case dt.IsBool():
		t.b = make([]bool, n)
	default:
		panic(fmt.Sprintf("zz eval: unsupported dtype %v", dt))
	}
	return t
}

func (t *zt) n() int64 { return zsize(t.shape) }

func (t *zt) clone() *zt {
	c := &zt{dt: t.dt, shape: append([]int64{}, t.shape...)}
	c.f = append([]float64(nil), t.f...)
	c.i = append([]int64(nil), t.i...)
	c.b = append([]bool(nil), t.b...)
	return c
}

// copyElem copies element j of src to element i of dst (same dtype).
func (t *zt) copyElem(i int64, src *zt, j int64) {
	switch {
	case t.f != nil:
		t.f[i] = src.f[j]
	case t.i != nil:
		t.i[i] = src.i[j]
	default:
		t.b[i] = src.b[j]
	}
}

func zstrides(s []int64) []int64 {
	st := make([]int64, len(s))
	m := int64(1)
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = m
		m *= s[i]
	}
	return st
}

func unravel(i int64, s []int64) []int64 {
	idx := make([]int64, len(s))
	for d := len(s) - 1; d >= 0; d-- {
		if s[d] > 0 {
			idx[d] = i % s[d]
			i /= s[d]
		}
	}
	return idx
}

func ravel(idx, s []int64) int64 {
	var o int64
	for d := range s {
		o = o*s[d] + idx[d]
	}
	return o
}

// roundPrec rounds x once to a binary float with prec significand bits,
// minimum normal exponent emin and largest finite value maxv.
func roundPrec(x float64, prec int, emin int, maxv float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	_, e := math.Frexp(x) // x = fr * 2^e, fr in [0.5,1): exponent E = e-1
	E := e - 1
	if E < emin {
		E = emin
	}
	ulp := math.Ldexp(1, E-prec+1)
	r := math.RoundToEven(x/ulp) * ulp
	if math.Abs(r) > maxv {
		return math.Copysign(math.Inf(1), x)
	}
	return r
}

func roundF(dt xla.DType, x float64) float64 {
	switch dt {
	case xla.Float64:
		return x
	case xla.Float32:
		return float64(float32(x))
	case xla.Float16:
		return roundPrec(x, 11, -14, 65504)
	case xla.BFloat16:
		return roundPrec(x, 8, -126, float64(math.MaxFloat32)*(1-math.Ldexp(1, -8))/(1-math.Ldexp(1, -24)))
	}
	panic(fmt.Sprintf("zz eval: unsupported float dtype %v", dt))
}

func wrapI(dt xla.DType, x int64) int64 {
	b := dt.Bits()
	if b >= 64 {
		return x
	}
	if dt.IsUnsigned() {
		return x & (1<<b - 1)
	}
	s := 64 - b
	return x << s >> s
}

func intMin(dt xla.DType) int64 {
	if dt.IsUnsigned() {
		return 0
	}
	return -1 << (dt.Bits() - 1)
}

func intMax(dt xla.DType) int64 {
	if dt.IsUnsigned() {
		if dt.Bits() >= 64 {
			return -1 // all ones
		}
		return 1<<dt.Bits() - 1
	}
	return 1<<(dt.Bits()-1) - 1
}

// icmp compares two integers of dt: -1, 0, 1.
func icmp(dt xla.DType, a, b int64) int {
	if dt.IsUnsigned() {
		ua, ub := uint64(a), uint64(b)
		switch {
		case ua < ub:
			return -1
		case ua > ub:
			return 1
		}
		return 0
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func itof(dt xla.DType, x int64) float64 {
	if dt.IsUnsigned() {
		return float64(uint64(x))
	}
	return float64(x)
}

// --- conversion from/to interpreter tensors ---

func fromTensor(x *interpreter.Tensor) *zt {
	t := newZT(x.Shape.DType, x.Shape.Dims)
	v := reflect.ValueOf(x.Data)
	for i := 0; i < v.Len(); i++ {
		e := v.Index(i)
		switch {
		case t.f != nil:
			t.f[i] = e.Convert(reflect.TypeOf(float64(0))).Float()
		case t.i != nil:
			switch e.Kind() {
			case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				t.i[i] = int64(e.Uint())
			default:
				t.i[i] = e.Int()
			}
		default:
			t.b[i] = e.Bool()
		}
	}
	return t
}

func toTensor(t *zt) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(t.dt, t.shape...))
	v := reflect.ValueOf(x.Data)
	for i := 0; i < v.Len(); i++ {
		e := v.Index(i)
		switch {
		case t.f != nil:
			e.SetFloat(t.f[i])
		case t.i != nil:
			switch e.Kind() {
			case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				e.SetUint(uint64(t.i[i]))
			default:
				e.SetInt(t.i[i])
			}
		default:
			e.SetBool(t.b[i])
		}
	}
	return x
}

// --- refs ---

// zref is what a ref Value denotes during one grid step: a buffer of the
// ref's (kernel-visible) shape, and which of its elements lie inside the
// operand (edge blocks may hang over the array).
type zref struct {
	buf    *zt
	inside []bool // nil: all inside
}

// contract: the contract does not say what a block element past the array's
// edge reads; TTIR tests' comments say NaN (the minimum integer).
func padValue(t *zt, i int64) {
	switch {
	case t.f != nil:
		t.f[i] = math.NaN()
	case t.i != nil:
		t.i[i] = intMin(t.dt)
	default:
		t.b[i] = false
	}
}

// --- evaluator ---

type zeval struct {
	p       *Program
	gridIdx []int64
	env     map[*Value]*zt
	refs    map[*Value]*zref
	steps   int64 // loop guard
}

type zerr struct{ msg string }

func zfail(format string, args ...any) { panic(zerr{fmt.Sprintf(format, args...)}) }

func (e *zeval) val(v *Value) *zt {
	t, ok := e.env[v]
	if !ok {
		zfail("value %%%d used before definition", v.ID)
	}
	return t
}

func scalarInt(t *zt) int64 {
	if t.n() != 1 || t.i == nil {
		zfail("want an integer scalar, got %v%v", t.dt, t.shape)
	}
	return t.i[0]
}

func scalarBool(t *zt) bool {
	if t.n() != 1 || t.b == nil {
		zfail("want a bool scalar, got %v%v", t.dt, t.shape)
	}
	return t.b[0]
}

func (e *zeval) runRegion(r *Region, args []*zt) []*zt {
	if len(args) != len(r.Args) {
		zfail("region takes %d args, got %d", len(r.Args), len(args))
	}
	for i, a := range r.Args {
		e.env[a] = args[i]
	}
	for _, op := range r.Ops {
		e.runOp(op)
	}
	out := make([]*zt, len(r.Yield))
	for i, y := range r.Yield {
		out[i] = e.val(y)
	}
	return out
}

func checkType(op *Op, t *zt, want Type) {
	if t.dt != want.DType || !sameShape(t.shape, want.Shape) {
		zfail("%s: computed %v%v, result type says %v", op.Name, t.dt, t.shape, want)
	}
}

func (e *zeval) runOp(op *Op) {
	var res *zt
	rt := func() Type { return op.Results[0].Type }
	switch op.Name {
	case "const":
		t := rt()
		res = newZT(t.DType, t.Shape)
		for i := int64(0); i < res.n(); i++ {
			switch v := op.Attrs.Value.(type) {
			case float64:
				if res.f == nil {
					zfail("const: float64 value for %v", t.DType)
				}
				res.f[i] = roundF(t.DType, v)
			case int64:
				switch {
				case res.i != nil:
					res.i[i] = wrapI(t.DType, v)
				default:
					zfail("const: int64 value for %v", t.DType)
				}
			case bool:
				if res.b == nil {
					zfail("const: bool value for %v", t.DType)
				}
				res.b[i] = v
			default:
				zfail("const: value of Go type %T", op.Attrs.Value)
			}
		}
	case "iota":
		t := rt()
		res = newZT(t.DType, t.Shape)
		for i := int64(0); i < res.n(); i++ {
			c := unravel(i, t.Shape)[op.Attrs.Dim]
			if res.f != nil {
				res.f[i] = roundF(t.DType, float64(c))
			} else {
				res.i[i] = wrapI(t.DType, c)
			}
		}
	case "program_id", "num_programs":
		res = newZT(xla.Int32, nil)
		if op.Name == "program_id" {
			res.i[0] = e.gridIdx[op.Attrs.Axis]
		} else {
			res.i[0] = e.p.Grid[op.Attrs.Axis]
		}
	case "neg", "exp", "log", "tanh", "erf", "sqrt", "rsqrt", "abs", "floor", "ceil", "sin", "cos", "logistic", "not",
		"log1p", "expm1", "tan", "round", "sign", "exp2", "log2", "asin", "acos", "atan", "sinh", "cosh",
		"asinh", "acosh", "atanh", "cbrt", "erf_inv", "erfc", "lgamma", "popcnt", "clz":
		res = e.unary(op.Name, e.val(op.Operands[0]))
	case "is_finite":
		x := e.val(op.Operands[0])
		res = newZT(xla.Bool, x.shape)
		for i := range x.f {
			res.b[i] = !math.IsInf(x.f[i], 0) && !math.IsNaN(x.f[i])
		}
	case "add", "sub", "mul", "div", "rem", "max", "min", "pow", "and", "or", "xor", "shl", "shr", "atan2":
		switch {
		case op.Name == "add" && refZeroConst(op.Operands[0]):
			res = e.val(op.Operands[1]).clone() // 0 + x is x, -0 kept
		case (op.Name == "add" || op.Name == "sub") && refZeroConst(op.Operands[1]):
			res = e.val(op.Operands[0]).clone()
		default:
			res = e.binary(op.Name, e.val(op.Operands[0]), e.val(op.Operands[1]))
		}
	case "cmp":
		res = e.cmp(op.Attrs.Dir, e.val(op.Operands[0]), e.val(op.Operands[1]))
	case "select":
		p, x, y := e.val(op.Operands[0]), e.val(op.Operands[1]), e.val(op.Operands[2])
		res = x.clone()
		for i := int64(0); i < res.n(); i++ {
			if !p.b[i] {
				res.copyElem(i, y, i)
			}
		}
	case "convert":
		res = convertZT(e.val(op.Operands[0]), rt().DType)
	case "bitcast":
		res = bitcastZT(e.val(op.Operands[0]), rt().DType)
	case "broadcast_in_dim":
		x := e.val(op.Operands[0])
		t := rt()
		res = newZT(t.DType, t.Shape)
		for i := int64(0); i < res.n(); i++ {
			ri := unravel(i, t.Shape)
			xi := make([]int64, len(x.shape))
			for d, rd := range op.Attrs.Dims {
				if x.shape[d] == 1 { // contract: a size-1 operand dim expands
					xi[d] = 0
				} else {
					xi[d] = ri[rd]
				}
			}
			res.copyElem(i, x, ravel(xi, x.shape))
		}
	case "reshape":
		res = e.val(op.Operands[0]).clone()
		res.shape = append([]int64{}, rt().Shape...)
	case "assoc_scan":
		// contract: element i folds elements 0..i (Reverse: n-1 down to
		// i) by the combine region; folded here in order.
		xs := make([]*zt, len(op.Operands))
		for q, o := range op.Operands {
			xs[q] = e.val(o)
		}
		shape, axis := xs[0].shape, op.Attrs.Axis
		n := shape[axis]
		outs := make([]*zt, len(xs))
		for q, x := range xs {
			outs[q] = newZT(x.dt, shape)
		}
		scalar := func(x *zt, at int64) *zt {
			s := newZT(x.dt, nil)
			s.copyElem(0, x, at)
			return s
		}
		for i := int64(0); i < xs[0].n(); i++ {
			c := unravel(i, shape)
			if c[axis] != 0 {
				continue // i starts a line along the axis
			}
			var acc []*zt
			for step := int64(0); step < n; step++ {
				c[axis] = step
				if op.Attrs.Reverse {
					c[axis] = n - 1 - step
				}
				at := ravel(c, shape)
				next := make([]*zt, len(xs))
				for q, x := range xs {
					next[q] = scalar(x, at)
				}
				if acc == nil {
					acc = next
				} else {
					acc = e.runRegion(op.Regions[0], append(slices.Clone(acc), next...))
				}
				for q := range xs {
					outs[q].copyElem(at, acc[q], 0)
				}
			}
		}
		for q, r := range op.Results {
			checkType(op, outs[q], r.Type)
			e.env[r] = outs[q]
		}
		return
	case "gather":
		// contract: r[i] = x[i with its coordinate along Axis idx[i]],
		// idx in range.
		x, idx, t := e.val(op.Operands[0]), e.val(op.Operands[1]), rt()
		res = newZT(t.DType, t.Shape)
		for i := int64(0); i < res.n(); i++ {
			ri := unravel(i, t.Shape)
			p := idx.i[i]
			if p < 0 || p >= x.shape[op.Attrs.Axis] {
				zfail("gather: position %d outside axis %d of %v", p, op.Attrs.Axis, x.shape)
			}
			ri[op.Attrs.Axis] = p
			res.copyElem(i, x, ravel(ri, x.shape))
		}
	case "slice":
		// contract: elements [Start, Start+n) along Axis.
		x, t := e.val(op.Operands[0]), rt()
		res = newZT(t.DType, t.Shape)
		for i := int64(0); i < res.n(); i++ {
			ri := unravel(i, t.Shape)
			ri[op.Attrs.Axis] += op.Attrs.Start
			res.copyElem(i, x, ravel(ri, x.shape))
		}
	case "concatenate":
		// contract: the operands end to end along Axis.
		t := rt()
		res = newZT(t.DType, t.Shape)
		for i := int64(0); i < res.n(); i++ {
			ri := unravel(i, t.Shape)
			for _, o := range op.Operands {
				x := e.val(o)
				if n := x.shape[op.Attrs.Axis]; ri[op.Attrs.Axis] >= n {
					ri[op.Attrs.Axis] -= n
					continue
				}
				res.copyElem(i, x, ravel(ri, x.shape))
				break
			}
		}
	case "transpose":
		// contract: result dim i is operand dim Perm[i] (StableHLO's rule).
		x := e.val(op.Operands[0])
		t := rt()
		res = newZT(t.DType, t.Shape)
		for i := int64(0); i < res.n(); i++ {
			ri := unravel(i, t.Shape)
			xi := make([]int64, len(x.shape))
			for rd, xd := range op.Attrs.Perm {
				xi[xd] = ri[rd]
			}
			res.copyElem(i, x, ravel(xi, x.shape))
		}
	case "reduce":
		res = e.reduce(op.Attrs.Kind, op.Attrs.Axes, e.val(op.Operands[0]), rt())
	case "scan":
		res = e.scan(op.Attrs.Kind, op.Attrs.Axis, op.Attrs.Reverse, e.val(op.Operands[0]), rt())
	case "dot":
		res = e.dot(op, e.val(op.Operands[0]), e.val(op.Operands[1]), rt())
	case "load":
		res = e.load(op)
	case "store":
		e.store(op)
	case "atomic":
		res = e.atomic(op)
	case "debug_print": // no effect on values
	case "when":
		var ys []*zt
		switch {
		case scalarBool(e.val(op.Operands[0])):
			ys = e.runRegion(op.Regions[0], nil)
		case len(op.Regions) > 1:
			ys = e.runRegion(op.Regions[1], nil)
		}
		for i, r := range op.Results {
			e.env[r] = ys[i]
		}
		return
	case "for":
		lo, hi := scalarInt(e.val(op.Operands[0])), scalarInt(e.val(op.Operands[1]))
		carry := make([]*zt, len(op.Operands)-2)
		for i := range carry {
			carry[i] = e.val(op.Operands[2+i])
		}
		for i := lo; i < hi; i++ {
			iv := newZT(xla.Int32, nil)
			iv.i[0] = i
			carry = e.runRegion(op.Regions[0], append([]*zt{iv}, carry...))
		}
		for i, r := range op.Results {
			e.env[r] = carry[i]
		}
		return
	case "while":
		carry := make([]*zt, len(op.Operands))
		for i := range carry {
			carry[i] = e.val(op.Operands[i])
		}
		for {
			e.steps++
			if e.steps > 1e6 {
				zfail("while: too many iterations")
			}
			c := e.runRegion(op.Regions[0], carry)
			if len(c) != 1 || !scalarBool(c[0]) {
				break
			}
			carry = e.runRegion(op.Regions[1], carry)
		}
		for i, r := range op.Results {
			e.env[r] = carry[i]
		}
		return
	default:
		zfail("op %q is not in the contract's op table", op.Name)
	}
	if len(op.Results) > 0 {
		checkType(op, res, op.Results[0].Type)
		e.env[op.Results[0]] = res
	}
}

func (e *zeval) unary(name string, x *zt) *zt {
	r := newZT(x.dt, x.shape)
	for i := int64(0); i < x.n(); i++ {
		switch {
		case x.f != nil:
			v := x.f[i]
			var y float64
			switch name {
			case "neg":
				y = -v
			case "exp":
				y = special.RealExp(v)
			case "log":
				y = special.RealLog(v)
			case "tanh":
				y = math.Tanh(v)
			case "erf":
				y = math.Erf(v)
			case "sqrt":
				y = math.Sqrt(v)
			case "rsqrt":
				y = 1 / math.Sqrt(v)
			case "abs":
				y = math.Abs(v)
			case "floor":
				y = math.Floor(v)
			case "ceil":
				y = math.Ceil(v)
			case "sin":
				y = math.Sin(v)
			case "cos":
				y = math.Cos(v)
			case "logistic":
				y = 1 / (1 + math.Exp(-v))
			case "log1p":
				y = math.Log1p(v)
			case "expm1":
				y = math.Expm1(v)
			case "tan":
				y = math.Tan(v)
			case "round":
				y = math.RoundToEven(v)
			case "exp2":
				y = math.Exp2(v)
			case "log2":
				y = special.RealLog2(v)
			case "asin":
				y = special.RealAsin(v)
			case "acos":
				y = special.RealAcos(v)
			case "atan":
				y = math.Atan(v)
			case "sinh":
				y = special.RealSinh(v)
			case "cosh":
				y = special.RealCosh(v)
			case "asinh":
				y = math.Asinh(v)
			case "acosh":
				y = math.Acosh(v)
			case "atanh":
				y = math.Atanh(v)
			case "cbrt":
				y = math.Cbrt(v)
			case "erf_inv":
				y = special.ErfInv(v)
			case "erfc":
				y = math.Erfc(v)
			case "lgamma":
				y = special.Lgamma(v)
			case "sign": // contract: ±0 and NaN are kept
				y = v
				if v > 0 {
					y = 1
				} else if v < 0 {
					y = -1
				}
			default:
				zfail("%s on %v", name, x.dt)
			}
			r.f[i] = roundF(x.dt, y)
		case x.i != nil:
			v := x.i[i]
			var y int64
			switch name {
			case "neg":
				y = -v
			case "abs":
				y = v
				if v < 0 && !x.dt.IsUnsigned() {
					y = -v
				}
			case "not": // contract: bitwise on integers
				y = ^v
			case "popcnt", "clz": // contract: of the dtype's bits
				w := x.dt.Bits()
				u := uint64(v) & mask(w)
				if name == "popcnt" {
					y = int64(bits.OnesCount64(u))
				} else {
					y = int64(bits.LeadingZeros64(u) - (64 - w))
				}
			case "sign":
				y = 0
				if icmp(x.dt, v, 0) > 0 {
					y = 1
				} else if v < 0 && !x.dt.IsUnsigned() {
					y = -1
				}
			default:
				zfail("%s on %v", name, x.dt)
			}
			r.i[i] = wrapI(x.dt, y)
		default:
			if name != "not" {
				zfail("%s on bool", name)
			}
			r.b[i] = !x.b[i]
		}
	}
	return r
}

// fmax/fmin: contract: NaN propagates, -0 < +0.
func fmax(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

func fmin(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

func (e *zeval) binary(name string, x, y *zt) *zt {
	if x.dt != y.dt || !sameShape(x.shape, y.shape) {
		zfail("%s: operands %v%v and %v%v differ", name, x.dt, x.shape, y.dt, y.shape)
	}
	r := newZT(x.dt, x.shape)
	for i := int64(0); i < x.n(); i++ {
		switch {
		case x.f != nil:
			a, b := x.f[i], y.f[i]
			var v float64
			switch name {
			case "add":
				v = a + b
			case "sub":
				v = a - b
			case "mul":
				v = a * b
			case "div":
				v = a / b
			case "rem": // contract: fmod (sign of the dividend)
				v = math.Mod(a, b)
			case "max":
				v = fmax(a, b)
			case "min":
				v = fmin(a, b)
			case "pow":
				v = special.RealPow(a, b)
			case "atan2":
				v = special.Atan2(a, b)
			default:
				zfail("%s on %v", name, x.dt)
			}
			r.f[i] = roundF(x.dt, v)
		case x.i != nil:
			a, b := x.i[i], y.i[i]
			var v int64
			u := x.dt.IsUnsigned()
			switch name {
			case "add":
				v = a + b
			case "sub":
				v = a - b
			case "mul":
				v = a * b
			case "div", "rem":
				// contract: truncating division; x/0 = -1 (all ones), x%0 = x
				// (StableHLO's rule); MIN/-1 wraps.
				switch {
				case b == 0 && name == "div":
					v = -1
				case b == 0:
					v = a
				case u && name == "div":
					v = int64(uint64(a) / uint64(b))
				case u:
					v = int64(uint64(a) % uint64(b))
				case b == -1 && name == "div":
					v = -a
				case b == -1:
					v = 0
				case name == "div":
					v = a / b
				default:
					v = a % b
				}
			case "max":
				v = a
				if icmp(x.dt, b, a) > 0 {
					v = b
				}
			case "min":
				v = a
				if icmp(x.dt, b, a) < 0 {
					v = b
				}
			case "and":
				v = a & b
			case "or":
				v = a | b
			case "xor":
				v = a ^ b
			case "shl", "shr":
				// contract: the amount read as unsigned; the width or
				// more gives 0, or the sign fill shifting a signed value
				// right (XLA's shifts).
				bits := uint64(x.dt.Bits())
				amt := uint64(b) & (1<<bits - 1)
				if bits == 64 {
					amt = uint64(b)
				}
				av := a // signed: sign-extended; unsigned: its bits
				switch {
				case name == "shl" && amt >= bits, name == "shr" && u && amt >= bits:
					v = 0
				case name == "shr" && amt >= bits:
					v = a >> 63
				case name == "shl":
					v = av << amt
				case u:
					v = int64(uint64(av) >> amt)
				default:
					v = av >> amt
				}
			default:
				zfail("%s on %v", name, x.dt)
			}
			r.i[i] = wrapI(x.dt, v)
		default:
			a, b := x.b[i], y.b[i]
			switch name {
			case "and":
				r.b[i] = a && b
			case "or":
				r.b[i] = a || b
			case "xor":
				r.b[i] = a != b
			default:
				zfail("%s on bool", name)
			}
		}
	}
	return r
}

func (e *zeval) cmp(dir string, x, y *zt) *zt {
	r := newZT(xla.Bool, x.shape)
	for i := int64(0); i < x.n(); i++ {
		var c int
		unordered := false
		switch {
		case x.f != nil:
			a, b := x.f[i], y.f[i]
			switch {
			case math.IsNaN(a) || math.IsNaN(b):
				unordered = true
			case a < b:
				c = -1
			case a > b:
				c = 1
			}
		case x.i != nil:
			c = icmp(x.dt, x.i[i], y.i[i])
		default:
			a, b := x.b[i], y.b[i]
			switch { // contract: false < true
			case !a && b:
				c = -1
			case a && !b:
				c = 1
			}
		}
		var v bool
		switch dir {
		case "EQ":
			v = !unordered && c == 0
		case "NE":
			v = unordered || c != 0
		case "LT":
			v = !unordered && c < 0
		case "LE":
			v = !unordered && c <= 0
		case "GT":
			v = !unordered && c > 0
		case "GE":
			v = !unordered && c >= 0
		default:
			zfail("cmp: direction %q", dir)
		}
		r.b[i] = v
	}
	return r
}

func convertZT(x *zt, dt xla.DType) *zt {
	r := newZT(dt, x.shape)
	for i := int64(0); i < x.n(); i++ {
		switch {
		case r.f != nil:
			switch {
			case x.f != nil:
				r.f[i] = roundF(dt, x.f[i])
			case x.i != nil:
				r.f[i] = zzIntToFloat(dt, x.dt, x.i[i])
			default:
				if x.b[i] {
					r.f[i] = 1
				}
			}
		case r.i != nil:
			switch {
			case x.f != nil:
				// contract (convert): truncate toward
				// zero, saturate, NaN -> 0.
				v := math.Trunc(x.f[i])
				lo, hi := itof(dt, intMin(dt)), itof(dt, intMax(dt))
				switch {
				case math.IsNaN(v):
					r.i[i] = 0
				case v <= lo:
					r.i[i] = intMin(dt)
				case v >= hi:
					r.i[i] = intMax(dt)
				case dt.IsUnsigned():
					r.i[i] = int64(uint64(v))
				default:
					r.i[i] = int64(v)
				}
			case x.i != nil:
				r.i[i] = wrapI(dt, x.i[i])
			default:
				if x.b[i] {
					r.i[i] = 1
				}
			}
		default:
			switch { // contract: x != 0
			case x.f != nil:
				r.b[i] = x.f[i] != 0
			case x.i != nil:
				r.b[i] = x.i[i] != 0
			default:
				r.b[i] = x.b[i]
			}
		}
	}
	return r
}

func (e *zeval) reduce(kind string, axes []int64, x *zt, t Type) *zt {
	r := newZT(t.DType, t.Shape)
	drop := make([]bool, len(x.shape))
	for _, a := range axes {
		drop[a] = true
	}
	// identities
	for i := int64(0); i < r.n(); i++ {
		switch {
		case r.f != nil:
			r.f[i] = map[string]float64{"sum": 0, "prod": 1, "max": math.Inf(-1), "min": math.Inf(1)}[kind]
		case r.i != nil:
			r.i[i] = map[string]int64{"sum": 0, "prod": 1, "max": intMin(t.DType), "min": intMax(t.DType)}[kind]
		default:
			zfail("reduce on bool")
		}
	}
	for i := int64(0); i < x.n(); i++ {
		xi := unravel(i, x.shape)
		var ri []int64
		for d, c := range xi {
			if !drop[d] {
				ri = append(ri, c)
			}
		}
		j := ravel(ri, t.Shape)
		switch {
		case r.f != nil:
			switch kind {
			case "sum":
				r.f[j] += x.f[i] // rounded at the end
			case "prod":
				r.f[j] *= x.f[i]
			case "max":
				r.f[j] = fmax(r.f[j], x.f[i])
			case "min":
				r.f[j] = fmin(r.f[j], x.f[i])
			default:
				zfail("reduce kind %q", kind)
			}
		default:
			switch kind {
			case "sum":
				r.i[j] = wrapI(t.DType, r.i[j]+x.i[i])
			case "prod":
				r.i[j] = wrapI(t.DType, r.i[j]*x.i[i])
			case "max":
				if icmp(t.DType, x.i[i], r.i[j]) > 0 {
					r.i[j] = x.i[i]
				}
			case "min":
				if icmp(t.DType, x.i[i], r.i[j]) < 0 {
					r.i[j] = x.i[i]
				}
			default:
				zfail("reduce kind %q", kind)
			}
		}
	}
	if r.f != nil {
		for i := range r.f {
			r.f[i] = roundF(t.DType, r.f[i])
		}
	}
	return r
}

// scan folds x along axis in order: element i is the fold of elements
// 0..i (contract: a sum starts from +0, floats rounded once per element
// from the exact-ish float64 fold, as the reduce above).
func (e *zeval) scan(kind string, axis int, reverse bool, x *zt, t Type) *zt {
	if reverse { // the forward scan of x flipped along axis, flipped back
		return zflip(e.scan(kind, axis, false, zflip(x, axis), t), axis)
	}
	r := newZT(t.DType, t.Shape)
	stride := zsize(x.shape[axis+1:])
	var acc []float64 // per element: the float fold before rounding
	if r.f != nil {
		acc = make([]float64, len(r.f))
	}
	for i := int64(0); i < x.n(); i++ {
		first := unravel(i, x.shape)[axis] == 0
		switch {
		case r.f != nil:
			v := x.f[i]
			if !first {
				p := acc[i-stride]
				switch kind {
				case "sum":
					v = p + v
				case "prod":
					v = p * v
				case "max":
					v = fmax(p, v)
				case "min":
					v = fmin(p, v)
				default:
					zfail("scan kind %q", kind)
				}
			} else if kind == "sum" {
				v += 0 // from +0: -0 becomes +0
			}
			acc[i] = v
			r.f[i] = roundF(t.DType, v)
		case r.i != nil:
			v := x.i[i]
			if !first {
				p := r.i[i-stride]
				switch kind {
				case "sum":
					v = wrapI(t.DType, p+v)
				case "prod":
					v = wrapI(t.DType, p*v)
				case "max":
					if icmp(t.DType, p, v) > 0 {
						v = p
					}
				case "min":
					if icmp(t.DType, p, v) < 0 {
						v = p
					}
				default:
					zfail("scan kind %q", kind)
				}
			}
			r.i[i] = v
		default:
			zfail("scan on bool")
		}
	}
	return r
}

// zflip is x with the elements along axis in reverse order.
func zflip(x *zt, axis int) *zt {
	r := newZT(x.dt, x.shape)
	for i := int64(0); i < x.n(); i++ {
		xi := unravel(i, x.shape)
		xi[axis] = x.shape[axis] - 1 - xi[axis]
		r.copyElem(i, x, ravel(xi, x.shape))
	}
	return r
}

func (e *zeval) dot(op *Op, a, b *zt, t Type) *zt {
	// contract: 3-D operands are batches of matrices (the last two dims).
	if len(a.shape) == 3 {
		nb := a.shape[0]
		mat := func(x *zt, i int64) *zt { // x[i] as a matrix
			y := newZT(x.dt, x.shape[1:])
			for j := int64(0); j < y.n(); j++ {
				y.copyElem(j, x, i*y.n()+j)
			}
			return y
		}
		r := newZT(t.DType, t.Shape)
		for i := int64(0); i < nb; i++ {
			ri := e.dot(op, mat(a, i), mat(b, i), Type{DType: t.DType, Shape: t.Shape[1:]})
			for j := int64(0); j < ri.n(); j++ {
				r.copyElem(i*ri.n()+j, ri, j)
			}
		}
		return r
	}
	m, k := a.shape[0], a.shape[1]
	if op.Attrs.TransA {
		m, k = k, m
	}
	n := b.shape[1]
	if op.Attrs.TransB {
		n = b.shape[0]
	}
	at := func(i, j int64) int64 { // a[i,k]
		if op.Attrs.TransA {
			return j*a.shape[1] + i
		}
		return i*a.shape[1] + j
	}
	bt := func(i, j int64) int64 { // b[k,j]
		if op.Attrs.TransB {
			return j*b.shape[1] + i
		}
		return i*b.shape[1] + j
	}
	r := newZT(t.DType, []int64{m, n})
	// contract: operands converted (exactly) to r's dtype, products summed in it.
	for i := int64(0); i < m; i++ {
		for j := int64(0); j < n; j++ {
			var sf float64
			var si int64
			for kk := int64(0); kk < k; kk++ {
				ai, bi := at(i, kk), bt(kk, j)
				switch {
				case a.f != nil:
					sf += a.f[ai] * b.f[bi]
				default:
					si += a.i[ai] * b.i[bi]
					if r.f != nil {
						sf += itof(a.dt, a.i[ai]) * itof(b.dt, b.i[bi])
					}
				}
			}
			if r.f != nil {
				r.f[i*n+j] = roundF(t.DType, sf)
			} else {
				r.i[i*n+j] = wrapI(t.DType, si)
			}
		}
	}
	return r
}

// indexed walks the Indexer: for every element of the indexed shape (row
// major) it calls f with the element's position and the ref coordinates.
func (e *zeval) indexed(op *Op, f func(i int64, coord []int64)) {
	ix := op.Attrs.Indexer
	dyn := op.Operands[1 : 1+ix.NumOperands]
	starts := make([]int64, len(ix.Dims))
	for d, di := range ix.Dims {
		starts[d] = di.Start
		if di.Operand >= 0 && di.Kind != DimArray {
			starts[d] = scalarInt(e.val(dyn[di.Operand]))
		}
	}
	nArr := len(ix.ArrayShape)
	for i := int64(0); i < zsize(ix.Shape); i++ {
		ri := unravel(i, ix.Shape)
		var arrIdx []int64
		var sliceIdx []int64
		if ix.HasArrays() {
			sliceIdx = append(append([]int64{}, ri[:ix.ArrayPos]...), ri[ix.ArrayPos+nArr:]...)
			arrIdx = ri[ix.ArrayPos : ix.ArrayPos+nArr]
		} else {
			sliceIdx = ri
		}
		coord := make([]int64, len(ix.Dims))
		s := 0
		for d, di := range ix.Dims {
			switch di.Kind {
			case DimSlice:
				coord[d] = starts[d] + sliceIdx[s]
				s++
			case DimPoint:
				coord[d] = starts[d]
			case DimArray:
				arr := e.val(dyn[di.Operand])
				if !sameShape(arr.shape, ix.ArrayShape) {
					zfail("index array %v%v, ArrayShape %v", arr.dt, arr.shape, ix.ArrayShape)
				}
				coord[d] = arr.i[ravel(arrIdx, ix.ArrayShape)]
			}
		}
		f(i, coord)
	}
}

func inBounds(coord, shape []int64) bool {
	for d := range shape {
		if coord[d] < 0 || coord[d] >= shape[d] {
			return false
		}
	}
	return true
}

func (e *zeval) refOf(v *Value) *zref {
	r, ok := e.refs[v]
	if !ok {
		zfail("operand %%%d is not a ref", v.ID)
	}
	return r
}

func (e *zeval) load(op *Op) *zt {
	ix := op.Attrs.Indexer
	ref := e.refOf(op.Operands[0])
	var mask, other *zt
	k := 1 + ix.NumOperands
	if ix.HasMask {
		mask = e.val(op.Operands[k])
		k++
	}
	if ix.HasOther {
		other = e.val(op.Operands[k])
	}
	res := newZT(ref.buf.dt, ix.Shape)
	e.indexed(op, func(i int64, coord []int64) {
		if mask != nil && !mask.b[i] {
			if other != nil {
				res.copyElem(i, other, i)
			}
			return // contract: masked off without other: zero
		}
		if !inBounds(coord, ref.buf.shape) {
			zfail("load %v outside ref %v at %v", coord, ref.buf.shape, op.Loc)
		}
		j := ravel(coord, ref.buf.shape)
		if ref.inside != nil && !ref.inside[j] {
			padValue(res, i)
			return
		}
		res.copyElem(i, ref.buf, j)
	})
	return res
}

func (e *zeval) store(op *Op) {
	ix := op.Attrs.Indexer
	ref := e.refOf(op.Operands[0])
	k := 1 + ix.NumOperands
	val := e.val(op.Operands[k])
	var mask *zt
	if ix.HasMask {
		mask = e.val(op.Operands[k+1])
	}
	if !sameShape(val.shape, ix.Shape) {
		zfail("store value %v, indexed shape %v", val.shape, ix.Shape)
	}
	e.indexed(op, func(i int64, coord []int64) {
		if mask != nil && !mask.b[i] {
			return
		}
		if !inBounds(coord, ref.buf.shape) {
			zfail("store %v outside ref %v at %v", coord, ref.buf.shape, op.Loc)
		}
		ref.buf.copyElem(ravel(coord, ref.buf.shape), val, i)
	})
}

// atomic updates the elements the mask keeps, one after another in the
// order of the indices (contract: old op value, value for xchg; the old
// values, zero where masked off).
func (e *zeval) atomic(op *Op) *zt {
	ix := op.Attrs.Indexer
	ref := e.refOf(op.Operands[0])
	k := 1 + ix.NumOperands
	val := e.val(op.Operands[k])
	var mask *zt
	if ix.HasMask {
		mask = e.val(op.Operands[k+1])
	}
	old := newZT(val.dt, ix.Shape)
	type lane struct {
		i     int64
		coord []int64
	}
	var lanes []lane
	e.indexed(op, func(i int64, coord []int64) { lanes = append(lanes, lane{i, slices.Clone(coord)}) })
	if kind := op.Attrs.Kind; val.f != nil && (kind == "max" || kind == "min") {
		// contract: float max and min take the lanes of values whose sign
		// bit is clear first, then the others (the Triton kernel's two
		// atomics), each group in row-major order.
		slices.SortStableFunc(lanes, func(a, b lane) int { return b2iCmp(math.Signbit(val.f[a.i]), math.Signbit(val.f[b.i])) })
	}
	for _, ln := range lanes {
		i, coord := ln.i, ln.coord
		if mask != nil && !mask.b[i] {
			continue
		}
		if !inBounds(coord, ref.buf.shape) {
			zfail("atomic %v outside ref %v at %v", coord, ref.buf.shape, op.Loc)
		}
		at := ravel(coord, ref.buf.shape)
		o, v := newZT(val.dt, nil), newZT(val.dt, nil)
		o.copyElem(0, ref.buf, at)
		v.copyElem(0, val, i)
		swap := true
		if op.Attrs.Kind == "cas" { // contract: cmp is the last operand; floats compare bits
			c := e.val(op.Operands[len(op.Operands)-1])
			if o.f != nil {
				w := val.dt.Bits()
				swap = floatBits(o.f[0], w) == floatBits(c.f[i], w)
			} else {
				swap = o.i[0] == c.i[i]
			}
		}
		if ref.inside != nil && !ref.inside[at] {
			padValue(o, 0) // contract: an edge block's padding reads as a load does
		}
		old.copyElem(i, o, 0)
		switch op.Attrs.Kind {
		case "xchg", "cas":
		default:
			v = e.binary(op.Attrs.Kind, o, v)
		}
		if swap {
			ref.buf.copyElem(at, v, 0)
		}
	}
	return old
}

// b2iCmp orders false before true.
func b2iCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// zzEval runs p on args (the pallas.Call operands) and returns the outputs.
func zzEval(p *Program, args []*interpreter.Tensor) (outs []*interpreter.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			if z, ok := r.(zerr); ok {
				err = fmt.Errorf("zz eval: %s", z.msg)
				return
			}
			panic(r)
		}
	}()
	e := &zeval{p: p, env: map[*Value]*zt{}, refs: map[*Value]*zref{}}
	// Arrays behind the refs.
	arrays := make([]*zt, len(p.Refs))
	for i, r := range p.Refs {
		switch r.Kind {
		case PrefetchRef, InputRef:
			arrays[i] = fromTensor(args[r.Operand])
		case OutputRef:
			if r.AliasOf >= 0 {
				arrays[i] = fromTensor(args[r.AliasOf])
			} else {
				arrays[i] = zzUninit(r.DType, r.ArrayShape) // contract: unwritten memory
			}
		case ScratchRef:
			arrays[i] = zzUninit(r.DType, r.ArrayShape) // contract: unwritten memory; kept across steps
		}
		if !sameShape(arrays[i].shape, r.ArrayShape) {
			zfail("ref %v: operand shape %v", r, arrays[i].shape)
		}
	}
	if len(p.Body.Args) != len(p.Refs) {
		zfail("body has %d args for %d refs", len(p.Body.Args), len(p.Refs))
	}
	nGrid := zsize(p.Grid)
	for step := int64(0); step < nGrid; step++ {
		e.gridIdx = unravel(step, p.Grid)
		// Whole-array refs.
		var prefetchRefs []*zt
		for i, r := range p.Refs {
			if r.Kind == PrefetchRef {
				prefetchRefs = append(prefetchRefs, arrays[i])
			}
		}
		blocks := make([][]int64, len(p.Refs)) // array start of each block, per array dim
		for i, r := range p.Refs {
			a := p.Body.Args[i]
			switch r.Kind {
			case PrefetchRef, ScratchRef:
				e.refs[a] = &zref{buf: arrays[i]}
				continue
			}
			// Block index from the index map.
			m := i - p.NumPrefetch // input i, or output i-NumInputs
			bidx := make([]int64, len(r.ArrayShape))
			if im := p.IndexMaps[m]; im != nil {
				margs := make([]*zt, 0, len(im.Args))
				for _, g := range e.gridIdx {
					t := newZT(xla.Int32, nil)
					t.i[0] = g
					margs = append(margs, t)
				}
				for j := len(p.Grid); j < len(im.Args); j++ {
					e.refs[im.Args[j]] = &zref{buf: prefetchRefs[j-len(p.Grid)]}
					margs = append(margs, nil)
				}
				// ref args get no value, only a ref binding
				for j, a := range im.Args {
					if margs[j] != nil {
						e.env[a] = margs[j]
					}
				}
				for _, op := range im.Ops {
					e.runOp(op)
				}
				if len(im.Yield) != len(r.ArrayShape) {
					zfail("index map %d yields %d, array rank %d", m, len(im.Yield), len(r.ArrayShape))
				}
				for d, y := range im.Yield {
					bidx[d] = scalarInt(e.val(y))
				}
			}
			// Block start and kernel view.
			start := make([]int64, len(r.ArrayShape))
			var view []int64 // array dim of each kernel dim
			for d := range r.ArrayShape {
				if r.Block[d] == Squeezed {
					start[d] = bidx[d]
				} else {
					start[d] = bidx[d] * r.Block[d]
					view = append(view, int64(d))
				}
			}
			if len(view) != len(r.BlockShape) {
				zfail("ref %v: Block %v, BlockShape %v", r, r.Block, r.BlockShape)
			}
			blocks[i] = start
			zr := &zref{buf: newZT(r.DType, r.BlockShape), inside: make([]bool, zsize(r.BlockShape))}
			for j := int64(0); j < zr.buf.n(); j++ {
				bi := unravel(j, r.BlockShape)
				ac := append([]int64{}, start...)
				for vd, d := range view {
					ac[d] += bi[vd]
				}
				if inBounds(ac, r.ArrayShape) {
					zr.inside[j] = true
					zr.buf.copyElem(j, arrays[i], ravel(ac, r.ArrayShape))
				} else {
					padValue(zr.buf, j)
				}
			}
			e.refs[a] = zr
		}
		for _, op := range p.Body.Ops { // Body's args are the refs, bound above
			e.runOp(op)
		}
		// Write output blocks back after every step (contract: step semantics).
		for i, r := range p.Refs {
			if r.Kind != OutputRef {
				continue
			}
			zr := e.refs[p.Body.Args[i]]
			var view []int64
			for d := range r.ArrayShape {
				if r.Block[d] != Squeezed {
					view = append(view, int64(d))
				}
			}
			for j := int64(0); j < zr.buf.n(); j++ {
				if !zr.inside[j] {
					continue
				}
				bi := unravel(j, r.BlockShape)
				ac := append([]int64{}, blocks[i]...)
				for vd, d := range view {
					ac[d] += bi[vd]
				}
				arrays[i].copyElem(ravel(ac, r.ArrayShape), zr.buf, j)
			}
		}
	}
	for i, r := range p.Refs {
		if r.Kind == OutputRef {
			outs = append(outs, toTensor(arrays[i]))
		}
	}
	return outs, nil
}

// intToFloat rounds the integer x (of dtype from) once to float dtype dt.
func zzIntToFloat(dt, from xla.DType, x int64) float64 {
	b := new(big.Float)
	if from.IsUnsigned() {
		b.SetUint64(uint64(x))
	} else {
		b.SetInt64(x)
	}
	prec := map[xla.DType]uint{xla.Float64: 53, xla.Float32: 24, xla.Float16: 11, xla.BFloat16: 8}[dt]
	if prec == 0 {
		zfail("convert to %v", dt)
	}
	b.SetMode(big.ToNearestEven).SetPrec(prec)
	f, _ := b.Float64()
	return roundF(dt, f) // exact now, except overflow to Inf
}

// uninit is the value of memory nobody wrote: what edge padding reads.
func zzUninit(dt xla.DType, shape []int64) *zt {
	t := newZT(dt, shape)
	for i := int64(0); i < t.n(); i++ {
		padValue(t, i)
	}
	return t
}

// refZeroConst reports whether v is a zero constant in the IR: a const of
// 0, or a broadcast, reshape or convert of one, each of a type with a
// zero (the comment's rule for add and sub).
func refZeroConst(v *Value) bool {
	for v.Def != nil {
		if v.Type.DType == xla.Float8E8M0FNU {
			return false // its 0 is NaN
		}
		switch v.Def.Name {
		case "const":
			switch c := v.Def.Attrs.Value.(type) {
			case float64:
				return c == 0
			case int64:
				return c == 0
			}
			return false
		case "broadcast_in_dim", "reshape", "convert":
			v = v.Def.Operands[0]
		default:
			return false
		}
	}
	return false
}

// bitcastZT reads x's bits as dt (of the same width). Floats are kept as
// float64 here, so a signalling NaN comes back quiet (the backends keep
// its bits): tests leave such bit patterns out.
func bitcastZT(x *zt, dt xla.DType) *zt {
	if x.dt.Bits() != dt.Bits() {
		zfail("bitcast %v to %v", x.dt, dt)
	}
	r := newZT(dt, x.shape)
	for i := int64(0); i < x.n(); i++ {
		var bits uint64
		switch x.dt {
		case xla.Float64:
			bits = math.Float64bits(x.f[i])
		case xla.Float32:
			bits = uint64(math.Float32bits(float32(x.f[i])))
		case xla.Float16:
			bits = uint64(xla.F16FromFloat64(x.f[i]))
		case xla.BFloat16:
			bits = uint64(xla.BF16FromFloat64(x.f[i]))
		default:
			if x.i == nil {
				zfail("bitcast from %v", x.dt)
			}
			bits = uint64(x.i[i])
		}
		switch dt {
		case xla.Float64:
			r.f[i] = math.Float64frombits(bits)
		case xla.Float32:
			r.f[i] = float64(math.Float32frombits(uint32(bits)))
		case xla.Float16:
			r.f[i] = float64(xla.F16(bits).Float32())
		case xla.BFloat16:
			r.f[i] = float64(xla.BF16(bits).Float32())
		default:
			if r.i == nil {
				zfail("bitcast to %v", dt)
			}
			r.i[i] = wrapI(dt, int64(bits))
		}
	}
	return r
}
