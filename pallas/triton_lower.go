package pallas

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/halo-ml/halo/xla"
)

// The kernel IR -> TTIR translation (see triton.go for the design).

// tritonMaxNumel is Triton's largest tensor (elements).
const tritonMaxNumel = 1 << 20

// cudaYZLimit is the largest grid size along y and z.
const cudaYZLimit = 1<<16 - 1

// ttb builds TTIR: the current region and a cache of constants per open
// region (a constant of an enclosing region is visible inside).
type ttb struct {
	region *ttRegion
	stack  []*ttRegion
	consts []map[string]*ttVal
	hidden [][]map[string]*ttVal // the caches pushIsolated hid
}

// pushIsolated is push for a region that uses no value of the enclosing
// ones (a tt.scan's combine region, its constants made inside it).
func (b *ttb) pushIsolated(r *ttRegion) {
	b.hidden = append(b.hidden, b.consts)
	b.consts = nil
	b.push(r)
}

// popIsolated closes a region pushIsolated opened.
func (b *ttb) popIsolated() {
	b.pop()
	b.consts = b.hidden[len(b.hidden)-1]
	b.hidden = b.hidden[:len(b.hidden)-1]
}

func (b *ttb) push(r *ttRegion) {
	b.stack = append(b.stack, b.region)
	b.region = r
	b.consts = append(b.consts, map[string]*ttVal{})
}

func (b *ttb) pop() {
	b.region = b.stack[len(b.stack)-1]
	b.stack = b.stack[:len(b.stack)-1]
	b.consts = b.consts[:len(b.consts)-1]
}

func (b *ttb) emit(name string, operands []*ttVal, results []ttType, attrs ...ttAttr) *ttOp {
	op := &ttOp{name: name, operands: operands, attrs: attrs}
	for i, t := range results {
		op.results = append(op.results, &ttVal{t: t, def: op, idx: i})
	}
	b.region.ops = append(b.region.ops, op)
	return op
}

func (b *ttb) emit1(name string, operands []*ttVal, t ttType, attrs ...ttAttr) *ttVal {
	return b.pure(name, "", operands, t, attrs...)
}

// pure emits a one-result op, reusing an identical pure op of an open
// region (common subexpressions: the index maps and the pointer arithmetic
// of the loads and stores of one ref repeat a lot).
func (b *ttb) pure(name, pred string, operands []*ttVal, t ttType, attrs ...ttAttr) *ttVal {
	if !pureOp(name) || name == "arith.constant" {
		op := b.emit(name, operands, []ttType{t}, attrs...)
		op.pred = pred
		return op.results[0]
	}
	key := fmt.Sprintf("%s %s %s", name, pred, t)
	for _, o := range operands {
		key += fmt.Sprintf(" %p", o)
	}
	for _, a := range attrs {
		key += " " + a.name + "=" + a.text
	}
	for i := len(b.consts) - 1; i >= 0; i-- {
		if v, ok := b.consts[i][key]; ok {
			return v
		}
	}
	op := b.emit(name, operands, []ttType{t}, attrs...)
	op.pred = pred
	b.consts[len(b.consts)-1][key] = op.results[0]
	return op.results[0]
}

func (b *ttb) constant(lit string, t ttType, isInt bool, iv int64) *ttVal {
	key := lit + " : " + t.String()
	for i := len(b.consts) - 1; i >= 0; i-- {
		if v, ok := b.consts[i][key]; ok {
			return v
		}
	}
	v := b.emit1("arith.constant", nil, t)
	v.lit, v.isInt, v.ival = lit, isInt, iv
	b.consts[len(b.consts)-1][key] = v
	return v
}

// intConst is an integer (or i1) constant of type t (scalar or splat).
func (b *ttb) intConst(v int64, t ttType) *ttVal {
	v = intLit(v, t.bits())
	lit := strconv.FormatInt(v, 10)
	if t.elem == "i1" {
		lit = "false"
		if v != 0 {
			lit = "true"
		}
	}
	return b.constant(lit, t, true, v)
}

func (b *ttb) floatConst(x float64, t ttType) *ttVal {
	return b.constant(floatLit(x, t.elem), t, false, 0)
}

// numConst is x as a constant of t (float or integer element type).
func (b *ttb) numConst(x float64, t ttType) *ttVal {
	if t.isFloat() {
		return b.floatConst(x, t)
	}
	return b.intConst(int64(x), t)
}

func (b *ttb) i32(v int64) *ttVal { return b.intConst(v, ttType{elem: "i32"}) }

// swapLast transposes x's last two dims (a matrix, or each of a batch).
func (b *ttb) swapLast(x *ttVal) *ttVal {
	r := len(x.t.shape)
	order := make([]int64, r)
	for d := range order {
		order[d] = int64(d)
	}
	order[r-2], order[r-1] = order[r-1], order[r-2]
	return b.trans(x, order)
}

// trans is tt.trans of x: result dim i is x's dim order[i].
func (b *ttb) trans(x *ttVal, order []int64) *ttVal {
	shape := make([]int64, len(order))
	for i, o := range order {
		shape[i] = x.t.shape[o]
	}
	return b.emit1("tt.trans", []*ttVal{x}, x.t.with(shape), i32ArrayAttr("order", order))
}

// plusZero is float sum x + (+0): a sum that starts from +0, as XLA's
// reduce and dot do (tt.reduce has no start, and a row of -0 would sum to
// -0); x itself for integers. Neither arith nor LLVM drops an add of +0
// (only of -0) without a no-signed-zeros flag.
func (b *ttb) plusZero(x *ttVal) *ttVal {
	if !x.t.isFloat() {
		return x
	}
	return b.emit1("arith.addf", []*ttVal{x, b.floatConst(0, x.t)}, x.t)
}

// splat makes a scalar a tensor of shape (constants stay constants).
func (b *ttb) splat(x *ttVal, shape []int64) *ttVal {
	if len(shape) == 0 {
		return x
	}
	t := x.t.with(shape)
	if x.lit != "" {
		return b.constant(x.lit, t, x.isInt, x.ival)
	}
	return b.emit1("tt.splat", []*ttVal{x}, t)
}

func (b *ttb) expandDims(x *ttVal, axis int) *ttVal {
	shape := append(append(clone(x.t.shape[:axis]), 1), x.t.shape[axis:]...)
	if x.lit != "" {
		return b.constant(x.lit, x.t.with(shape), x.isInt, x.ival)
	}
	return b.emit1("tt.expand_dims", []*ttVal{x}, x.t.with(shape), i32Attr("axis", int64(axis)))
}

// broadcastTo broadcasts a scalar, or a tensor of the same rank whose dims
// are shape's or 1, to shape.
func (b *ttb) broadcastTo(x *ttVal, shape []int64) *ttVal {
	if x.t.scalar() {
		return b.splat(x, shape)
	}
	if sameShape(x.t.shape, shape) {
		return x
	}
	if x.lit != "" {
		return b.constant(x.lit, x.t.with(shape), x.isInt, x.ival)
	}
	return b.emit1("tt.broadcast", []*ttVal{x}, x.t.with(shape))
}

// place puts a tensor of rank a at result dims [pos, pos+a) of shape
// (expanding the other dims) and broadcasts it.
func (b *ttb) place(x *ttVal, pos int, shape []int64) *ttVal {
	a := len(x.t.shape)
	for i := 0; i < pos; i++ {
		x = b.expandDims(x, 0)
	}
	for i := pos + a; i < len(shape); i++ {
		x = b.expandDims(x, len(x.t.shape))
	}
	return b.broadcastTo(x, shape)
}

// Integer arithmetic on index values, folding constants.
func (b *ttb) addI(x, y *ttVal) *ttVal {
	switch {
	case x.isInt && y.isInt && x.t.scalar() && y.t.scalar():
		return b.intConst(x.ival+y.ival, x.t)
	case x.isInt && x.ival == 0:
		return y
	case y.isInt && y.ival == 0:
		return x
	}
	return b.emit1("arith.addi", []*ttVal{x, y}, x.t)
}

func (b *ttb) subI(x, y *ttVal) *ttVal {
	switch {
	case x.isInt && y.isInt && x.t.scalar() && y.t.scalar():
		return b.intConst(x.ival-y.ival, x.t)
	case y.isInt && y.ival == 0:
		return x
	}
	return b.emit1("arith.subi", []*ttVal{x, y}, x.t)
}

func (b *ttb) mulI(x, y *ttVal) *ttVal {
	switch {
	case x.isInt && y.isInt && x.t.scalar() && y.t.scalar():
		return b.intConst(x.ival*y.ival, x.t)
	case x.isInt && x.ival == 1:
		return y
	case y.isInt && y.ival == 1:
		return x
	case x.isInt && x.ival == 0:
		return x
	case y.isInt && y.ival == 0:
		return y
	}
	return b.emit1("arith.muli", []*ttVal{x, y}, x.t)
}

func (b *ttb) andI(x, y *ttVal) *ttVal {
	if x == nil {
		return y
	}
	if y == nil {
		return x
	}
	return b.emit1("arith.andi", []*ttVal{x, y}, x.t)
}

func (b *ttb) cmp(name, pred string, x, y *ttVal) *ttVal {
	return b.pure(name, pred, []*ttVal{x, y}, x.t.as("i1"))
}

func (b *ttb) cast(name string, x *ttVal, elem string) *ttVal {
	return b.emit1(name, []*ttVal{x}, x.t.as(elem))
}

// ttRef is a kernel ref as the lowering sees it.
type ttRef struct {
	info    *RefInfo
	ptr     *ttVal
	scratch bool
	strides []int64  // row-major, over ArrayShape
	dims    []int    // the array dim of each ref (non-squeezed) dim
	starts  []*ttVal // element start of the block per array dim (offset type)
	limits  []*ttVal // elements from the start to the array's end, for dims with padded blocks; nil otherwise
	off     ttType   // offset type: i32, or i64 for arrays of 2^31 elements or more
}

type ttLower struct {
	p    *Program
	b    *ttb
	vals map[*Value]*ttVal
	refs map[*Value]*ttRef
	grid []*ttVal
	// hazards holds, per memory buffer (bufferOf), the program's accesses
	// of it since the last gpu.barrier. The threads of a program hold the
	// elements of a block in a layout Triton picks per access (a scalar
	// is stored by one thread and loaded by all), so a load after a store
	// to the same buffer, or a store after any access, waits at a barrier
	// for the other threads' accesses; except a store after stores of
	// the same tt.store only (a loop storing a block per iteration) whose
	// blocks are aligned (see alignedStore): the same op keeps its layout,
	// and aligned blocks are equal or disjoint, so each element is stored
	// by the same thread each time.
	hazards map[int]hazard
	// live holds the values whose use reaches memory or control flow
	// (liveValues): an atomic update whose old values are not among them
	// commutes with others of its kind.
	live map[*Value]bool
}

// hazard is what a program did to a buffer since its last gpu.barrier.
type hazard struct {
	kind uint8 // hzStored, hzLoaded, hzAtomic
	// by is the store op of every store since the barrier when it is one
	// aligned op (alignedStore); nil otherwise.
	by *Op
	// atom is, with hzAtomic, the kind of every atomic update since the
	// barrier when they all commute (one kind other than xchg and cas, their old
	// values unused: atomKey), else "*": a later update that does not
	// commute with them waits, as two updates of an element may fall to
	// different threads.
	atom string
}

const (
	hzStored uint8 = 1 << iota
	hzLoaded
	hzAtomic // atomic updates: atomic with each other, not with the threads' loads and stores
)

// conflicts reports whether accesses next after accesses before (of the
// same buffer, since the last barrier) need a barrier between: a load
// after a store or an atomic update, a store after anything, an atomic
// update after a load or store, or after updates it does not commute
// with.
func conflicts(before, next hazard) bool {
	atoms := before.kind&hzAtomic != 0 && (before.atom == "*" || next.atom == "*" || before.atom != next.atom)
	return next.kind&hzLoaded != 0 && before.kind&(hzStored|hzAtomic) != 0 ||
		next.kind&hzStored != 0 && before.kind != 0 ||
		next.kind&hzAtomic != 0 && (before.kind&(hzStored|hzLoaded) != 0 || atoms)
}

// add is h followed by an access of kind by op (a store op, or nil; for
// an atomic update, atom is its atomKey).
func (h hazard) add(kind uint8, op *Op, atom string) hazard {
	switch kind {
	case hzStored:
		switch {
		case h.kind&hzStored == 0:
			h.by = op
		case h.by != op:
			h.by = nil
		}
	case hzAtomic:
		h.atom = joinAtoms(h.atom, atom)
	}
	h.kind |= kind
	return h
}

// joinAtoms is the atom of a hazard with the updates of a and of b.
func joinAtoms(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || a == b:
		return a
	}
	return "*"
}

// merge is the hazard of a program at a join of two paths.
func (h hazard) merge(o hazard) hazard {
	switch {
	case h.kind&hzStored == 0:
		h.by = o.by
	case o.kind&hzStored != 0 && o.by != h.by:
		h.by = nil
	}
	h.atom = joinAtoms(h.atom, o.atom)
	h.kind |= o.kind
	return h
}

// atomKey is atomic update op's kind when it commutes with other updates
// of that kind (not xchg or cas, its old values unused), else "*".
func (l *ttLower) atomKey(op *Op) string {
	if !commutes(op.Attrs.Kind) || l.live[op.Results[0]] {
		return "*"
	}
	return op.Attrs.Kind
}

// bufferOf names the memory a ref reads and writes: its Call operand (an
// output aliased to an input shares the input's), or its own output.
func bufferOf(r *RefInfo) int {
	switch {
	case r.Operand >= 0:
		return r.Operand
	case r.AliasOf >= 0:
		return r.AliasOf
	}
	return 1<<20 + r.Index
}

// access records a load (or a store or atomic update: op) of ref's
// buffer, first emitting a barrier when an earlier access of the program
// may conflict with it.
func (l *ttLower) access(ref *ttRef, kind uint8, op *Op) {
	buf := bufferOf(ref.info)
	h := l.hazards[buf]
	atom := ""
	if kind == hzAtomic {
		atom = l.atomKey(op)
	}
	conflict := conflicts(h, hazard{kind: kind, atom: atom})
	var key *Op
	if kind == hzStored {
		key = l.storeKey(op, ref)
		if h.kind == hzStored && h.by != nil && h.by == key {
			conflict = false // the same aligned store again
		}
	}
	if conflict {
		l.b.emit("gpu.barrier", nil, nil)
		clear(l.hazards)
		h = hazard{}
	}
	l.hazards[buf] = h.add(kind, key, atom)
}

// storeKey is op when it is a store whose blocks are aligned (see
// alignedStore), else nil.
func (l *ttLower) storeKey(op *Op, ref *ttRef) *Op {
	if op != nil && op.Name == "store" && alignedStore(op, ref) {
		return op
	}
	return nil
}

// alignedStore reports whether every block that store op writes to ref
// lies on a fixed grid of its own shape: per dim a point, or a slice of
// a power-of-two size s dividing the ref's block dim whose start is a
// multiple of s by construction (a constant, or a product with such a
// factor). Two such blocks are equal or disjoint.
func alignedStore(op *Op, ref *ttRef) bool {
	ix := op.Attrs.Indexer
	if ix.HasArrays() || len(ix.Dims) != len(ref.dims) {
		return false
	}
	idx := op.Operands[1 : 1+ix.NumOperands]
	for k, di := range ix.Dims {
		if di.Kind == DimPoint {
			continue
		}
		s, bd := di.Size, ref.info.Block[ref.dims[k]]
		if di.Kind != DimSlice || s <= 0 || s&(s-1) != 0 || bd%s != 0 {
			return false
		}
		if di.Operand < 0 {
			if di.Start%s != 0 {
				return false
			}
		} else if !multipleOf(idx[di.Operand], s, 4) {
			return false
		}
	}
	return true
}

// multipleOf reports whether integer v is a multiple of n (a power of
// two, so that wrapping products keep it) by construction, looking
// through at most depth ops.
func multipleOf(v *Value, n int64, depth int) bool {
	if n == 1 {
		return true
	}
	if v == nil || v.Def == nil || depth == 0 {
		return false
	}
	op := v.Def
	switch op.Name {
	case "const":
		c, ok := op.Attrs.Value.(int64)
		return ok && c%n == 0
	case "mul":
		return multipleOf(op.Operands[0], n, depth-1) || multipleOf(op.Operands[1], n, depth-1)
	case "add", "sub":
		return multipleOf(op.Operands[0], n, depth-1) && multipleOf(op.Operands[1], n, depth-1)
	}
	return false
}

// regionAccesses adds the loads and stores of regions (and the regions
// within them) to hz: what a loop's next iteration may find pending.
func (l *ttLower) regionAccesses(hz map[int]hazard, regions []*Region) {
	for _, r := range regions {
		for _, op := range r.Ops {
			if ref := l.refs[firstOperand(op)]; ref != nil {
				buf := bufferOf(ref.info)
				switch op.Name {
				case "store":
					hz[buf] = hz[buf].add(hzStored, l.storeKey(op, ref), "")
				case "load":
					hz[buf] = hz[buf].add(hzLoaded, nil, "")
				case "atomic":
					hz[buf] = hz[buf].add(hzAtomic, nil, l.atomKey(op))
				}
			}
			l.regionAccesses(hz, op.Regions)
		}
	}
}

// barrierBeforeLoop emits a gpu.barrier before loop op when an access in
// its body conflicts with one made before the loop: waiting once there
// keeps the body's accesses from waiting at every iteration for what
// came before the loop (they still wait for each other's).
func (l *ttLower) barrierBeforeLoop(op *Op) {
	body := map[int]hazard{}
	l.regionAccesses(body, op.Regions)
	for buf, h := range body {
		if conflicts(l.hazards[buf], h) {
			l.b.emit("gpu.barrier", nil, nil)
			clear(l.hazards)
			return
		}
	}
}

func firstOperand(op *Op) *Value {
	if len(op.Operands) == 0 {
		return nil
	}
	return op.Operands[0]
}

// mergeHazards sets l.hazards to the union of the maps.
func (l *ttLower) mergeHazards(maps ...map[int]hazard) {
	out := map[int]hazard{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = out[k].merge(v)
		}
	}
	l.hazards = out
}

// ttFail is the panic value of a lowering error (recovered by
// lowerTritonFunc).
type ttFail struct{ err *Error }

func (l *ttLower) fail(op *Op, format string, args ...any) {
	e := &Error{Kernel: l.p.Name, Op: "triton", Msg: fmt.Sprintf(format, args...)}
	if op != nil {
		e.Op = "triton: " + op.label()
		e.Loc = op.Loc
	}
	panic(ttFail{e})
}

// failAt is fail for a ref's block spec, at its index map's Go function
// when it has one.
func (l *ttLower) failAt(m *Region, format string, args ...any) {
	e := &Error{Kernel: l.p.Name, Op: "triton", Msg: fmt.Sprintf(format, args...)}
	if m != nil {
		e.Loc = m.Loc
	}
	panic(ttFail{e})
}

// ttElem is the TTIR element type of a dtype in registers.
func ttElem(dt xla.DType) (string, bool) {
	switch dt {
	case xla.Bool:
		return "i1", true
	case xla.Int8, xla.Uint8:
		return "i8", true
	case xla.Int16, xla.Uint16:
		return "i16", true
	case xla.Int32, xla.Uint32:
		return "i32", true
	case xla.Int64, xla.Uint64:
		return "i64", true
	case xla.Float16:
		return "f16", true
	case xla.BFloat16:
		return "bf16", true
	case xla.Float32:
		return "f32", true
	case xla.Float64:
		return "f64", true
	}
	return "", false
}

// ttMemElem is the element type in memory (bools are bytes).
func ttMemElem(dt xla.DType) (string, bool) {
	if dt == xla.Bool {
		return "i8", true
	}
	return ttElem(dt)
}

func isPow2(n int64) bool { return n > 0 && n&(n-1) == 0 }

// typeOf converts a kernel IR type, checking Triton's rules.
func (l *ttLower) typeOf(op *Op, t Type) ttType {
	e, ok := ttElem(t.DType)
	if !ok {
		l.fail(op, "dtype %s has no Triton type", dtypeName(t.DType))
	}
	l.checkShape(op, t)
	return ttType{elem: e, shape: clone(t.Shape)}
}

func (l *ttLower) checkShape(op *Op, t Type) {
	for _, d := range t.Shape {
		if !isPow2(d) {
			l.fail(op, "%s: Triton tensors need power-of-two dims (pad the block or mask the access)", t)
		}
	}
	if t.Size() > tritonMaxNumel {
		l.fail(op, "%s has %d elements, more than Triton's %d", t, t.Size(), tritonMaxNumel)
	}
}

func (l *ttLower) v(op *Op, x *Value) *ttVal {
	if t, ok := l.vals[x]; ok {
		return t
	}
	l.fail(op, "operand %%%d is not defined before its use", x.ID)
	return nil
}

func (l *ttLower) set(x *Value, t *ttVal) { l.vals[x] = t }

// lowerTritonFunc translates p into a tt.func and its launch grid.
func lowerTritonFunc(p *Program) (f *ttFunc, grid [3]int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(ttFail); ok {
				err = e.err
				return
			}
			err = &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	l := &ttLower{p: p, b: &ttb{}, vals: map[*Value]*ttVal{}, refs: map[*Value]*ttRef{}, hazards: map[int]hazard{}, live: liveValues(p.Body)}
	body := &ttRegion{}
	l.b.region = body
	l.b.consts = []map[string]*ttVal{{}}
	f = &ttFunc{name: tritonSymbol(p.Name), body: body}

	// One pointer argument per prefetch, input and output ref.
	refs := make([]*ttRef, len(p.Refs))
	for i := range p.Refs {
		info := &p.Refs[i]
		r := &ttRef{info: info, off: ttType{elem: "i32"}}
		refs[i] = r
		if info.Kind == ScratchRef {
			r.scratch = true
			continue
		}
		e, ok := ttMemElem(info.DType)
		if !ok {
			l.fail(nil, "%s: dtype %s has no Triton type", info, dtypeName(info.DType))
		}
		r.ptr = &ttVal{t: ttType{elem: ptrType(e)}}
		body.args = append(body.args, r.ptr)
		size := int64(1)
		for _, d := range info.ArrayShape {
			size *= d
		}
		if size > math.MaxInt32 {
			r.off = ttType{elem: "i64"}
		}
		blocked := false
		for d, bd := range info.Block {
			if bd != Squeezed && bd != info.ArrayShape[d] {
				blocked = true
			}
		}
		if blocked {
			for _, bd := range info.BlockShape {
				if !isPow2(bd) {
					l.failAt(nil, "%s: block shape %v: Triton needs power-of-two block dims", info, info.Block)
				}
			}
		}
		r.strides = make([]int64, len(info.ArrayShape))
		s := int64(1)
		for d := len(info.ArrayShape) - 1; d >= 0; d-- {
			r.strides[d] = s
			s *= info.ArrayShape[d]
		}
		for d, bd := range info.Block {
			if bd != Squeezed {
				r.dims = append(r.dims, d)
			}
		}
	}

	grid = l.programIDs()

	// Block starts from the index maps.
	for i := range p.Refs {
		r := refs[i]
		if r.scratch {
			continue
		}
		var m *Region
		if k := i - p.NumPrefetch; r.info.Kind != PrefetchRef && k < len(p.IndexMaps) {
			m = p.IndexMaps[k]
		}
		l.blockStarts(r, m, refs[:p.NumPrefetch])
	}

	// The body.
	for i, a := range p.Body.Args {
		l.refs[a] = refs[i]
	}
	l.region(p.Body)
	l.b.emit("tt.return", nil, nil)
	f.prune()
	return f, grid, nil
}

// programIDs computes the grid indices from the program ids and returns
// the launch grid.
func (l *ttLower) programIDs() [3]int64 {
	g := l.p.Grid
	launch := [3]int64{1, 1, 1}
	l.grid = make([]*ttVal, len(g))
	if len(g) == 0 {
		return launch
	}
	k := max(1, len(g)-2) // leading axes folded into x
	for k < len(g) {
		over := false
		for _, d := range g[k:] {
			over = over || d > cudaYZLimit
		}
		if !over {
			break
		}
		k++
	}
	x := int64(1)
	for _, d := range g[:k] {
		x *= d
	}
	if x > math.MaxInt32 {
		l.fail(nil, "grid %v has %d programs along x, more than CUDA's %d", g, x, math.MaxInt32)
	}
	launch[0] = x
	for i, d := range g[k:] {
		launch[1+i] = d
	}
	pid := func(axis int) *ttVal {
		if launch[axis] == 1 {
			return l.b.i32(0)
		}
		return l.b.emit1("tt.get_program_id", nil, ttType{elem: "i32"}, i32Attr("axis", int64(axis)))
	}
	rest := pid(0)
	for d := k - 1; d >= 1; d-- {
		if g[d] == 1 {
			l.grid[d] = l.b.i32(0)
			continue
		}
		n := l.b.i32(g[d])
		l.grid[d] = l.b.emit1("arith.remsi", []*ttVal{rest, n}, rest.t)
		rest = l.b.emit1("arith.divsi", []*ttVal{rest, n}, rest.t)
	}
	l.grid[0] = rest
	for i := range g[k:] {
		l.grid[k+i] = pid(1 + i)
	}
	return launch
}

// toOff converts an i32 index to r's offset type.
func (l *ttLower) toOff(x *ttVal, off ttType) *ttVal {
	if x.t.elem == off.elem {
		return x
	}
	if x.isInt && x.t.scalar() {
		return l.b.intConst(x.ival, off)
	}
	return l.b.cast("arith.extsi", x, off.elem)
}

// blockStarts runs index map m (nil: block 0) and sets r's block starts and
// padding limits.
func (l *ttLower) blockStarts(r *ttRef, m *Region, prefetch []*ttRef) {
	info := r.info
	n := len(info.ArrayShape)
	r.starts = make([]*ttVal, n)
	r.limits = make([]*ttVal, n)
	var idx []*ttVal
	if m != nil {
		for i, a := range m.Args {
			if i < len(l.grid) {
				l.set(a, l.grid[i])
			} else if j := i - len(l.grid); j < len(prefetch) {
				l.refs[a] = prefetch[j]
			}
		}
		l.region(m)
		for _, y := range m.Yield {
			idx = append(idx, l.v(nil, y))
		}
		if len(idx) != n {
			l.fail(nil, "index map of %s yields %d indices for rank %d", info, len(idx), n)
		}
	}
	for d := 0; d < n; d++ {
		bs := info.Block[d]
		if bs == Squeezed {
			bs = 1
		}
		start := l.b.intConst(0, r.off)
		if idx != nil {
			start = l.b.mulI(l.toOff(idx[d], r.off), l.b.intConst(bs, r.off))
		}
		r.starts[d] = start
		if bs > 0 && info.ArrayShape[d]%bs != 0 {
			r.limits[d] = l.b.subI(l.b.intConst(info.ArrayShape[d], r.off), start)
		}
	}
}

func (l *ttLower) region(r *Region) {
	for _, op := range r.Ops {
		l.op(op)
	}
}

// unaryLib are the ops lowered to libdevice calls: __nv_<name>f (f32) and
// __nv_<name> (f64).
var unaryLib = map[string]string{
	"exp": "exp", "log": "log", "tanh": "tanh", "erf": "erf", "sqrt": "sqrt",
	"rsqrt": "rsqrt", "sin": "sin", "cos": "cos", "log1p": "log1p", "expm1": "expm1", "tan": "tan",
	"round": "rint", // to nearest, halves to even
	"exp2":  "exp2", "log2": "log2", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
	"cosh": "cosh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "cbrt": "cbrt", "erf_inv": "erfinv",
	"erfc": "erfc", "lgamma": "lgamma",
}

// checkConcatenate refuses a concatenate tt.join cannot make: parts of
// several shapes, or a count other than a power of two (before the
// result's shape is checked, so that the error says why).
func (l *ttLower) checkConcatenate(op *Op) {
	if n := len(op.Operands); n&(n-1) != 0 {
		l.fail(op, "Triton concatenates a power-of-two count of blocks (pairs joined by tt.join), not %d: concatenate pairs, or store the parts into one ref at their offsets", n)
	}
	for _, o := range op.Operands {
		if !sameShape(o.Type.Shape, op.Operands[0].Type.Shape) {
			l.fail(op, "Triton concatenates blocks of one shape (tt.join pairs them), not %s and %s: store the parts into one ref", op.Operands[0].Type, o.Type)
		}
	}
}

func (l *ttLower) op(op *Op) {
	if op.Name == "concatenate" {
		l.checkConcatenate(op)
	}
	in := func(i int) *ttVal { return l.v(op, op.Operands[i]) }
	b := l.b
	var rt ttType
	var dt xla.DType
	if len(op.Results) > 0 {
		rt = l.typeOf(op, op.Results[0].Type)
		dt = op.Results[0].Type.DType
	}
	set := func(v *ttVal) { l.set(op.Results[0], v) }
	switch op.Name {
	case "const":
		switch c := op.Attrs.Value.(type) {
		case float64:
			set(b.numConst(c, rt))
		case int64:
			if rt.isFloat() {
				set(b.floatConst(float64(c), rt))
			} else {
				set(b.intConst(c, rt))
			}
		case bool:
			v := int64(0)
			if c {
				v = 1
			}
			set(b.numConst(float64(v), rt))
		default:
			l.fail(op, "constant of Go type %T", op.Attrs.Value)
		}
	case "iota":
		d := op.Attrs.Dim
		x := b.emit1("tt.make_range", nil, ttType{elem: "i32", shape: []int64{rt.shape[d]}},
			i32Attr("end", rt.shape[d]), i32Attr("start", 0))
		x = l.convert(op, x, xla.Int32, dt)
		set(b.place(x, d, rt.shape))
	case "program_id":
		set(l.grid[op.Attrs.Axis])
	case "num_programs":
		set(b.i32(l.p.Grid[op.Attrs.Axis]))
	case "neg":
		x := in(0)
		if rt.isFloat() {
			set(b.emit1("arith.negf", []*ttVal{x}, rt))
		} else {
			set(b.emit1("arith.subi", []*ttVal{b.intConst(0, rt), x}, rt))
		}
	case "abs":
		if rt.isFloat() {
			set(b.emit1("math.absf", []*ttVal{in(0)}, rt))
		} else {
			set(b.emit1("math.absi", []*ttVal{in(0)}, rt))
		}
	case "floor", "ceil":
		set(b.emit1("math."+op.Name, []*ttVal{in(0)}, rt))
	case "exp", "log", "tanh", "erf", "sqrt", "rsqrt", "sin", "cos", "log1p", "expm1", "tan", "round",
		"exp2", "log2", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt", "erf_inv", "erfc", "lgamma":
		set(l.libdevice(op, unaryLib[op.Name], in(0)))
	case "atan2":
		set(l.libdevice(op, "atan2", in(0), in(1)))
	case "is_finite":
		// |x| < inf: false for ±inf and NaN (an unordered compare).
		x := in(0)
		abs := b.emit1("math.absf", []*ttVal{x}, x.t)
		set(b.cmp("arith.cmpf", "olt", abs, b.floatConst(math.Inf(1), x.t)))
	case "popcnt", "clz":
		set(l.bitCount(op, in(0), dt, rt))
	case "sign":
		// 1 above zero, -1 below, else x itself: ±0 and NaN (floats) kept.
		x := in(0)
		zero := b.numConst(0, rt)
		name, gt := cmpPred("GT", dt)
		_, lt := cmpPred("LT", dt)
		y := x
		if !dt.IsUnsigned() {
			y = b.emit1("arith.select", []*ttVal{b.cmp(name, lt, x, zero), b.numConst(-1, rt), x}, rt)
		}
		set(b.emit1("arith.select", []*ttVal{b.cmp(name, gt, x, zero), b.numConst(1, rt), y}, rt))
	case "bitcast":
		x := in(0)
		if x.t.elem == rt.elem { // Triton's integers are signless: i32 is u32
			set(x)
		} else {
			set(b.emit1("tt.bitcast", []*ttVal{x}, rt))
		}
	case "pow":
		set(l.libdevice(op, "pow", in(0), in(1)))
	case "logistic":
		x := in(0)
		wide := x
		if rt.elem == "f16" || rt.elem == "bf16" {
			wide = b.cast("arith.extf", x, "f32")
		}
		// e = exp(-|x|) never overflows: 1/(1+e) for x >= 0, e/(1+e)
		// below (1/(1+exp(-x)) lost the results under exp's range, which
		// interpret mode keeps).
		negAbs := b.emit1("arith.negf", []*ttVal{b.emit1("math.absf", []*ttVal{wide}, wide.t)}, wide.t)
		e := l.libdevice(op, "exp", negAbs)
		one := b.floatConst(1, wide.t)
		d := b.emit1("arith.addf", []*ttVal{one, e}, wide.t)
		pos := l.floatDivRem("div", one, d, wide.t)
		neg := l.floatDivRem("div", e, d, wide.t)
		nonNeg := b.cmp("arith.cmpf", "oge", wide, b.floatConst(0, wide.t))
		y := b.emit1("arith.select", []*ttVal{nonNeg, pos, neg}, wide.t)
		if wide != x {
			y = b.cast("arith.truncf", y, rt.elem)
		}
		set(y)
	case "not":
		set(b.emit1("arith.xori", []*ttVal{in(0), b.intConst(-1, rt)}, rt))
	case "div", "rem":
		if rt.isFloat() {
			set(l.floatDivRem(op.Name, in(0), in(1), rt))
		} else {
			set(l.intDivRem(op.Name, dt, in(0), in(1), rt))
		}
	case "shl", "shr":
		set(l.shift(op.Name, dt, in(0), in(1), rt))
	case "add", "sub", "mul", "max", "min", "and", "or", "xor":
		switch {
		// 0 + x is x (and x - 0), as in interpret mode, which folds them
		// as XLA's simplifier does: a -0 in x stays -0 on both backends.
		case op.Name == "add" && zeroValue(op.Operands[0]):
			set(in(1))
		case (op.Name == "add" || op.Name == "sub") && zeroValue(op.Operands[1]):
			set(in(0))
		default:
			set(b.emit1(binaryOp(op.Name, dt), []*ttVal{in(0), in(1)}, rt))
		}
	case "cmp":
		odt := op.Operands[0].Type.DType
		name, pred := cmpPred(op.Attrs.Dir, odt)
		if pred == "" {
			l.fail(op, "unknown comparison %q", op.Attrs.Dir)
		}
		set(b.cmp(name, pred, in(0), in(1)))
	case "select":
		// A condition splat from a scalar selects whole tensors on the
		// scalar, the form Triton's passes recognize: a select on the
		// condition of an scf.if beside it (Where(last, zeros, acc) after
		// When(last, store)) becomes a result of that if
		// (CombineTensorSelectAndIf, in XLA's Hopper pipeline), and a reset
		// of a dot's accumulator the dot's use-accumulator flag
		// (OptimizeAccumulatorInit, in its Blackwell pipeline), instead of
		// a select over the whole block each step.
		c := in(0)
		if d := c.def; !rt.scalar() && d != nil && d.name == "tt.splat" && d.operands[0].t.scalar() {
			c = d.operands[0]
		}
		set(b.emit1("arith.select", []*ttVal{c, in(1), in(2)}, rt))
	case "convert":
		set(l.convert(op, in(0), op.Operands[0].Type.DType, dt))
	case "broadcast_in_dim":
		set(l.broadcastInDim(op, in(0), op.Attrs.Dims, rt.shape))
	case "reshape":
		x := in(0)
		switch {
		case rt.scalar() && x.t.scalar():
			set(x)
		case rt.scalar():
			for a := len(x.t.shape) - 1; a >= 0; a-- {
				x = l.reduceAxis(x, a, "sum", dt)
			}
			set(x)
		case x.t.scalar():
			set(b.splat(x, rt.shape))
		default:
			set(b.emit1("tt.reshape", []*ttVal{x}, rt))
		}
	case "transpose":
		x := in(0)
		if x.t.scalar() {
			set(x)
		} else {
			set(b.emit1("tt.trans", []*ttVal{x}, rt, i32ArrayAttr("order", op.Attrs.Perm)))
		}
	case "reduce":
		x := in(0)
		axes := append([]int64(nil), op.Attrs.Axes...)
		sort.Slice(axes, func(i, j int) bool { return axes[i] > axes[j] })
		for _, a := range axes {
			x = l.reduceAxis(x, int(a), op.Attrs.Kind, dt)
		}
		if op.Attrs.Kind == "sum" && len(axes) > 0 {
			x = b.plusZero(x)
		}
		set(x)
	case "concatenate":
		set(l.concatenate(op))
	case "slice":
		set(l.slice(op))
	case "assoc_scan":
		l.assocScan(op)
	case "gather":
		set(b.emit1("tt.gather", []*ttVal{in(0), in(1)}, rt, i32Attr("axis", int64(op.Attrs.Axis))))
	case "scan":
		x := l.foldAxis("tt.scan", in(0), op.Attrs.Axis, op.Attrs.Kind, dt, op.Attrs.Reverse)
		if op.Attrs.Kind == "sum" {
			x = b.plusZero(x) // from +0, as interpret mode's window
		}
		set(x)
	case "dot":
		set(l.dot(op, rt))
	case "load":
		set(l.load(op, rt))
	case "store":
		l.store(op)
	case "atomic":
		set(l.atomic(op, rt))
	case "when":
		l.whenOp(op)
	case "for":
		l.forOp(op)
	case "while":
		l.whileOp(op)
	case "debug_print":
		l.debugPrint(op)
	default:
		l.fail(op, "op %q has no Triton lowering", op.Name)
	}
}

func binaryOp(name string, dt xla.DType) string {
	f, u := dt.IsFloat(), dt.IsUnsigned() || dt.IsBool()
	switch name {
	case "add", "sub", "mul":
		if f {
			return "arith." + name + "f"
		}
		return "arith." + name + "i"
	case "div", "rem":
		switch {
		case f:
			return "arith." + name + "f"
		case u:
			return "arith." + name + "ui"
		}
		return "arith." + name + "si"
	case "max", "min":
		switch {
		case f:
			return "arith." + name + "imumf"
		case u:
			return "arith." + name + "ui"
		}
		return "arith." + name + "si"
	}
	return "arith." + name + "i" // and, or, xor
}

// intDivRem is integer x / y or x % y with interpret mode's (XLA's)
// results where arith's are undefined: x / 0 is -1 (all ones), x % 0 is x,
// MIN / -1 is MIN and MIN % -1 is 0. Those divisors are replaced by 1
// before the divsi/divui (which would make the whole kernel undefined, a
// guard of the user's around the division included) and the results
// selected after it. A constant divisor needs no guard.
func (l *ttLower) intDivRem(name string, dt xla.DType, x, y *ttVal, rt ttType) *ttVal {
	b := l.b
	opName := binaryOp(name, dt)
	signed := !dt.IsUnsigned()
	if y.isInt {
		switch {
		case y.ival == 0 && name == "div":
			return b.intConst(-1, rt)
		case y.ival == 0:
			return x
		case signed && y.ival == -1 && name == "div": // -x, wrapping: MIN / -1 = MIN
			return b.emit1("arith.subi", []*ttVal{b.intConst(0, rt), x}, rt)
		case signed && y.ival == -1:
			return b.intConst(0, rt)
		}
		return b.emit1(opName, []*ttVal{x, y}, rt)
	}
	one := b.intConst(1, rt)
	byZero := b.cmp("arith.cmpi", "eq", y, b.intConst(0, rt))
	safe := b.emit1("arith.select", []*ttVal{byZero, one, y}, rt)
	if signed {
		minInt := int64(-1) << (rt.bits() - 1)
		ovf := b.emit1("arith.andi", []*ttVal{
			b.cmp("arith.cmpi", "eq", x, b.intConst(minInt, rt)),
			b.cmp("arith.cmpi", "eq", y, b.intConst(-1, rt)),
		}, byZero.t)
		safe = b.emit1("arith.select", []*ttVal{ovf, one, safe}, rt) // MIN / 1 = MIN, MIN % 1 = 0
	}
	r := b.emit1(opName, []*ttVal{x, safe}, rt)
	if name == "div" {
		return b.emit1("arith.select", []*ttVal{byZero, b.intConst(-1, rt), r}, rt)
	}
	return b.emit1("arith.select", []*ttVal{byZero, x, r}, rt)
}

// shift is x shifted by amount (shl, or shr: arithmetic for signed dt,
// logical for unsigned) as XLA's shifts are: an amount that is, read as
// unsigned, the width or more gives 0 (the sign fill for an arithmetic
// shift right), where LLVM's shifts give poison.
func (l *ttLower) shift(name string, dt xla.DType, x, amount *ttVal, rt ttType) *ttVal {
	b := l.b
	bits := int64(dt.Bits())
	op := "arith.shli"
	if name == "shr" {
		op = "arith.shrsi"
		if dt.IsUnsigned() {
			op = "arith.shrui"
		}
	}
	width := b.intConst(bits, rt)
	past := b.cmp("arith.cmpi", "uge", amount, width)
	fill := b.intConst(0, rt)
	if op == "arith.shrsi" {
		fill = b.emit1(op, []*ttVal{x, b.intConst(bits-1, rt)}, rt)
	}
	// The shift itself by an amount in range (poison is not to be made).
	safe := b.emit1("arith.select", []*ttVal{past, b.intConst(0, rt), amount}, rt)
	return b.emit1("arith.select", []*ttVal{past, fill, b.emit1(op, []*ttVal{x, safe}, rt)}, rt)
}

// cmpPred is the arith compare op and predicate of a StableHLO direction
// (floats: ordered, except NE which holds for NaN as in StableHLO).
func cmpPred(dir string, dt xla.DType) (string, string) {
	if dt.IsFloat() {
		p := map[string]string{"EQ": "oeq", "NE": "une", "LT": "olt", "LE": "ole", "GT": "ogt", "GE": "oge"}[dir]
		return "arith.cmpf", p
	}
	if dt.IsUnsigned() || dt.IsBool() {
		p := map[string]string{"EQ": "eq", "NE": "ne", "LT": "ult", "LE": "ule", "GT": "ugt", "GE": "uge"}[dir]
		return "arith.cmpi", p
	}
	p := map[string]string{"EQ": "eq", "NE": "ne", "LT": "slt", "LE": "sle", "GT": "sgt", "GE": "sge"}[dir]
	return "arith.cmpi", p
}

// libdevice calls __nv_<name>f / __nv_<name> elementwise; f16 and bf16
// compute in f32.
func (l *ttLower) libdevice(op *Op, name string, xs ...*ttVal) *ttVal {
	b := l.b
	t := xs[0].t
	var sym string
	switch t.elem {
	case "f32":
		sym = "__nv_" + name + "f"
	case "f64":
		sym = "__nv_" + name
	case "f16", "bf16":
		wide := make([]*ttVal, len(xs))
		for i, x := range xs {
			wide[i] = b.cast("arith.extf", x, "f32")
		}
		return b.cast("arith.truncf", l.libdevice(op, name, wide...), t.elem)
	default:
		l.fail(op, "%s is not defined on %s", op.Name, t.elem)
	}
	return b.emit1("tt.extern_elementwise", xs, t,
		strAttr("libname", ""), strAttr("libpath", ""), boolAttr("pure", true), strAttr("symbol", sym))
}

// bitCount lowers popcnt and clz to libdevice's __nv_popc and __nv_clz (32
// bits) or __nv_popcll and __nv_clzll (64 bits), which count into an i32;
// 8- and 16-bit values are counted zero-extended to 32 bits (clz then less
// the 32-bits-minus-width zeros the extension added).
func (l *ttLower) bitCount(op *Op, x *ttVal, dt xla.DType, rt ttType) *ttVal {
	b := l.b
	name := map[string]string{"popcnt": "popc", "clz": "clz"}[op.Name]
	bits := dt.Bits()
	i32 := ttType{elem: "i32", shape: rt.shape}
	switch {
	case bits < 32:
		x = b.cast("arith.extui", x, "i32")
	case bits == 64:
		name += "ll"
	}
	n := b.emit1("tt.extern_elementwise", []*ttVal{x}, i32,
		strAttr("libname", ""), strAttr("libpath", ""), boolAttr("pure", true), strAttr("symbol", "__nv_"+name))
	switch {
	case bits < 32:
		if op.Name == "clz" {
			n = b.emit1("arith.subi", []*ttVal{n, b.intConst(int64(32-bits), i32)}, i32)
		}
		n = b.cast("arith.trunci", n, rt.elem)
	case bits == 64:
		n = b.cast("arith.extui", n, "i64")
	}
	return n
}

// convert changes x from dtype from to dtype to (XLA's rules: float to int
// truncates after clamping to the target range, to bool is != 0).
func (l *ttLower) convert(op *Op, x *ttVal, from, to xla.DType) *ttVal {
	b := l.b
	te, ok := ttElem(to)
	if !ok {
		l.fail(op, "dtype %s has no Triton type", dtypeName(to))
	}
	if x.t.elem == te && (from.IsFloat() == to.IsFloat()) && !to.IsBool() {
		return x
	}
	t := x.t.as(te)
	switch {
	case to.IsBool():
		if from.IsBool() {
			return x
		}
		if from.IsFloat() {
			return b.cmp("arith.cmpf", "une", x, b.floatConst(0, x.t))
		}
		return b.cmp("arith.cmpi", "ne", x, b.intConst(0, x.t))
	case from.IsFloat() && to.IsFloat():
		if x.t.bits() == t.bits() || x.t.elem == "bf16" && te == "f64" {
			// f16 <-> bf16, and bf16 -> f64 (exact): through f32, the only
			// widening of bf16 Triton's front end emits (older NVIDIA
			// lowerings assert on others).
			x = b.cast("arith.extf", x, "f32")
		}
		if x.t.bits() < t.bits() {
			return b.cast("arith.extf", x, te)
		}
		return b.cast("arith.truncf", x, te)
	case from.IsFloat():
		if x.t.elem == "f16" || x.t.elem == "bf16" {
			x = b.cast("arith.extf", x, "f32")
		}
		// Saturating, as the interpreter converts: values past the range
		// give its ends, NaN gives 0. fptosi/fptoui of a value outside the
		// target range is poison, so the operand is clamped to the largest
		// float below 2^(bits-1) (2^bits unsigned), and values at or past
		// that bound are replaced after the conversion.
		bits := to.Bits()
		top, lo := math.Ldexp(1, bits-1), -math.Ldexp(1, bits-1)
		name, maxInt := "arith.fptosi", int64(math.MaxInt64>>(64-bits))
		if to.IsUnsigned() {
			top, lo, name, maxInt = math.Ldexp(1, bits), 0, "arith.fptoui", -1 // all ones
		}
		below := math.Nextafter(top, 0)
		if x.t.elem == "f32" {
			below = float64(math.Nextafter32(float32(top), 0))
		}
		// minnumf/maxnumf take the bound over a NaN, so no NaN is converted.
		c := b.emit1("arith.minnumf", []*ttVal{x, b.floatConst(below, x.t)}, x.t)
		c = b.emit1("arith.maxnumf", []*ttVal{c, b.floatConst(lo, x.t)}, x.t)
		r := b.cast(name, c, te)
		over := b.cmp("arith.cmpf", "oge", x, b.floatConst(top, x.t))
		r = b.emit1("arith.select", []*ttVal{over, b.intConst(maxInt, r.t), r}, r.t)
		nan := b.cmp("arith.cmpf", "uno", x, x)
		return b.emit1("arith.select", []*ttVal{nan, b.intConst(0, r.t), r}, r.t)
	case to.IsFloat():
		unsigned := from.IsUnsigned() || from.IsBool()
		if te == "bf16" && x.t.bits() > 24 {
			return l.intToBF16(x, unsigned)
		}
		if unsigned {
			return b.cast("arith.uitofp", x, te)
		}
		return b.cast("arith.sitofp", x, te)
	}
	// Integer to integer.
	switch {
	case x.t.bits() > t.bits():
		return b.cast("arith.trunci", x, te)
	case x.t.bits() < t.bits() && (from.IsUnsigned() || from.IsBool()):
		return b.cast("arith.extui", x, te)
	case x.t.bits() < t.bits():
		return b.cast("arith.extsi", x, te)
	}
	return x
}

func (l *ttLower) broadcastInDim(op *Op, x *ttVal, dims []int64, shape []int64) *ttVal {
	b := l.b
	if x.t.scalar() {
		return b.splat(x, shape)
	}
	if len(dims) != len(x.t.shape) {
		l.fail(op, "broadcast dims %v for an operand of rank %d", dims, len(x.t.shape))
	}
	// Order the operand dims like the result's.
	order := make([]int64, len(dims))
	for i := range order {
		order[i] = int64(i)
	}
	sort.Slice(order, func(i, j int) bool { return dims[order[i]] < dims[order[j]] })
	sorted := make([]int64, len(dims))
	perm := false
	for i, o := range order {
		sorted[i] = dims[o]
		perm = perm || o != int64(i)
	}
	if perm {
		x = b.trans(x, order)
	}
	have := map[int64]bool{}
	for _, d := range sorted {
		have[d] = true
	}
	for j := range shape {
		if !have[int64(j)] {
			x = b.expandDims(x, j)
		}
	}
	return b.broadcastTo(x, shape)
}

// reduceAxis is one tt.reduce of x along axis.
func (l *ttLower) reduceAxis(x *ttVal, axis int, kind string, dt xla.DType) *ttVal {
	return l.foldAxis("tt.reduce", x, axis, kind, dt, false)
}

// concatenate joins op's operands pairwise with tt.join, which stacks
// two tensors of one shape along a new last dim: moved before the axis
// (tt.trans) and merged into it (tt.reshape), that is the pair end to
// end. Triton has no other way to join tensors in order, so the operands
// must be of one shape, a power-of-two count of them (checkConcatenate).
func (l *ttLower) concatenate(op *Op) *ttVal {
	parts := make([]*ttVal, len(op.Operands))
	for i, o := range op.Operands {
		parts[i] = l.v(op, o)
	}
	axis := int64(op.Attrs.Axis)
	for len(parts) > 1 {
		next := parts[:0:0]
		for i := 0; i < len(parts); i += 2 {
			x, y := parts[i], parts[i+1]
			r := int64(len(x.t.shape))
			j := l.b.emit1("tt.join", []*ttVal{x, y}, x.t.with(append(clone(x.t.shape), 2)))
			order := make([]int64, 0, r+1)
			for d := int64(0); d <= r; d++ {
				switch {
				case d == axis:
					order = append(order, r, d) // the pair's dim, then the axis
				case d < r:
					order = append(order, d)
				}
			}
			tr := l.b.trans(j, order)
			shape := clone(x.t.shape)
			shape[axis] *= 2
			next = append(next, l.b.emit1("tt.reshape", []*ttVal{tr}, x.t.with(shape)))
		}
		parts = next
	}
	return parts[0]
}

// slice takes elements [Start, Start+size) of op's operand along its
// axis. An aligned part (a power-of-two size at a multiple of it, as
// Split's parts are) halves the operand (tt.split) until it is that size,
// which moves no data; another part of a power-of-two size gathers its
// elements (tt.gather at Start, Start+1, ...), a shuffle among the
// threads. A part of another size has no Triton tensor to hold it.
func (l *ttLower) slice(op *Op) *ttVal {
	x := l.v(op, op.Operands[0])
	axis, start := op.Attrs.Axis, op.Attrs.Start
	size := op.Results[0].Type.Shape[axis]
	if size&(size-1) != 0 {
		l.fail(op, "elements [%d, %d) of axis %d: Triton tensors need power-of-two dims", start, start+size, axis)
	}
	if start%size != 0 {
		b := l.b
		rt := l.typeOf(op, op.Results[0].Type)
		rng := b.emit1("tt.make_range", nil, ttType{elem: "i32", shape: []int64{size}}, i32Attr("end", size), i32Attr("start", 0))
		rng = b.addI(rng, b.intConst(start, rng.t))
		return b.emit1("tt.gather", []*ttVal{x, b.place(rng, axis, rt.shape)}, rt, i32Attr("axis", int64(axis)))
	}
	for x.t.shape[axis] > size {
		h := x.t.shape[axis] / 2
		part := start / h // which half holds the slice
		start -= part * h
		// [.., 2h, ..] -> [.., 2, h, ..] -> [.., h, .., 2], split.
		r := len(x.t.shape)
		shape := slices.Insert(clone(x.t.shape), axis, 2)
		shape[axis+1] = h
		x = l.b.emit1("tt.reshape", []*ttVal{x}, x.t.with(shape))
		order := make([]int64, 0, r+1)
		for d := range r + 1 {
			if d != axis {
				order = append(order, int64(d))
			}
		}
		order = append(order, int64(axis))
		x = l.b.trans(x, order)
		half := x.t.with(x.t.shape[:r])
		x = l.b.emit("tt.split", []*ttVal{x}, []ttType{half, half}).results[part]
	}
	return x
}

// assocScan lowers an AssociativeScan to one tt.scan of its values whose
// combine region is the scan's own, lowered on scalars.
func (l *ttLower) assocScan(op *Op) {
	b := l.b
	xs := make([]*ttVal, len(op.Operands))
	types := make([]ttType, len(xs))
	for i, x := range op.Operands {
		xs[i] = l.v(op, x)
		types[i] = xs[i].t
	}
	body := op.Regions[0]
	r := &ttRegion{}
	for _, a := range body.Args {
		v := &ttVal{t: l.typeOf(op, a.Type)}
		r.args = append(r.args, v)
		l.set(a, v)
	}
	sc := b.emit("tt.scan", xs, types, i32Attr("axis", int64(op.Attrs.Axis)),
		ttAttr{name: "reverse", text: strconv.FormatBool(op.Attrs.Reverse), val: op.Attrs.Reverse})
	sc.regions = []*ttRegion{r}
	b.pushIsolated(r)
	l.region(body)
	ys := make([]*ttVal, len(body.Yield))
	for i, y := range body.Yield {
		ys[i] = l.v(op, y)
	}
	b.emit("tt.scan.return", ys, nil)
	b.popIsolated()
	for i, res := range op.Results {
		l.set(res, sc.results[i])
	}
}

// foldAxis is one tt.reduce or tt.scan (name; a scan from the end with
// reverse) of x along axis whose combine region is kind's arith op (sum,
// prod, max, min; float max and min as arith.maximumf and minimumf: NaN
// propagates, -0 is below +0, as in interpret mode).
func (l *ttLower) foldAxis(name string, x *ttVal, axis int, kind string, dt xla.DType, reverse bool) *ttVal {
	b := l.b
	elem := ttType{elem: x.t.elem}
	var comb string
	switch kind {
	case "sum":
		comb = binaryOp("add", dt)
	case "prod":
		comb = binaryOp("mul", dt)
	case "max", "min":
		comb = binaryOp(kind, dt)
	default:
		l.fail(nil, "unknown %s kind %q", name, kind)
	}
	attrs := []ttAttr{i32Attr("axis", int64(axis))}
	rt := x.t // a scan keeps the shape
	if name == "tt.reduce" {
		rt = x.t.with(append(clone(x.t.shape[:axis]), x.t.shape[axis+1:]...))
	} else {
		attrs = append(attrs, ttAttr{name: "reverse", text: strconv.FormatBool(reverse), val: reverse})
	}
	r := &ttRegion{args: []*ttVal{{t: elem}, {t: elem}}}
	op := b.emit(name, []*ttVal{x}, []ttType{rt}, attrs...)
	op.regions = []*ttRegion{r}
	b.push(r)
	y := b.emit1(comb, []*ttVal{r.args[0], r.args[1]}, elem)
	b.emit(name+".return", []*ttVal{y}, nil)
	b.pop()
	return op.results[0]
}

func (l *ttLower) dot(op *Op, rt ttType) *ttVal {
	b := l.b
	x, y := l.v(op, op.Operands[0]), l.v(op, op.Operands[1])
	in := op.Operands[0].Type.DType
	widened := widenedInKernel(x) || widenedInKernel(y)
	// 2-D, or 3-D with a leading batch dim (tt.dot takes both): the
	// last two dims are the matrices.
	if op.Attrs.TransA {
		x = b.swapLast(x)
	}
	if op.Attrs.TransB {
		y = b.swapLast(y)
	}
	r := len(x.t.shape)
	m, k, n := x.t.shape[r-2], x.t.shape[r-1], y.t.shape[r-1]
	out := op.Results[0].Type.DType
	if in.IsFloat() && !out.IsFloat() {
		// Interpret mode would truncate the operands to integers first;
		// JAX takes integer preferred types for integer operands only.
		l.fail(op, "a dot of %v operands has no integer result (%v) on Triton", in, out)
	}
	// An f64 result accumulates in f64 (as in interpret mode) on operands
	// widened exactly. Triton's f64 tt.dot summed operands widened in the
	// kernel (arith.extf) wrongly on an H100 (f64 operands loaded as such
	// were right), so such dots are products and sums.
	if out == xla.Float64 && in.IsFloat() && in != xla.Float64 {
		widened, in = true, xla.Float64
	}
	var acc string
	var attrs []ttAttr
	intProducts := false // integer operands tt.dot does not take
	why := fmt.Sprintf("has %v operands, which tt.dot does not take (of the integers only i8)", in)
	switch in {
	case xla.Float16, xla.BFloat16:
		acc = "f32"
	case xla.Float32:
		acc = "f32"
		attrs = append(attrs, i32Attr("inputPrecision", 2)) // IEEE
	case xla.Float64:
		acc = "f64"
	case xla.Int8:
		acc = "i32"
		if k >= 1<<17 && (out.IsFloat() || out.Bits() > 32) {
			// tt.dot sums i8 products (up to 2^14 each) in i32, which 2^17
			// of them can overflow; interpret mode sums in the wider
			// result type.
			acc, intProducts = "i64", true
			why = fmt.Sprintf("sums %d i8 products, which tt.dot's i32 accumulator can overflow before the %v result", k, out)
		}
	default:
		if !in.IsInt() || !out.IsInt() {
			l.fail(op, "tt.dot takes f16, bf16, f32, f64 or i8 operands (other integers into integer results), not %v into %v: convert the operands with Astype first, or dot into an integer type and convert the result", in, out)
		}
		// Products and sums, wrapping as interpret mode's do in the
		// result type: the same low bits in a wider accumulator.
		acc, intProducts = "i32", true
		if in.Bits() > 32 || out.Bits() > 32 {
			acc = "i64"
		}
	}
	at := ttType{elem: acc, shape: clone(rt.shape)}
	var d *ttVal
	if intProducts {
		d = l.productSum(op, x, y, at, why)
	} else if dotTooSmall(in, m, k, n) {
		d = l.productSum(op, x, y, at, "is below the tensor cores' sizes (K under 16 for f16, bf16 and f64, under 32 for i8; M under 16 or N under 8 for f64)")
	} else if widened && in == xla.Float64 {
		d = l.productSum(op, x, y, at, "multiplies values widened to f64 from a narrower type (by the dot's f64 result, or by an Astype in the kernel), which Triton's f64 tt.dot sums wrongly (load f64 operands instead)")
	} else {
		d = b.emit1("tt.dot", []*ttVal{x, y, b.numConst(0, at)}, at, attrs...)
	}
	from := xla.Float32
	switch acc {
	case "f64":
		from = xla.Float64
	case "i32":
		from = xla.Int32
	case "i64":
		from = xla.Int64
	}
	return l.convert(op, d, from, out)
}

// widenedInKernel reports whether v's elements were widened in the
// kernel (arith.extf), directly or before ops that only move or pick
// elements (transposes, reshapes, broadcasts, splats, selects): Triton's
// f64 tt.dot summed such operands wrongly on an H100.
func widenedInKernel(v *ttVal) bool {
	seen := map[*ttVal]bool{}
	var walk func(v *ttVal) bool
	walk = func(v *ttVal) bool {
		if v.def == nil || seen[v] {
			return false
		}
		seen[v] = true
		switch v.def.name {
		case "arith.extf":
			return true
		case "tt.trans", "tt.reshape", "tt.broadcast", "tt.expand_dims", "tt.splat":
			return walk(v.def.operands[0])
		case "tt.join":
			return walk(v.def.operands[0]) || walk(v.def.operands[1])
		case "tt.split", "tt.gather":
			return walk(v.def.operands[0])
		case "arith.select":
			return walk(v.def.operands[1]) || walk(v.def.operands[2])
		}
		return false
	}
	return walk(v)
}

// dotTooSmall reports whether an m×k by k×n tt.dot of in operands is
// below what Triton's NVIDIA tensor-core lowering takes: k of at least 16
// for 16-bit and 64-bit operands and 32 for 8-bit ones (the sizes Triton's
// own front end asks for), and m of at least 16 and n of at least 8 for
// f64 (smaller f64 dots have crashed its compiler). f32 dots at IEEE
// precision run on FMA units at any size.
func dotTooSmall(in xla.DType, m, k, n int64) bool {
	switch in {
	case xla.Float16, xla.BFloat16:
		return k < 16
	case xla.Int8:
		return k < 32
	case xla.Float64:
		return m < 16 || n < 8 || k < 16
	}
	return false
}

// productSum computes a small dot without tt.dot: the operands widened
// to the accumulator type at, broadcast to m×k×n, multiplied and summed
// over k (the products of f16, bf16 and i8 operands are exact in the
// accumulator: the same sums as a dot, in some order).
func (l *ttLower) productSum(op *Op, x, y *ttVal, at ttType, why string) *ttVal {
	b := l.b
	ext := "arith.extsi"
	if op.Operands[0].Type.DType.IsUnsigned() {
		ext = "arith.extui"
	}
	widen := func(v *ttVal) *ttVal {
		switch {
		case v.t.elem == at.elem:
			return v
		case at.isFloat():
			if v.t.elem == "bf16" && at.elem == "f64" {
				v = b.cast("arith.extf", v, "f32") // as convert: bf16 widens through f32
			}
			return b.cast("arith.extf", v, at.elem)
		}
		return b.cast(ext, v, at.elem)
	}
	// The products [batch...,m,k,n], summed along k.
	r := len(x.t.shape)
	batch := x.t.shape[:r-2]
	m, k, n := x.t.shape[r-2], x.t.shape[r-1], y.t.shape[r-1]
	cube := append(clone(batch), m, k, n)
	size := m * k * n
	for _, d := range batch {
		size *= d
	}
	if size > tritonMaxNumel {
		dims := func(sh []int64) string {
			parts := make([]string, len(sh))
			for i, d := range sh {
				parts[i] = strconv.FormatInt(d, 10)
			}
			return strings.Join(parts, "x")
		}
		l.fail(op, "a %s by %s dot %s and is too large to compute as %d products (Triton's tensors hold at most %d elements): use smaller blocks",
			dims(x.t.shape), dims(y.t.shape), why, size, tritonMaxNumel)
	}
	xd, yd := make([]int64, r), make([]int64, r)
	for d := range r - 2 {
		xd[d], yd[d] = int64(d), int64(d)
	}
	xd[r-2], xd[r-1] = int64(r-2), int64(r-1) // m, k
	yd[r-2], yd[r-1] = int64(r-1), int64(r)   // k, n
	x3 := l.broadcastInDim(op, widen(x), xd, cube)
	y3 := l.broadcastInDim(op, widen(y), yd, cube)
	mul := "arith.muli"
	dt := xla.Int32
	if at.isFloat() {
		mul, dt = "arith.mulf", xla.Float32
		if at.elem == "f64" {
			dt = xla.Float64
		}
	}
	return b.plusZero(l.reduceAxis(b.emit1(mul, []*ttVal{x3, y3}, at.with(cube)), r-1, "sum", dt))
}

// intToBF16 converts integer x, wider than the 24 bits f32 holds exactly,
// to bf16 rounded once, as interpret mode does. Triton converts integers
// to bf16 through f32, rounding twice (2^24+2^16+1 would become 2^24, not
// 2^24+2^17); rounding to f32 "to odd" instead (an inexact result moved
// to its neighbour with an odd last bit, towards x) makes the rounding
// to bf16 that follows the correct one, f32 having more than 8+1 bits.
func (l *ttLower) intToBF16(x *ttVal, unsigned bool) *ttVal {
	b := l.b
	toF, back, lt, gt, ext := "arith.sitofp", "arith.fptosi", "slt", "sgt", "arith.extsi"
	limit := math.Ldexp(1, 63) // f at or above it is above every x
	if unsigned {
		toF, back, lt, gt, ext, limit = "arith.uitofp", "arith.fptoui", "ult", "ugt", "arith.extui", math.Ldexp(1, 64)
	}
	f := b.cast(toF, x, "f32")
	f32 := f.t
	xi := x
	if x.t.bits() < 64 {
		xi = b.cast(ext, x, "i64")
	}
	// f is an integer: compare it with x as 64-bit integers, converting
	// it back only where that is defined.
	huge := b.cmp("arith.cmpf", "oge", f, b.floatConst(limit, f32))
	fb := b.cast(back, b.emit1("arith.select", []*ttVal{huge, b.floatConst(0, f32), f}, f32), "i64")
	above := b.emit1("arith.ori", []*ttVal{huge, b.cmp("arith.cmpi", lt, xi, fb)}, huge.t) // f > x
	below := b.emit1("arith.andi", []*ttVal{b.cmp("arith.cmpi", "eq", huge, b.intConst(0, huge.t)),
		b.cmp("arith.cmpi", gt, xi, fb)}, huge.t) // f < x
	// tt.bitcast: XLA's Triton pipeline refuses arith.bitcast on tensors
	// ("failed to legalize operation 'arith.bitcast'", an H100 run).
	bits := b.cast("tt.bitcast", f, "i32")
	i32 := bits.t
	even := b.cmp("arith.cmpi", "eq", b.emit1("arith.andi", []*ttVal{bits, b.intConst(1, i32)}, i32), b.intConst(0, i32))
	// Towards x: a larger magnitude when x is beyond f (above zero: x > f).
	neg := b.cmp("arith.cmpf", "olt", f, b.floatConst(0, f32))
	grow := b.emit1("arith.select", []*ttVal{neg, above, below}, huge.t)
	step := b.emit1("arith.select", []*ttVal{grow, b.intConst(1, i32), b.intConst(-1, i32)}, i32)
	move := b.emit1("arith.andi", []*ttVal{even, b.emit1("arith.ori", []*ttVal{above, below}, huge.t)}, huge.t)
	bits = b.emit1("arith.select", []*ttVal{move, b.emit1("arith.addi", []*ttVal{bits, step}, i32), bits}, i32)
	return b.cast("arith.truncf", b.cast("tt.bitcast", bits, "f32"), "bf16")
}

// floatDivRem divides (or takes the remainder of) floats as interpret
// mode does: f32 with tt.precise_divf (IEEE division; arith.divf becomes
// an approximate one), f64 with arith.divf (IEEE on NVIDIA), remainders
// with libdevice's exact fmod, and 16-bit
// floats in f32, rounded back once (exact: f32 has more than twice
// their precision, and Triton's NVIDIA lowering divides 32 and 64 bits
// only).
func (l *ttLower) floatDivRem(name string, x, y *ttVal, rt ttType) *ttVal {
	b := l.b
	if rt.elem == "f16" || rt.elem == "bf16" {
		wide := rt.as("f32")
		r := l.floatDivRem(name, b.cast("arith.extf", x, "f32"), b.cast("arith.extf", y, "f32"), wide)
		return b.cast("arith.truncf", r, rt.elem)
	}
	switch {
	case name == "rem":
		// libdevice's fmod is exact, as interpret mode's remainder;
		// arith.remf is whatever LLVM's NVPTX backend makes of frem.
		sym := "__nv_fmod"
		if rt.elem == "f32" {
			sym += "f"
		}
		return b.emit1("tt.extern_elementwise", []*ttVal{x, y}, rt,
			strAttr("libname", ""), strAttr("libpath", ""), boolAttr("pure", true), strAttr("symbol", sym))
	case rt.elem == "f32":
		return b.emit1("tt.precise_divf", []*ttVal{x, y}, rt)
	}
	return b.emit1("arith.divf", []*ttVal{x, y}, rt)
}

// address returns the pointers of a load, store or atomic update, its
// mask (the padding of edge blocks and the kernel's mask, nil when there
// is neither), the padding's part of it (the lanes inside the array; nil
// when the block has no padding), and the op's operands after the
// indices.
func (l *ttLower) address(op *Op) (ptrs, mask, inside *ttVal, ref *ttRef, rest []*Value) {
	b := l.b
	ref = l.refs[op.Operands[0]]
	if ref == nil {
		l.fail(op, "operand 0 is not a ref")
	}
	if ref.scratch {
		l.fail(op, "%s: scratch refs have no Triton lowering (grid steps run in parallel on a GPU; carry values through ForLoop instead)", ref.info)
	}
	ix := op.Attrs.Indexer
	idx := op.Operands[1 : 1+ix.NumOperands]
	rest = op.Operands[1+ix.NumOperands:]
	shape := ix.Shape
	l.checkShape(op, Type{DType: ref.info.DType, Shape: shape})
	if len(ix.Dims) != len(ref.dims) {
		l.fail(op, "indexer of rank %d for %s", len(ix.Dims), ref.info)
	}
	off := ref.off
	start := func(di DimIndex) *ttVal {
		if di.Operand >= 0 {
			return l.toOff(l.v(op, idx[di.Operand]), off)
		}
		return b.intConst(di.Start, off)
	}
	scalar := b.intConst(0, off)
	var tensor *ttVal
	add := func(t *ttVal) {
		if tensor == nil {
			tensor = t
		} else {
			tensor = b.addI(tensor, t)
		}
	}
	// Squeezed dims: the block start is the element.
	for d, bd := range ref.info.Block {
		if bd == Squeezed {
			scalar = b.addI(scalar, b.mulI(ref.starts[d], b.intConst(ref.strides[d], off)))
		}
	}
	slices := 0
	for k, di := range ix.Dims {
		d := ref.dims[k]
		stride := b.intConst(ref.strides[d], off)
		base := ref.starts[d]
		limit := ref.limits[d]
		switch di.Kind {
		case DimPoint:
			s := start(di)
			scalar = b.addI(scalar, b.mulI(b.addI(base, s), stride))
			if limit != nil {
				mask = b.andI(mask, b.splat(b.cmp("arith.cmpi", "slt", s, limit), shape))
			}
		case DimSlice:
			pos := slices
			if ix.HasArrays() && slices >= ix.ArrayPos {
				pos += len(ix.ArrayShape)
			}
			slices++
			s := start(di)
			scalar = b.addI(scalar, b.mulI(b.addI(base, s), stride))
			rng := l.toOff(b.emit1("tt.make_range", nil, ttType{elem: "i32", shape: []int64{di.Size}},
				i32Attr("end", di.Size), i32Attr("start", 0)), off)
			add(b.place(b.mulI(rng, b.splat(stride, rng.t.shape)), pos, shape))
			if limit != nil {
				left := b.subI(limit, s)
				c := b.cmp("arith.cmpi", "slt", rng, b.splat(left, rng.t.shape))
				mask = b.andI(mask, b.place(c, pos, shape))
			}
		case DimArray:
			a := l.toOff(l.v(op, idx[di.Operand]), off)
			scalar = b.addI(scalar, b.mulI(base, stride))
			add(b.place(b.mulI(a, b.splat(stride, a.t.shape)), ix.ArrayPos, shape))
			if limit != nil {
				c := b.cmp("arith.cmpi", "slt", a, b.splat(limit, a.t.shape))
				mask = b.andI(mask, b.place(c, ix.ArrayPos, shape))
			}
		}
	}
	p := ref.ptr
	if !(scalar.isInt && scalar.ival == 0) {
		p = b.emit1("tt.addptr", []*ttVal{p, scalar}, p.t)
	}
	if len(shape) > 0 {
		pt := p.t.with(shape)
		p = b.emit1("tt.addptr", []*ttVal{b.emit1("tt.splat", []*ttVal{p}, pt), tensor}, pt)
	}
	inside = mask
	if ix.HasMask {
		var m *Value
		if op.Name == "load" {
			m = rest[0]
		} else {
			m = rest[1]
		}
		mask = b.andI(mask, l.v(op, m))
	}
	return p, mask, inside, ref, rest
}

func (l *ttLower) load(op *Op, rt ttType) *ttVal {
	b := l.b
	ptrs, mask, inside, ref, rest := l.address(op)
	padded := inside != nil
	mt, _ := ttMemElem(ref.info.DType)
	t := rt.as(mt)
	var x *ttVal
	l.access(ref, hzLoaded, nil)
	if mask == nil {
		x = b.emit1("tt.load", []*ttVal{ptrs}, t, i32ArrayAttr("operandSegmentSizes", []int64{1, 0, 0}))
	} else {
		ix := op.Attrs.Indexer
		var other *ttVal
		if ix.HasOther {
			other = l.v(op, rest[1])
			if mt != rt.elem {
				other = b.cast("arith.extui", other, mt)
			}
		} else {
			other = b.numConst(0, t)
		}
		fill := other
		if padded {
			// The padding of an edge block reads as interpret mode's pad
			// value (NaN, the minimum integer), the kernel's masked-off
			// elements as its other value.
			fill = b.numConst(uninitValue(ref.info.DType), t)
		}
		x = b.emit1("tt.load", []*ttVal{ptrs, mask, fill}, t, i32ArrayAttr("operandSegmentSizes", []int64{1, 1, 1}))
		if padded && ix.HasMask {
			x = b.emit1("arith.select", []*ttVal{l.v(op, rest[0]), x, other}, t)
		}
	}
	if mt != rt.elem { // bool from bytes
		x = b.cmp("arith.cmpi", "ne", x, b.intConst(0, t))
	}
	return x
}

func (l *ttLower) store(op *Op) {
	b := l.b
	ptrs, mask, _, ref, rest := l.address(op)
	x := l.v(op, rest[0])
	if mt, _ := ttMemElem(ref.info.DType); mt != x.t.elem {
		x = b.cast("arith.extui", x, mt)
	}
	ops := []*ttVal{ptrs, x}
	if mask != nil {
		ops = append(ops, mask)
	}
	l.access(ref, hzStored, op)
	b.emit("tt.store", ops, nil)
}

// dtypeName names dt in errors; the 1-bit integers, whose MLIR names (i1,
// ui1) read like bool's, are named as the Go constant too.
func dtypeName(dt xla.DType) string {
	switch dt {
	case xla.Int1:
		return fmt.Sprintf("%v (xla.Int1, a signed 1-bit integer, not bool)", dt)
	case xla.Uint1:
		return fmt.Sprintf("%v (xla.Uint1, an unsigned 1-bit integer, not bool)", dt)
	}
	return dt.String()
}

// atomicRMW is tt.atomic_rmw's code (its atomic_rmw_op property) of an
// atomic update kind on elements of dtype dt.
func atomicRMW(kind string, dt xla.DType) int64 {
	u := dt.IsUnsigned()
	switch kind {
	case "add":
		if dt.IsFloat() {
			return 5 // fadd
		}
		return 4
	case "max":
		if u {
			return 8 // umax
		}
		return 6
	case "min":
		if u {
			return 9 // umin
		}
		return 7
	case "and":
		return 1
	case "or":
		return 2
	case "xor":
		return 3
	}
	return 10 // exch
}

// atomic lowers an atomic update to tt.atomic_rmw (acquire-release, at
// GPU scope). Its result is the old elements; where the kernel's mask is
// false, zero, and in an edge block's padding (never updated), interpret
// mode's pad value, as a load's.
func (l *ttLower) atomic(op *Op, rt ttType) *ttVal {
	b := l.b
	ptrs, mask, inside, ref, rest := l.address(op)
	padded := inside != nil
	l.access(ref, hzAtomic, op)
	var x *ttVal
	if kind := op.Attrs.Kind; kind == "cas" {
		x = l.cas(ptrs, mask, ref, l.v(op, rest[len(rest)-1]), l.v(op, rest[0]), rt)
	} else if (kind == "max" || kind == "min") && ref.info.DType.IsFloat() {
		x = l.floatMaxMin(kind, ptrs, l.v(op, rest[0]), mask, rt)
	} else {
		ops := []*ttVal{ptrs, l.v(op, rest[0])}
		if mask != nil {
			ops = append(ops, mask)
		}
		x = b.emit1("tt.atomic_rmw", ops, rt,
			i32Attr("atomic_rmw_op", atomicRMW(op.Attrs.Kind, ref.info.DType)), i32Attr("scope", 1), i32Attr("sem", 4))
	}
	if mask == nil {
		return x
	}
	zero := b.numConst(0, rt)
	fill := zero
	if padded {
		fill = b.numConst(uninitValue(ref.info.DType), rt)
	}
	x = b.emit1("arith.select", []*ttVal{mask, x, fill}, rt)
	if padded && op.Attrs.Indexer.HasMask {
		x = b.emit1("arith.select", []*ttVal{l.v(op, rest[1]), x, zero}, rt)
	}
	return x
}

// cas is tt.atomic_cas of v at ptrs where they hold cmp. The op has no
// mask: a lane the mask drops swaps cmp for cmp at the array's first
// element instead, which leaves it as it was whatever it holds (its own
// element may lie outside the array: a kernel's mask often guards a
// position computed past the end); the caller selects the old values
// away. An array of no elements has none to swap: every lane is masked
// there, and no cas is emitted.
func (l *ttLower) cas(ptrs, mask *ttVal, ref *ttRef, cmp, v *ttVal, rt ttType) *ttVal {
	b := l.b
	if slices.Contains(ref.info.ArrayShape, 0) {
		return b.numConst(0, rt)
	}
	if mask != nil {
		first := ref.ptr
		if !rt.scalar() {
			first = b.emit1("tt.splat", []*ttVal{ref.ptr}, ptrs.t)
		}
		ptrs = b.emit1("arith.select", []*ttVal{mask, ptrs, first}, ptrs.t)
		v = b.emit1("arith.select", []*ttVal{mask, v, cmp}, rt)
	}
	return b.emit1("tt.atomic_cas", []*ttVal{ptrs, cmp, v}, rt, i32Attr("scope", 1), i32Attr("sem", 4))
}

// floatMaxMin is an atomic max or min of floats v at ptrs (where mask
// holds, if any) with integer updates of their bits, as Triton's
// tl.atomic_max does: a float of clear sign bit orders as its bits read
// signed, so such a v takes a signed max (min); a negative one orders
// backwards as its bits read unsigned, so it takes an unsigned min (max).
// -0 is below +0 both ways; NaNs order by their bits. The old values come
// back as floats.
func (l *ttLower) floatMaxMin(kind string, ptrs, v, mask *ttVal, rt ttType) *ttVal {
	b := l.b
	ib := fmt.Sprintf("i%d", rt.bits())
	ip := b.cast("tt.bitcast", ptrs, ptrType(ib))
	bits := b.cast("tt.bitcast", v, ib)
	zero := b.intConst(0, bits.t)
	pos := b.cmp("arith.cmpi", "sge", bits, zero)
	neg := b.cmp("arith.cmpi", "slt", bits, zero)
	if mask != nil {
		pos, neg = b.andI(pos, mask), b.andI(neg, mask)
	}
	signed, unsigned := int64(6), int64(9) // max, umin
	if kind == "min" {
		signed, unsigned = 7, 8 // min, umax
	}
	rmw := func(code int64, m *ttVal) *ttVal {
		return b.emit1("tt.atomic_rmw", []*ttVal{ip, bits, m}, bits.t,
			i32Attr("atomic_rmw_op", code), i32Attr("scope", 1), i32Attr("sem", 4))
	}
	oldPos, oldNeg := rmw(signed, pos), rmw(unsigned, neg)
	old := b.emit1("arith.select", []*ttVal{pos, oldPos, oldNeg}, bits.t)
	return b.cast("tt.bitcast", old, rt.elem)
}

func (l *ttLower) forOp(op *Op) {
	b := l.b
	lo, hi := l.v(op, op.Operands[0]), l.v(op, op.Operands[1])
	init := make([]*ttVal, len(op.Operands)-2)
	types := make([]ttType, len(init))
	for i := range init {
		init[i] = l.v(op, op.Operands[2+i])
		types[i] = init[i].t
	}
	step := b.i32(1)
	body := op.Regions[0]
	r := &ttRegion{}
	for _, a := range body.Args {
		t := l.typeOf(op, a.Type)
		v := &ttVal{t: t}
		r.args = append(r.args, v)
		l.set(a, v)
	}
	l.barrierBeforeLoop(op)
	loop := b.emit("scf.for", append([]*ttVal{lo, hi, step}, init...), types)
	loop.regions = []*ttRegion{r}
	b.push(r)
	// An iteration may follow the loop's start or another iteration.
	before := maps.Clone(l.hazards)
	l.regionAccesses(l.hazards, op.Regions)
	l.region(body)
	l.mergeHazards(before, l.hazards)
	l.yield(op, body)
	b.pop()
	for i, res := range op.Results {
		l.set(res, loop.results[i])
	}
}

// yield ends the lowering of op's region r: scf.yield of what r yields.
func (l *ttLower) yield(op *Op, r *Region) {
	ys := make([]*ttVal, len(r.Yield))
	for i, y := range r.Yield {
		ys[i] = l.v(op, y)
	}
	l.b.emit("scf.yield", ys, nil)
}

// whenOp lowers a When, or a Cond with its else and results, to scf.if.
func (l *ttLower) whenOp(op *Op) {
	b := l.b
	types := make([]ttType, len(op.Results))
	for i, res := range op.Results {
		types[i] = l.typeOf(op, res.Type)
	}
	ifOp := b.emit("scf.if", []*ttVal{l.v(op, op.Operands[0])}, types)
	// After it: the hazards of either branch, or of skipping a When.
	before := maps.Clone(l.hazards)
	after := []map[int]hazard{before}
	for i, reg := range op.Regions {
		r := &ttRegion{}
		ifOp.regions = append(ifOp.regions, r)
		if i > 0 {
			after = after[1:] // an else: the op is never skipped
			l.hazards = maps.Clone(before)
		}
		b.push(r)
		l.region(reg)
		l.yield(op, reg)
		b.pop()
		after = append(after, l.hazards)
	}
	l.mergeHazards(after...)
	for i, res := range op.Results {
		l.set(res, ifOp.results[i])
	}
}

func (l *ttLower) whileOp(op *Op) {
	b := l.b
	init := make([]*ttVal, len(op.Operands))
	types := make([]ttType, len(init))
	for i := range init {
		init[i] = l.v(op, op.Operands[i])
		types[i] = init[i].t
	}
	cond, body := op.Regions[0], op.Regions[1]
	args := func(reg *Region) *ttRegion {
		r := &ttRegion{}
		for i, a := range reg.Args {
			v := &ttVal{t: types[i]}
			r.args = append(r.args, v)
			l.set(a, v)
		}
		return r
	}
	before, after := args(cond), args(body)
	l.barrierBeforeLoop(op)
	loop := b.emit("scf.while", init, types)
	loop.regions = []*ttRegion{before, after}
	b.push(before)
	// The condition may follow the loop's start or the body.
	l.regionAccesses(l.hazards, op.Regions)
	l.region(cond)
	if len(cond.Yield) != 1 {
		l.fail(op, "while condition yields %d values", len(cond.Yield))
	}
	b.emit("scf.condition", append([]*ttVal{l.v(op, cond.Yield[0])}, before.args...), nil)
	b.pop()
	// The loop leaves from its condition, entered (conservatively) with
	// every access of the loop pending.
	exit := maps.Clone(l.hazards)
	b.push(after)
	l.region(body)
	l.yield(op, body)
	b.pop()
	l.hazards = exit
	for i, res := range op.Results {
		l.set(res, loop.results[i])
	}
}

// debugPrint lowers a print to one tt.print per value, led by the text
// of the format before the value's verb. A GPU prints each element on
// its own line, from the thread that holds it,
//
//	pid (x, y, z) idx (i, j) text element
//
// with the element as C's printf %f, %i or %u writes it, so the format's
// verbs only mark where the values go. A print of no values prints its
// text once per thread.
func (l *ttLower) debugPrint(op *Op) {
	texts, err := printTexts(op.Attrs.Format, len(op.Operands))
	if err != nil {
		l.fail(op, "%v", err)
	}
	if len(op.Operands) == 0 {
		l.b.emit("tt.print", nil, nil, boolAttr("hex", false), i32ArrayAttr("isSigned", nil), strAttr("prefix", " "+texts[0]))
		return
	}
	for i, x := range op.Operands {
		signed := int64(0)
		if dt := x.Type.DType; !dt.IsFloat() && !dt.IsUnsigned() && !dt.IsBool() {
			signed = 1
		}
		prefix := " "
		if t := strings.TrimSpace(texts[i]); t != "" {
			prefix = " " + t + " "
		}
		l.b.emit("tt.print", []*ttVal{l.v(op, x)}, nil, boolAttr("hex", false), i32ArrayAttr("isSigned", []int64{signed}), strAttr("prefix", prefix))
	}
}

// printTexts splits a DebugPrint format of n values into the text before
// each value's verb, and for a format of no values its whole text. A
// Triton print cannot apply the verbs, nor place text after the last
// value, nor take an argument index, nor print a % (%% is refused).
func printTexts(format string, n int) ([]string, error) {
	var texts []string
	var cur strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			cur.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.", format[j]) >= 0 {
			j++
		}
		switch {
		case j >= len(format):
			return nil, fmt.Errorf("format %q ends in a lone %%", format)
		case format[j] == '[':
			return nil, fmt.Errorf("a Triton print cannot take %q's argument indexes (%%[n]): each value prints after the text before its verb", format)
		case format[j] == '%': // %% or %5%: a literal %
			// Triton writes the text into the GPU's printf format, where a
			// % would read an argument that is not there.
			return nil, fmt.Errorf("a Triton print's text cannot hold %% (Triton puts it in printf's format): write it without, in %q", format)
		}
		_, size := utf8.DecodeRuneInString(format[j:])
		texts = append(texts, cur.String())
		cur.Reset()
		i = j + size - 1
	}
	if n == 0 {
		return []string{cur.String()}, nil
	}
	if len(texts) != n {
		return nil, fmt.Errorf("format %q has %d verbs for %d values", format, len(texts), n)
	}
	if t := strings.TrimSpace(cur.String()); t != "" {
		return nil, fmt.Errorf("a Triton print prints each element on its own line after the text before its verb: the text %q after the last verb of %q has nowhere to go", t, format)
	}
	return texts, nil
}
