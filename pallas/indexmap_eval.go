package pallas

import (
	"encoding/binary"
	"slices"

	"github.com/halo-ml/halo/xla"
)

// mapEval computes an index map's block indices at grid points at build
// time, when the map is integer arithmetic on the grid indices: consts,
// ProgramID and NumPrograms, integer add, sub, mul, div, rem, max, min,
// neg, abs, and, or, xor, not, comparisons, select, integer and boolean
// converts, and reshapes and broadcasts of scalars. A map that reads
// prefetched data or does anything else is not computable (ok false).
type mapEval struct {
	m    *Region
	grid []int64
	vals map[*Value]int64
}

// newMapEval prepares m for evaluation over grid; ok is false when m is
// not computable at build time.
func newMapEval(m *Region, grid []int64) (*mapEval, bool) {
	if m == nil || len(m.Args) < len(grid) {
		return nil, false
	}
	for _, op := range m.Ops {
		if !evaluableOp(op) {
			return nil, false
		}
	}
	return &mapEval{m: m, grid: grid, vals: map[*Value]int64{}}, true
}

// evaluableOp reports whether mapEval computes op: one of its ops, with
// one integer or boolean scalar result and no regions (a const of an
// integer or a bool).
func evaluableOp(op *Op) bool {
	if len(op.Regions) != 0 || len(op.Results) != 1 || !evaluable[op.Name] {
		return false
	}
	if t := op.Results[0].Type; !scalarLike(t) || !(t.DType.IsInt() || t.DType.IsBool()) {
		return false
	}
	if op.Name == "const" {
		switch op.Attrs.Value.(type) {
		case int64, bool:
		default:
			return false
		}
	}
	return true
}

// evaluable lists the ops mapEval computes.
var evaluable = map[string]bool{
	"const": true, "program_id": true, "num_programs": true,
	"add": true, "sub": true, "mul": true, "div": true, "rem": true, "max": true, "min": true,
	"neg": true, "abs": true, "and": true, "or": true, "xor": true, "not": true,
	"cmp": true, "select": true, "convert": true, "broadcast_in_dim": true, "reshape": true,
}

// scalarLike reports whether t holds one element.
func scalarLike(t Type) bool {
	for _, d := range t.Shape {
		if d != 1 {
			return false
		}
	}
	return true
}

// at computes the block indices at grid point g into out (one per yield);
// ok is false where the map divides by zero.
func (e *mapEval) at(g []int64, out []int64) bool {
	clear(e.vals)
	for i, a := range e.m.Args[:len(g)] {
		e.vals[a] = g[i]
	}
	for _, op := range e.m.Ops {
		r, ok := e.op(op, g)
		if !ok {
			return false
		}
		e.vals[op.Results[0]] = r
	}
	for i, y := range e.m.Yield {
		v, ok := e.vals[y]
		if !ok {
			return false // a value from outside the map
		}
		out[i] = v
	}
	return true
}

// op computes one op's result, wrapped to its type.
func (e *mapEval) op(op *Op, g []int64) (int64, bool) {
	dt := op.Results[0].Type.DType
	arg := func(i int) int64 { return e.vals[op.Operands[i]] }
	for _, v := range op.Operands {
		if _, ok := e.vals[v]; !ok {
			return 0, false // defined outside the map (a kernel value)
		}
	}
	var r int64
	switch op.Name {
	case "const":
		switch c := op.Attrs.Value.(type) {
		case int64:
			r = c
		case bool:
			r = b2i(c)
		}
	case "program_id":
		r = g[op.Attrs.Axis]
	case "num_programs":
		r = e.grid[op.Attrs.Axis]
	case "broadcast_in_dim", "reshape":
		r = arg(0)
	case "convert":
		r = arg(0)
		if dt.IsBool() {
			r = b2i(r != 0)
		}
	case "neg":
		r = -arg(0)
	case "abs":
		if r = arg(0); r < 0 && !dt.IsUnsigned() {
			r = -r
		}
	case "not":
		if r = ^arg(0); dt.IsBool() {
			r &= 1
		}
	case "select":
		if r = arg(2); arg(0) != 0 {
			r = arg(1)
		}
	case "cmp":
		r = b2i(compareInts(op.Attrs.Dir, arg(0), arg(1), op.Operands[0].Type.DType.IsUnsigned()))
	default:
		a, b := arg(0), arg(1)
		u := dt.IsUnsigned()
		switch op.Name {
		case "add":
			r = a + b
		case "sub":
			r = a - b
		case "mul":
			r = a * b
		case "and":
			r = a & b
		case "or":
			r = a | b
		case "xor":
			r = a ^ b
		case "max", "min":
			less := a < b
			if u {
				less = uint64(a) < uint64(b)
			}
			if r = a; less == (op.Name == "max") {
				r = b
			}
		case "div", "rem":
			if b == 0 {
				return 0, false
			}
			switch {
			case u && op.Name == "div":
				r = int64(uint64(a) / uint64(b))
			case u:
				r = int64(uint64(a) % uint64(b))
			case b == -1: // no overflow trap: the minimum stays, the remainder is 0
				if op.Name == "div" {
					r = -a
				}
			case op.Name == "div":
				r = a / b
			default:
				r = a % b
			}
		}
	}
	return wrapInt(r, dt), true
}

// wrapInt is v wrapped to integer type dt (0 or 1 for bool; an unsigned
// 64-bit value is kept as its bits).
func wrapInt(v int64, dt xla.DType) int64 {
	bits := dt.Bits()
	switch {
	case dt.IsBool():
		return v & 1
	case bits >= 64:
		return v
	case dt.IsUnsigned():
		return v & (int64(1)<<bits - 1)
	}
	shift := 64 - bits
	return v << shift >> shift
}

// compareInts compares a and b (as unsigned when u).
func compareInts(dir string, a, b int64, u bool) bool {
	c := 0
	switch {
	case u && uint64(a) < uint64(b), !u && a < b:
		c = -1
	case a != b:
		c = 1
	}
	switch dir {
	case "EQ":
		return c == 0
	case "NE":
		return c != 0
	case "LT":
		return c < 0
	case "LE":
		return c <= 0
	case "GT":
		return c > 0
	case "GE":
		return c >= 0
	}
	return false
}

// evalScalar computes kernel value v at build time when it is integer
// arithmetic (mapEval's ops) on constants, NumPrograms and, when axis >= 0,
// ProgramID(axis) taken as id; ok is false for anything else (another
// program id, loaded data, a loop index).
func evalScalar(v *Value, grid []int64, axis int, id int64) (int64, bool) {
	k := newKernelEval(grid)
	if axis >= 0 && axis < len(grid) {
		k.g[axis], k.known[axis] = id, true
	}
	return k.value(v)
}

// kernelEval computes kernel values at build time at one grid point:
// integer arithmetic (mapEval's ops) on constants, NumPrograms and the
// program ids of the axes it knows. Values are remembered until reset.
type kernelEval struct {
	e     mapEval
	g     []int64
	known []bool // the axes whose ProgramID is g's
	bad   map[*Value]bool
	bound map[*Value]int64 // values given (a loop's index)
}

// newKernelEval prepares an evaluator for grid that knows no program id.
func newKernelEval(grid []int64) *kernelEval {
	return &kernelEval{e: mapEval{grid: grid, vals: map[*Value]int64{}},
		g: make([]int64, len(grid)), known: make([]bool, len(grid)), bad: map[*Value]bool{}, bound: map[*Value]int64{}}
}

// at makes k compute at grid point g, every program id known.
func (k *kernelEval) at(g []int64) {
	copy(k.g, g)
	for i := range k.known {
		k.known[i] = true
	}
	clear(k.e.vals)
	clear(k.bad)
	clear(k.bound)
}

// bind gives v (a loop's index) the value x, forgetting what was computed
// before.
func (k *kernelEval) bind(v *Value, x int64) {
	k.bound[v] = x
	clear(k.e.vals)
	clear(k.bad)
}

// value computes v; ok is false when v is not computable at build time.
func (k *kernelEval) value(v *Value) (int64, bool) {
	if r, ok := k.e.vals[v]; ok {
		return r, true
	}
	if r, ok := k.bound[v]; ok {
		k.e.vals[v] = r // where op finds its operands
		return r, true
	}
	op := v.Def
	if k.bad[v] || op == nil || !evaluableOp(op) ||
		op.Name == "program_id" && (op.Attrs.Axis >= len(k.known) || !k.known[op.Attrs.Axis]) {
		k.bad[v] = true
		return 0, false
	}
	for _, o := range op.Operands {
		if _, ok := k.value(o); !ok {
			k.bad[v] = true
			return 0, false
		}
	}
	r, ok := k.e.op(op, k.g)
	if !ok {
		k.bad[v] = true
		return 0, false
	}
	k.e.vals[v] = r
	return r, true
}

// maxMapPoints bounds the grid points sharedBlock visits.
const maxMapPoints = 1 << 16

// sharedBlock looks for two grid points that index map m sends to the
// same block and that have the same index on each axis of keep (bits as
// axisBit makes them). It visits the whole grid when it has at most maxMapPoints
// points, else the corner of it where each axis's index is below a bound
// that keeps the count under that (a pair found there is a pair of the
// grid). found is false when no pair was found, or m is not computable at
// build time (newMapEval).
func sharedBlock(m *Region, grid []int64, keep uint64) (a, b, block []int64, found bool) {
	e, ok := newMapEval(m, grid)
	if !ok {
		return nil, nil, nil, false
	}
	sub := gridCorner(grid)
	total := gridSteps(sub)
	seen := make(map[string]int64, total)
	g := make([]int64, len(grid))
	idx := make([]int64, len(m.Yield))
	var kept []int // the axes of keep, whose indices join the key
	for i := range grid {
		if keep&axisBit(i) != 0 {
			kept = append(kept, i)
		}
	}
	key := make([]byte, 8*(len(idx)+len(kept)))
	for n := int64(0); n < total; n++ {
		rest := n // row-major, last axis fastest
		for i := len(sub) - 1; i >= 0; i-- {
			g[i], rest = rest%sub[i], rest/sub[i]
		}
		if !e.at(g, idx) {
			return nil, nil, nil, false
		}
		for i, v := range idx {
			binary.LittleEndian.PutUint64(key[8*i:], uint64(v))
		}
		for j, i := range kept {
			binary.LittleEndian.PutUint64(key[8*(len(idx)+j):], uint64(g[i]))
		}
		if first, dup := seen[string(key)]; dup {
			a = make([]int64, len(sub))
			for i := len(sub) - 1; i >= 0; i-- {
				a[i], first = first%sub[i], first/sub[i]
			}
			return a, append([]int64(nil), g...), append([]int64(nil), idx...), true
		}
		seen[string(key)] = n
	}
	return nil, nil, nil, false
}

// gridCorner is the grid itself when it has at most maxMapPoints points,
// else the corner of it where each axis's index is below a bound that
// keeps the count under that: the longest axis halved until it does.
func gridCorner(grid []int64) []int64 {
	sub := slices.Clone(grid)
	for gridSteps(sub) > maxMapPoints {
		big := 0
		for i, n := range sub {
			if n > sub[big] {
				big = i
			}
		}
		sub[big] = (sub[big] + 1) / 2
	}
	return sub
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
