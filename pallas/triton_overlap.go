package pallas

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The checks of triton_races.go judge accesses by what their positions
// depend on; dependence on the program id is not proof that two programs
// reach different elements (o[p] beside o[n-1-p], o[p % 2], a window of 4
// at a stride of 2). overlapRace closes that gap where it can: it
// computes, at build time, the elements each program reaches.

// overlapWork bounds the work overlapRace does for one kernel: the
// placements of accesses (one a program, or one a loop iteration) and the
// comparisons of boxes. Past either the check stops looking: what it
// found stands, and the outputs it did not finish are left to the checks
// by dependence.
type overlapWork struct{ left, pairs int }

// newOverlapWork is an overlapWork for one of outputs outputs, its share
// of a kernel's.
func newOverlapWork(outputs int) *overlapWork {
	n := maxOverlapWork / max(outputs, 1)
	return &overlapWork{left: n, pairs: n}
}

// maxOverlapWork is a kernel's overlapWork: the steps of the tapes run
// for the placements (each placement costs its tape's length and a few
// more), and as many comparisons of boxes.
const maxOverlapWork = 1 << 22

// spend takes n steps from w; false once they are spent.
func (w *overlapWork) spend(n int) bool {
	w.left -= n
	return w.left >= 0
}

// site is an access overlapRace computes: the tape that gives its
// position at a grid point (and loop iteration), and the registers of
// what it reads there.
type site struct {
	op    *Op
	info  *RefInfo
	t     *tape
	in    []int     // the index map's grid indices (nil: no map, block 0)
	gin   []int     // the grid indices of the index map the access is in (nil: the body)
	blk   []int     // the map's block indices
	start []int     // per indexer dim: its dynamic start, -1 static
	mask  []boxTerm // a mask that leaves a box
	vmask *maskTape // another mask, computed element by element
	// array: per indexer dim, its index array computed element by
	// element (nil for other dims; nil slice without index arrays).
	array []*maskTape
	whens []int // the conditions of the Whens around it, -1 not computable
	loops []siteLoop
	regs  []int64
	uses  uint64 // the loops (bits) whose index the position, mask, Whens or inner bounds read
	same  bool   // a store of the same values in the programs that agree on sameDeps
	// sameDeps are the grid axes a same store's values and position
	// depend on (accesses.sameDeps).
	sameDeps uint64
	cost     int // the work of one placement
	// Scratch: a box and the mask's box; an element's indices and index
	// array values.
	lo, hi, mlo, mhi []int64
	coord, av        []int64
	vals             [][]int64
}

// siteLoop is a ForLoop around a site: its bounds (-1 not computable),
// its index's register and dependence bit.
type siteLoop struct {
	lo, hi, idx int
	bit         uint64
}

// boxTerm is one term of a mask that leaves a box (and-ed with the
// others): a condition the same everywhere (dim < 0: the register c), or
// index + off dir c along mask dim dim. spread: the index runs over one
// element (a size-1 dim broadcast along dim), so the term holds along the
// whole dim or nowhere.
type boxTerm struct {
	dim    int
	off, c int // registers (off -1: 0)
	dir    string
	spread bool
}

// overlapRace looks for two programs whose accesses of output ri (its
// stores; its loads and those of the input aliased to it) meet, where one
// of them is a store: on a GPU the programs run in parallel, so the
// result depends on their order. It looks at the accesses whose elements
// are computable at build time for each program: the index map of the
// access's ref is integer arithmetic on the grid indices (mapEval), every
// dynamic start is such arithmetic on the program ids and the indices of
// the ForLoops around it (whose bounds are such arithmetic too; no loaded
// data, no carried value), an index array is such arithmetic on iotas
// and constants too (maskTape; the access is walked element by element,
// elementBoxes) and the mask, if any, leaves a box (boxTerm) or is
// computable element by element (maskTape).
// A When or ForLoop around an access whose condition or bounds are
// computable leaves it to the programs (and iterations) where it runs;
// any other is taken to run. A store every program makes with the same
// values (same) meets another such store harmlessly, but is placed like
// the others. It visits the whole grid, or the corner of a large one that
// sharedBlock visits, and the iterations of the loops around an access
// where its position, mask or Whens need their indices.
//
// complete reports that the elements of every access were computed for
// every program, and every pair of boxes compared: then a nil error is
// proof that no two programs race on the output.
func (x accesses) overlapRace(p *Program, ri int, accs []*Op, read bool, stores int, w *overlapWork) (complete bool, err error) {
	sites, complete := x.sites(p, accs)
	for _, s := range sites {
		// A store every program makes with the same values meets
		// another such store harmlessly (it is still placed: it may
		// meet other accesses, or reach outside the array).
		s.sameDeps, s.same = x.sameDeps(s.op, read, stores)
	}
	if !slices.ContainsFunc(sites, func(s *site) bool { return writes(s.op) }) {
		return complete, nil // loads alone race with nothing
	}
	b, sub, placed := placeSites(p, ri, sites, true, w)
	complete = complete && placed
	if err := b.outsideError(p, sites); err != nil {
		return false, err
	}
	a, c, found, compared := b.meeting(sites, sub, p.Grid, w)
	if !found {
		return complete && compared, nil
	}
	corners := cornersOf(p.Grid, sub)
	ga, gc := make([]int64, len(sub)), make([]int64, len(sub))
	cornerPoint(b.prog[a], sub, p.Grid, corners, ga)
	cornerPoint(b.prog[c], sub, p.Grid, corners, gc)
	at := make([]int64, len(p.Refs[ri].ArrayShape))
	for d := range at {
		at[d] = max(b.lo(a)[d], b.lo(c)[d])
	}
	sa, sc := sites[b.site[a]].op, sites[b.site[c]].op
	return complete, &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
		"%s: grid points %s and %s both reach its element %s, the %s at %s in one and the %s at %s in the other (positions computed at build time); "+
			"on a GPU the programs run in parallel and race. Let each program reach only elements no other program stores",
		p.Refs[ri], tuple(ga), tuple(gc), tuple(at), accessName(sa), sa.Loc, accessName(sc), sc.Loc)}
}

// outsideAccesses reports an access of ref ri (accs) that reaches outside
// its block or array, where its elements are computable at build time (as
// overlapRace computes them), on the grid's first and last corners:
// interpret mode reports such an access out of bounds, while on a GPU it
// would reach other memory.
func (x accesses) outsideAccesses(p *Program, ri int, accs []*Op, w *overlapWork) error {
	sites, _ := x.sites(p, accs)
	if len(sites) == 0 {
		return nil
	}
	b, _, _ := placeSites(p, ri, sites, false, w)
	return b.outsideError(p, sites)
}

// outsideMapLoads reports a load of a scalar-prefetch array by an index
// map (outside any When or loop of the map) that reaches outside the
// array, where its position is computable from the grid indices.
func outsideMapLoads(p *Program, w *overlapWork) error {
	var sites []*site
	for _, m := range p.IndexMaps {
		if m == nil || len(m.Args) < len(p.Grid) {
			continue
		}
		for _, a := range m.Ops {
			if a.Name != "load" {
				continue
			}
			k := slices.Index(m.Args[len(p.Grid):], a.Operands[0])
			if k < 0 || k >= p.NumPrefetch {
				continue
			}
			if s, ok := newSite(p, a, &p.Refs[k], nil, nil, m); ok {
				sites = append(sites, s)
			}
		}
	}
	if len(sites) == 0 {
		return nil
	}
	b, _, _ := placeSites(p, 0, sites, false, w)
	return b.outsideError(p, sites)
}

// sites compiles the accesses accs whose elements are computable (newSite);
// complete is false when some are not.
func (x accesses) sites(p *Program, accs []*Op) (sites []*site, complete bool) {
	complete = true
	for _, a := range accs {
		k := slices.Index(p.Body.Args, a.Operands[0])
		var m *Region // a scalar-prefetch array has no index map
		if k >= p.NumPrefetch {
			m = p.IndexMaps[k-p.NumPrefetch]
		}
		s, ok := newSite(p, a, &p.Refs[k], m, x.outer[a], nil)
		if !ok {
			complete = false
			continue
		}
		sites = append(sites, s)
	}
	return sites, complete
}

// placeSites places the boxes of sites, accesses of ref ri, for every
// program of the grid or of its corner sub (gridCorner) and the opposite
// corner (where the last programs are; cornerPoint numbers the programs),
// each site within its share of w, keeping them when keep; else it only
// looks for an access outside its block or array. complete reports that
// every program's were placed on the whole grid.
func placeSites(p *Program, ri int, sites []*site, keep bool, w *overlapWork) (b *boxes, sub []int64, complete bool) {
	sub = gridCorner(p.Grid)
	complete = slices.Equal(sub, p.Grid)
	b = &boxes{rank: max(len(p.Refs[ri].ArrayShape), 1), drop: !keep}
	total := gridSteps(sub)
	corners := cornersOf(p.Grid, sub)
	g := make([]int64, len(sub))
	lost := make([]bool, len(sites)) // some program's elements not computed
	// Each access gets its share of the work, so that one that is dear to
	// compute leaves the others theirs.
	shares := make([]*overlapWork, len(sites))
	for j := range shares {
		shares[j] = &overlapWork{left: w.left / len(sites)}
	}
	for n, spent := int64(0), 0; n < corners*total && spent < len(sites) && b.outside == nil; n++ {
		// With two corners, a point of each in turn (the work may run
		// out before either is done).
		if !cornerPoint(n, sub, p.Grid, corners, g) {
			continue
		}
		for j, s := range sites {
			if shares[j].left < 0 {
				continue // spent: what it placed is still looked at
			}
			if !s.placeAll(b, int32(j), n, g, shares[j]) {
				lost[j] = true
			}
			if o := b.outside; o != nil && o.at == nil {
				o.at = slices.Clone(g)
			}
			if shares[j].left < 0 {
				lost[j] = true
				spent++
			}
		}
	}
	return b, sub, complete && !slices.Contains(lost, true)
}

// outsideError is the error for the first access placed that reaches
// outside its block or array, nil when none did. It names the access's
// ref (an input aliased to output ri, say) and its dims as the kernel
// sees them (without the dims Vmap added).
func (b *boxes) outsideError(p *Program, sites []*site) error {
	o := b.outside
	if o == nil {
		return nil
	}
	s := sites[o.site]
	a, dim := s.op, o.dim-s.info.batchDims
	if dim < 0 {
		dim = o.dim
	}
	if o.blockIndex {
		return &Error{Kernel: p.Name, Op: "triton", outside: true, Msg: fmt.Sprintf(
			"%s: the %s at %s is at block index %d of dim %d at grid point %s, outside the array's %d blocks (interpret mode reports it out of bounds); "+
				"a GPU would reach other elements or other memory. Keep the index map's block indices inside the array",
			s.info, accessName(a), a.Loc, o.lo, dim, tuple(o.at), o.hi)}
	}
	if o.block > 0 {
		return &Error{Kernel: p.Name, Op: "triton", outside: true, Msg: fmt.Sprintf(
			"%s: the %s at %s reaches %s of dim %d of its block (of %d) at grid point %s, outside the block (interpret mode reports it out of bounds); "+
				"a GPU would reach another block's elements or other memory. Keep each index inside the block, or mask it",
			s.info, accessName(a), a.Loc, elementRange(o.lo, o.hi), dim, o.block, tuple(o.at))}
	}
	return &Error{Kernel: p.Name, Op: "triton", outside: true, Msg: fmt.Sprintf(
		"%s: the %s at %s reaches its %s of dim %d at grid point %s, outside the array (interpret mode reports it out of bounds); "+
			"a GPU addresses the array's memory flat, so it would reach other elements or other memory. Keep each index inside its dim, or mask it",
		s.info, accessName(a), a.Loc, elementRange(o.lo, o.hi), dim, tuple(o.at))}
}

// elementRange names the elements [lo, hi) of a dim: "element 6",
// "elements 4 to 7".
func elementRange(lo, hi int64) string {
	if hi-lo == 1 {
		return fmt.Sprintf("element %d", lo)
	}
	return fmt.Sprintf("elements %d to %d", lo, hi-1)
}

// newSite compiles access a of a ref (info, index map m) with the ops
// outer around it, in the body or (in non-nil) in index map in, whose
// grid indices it reads; ok is false when its position is not computable at
// build time at all (a map, start or index array that reads data, a
// mask that reads data or floats).
func newSite(p *Program, a *Op, info *RefInfo, m *Region, outer []*Op, in *Region) (*site, bool) {
	ix := a.Attrs.Indexer
	if len(ix.Dims) != len(info.BlockShape) || ix.HasArrays() && maskElements(ix.Shape) < 0 {
		return nil, false // an indexer the lowering refuses, or too large to walk
	}
	t := newTape(p.Grid, nil)
	s := &site{op: a, info: info, t: t}
	if in != nil { // an index map's load: its grid indices are inputs
		for _, arg := range in.Args[:len(p.Grid)] {
			s.gin = append(s.gin, t.input(arg, 0))
		}
	}
	if m != nil {
		var ok bool
		if len(m.Args) < len(p.Grid) || len(m.Yield) != len(info.ArrayShape) {
			return nil, false
		}
		if s.in, s.blk, ok = t.compileMap(m); !ok {
			return nil, false
		}
	}
	// The loops' indices are inputs, outermost first.
	for _, o := range outer {
		if o.Name == "for" {
			if len(s.loops) == 61 {
				return nil, false // more than the dependence bits tell apart
			}
			bit := uint64(1) << len(s.loops)
			l := siteLoop{lo: t.compile(o.Operands[0]), hi: t.compile(o.Operands[1]), bit: bit}
			l.idx = t.input(o.Regions[0].Args[0], bit)
			s.loops = append(s.loops, l)
		}
	}
	for _, o := range outer {
		switch o.Name {
		case "when":
			c := t.compile(o.Operands[0])
			if inElse(a, o) {
				c = t.not(c)
			}
			s.whens = append(s.whens, c)
		case "while":
			s.whens = append(s.whens, -1) // it may run no iteration: never computable
		}
	}
	if ix.HasArrays() {
		s.array = make([]*maskTape, len(ix.Dims))
	}
	for k, d := range ix.Dims {
		r := -1
		if d.Kind == DimArray {
			at, ok := newMaskTape(t, a.Operands[1+d.Operand])
			if !ok {
				return nil, false
			}
			s.array[k] = at
		} else if d.Operand >= 0 {
			if r = t.compile(a.Operands[1+d.Operand]); r < 0 {
				return nil, false
			}
		}
		s.start = append(s.start, r)
	}
	if mv := maskOf(a); mv != nil {
		// With index arrays every element is walked: the mask is
		// computed element by element.
		if terms, ok := t.boxTerms(mv); ok && s.array == nil {
			s.mask = terms
		} else if s.vmask, ok = newMaskTape(t, mv); !ok {
			return nil, false
		}
	}
	deps := func(r int) uint64 {
		if r < 0 {
			return 0
		}
		return t.deps[r]
	}
	for _, r := range s.start {
		s.uses |= deps(r)
	}
	for _, r := range s.whens {
		s.uses |= deps(r)
	}
	for _, tm := range s.mask {
		s.uses |= deps(tm.c) | deps(tm.off)
	}
	if s.vmask != nil {
		for _, r := range s.vmask.uses {
			s.uses |= deps(r)
		}
		s.cost = s.vmask.cost
	}
	for _, at := range s.array {
		if at != nil {
			for _, r := range at.uses {
				s.uses |= deps(r)
			}
			s.cost += at.cost
		}
	}
	if s.array != nil {
		s.cost += int(maskElements(ix.Shape)) // the walk over the elements
		s.coord, s.av = make([]int64, len(ix.Shape)), make([]int64, len(ix.Dims))
		s.vals = make([][]int64, len(ix.Dims))
	}
	for _, l := range s.loops {
		s.uses |= deps(l.lo) | deps(l.hi)
	}
	s.cost += len(t.ops) + t.maskCost + 4
	s.regs = make([]int64, t.regs)
	s.lo, s.hi = make([]int64, len(info.ArrayShape)), make([]int64, len(info.ArrayShape))
	s.mlo, s.mhi = make([]int64, len(ix.Shape)), make([]int64, len(ix.Shape))
	return s, true
}

// placeAll places s's boxes for program n at grid point g into b: once,
// or once an iteration of the loops around it when that settles what a
// single placement leaves open. false when some of its elements were not
// computed (left to the checks by dependence).
func (s *site) placeAll(b *boxes, j int32, n int64, g []int64, w *overlapWork) bool {
	for i, r := range s.in {
		s.regs[r] = g[i]
	}
	for i, r := range s.gin {
		s.regs[r] = g[i]
	}
	s.t.run(s.regs, g)
	if !w.spend(s.cost) {
		return false
	}
	mark := b.len()
	// Each box kept costs its storing and comparing (meeting).
	defer func() { w.spend(boxWork * (b.len() - mark)) }()
	res, open := s.place(b, j, n, 0)
	if !open || len(s.loops) == 0 {
		return res != placeUnknown
	}
	// Something depends on a loop index: walk the iterations.
	b.truncate(mark)
	if s.iterate(b, j, n, g, 0, 0, w) {
		return true
	}
	b.truncate(mark) // no loop walk: one placement, what it could not tell taken to run
	s.t.run(s.regs, g)
	res, _ = s.place(b, j, n, 0)
	return res != placeUnknown
}

// boxWork is the work a box kept costs, in steps of the tapes' arithmetic:
// storing it and its part in meeting's sort (measured: a 128x128 triangle
// mask's 128 boxes a program cost about 8 times its placement's steps).
const boxWork = 8

// iterate walks loops d and inside (bound: the loops whose index is set),
// placing s at each iteration of the innermost; false when a loop's
// bounds are not computable, a position is not, or w is spent.
func (s *site) iterate(b *boxes, j int32, n int64, g []int64, d int, bound uint64, w *overlapWork) bool {
	if d == len(s.loops) {
		res, _ := s.place(b, j, n, bound)
		return res != placeUnknown
	}
	l := s.loops[d]
	known := s.known(l.lo, bound) && s.known(l.hi, bound)
	if l.bit&s.uses == 0 {
		// Nothing depends on its index: once, unless it surely runs no
		// iteration.
		if known && s.regs[l.lo] >= s.regs[l.hi] {
			return true
		}
		return s.iterate(b, j, n, g, d+1, bound, w)
	}
	if !known {
		return false
	}
	lo, hi := s.regs[l.lo], s.regs[l.hi]
	for i := lo; i < hi; i++ {
		if !w.spend(s.cost) {
			return false
		}
		s.regs[l.idx] = i
		s.t.run(s.regs, g)
		if !s.iterate(b, j, n, g, d+1, bound|l.bit, w) {
			return false
		}
	}
	return true
}

// known reports whether register r holds a computed value once the loop
// indices of bound are set.
func (s *site) known(r int, bound uint64) bool {
	return r >= 0 && s.t.deps[r]&^bound == 0
}

// The outcomes of a placement.
const (
	placeNone    = iota // it does not run, or reaches no element
	placeBox            // a box placed
	placeUnknown        // its position is not computable
	placeOutside        // it reaches outside the array (boxes.outside)
)

// place adds to b the box s reaches with the registers as they stand
// (the loop indices of bound set). open reports that something left
// undecided (a When or loop bounds, taken to run, or the position)
// depends on a loop index, so that walking the iterations may decide it.
func (s *site) place(b *boxes, j int32, n int64, bound uint64) (res int, open bool) {
	undecided := func(r int) bool {
		if r >= 0 && s.t.deps[r]&^bound != 0 {
			open = true
		}
		return !s.known(r, bound)
	}
	// assumed: a When or loop bound left undecided is taken to run, which
	// is cautious for races but tells nothing of an access outside the
	// array: it may never run there.
	assumed := false
	for _, c := range s.whens {
		if undecided(c) {
			assumed = true
		} else if s.regs[c] == 0 {
			return placeNone, false
		}
	}
	for _, l := range s.loops {
		if bound&l.bit != 0 {
			continue
		}
		ulo, uhi := undecided(l.lo), undecided(l.hi)
		if !ulo && !uhi && s.regs[l.lo] >= s.regs[l.hi] {
			return placeNone, false // the loop runs no iteration
		}
		assumed = assumed || ulo || uhi
	}
	for _, r := range s.start {
		if r >= 0 && undecided(r) {
			return placeUnknown, open
		}
	}
	ix := s.op.Attrs.Indexer
	if s.array != nil {
		// Index arrays: every element walked (elementsBoxes).
		for _, r := range s.vmask.usesOf() {
			if undecided(r) {
				return placeUnknown, open
			}
		}
		for _, at := range s.array {
			for _, r := range at.usesOf() {
				if undecided(r) {
					return placeUnknown, open
				}
			}
		}
		return withOpen(s.elementBoxes(b, j, n, open || assumed), open)
	}
	if s.vmask != nil {
		// The runs where the mask holds along its last dim, each a box.
		for _, r := range s.vmask.uses {
			if undecided(r) {
				return placeUnknown, open
			}
		}
		res = placeNone
		s.vmask.runs(s.regs, s.mlo, s.mhi, func(lo, hi []int64) bool {
			switch r := s.placeBox(b, j, n, lo, hi, nil, open || assumed); r {
			case placeBox:
				res = r
			case placeOutside, placeUnknown:
				res = r
				return false
			}
			return true
		})
		return withOpen(res, open)
	}
	// The mask's box, over the indexed shape's dims.
	mlo, mhi := s.mlo, s.mhi
	clear(mlo)
	copy(mhi, ix.Shape)
	for _, t := range s.mask {
		if undecided(t.c) || t.off >= 0 && undecided(t.off) {
			return placeUnknown, open
		}
		c := s.regs[t.c]
		if t.dim < 0 {
			if c == 0 {
				return placeNone, false
			}
			continue
		}
		off := int64(0)
		if t.off >= 0 {
			off = s.regs[t.off]
		}
		if c < -maxBoxIndex || c > maxBoxIndex || off < -maxBoxIndex || off > maxBoxIndex {
			return placeUnknown, false // far enough out to wrap
		}
		lo, hi := termRange(t.dir, c-off)
		if t.spread {
			if lo > 0 || hi <= 0 {
				return placeNone, false // false at the one element
			}
			continue
		}
		mlo[t.dim], mhi[t.dim] = max(mlo[t.dim], lo), min(mhi[t.dim], hi)
		if mlo[t.dim] >= mhi[t.dim] {
			return placeNone, false
		}
	}
	return withOpen(s.placeBox(b, j, n, mlo, mhi, nil, open || assumed), open)
}

// withOpen is place's result for placement outcome res: open matters for
// a box placed or an outcome left unknown (walking the loops may decide
// it), not for nothing reached or an access outside.
func withOpen(res int, open bool) (int, bool) {
	return res, open && (res == placeBox || res == placeUnknown)
}

// placeBox adds to b the box s reaches where its mask holds on the box
// [mlo, mhi) of its slice dims (the indexed shape's dims but those of
// index arrays, whose values are av's, per indexer dim): placeBox,
// placeNone when it reaches no element, placeOutside when it reaches
// outside its block or the array, placeUnknown when it does but may not
// run (mayNot: a When or loop around it is undecided).
func (s *site) placeBox(b *boxes, j int32, n int64, mlo, mhi, av []int64, mayNot bool) int {
	ix := s.op.Attrs.Indexer
	info := s.info
	if len(info.ArrayShape) == 0 {
		b.add(j, n, []int64{0}, []int64{1})
		return placeBox // a scalar: one element, as a box of one dim
	}
	lo, hi := s.lo, s.hi
	k, slice := 0, 0
	padding := false // some element falls in an edge block's padding (every dim is still checked)
	for d, bs := range info.Block {
		blk := int64(0)
		if s.blk != nil {
			blk = s.regs[s.blk[d]]
		}
		padded := false // the lowering masks elements past the array's end
		if bs == Squeezed {
			lo[d], hi[d] = blk, blk+1
		} else {
			// A block index past the array's blocks: interpret mode
			// reports it, whatever the start.
			if nb := numBlocks(info.ArrayShape[d], bs); bs > 0 && nb > 0 && (blk < 0 || blk >= nb) {
				return b.noteOutside(j, mayNot, &outsideAccess{dim: d, lo: blk, hi: nb, blockIndex: true})
			}
			di := ix.Dims[k]
			start := di.Start
			if s.start[k] >= 0 {
				start = s.regs[s.start[k]]
			}
			in, end := start, start+di.Size // within the block
			switch di.Kind {
			case DimSlice:
				in, end = start+mlo[slice], start+mhi[slice]
				slice++
			case DimArray:
				in, end = av[k], av[k]+1
			}
			k++
			if in >= end {
				return placeNone
			}
			// Interpret mode slices the block: an element outside it is
			// out of bounds there, and another block's (or outside the
			// array) on a GPU. (A block of the whole dim is the array's.)
			if (in < 0 || end > bs) && bs != info.ArrayShape[d] {
				return b.noteOutside(j, mayNot, &outsideAccess{dim: d, lo: in, hi: end, block: bs})
			}
			lo[d], hi[d] = blk*bs+in, blk*bs+end
			padded = bs > 0 && info.ArrayShape[d]%bs != 0
		}
		// Memory is addressed flat: an element outside the array's dim
		// (unless past its end in the last block, where the lowering
		// masks it) is another dim's element, or outside the array.
		if lo[d] < 0 || !padded && hi[d] > info.ArrayShape[d] || padded && lo[d] >= info.ArrayShape[d]+bs-info.ArrayShape[d]%bs {
			return b.noteOutside(j, mayNot, &outsideAccess{dim: d, lo: lo[d], hi: hi[d]})
		}
		if hi[d] = min(hi[d], info.ArrayShape[d]); lo[d] >= hi[d] {
			padding = true
		}
	}
	if padding {
		return placeNone // masked by the lowering: nothing reached
	}
	b.add(j, n, lo, hi)
	return placeBox
}

// elementBoxes adds to b the elements an access through index arrays
// reaches (with the registers as they stand): it walks the indexed shape,
// element by element where the mask holds, in runs along its last dim
// when that is a slice's; the result as placeBox's.
func (s *site) elementBoxes(b *boxes, j int32, n int64, mayNot bool) int {
	ix := s.op.Attrs.Indexer
	shape, na := ix.Shape, len(ix.ArrayShape)
	var mask []int64
	if s.vmask != nil {
		mask = s.vmask.run(s.regs)
	}
	vals := s.vals
	for k, at := range s.array {
		if at != nil {
			vals[k] = at.run(s.regs)
		}
	}
	holds := func(i int64) bool {
		switch len(mask) {
		case 0:
			return mask == nil
		case 1:
			return mask[0] != 0
		}
		return mask[i] != 0
	}
	r := len(shape)
	total := maskElements(shape)
	row := int64(1)
	lastSlice := r > ix.ArrayPos+na // the last dim is a slice's
	if lastSlice {
		row = shape[r-1]
	}
	res := placeNone
	for q := int64(0); q < total; q += row {
		rest := q
		for d := r - 1; d >= 0; d-- {
			s.coord[d], rest = rest%shape[d], rest/shape[d]
		}
		e := int64(0) // the element of the index arrays
		for i := range na {
			e = e*ix.ArrayShape[i] + s.coord[ix.ArrayPos+i]
		}
		for k, v := range vals {
			switch {
			case len(v) == 1:
				s.av[k] = v[0]
			case v != nil:
				s.av[k] = v[e]
			}
		}
		si := 0 // the slice dims' indices
		for d := range r {
			if d < ix.ArrayPos || d >= ix.ArrayPos+na {
				s.mlo[si], s.mhi[si] = s.coord[d], s.coord[d]+1
				si++
			}
		}
		for x := int64(0); x < row; {
			if !holds(q + x) {
				x++
				continue
			}
			y := x + 1
			for y < row && holds(q+y) {
				y++
			}
			if lastSlice {
				s.mlo[si-1], s.mhi[si-1] = x, y
			}
			switch got := s.placeBox(b, j, n, s.mlo, s.mhi, s.av, mayNot); got {
			case placeBox:
				res = got
			case placeOutside, placeUnknown:
				return got
			}
			x = y
		}
	}
	return res
}

// noteOutside notes o, an access of site j reaching outside its block or
// array, unless mayNot (it may not run there: placeUnknown).
func (b *boxes) noteOutside(j int32, mayNot bool, o *outsideAccess) int {
	if mayNot {
		return placeUnknown
	}
	if b.outside == nil {
		o.site = j
		b.outside = o
	}
	return placeOutside
}

// termRange is where index dir at holds, as [lo, hi) over the integers.
func termRange(dir string, at int64) (lo, hi int64) {
	const inf = 1 << 62
	switch dir {
	case "LT":
		return -inf, at
	case "LE":
		return -inf, at + 1
	case "GT":
		return at + 1, inf
	case "GE":
		return at, inf
	}
	return at, at + 1 // EQ
}

// boxTerms compiles mask m into terms that leave a box: a conjunction
// (and) of comparisons of an index (iota, plus or minus a value the same
// everywhere) with a value the same everywhere, of such values, and of
// broadcasts of such masks. ok is false for any other mask.
func (t *tape) boxTerms(m *Value) ([]boxTerm, bool) {
	if c := t.uniform(m); c >= 0 {
		return []boxTerm{{dim: -1, c: c}}, true
	}
	op := m.Def
	if op == nil {
		return nil, false
	}
	switch op.Name {
	case "and":
		a, ok1 := t.boxTerms(op.Operands[0])
		b, ok2 := t.boxTerms(op.Operands[1])
		return append(a, b...), ok1 && ok2
	case "broadcast_in_dim":
		x := op.Operands[0]
		terms, ok := t.boxTerms(x)
		for i := range terms {
			if d := terms[i].dim; d >= 0 {
				terms[i].spread = terms[i].spread || x.Type.Shape[d] == 1 && m.Type.Shape[op.Attrs.Dims[d]] != 1
				terms[i].dim = int(op.Attrs.Dims[d])
			}
		}
		return terms, ok
	case "cmp":
		flip := map[string]string{"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ"}
		if _, ok := flip[op.Attrs.Dir]; !ok {
			return nil, false // NE leaves no box
		}
		for side := 0; side < 2; side++ {
			dim, off, ok := t.indexAlong(op.Operands[side])
			c := t.uniform(op.Operands[1-side])
			if !ok || c < 0 {
				continue
			}
			dir := op.Attrs.Dir
			if side == 1 { // c dir index: index flipped-dir c
				dir = flip[dir]
			}
			return []boxTerm{{dim: dim, off: off, c: c, dir: dir}}, true
		}
	}
	return nil, false
}

// maxBoxIndex bounds the offsets and compared values a mask's terms take
// (and the iotas), far from where 32-bit arithmetic wraps.
const maxBoxIndex = 1 << 30

// indexAlong recognises v as an index along one dim of its shape plus a
// value the same everywhere (iota, broadcasts of it, adding or
// subtracting such a value), of a signed integer type of 32 bits or more:
// v at an element is its index along dim plus register off (-1: 0).
func (t *tape) indexAlong(v *Value) (dim, off int, ok bool) {
	op := v.Def
	dt := v.Type.DType
	if op == nil || !dt.IsInt() || dt.IsUnsigned() || dt.Bits() < 32 {
		return 0, 0, false
	}
	switch op.Name {
	case "iota":
		return op.Attrs.Dim, -1, v.Type.Shape[op.Attrs.Dim] <= maxBoxIndex
	case "broadcast_in_dim":
		x := op.Operands[0]
		d, off, ok := t.indexAlong(x)
		if !ok || x.Type.Shape[d] == 1 && v.Type.Shape[op.Attrs.Dims[d]] != 1 {
			return 0, 0, false // one element spread: not an index along the new dim
		}
		return int(op.Attrs.Dims[d]), off, true
	case "add", "sub":
		for side := 0; side < 2; side++ {
			if side == 1 && op.Name == "sub" {
				break // c - index is not an index
			}
			d, off, ok := t.indexAlong(op.Operands[side])
			c := t.uniform(op.Operands[1-side])
			if !ok || c < 0 {
				continue
			}
			kind := uint8(tapeAdd)
			if op.Name == "sub" {
				kind = tapeSub
			}
			if off < 0 {
				off = t.constant(0)
			}
			return d, t.arith(kind, off, c), true
		}
	}
	return 0, 0, false
}

// uniform is the register of v when v holds one value everywhere that the
// tape computes (a scalar, a broadcast of one, an integer or bool
// constant), else -1.
func (t *tape) uniform(v *Value) int {
	if scalarLike(v.Type) {
		return t.compile(v)
	}
	op := v.Def
	switch {
	case op == nil:
	case op.Name == "broadcast_in_dim" || op.Name == "reshape":
		return t.uniform(op.Operands[0])
	case op.Name == "const":
		switch c := op.Attrs.Value.(type) {
		case int64:
			return t.constant(c)
		case bool:
			return t.constant(b2i(c))
		}
	}
	return -1
}

// boxes holds the boxes placed for one output: per box, its program's
// row-major index, its site and its corners (rank lo's then rank hi's in
// coords).
type boxes struct {
	rank    int
	prog    []int64
	site    []int32
	coords  []int64
	outside *outsideAccess // the first access found reaching outside the array
	drop    bool           // keep no box: only outside is looked for
}

// outsideAccess is an access that reaches elements [lo, hi) of dim dim:
// of its block (of block elements) when block > 0, outside it; else of
// the array, outside it. With blockIndex, its block index lo along dim is
// past the array's hi blocks. at is the grid point.
type outsideAccess struct {
	site       int32
	at         []int64
	dim        int
	lo, hi     int64
	block      int64
	blockIndex bool
}

func (b *boxes) len() int { return len(b.prog) }

func (b *boxes) add(site int32, prog int64, lo, hi []int64) {
	if b.drop {
		return
	}
	b.prog = append(b.prog, prog)
	b.site = append(b.site, site)
	b.coords = append(append(b.coords, lo...), hi...)
}

func (b *boxes) truncate(n int) {
	b.prog, b.site, b.coords = b.prog[:n], b.site[:n], b.coords[:2*b.rank*n]
}

func (b *boxes) lo(i int) []int64 { return b.coords[2*b.rank*i : 2*b.rank*i+b.rank] }
func (b *boxes) hi(i int) []int64 { return b.coords[2*b.rank*i+b.rank : 2*b.rank*(i+1)] }

// maxCellDims bounds the dims boxes are sorted into cells by.
const maxCellDims = 4

// meeting finds two boxes of different programs that share an element,
// one of them a store's (sites tells). Boxes are sorted into cells as
// large as the largest box in each dim (of up to maxCellDims dims), so
// that only boxes of a common cell are compared; a box reaches at most two
// cells a dim. found is false when there are none; compared is false when
// it stopped as w ran out (a pair found by then is still reported).
func (b *boxes) meeting(sites []*site, sub, grid []int64, w *overlapWork) (a, c int, found, compared bool) {
	corners := cornersOf(grid, sub)
	// harmless reports whether boxes x and y are a same-value store's
	// in two programs that agree on the axes it depends on.
	px, py := make([]int64, len(sub)), make([]int64, len(sub))
	harmless := func(x, y int) bool {
		sx := sites[b.site[x]]
		if !sx.same || b.site[x] != b.site[y] {
			return false
		}
		cornerPoint(b.prog[x], sub, grid, corners, px)
		cornerPoint(b.prog[y], sub, grid, corners, py)
		for g := range px {
			if px[g] != py[g] && sx.sameDeps&axisBit(g) != 0 {
				return false
			}
		}
		return true
	}
	n := b.len()
	if n < 2 {
		return 0, 0, false, true
	}
	cell := make([]int64, b.rank)
	for i := 0; i < n; i++ {
		lo, hi := b.lo(i), b.hi(i)
		for d := range cell {
			cell[d] = max(cell[d], hi[d]-lo[d])
		}
	}
	dims := make([]int, b.rank) // the dims with the most cells
	for d := range dims {
		dims[d] = d
	}
	if len(dims) > maxCellDims {
		cells := make([]int64, b.rank) // per dim: the span of the boxes, in cells
		for d := range cells {
			lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
			for i := 0; i < n; i++ {
				lo, hi = min(lo, b.lo(i)[d]), max(hi, b.hi(i)[d])
			}
			cells[d] = (hi - lo) / cell[d]
		}
		slices.SortStableFunc(dims, func(x, y int) int { return cmp.Compare(cells[y], cells[x]) })
		dims = dims[:maxCellDims]
	}
	// An entry is a cell's hash (its high bits) and a box (the low
	// boxBits): sorted, a cell's boxes are neighbours (cells whose hashes
	// agree in those bits share a run, which costs comparisons only).
	const boxBits = 22
	if n >= 1<<boxBits {
		return 0, 0, false, false
	}
	entries := make([]uint64, 0, n)
	lo, hi, at := make([]int64, len(dims)), make([]int64, len(dims)), make([]int64, len(dims))
	for i := 0; i < n; i++ {
		bl, bh := b.lo(i), b.hi(i)
		for k, d := range dims {
			lo[k], hi[k] = bl[d]/cell[d], (bh[d]-1)/cell[d]
		}
		copy(at, lo)
		for {
			h := uint64(14695981039346656037) // FNV-1a over the cell's coordinates
			for _, v := range at {
				h = (h ^ uint64(v)) * 1099511628211
			}
			entries = append(entries, h<<boxBits|uint64(i))
			k := len(at) - 1 // the next cell of the box, the last dim fastest
			for ; k >= 0 && at[k] == hi[k]; k-- {
				at[k] = lo[k]
			}
			if k < 0 {
				break
			}
			at[k]++
		}
	}
	slices.Sort(entries)
	cellOf := func(e uint64) uint64 { return e >> boxBits }
	boxOf := func(e uint64) int { return int(e & (1<<boxBits - 1)) }
	// The pair reported is the first in program order (then in the order
	// the boxes were placed), whichever cell it is found in.
	before := func(x, y, a, c int) bool {
		if b.prog[x] != b.prog[a] {
			return b.prog[x] < b.prog[a]
		}
		if b.prog[y] != b.prog[c] {
			return b.prog[y] < b.prog[c]
		}
		return x < a || x == a && y < c
	}
	for g := 0; g < len(entries); {
		e := g + 1
		for e < len(entries) && cellOf(entries[e]) == cellOf(entries[g]) {
			e++
		}
		for i := g; i < e; i++ {
			x := boxOf(entries[i])
			for k := i + 1; k < e; k++ {
				if w.pairs--; w.pairs < 0 {
					return a, c, found, false
				}
				y := boxOf(entries[k])
				sx, sy := sites[b.site[x]], sites[b.site[y]]
				if b.prog[x] != b.prog[y] && (writes(sx.op) || writes(sy.op)) && b.meet(x, y) && !harmless(x, y) {
					p, q := x, y
					if b.prog[p] > b.prog[q] {
						p, q = q, p
					}
					if !found || before(p, q, a, c) {
						a, c, found = p, q, true
					}
				}
			}
		}
		g = e
	}
	return a, c, found, true
}

// meet reports whether boxes x and y share an element.
func (b *boxes) meet(x, y int) bool {
	xl, xh, yl, yh := b.lo(x), b.hi(x), b.lo(y), b.hi(y)
	for d := range xl {
		if xl[d] >= yh[d] || yl[d] >= xh[d] {
			return false
		}
	}
	return true
}

// pointAt sets g to the grid point of row-major index n in grid (the
// last axis fastest).
func pointAt(n int64, grid, g []int64) {
	for i := len(grid) - 1; i >= 0; i-- {
		g[i], n = n%grid[i], n/grid[i]
	}
}

// writes reports whether access a writes its elements (a store or an
// atomic update).
func writes(a *Op) bool { return a.Name == "store" || a.Name == "atomic" }

// accessName names access a in errors: "load", "store", "atomic add".
func accessName(a *Op) string {
	if a.Name == "atomic" {
		return "atomic " + a.Attrs.Kind
	}
	return a.Name
}

// article is s after its indefinite article ("a load", "an atomic add").
func article(s string) string {
	if strings.IndexByte("aeiou", s[0]) >= 0 {
		return "an " + s
	}
	return "a " + s
}
