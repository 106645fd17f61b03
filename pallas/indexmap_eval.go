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
// converts, and reshapes and broadcasts of scalars, and scalars picked
// from small blocks of such values (tapeMask). A map that reads
// prefetched data or does anything else is not computable (ok false).
type mapEval struct {
	t      *tape
	in     []int // the registers of the grid indices
	yields []int
	regs   []int64
}

// newMapEval prepares m for evaluation over grid; ok is false when m is
// not computable at build time.
func newMapEval(m *Region, grid []int64) (*mapEval, bool) {
	if m == nil || len(m.Args) < len(grid) {
		return nil, false
	}
	t := newTape(grid, nil)
	e := &mapEval{t: t}
	var ok bool
	if e.in, e.yields, ok = t.compileMap(m); !ok {
		return nil, false
	}
	if points := gridSteps(grid); t.maskCost > 0 && (points < 0 || min(points, 2*maxMapPoints)*int64(t.maskCost) > maxMapMaskWork) {
		return nil, false
	}
	e.regs = make([]int64, t.regs)
	return e, true
}

// compileMap adds index map m to t: its grid indices become inputs (in)
// and its block indices are computed (yields); ok is false when one is
// not computable.
func (t *tape) compileMap(m *Region) (in, yields []int, ok bool) {
	for _, a := range m.Args[:len(t.grid)] {
		in = append(in, t.input(a, 0))
	}
	for _, y := range m.Yield {
		r := t.compile(y)
		if r < 0 {
			return nil, nil, false
		}
		yields = append(yields, r)
	}
	return in, yields, true
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
	"neg": true, "abs": true, "and": true, "or": true, "xor": true, "not": true, "shl": true, "shr": true,
	"cmp": true, "select": true, "convert": true, "broadcast_in_dim": true, "reshape": true,
	"sign": true, "bitcast": true, // bitcast of integers only: a float operand is not computed
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

// at computes the block indices at grid point g into out (one per yield).
func (e *mapEval) at(g []int64, out []int64) {
	for i, r := range e.in {
		e.regs[r] = g[i]
	}
	e.t.run(e.regs, g)
	for i, r := range e.yields {
		out[i] = e.regs[r]
	}
}

// tape computes integer and boolean scalar kernel values at build time:
// the evaluable ops (evaluableOp) a value is computed by, in definition
// order, each writing one register of a slice the caller holds. Inputs
// (an index map's grid indices, a loop's index) are registers the caller
// sets; deps tells, per register, which inputs (bits given to input) it
// depends on.
type tape struct {
	grid  []int64
	known []bool // the axes whose ProgramID is computable (nil: all)
	ops   []tapeOp
	regs  int
	deps  []uint64
	reg   map[*Value]int // -1: not computable
	// maskCost is the work of a run's mask tapes (tapeMask), beyond one
	// step an op.
	maskCost int
}

// tapeOp is one step of a tape: op computed from registers args (kind
// tapeEval), a constant (tapeConst), the sum or difference of two
// registers without wrapping (tapeAdd, tapeSub), whether a register is 0
// (tapeNot), or the one element of a mask tape (tapeMask: a scalar picked
// from a block, by a gather, slice, concatenation or reduction).
type tapeOp struct {
	kind uint8
	op   *Op
	imm  int64
	args [3]int
	out  int
	mask *maskTape
}

const (
	tapeEval = iota
	tapeConst
	tapeAdd
	tapeSub
	tapeNot
	tapeMask
)

// maxTapeMaskCost bounds the work of a mask tape a tape computes a scalar
// with, a run, and the elements of the values it computes.
const maxTapeMaskCost = 1 << 12

// maxMapMaskWork bounds the work of an index map's mask tapes over the
// grid points the checks visit (sharedBlock): a map past it is not
// computable.
const maxMapMaskWork = 1 << 22

// newTape starts a tape over grid; known are the axes whose program id
// it computes (nil: every axis).
func newTape(grid []int64, known []bool) *tape {
	return &tape{grid: grid, known: known, reg: map[*Value]int{}}
}

// input makes v an input register depending on the inputs of bits.
func (t *tape) input(v *Value, bits uint64) int {
	r := t.newReg(bits)
	t.reg[v] = r
	return r
}

func (t *tape) newReg(bits uint64) int {
	t.deps = append(t.deps, bits)
	t.regs++
	return t.regs - 1
}

// constant is a register holding c.
func (t *tape) constant(c int64) int {
	r := t.newReg(0)
	t.ops = append(t.ops, tapeOp{kind: tapeConst, imm: c, out: r})
	return r
}

// arith is a register holding x + y or x - y (kind tapeAdd, tapeSub).
func (t *tape) arith(kind uint8, x, y int) int {
	r := t.newReg(t.deps[x] | t.deps[y])
	t.ops = append(t.ops, tapeOp{kind: kind, args: [3]int{x, y}, out: r})
	return r
}

// not is a register holding 1 where x holds 0, else 0; -1 when x is.
func (t *tape) not(x int) int {
	if x < 0 {
		return -1
	}
	r := t.newReg(t.deps[x])
	t.ops = append(t.ops, tapeOp{kind: tapeNot, args: [3]int{x}, out: r})
	return r
}

// compile adds the ops computing v and returns its register, or -1 when v
// is not computable (an op tape does not compute, loaded data, a value
// of a region other than an input, another axis's program id).
func (t *tape) compile(v *Value) int {
	if r, ok := t.reg[v]; ok {
		return r
	}
	op, operands := v.Def, []*Value(nil)
	t.reg[v] = -1 // also while its operands are compiled
	if sel, ys, ok := condSelect(v); ok && scalarLike(v.Type) {
		op, operands = sel, ys // a Cond's result: a select of what its branches yield
	} else if op != nil && op.Name == "program_id" && t.known != nil && (op.Attrs.Axis >= len(t.known) || !t.known[op.Attrs.Axis]) {
		return -1
	} else if op == nil || !evaluableOp(op) || len(op.Operands) > 3 {
		return t.viaMask(v)
	} else {
		operands = op.Operands
	}
	to := tapeOp{op: op}
	var deps uint64
	for i, o := range operands {
		r := t.compile(o)
		if r < 0 {
			return -1
		}
		to.args[i] = r
		deps |= t.deps[r]
	}
	to.out = t.newReg(deps)
	t.ops = append(t.ops, to)
	t.reg[v] = to.out
	return to.out
}

// viaMask computes v, an integer or boolean scalar the tape's own ops do
// not (an element of a block that a gather, slice, concatenation or
// reduction picks: DynamicIndex(i) of an iota), as the one element of a
// mask tape over t's registers; -1 when that does not compute it either,
// or would cost more than maxTapeMaskCost a run.
func (t *tape) viaMask(v *Value) int {
	if v.Def == nil || !scalarLike(v.Type) || !(v.Type.DType.IsInt() || v.Type.DType.IsBool()) {
		return -1
	}
	mt, ok := newMaskTapeWithin(t, v, maxTapeMaskCost)
	if !ok || mt.cost > maxTapeMaskCost {
		return -1
	}
	var deps uint64
	for _, r := range mt.uses {
		deps |= t.deps[r]
	}
	out := t.newReg(deps)
	t.ops = append(t.ops, tapeOp{kind: tapeMask, mask: mt, out: out})
	t.maskCost += mt.cost
	t.reg[v] = out
	return out
}

// condSelect describes v, when it is a result of a Cond (a when with an
// else) of an integer or bool type, as the select of the
// Cond's condition between what its branches yield for it: sel is a
// select op made for the purpose (not in the IR), operands its operands.
// The branches' values are pure, so computing both and picking one is
// what the Cond computes.
func condSelect(v *Value) (sel *Op, operands []*Value, ok bool) {
	op := v.Def
	if op == nil || op.Name != "when" || len(op.Regions) != 2 || !(v.Type.DType.IsInt() || v.Type.DType.IsBool()) {
		return nil, nil, false
	}
	i := slices.Index(op.Results, v)
	operands = []*Value{op.Operands[0], op.Regions[0].Yield[i], op.Regions[1].Yield[i]}
	return &Op{Name: "select", Operands: operands, Results: []*Value{v}}, operands, true
}

// run computes every register from the inputs in regs at grid point g.
func (t *tape) run(regs []int64, g []int64) {
	for i := range t.ops {
		o := &t.ops[i]
		switch o.kind {
		case tapeConst:
			regs[o.out] = o.imm
		case tapeAdd:
			regs[o.out] = regs[o.args[0]] + regs[o.args[1]]
		case tapeSub:
			regs[o.out] = regs[o.args[0]] - regs[o.args[1]]
		case tapeNot:
			regs[o.out] = b2i(regs[o.args[0]] == 0)
		case tapeMask:
			regs[o.out] = o.mask.run(regs)[0]
		default:
			regs[o.out] = evalOp(o.op, regs[o.args[0]], regs[o.args[1]], regs[o.args[2]], t.grid, g)
		}
	}
}

// evalOp computes one evaluable op from its operands' values x, y, z (as
// many as it has) at grid point g, wrapped to its type. Division by zero
// gives what the lowerings give: x / 0 = -1, x % 0 = x.
func evalOp(op *Op, x, y, z int64, grid, g []int64) int64 {
	dt := op.Results[0].Type.DType
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
		r = grid[op.Attrs.Axis]
	case "broadcast_in_dim", "reshape":
		r = x
	case "convert":
		r = x
		if dt.IsBool() {
			r = b2i(r != 0)
		}
	case "neg":
		r = -x
	case "abs":
		if r = x; r < 0 && !dt.IsUnsigned() {
			r = -r
		}
	case "not":
		if r = ^x; dt.IsBool() {
			r &= 1
		}
	case "sign":
		switch {
		case dt.IsUnsigned():
			r = b2i(x != 0)
		case x > 0:
			r = 1
		case x < 0:
			r = -1
		}
	case "bitcast":
		r = x // the same bits, wrapped to dt below
	case "select":
		if r = z; x != 0 {
			r = y
		}
	case "cmp":
		r = b2i(compareInts(op.Attrs.Dir, x, y, op.Operands[0].Type.DType.IsUnsigned()))
	default:
		a, b := x, y
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
		case "shl", "shr":
			// XLA's shifts: the amount read as unsigned; the width or
			// more gives 0, or the sign fill shifting a signed value
			// right. (a is sign-extended, or an unsigned value's bits.)
			bits := uint64(dt.Bits())
			amt := uint64(b)
			if bits < 64 {
				amt &= 1<<bits - 1
			}
			switch {
			case amt >= bits && (op.Name == "shl" || u):
				r = 0
			case amt >= bits:
				r = a >> 63
			case op.Name == "shl":
				r = a << amt
			case u:
				r = int64(uint64(a) >> amt)
			default:
				r = a >> amt
			}
		case "max", "min":
			less := a < b
			if u {
				less = uint64(a) < uint64(b)
			}
			if r = a; less == (op.Name == "max") {
				r = b
			}
		case "div", "rem":
			switch {
			case b == 0 && op.Name == "div":
				r = -1
			case b == 0:
				r = a
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
	return wrapInt(r, dt)
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
	known := make([]bool, len(grid))
	g := make([]int64, len(grid))
	if axis >= 0 && axis < len(grid) {
		known[axis], g[axis] = true, id
	}
	t := newTape(grid, known)
	r := t.compile(v)
	if r < 0 {
		return 0, false
	}
	regs := make([]int64, t.regs)
	t.run(regs, g)
	return regs[r], true
}

// maxMapPoints bounds the grid points sharedBlock visits.
const maxMapPoints = 1 << 16

// sharedBlock looks for two grid points that index map m sends to the
// same block and that have the same index on each axis of keep (bits as
// axisBit makes them). It visits the whole grid when it has at most maxMapPoints
// points, else the corner of it where each axis's index is below a bound
// that keeps the count under that and the opposite corner, where the last
// programs are (a pair found there is a pair of the grid). found is false
// when no pair was found, or m is not computable at build time
// (newMapEval).
func sharedBlock(m *Region, grid []int64, keep uint64) (a, b, block []int64, found bool) {
	e, ok := newMapEval(m, grid)
	if !ok {
		return nil, nil, nil, false
	}
	sub := gridCorner(grid)
	corners := cornersOf(grid, sub)
	total := corners * gridSteps(sub)
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
		if !cornerPoint(n, sub, grid, corners, g) {
			continue // visited in the first corner
		}
		e.at(g, idx)
		for i, v := range idx {
			binary.LittleEndian.PutUint64(key[8*i:], uint64(v))
		}
		for j, i := range kept {
			binary.LittleEndian.PutUint64(key[8*(len(idx)+j):], uint64(g[i]))
		}
		if first, dup := seen[string(key)]; dup {
			a := make([]int64, len(grid))
			cornerPoint(first, sub, grid, corners, a)
			return a, append([]int64(nil), g...), append([]int64(nil), idx...), true
		}
		seen[string(key)] = n
	}
	return nil, nil, nil, false
}

// cornersOf is 1 when sub (gridCorner) is grid, else 2: the checks visit
// sub and the opposite corner of grid, a point of each in turn.
func cornersOf(grid, sub []int64) int64 {
	if slices.Equal(grid, sub) {
		return 1
	}
	return 2
}

// cornerPoint sets g to the n-th grid point the checks visit on grid
// (cornersOf: corner sub, or it and the opposite corner in turn); false
// when that point of the opposite corner lies in sub too (visited as its
// own there).
func cornerPoint(n int64, sub, grid []int64, corners int64, g []int64) bool {
	pointAt(n/corners, sub, g)
	if n%corners == 0 {
		return true
	}
	inSub := true
	for i := range g {
		g[i] = grid[i] - 1 - g[i]
		inSub = inSub && g[i] < sub[i]
	}
	return !inSub
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
