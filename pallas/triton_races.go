package pallas

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// On a GPU the programs of the grid run in parallel, in no order, and
// share nothing but device memory. Kernel shapes that are fine in
// interpret mode (steps in row-major order) then race, so the Triton
// lowering refuses them at build time:
//
//   - an output block that several programs read and write: the kernel
//     loads (itself or the input aliased to it) and stores the output and
//     its index map ignores a grid axis of more than one step (seed 000's
//     matmul with K as a grid axis, accumulating into its output block),
//     unless a When on that axis's program id leaves every access of it
//     to one program;
//   - an output that the programs along a grid axis its index map ignores
//     all store, or read and store, at the same elements: an access
//     (load or store) whose position (dynamic indices and mask) does not
//     depend on that axis's program id, unless a When(ProgramID(g) == v)
//     around it leaves it to one program: v the same in every program
//     along g and every iteration of the loops around, and depending on
//     other grid axes only where the access's position does (or where
//     another such When pins them: apart); the comparison may be one term
//     of an And, the id converted to a type that keeps the grid's ids
//     apart. Such accesses at overlapping elements must be left to the
//     same program (their pins equal on axes the programs agree on, which
//     include the axes their position depends on when it is computed
//     alike). An access at elements that depend on the program id
//     is taken to be the program's own, so one left to one program must
//     lie inside that program's own elements (a store of them whose start
//     is computable for its id) when such accesses exist. This covers
//     whole-array outputs (and Vmap's view of them), whose blocks every
//     program shares, and blocks stored by every step of an ignored axis
//     (interpret mode keeps the last step's, a GPU any program's). A value
//     counts as depending on an axis when it is loaded from a block that
//     the axis picks. Such a shared output is loaded only within one of
//     its stores (each dim at the same start, computed alike, and no
//     longer; or static and inside; or inside a dim the store spans; a
//     masked store only where the load has the same mask and indices; or
//     in the slice of a dim that it and every store of the output index
//     with the program id itself, a row p stored block by block), so
//     that each program reads what it wrote, or by the one program all its
//     accesses are left to;
//   - an output block that two programs store (its index map sends both
//     to it: g/2, or g0+g1, or min(g, 7)) where some store writes the same
//     elements in both: the two agree on every axis the store's position
//     depends on (each such pair of the grid is looked at, squeezed
//     blocks included); with several stores, by their positions alone,
//     but for a store a When leaves to one program, which must lie inside
//     that program's own elements (a store of the others computed for its
//     id);
//   - an input aliased to an output (InputOutputAliases) that the kernel
//     loads through another block spec than the output's: a program would
//     read blocks other programs write.
//
// They are judged from the code of the index maps and of the body
// (dependence through a load of prefetched data counts). Dependence is
// not proof that the programs' elements differ (p % 2 depends on p), so
// accesses whose elements are computable at build time are also computed
// for each program (overlapRace, triton_overlap.go: o[p] beside o[n-1-p],
// p % 2, windows wider than their stride, o[(p+i) % n] in a loop over i);
// where that covers every access of an output on the whole grid its
// verdict is final and the rules above are not applied to the output.
// Accesses at loaded or carried positions (or computed through floats, or
// a scalar picked from a block larger than the tape computes: tapeMask),
// in blocks an index map picks from prefetched data, or under masks that
// read loaded data (scatter-adds written as a load, an add and a store
// at prefetched indices with repeats, say: AtomicAdd is the race-free
// form), race unseen when dependence alone keeps them apart; atomic
// updates that do not commute are refused there (updatesFromMemory), and
// output index maps computed through floats everywhere, or through other
// ops it does not compute where they read no data (opaqueMap). The loads of inputs and
// prefetch arrays are computed too, for reaching outside their arrays
// (outsideLoads). An output's index map that is arithmetic on the grid indices alone is also
// computed at build time, on the whole grid up to 65,536 programs and on
// the first and last corners of a larger one, and two programs sent to the same block that
// both load and store it are an error (g0+g1 uses every axis, yet sends
// (0, 1) and (1, 0) to block 1); stores alone, as above. Scalar-prefetch
// arrays aliased to outputs (whole arrays too) are not checked.

// checkParallelPrograms reports the first of those races in p.
func checkParallelPrograms(p *Program) error { return checkPrograms(p, false) }

// checkPrograms is checkParallelPrograms; with anyOrder
// (CompilerParams.OrderDependentAtomics) the atomic updates of an output
// that nothing else loads or stores pass whatever their kind and use of
// old values, as commuting ones do.
func checkPrograms(p *Program, anyOrder bool) error {
	if len(p.Grid) > maxCheckedAxes {
		return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
			"a grid of %d axes: the race check follows at most %d (fold axes together)", len(p.Grid), maxCheckedAxes)}
	}
	// By Refs index: the body's arguments are the refs, in order.
	arg := map[*Value]int{}
	for i, a := range p.Body.Args {
		arg[a] = i
	}
	stores, loads, atomics := map[int][]*Op{}, map[int][]*Op{}, map[int][]*Op{}
	var collect func(r *Region)
	collect = func(r *Region) {
		for _, op := range r.Ops {
			for _, sub := range op.Regions {
				collect(sub)
			}
			if len(op.Operands) == 0 {
				continue
			}
			if i, ok := arg[op.Operands[0]]; ok {
				switch op.Name {
				case "store":
					stores[i] = append(stores[i], op)
				case "load":
					loads[i] = append(loads[i], op)
				case "atomic":
					atomics[i] = append(atomics[i], op)
				}
			}
		}
	}
	collect(p.Body)
	nin := p.NumInputs
	// What the programs write: the outputs, and the inputs aliased to them.
	written := map[*Value]bool{}
	for o := 0; o < p.NumOutputs; o++ {
		r := p.Refs[p.NumPrefetch+nin+o]
		written[p.Body.Args[p.NumPrefetch+nin+o]] = true
		if r.AliasOf >= 0 {
			written[p.Body.Args[r.AliasOf]] = true
		}
	}
	// What a load reads depends on the axes its block's index map uses.
	blockAxes := map[*Value]uint64{}
	for k, m := range p.IndexMaps {
		for g, d := range gridDeps(m, len(p.Grid)) {
			if d {
				blockAxes[p.Body.Args[p.NumPrefetch+k]] |= axisBit(g)
			}
		}
	}
	acc := accessAxes(p.Body, written, blockAxes, p.Grid)
	// Atomic updates of one commuting kind (add, max, ...) whose old
	// values the kernel ignores leave the same output in any order: an
	// output only they reach races with nothing. Any other atomic update
	// is checked as a load and a store (read) of its elements.
	updated := map[int]bool{}
	var mem map[*Value]*Op
	var live map[*Value]bool
	for i, as := range atomics {
		if live == nil {
			live = liveValues(p.Body)
		}
		if commutingUpdates(p, i, as, stores[i], loads, live, anyOrder) {
			continue
		}
		if mem == nil {
			mem = memoryValues(p.Body)
		}
		if err := acc.updatesFromMemory(p, i, as, mem); err != nil {
			return err
		}
		stores[i] = append(stores[i], as...)
		updated[i] = true
	}
	var computed []error // what overlapRace found, reported after the checks by dependence
	outputs := 0         // those stored: each gets its share of the computed check's work
	for o := 0; o < p.NumOutputs; o++ {
		if len(stores[p.NumPrefetch+nin+o]) > 0 {
			outputs++
		}
	}
	for o := 0; o < p.NumOutputs; o++ {
		ri := p.NumPrefetch + nin + o
		r := p.Refs[ri]
		if len(stores[ri]) == 0 {
			continue
		}
		// An aliased input is the output's memory: loading it loads the output.
		accesses := append(append([]*Op(nil), stores[ri]...), loads[ri]...)
		if r.AliasOf >= p.NumPrefetch {
			accesses = append(accesses, loads[r.AliasOf]...)
		}
		read := len(accesses) > len(stores[ri]) || updated[ri]
		complete, err := acc.overlapRace(p, ri, accesses, read, len(stores[ri]), newOverlapWork(outputs))
		if complete && err == nil {
			continue // every program's elements computed, and no two meet
		}
		computed = append(computed, atomicHint(err, updated[ri]))
		m := p.IndexMaps[nin+o]
		// The grid with the axes the map ignores collapsed: its pairs
		// of programs sent to one block differ on axes the map uses.
		used := blockAxes[p.Body.Args[ri]]
		grid := collapsed(p.Grid, used)
		// The programs that share a block agree on the axes the map
		// uses, unless it sends two of them to one block (g/2).
		a, b, block, shares := sharedBlock(m, grid, 0)
		fixed := used
		if shares {
			fixed = 0
		}
		if err := opaqueMap(p, r, m); err != nil {
			return err
		}
		// That they do is known (for a same-value store's values) only
		// where the map was computed on the whole grid: one that reads
		// data, or a grid past sharedBlock's corner, may send programs
		// that differ on those axes to one block too.
		agreed := fixed
		if shares || !mapComputed(m, grid) {
			agreed = 0
		}
		for g, n := range p.Grid {
			if n <= 1 || used&axisBit(g) != 0 {
				continue
			}
			if err := acc.sharedAxisRace(p, r, accesses, stores[ri], read, g, n, fixed, agreed); err != nil {
				return atomicHint(err, updated[ri])
			}
		}
		if shares {
			if err := acc.sharedBlockRace(p, r, m, stores[ri], read, grid, [3][]int64{a, b, block}); err != nil {
				return atomicHint(err, updated[ri])
			}
		}
	}
	for o := 0; o < p.NumOutputs; o++ {
		out := p.Refs[p.NumPrefetch+nin+o]
		if out.AliasOf < p.NumPrefetch {
			continue // none, or a prefetch array (checkAliasedReads)
		}
		in := out.AliasOf // the input's Refs index (operands and refs share their order)
		if in >= p.NumPrefetch+nin || len(loads[in]) == 0 {
			continue
		}
		inMap, outMap := p.IndexMaps[in-p.NumPrefetch], p.IndexMaps[nin+o]
		if !sameShape(p.Refs[in].Block, out.Block) || regionKey(inMap) != regionKey(outMap) {
			return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
				"%s is aliased to %s (InputOutputAliases) and loaded through another block spec: "+
					"on a GPU a program would read blocks other programs write; give both the same block shape and index map", p.Refs[in], out)}
		}
	}
	// What the checks by dependence take as apart, computed where it can be.
	for _, err := range computed {
		if err != nil {
			return err
		}
	}
	// Accesses reaching outside their blocks or arrays, of every ref (on
	// the grid's first and last corners), and the index maps' loads.
	var refs []int
	for i := 0; i < p.NumPrefetch+nin+p.NumOutputs; i++ {
		if len(loads[i])+len(stores[i])+len(atomics[i]) > 0 {
			refs = append(refs, i)
		}
	}
	share := maxOverlapWork / 4 / (len(refs) + 1)
	for _, i := range refs {
		accs := append(slices.Clone(loads[i]), stores[i]...)
		if !updated[i] {
			accs = append(accs, atomics[i]...)
		}
		if err := acc.outsideAccesses(p, i, accs, &overlapWork{left: share}); err != nil {
			return err
		}
	}
	return outsideMapLoads(p, &overlapWork{left: share})
}

// atomicHint adds to a race error of an output with atomic updates checked
// as loads and stores (updated) what atomic updates the check takes.
func atomicHint(err error, updated bool) error {
	var e *Error
	if !updated || !errors.As(err, &e) || e.outside {
		return err
	}
	c := *e
	c.Msg += ". (The check takes atomic updates of an output that are all of one kind other than xchg and cas, " +
		"their old values unused, with no load or store of it beside them; others it checks as a load and a store.)"
	return &c
}

// commutingUpdates reports whether the atomic updates as of ref i leave
// it the same whatever order the programs run them in: all of one kind
// other than xchg and cas, their old values unused, and no load or store of the
// ref (or load of the input aliased to it) beside them (live: liveValues).
func commutingUpdates(p *Program, i int, as, stores []*Op, loads map[int][]*Op, live map[*Value]bool, anyOrder bool) bool {
	if len(stores) > 0 || len(loads[i]) > 0 {
		return false
	}
	if i >= p.NumPrefetch+p.NumInputs {
		if in := p.Refs[i].AliasOf; in >= 0 && len(loads[in]) > 0 {
			return false
		}
	}
	if anyOrder {
		return true // the caller takes what order the programs run in
	}
	for _, a := range as {
		if !commutes(a.Attrs.Kind) || a.Attrs.Kind != as[0].Attrs.Kind || live[a.Results[0]] {
			return false
		}
	}
	return true
}

// commutes reports whether atomic updates of kind leave the same values
// in memory in any order (all but xchg and cas).
func commutes(kind string) bool { return kind != "xchg" && kind != "cas" }

// collapsed is grid with the axes not in used (axisBit bits) of one
// step: the grid an index map that ignores them tells programs apart on.
func collapsed(grid []int64, used uint64) []int64 {
	out := slices.Clone(grid)
	for g := range out {
		if used&axisBit(g) == 0 {
			out[g] = 1
		}
	}
	return out
}

// mapComputed reports whether index map m is computed at build time on
// the whole of grid (the grid with the axes it ignores collapsed), so that
// sharedBlock's verdict covers every program.
func mapComputed(m *Region, grid []int64) bool {
	_, ok := newMapEval(m, grid)
	return ok && slices.Equal(gridCorner(grid), grid)
}

// mapApart reports whether index map m is computed on the whole of grid
// and sends no two of its programs to one block.
func mapApart(m *Region, grid []int64) bool {
	if !mapComputed(m, grid) {
		return false
	}
	_, _, _, shares := sharedBlock(m, grid, 0)
	return !shares
}

// opaqueMap refuses an index map of output r that computes its block
// indices through floats, or, reading no data, through an op the
// build-time evaluation does not compute (a reduction): the check can
// neither compute it nor tell which programs it sends to one block
// (floor(g/2) sends two), and unlike data it is no known gap. Scalar
// integer arithmetic says the same.
func opaqueMap(p *Program, r RefInfo, m *Region) error {
	if m == nil {
		return nil
	}
	var float *Op
	eachOp(m, func(op *Op) {
		if float == nil && op.Name != "load" && len(op.Results) > 0 && op.Results[0].Type.DType.IsFloat() {
			float = op
		}
	})
	if float != nil {
		return &Error{Kernel: p.Name, Op: "triton", Loc: m.Loc, Msg: fmt.Sprintf(
			"%s: its index map computes block indices through floats (%s at %s), which the race check cannot follow "+
				"(it could send several programs to one block); compute them with integer arithmetic (Div, Rem)", r, float.Name, float.Loc)}
	}
	// A map that reads no data and still cannot be computed goes through
	// ops the check does not follow (a reduction, an iota): refused for
	// the same reason (a map that reads data is judged from its code).
	reads := false
	eachOp(m, func(op *Op) { reads = reads || op.Name == "load" })
	if _, ok := newMapEval(m, p.Grid); ok || reads {
		return nil
	}
	op := opaqueOp(m)
	if op == nil {
		return nil
	}
	return &Error{Kernel: p.Name, Op: "triton", Loc: m.Loc, Msg: fmt.Sprintf(
		"%s: its index map computes block indices through %s at %s, which the race check cannot follow "+
			"(it could send several programs to one block); compute them with scalar integer arithmetic", r, op.Name, op.Loc)}
}

// opaqueOp is the first op on the way to index map m's block indices that
// the build-time evaluation does not compute (nil when there is none).
func opaqueOp(m *Region) *Op {
	seen := map[*Value]bool{}
	var walk func(v *Value) *Op
	walk = func(v *Value) *Op {
		if seen[v] || v.Def == nil {
			return nil
		}
		seen[v] = true
		if !evaluableOp(v.Def) {
			return v.Def
		}
		for _, o := range v.Def.Operands {
			if op := walk(o); op != nil {
				return op
			}
		}
		return nil
	}
	for _, y := range m.Yield {
		if op := walk(y); op != nil {
			return op
		}
	}
	return nil
}

// updatesFromMemory refuses an atomic update of ref i (as, which do not
// commute) at a position computed from memory (mem: memoryValues) where
// programs share its block: positions read from data may meet in any
// two of them, which neither dependence nor the computed check can rule
// out. (A store's may too: a known gap, docs/pallas.md.) Programs share
// the block when its index map reads data, sends two programs to one
// block, or ignores a grid axis of more than one step that no When
// around the update pins.
func (x accesses) updatesFromMemory(p *Program, i int, as []*Op, mem map[*Value]*Op) error {
	if gridSteps(p.Grid) <= 1 {
		return nil
	}
	m := p.indexMapOf(&p.Refs[i])
	var mapLoad *Op // a load of data by the index map: the block is a position from memory too
	if m != nil {
		if k := slices.IndexFunc(m.Ops, func(op *Op) bool { return op.Name == "load" }); k >= 0 {
			mapLoad = m.Ops[k]
		}
	}
	reads := mapLoad != nil
	used := uint64(0)
	for g, d := range gridDeps(m, len(p.Grid)) {
		if d {
			used |= axisBit(g)
		}
	}
	// byMap: the axes programs sharing the block agree on by the map,
	// those it uses when it is apart (found for the first update that
	// needs them).
	byMap, known := uint64(0), false
	for _, a := range as {
		// Where its position comes from, when the check cannot compute
		// it: memory, a carried value, a data map, or else (floats, a
		// reduction ...) the access itself.
		at := positionFromMemory(a, mem)
		if at == nil {
			at = mapLoad
		}
		if at == nil && !reads {
			if _, ok := newSite(p, a, &p.Refs[i], m, x.outer[a], nil); !ok {
				at = a
			}
		}
		if at == nil {
			continue
		}
		// Those the map agrees on, then those a When pins to a value
		// of agreed axes, to a fixed point.
		if !known {
			known = true
			if !reads && mapApart(m, collapsed(p.Grid, used)) {
				byMap = used
			}
		}
		agreed := byMap
		for changed := true; changed; {
			changed = false
			for _, pn := range x.pins[a] {
				if bit := axisBit(pn.axis); agreed&bit == 0 && pn.deps&gridBits(len(p.Grid))&^agreed == 0 {
					agreed, changed = agreed|bit, true
				}
			}
		}
		shared := false
		for g, n := range p.Grid {
			if n > 1 && agreed&axisBit(g) == 0 {
				shared = true
			}
		}
		if shared {
			from := fmt.Sprintf("from memory or a loop's carried values (%s at %s)", at.Name, at.Loc)
			if at == a {
				from = "in a way the check cannot follow (through floats, reductions or other ops it does not compute)"
			}
			return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
				"%s: the %s at %s is at a position computed %s in a block several programs share, and does not "+
					"commute with the output's other updates (another kind, xchg or cas, its old values used, or loads or stores of the output "+
					"beside it): two programs may reach the same elements, in any order on a GPU. Make the output's updates commute, "+
					"give each program its own block, or compute the position from program ids with integer arithmetic", p.Refs[i], accessName(a), a.Loc, from)}
		}
	}
	return nil
}

// positionFromMemory is the load or atomic update whose result access a's
// indices or mask are computed from (mem: memoryValues), or nil.
func positionFromMemory(a *Op, mem map[*Value]*Op) *Op {
	ix := a.Attrs.Indexer
	vals := slices.Clone(a.Operands[1 : 1+ix.NumOperands])
	if m := maskOf(a); m != nil {
		vals = append(vals, m)
	}
	for _, v := range vals {
		if op := mem[v]; op != nil {
			return op
		}
	}
	return nil
}

// memoryValues maps each value of body computed from a load or an atomic
// update's old values (through arithmetic and loop counters whose
// bounds are) to that op, and each computed from a loop's carried values
// or results (which the check does not compute either) to the loop.
func memoryValues(body *Region) map[*Value]*Op {
	mem := map[*Value]*Op{}
	changed := true
	carried := func(v *Value, loop *Op) {
		if mem[v] == nil {
			mem[v], changed = loop, true
		}
	}
	set := func(v *Value, from ...*Value) {
		if mem[v] != nil {
			return
		}
		for _, f := range from {
			if op := mem[f]; op != nil {
				mem[v], changed = op, true
				return
			}
		}
	}
	var walk func(r *Region)
	walk = func(r *Region) {
		for _, op := range r.Ops {
			switch op.Name {
			case "load", "atomic":
				if len(op.Results) > 0 && mem[op.Results[0]] == nil {
					mem[op.Results[0]], changed = op, true
				}
			case "for":
				// Its counter follows its bounds; a carried value is
				// one the check cannot compute either: as data.
				body := op.Regions[0]
				set(body.Args[0], op.Operands[:2]...)
				for _, a := range body.Args[1:] {
					carried(a, op)
				}
			case "while":
				for _, reg := range op.Regions {
					for _, a := range reg.Args {
						carried(a, op)
					}
				}
			}
			for _, sub := range op.Regions {
				walk(sub)
			}
			if op.Name == "for" || op.Name == "while" {
				for _, res := range op.Results {
					carried(res, op) // the last carry
				}
				continue
			}
			if op.Name != "load" && op.Name != "atomic" {
				for i, res := range op.Results {
					from := op.Operands
					if op.Name == "when" { // a Cond's: what the branches yield
						from = append(slices.Clone(from), op.Regions[0].Yield[i], op.Regions[1].Yield[i])
					}
					set(res, from...)
				}
			}
		}
	}
	for changed {
		changed = false
		walk(body)
	}
	return mem
}

// liveValues is the set of values of body (and the regions in it) whose
// use reaches what a kernel does: the operands of stores, atomic updates
// and Whens, loop bounds and While conditions, and what those are
// computed from (through loop carries and results, and Cond results,
// where those are live). A value only dead arithmetic or a dead loop carry reads is not
// in it.
func liveValues(body *Region) map[*Value]bool {
	live := map[*Value]bool{}
	var work []*Value
	mark := func(vs ...*Value) {
		for _, v := range vs {
			if v != nil && !live[v] {
				live[v] = true
				work = append(work, v)
			}
		}
	}
	eachOp(body, func(op *Op) {
		switch op.Name {
		case "store", "atomic", "when":
			mark(op.Operands...)
		case "for":
			mark(op.Operands[:2]...)
		case "while":
			mark(op.Regions[0].Yield...)
		}
	})
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		switch {
		case v.Def != nil && (v.Def.Name == "for" || v.Def.Name == "while"):
			// A loop's result: the carry its body yields and its start.
			op, i := v.Def, slices.Index(v.Def.Results, v)
			body := op.Regions[len(op.Regions)-1]
			if op.Name == "for" {
				mark(body.Yield[i], op.Operands[2+i])
			} else {
				mark(body.Yield[i], op.Operands[i])
			}
		case v.Def != nil && v.Def.Name == "when":
			// A Cond's result: its condition and what the branches yield.
			i := slices.Index(v.Def.Results, v)
			mark(v.Def.Operands[0], v.Def.Regions[0].Yield[i], v.Def.Regions[1].Yield[i])
		case v.Def != nil:
			mark(v.Def.Operands...)
		case v.argOf != nil && v.argOf.parent != nil:
			// A loop's counter (its bounds are live already) or carry:
			// its start and what the body yields for it.
			op, r := v.argOf.parent, v.argOf
			i := slices.Index(r.Args, v)
			switch {
			case op.Name == "for" && i > 0:
				mark(op.Operands[1+i], op.Regions[0].Yield[i-1])
			case op.Name == "while" && i >= 0:
				mark(op.Operands[i], op.Regions[1].Yield[i])
			}
		}
	}
	return live
}

// sharedBlockRace checks output r (index map m) for two programs of grid
// (the grid with the axes m ignores collapsed, see sharedAxisRace for
// those) that m sends to one block (pair is one such: the two grid
// points and their block): a race when they load it (read), or
// when some store writes the same elements in both: when they agree on
// every axis its position depends on. With several stores, each must
// depend on the axes the two differ on by its position alone: a When on a
// program id keeps one store to one program, not two stores apart.
func (x accesses) sharedBlockRace(p *Program, r RefInfo, m *Region, stores []*Op, read bool, grid []int64, pair [3][]int64) error {
	if read {
		a, b, block := pair[0], pair[1], pair[2]
		return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
			"%s: its index map sends grid points %s and %s to the same block %s, which both programs load and store; "+
				"on a GPU they run in parallel and race. Give each program its own block, or loop inside the kernel (ForLoop)", r, tuple(a), tuple(b), tuple(block))}
	}
	var kept []*Op // the stores that may differ from program to program
	for _, st := range stores {
		if !x.same(st, false, len(stores)) {
			kept = append(kept, st)
		}
	}
	for _, st := range kept {
		keep := x.idx[st]
		if len(kept) == 1 {
			keep = x.apart(st, 0, len(grid))
		} else if pins := x.pins[st]; len(pins) > 0 {
			// Beside other stores, a store a When leaves to one
			// program must lie inside that program's own elements.
			if !slices.ContainsFunc(pins, func(pn pin) bool { return x.insideOwn(st, pn.axis, kept, p.Grid, 0) }) {
				return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
					"%s: its index map sends several programs to one block, and the store at %s, left to one program by a When on its id, "+
						"is not inside that program's own elements (a store of the others whose start is computable for that program): "+
						"on a GPU the programs run in parallel and it may land on another's elements", r, st.Loc)}
			}
			continue
		}
		if a, b, block, found := sharedBlock(m, grid, keep); found {
			return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
				"%s: its index map sends grid points %s and %s to the same block %s, and the store at %s writes the same elements "+
					"of it in both (its indices and mask do not depend on the axes on which they differ); on a GPU they run in parallel and race. "+
					"Give each program its own block", r, tuple(a), tuple(b), tuple(block), st.Loc)}
		}
	}
	return nil
}

// sharedAxisRace checks output r's accesses (its stores, and its loads
// and those of the input aliased to it; read when there are loads) for
// the programs along grid axis g (n steps), which its index map ignores:
// they share r's block, and agree on the axes of fixed.
func (x accesses) sharedAxisRace(p *Program, r RefInfo, accesses, stores []*Op, read bool, g int, n int64, fixed, agreed uint64) error {
	axes := len(p.Grid)
	ug := g - p.batchAxes // the axis as the kernel numbers it (without Vmap's)
	if read && !wholeButSqueezed(r) {
		// Fine only when one program along g makes every access.
		for _, a := range accesses {
			if _, ok := x.pinOn(a, g, fixed, axes); !ok || !x.samePin(accesses[0], a, g, fixed, axes) {
				return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
					"%s: its index map ignores grid axis %d (%d steps), so that many programs load and store each block; "+
						"on a GPU they run in parallel and race. Loop inside the kernel (ForLoop) instead of along that axis, "+
						"leave every access of it to one program (When(ProgramID(%d) == …)), or add each program's part with AtomicAdd "+
						"into an output aliased to zeros", r, ug, n, ug)}
			}
		}
		return nil
	}
	var pinned []*Op // accesses left to one program along g
	var spread *Op   // an access at elements that depend on the program
	for _, a := range accesses {
		if x.sameAlong(a, read, len(stores), agreed) {
			continue // every program stores the same values once: no matter which is last
		}
		if _, ok := x.pinOn(a, g, fixed, axes); ok {
			for _, q := range pinned {
				if !x.samePin(q, a, g, fixed, axes) && !disjoint(q, a) {
					return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
						"%s: %s at %s and %s at %s run in different programs along grid axis %d (When(ProgramID(%d) == …) on other values, "+
							"or on values that differ between programs) and may reach the same elements; on a GPU they run in parallel and race",
						r, article(accessName(q)), q.Loc, article(accessName(a)), a.Loc, ug, ug)}
				}
			}
			pinned = append(pinned, a)
			continue
		}
		if x.idx[a]&axisBit(g) != 0 {
			spread = a
			continue
		}
		what := "store"
		if read {
			what = "load and store"
		}
		return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
			"%s: the %d programs along grid axis %d, which its index map ignores, all %s the same elements (%s at %s whose indices "+
				"and mask do not depend on ProgramID(%d), under no When(ProgramID(%d) == …) on a value the same in those programs); "+
				"on a GPU they run in parallel and race. "+
				"Index by ProgramID(%d), store under When(ProgramID(%d) == …), or give the output a block per program", r, n, ug, what, article(accessName(a)), a.Loc, ug, ug, ug, ug)}
	}
	if spread != nil {
		// Each one-program access must lie within that program's own
		// elements: inside one of its stores at elements that depend
		// on the program (their starts, and the access's, computed for
		// its id).
		for _, a := range pinned {
			if x.insideOwn(a, g, stores, p.Grid, fixed) {
				continue
			}
			return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
				"%s: the %s at %s runs in one program along grid axis %d while the %s at %s runs in each at elements that depend on the program, "+
					"and it is not inside that program's own (a store of it whose start is computable for that program): "+
					"on a GPU they run in parallel, and the one program's access may land on another's elements. "+
					"Let each program reach only its own elements, or put the one program's part in another output", r, accessName(a), a.Loc, ug, accessName(spread), spread.Loc)}
		}
	}
	// Programs that share the output read it only where they
	// store it themselves: a load at other indices may read what
	// another program writes (found in review). A load left to
	// one program was checked above.
	for _, a := range accesses {
		if a.Name != "load" || slices.ContainsFunc(stores, func(st *Op) bool { return covers(st, a) }) || ownRow(stores, a, g) {
			continue
		}
		if _, ok := x.pinOn(a, g, fixed, axes); ok {
			continue
		}
		return &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
			"%s: the load at %s reads it (or the input aliased to it) at other indices than any store of it; the %d programs along grid axis %d, "+
				"which its index map ignores, share it, so the load may read what another program writes: on a GPU they run in parallel and race. "+
				"Load it only at indices where the same program stores it", r, a.Loc, n, ug)}
	}
	return nil
}

// ownRow reports whether load ld lies in the slice of the output that
// only its own program stores: ld indexes some dim with ProgramID(g)
// itself (one slice per program), and so does every store of the output
// (a row p stored block by block in a loop, then read back), so no other
// program reaches that slice.
func ownRow(stores []*Op, ld *Op, g int) bool {
	il := ld.Attrs.Indexer
	if il.HasArrays() || len(stores) == 0 {
		return false
	}
	at := func(op *Op, d int) *Value { // op's index of dim d when a dynamic point
		ix := op.Attrs.Indexer
		if ix.HasArrays() || d >= len(ix.Dims) || ix.Dims[d].Kind != DimPoint || ix.Dims[d].Operand < 0 {
			return nil
		}
		return op.Operands[1+ix.Dims[d].Operand]
	}
	for d := range il.Dims {
		v := at(ld, d)
		if v == nil || v.Def == nil || v.Def.Name != "program_id" || v.Def.Attrs.Axis != g {
			continue
		}
		if !slices.ContainsFunc(stores, func(st *Op) bool { w := at(st, d); return w == nil || !sameValue(v, w) }) {
			return true
		}
	}
	return false
}

// accesses is what accessAxes finds about a body's loads and stores.
type accesses struct {
	// idx: the grid axes (axisBit) an access's position depends on: its
	// dynamic indices and its mask (through program_id, loop indices
	// whose bounds depend on it, loaded data).
	idx map[*Op]uint64
	// pos: the grid axes an access's indices alone depend on (idx
	// without the mask).
	pos map[*Op]uint64
	// pins: the Whens around an access whose condition is ProgramID(g)
	// == v, v not depending on axis g: one program along g runs it.
	pins map[*Op][]pin
	// val: what a store's value depends on: grid axes, and readsWritten
	// when it depends on a load of memory the programs write; with the
	// conditions and bounds of the ops around it.
	val map[*Op]uint64
	// looped: the access is inside a loop (it may run many times).
	looped map[*Op]bool
	// outer: the ops around an access, outermost first.
	outer map[*Op][]*Op
}

// pin is a When(ProgramID(axis) == at) around an access; deps are at's
// dependence bits.
type pin struct {
	axis int
	at   *Value
	deps uint64
}

// readsWritten is the dependence bit of values computed from memory the
// programs write; loopVarying that of values that change from one
// iteration of a loop to the next (a loop's index and carries). The grid
// axes use the bits below them.
const (
	readsWritten = 1 << 63
	loopVarying  = 1 << 62
)

// axisBit is grid axis g's dependence bit.
func axisBit(g int) uint64 { return 1 << min(g, 61) }

// same reports whether store a writes the same values in every program,
// once: the only store of an output no program reads, outside loops, of
// a value that depends neither on the program id nor on what programs
// write (zeros, say), and that lands alike in every program: one number
// everywhere, or at a position in its block that depends on no program
// id (else o[(i + p) % n] = i puts another value at each element in each
// program; with an index array, its mask neither). Programs along an axis may then all write it.
func (x accesses) same(a *Op, read bool, stores int) bool { return x.sameAlong(a, read, stores, 0) }

// sameAlong is same for the programs that agree on the grid axes of
// fixed (those an output's index map uses, whose programs share its
// block along another axis): the value and position may depend on those
// axes (a Vmap'ed kernel's block of the batch element).
func (x accesses) sameAlong(a *Op, read bool, stores int, fixed uint64) bool {
	deps, ok := x.sameDeps(a, read, stores)
	return ok && deps&^fixed == 0
}

// sameDeps is, for a store that may be a same-value store (see same),
// the grid axes its values and its position depend on: two programs that
// agree on them store the same values at the same elements. ok is false
// for any other access.
func (x accesses) sameDeps(a *Op, read bool, stores int) (deps uint64, ok bool) {
	if a.Name != "store" || read || stores != 1 || x.looped[a] || x.val[a]&(readsWritten|loopVarying) != 0 {
		return 0, false
	}
	deps = x.val[a] & gridBits(maxCheckedAxes)
	// Slices, points and starts put each lane at its own element, so a
	// mask that depends on the program picks who writes, not what; an
	// index array may repeat elements, and then the mask picks what.
	at := x.pos[a]
	if a.Attrs.Indexer.HasArrays() {
		at = x.idx[a]
	}
	if !oneNumber(a.Operands[1+a.Attrs.Indexer.NumOperands], map[*Value]bool{}) {
		deps |= at & gridBits(maxCheckedAxes)
	}
	return deps, true
}

// oneNumber reports whether v holds one value everywhere: a scalar, a
// constant (a splat), or broadcasts, reshapes, transposes and elementwise
// ops of such values (seen memoizes it).
func oneNumber(v *Value, seen map[*Value]bool) bool {
	if scalarLike(v.Type) {
		return true
	}
	if one, ok := seen[v]; ok {
		return one
	}
	op := v.Def
	one := op != nil && len(op.Regions) == 0 && (op.Name == "const" || spreadOps[op.Name])
	if one && op.Name != "const" {
		for _, o := range op.Operands {
			one = one && oneNumber(o, seen)
		}
	}
	seen[v] = one
	return one
}

// spreadOps are the ops whose result holds one value everywhere when each
// operand does.
var spreadOps = map[string]bool{
	"broadcast_in_dim": true, "reshape": true, "transpose": true, "convert": true, "select": true, "cmp": true,
	"add": true, "sub": true, "mul": true, "div": true, "rem": true, "max": true, "min": true, "pow": true,
	"and": true, "or": true, "xor": true, "shl": true, "shr": true, "neg": true, "abs": true, "not": true,
	"exp": true, "log": true, "tanh": true, "erf": true, "sqrt": true, "rsqrt": true, "floor": true,
	"ceil": true, "sin": true, "cos": true, "logistic": true, "log1p": true, "expm1": true, "tan": true,
	"round": true, "sign": true, "bitcast": true, "exp2": true, "log2": true, "asin": true, "acos": true,
	"atan": true, "atan2": true, "sinh": true, "cosh": true, "asinh": true, "acosh": true, "atanh": true,
	"cbrt": true, "erf_inv": true, "is_finite": true, "popcnt": true, "clz": true, "erfc": true, "lgamma": true,
}

// apart returns the grid axes on which two programs that both run access
// a at the same elements agree, given that they agree on the axes of
// fixed: those its position depends on (taken to put different programs
// at different elements), and those of its Whens on ProgramID(h) == v
// where v is the same in both (v depends only on axes already in the
// set: the two programs then both have id v along h), to a fixed point.
func (x accesses) apart(a *Op, fixed uint64, axes int) uint64 {
	k := fixed | x.idx[a]
	for changed := true; changed; {
		changed = false
		for _, p := range x.pins[a] {
			if bit := axisBit(p.axis); k&bit == 0 && p.deps&gridBits(axes)&^k == 0 {
				k |= bit
				changed = true
			}
		}
	}
	return k
}

// disjoint reports whether accesses a and b reach no common element, by
// their static indices: in some dim both are static (a slice or a point)
// and their ranges do not meet.
func disjoint(a, b *Op) bool {
	da, db := a.Attrs.Indexer.Dims, b.Attrs.Indexer.Dims
	if len(da) != len(db) {
		return false
	}
	for i, x := range da {
		y := db[i]
		if x.Kind != DimArray && y.Kind != DimArray && x.Operand < 0 && y.Operand < 0 &&
			(x.Start+x.Size <= y.Start || y.Start+y.Size <= x.Start) {
			return true
		}
	}
	return false
}

// insideOwn reports whether access a, which a When(ProgramID(h) == c)
// with c a constant leaves to one program along h, lies inside that
// program's own elements: inside one of stores that is left to no one
// program along h and whose position depends on h, both positions
// computed for id c (programs agree on the axes of fixed).
func (x accesses) insideOwn(a *Op, h int, stores []*Op, grid []int64, fixed uint64) bool {
	axes := len(grid)
	pn, ok := x.pinOn(a, h, fixed, axes)
	if !ok {
		return false
	}
	id, ok := evalScalar(pn.at, grid, -1, 0)
	if !ok {
		return false
	}
	return slices.ContainsFunc(stores, func(st *Op) bool {
		if _, pinned := x.pinOn(st, h, fixed, axes); st == a || pinned || x.idx[st]&axisBit(h) == 0 {
			return false
		}
		return coversAt(st, a, func(v *Value) (int64, bool) { return evalScalar(v, grid, h, id) })
	})
}

// pinOn returns the When(ProgramID(g) == v) around access a that leaves
// it to one program along g among programs that agree on the axes of
// fixed: v depends only on axes on which they agree (apart).
func (x accesses) pinOn(a *Op, g int, fixed uint64, axes int) (pin, bool) {
	k := x.apart(a, fixed, axes)
	for _, p := range x.pins[a] {
		if p.axis == g && p.deps&gridBits(axes)&^k == 0 {
			return p, true
		}
	}
	return pin{}, false
}

// samePin reports whether accesses a and b are left to the same program
// along axis g among programs that agree on the axes of fixed: two
// programs running them at the same elements agree on g. They agree on
// fixed; on the axes a's position depends on when b's is computed alike
// (sameAt); and on each axis both pin to the same value (sameValue) that
// depends only on axes they agree on, to a fixed point.
func (x accesses) samePin(a, b *Op, g int, fixed uint64, axes int) bool {
	agreed := fixed
	if sameAt(a, b) {
		agreed |= x.idx[a]
	}
	for changed := true; changed && agreed&axisBit(g) == 0; {
		changed = false
		for _, pa := range x.pins[a] {
			bit := axisBit(pa.axis)
			if agreed&bit != 0 || pa.deps&gridBits(axes)&^agreed != 0 {
				continue
			}
			if slices.ContainsFunc(x.pins[b], func(pb pin) bool {
				return pb.axis == pa.axis && pb.deps&gridBits(axes)&^agreed == 0 && sameValue(pa.at, pb.at)
			}) {
				agreed |= bit
				changed = true
			}
		}
	}
	return agreed&axisBit(g) != 0
}

// gridBits are the dependence bits of a grid of that many axes.
func gridBits(axes int) uint64 { return uint64(1)<<min(axes, 62) - 1 }

// maxCheckedAxes is the most grid axes the race check tells apart (one
// dependence bit each, below readsWritten and loopVarying).
const maxCheckedAxes = 61

// accessAxes finds the dependences of body's loads and stores (accesses);
// written are the refs the programs write (loads of them are
// readsWritten), blockAxes the axes that pick each blocked ref's block
// (what a load of it reads depends on them), grid the grid's steps.
func accessAxes(body *Region, written map[*Value]bool, blockAxes map[*Value]uint64, grid []int64) accesses {
	x := accesses{idx: map[*Op]uint64{}, pos: map[*Op]uint64{}, pins: map[*Op][]pin{}, val: map[*Op]uint64{}, looped: map[*Op]bool{}, outer: map[*Op][]*Op{}}
	propagate(body, map[*Value]uint64{}, func(op *Op, deps map[*Value]uint64, ctl uint64, outer []*Op) uint64 {
		switch op.Name {
		case "program_id":
			return axisBit(op.Attrs.Axis)
		case "load", "store", "atomic":
			ix := op.Attrs.Indexer
			var idx uint64
			for _, v := range op.Operands[1 : 1+ix.NumOperands] {
				idx |= deps[v]
			}
			at := 1 + ix.NumOperands // load: the mask follows the indices
			if op.Name != "load" {
				x.val[op] = deps[op.Operands[at]] | ctl
				if op.Name == "atomic" && op.Attrs.Kind == "cas" { // what a cas writes depends on cmp too
					x.val[op] |= deps[op.Operands[len(op.Operands)-1]]
				}
				at++ // store, atomic: the mask follows the value
			}
			x.pos[op] = idx &^ (readsWritten | loopVarying)
			if ix.HasMask {
				idx |= deps[op.Operands[at]]
			}
			x.idx[op] = idx &^ (readsWritten | loopVarying)
			x.pins[op] = pinsOf(op, outer, deps, grid)
			x.looped[op] = slices.ContainsFunc(outer, func(o *Op) bool { return o.Name == "for" || o.Name == "while" })
			x.outer[op] = slices.Clone(outer)
			if op.Name != "store" { // a load, or an atomic update's old values
				d := blockAxes[op.Operands[0]]
				if written[op.Operands[0]] || op.Name == "atomic" {
					d |= readsWritten
				}
				return d
			}
		}
		return 0
	})
	return x
}

// covers reports whether store st reaches every element load ld reads (or
// store ld writes), by their indices (a masked store only an access with
// the same mask and indices, sameAt): in each dim the store spanning the whole dim, or
// both static with the load's range inside the store's, or both starting
// at the same dynamic value (the same, or computed alike) with the load's
// size at most the store's, or the same index array.
func covers(st, ld *Op) bool { return coversAt(st, ld, nil) }

// coversAt is covers where the dynamic starts that start computes (ok) are
// taken as static: those of one program, whose id start knows.
func coversAt(st, ld *Op, start func(v *Value) (int64, bool)) bool {
	is, il := st.Attrs.Indexer, ld.Attrs.Indexer
	if len(is.Dims) != len(il.Dims) {
		return false
	}
	if is.HasMask {
		// A masked store writes what its mask leaves: it covers only an
		// access with the same mask at the same indices.
		return sameAt(st, ld)
	}
	dyn := func(op *Op, d DimIndex) *Value { return op.Operands[1+d.Operand] }
	// static resolves d's start where it can.
	static := func(op *Op, d DimIndex) (DimIndex, bool) {
		if d.Kind == DimArray {
			return d, false
		}
		if d.Operand < 0 {
			return d, true
		}
		if start != nil {
			if at, ok := start(dyn(op, d)); ok {
				d.Start, d.Operand = at, -1
				return d, true
			}
		}
		return d, false
	}
	shape := st.Operands[0].Type.Shape // the ref's block, as the kernel sees it
	for i, ds := range is.Dims {
		dl := il.Dims[i]
		ss, sok := static(st, ds)
		sl, lok := static(ld, dl)
		switch {
		case ds.Kind == DimSlice && ds.Operand < 0 && ds.Start == 0 && i < len(shape) && ds.Size == shape[i]:
			// The store spans the dim: any in-bounds index is inside.
		case ds.Kind == DimArray || dl.Kind == DimArray:
			if ds.Kind != dl.Kind || !slices.Equal(is.ArrayShape, il.ArrayShape) || !sameValue(dyn(st, ds), dyn(ld, dl)) {
				return false
			}
		case sok && lok:
			if sl.Start < ss.Start || sl.Start+sl.Size > ss.Start+ss.Size {
				return false
			}
		case ds.Operand >= 0 && dl.Operand >= 0:
			if dl.Size > ds.Size || !sameValue(dyn(st, ds), dyn(ld, dl)) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// maskOf is access a's mask, or nil.
func maskOf(a *Op) *Value {
	ix := a.Attrs.Indexer
	if !ix.HasMask {
		return nil
	}
	at := 1 + ix.NumOperands // a load's mask follows its indices
	if a.Name != "load" {
		at++ // a store's or atomic update's, its value
	}
	return a.Operands[at]
}

// sameAt reports whether accesses a and b reach the same elements, by
// their code: the same indexing, dynamic indices and masks computed alike
// (sameValue), or both without a mask.
func sameAt(a, b *Op) bool {
	ia, ib := a.Attrs.Indexer, b.Attrs.Indexer
	ma, mb := maskOf(a), maskOf(b)
	if (ma == nil) != (mb == nil) || ma != nil && !sameValue(ma, mb) || !slices.Equal(ia.ArrayShape, ib.ArrayShape) {
		return false
	}
	return slices.EqualFunc(ia.Dims, ib.Dims, func(x, y DimIndex) bool {
		return x.Kind == y.Kind && x.Size == y.Size &&
			(x.Operand < 0 && y.Operand < 0 && x.Start == y.Start ||
				x.Operand >= 0 && y.Operand >= 0 && sameValue(a.Operands[1+x.Operand], b.Operands[1+y.Operand]))
	})
}

// sameValue reports whether x and y are the same value, or computed alike
// from the same values (DS(p*2, 2) written out twice): ops of one name and
// attributes, without regions, on operands that are the same values in
// turn; of loads, only those of scalar-prefetch arrays (which the kernel
// does not write).
func sameValue(x, y *Value) bool {
	if x == y {
		return true
	}
	a, b := x.Def, y.Def
	if a == nil || b == nil || a.Name != b.Name || len(a.Regions) > 0 || len(b.Regions) > 0 ||
		a.Name == "load" && (a.Operands[0] != b.Operands[0] || a.Operands[0].Ref == nil || a.Operands[0].Ref.Kind != PrefetchRef) ||
		a.Name == "atomic" ||
		len(a.Operands) != len(b.Operands) || slices.Index(a.Results, x) != slices.Index(b.Results, y) ||
		!reflect.DeepEqual(a.Attrs, b.Attrs) || x.Type.DType != y.Type.DType || !slices.Equal(x.Type.Shape, y.Type.Shape) {
		return false
	}
	return slices.EqualFunc(a.Operands, b.Operands, sameValue)
}

// pinsOf finds the Whens among outer (the ops around access a) whose
// condition is ProgramID(g) == v (either way round, the id possibly
// converted to a type that keeps the grid's ids apart, possibly one term
// of an And), with a in the branch where it holds and v the same in
// every program along g and every iteration of the loops around.
func pinsOf(a *Op, outer []*Op, deps map[*Value]uint64, grid []int64) []pin {
	var pins []pin
	var terms func(c *Value)
	terms = func(c *Value) {
		d := c.Def
		switch {
		case d == nil:
		case d.Name == "and" && c.Type.DType == xla.Bool:
			terms(d.Operands[0])
			terms(d.Operands[1])
		case d.Name == "cmp" && d.Attrs.Dir == "EQ":
			for i, v := range d.Operands {
				// Through converts that keep every program id of the
				// axis distinct (to bool, i8 or f16 several ids meet).
				for v.Def != nil && v.Def.Name == "convert" && v.Def.Operands[0].Type.DType.IsInt() {
					v = v.Def.Operands[0]
				}
				pd := v.Def
				if pd == nil || pd.Name != "program_id" || !idsKept(d.Operands[i], grid[pd.Attrs.Axis]) {
					continue
				}
				other := d.Operands[1-i]
				if deps[other]&(axisBit(pd.Attrs.Axis)|readsWritten|loopVarying) == 0 {
					pins = append(pins, pin{axis: pd.Attrs.Axis, at: other, deps: deps[other]})
				}
			}
		}
	}
	for _, o := range outer {
		if o.Name == "when" && !inElse(a, o) {
			terms(o.Operands[0])
		}
	}
	return pins
}

// idsKept reports whether v, a program id of an axis of n steps seen
// through converts, still holds each of the ids 0 .. n-1 as a different
// value: every convert on the way is to an integer type or a float type
// that represents them all exactly (a bool only 0 and 1).
func idsKept(v *Value, n int64) bool {
	for ; v.Def != nil && v.Def.Name == "convert"; v = v.Def.Operands[0] {
		dt := v.Type.DType
		var exact int64 // the largest id the type keeps
		switch {
		case dt == xla.Bool:
			exact = 1
		case dt.IsInt():
			exact = int64(1)<<(dt.Bits()-1) - 1
			if dt.IsUnsigned() && dt.Bits() < 64 {
				exact = int64(1)<<dt.Bits() - 1
			}
		case dt == xla.Float64:
			exact = 1 << 53
		case dt == xla.Float32:
			exact = 1 << 24
		case dt == xla.Float16:
			exact = 1 << 11
		case dt == xla.BFloat16:
			exact = 1 << 8
		}
		if n-1 > exact {
			return false
		}
	}
	return true
}

// propagate computes, to a fixed point, the dependence bits of r's values
// into deps (which holds the seeds): an op's results depend on its
// operands, the yields of its regions and what visit adds (visit sees each
// op with its operands' bits in deps, the bits of the ops that control
// it, and those ops, outermost first). A region's arguments are
// over-approximated (all of the op's operands and the region's yields),
// which can only call more accesses partitioned.
func propagate(r *Region, deps map[*Value]uint64, visit func(op *Op, deps map[*Value]uint64, ctl uint64, outer []*Op) uint64) {
	var walk func(r *Region, ctl uint64, outer []*Op) bool
	walk = func(r *Region, ctl uint64, outer []*Op) bool {
		changed := false
		add := func(v *Value, d uint64) {
			if deps[v]|d != deps[v] {
				deps[v] |= d
				changed = true
			}
		}
		for _, op := range r.Ops {
			var d uint64
			for _, v := range op.Operands {
				d |= deps[v]
			}
			if visit != nil {
				d |= visit(op, deps, ctl, outer)
			}
			for _, sub := range op.Regions {
				var y uint64
				for _, v := range sub.Yield {
					y |= deps[v]
				}
				for _, a := range sub.Args {
					if op.Name == "for" || op.Name == "while" {
						add(a, d|y|loopVarying)
					} else {
						add(a, d|y)
					}
				}
				if walk(sub, ctl|d, append(outer[:len(outer):len(outer)], op)) {
					changed = true
				}
				for _, v := range sub.Yield {
					d |= deps[v]
				}
			}
			if (op.Name == "for" || op.Name == "while") && !slices.ContainsFunc(outer, func(o *Op) bool { return o.Name == "for" || o.Name == "while" }) {
				// A loop's result outside any loop is one value a
				// program computes once (its carries vary, it does not).
				d &^= loopVarying
			}
			for _, res := range op.Results {
				add(res, d)
			}
		}
		return changed
	}
	for walk(r, 0, nil) {
	}
}

// wholeButSqueezed reports whether r's blocks span the array in every dim
// but squeezed ones.
func wholeButSqueezed(r RefInfo) bool {
	for d, b := range r.Block {
		if b != Squeezed && b != r.ArrayShape[d] {
			return false
		}
	}
	return true
}

// gridDeps reports, per grid axis, whether index map m's block indices
// depend on that axis's index (through any op, loads of prefetched data
// included). A nil map (block 0 everywhere) depends on none.
func gridDeps(m *Region, axes int) []bool {
	out := make([]bool, axes)
	if m == nil {
		return out
	}
	deps := map[*Value]uint64{}
	for g := 0; g < axes && g < len(m.Args); g++ {
		deps[m.Args[g]] = axisBit(g)
	}
	propagate(m, deps, nil)
	var d uint64
	for _, y := range m.Yield {
		d |= deps[y]
	}
	for g := range out {
		out[g] = d&axisBit(g) != 0
	}
	return out
}

// regionKey prints r with its values numbered in order of definition, so
// that two index maps that compute the same thing print the same.
func regionKey(r *Region) string {
	if r == nil {
		return ""
	}
	ids := map[*Value]int{}
	num := func(v *Value) int {
		if n, ok := ids[v]; ok {
			return n
		}
		ids[v] = len(ids) + 1
		return ids[v]
	}
	var b strings.Builder
	printRegionWith(&b, r, 1, num)
	return b.String()
}
