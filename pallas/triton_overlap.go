package pallas

import (
	"fmt"
	"slices"
)

// The checks of triton_races.go judge accesses by what their positions
// depend on; dependence on the program id is not proof that two programs
// reach different elements (o[p] beside o[n-1-p], o[p % 2], a window of 4
// at a stride of 2). overlapRace closes that gap where it can: it
// computes, at build time, the elements each program reaches.

// placed is where one program's access of an output lands: the box
// [lo, hi) of array elements, clipped to the array.
type placed struct {
	prog   int64 // the program's row-major index in the grid
	op     *Op
	lo, hi []int64
}

// maxOverlapPairs bounds the pairs of boxes overlapRace compares; past it
// the check gives up (it only adds to the checks by dependence).
const maxOverlapPairs = 1 << 24

// overlapRace looks for two programs whose accesses of output ri (its
// stores; its loads and those of the input aliased to it) meet, where one
// of them is a store: on a GPU the programs run in parallel, so the
// result depends on their order. It looks at the accesses whose elements
// are computable at build time for each program: the index map of the
// access's ref is integer arithmetic on the grid indices (mapEval), every
// dynamic start is such arithmetic on the program ids and the indices of
// the ForLoops around it (whose bounds are such arithmetic too; no loaded
// data, no carried value), no index is an array and the mask, if any,
// leaves a box (maskBox). A When around an access whose condition is
// computable leaves it to the programs where it holds; any other is taken
// to run. A store every program makes with the same values (same) is left
// out. It visits the whole grid, or the corner of a large one that
// sharedBlock visits.
//
// complete reports that the elements of every access were computed for
// every program, and every pair of boxes compared: then a nil error is
// proof that no two programs race on the output.
func (x accesses) overlapRace(p *Program, ri int, accs []*Op, read bool, stores int) (complete bool, err error) {
	refOf := map[*Value]int{}
	for i, a := range p.Body.Args {
		refOf[a] = i
	}
	type site struct {
		op   *Op
		info *RefInfo
		m    *mapEval // nil: block 0 everywhere
	}
	var sites []site
	complete = true
	for _, a := range accs {
		if a.Name == "store" && x.same(a, read, stores) {
			continue
		}
		ix := a.Attrs.Indexer
		if ix.HasArrays() {
			complete = false
			continue
		}
		k := refOf[a.Operands[0]]
		info := &p.Refs[k]
		s := site{op: a, info: info}
		if m := p.IndexMaps[k-p.NumPrefetch]; m != nil {
			e, ok := newMapEval(m, p.Grid)
			if !ok || len(m.Yield) != len(info.ArrayShape) {
				complete = false
				continue
			}
			s.m = e
		}
		if kept := len(info.Block) - countSqueezed(info.Block); len(ix.Dims) != kept {
			complete = false
			continue // the lowering reports it
		}
		sites = append(sites, s)
	}
	if !slices.ContainsFunc(sites, func(s site) bool { return s.op.Name == "store" }) {
		return complete, nil // loads alone race with nothing
	}
	sub := gridCorner(p.Grid)
	complete = complete && slices.Equal(sub, p.Grid)
	total := gridSteps(sub)
	k := newKernelEval(p.Grid)
	var boxes []placed
	iterations := maxLoopIterations
	computable := map[*Op]bool{}
	for _, s := range sites {
		computable[s.op] = true
	}
	for n := int64(0); n < total; n++ {
		g := pointOf(n, sub)
		k.at(g)
		for _, s := range sites {
			if !computable[s.op] {
				continue
			}
			blk := make([]int64, len(s.info.ArrayShape))
			if s.m != nil && !s.m.at(g, blk) {
				computable[s.op] = false // divides by zero somewhere
				continue
			}
			place := func() bool {
				if !runsAt(k, x.outer[s.op]) {
					return true
				}
				lo, hi, ok := boxAt(k, s.op, s.info, blk)
				if ok && lo != nil {
					boxes = append(boxes, placed{prog: n, op: s.op, lo: lo, hi: hi})
				}
				return ok
			}
			// Once, or once an iteration of the loops around it when
			// its position needs their indices.
			if !place() && !k.eachIteration(x.outer[s.op], place, &iterations) {
				computable[s.op] = false
			}
		}
	}
	for _, c := range computable {
		complete = complete && c
	}
	boxes = slices.DeleteFunc(boxes, func(b placed) bool { return !computable[b.op] })
	a, b, found, compared := meetingBoxes(boxes)
	if !found {
		return complete && compared, nil
	}
	ga, gb := pointOf(a.prog, sub), pointOf(b.prog, sub)
	at := make([]int64, len(p.Refs[ri].ArrayShape))
	for d := range at {
		at[d] = max(a.lo[d], b.lo[d])
	}
	return complete, &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
		"%s: grid points %s and %s both reach its element %s, the %s at %s in one and the %s at %s in the other (positions computed at build time); "+
			"on a GPU the programs run in parallel and race. Let each program reach only elements no other program stores",
		p.Refs[ri], tuple(ga), tuple(gb), tuple(at), a.op.Name, a.op.Loc, b.op.Name, b.op.Loc)}
}

// maxLoopIterations bounds the loop iterations overlapRace walks through
// for all programs together; past it, accesses that need more are left to
// the checks by dependence.
const maxLoopIterations = 1 << 20

// eachIteration runs place once for each iteration of the ForLoops among
// outer (the ops around an access, outermost first), each loop's index
// bound to its value, while it returns true. It returns false when place
// does, when a loop's bounds are not computable, or when more iterations
// than budget holds are needed (what is left is taken from budget).
func (k *kernelEval) eachIteration(outer []*Op, place func() bool, budget *int) bool {
	var loops []*Op
	for _, o := range outer {
		if o.Name == "for" {
			loops = append(loops, o)
		}
	}
	if len(loops) == 0 {
		return false
	}
	defer func() { // the indices mean nothing outside their loops
		for _, f := range loops {
			delete(k.bound, f.Regions[0].Args[0])
		}
		clear(k.e.vals)
		clear(k.bad)
	}()
	var walk func(d int) bool
	walk = func(d int) bool {
		if d == len(loops) {
			return place()
		}
		f := loops[d]
		lo, ok1 := k.value(f.Operands[0])
		hi, ok2 := k.value(f.Operands[1])
		if !ok1 || !ok2 {
			return false
		}
		for i := lo; i < hi; i++ {
			if *budget--; *budget < 0 {
				return false
			}
			k.bind(f.Regions[0].Args[0], i)
			if !walk(d + 1) {
				return false
			}
		}
		return true
	}
	return walk(0)
}

// runsAt reports whether an access with the ops outer around it may run
// at k's grid point: false only when a When's condition is computable
// there and false.
func runsAt(k *kernelEval, outer []*Op) bool {
	for _, o := range outer {
		if o.Name != "when" {
			continue
		}
		if c, ok := k.value(o.Operands[0]); ok && c == 0 {
			return false
		}
	}
	return true
}

// boxAt computes the array elements access a of a ref (info) reaches at
// k's grid point, its block at block indices blk: lo nil when it reaches
// none (the box lies outside the array, which the lowering's padding
// masks, or its mask leaves nothing); ok false when a dynamic start or
// the mask is not computable (maskBox).
func boxAt(k *kernelEval, a *Op, info *RefInfo, blk []int64) (lo, hi []int64, ok bool) {
	ix := a.Attrs.Indexer
	var mlo, mhi []int64 // the mask's box, over the indexed shape's dims
	if m := maskOf(a); m != nil {
		if mlo, mhi, ok = k.maskBox(m); !ok {
			return nil, nil, false
		}
	}
	if len(info.ArrayShape) == 0 {
		if mlo != nil && len(mlo) == 0 && mhi == nil {
			return nil, nil, true // a false mask
		}
		return []int64{0}, []int64{1}, true // a scalar: one element, as a box of one dim
	}
	if mlo != nil && mhi == nil {
		return nil, nil, true // a false mask
	}
	lo, hi = make([]int64, len(info.ArrayShape)), make([]int64, len(info.ArrayShape))
	j, slice := 0, 0
	for d, bs := range info.Block {
		if bs == Squeezed {
			lo[d], hi[d] = blk[d], blk[d]+1
		} else {
			di := ix.Dims[j]
			j++
			start := di.Start
			if di.Operand >= 0 {
				if start, ok = k.value(a.Operands[1+di.Operand]); !ok {
					return nil, nil, false
				}
			}
			lo[d] = blk[d]*bs + start
			hi[d] = lo[d] + di.Size
			if di.Kind == DimSlice {
				if mlo != nil { // the mask's dims are the slices', in order
					lo[d], hi[d] = max(lo[d], lo[d]+mlo[slice]), min(hi[d], lo[d]+mhi[slice])
				}
				slice++
			}
		}
		lo[d], hi[d] = max(lo[d], 0), min(hi[d], info.ArrayShape[d])
		if lo[d] >= hi[d] {
			return nil, nil, true
		}
	}
	return lo, hi, true
}

// maskBox computes, at k's grid point, the elements a mask of shape
// m.Type.Shape leaves, when they form a box: the mask is a conjunction
// (and) of comparisons of an index (iota, plus or minus a value the same
// everywhere) with a value the same everywhere, of such values, and of
// broadcasts of such masks. lo and hi are per dim, [lo, hi) possibly
// wider than the dim (the caller clips); hi nil (lo not nil) when the
// mask is false everywhere. ok is false for any other mask.
func (k *kernelEval) maskBox(m *Value) (lo, hi []int64, ok bool) {
	rank := len(m.Type.Shape)
	full := func() ([]int64, []int64) {
		lo, hi := make([]int64, rank), make([]int64, rank)
		for d := range hi {
			hi[d] = m.Type.Shape[d]
		}
		return lo, hi
	}
	if c, ok := k.uniform(m); ok {
		if c == 0 {
			return []int64{}, nil, true
		}
		lo, hi := full()
		return lo, hi, true
	}
	op := m.Def
	if op == nil {
		return nil, nil, false
	}
	switch op.Name {
	case "and":
		alo, ahi, ok1 := k.maskBox(op.Operands[0])
		blo, bhi, ok2 := k.maskBox(op.Operands[1])
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		if ahi == nil || bhi == nil {
			return []int64{}, nil, true
		}
		for d := range alo {
			alo[d], ahi[d] = max(alo[d], blo[d]), min(ahi[d], bhi[d])
			if alo[d] >= ahi[d] {
				return []int64{}, nil, true
			}
		}
		return alo, ahi, true
	case "broadcast_in_dim":
		x := op.Operands[0]
		xlo, xhi, ok := k.maskBox(x)
		if !ok {
			return nil, nil, false
		}
		if xhi == nil {
			return []int64{}, nil, true
		}
		lo, hi := full()
		for i, d := range op.Attrs.Dims {
			if x.Type.Shape[i] == 1 && m.Type.Shape[d] != 1 {
				continue // one element spread along d: the whole dim (it is in the box)
			}
			lo[d], hi[d] = xlo[i], xhi[i]
		}
		return lo, hi, true
	case "cmp":
		for side := 0; side < 2; side++ {
			dim, off, ok1 := k.indexAlong(op.Operands[side])
			c, ok2 := k.uniform(op.Operands[1-side])
			if !ok1 || !ok2 {
				continue
			}
			dir := op.Attrs.Dir
			if side == 1 { // c dir index: index flipped-dir c
				dir = map[string]string{"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ"}[dir]
			}
			// index + off dir c, for index in [0, n)
			lo, hi := full()
			at := c - off
			switch dir {
			case "LT":
				hi[dim] = at
			case "LE":
				hi[dim] = at + 1
			case "GT":
				lo[dim] = at + 1
			case "GE":
				lo[dim] = at
			case "EQ":
				lo[dim], hi[dim] = at, at+1
			default:
				return nil, nil, false // NE is not a box
			}
			lo[dim], hi[dim] = max(lo[dim], 0), min(hi[dim], m.Type.Shape[dim])
			if lo[dim] >= hi[dim] {
				return []int64{}, nil, true
			}
			return lo, hi, true
		}
	}
	return nil, nil, false
}

// maxBoxIndex bounds the indices and offsets indexAlong and uniform take,
// far from where 32-bit arithmetic wraps.
const maxBoxIndex = 1 << 30

// indexAlong recognises v as an index along one dim of its shape plus a
// value the same everywhere (iota, broadcasts of it, adding or
// subtracting such a value), of a signed integer type: v at an element is
// its index along dim plus off.
func (k *kernelEval) indexAlong(v *Value) (dim int, off int64, ok bool) {
	op := v.Def
	if op == nil || !v.Type.DType.IsInt() || v.Type.DType.IsUnsigned() || v.Type.DType.Bits() < 16 {
		return 0, 0, false
	}
	switch op.Name {
	case "iota":
		if v.Type.Shape[op.Attrs.Dim] > maxBoxIndex {
			return 0, 0, false
		}
		return op.Attrs.Dim, 0, true
	case "broadcast_in_dim":
		x := op.Operands[0]
		d, off, ok := k.indexAlong(x)
		if !ok || x.Type.Shape[d] == 1 && v.Type.Shape[op.Attrs.Dims[d]] != 1 {
			return 0, 0, false
		}
		return int(op.Attrs.Dims[d]), off, true
	case "add", "sub":
		for side := 0; side < 2; side++ {
			if side == 1 && op.Name == "sub" {
				break // c - index is not an index
			}
			d, off, ok1 := k.indexAlong(op.Operands[side])
			c, ok2 := k.uniform(op.Operands[1-side])
			if !ok1 || !ok2 {
				continue
			}
			if op.Name == "sub" {
				c = -c
			}
			if off += c; off < -maxBoxIndex || off > maxBoxIndex {
				return 0, 0, false
			}
			return d, off, true
		}
	}
	return 0, 0, false
}

// uniform computes v when it holds one value everywhere, at k's grid
// point: a scalar kernelEval computes, a broadcast of one, or an integer
// or bool constant.
func (k *kernelEval) uniform(v *Value) (int64, bool) {
	if scalarLike(v.Type) {
		c, ok := k.value(v)
		return c, ok && c >= -maxBoxIndex && c <= maxBoxIndex
	}
	op := v.Def
	switch {
	case op == nil:
	case op.Name == "broadcast_in_dim":
		return k.uniform(op.Operands[0])
	case op.Name == "const":
		switch c := op.Attrs.Value.(type) {
		case int64:
			return c, c >= -maxBoxIndex && c <= maxBoxIndex
		case bool:
			return b2i(c), true
		}
	}
	return 0, false
}

// meetingBoxes finds two boxes of different programs that share an
// element, one of them a store's. Boxes are sorted into cells as large as
// the largest box in each dim, so that only boxes of a common cell are
// compared (a box reaches at most two cells a dim). found is false when
// there are none; compared is false when it gave up past maxOverlapPairs
// comparisons.
func meetingBoxes(boxes []placed) (a, b placed, found, compared bool) {
	if len(boxes) < 2 {
		return a, b, false, true
	}
	rank := len(boxes[0].lo)
	cell := make([]int64, rank)
	for _, x := range boxes {
		for d := range cell {
			cell[d] = max(cell[d], x.hi[d]-x.lo[d])
		}
	}
	cells := map[uint64][]int{} // by a hash of the cell's coordinates
	pairs := 0
	lo, hi := make([]int64, rank), make([]int64, rank)
	c := make([]int64, rank)
	for i, x := range boxes {
		for d := range cell {
			lo[d], hi[d] = x.lo[d]/cell[d], (x.hi[d]-1)/cell[d]
		}
		copy(c, lo)
		for {
			h := uint64(14695981039346656037)
			for _, v := range c {
				h = (h ^ uint64(v)) * 1099511628211
			}
			for _, j := range cells[h] {
				y := boxes[j]
				if pairs++; pairs > maxOverlapPairs {
					return a, b, false, false
				}
				if y.prog != x.prog && (x.op.Name == "store" || y.op.Name == "store") && meet(x, y) {
					if y.prog > x.prog {
						x, y = y, x
					}
					return y, x, true, true
				}
			}
			cells[h] = append(cells[h], i)
			// The next cell of the box, the last dim fastest.
			d := rank - 1
			for ; d >= 0 && c[d] == hi[d]; d-- {
				c[d] = lo[d]
			}
			if d < 0 {
				break
			}
			c[d]++
		}
	}
	return a, b, false, true
}

// meet reports whether boxes x and y share an element.
func meet(x, y placed) bool {
	for d := range x.lo {
		if x.lo[d] >= y.hi[d] || y.lo[d] >= x.hi[d] {
			return false
		}
	}
	return true
}

// pointOf is the grid point of row-major index n in grid.
func pointOf(n int64, grid []int64) []int64 {
	g := make([]int64, len(grid))
	for i := len(grid) - 1; i >= 0; i-- {
		g[i], n = n%grid[i], n/grid[i]
	}
	return g
}

// countSqueezed counts the squeezed dims of a block.
func countSqueezed(block []int64) int {
	n := 0
	for _, b := range block {
		if b == Squeezed {
			n++
		}
	}
	return n
}
