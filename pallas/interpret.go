package pallas

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/halo-ml/halo/chlo"
	"github.com/halo-ml/halo/effects"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The interpret lowering: the call becomes plain StableHLO that runs on the
// built-in interpreter and on any XLA backend.
//
//   - Non-prefetch operands are padded to whole blocks (pad value: NaN for
//     floats, the minimum for integers, false for bools). The padding of an
//     output's edge block reads as the pad value too, whatever the kernel
//     stored there (a load masks it), as on a GPU, where nothing past the
//     array is kept.
//   - Outputs start as their aliased operand (padded) or filled with that
//     "uninitialized" value; scratch buffers likewise. An output whose index
//     map visits every block once, in one run of consecutive steps (see
//     visitsEachBlockOnce), starts as zeros instead: each of its blocks is
//     filled with the uninitialized value when its run begins and written
//     back when it ends, so the whole array is never filled first.
//   - An output the kernel only overwrites (it never loads from it, and
//     every store covers the whole block, unmasked) is not read at all: a
//     flag carried by the loop says whether the current block was stored
//     since it was entered, and only then is it written back, so a block
//     a visit leaves alone keeps the array's contents (its aliased operand,
//     or the "uninitialized" value) without a copy out and back.
//   - An output that starts as zeros (above) and that the kernel stores
//     zero blocks to carries a flag in the loop: "the current block
//     differs from the zeros under it". A block whose last store put
//     zeros in all of it is not written back.
//   - What is known before the grid runs is folded: ProgramID along an
//     axis of one step is 0, comparisons of known integers and and/or/not
//     of known booleans are constants, a When on a known condition is
//     lowered inline or not at all, 0 + x is x; an accumulator a When
//     zeroes is added to only at the steps that did not zero it.
//   - One stablehlo.while runs the grid in row-major order (last axis
//     fastest). Each step turns the step number into grid indices, runs the
//     index maps (grid indices and the prefetch arrays), slices the input and
//     output blocks, runs the body as StableHLO ops on block values (refs are
//     values threaded through the body; stores replace them), and writes the
//     output blocks back at the same block indices. Scratch buffers are
//     carried from step to step. Kernel values that no step changes
//     (constants, iotas and what is computed from them alone) are built
//     once, before the loop.
//   - Bounds checks (unless CompilerParams.NoBoundsChecks): every unmasked
//     load and store with a dynamic index, and every block index, is
//     checked at run time. The first failure is kept in an i32 vector
//     carried by the loop (failing site, grid step, index) and after the
//     loop a side-effecting typed-FFI custom_call @halo.pallas.check
//     receives it; its backend_config dictionary holds the Go handler's
//     pjrt.FFICallbackAttr and, in the halo.pallas.check attribute, the
//     kernel name, the grid and one line per site (JSON). The interpreter
//     implements that target (registered by this package), and Register
//     installs the handler with a PJRT plugin; a failed check fails the run
//     with an error naming the kernel, the grid point, the op and its
//     source line, and the index.

// CheckTarget is the custom_call target of interpret mode's bounds check.
const CheckTarget = "halo.pallas.check"

// checkSite is one checked access, described in the check's config.
type checkSite struct {
	what string // "load from input 0 (f32[2] block of f32[8]) at k.go:12"
	kind string // "slice start", "element index" or "block index"
	dims []int64
}

type interp struct {
	// used holds the kernel's values that something uses (usesOf).
	used   map[*Value]bool
	p      *Program
	spec   *CallSpec
	checks bool
	sites  []checkSite
	errLen int
	// flat index of the err slot in env.state
	errSlot int
	// cacheAt[i] is where output i's current block and its starts sit in
	// the loop state (-1: a whole-array output, no cache).
	cacheAt []int
	// once[i] is set when output i is cached, not aliased, and its index
	// map visits each block once: a new block starts uninitialized instead
	// of being sliced from the output.
	once []bool
	// uninitBlock[i] is output i's uninitialized block when once[i].
	uninitBlock []*stablehlo.Value
	// dirtyAt[i] is where the "stored since entered" flag of output i
	// sits in the loop state when the kernel only overwrites its cached
	// blocks (see writeOnly), else -1; dirtySlot maps the output's ref
	// slot to the flag's slot in env.state.
	dirtyAt   []int
	dirtySlot map[int]int
	// zeroSkip[slot] is set for an output ref that starts as zeros (once)
	// and that the kernel stores zero blocks to: its flag (a dirty slot)
	// then says whether the current block differs from the zeros the
	// array holds there, and a block stored as zeros is not written back.
	zeroSkip map[int]bool
	grid     []int64
	total    int64 // grid steps
	// outer builds the function around the grid loop. A kernel op that
	// depends on nothing a step changes (a constant, an iota, a broadcast
	// or arithmetic of such values) is emitted there, once per call, and
	// its value is read by every step: a zeroed accumulator block is then
	// one splat per call, not one per step. invariant holds the values
	// built there; hoisted is their CSE scope.
	outer     *stablehlo.FuncBuilder
	invariant map[*stablehlo.Value]bool
	hoisted   *cseScope
	// knownArg holds the index maps' grid arguments along axes of one
	// step (always 0); intMemo and boolMemo what knownInt and knownBool
	// found.
	knownArg map[*Value]int64
	intMemo  map[*Value]known
	boolMemo map[*Value]known
	// zero holds the lowered values that are all zeros (a zero constant,
	// its broadcasts, reshapes and converts): adding one is a no-op.
	// zeroIf those that are zeros at some steps.
	zero   map[*stablehlo.Value]bool
	zeroIf map[*stablehlo.Value]zeroIf
}

// env maps IR values to StableHLO values while lowering one region.
type env struct {
	vals  map[*Value]*stablehlo.Value
	state []*stablehlo.Value // one per ref, then the check state
	refOf map[*Value]int     // ref argument -> state slot
	grid  []*stablehlo.Value // grid indices (i32 scalars)
	step  *stablehlo.Value   // linear grid step (i32 scalar)
	// lazy holds the input refs the body never stores to: their blocks
	// are not sliced up front; each load slices the whole operand at the
	// block start plus its own index, so a step that loads nothing (a
	// skipped block) copies nothing.
	lazy map[int]lazyBlock
	// padLimit holds, for an output whose block may overhang its array
	// (an edge block) and that the body loads from, per ref dim the number
	// of the block's elements inside the array (nil for a dim whose blocks
	// all fit): its loads read the rest as the padding value, whatever the
	// kernel stored there, as on a GPU (which keeps nothing past the array).
	padLimit map[int][]*stablehlo.Value
	// cse holds the values already computed in this region and the
	// regions around it: index maps and kernel bodies often compute the
	// same thing (a prefetch load, a block start) several times.
	cse *cseScope
}

// cseScope maps an op's key (cseKey) to its lowered results; lookups go
// on to the enclosing region's scope, whose values are visible here.
type cseScope struct {
	parent *cseScope
	m      map[string][]*stablehlo.Value
}

func (s *cseScope) get(k string) []*stablehlo.Value {
	for ; s != nil; s = s.parent {
		if v, ok := s.m[k]; ok {
			return v
		}
	}
	return nil
}

// lazyBlock is an input block read straight from its (padded) operand.
type lazyBlock struct {
	arr    *stablehlo.Value
	starts []*stablehlo.Value // element starts per array dim
	info   RefInfo
}

func (e *env) child() *env {
	c := *e
	c.state = append([]*stablehlo.Value(nil), e.state...)
	c.cse = &cseScope{parent: e.cse, m: map[string][]*stablehlo.Value{}}
	return &c
}

// cseKey identifies what op computes in e: its name, attributes, result
// types and lowered operands (for a load, the ref's current value too).
// Ops with effects or regions have none.
func (l *interp) cseKey(op *Op, e *env) (string, bool) {
	switch op.Name {
	case "store", "atomic", "when", "for", "while":
		return "", false
	}
	if len(op.Regions) > 0 || len(op.Results) == 0 {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%T|%+v|", op.Name, op.Attrs.Value, op.Attrs)
	for _, r := range op.Results {
		fmt.Fprintf(&b, "%v;", r.Type)
	}
	for i, v := range op.Operands {
		if op.Name == "load" && i == 0 {
			slot, ok := e.refOf[v]
			if !ok {
				return "", false
			}
			fmt.Fprintf(&b, "ref%d=%p,", slot, e.state[slot])
			continue
		}
		hv, ok := e.vals[v]
		if !ok {
			return "", false
		}
		fmt.Fprintf(&b, "%p,", hv)
	}
	return b.String(), true
}

func uninitValue(dt xla.DType) float64 {
	switch {
	case dt.IsFloat():
		return math.NaN()
	case dt.IsBool():
		return 0
	case dt.IsUnsigned():
		return 0
	case dt.IsInt():
		return -math.Ldexp(1, dt.Bits()-1)
	}
	return 0
}

// uninit is a tensor of t filled with the "never written" value.
func uninit(fb *stablehlo.FuncBuilder, dt xla.DType, dims []int64) *stablehlo.Value {
	switch {
	case dt.IsInt() && !dt.IsUnsigned() && dt.Bits() == 64:
		return stablehlo.Splat(fb, int64(math.MinInt64), dims...)
	case dt == xla.Complex64:
		return stablehlo.Splat(fb, complex(float32(math.NaN()), float32(math.NaN())), dims...)
	case dt == xla.Complex128:
		return stablehlo.Splat(fb, complex(math.NaN(), math.NaN()), dims...)
	}
	return fb.SplatOf(dt, uninitValue(dt), dims...)
}

func lowerInterpret(fb *stablehlo.FuncBuilder, p *Program, spec *CallSpec, operands []*stablehlo.Value) ([]*stablehlo.Value, error) {
	l := &interp{p: p, spec: spec, checks: !spec.CompilerParams.NoBoundsChecks, grid: p.Grid,
		knownArg: map[*Value]int64{}, intMemo: map[*Value]known{}, boolMemo: map[*Value]known{},
		zero: map[*stablehlo.Value]bool{}, zeroIf: map[*stablehlo.Value]zeroIf{}}
	// The step counter is an i32.
	if n := gridSteps(p.Grid); n > math.MaxInt32 {
		return nil, &Error{Kernel: p.Name, Op: "interpret", Msg: fmt.Sprintf("grid %v has %d steps, more than interpret mode's %d", p.Grid, n, math.MaxInt32)}
	}
	maxRank := 1
	for _, r := range p.Refs {
		maxRank = max(maxRank, len(r.ArrayShape))
	}
	l.errLen = 2 + maxRank
	np, nin, nout := p.NumPrefetch, p.NumInputs, p.NumOutputs
	padded := func(r RefInfo) []int64 {
		dims := make([]int64, len(r.ArrayShape))
		for d, n := range r.ArrayShape {
			b := r.Block[d]
			if b == Squeezed {
				b = 1
			}
			dims[d] = numBlocks(n, b) * b
		}
		return dims
	}
	// The "never written" arrays the loop starts from, one per type: the
	// scratch buffers and blocks of one shape share theirs, so a run
	// fills it once (values are immutable; a store makes a new one).
	uninits := map[string]*stablehlo.Value{}
	uninitOf := func(dt xla.DType, dims []int64) *stablehlo.Value {
		k := fmt.Sprint(dt, dims)
		if v, ok := uninits[k]; ok {
			return v
		}
		v := uninit(fb, dt, dims)
		uninits[k] = v
		return v
	}
	pad := func(v *stablehlo.Value, r RefInfo) *stablehlo.Value {
		dims := padded(r)
		if sameShape(dims, r.ArrayShape) {
			return v
		}
		high := make([]int64, len(dims))
		for d := range dims {
			high[d] = dims[d] - r.ArrayShape[d]
		}
		pv := uninitOf(r.DType, nil)
		return fb.Pad(v, pv, make([]int64, len(dims)), high, make([]int64, len(dims)))
	}
	ins := make([]*stablehlo.Value, nin)
	for i := 0; i < nin; i++ {
		ins[i] = pad(operands[np+i], p.Refs[np+i])
	}
	// Loop state: step, outputs, scratch, check state.
	init := []*stablehlo.Value{fb.ScalarOf(xla.Int32, 0)}
	l.once = make([]bool, nout)
	for i := 0; i < nout; i++ {
		r := p.Refs[np+nin+i]
		switch {
		case r.AliasOf >= 0:
			init = append(init, pad(operands[r.AliasOf], r))
		case !sameShape(r.Block, r.ArrayShape) && visitsEachBlockOnce(p.IndexMaps[nin+i], r, p.Grid):
			// Every element is written back from a block that starts
			// uninitialized: the array's first contents are never read.
			l.once[i] = true
			init = append(init, fb.SplatOf(r.DType, 0, padded(r)...))
		default:
			init = append(init, uninitOf(r.DType, padded(r)))
		}
	}
	for i := 0; i < p.NumScratch; i++ {
		r := p.Refs[np+nin+nout+i]
		init = append(init, uninitOf(r.DType, r.ArrayShape))
	}
	if l.checks {
		init = append(init, fb.SplatOf(xla.Int32, 0, int64(l.errLen)))
	}
	// Blocked outputs keep their current block in the loop state and write
	// it back only when the block index changes (and after the loop), as a
	// pipeline does: consecutive steps on one output block (a reduction
	// axis) then cost no copy of the whole output.
	l.cacheAt = make([]int, nout)
	l.uninitBlock = make([]*stablehlo.Value, nout)
	l.dirtySlot = map[int]int{}
	l.zeroSkip = map[int]bool{}
	for i := 0; i < nout; i++ {
		r := p.Refs[np+nin+i]
		if sameShape(r.Block, r.ArrayShape) {
			l.cacheAt[i] = -1
			continue
		}
		l.cacheAt[i] = len(init)
		zeros := make([]*stablehlo.Value, len(r.Block))
		for d := range zeros {
			zeros[d] = fb.ScalarOf(xla.Int32, 0)
		}
		switch {
		case l.once[i]:
			// Also the value of every later new block (see step).
			l.uninitBlock[i] = uninitOf(r.DType, blockSizes(r))
			init = append(init, l.uninitBlock[i])
			if storesZeros(p.Body, p.Body.Args[np+nin+i]) {
				l.dirtySlot[np+nin+i] = len(p.Refs) + 1 + len(l.dirtySlot)
				l.zeroSkip[np+nin+i] = true
			}
		case writeOnly(p.Body, p.Body.Args[np+nin+i], r.BlockShape):
			// Never read: any value of the block's type will do.
			l.dirtySlot[np+nin+i] = len(p.Refs) + 1 + len(l.dirtySlot)
			init = append(init, uninitOf(r.DType, blockSizes(r)))
		default:
			init = append(init, fb.DynamicSlice(init[1+i], zeros, blockSizes(r)))
		}
		init = append(init, zeros...)
	}
	l.dirtyAt = make([]int, nout)
	for i := 0; i < nout; i++ {
		l.dirtyAt[i] = -1
		if _, ok := l.dirtySlot[np+nin+i]; ok {
			l.dirtyAt[i] = len(init)
			// A zero-skipping output's first block is uninitialized, not
			// the zeros under it: it differs.
			init = append(init, fb.ScalarOf(xla.Bool, boolFloat(l.zeroSkip[np+nin+i])))
		}
	}
	total := int64(1)
	for _, g := range p.Grid {
		total *= g
	}
	l.total = total
	l.outer, l.invariant, l.hoisted = fb, map[*stablehlo.Value]bool{}, &cseScope{m: map[string][]*stablehlo.Value{}}
	defer func() { l.outer = nil }()
	var lowerErr error
	res := fb.While(init, func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) *stablehlo.Value {
		more := rb.Compare(a[0], rb.ScalarOf(xla.Int32, float64(total)), stablehlo.CompareLT, stablehlo.CompareAuto)
		if l.checks {
			// The grid stops at the first failed check.
			more = l.untilFailed(rb, more, a[1+nout+p.NumScratch])
		}
		return more
	}, func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
		out, err := l.step(rb, a, operands[:np], ins)
		if err != nil {
			lowerErr = err
			return a
		}
		return out
	})
	if lowerErr != nil {
		return nil, lowerErr
	}
	if err := fb.Err(); err != nil {
		return nil, err
	}
	outs := make([]*stablehlo.Value, nout)
	for i := 0; i < nout; i++ {
		r := p.Refs[np+nin+i]
		v := res[1+i] // cached blocks were written back by the last step
		if dims := padded(r); !sameShape(dims, r.ArrayShape) {
			v = fb.Slice(v, make([]int64, len(dims)), r.ArrayShape, nil)
		}
		outs[i] = v
	}
	if l.checks && len(l.sites) > 0 {
		fb.CustomCall(CheckTarget, []*stablehlo.Value{res[1+nout+p.NumScratch]}, nil, checkCallConfig(l.checkConfig()))
	}
	return outs, nil
}

// step lowers one grid step. a is the loop state.
func (l *interp) step(fb *stablehlo.FuncBuilder, a []*stablehlo.Value, prefetch, ins []*stablehlo.Value) ([]*stablehlo.Value, error) {
	p := l.p
	np, nin, nout, ns := p.NumPrefetch, p.NumInputs, p.NumOutputs, p.NumScratch
	e := &env{vals: map[*Value]*stablehlo.Value{}, refOf: map[*Value]int{}, step: a[0], cse: &cseScope{m: map[string][]*stablehlo.Value{}}}
	// Grid indices from the step, last axis fastest.
	e.grid = make([]*stablehlo.Value, len(p.Grid))
	rest := a[0]
	for d := len(p.Grid) - 1; d >= 0; d-- {
		switch {
		case p.Grid[d] == 1:
			e.grid[d] = fb.ScalarOf(xla.Int32, 0) // rest stays: rest/1
		case d == 0:
			e.grid[d] = rest
		default:
			g := fb.ScalarOf(xla.Int32, float64(p.Grid[d]))
			e.grid[d] = fb.Remainder(rest, g)
			rest = fb.Divide(rest, g)
		}
	}
	nref := len(p.Refs)
	e.state = make([]*stablehlo.Value, nref+1+len(l.dirtySlot))
	l.errSlot = nref
	if l.checks {
		e.state[nref] = a[1+nout+ns]
	}
	copy(e.state, prefetch)
	// Block starts of inputs and outputs.
	starts := make([][]*stablehlo.Value, nin+nout)
	for i := 0; i < nin+nout; i++ {
		r := p.Refs[np+i]
		st, err := l.blockStarts(fb, e, i, r)
		if err != nil {
			return nil, err
		}
		starts[i] = st
	}
	slice := func(buf *stablehlo.Value, r RefInfo, st []*stablehlo.Value) *stablehlo.Value {
		if sameShape(r.Block, r.ArrayShape) {
			return buf // whole array (never padded)
		}
		sizes := blockSizes(r)
		v := fb.DynamicSlice(buf, st, sizes)
		if !sameShape(sizes, r.BlockShape) {
			v = fb.Reshape(v, r.BlockShape...)
		}
		return v
	}
	stored := storedRefs(p.Body)
	loaded := loadedRefs(p.Body)
	e.padLimit = map[int][]*stablehlo.Value{}
	for i := 0; i < nout; i++ {
		if loaded[p.Body.Args[np+nin+i]] {
			if lim := padLimits(fb, p.Refs[np+nin+i], starts[nin+i]); lim != nil {
				e.padLimit[np+nin+i] = lim
			}
		}
	}
	e.lazy = map[int]lazyBlock{}
	for i := 0; i < nin; i++ {
		r := p.Refs[np+i]
		if !stored[p.Body.Args[np+i]] && !sameShape(r.Block, r.ArrayShape) {
			e.lazy[np+i] = lazyBlock{arr: ins[i], starts: starts[i], info: r}
			continue
		}
		e.state[np+i] = slice(ins[i], r, starts[i])
	}
	bufs := make([]*stablehlo.Value, nout)
	for i := 0; i < nout; i++ {
		r := p.Refs[np+nin+i]
		c := l.cacheAt[i]
		if c < 0 {
			bufs[i] = a[1+i]
			e.state[np+nin+i] = slice(a[1+i], r, starts[nin+i])
			continue
		}
		rank := len(r.Block)
		buf, blk, prev, st := a[1+i], a[c], a[c+1:c+1+rank], starts[nin+i]
		var changed *stablehlo.Value
		for d := 0; d < rank; d++ {
			ne := fb.Compare(st[d], prev[d], stablehlo.CompareNE, stablehlo.CompareAuto)
			if changed == nil {
				changed = ne
			} else {
				changed = fb.Or(changed, ne)
			}
		}
		sizes := blockSizes(r)
		// enter makes v (of the block's sizes) the step's block of the ref.
		enter := func(v *stablehlo.Value) {
			if !sameShape(sizes, r.BlockShape) {
				v = fb.Reshape(v, r.BlockShape...)
			}
			e.state[np+nin+i] = v
		}
		if d := l.dirtyAt[i]; d >= 0 && l.zeroSkip[np+nin+i] {
			// Written back unless it holds the zeros already under it; the
			// new block starts uninitialized, which differs from them.
			differs := a[d]
			res := fb.If(changed, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
				b2 := rb.If(differs, func(rb2 *stablehlo.FuncBuilder) []*stablehlo.Value {
					return []*stablehlo.Value{rb2.DynamicUpdateSlice(buf, blk, prev)}
				}, func(rb2 *stablehlo.FuncBuilder) []*stablehlo.Value {
					return []*stablehlo.Value{buf}
				})[0]
				return []*stablehlo.Value{b2, l.uninitBlock[i]}
			}, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
				return []*stablehlo.Value{buf, blk}
			})
			bufs[i] = res[0]
			e.state[l.dirtySlot[np+nin+i]] = fb.Or(changed, differs)
			enter(res[1])
			continue
		}
		if d := l.dirtyAt[i]; d >= 0 {
			// Written back only if stored since entered; the new block's
			// contents are never read (every store replaces all of it).
			dirty := a[d]
			bufs[i] = fb.If(fb.And(changed, dirty), func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
				return []*stablehlo.Value{rb.DynamicUpdateSlice(buf, blk, prev)}
			}, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
				return []*stablehlo.Value{buf}
			})[0]
			e.state[l.dirtySlot[np+nin+i]] = fb.And(dirty, fb.Not(changed))
			enter(blk)
			continue
		}
		once := l.once[i]
		res := fb.If(changed, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
			b2 := rb.DynamicUpdateSlice(buf, blk, prev)
			if once {
				// The uninitialized block the loop started with (values
				// are immutable: a partial store copies it first).
				return []*stablehlo.Value{b2, l.uninitBlock[i]}
			}
			return []*stablehlo.Value{b2, rb.DynamicSlice(b2, st, sizes)}
		}, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
			return []*stablehlo.Value{buf, blk}
		})
		bufs[i] = res[0]
		enter(res[1])
	}
	for i := 0; i < ns; i++ {
		e.state[np+nin+nout+i] = a[1+nout+i]
	}
	for i, arg := range p.Body.Args {
		e.refOf[arg] = i
	}
	if err := l.region(fb, p.Body, e); err != nil {
		return nil, err
	}
	// Cached output blocks: the last step writes its blocks back inside
	// the loop, where the loop owns the output and the update is in place.
	blks := make([]*stablehlo.Value, nout)
	var last *stablehlo.Value
	for i := 0; i < nout; i++ {
		r := p.Refs[np+nin+i]
		if l.cacheAt[i] < 0 {
			continue
		}
		blk := e.state[np+nin+i]
		if sizes := blockSizes(r); !sameShape(sizes, r.BlockShape) {
			blk = fb.Reshape(blk, sizes...)
		}
		blks[i] = blk
		if last == nil {
			last = fb.Compare(a[0], fb.ScalarOf(xla.Int32, float64(l.total-1)), stablehlo.CompareEQ, stablehlo.CompareAuto)
		}
		buf, st := bufs[i], starts[nin+i]
		write := last
		if d, ok := l.dirtySlot[np+nin+i]; ok {
			write = fb.And(last, e.state[d])
		}
		bufs[i] = fb.If(write, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
			return []*stablehlo.Value{rb.DynamicUpdateSlice(buf, blk, st)}
		}, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
			return []*stablehlo.Value{buf}
		})[0]
	}
	next := []*stablehlo.Value{fb.Add(a[0], fb.ScalarOf(xla.Int32, 1))}
	for i := 0; i < nout; i++ {
		if l.cacheAt[i] < 0 {
			next = append(next, e.state[np+nin+i])
			continue
		}
		next = append(next, bufs[i])
	}
	for i := 0; i < ns; i++ {
		next = append(next, e.state[np+nin+nout+i])
	}
	if l.checks {
		next = append(next, e.state[nref])
	}
	for i := 0; i < nout; i++ {
		if l.cacheAt[i] < 0 {
			continue
		}
		next = append(next, blks[i])
		next = append(next, starts[nin+i]...)
	}
	for i := 0; i < nout; i++ {
		if l.dirtyAt[i] >= 0 {
			next = append(next, e.state[l.dirtySlot[np+nin+i]])
		}
	}
	return next, nil
}

// writeOnly reports whether the kernel body only overwrites ref (an
// output of block shape block): it never loads from it, and every store
// to it replaces the whole block (static full slices, no mask, no index
// arrays).
func writeOnly(body *Region, ref *Value, block []int64) bool {
	var dims []int64
	for _, d := range block {
		if d != Squeezed {
			dims = append(dims, d)
		}
	}
	ok := true
	eachOp(body, func(op *Op) {
		if len(op.Operands) == 0 || op.Operands[0] != ref {
			return
		}
		if op.Name != "store" { // a load, or anything else that reads the ref
			ok = false
			return
		}
		ix := op.Attrs.Indexer
		if ix.HasArrays() || ix.HasMask || len(ix.Dims) != len(dims) {
			ok = false
		}
		for d, x := range ix.Dims {
			if d < len(dims) && (x.Operand >= 0 || x.Start != 0 || x.Size != dims[d]) {
				ok = false
			}
		}
	})
	return ok
}

// eachOp calls f with every op of r and of the regions inside them, in
// order.
func eachOp(r *Region, f func(op *Op)) {
	for _, op := range r.Ops {
		f(op)
		for _, sub := range op.Regions {
			eachOp(sub, f)
		}
	}
}

// isZeroConst reports whether a constant's value is an integer 0 or +0.0
// (not -0.0: a block of those differs from the zeros an output starts
// as).
func isZeroConst(c any) bool {
	switch c := c.(type) {
	case int64:
		return c == 0
	case float64:
		return c == 0 && !math.Signbit(c)
	}
	return false
}

// zeroValue reports whether IR value v is zeros: a zero constant (+0 for
// floats), or a broadcast, reshape or convert of one, each of a type that
// has a zero (hasZero). Lowerings fold 0 + x and x - 0 to x on it.
func zeroValue(v *Value) bool {
	for v.Def != nil {
		if !hasZero(v.Type.DType) {
			return false
		}
		switch v.Def.Name {
		case "const":
			return isZeroConst(v.Def.Attrs.Value)
		case "broadcast_in_dim", "reshape", "convert":
			v = v.Def.Operands[0]
		default:
			return false
		}
	}
	return false
}

// hasZero reports whether type dt holds a zero: all but f8E8M0FNU, a
// scale type of exponents alone, whose 0 converts to NaN.
func hasZero(dt xla.DType) bool { return dt != xla.Float8E8M0FNU }

// storesZeros reports whether the kernel body stores zeros (a zero
// constant, or a broadcast, reshape or convert of one) to ref.
func storesZeros(body *Region, ref *Value) bool {
	found := false
	eachOp(body, func(op *Op) {
		if op.Name == "store" && op.Operands[0] == ref && zeroValue(op.Operands[1+op.Attrs.Indexer.NumOperands]) {
			found = true
		}
	})
	return found
}

// visitsEachBlockOnce reports whether index map m, over a row-major grid,
// visits every block of r, each in a single run of consecutive steps: every
// block index is either a grid index (each grid axis used at most once, with
// as many steps as r has blocks along that dim) or the constant 0 along a
// dim of one block, and the grid axes used are the leading ones. The map
// may read no prefetch ref, so this is known when lowering.
func visitsEachBlockOnce(m *Region, r RefInfo, grid []int64) bool {
	if m == nil || len(m.Yield) != len(r.Block) {
		return false
	}
	used := make([]bool, len(grid))
	n := 0
	for d, y := range m.Yield {
		nb := numBlocks(r.ArrayShape[d], r.Block[d])
		if c, ok := constInt(y); ok {
			if c != 0 || nb != 1 {
				return false
			}
			continue
		}
		axis := -1
		for g := range grid {
			if m.Args[g] == y {
				axis = g
			}
		}
		if axis < 0 || used[axis] || grid[axis] != nb {
			return false
		}
		used[axis] = true
		n++
	}
	for g := 0; g < n; g++ {
		if !used[g] {
			return false
		}
	}
	return true
}

func blockSizes(r RefInfo) []int64 {
	s := make([]int64, len(r.Block))
	for d, b := range r.Block {
		if b == Squeezed {
			b = 1
		}
		s[d] = b
	}
	return s
}

// blockStarts runs index map i and returns the element starts of the block.
func (l *interp) blockStarts(fb *stablehlo.FuncBuilder, e *env, i int, r RefInfo) ([]*stablehlo.Value, error) {
	m := l.p.IndexMaps[i]
	sizes := blockSizes(r)
	st := make([]*stablehlo.Value, len(sizes))
	if m == nil {
		for d := range st {
			st[d] = fb.ScalarOf(xla.Int32, 0)
		}
		return st, nil
	}
	me := &env{vals: map[*Value]*stablehlo.Value{}, refOf: map[*Value]int{}, grid: e.grid, step: e.step, state: e.state, cse: e.cse}
	for g := range l.p.Grid {
		me.vals[m.Args[g]] = e.grid[g]
		if l.p.Grid[g] == 1 {
			l.knownArg[m.Args[g]] = 0
		}
	}
	for j, arg := range m.Args[len(l.p.Grid):] {
		me.refOf[arg] = j
	}
	if err := l.region(fb, m, me); err != nil {
		return nil, err
	}
	e.state[l.errSlot] = me.state[l.errSlot]
	blocks := make([]*stablehlo.Value, len(sizes))
	var bad *stablehlo.Value
	for d := range st {
		b := me.vals[m.Yield[d]]
		blocks[d] = b
		c, isInt := l.knownInt(m.Yield[d])
		switch {
		case isInt:
			// A constant block index: a constant start.
			st[d] = fb.ScalarOf(xla.Int32, float64(c*sizes[d]))
		case sizes[d] == 1:
			st[d] = b
		default:
			// Index maps of several refs often agree: one multiply each.
			key := fmt.Sprintf("block start|%p|%d", b, sizes[d])
			if vs := e.cse.get(key); vs != nil {
				st[d] = vs[0]
			} else {
				st[d] = fb.Multiply(b, fb.ScalarOf(xla.Int32, float64(sizes[d])))
				e.cse.m[key] = []*stablehlo.Value{st[d]}
			}
		}
		// Constant block indices were checked by traceIndexMap.
		if l.checks && !isConst(m.Yield[d]) {
			nb := numBlocks(r.ArrayShape[d], r.Block[d])
			ok := fb.And(fb.Compare(b, fb.ScalarOf(xla.Int32, 0), stablehlo.CompareGE, stablehlo.CompareAuto),
				fb.Compare(b, fb.ScalarOf(xla.Int32, float64(nb)), stablehlo.CompareLT, stablehlo.CompareAuto))
			nok := fb.Not(ok)
			if bad == nil {
				bad = nok
			} else {
				bad = fb.Or(bad, nok)
			}
		}
	}
	if bad != nil {
		nbs := make([]int64, len(sizes))
		for d := range nbs {
			nbs[d] = numBlocks(r.ArrayShape[d], r.Block[d])
		}
		what := fmt.Sprintf("index map of %s", r)
		if m.Loc != (Loc{}) {
			what += " at " + m.Loc.String()
		}
		// The batch dims Vmap added are left out (never outside: their
		// block index is the batch's grid index).
		nb := min(r.batchDims, len(nbs))
		site := l.addSite(checkSite{what: what, kind: "block index", dims: nbs[nb:]})
		e.state[l.errSlot] = l.record(fb, e, bad, site, blocks[nb:])
	}
	return st, nil
}

// sameType reports whether lowered value v has IR type t.
func sameType(v *stablehlo.Value, t Type) bool {
	vt, ok := v.TensorType()
	return ok && vt.DType == t.DType && sameShape(vt.Dims, t.Shape)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func isConst(v *Value) bool { return v.Def != nil && v.Def.Name == "const" }

// foldInt computes a scalar integer add, sub, mul, max or min of two
// known values (knownInt: NumPrograms(0).Sub(1), say) at lowering time,
// when the result fits its type.
func (l *interp) foldInt(op *Op) (int64, bool) {
	if len(op.Operands) != 2 || len(op.Results) != 1 {
		return 0, false
	}
	t := op.Results[0].Type
	if len(t.Shape) != 0 || !t.DType.IsInt() || t.DType.IsUnsigned() {
		return 0, false
	}
	a, okA := l.knownInt(op.Operands[0])
	b, okB := l.knownInt(op.Operands[1])
	if op.Name == "mul" && (okA && a == 0 || okB && b == 0) {
		return 0, true
	}
	if !okA || !okB || a != int64(int32(a)) || b != int64(int32(b)) {
		return 0, false
	}
	var c int64
	switch op.Name {
	case "add":
		c = a + b
	case "sub":
		c = a - b
	case "mul":
		c = a * b
	case "max":
		c = max(a, b)
	case "min":
		c = min(a, b)
	default:
		return 0, false
	}
	bits := t.DType.Bits()
	if bits < 64 && (c < -(int64(1)<<(bits-1)) || c >= int64(1)<<(bits-1)) {
		return 0, false
	}
	return c, true
}

// known is what the lowering knows of a scalar IR value before the grid
// runs: an integer (i) or a boolean (b), when ok.
type known struct {
	i  int64
	b  bool
	ok bool
}

// knownInt returns the value of a scalar signed integer the lowering can
// compute: a constant, NumPrograms, the index along a grid axis of one
// step (ProgramID, or an index map's grid argument), and add, sub, mul,
// max, min of such values (foldInt; a product with a known 0 is 0).
func (l *interp) knownInt(v *Value) (int64, bool) {
	if k, seen := l.intMemo[v]; seen {
		return k.i, k.ok
	}
	var k known
	switch {
	case v.Def == nil:
		k.i, k.ok = l.knownArg[v]
	case v.Def.Name == "num_programs":
		k.i, k.ok = l.p.Grid[v.Def.Attrs.Axis], true
	case v.Def.Name == "program_id":
		k.ok = l.p.Grid[v.Def.Attrs.Axis] == 1
	case v.Def.Name == "const":
		k.i, k.ok = constInt(v)
	default:
		k.i, k.ok = l.foldInt(v.Def)
	}
	l.intMemo[v] = k
	return k.i, k.ok
}

// knownBool returns the value of a boolean the lowering can compute (of
// all its elements, for a block): a constant, a comparison of known signed
// integer scalars, broadcasts and reshapes, and not, and, or of known
// values (false and anything is false, true or anything is true). A When
// on a known condition is lowered inline or not at all.
func (l *interp) knownBool(v *Value) (bool, bool) {
	if k, seen := l.boolMemo[v]; seen {
		return k.b, k.ok
	}
	var k known
	if v.Def != nil && v.Type.DType.IsBool() {
		ops := v.Def.Operands
		switch v.Def.Name {
		case "const":
			k.b, k.ok = v.Def.Attrs.Value.(bool)
		case "cmp":
			k.b, k.ok = l.foldCmp(v.Def)
		case "broadcast_in_dim", "reshape":
			k.b, k.ok = l.knownBool(ops[0])
		case "not":
			b, ok := l.knownBool(ops[0])
			k.b, k.ok = !b, ok
		case "and", "or":
			a, okA := l.knownBool(ops[0])
			b, okB := l.knownBool(ops[1])
			// The value that decides alone: false for and, true for or.
			decides := v.Def.Name == "or"
			switch {
			case okA && okB:
				k.b, k.ok = a && b, true
				if decides {
					k.b = a || b
				}
			case okA && a == decides, okB && b == decides:
				k.b, k.ok = decides, true
			}
		}
	}
	l.boolMemo[v] = k
	return k.b, k.ok
}

// foldCmp compares two known signed integer scalars.
func (l *interp) foldCmp(op *Op) (bool, bool) {
	t := op.Operands[0].Type
	if len(t.Shape) != 0 || !t.DType.IsInt() || t.DType.IsUnsigned() {
		return false, false
	}
	a, okA := l.knownInt(op.Operands[0])
	b, okB := l.knownInt(op.Operands[1])
	if !okA || !okB {
		return false, false
	}
	switch op.Attrs.Dir {
	case "EQ", "NE", "LT", "LE", "GT", "GE":
		return compareInts(op.Attrs.Dir, a, b, false), true
	}
	return false, false
}

// constInt returns the value of an integer constant.
func constInt(v *Value) (int64, bool) {
	if !isConst(v) {
		return 0, false
	}
	c, ok := v.Def.Attrs.Value.(int64)
	return c, ok
}

func (l *interp) addSite(s checkSite) int {
	l.sites = append(l.sites, s)
	return len(l.sites) - 1
}

// record updates the check state: when bad holds and nothing failed yet,
// it becomes (site+1, step, idx...).
func (l *interp) record(fb *stablehlo.FuncBuilder, e *env, bad *stablehlo.Value, site int, idx []*stablehlo.Value) *stablehlo.Value {
	err := e.state[l.errSlot]
	parts := []*stablehlo.Value{fb.SplatOf(xla.Int32, float64(site+1), 1), fb.Reshape(e.step, 1)}
	for _, x := range idx {
		parts = append(parts, fb.Reshape(x, 1))
	}
	if n := l.errLen - len(parts); n > 0 {
		parts = append(parts, fb.SplatOf(xla.Int32, 0, int64(n)))
	}
	info := fb.Concatenate(0, parts...)
	first := fb.Slice(err, []int64{0}, []int64{1}, nil)
	clean := fb.Compare(fb.Reshape(first), fb.ScalarOf(xla.Int32, 0), stablehlo.CompareEQ, stablehlo.CompareAuto)
	return fb.Select(fb.And(bad, clean), info, err)
}

// region lowers the ops of r in order; an op computing what an earlier
// one already did reuses its values.
func (l *interp) region(fb *stablehlo.FuncBuilder, r *Region, e *env) error {
	for _, op := range r.Ops {
		key, pure := l.cseKey(op, e)
		if pure && l.isInvariant(op, e) {
			if err := l.hoist(op, e, key); err != nil {
				return err
			}
			continue
		}
		if pure && e.cse != nil {
			if vs := e.cse.get(key); vs != nil {
				for i, v := range op.Results {
					e.vals[v] = vs[i]
				}
				continue
			}
		}
		if err := l.op(fb, op, e); err != nil {
			return err
		}
		if pure && e.cse != nil {
			vs := make([]*stablehlo.Value, len(op.Results))
			for i, v := range op.Results {
				vs[i] = e.vals[v]
			}
			e.cse.m[key] = vs
		}
		if err := fb.Err(); err != nil {
			return l.builderErr(op, err)
		}
	}
	return nil
}

// isInvariant reports whether a pure op (see cseKey: no store, no
// regions) computes the same value at every grid step: it reads no ref and
// no grid index, and each of its operands was hoisted out of the grid loop.
func (l *interp) isInvariant(op *Op, e *env) bool {
	if l.outer == nil || op.Name == "load" || op.Name == "program_id" {
		return false
	}
	for _, v := range op.Operands {
		if !l.invariant[e.vals[v]] {
			return false
		}
	}
	return true
}

// hoist lowers the invariant op into l.outer, or reuses the values of an
// earlier op that computed the same (key is its cseKey).
func (l *interp) hoist(op *Op, e *env, key string) error {
	vs := l.hoisted.get(key)
	if vs == nil {
		if err := l.op(l.outer, op, e); err != nil {
			return err
		}
		if err := l.outer.Err(); err != nil {
			return l.builderErr(op, err)
		}
		for _, v := range op.Results {
			vs = append(vs, e.vals[v])
			l.invariant[e.vals[v]] = true
		}
		l.hoisted.m[key] = vs
	}
	for i, v := range op.Results {
		e.vals[v] = vs[i]
	}
	return nil
}

// builderErr is a StableHLO builder's error while lowering op.
func (l *interp) builderErr(op *Op, err error) error {
	return &Error{Kernel: l.p.Name, Op: op.label(), Loc: op.Loc, Msg: "interpret lowering: " + err.Error(), Err: err}
}

func (l *interp) opErr(op *Op, format string, args ...any) error {
	return &Error{Kernel: l.p.Name, Op: op.label(), Loc: op.Loc, Msg: fmt.Sprintf(format, args...)}
}

func hloDims(t Type) []int64 { return append([]int64{}, t.Shape...) }

func (l *interp) op(fb *stablehlo.FuncBuilder, op *Op, e *env) error {
	in := func(i int) *stablehlo.Value { return e.vals[op.Operands[i]] }
	set := func(v *stablehlo.Value) { e.vals[op.Results[0]] = v }
	var t Type
	if len(op.Results) > 0 {
		t = op.Results[0].Type
	}
	if c, ok := l.foldInt(op); ok {
		set(fb.ScalarOf(t.DType, float64(c)))
		return nil
	}
	if len(op.Results) == 1 && op.Name != "const" {
		if b, ok := l.knownBool(op.Results[0]); ok {
			set(fb.SplatOf(xla.Bool, boolFloat(b), hloDims(t)...))
			return nil
		}
	}
	switch op.Name {
	case "const":
		if isZeroConst(op.Attrs.Value) {
			defer func() { l.zero[e.vals[op.Results[0]]] = true }()
		}
		switch c := op.Attrs.Value.(type) {
		case float64:
			set(fb.SplatOf(t.DType, c, hloDims(t)...))
		case int64:
			if c == int64(float64(c)) && (c >= 0 || !t.DType.IsUnsigned()) {
				set(fb.SplatOf(t.DType, float64(c), hloDims(t)...))
			} else {
				set(fb.Convert(stablehlo.Splat(fb, c, hloDims(t)...), t.DType))
			}
		case bool:
			set(fb.SplatOf(t.DType, boolFloat(c), hloDims(t)...))
		default:
			return l.opErr(op, "bad constant %T", c)
		}
	case "iota":
		set(fb.Iota(stablehlo.Tensor(t.DType, hloDims(t)...), int64(op.Attrs.Dim)))
	case "program_id":
		set(e.grid[op.Attrs.Axis])
	case "num_programs":
		set(fb.ScalarOf(xla.Int32, float64(l.p.Grid[op.Attrs.Axis])))
	case "neg":
		set(fb.Negate(in(0)))
	case "abs":
		set(fb.Abs(in(0)))
	case "exp":
		set(fb.Exponential(in(0)))
	case "log":
		set(fb.Log(in(0)))
	case "tanh":
		set(fb.Tanh(in(0)))
	case "erf":
		set(chlo.Erf(fb, in(0))) // as JAX lowers lax.erf
	case "sqrt":
		set(fb.Sqrt(in(0)))
	case "rsqrt":
		set(fb.Rsqrt(in(0)))
	case "floor":
		set(fb.Floor(in(0)))
	case "ceil":
		set(fb.Ceil(in(0)))
	case "sin":
		set(fb.Sine(in(0)))
	case "cos":
		set(fb.Cosine(in(0)))
	case "logistic":
		set(fb.Logistic(in(0)))
	case "log1p":
		set(fb.LogPlusOne(in(0)))
	case "expm1":
		set(fb.ExponentialMinusOne(in(0)))
	case "tan":
		set(fb.Tan(in(0)))
	case "round":
		set(fb.RoundNearestEven(in(0)))
	case "exp2":
		set(fb.Power(fb.SplatOf(t.DType, 2, hloDims(t)...), in(0)))
	case "log2":
		set(log2Exact(fb, in(0), t.DType, hloDims(t)))
	case "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf_inv", "erfc", "lgamma":
		set(chloUnary[op.Name](fb, in(0))) // as JAX lowers them
	case "cbrt":
		set(fb.Cbrt(in(0)))
	case "is_finite":
		set(fb.IsFinite(in(0)))
	case "popcnt":
		set(fb.Popcnt(in(0)))
	case "clz":
		set(fb.CountLeadingZeros(in(0)))
	case "atan2":
		set(fb.Atan2(in(0), in(1)))
	case "sign":
		if t.DType.IsUnsigned() { // stablehlo.sign takes signed types only
			x := in(0)
			ne := fb.Compare(x, fb.SplatOf(t.DType, 0, hloDims(t)...), stablehlo.CompareNE, stablehlo.CompareAuto)
			set(fb.Convert(ne, t.DType))
		} else {
			set(fb.Sign(in(0)))
		}
	case "bitcast":
		set(fb.BitcastConvert(in(0), t.DType))
	case "not":
		set(fb.Not(in(0)))
	case "add":
		z0, ok0 := l.zeroIf[in(0)]
		z1, ok1 := l.zeroIf[in(1)]
		// Skipping the add at the steps that zeroed one side is exact
		// when the other is never -0 (+0 + -0 is +0, as a GPU computes
		// it): an integer, or a dot's sum, which starts from +0.
		big := t.Size() >= minZeroIfAdd
		exact := func(i int) bool {
			return t.DType.IsInt() || op.Operands[i].Def != nil && op.Operands[i].Def.Name == "dot"
		}
		// 0 + x is x (as XLA simplifies it: -0 stays -0) where the
		// kernel's own code shows the zero (as the Triton lowering sees
		// it), or where x is never -0; a zero known only here (stored,
		// then loaded; a select on a known condition) adds as IEEE does,
		// +0 + -0 = +0, as on a GPU (found in review).
		switch {
		case l.zero[in(0)] && sameType(in(1), t) && (zeroValue(op.Operands[0]) || exact(1)):
			set(in(1))
		case l.zero[in(1)] && sameType(in(0), t) && (zeroValue(op.Operands[1]) || exact(0)):
			set(in(0))
		case ok0 && big && sameType(in(1), t) && exact(1):
			set(addZeroIf(fb, z0, in(1)))
		case ok1 && big && sameType(in(0), t) && exact(0):
			set(addZeroIf(fb, z1, in(0)))
		default:
			set(fb.Add(in(0), in(1)))
		}
	case "sub":
		if l.zero[in(1)] && sameType(in(0), t) {
			set(in(0))
			break
		}
		set(fb.Subtract(in(0), in(1)))
	case "mul":
		set(fb.Multiply(in(0), in(1)))
	case "div":
		set(fb.Divide(in(0), in(1)))
	case "rem":
		set(fb.Remainder(in(0), in(1)))
	case "max":
		set(fb.Maximum(in(0), in(1)))
	case "min":
		set(fb.Minimum(in(0), in(1)))
	case "pow":
		set(fb.Power(in(0), in(1)))
	case "and", "or":
		// true and x, false or x: x.
		neutral := op.Name == "and"
		if b, ok := l.knownBool(op.Operands[0]); ok && b == neutral {
			set(in(1))
			break
		}
		if b, ok := l.knownBool(op.Operands[1]); ok && b == neutral {
			set(in(0))
			break
		}
		if neutral {
			set(fb.And(in(0), in(1)))
		} else {
			set(fb.Or(in(0), in(1)))
		}
	case "xor":
		set(fb.Xor(in(0), in(1)))
	case "shl":
		set(fb.ShiftLeft(in(0), in(1)))
	case "shr":
		if t.DType.IsUnsigned() {
			set(fb.ShiftRightLogical(in(0), in(1)))
		} else {
			set(fb.ShiftRightArithmetic(in(0), in(1)))
		}
	case "cmp":
		set(fb.Compare(in(0), in(1), stablehlo.ComparisonDirection(op.Attrs.Dir), stablehlo.CompareAuto))
	case "select":
		if b, ok := l.knownBool(op.Operands[0]); ok {
			set(map[bool]*stablehlo.Value{true: in(1), false: in(2)}[b])
			break
		}
		set(fb.Select(in(0), in(1), in(2)))
	case "convert":
		if op.Operands[0].Type.DType == t.DType {
			set(in(0)) // Astype to its own type: nothing to copy
			break
		}
		set(fb.Convert(in(0), t.DType))
		l.zero[e.vals[op.Results[0]]] = l.zero[in(0)]
	case "broadcast_in_dim":
		set(fb.BroadcastInDim(in(0), hloDims(t), op.Attrs.Dims))
		l.zero[e.vals[op.Results[0]]] = l.zero[in(0)]
	case "reshape":
		set(fb.Reshape(in(0), hloDims(t)...))
		l.zero[e.vals[op.Results[0]]] = l.zero[in(0)]
	case "transpose":
		set(fb.Transpose(in(0), op.Attrs.Perm...))
	case "reduce":
		x := in(0)
		if len(op.Attrs.Axes) == 0 {
			set(x)
			break
		}
		switch op.Attrs.Kind {
		case "sum":
			set(fb.ReduceSum(x, op.Attrs.Axes...))
		case "prod":
			set(fb.ReduceProd(x, op.Attrs.Axes...))
		case "max":
			set(fb.ReduceMax(x, op.Attrs.Axes...))
		case "min":
			set(fb.ReduceMin(x, op.Attrs.Axes...))
		default:
			return l.opErr(op, "unknown reduction %q", op.Attrs.Kind)
		}
	case "assoc_scan":
		return l.assocScan(fb, op, e)
	case "gather":
		if t.Size() == 0 { // a gather of nothing (another dim is empty)
			set(fb.Zero(stablehlo.Tensor(t.DType, t.Shape...)))
			break
		}
		// Per result element, its coordinates, the axis's from idx.
		idx := make([]*stablehlo.Value, len(t.Shape))
		for d := range idx {
			if d == op.Attrs.Axis {
				idx[d] = in(1)
			} else {
				idx[d] = fb.Iota(stablehlo.Tensor(xla.Int32, t.Shape...), int64(d))
			}
		}
		set(gatherElements(fb, in(0), idx, t.Shape))
	case "slice":
		shape := op.Operands[0].Type.Shape
		starts, limits, strides := make([]int64, len(shape)), slices.Clone(shape), make([]int64, len(shape))
		for d := range strides {
			strides[d] = 1
		}
		starts[op.Attrs.Axis] = op.Attrs.Start
		limits[op.Attrs.Axis] = op.Attrs.Start + t.Shape[op.Attrs.Axis]
		set(fb.Slice(in(0), starts, limits, strides))
	case "concatenate":
		parts := make([]*stablehlo.Value, len(op.Operands))
		for i := range parts {
			parts[i] = in(i)
		}
		set(fb.Concatenate(int64(op.Attrs.Axis), parts...))
	case "scan":
		v, err := l.scan(fb, op, in(0))
		if err != nil {
			return err
		}
		set(v)
	case "dot":
		// 2-D, or 3-D with a leading batch dim (b): the last two
		// dims are the matrices.
		b0 := int64(op.Operands[0].Type.Rank() - 2)
		dn := stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{b0 + 1}, RhsContractingDims: []int64{b0}}
		if b0 > 0 {
			dn.LhsBatchingDims, dn.RhsBatchingDims = []int64{0}, []int64{0}
		}
		a, b := in(0), in(1)
		if op.Attrs.TransA {
			dn.LhsContractingDims = []int64{b0}
		}
		if op.Attrs.TransB {
			dn.RhsContractingDims = []int64{b0 + 1}
		}
		if at, _ := a.TensorType(); at.DType.IsInt() && at.DType.Bits() <= 16 && t.DType.IsFloat() {
			// Narrow integers into a float: summed exactly (in i64) and
			// rounded once, as the Triton lowering's integer accumulator
			// does (a float sum rounds at every add past 2^24).
			a, b = fb.Convert(a, xla.Int64), fb.Convert(b, xla.Int64)
			set(fb.Convert(fb.DotGeneralWith(a, b, dn, stablehlo.DotConfig{ResultDType: xla.Int64}), t.DType))
			break
		}
		if at, _ := a.TensorType(); at.DType != t.DType && (!(at.DType.IsFloat() && t.DType.IsFloat()) || t.DType == xla.Float64) {
			// Integer results take integer operands; an f64 result takes
			// operands widened to f64 (exactly) so that it accumulates in
			// f64 everywhere (XLA's GPU backend summed a bf16 dot with an
			// f64 result in f32).
			a, b = fb.Convert(a, t.DType), fb.Convert(b, t.DType)
		}
		cfg := stablehlo.DotConfig{ResultDType: t.DType}
		if at, _ := a.TensorType(); at.DType == xla.Float32 {
			// f32 products in full precision, as the Triton lowering's
			// IEEE dots: XLA's GPU backend takes DEFAULT as leave to
			// round f32 operands to TF32 (seen on an H100, errors of
			// 1e-4 in a 64-term sum).
			cfg.Precision = []stablehlo.Precision{stablehlo.PrecisionHighest, stablehlo.PrecisionHighest}
		}
		set(fb.DotGeneralWith(a, b, dn, cfg))
	case "load":
		v, err := l.load(fb, op, e)
		if err != nil {
			return err
		}
		set(v)
	case "store":
		return l.store(fb, op, e)
	case "atomic":
		v, err := l.atomic(fb, op, e)
		if err != nil {
			return err
		}
		set(v)
	case "debug_print":
		vals := make([]*stablehlo.Value, len(op.Operands))
		for i, v := range op.Operands {
			vals[i] = e.vals[v]
		}
		// Ordered, under effects.Print's effect: the lines of successive
		// calls (and the program's own prints) come in program order
		// (unordered, successive calls' callbacks ran at once: found
		// in review).
		if err := effects.Fprint(fb, debugWriter{l.spec.CompilerParams.DebugOutput}, effects.PrintEffect, op.Attrs.Format, vals...); err != nil {
			return l.opErr(op, "%v", err)
		}
	case "when":
		return l.when(fb, op, e)
	case "for":
		return l.forLoop(fb, op, e)
	case "while":
		return l.while(fb, op, e)
	default:
		return l.opErr(op, "no interpret lowering")
	}
	return nil
}

// refSlot is the state slot of a load/store's ref.
func (l *interp) refSlot(op *Op, e *env) (int, error) {
	s, ok := e.refOf[op.Operands[0]]
	if !ok {
		return 0, l.opErr(op, "ref is not an argument of this kernel")
	}
	return s, nil
}

// access describes a load/store's indices in StableHLO terms.
type access struct {
	starts   []*stablehlo.Value // per ref dim (i32 scalars)
	sizes    []int64            // per ref dim
	dynamic  bool
	isStatic bool
	zero     []bool // per ref dim: the start is the constant 0
}

func (l *interp) sliceAccess(fb *stablehlo.FuncBuilder, op *Op, e *env) access {
	ix := op.Attrs.Indexer
	var a access
	a.isStatic = true
	for _, d := range ix.Dims {
		if d.Operand >= 0 {
			a.starts = append(a.starts, e.vals[op.Operands[1+d.Operand]])
			a.dynamic = true
			a.isStatic = false
		} else {
			a.starts = append(a.starts, fb.ScalarOf(xla.Int32, float64(d.Start)))
		}
		a.zero = append(a.zero, d.Operand < 0 && d.Start == 0)
		a.sizes = append(a.sizes, d.Size)
	}
	return a
}

// elementIndices returns, per ref dim, an i32 array of the indexed shape
// holding the index of each element.
func (l *interp) elementIndices(fb *stablehlo.FuncBuilder, op *Op, e *env) []*stablehlo.Value {
	ix := op.Attrs.Indexer
	shape := ix.Shape
	out := make([]*stablehlo.Value, len(ix.Dims))
	// result dim of each slice dim
	pos := 0
	na := len(ix.ArrayShape)
	for d, di := range ix.Dims {
		if pos == ix.ArrayPos && ix.HasArrays() && di.Kind == DimSlice {
			pos += na
		}
		var start *stablehlo.Value
		if di.Operand >= 0 && di.Kind != DimArray {
			start = e.vals[op.Operands[1+di.Operand]]
		} else if di.Kind != DimArray {
			start = fb.ScalarOf(xla.Int32, float64(di.Start))
		}
		switch di.Kind {
		case DimSlice:
			io := fb.Iota(stablehlo.Tensor(xla.Int32, shape...), int64(pos))
			out[d] = fb.Add(io, fb.BroadcastInDim(start, shape, nil))
			pos++
		case DimPoint:
			out[d] = fb.BroadcastInDim(start, shape, nil)
		case DimArray:
			arr := e.vals[op.Operands[1+di.Operand]]
			bd := make([]int64, na)
			for j := range bd {
				bd[j] = int64(ix.ArrayPos + j)
			}
			out[d] = fb.BroadcastInDim(arr, shape, bd)
		}
	}
	return out
}

// boundsOK is the elementwise in-bounds test of element indices.
func boundsOK(fb *stablehlo.FuncBuilder, idx []*stablehlo.Value, dims []int64, shape []int64) *stablehlo.Value {
	var ok *stablehlo.Value
	for d, x := range idx {
		c := fb.And(fb.Compare(x, fb.SplatOf(xla.Int32, 0, shape...), stablehlo.CompareGE, stablehlo.CompareAuto),
			fb.Compare(x, fb.SplatOf(xla.Int32, float64(dims[d]), shape...), stablehlo.CompareLT, stablehlo.CompareAuto))
		if ok == nil {
			ok = c
		} else {
			ok = fb.And(ok, c)
		}
	}
	if ok == nil {
		ok = fb.SplatOf(xla.Bool, 1, shape...)
	}
	return ok
}

func (l *interp) siteName(op *Op, verb string) string {
	ref := op.Operands[0].Ref
	return fmt.Sprintf("%s %s at %s", verb, ref, op.Loc)
}

// checkSlice records an error when a dynamic slice leaves the ref.
func (l *interp) checkSlice(fb *stablehlo.FuncBuilder, op *Op, e *env, a access, dims []int64, verb string) {
	if !l.checks || !a.dynamic {
		return
	}
	var bad *stablehlo.Value
	for d, s := range a.starts {
		ok := fb.And(fb.Compare(s, fb.ScalarOf(xla.Int32, 0), stablehlo.CompareGE, stablehlo.CompareAuto),
			fb.Compare(s, fb.ScalarOf(xla.Int32, float64(dims[d]-a.sizes[d])), stablehlo.CompareLE, stablehlo.CompareAuto))
		if bad == nil {
			bad = fb.Not(ok)
		} else {
			bad = fb.Or(bad, fb.Not(ok))
		}
	}
	nb := reportedFrom(op)
	sizes, starts := a.sizes[nb:], a.starts[nb:]
	kind := fmt.Sprintf("slice of size %v starting at", sizes)
	if !slices.ContainsFunc(sizes, func(n int64) bool { return n != 1 }) {
		kind = "element index" // dynamic integer indices only
	}
	site := l.addSite(checkSite{what: l.siteName(op, verb), kind: kind, dims: dims[nb:]})
	e.state[l.errSlot] = l.record(fb, e, bad, site, starts)
}

// fits reports whether a slice of sizes fits in a ref of dims at some
// start.
func fits(sizes, dims []int64) bool {
	for d, n := range sizes {
		if n > dims[d] {
			return false
		}
	}
	return true
}

// reportedFrom is the first dim of op's ref that its bounds errors show:
// those after the batch dims of a prefetch array Vmap batched (indexed by
// the batch's program ids, never out of bounds), which the ref's name
// leaves out too ("i32[4] element of i32[3,4]").
func reportedFrom(op *Op) int {
	if r := op.Operands[0].Ref; r != nil {
		return len(r.batchAxes)
	}
	return 0
}

// checkElements records an error when an (unmasked) element index leaves
// the ref; the first bad element's index is reported.
func (l *interp) checkElements(fb *stablehlo.FuncBuilder, op *Op, e *env, idx []*stablehlo.Value, ok, mask *stablehlo.Value, dims []int64, verb string) {
	if !l.checks {
		return
	}
	shape := op.Attrs.Indexer.Shape
	bad := fb.Not(ok)
	if mask != nil {
		bad = fb.And(bad, mask)
	}
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	if n == 0 {
		return // no element, nothing to check
	}
	flatBad := fb.Reshape(bad, n)
	pos := fb.Select(flatBad, fb.Iota(stablehlo.Tensor(xla.Int32, n), 0), fb.SplatOf(xla.Int32, float64(n), n))
	first := fb.ReduceMin(pos, 0)
	anyBad := fb.Compare(first, fb.ScalarOf(xla.Int32, float64(n)), stablehlo.CompareLT, stablehlo.CompareAuto)
	at := fb.Minimum(first, fb.ScalarOf(xla.Int32, float64(n-1)))
	vals := make([]*stablehlo.Value, len(idx))
	for d, x := range idx {
		vals[d] = fb.Reshape(fb.DynamicSlice(fb.Reshape(x, n), []*stablehlo.Value{at}, []int64{1}))
	}
	nb := reportedFrom(op)
	site := l.addSite(checkSite{what: l.siteName(op, verb), kind: "element index", dims: dims[nb:]})
	e.state[l.errSlot] = l.record(fb, e, anyBad, site, vals[nb:])
}

func (l *interp) load(fb *stablehlo.FuncBuilder, op *Op, e *env) (*stablehlo.Value, error) {
	slot, err := l.refSlot(op, e)
	if err != nil {
		return nil, err
	}
	ref := e.state[slot]
	ix := op.Attrs.Indexer
	dims := op.Operands[0].Type.Shape
	t := op.Results[0].Type
	lz, isLazy := e.lazy[slot]
	if isLazy && (ix.HasArrays() || ix.HasMask) {
		// Gathers read the block itself.
		ref = lz.block(fb)
	}
	if !ix.HasArrays() && !ix.HasMask {
		a := l.sliceAccess(fb, op, e)
		l.checkSlice(fb, op, e, a, dims, "load from")
		if !fits(a.sizes, dims) {
			// Larger than the ref (an element of an empty dim): out of
			// bounds wherever it runs, which the check reports.
			return uninit(fb, t.DType, hloDims(t)), nil
		}
		if isLazy {
			return lz.load(fb, a, hloDims(t)), nil
		}
		var v *stablehlo.Value
		full := a.isStatic && sameShape(a.sizes, dims)
		switch {
		case full:
			v = ref
		case a.isStatic:
			start := make([]int64, len(dims))
			limit := make([]int64, len(dims))
			for d, di := range ix.Dims {
				start[d], limit[d] = di.Start, di.Start+di.Size
			}
			v = fb.Slice(ref, start, limit, nil)
		default:
			v = fb.DynamicSlice(ref, a.starts, a.sizes)
		}
		if !sameShape(a.sizes, t.Shape) {
			v = fb.Reshape(v, hloDims(t)...)
		}
		return l.maskPadding(fb, op, e, slot, v, nil), nil
	}
	idx := l.elementIndices(fb, op, e)
	ok := boundsOK(fb, idx, dims, t.Shape)
	var mask *stablehlo.Value
	if ix.HasMask {
		mask = e.vals[op.Operands[1+ix.NumOperands]]
	}
	l.checkElements(fb, op, e, idx, ok, mask, dims, "load from")
	var v *stablehlo.Value
	if (Type{Shape: dims}).Size() == 0 {
		// Nothing to gather from: every element is masked off (else out
		// of bounds, which the check reports).
		v = uninit(fb, t.DType, hloDims(t))
	} else {
		v = l.maskPadding(fb, op, e, slot, gatherElements(fb, ref, idx, t.Shape), idx)
	}
	if ix.HasMask {
		other := e.vals[op.Operands[2+ix.NumOperands]]
		v = fb.Select(mask, v, other)
	}
	return v, nil
}

// block slices the whole block out of the operand.
func (lz lazyBlock) block(fb *stablehlo.FuncBuilder) *stablehlo.Value {
	sizes := blockSizes(lz.info)
	v := fb.DynamicSlice(lz.arr, lz.starts, sizes)
	if !sameShape(sizes, lz.info.BlockShape) {
		v = fb.Reshape(v, lz.info.BlockShape...)
	}
	return v
}

// load slices a (the access in block coordinates, over the kernel's view
// without squeezed dims) out of the operand: one dynamic_slice at the
// block start plus the access start.
func (lz lazyBlock) load(fb *stablehlo.FuncBuilder, a access, shape []int64) *stablehlo.Value {
	starts := make([]*stablehlo.Value, len(lz.info.Block))
	sizes := make([]int64, len(lz.info.Block))
	k := 0
	for d, b := range lz.info.Block {
		if b == Squeezed {
			starts[d], sizes[d] = lz.starts[d], 1
			continue
		}
		starts[d], sizes[d] = lz.starts[d], a.sizes[k]
		if !a.zero[k] {
			starts[d] = fb.Add(lz.starts[d], a.starts[k])
		}
		k++
	}
	v := fb.DynamicSlice(lz.arr, starts, sizes)
	if !sameShape(sizes, shape) {
		v = fb.Reshape(v, shape...)
	}
	return v
}

// padLimits is, per ref dim of blocked ref r whose block starts at st
// (element starts per array dim), the number of the block's elements
// inside the array when the dim has edge blocks, else nil; nil when no
// dim has.
func padLimits(fb *stablehlo.FuncBuilder, r RefInfo, st []*stablehlo.Value) []*stablehlo.Value {
	var lim []*stablehlo.Value
	padded := false
	for d, b := range r.Block {
		if b == Squeezed {
			continue
		}
		var x *stablehlo.Value
		if b > 0 && r.ArrayShape[d]%b != 0 { // a zero-size block has no padding
			x = fb.Subtract(fb.ScalarOf(xla.Int32, float64(r.ArrayShape[d])), st[d])
			padded = true
		}
		lim = append(lim, x)
	}
	if !padded {
		return nil
	}
	return lim
}

// maskPadding replaces the elements of v, loaded by op from the ref in
// slot, that lie in the padding of an output's edge block with the
// padding value (idx: the element indices, nil to compute them).
func (l *interp) maskPadding(fb *stablehlo.FuncBuilder, op *Op, e *env, slot int, v *stablehlo.Value, idx []*stablehlo.Value) *stablehlo.Value {
	lim := e.padLimit[slot]
	if lim == nil {
		return v
	}
	if idx == nil {
		idx = l.elementIndices(fb, op, e)
	}
	shape := op.Attrs.Indexer.Shape
	var in *stablehlo.Value
	for k, x := range lim {
		if x == nil {
			continue
		}
		c := fb.Compare(idx[k], fb.BroadcastInDim(x, shape, nil), stablehlo.CompareLT, stablehlo.CompareAuto)
		if in == nil {
			in = c
		} else {
			in = fb.And(in, c)
		}
	}
	return fb.Select(in, v, uninit(fb, op.Results[0].Type.DType, shape))
}

// loadedRefs is the set of ref arguments a region (or a region nested in
// it) loads from (atomic updates read too).
func loadedRefs(r *Region) map[*Value]bool { return refsOf(r, "load", "atomic") }

// storedRefs is the set of ref arguments a region (or a region nested in
// it) stores to (atomic updates write too).
func storedRefs(r *Region) map[*Value]bool { return refsOf(r, "store", "atomic") }

// refsOf is the set of refs (first operands) of the ops named names in r
// and the regions nested in it.
func refsOf(r *Region, names ...string) map[*Value]bool {
	set := map[*Value]bool{}
	eachOp(r, func(op *Op) {
		if slices.Contains(names, op.Name) {
			set[op.Operands[0]] = true
		}
	})
	return set
}

// stackIndices makes the [shape..., rank] index tensor of gather/scatter.
func stackIndices(fb *stablehlo.FuncBuilder, idx []*stablehlo.Value, shape []int64) *stablehlo.Value {
	ext := append(append([]int64{}, shape...), 1)
	parts := make([]*stablehlo.Value, len(idx))
	for d, x := range idx {
		parts[d] = fb.Reshape(x, ext...)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return fb.Concatenate(int64(len(shape)), parts...)
}

func gatherElements(fb *stablehlo.FuncBuilder, ref *stablehlo.Value, idx []*stablehlo.Value, shape []int64) *stablehlo.Value {
	rank := len(idx)
	all := make([]int64, rank)
	ones := make([]int64, rank)
	for d := range all {
		all[d], ones[d] = int64(d), 1
	}
	if rank == 0 {
		return fb.BroadcastInDim(ref, shape, nil)
	}
	dn := stablehlo.GatherDimensionNumbers{CollapsedSliceDims: all, StartIndexMap: all, IndexVectorDim: int64(len(shape))}
	return fb.Gather(ref, stackIndices(fb, idx, shape), dn, ones, false)
}

func (l *interp) store(fb *stablehlo.FuncBuilder, op *Op, e *env) error {
	slot, err := l.refSlot(op, e)
	if err != nil {
		return err
	}
	ref := e.state[slot]
	ix := op.Attrs.Indexer
	dims := op.Operands[0].Type.Shape
	val := e.vals[op.Operands[1+ix.NumOperands]]
	if d, ok := l.dirtySlot[slot]; ok {
		// Stored since entered; for zeroSkip, differs from zeros (unless
		// all of it is stored as zeros, below).
		e.state[d] = fb.ScalarOf(xla.Bool, 1)
	}
	if !ix.HasArrays() && !ix.HasMask {
		a := l.sliceAccess(fb, op, e)
		l.checkSlice(fb, op, e, a, dims, "store to")
		if !fits(a.sizes, dims) {
			return nil // out of bounds wherever it runs (see load)
		}
		if a.isStatic && sameShape(a.sizes, dims) {
			zero := l.zero[val]
			if !sameShape(ix.Shape, dims) {
				val = fb.Reshape(val, dims...)
			}
			if l.zeroSkip[slot] && zero {
				e.state[l.dirtySlot[slot]] = fb.ScalarOf(xla.Bool, 0)
			}
			e.state[slot] = val
			return nil
		}
		if !sameShape(ix.Shape, a.sizes) {
			val = fb.Reshape(val, a.sizes...)
		}
		e.state[slot] = fb.DynamicUpdateSlice(ref, val, a.starts)
		return nil
	}
	shape := ix.Shape
	idx := l.elementIndices(fb, op, e)
	ok := boundsOK(fb, idx, dims, shape)
	var mask *stablehlo.Value
	if ix.HasMask {
		mask = e.vals[op.Operands[2+ix.NumOperands]]
	}
	l.checkElements(fb, op, e, idx, ok, mask, dims, "store to")
	if (Type{Shape: dims}).Size() == 0 || (Type{Shape: shape}).Size() == 0 {
		return nil // nowhere to store, or nothing
	}
	if len(dims) == 0 {
		// A scalar ref: only a masked store of a scalar gets here.
		e.state[slot] = fb.Select(mask, fb.Reshape(val), ref)
		return nil
	}
	keep := ok
	if mask != nil {
		keep = fb.And(ok, mask)
	}
	e.state[slot] = scatterElements(fb, ref, idx, keep, val, dims, shape, nil)
	return nil
}

// scatterElements is ref (of dims) with val's elements (of the indexed
// shape) written at element indices idx where keep holds, each combined
// with the element there by combine (nil: replaced). Elements not kept
// are sent outside the ref, where scatter drops them.
func scatterElements(fb *stablehlo.FuncBuilder, ref *stablehlo.Value, idx []*stablehlo.Value, keep, val *stablehlo.Value, dims, shape []int64,
	combine func(rb *stablehlo.FuncBuilder, old, v *stablehlo.Value) *stablehlo.Value) *stablehlo.Value {
	idx = slices.Clone(idx)
	idx[0] = fb.Select(keep, idx[0], fb.SplatOf(xla.Int32, float64(dims[0]), shape...))
	all := make([]int64, len(dims))
	for d := range all {
		all[d] = int64(d)
	}
	dn := stablehlo.ScatterDimensionNumbers{InsertedWindowDims: all, ScatterDimsToOperandDims: all, IndexVectorDim: int64(len(shape))}
	return fb.Scatter([]*stablehlo.Value{ref}, stackIndices(fb, idx, shape), []*stablehlo.Value{val}, dn, false, false,
		func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) []*stablehlo.Value {
			if combine == nil {
				return args[1:]
			}
			return []*stablehlo.Value{combine(rb, args[0], args[1])}
		})[0]
}

// atomic lowers an atomic update: the old elements are gathered (as a
// masked load's), and a scatter whose combiner is the update writes every
// element the mask keeps, repeated indices each adding their update.
func (l *interp) atomic(fb *stablehlo.FuncBuilder, op *Op, e *env) (*stablehlo.Value, error) {
	slot, err := l.refSlot(op, e)
	if err != nil {
		return nil, err
	}
	ref := e.state[slot]
	ix := op.Attrs.Indexer
	dims := op.Operands[0].Type.Shape
	t := op.Results[0].Type
	val := e.vals[op.Operands[1+ix.NumOperands]]
	var mask *stablehlo.Value
	if ix.HasMask {
		mask = e.vals[op.Operands[2+ix.NumOperands]]
	}
	if d, ok := l.dirtySlot[slot]; ok {
		e.state[d] = fb.ScalarOf(xla.Bool, 1)
	}
	combine := func(rb *stablehlo.FuncBuilder, old, v *stablehlo.Value) *stablehlo.Value {
		switch op.Attrs.Kind {
		case "add":
			return rb.Add(old, v)
		case "max":
			return rb.Maximum(old, v)
		case "min":
			return rb.Minimum(old, v)
		case "and":
			return rb.And(old, v)
		case "or":
			return rb.Or(old, v)
		case "xor":
			return rb.Xor(old, v)
		}
		return v // xchg
	}
	var cmp *stablehlo.Value
	if op.Attrs.Kind == "cas" {
		cmp = e.vals[op.Operands[len(op.Operands)-1]]
	}
	zero := fb.SplatOf(t.DType, 0, t.Shape...)
	if len(dims) == 0 {
		// A scalar ref: one element, updated unless masked off.
		old := fb.Reshape(ref)
		next := combine(fb, old, fb.Reshape(val))
		if cmp != nil {
			next = fb.Select(bitsEqual(fb, old, fb.Reshape(cmp)), next, old)
		}
		if mask != nil {
			next = fb.Select(fb.Reshape(mask), next, old)
		}
		e.state[slot] = next
		old = fb.Reshape(old, t.Shape...)
		if mask != nil {
			old = fb.Select(mask, old, zero)
		}
		return old, nil
	}
	idx := l.elementIndices(fb, op, e)
	ok := boundsOK(fb, idx, dims, t.Shape)
	l.checkElements(fb, op, e, idx, ok, mask, dims, "atomic "+op.Attrs.Kind+" on")
	if (Type{Shape: dims}).Size() == 0 || t.Size() == 0 {
		return zero, nil // nothing to update
	}
	keep := ok
	if mask != nil {
		keep = fb.And(ok, mask)
	}
	if cmp != nil {
		next, old := casLanes(fb, ref, idx, keep, cmp, val, t)
		old = l.maskPadding(fb, op, e, slot, old, idx)
		if mask != nil {
			old = fb.Select(mask, old, zero)
		}
		e.state[slot] = next
		return old, nil
	}
	old := gatherElements(fb, ref, idx, t.Shape)
	if n := t.Size(); ix.HasArrays() && n > 1 && l.usesOf()[op.Results[0]] {
		if n > maxSequencedLanes {
			return nil, l.opErr(op, "interpret mode sequences the repeated indices of an update whose old values are used "+
				"over at most %d lanes, and this one has %d: split it into smaller updates", maxSequencedLanes, n)
		}
		old = earlierRepeats(fb, op.Attrs.Kind, idx, keep, val, old, dims, t, combine)
	}
	old = l.maskPadding(fb, op, e, slot, old, idx) // lanes in an edge block's padding read the pad value
	if mask != nil {
		old = fb.Select(mask, old, zero)
	}
	e.state[slot] = scatterElements(fb, ref, idx, keep, val, dims, t.Shape, combine)
	return old, nil
}

// casLanes is a compare-and-swap of the elements of ref at idx by the
// lanes keep marks, one lane after another in row-major order (a
// stablehlo.while over them): a lane whose element has cmp's bits writes
// its value, and sees what the lanes before it left. It returns the ref
// after the update and each lane's old value (of the lanes keep drops,
// the value at their clamped index, masked by the caller).
func casLanes(fb *stablehlo.FuncBuilder, ref *stablehlo.Value, idx []*stablehlo.Value, keep, cmp, val *stablehlo.Value, t Type) (next, old *stablehlo.Value) {
	n := t.Size()
	flat := func(x *stablehlo.Value) *stablehlo.Value { return fb.Reshape(x, n) }
	flatIdx := make([]*stablehlo.Value, len(idx))
	for d, x := range idx {
		flatIdx[d] = flat(x)
	}
	keep, cmp, val = flat(keep), flat(cmp), flat(val)
	ones := make([]int64, len(idx))
	for d := range ones {
		ones[d] = 1
	}
	init := []*stablehlo.Value{fb.ScalarOf(xla.Int32, 0), ref, fb.SplatOf(t.DType, 0, n)}
	res := fb.While(init, func(b *stablehlo.FuncBuilder, a []*stablehlo.Value) *stablehlo.Value {
		return b.Compare(a[0], b.ScalarOf(xla.Int32, float64(n)), stablehlo.CompareLT, stablehlo.CompareAuto)
	}, func(b *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
		i, r, olds := a[0], a[1], a[2]
		lane := func(x *stablehlo.Value) *stablehlo.Value {
			return b.Reshape(b.DynamicSlice(x, []*stablehlo.Value{i}, []int64{1}))
		}
		pos := make([]*stablehlo.Value, len(flatIdx))
		for d, x := range flatIdx {
			pos[d] = lane(x)
		}
		cur := b.Reshape(b.DynamicSlice(r, pos, ones))
		swap := b.And(lane(keep), bitsEqual(b, cur, lane(cmp)))
		put := b.Select(swap, lane(val), cur)
		r = b.DynamicUpdateSlice(r, b.Reshape(put, ones...), pos)
		olds = b.DynamicUpdateSlice(olds, b.Reshape(cur, 1), []*stablehlo.Value{i})
		return []*stablehlo.Value{b.Add(i, b.ScalarOf(xla.Int32, 1)), r, olds}
	})
	return res[1], fb.Reshape(res[2], t.Shape...)
}

// bitsEqual is x == y for integers and, for floats, the equality of their
// bits (a compare-and-swap's: -0 is not +0, a NaN equals its own bits).
func bitsEqual(fb *stablehlo.FuncBuilder, x, y *stablehlo.Value) *stablehlo.Value {
	if t, ok := x.TensorType(); ok && t.DType.IsFloat() {
		ib := xla.Int32
		if t.DType.Bits() == 64 {
			ib = xla.Int64
		}
		x, y = fb.BitcastConvert(x, ib), fb.BitcastConvert(y, ib)
	}
	return fb.Compare(x, y, stablehlo.CompareEQ, stablehlo.CompareAuto)
}

// maxSequencedLanes bounds the lanes of an atomic update whose repeated
// indices earlierRepeats sequences (it compares every pair of lanes).
const maxSequencedLanes = 4096

// earlierRepeats is old, the values an atomic update of kind returns, with
// what the update's own earlier lanes (row-major) that reach the same
// element did to it before: lanes with repeated indices then see the
// element as if they updated it one after another, as the threads of a
// GPU program do in some order (the tickets of AtomicAdd(count, [e], 1)
// over repeated e: 0, 1, 2 ... for the lanes of one e, where every lane
// saw the element before the update). keep marks the lanes that update;
// idx are their element indices into a ref of dims.
func earlierRepeats(fb *stablehlo.FuncBuilder, kind string, idx []*stablehlo.Value, keep, val, old *stablehlo.Value, dims []int64, t Type,
	combine func(rb *stablehlo.FuncBuilder, old, v *stablehlo.Value) *stablehlo.Value) *stablehlo.Value {
	n := t.Size()
	flat := func(x *stablehlo.Value) *stablehlo.Value { return fb.Reshape(x, n) }
	var lin *stablehlo.Value // each lane's element, row-major, in i64
	for d, x := range idx {
		x = fb.Convert(x, xla.Int64)
		if lin == nil {
			lin = x
		} else {
			lin = fb.Add(fb.Multiply(lin, fb.SplatOf(xla.Int64, float64(dims[d]), t.Shape...)), x)
		}
	}
	sq := []int64{n, n} // [lane i, earlier lane j]
	rows := func(x *stablehlo.Value) *stablehlo.Value { return fb.BroadcastInDim(flat(x), sq, []int64{0}) }
	cols := func(x *stablehlo.Value) *stablehlo.Value { return fb.BroadcastInDim(flat(x), sq, []int64{1}) }
	j := fb.Iota(stablehlo.Tensor(xla.Int32, sq...), 1)
	before := fb.Compare(j, fb.Iota(stablehlo.Tensor(xla.Int32, sq...), 0), stablehlo.CompareLT, stablehlo.CompareAuto)
	dt := t.DType
	if dt.IsFloat() && (kind == "max" || kind == "min") {
		// The Triton kernel updates floats' bits in two atomics: the lanes
		// of values whose sign bit is clear first, then the others; lanes
		// come in that order here too (each phase row-major).
		ib := xla.Int32
		if dt.Bits() == 64 {
			ib = xla.Int64
		}
		neg := fb.Convert(fb.Compare(fb.BitcastConvert(flat(val), ib), fb.SplatOf(ib, 0, n), stablehlo.CompareLT, stablehlo.CompareAuto), xla.Int32)
		pi, pj := fb.BroadcastInDim(neg, sq, []int64{0}), fb.BroadcastInDim(neg, sq, []int64{1})
		before = fb.Or(fb.Compare(pj, pi, stablehlo.CompareLT, stablehlo.CompareAuto),
			fb.And(fb.Compare(pj, pi, stablehlo.CompareEQ, stablehlo.CompareAuto), before))
	}
	earlier := fb.And(fb.And(fb.Compare(rows(lin), cols(lin), stablehlo.CompareEQ, stablehlo.CompareAuto), before), cols(keep))
	// The last earlier lane of each lane's element (-1: none).
	last := fb.ReduceMax(fb.Select(earlier, j, fb.SplatOf(xla.Int32, -1, sq...)), 1)
	vals := cols(val)
	var seen *stablehlo.Value // what the earlier lanes leave in the element
	switch kind {
	case "xchg": // the last earlier lane's value
		seen = gatherElements(fb, flat(val), []*stablehlo.Value{fb.Maximum(last, fb.SplatOf(xla.Int32, 0, n))}, []int64{n})
	case "max", "min": // over the element and the earlier lanes' values
		fill := fb.Select(earlier, vals, rows(old))
		if kind == "max" {
			seen = fb.ReduceMax(fill, 1)
		} else {
			seen = fb.ReduceMin(fill, 1)
		}
	case "add":
		if !dt.IsFloat() {
			seen = fb.Add(flat(old), fb.ReduceSum(fb.Select(earlier, vals, fb.SplatOf(dt, 0, sq...)), 1))
			break
		}
		// Float sums round after each lane, as a GPU's updates do: each
		// row folds the element, then the earlier lanes' values in order
		// (the interpreter reduces in index order), -0 standing for the
		// lanes that are not earlier (x + -0 is x, to the bit).
		negZero := fb.SplatOf(dt, math.Copysign(0, -1))
		row := fb.Concatenate(1, fb.Reshape(flat(old), n, 1), fb.Select(earlier, vals, fb.BroadcastInDim(negZero, sq, nil)))
		seen = fb.Reduce([]*stablehlo.Value{row}, []*stablehlo.Value{negZero}, []int64{1},
			func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
				return []*stablehlo.Value{rb.Add(a[0], a[1])}
			})[0]
	default:
		ident := fb.SplatOf(dt, 0) // or, xor
		if kind == "and" {
			ident = fb.Not(ident)
		}
		folded := fb.Reduce([]*stablehlo.Value{fb.Select(earlier, vals, fb.BroadcastInDim(ident, sq, nil))}, []*stablehlo.Value{ident}, []int64{1},
			func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
				return []*stablehlo.Value{combine(rb, a[0], a[1])}
			})[0]
		seen = combine(fb, flat(old), folded)
	}
	some := fb.Compare(last, fb.SplatOf(xla.Int32, -1, n), stablehlo.CompareGT, stablehlo.CompareAuto)
	return fb.Reshape(fb.Select(some, seen, flat(old)), t.Shape...)
}

// usesOf is the set of the kernel's values some op or region yield uses
// (computed once).
func (l *interp) usesOf() map[*Value]bool {
	if l.used == nil {
		l.used = map[*Value]bool{}
		var walk func(r *Region)
		walk = func(r *Region) {
			for _, op := range r.Ops {
				for _, o := range op.Operands {
					l.used[o] = true
				}
				for _, sub := range op.Regions {
					walk(sub)
				}
			}
			for _, y := range r.Yield {
				l.used[y] = true
			}
		}
		walk(l.p.Body)
	}
	return l.used
}

// modified lists the state slots a region may change: refs it stores to
// and the check state when it checks something.
func (l *interp) modified(r *Region, e *env) []int {
	set := map[int]bool{}
	eachOp(r, func(op *Op) {
		switch op.Name {
		case "store", "atomic":
			if s, ok := e.refOf[op.Operands[0]]; ok {
				set[s] = true
				if d, ok := l.dirtySlot[s]; ok {
					set[d] = true
				}
			}
			if l.checks {
				set[l.errSlot] = true
			}
		case "load":
			if l.checks {
				set[l.errSlot] = true
			}
		}
	})
	out := make([]int, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

// debugWriter writes DebugPrint's lines to w (os.Stdout when nil), one
// at a time in the process: executions on different effects Streams run
// their callbacks at once, and a writer such as a bytes.Buffer is not
// safe for concurrent use.
type debugWriter struct{ w io.Writer }

var debugWriteMu sync.Mutex

func (d debugWriter) Write(p []byte) (int, error) {
	debugWriteMu.Lock()
	defer debugWriteMu.Unlock()
	if d.w == nil {
		return os.Stdout.Write(p)
	}
	return d.w.Write(p)
}

// prints reports whether r holds a debug_print.
func prints(r *Region) bool {
	found := false
	eachOp(r, func(op *Op) { found = found || op.Name == "debug_print" })
	return found
}

func pick(state []*stablehlo.Value, slots []int) []*stablehlo.Value {
	out := make([]*stablehlo.Value, len(slots))
	for i, s := range slots {
		out[i] = state[s]
	}
	return out
}

// when lowers a When (one region) or a Cond (then and else, with
// results) to a stablehlo.if whose branches return the op's results and
// the ref states either branch modifies.
func (l *interp) when(fb *stablehlo.FuncBuilder, op *Op, e *env) error {
	if b, ok := l.knownBool(op.Operands[0]); ok {
		// Decided for every step: no stablehlo.if.
		if !b && len(op.Regions) == 1 {
			return nil
		}
		r := op.Regions[0]
		if !b {
			r = op.Regions[1]
		}
		if err := l.region(fb, r, e); err != nil {
			return err
		}
		for i, res := range op.Results {
			e.vals[res] = e.vals[r.Yield[i]]
		}
		return nil
	}
	var mod []int
	printing := false
	for _, r := range op.Regions {
		mod = append(mod, l.modified(r, e)...)
		printing = printing || prints(r)
	}
	slices.Sort(mod)
	mod = slices.Compact(mod)
	if len(mod) == 0 && !printing && len(op.Results) == 0 {
		return nil // no stores, no checks, no prints: nothing observable
	}
	var inner error
	var stored []*stablehlo.Value
	branch := func(r *Region) func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
			c := e.child()
			if err := l.region(rb, r, c); err != nil {
				// Results of the right types keep the builder's error
				// out of it: inner is the one reported.
				inner = err
				out := make([]*stablehlo.Value, 0, len(op.Results)+len(mod))
				for _, res := range op.Results {
					out = append(out, rb.SplatOf(res.Type.DType, 0, res.Type.Shape...))
				}
				return append(out, pick(e.state, mod)...)
			}
			st := pick(c.state, mod)
			if r == op.Regions[0] {
				stored = st
			}
			out := make([]*stablehlo.Value, 0, len(op.Results)+len(mod))
			for _, y := range r.Yield {
				out = append(out, c.vals[y])
			}
			return append(out, st...)
		}
	}
	els := func(rb *stablehlo.FuncBuilder) []*stablehlo.Value { return pick(e.state, mod) }
	if len(op.Regions) > 1 {
		els = branch(op.Regions[1])
	}
	cond := e.vals[op.Operands[0]]
	res := fb.If(cond, branch(op.Regions[0]), els)
	if inner != nil {
		return inner
	}
	for i, r := range op.Results {
		e.vals[r] = res[i]
	}
	res = res[len(op.Results):]
	for i, s := range mod {
		if len(op.Regions) == 1 && l.zero[stored[i]] {
			l.zeroIf[res[i]] = zeroIf{cond: cond, other: e.state[s]}
		}
		e.state[s] = res[i]
	}
	return nil
}

// assocScan lowers an AssociativeScan to a while loop over the axis, in
// order: the fold so far, one slice of each value (the axis's dim 1),
// combined with the next slices by combine's ops on whole slices (its
// scalars made slices: vectorized) and stored into the results.
func (l *interp) assocScan(fb *stablehlo.FuncBuilder, op *Op, e *env) error {
	n := len(op.Operands)
	t := op.Operands[0].Type
	axis, size := op.Attrs.Axis, t.Shape[op.Attrs.Axis]
	xs := make([]*stablehlo.Value, n)
	for i, x := range op.Operands {
		xs[i] = e.vals[x]
	}
	if t.Size() == 0 {
		for i, res := range op.Results {
			e.vals[res] = xs[i]
		}
		return nil
	}
	slice := slices.Clone(t.Shape)
	slice[axis] = 1
	comb := vectorized(op.Regions[0], slice)
	at := func(rb *stablehlo.FuncBuilder, i *stablehlo.Value) []*stablehlo.Value {
		starts := make([]*stablehlo.Value, len(slice))
		for d := range starts {
			starts[d] = rb.ScalarOf(xla.Int32, 0)
		}
		if op.Attrs.Reverse {
			i = rb.Subtract(rb.ScalarOf(xla.Int32, float64(size-1)), i)
		}
		starts[axis] = i
		return starts
	}
	// Carries: the step, the fold so far, the results.
	init := []*stablehlo.Value{fb.ScalarOf(xla.Int32, 1)}
	for _, x := range xs {
		init = append(init, fb.DynamicSlice(x, at(fb, fb.ScalarOf(xla.Int32, 0)), slice))
	}
	init = append(init, xs...) // element 0 (n-1) is its own fold
	var inner error
	res := fb.While(init, func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) *stablehlo.Value {
		return rb.Compare(a[0], rb.ScalarOf(xla.Int32, float64(size)), stablehlo.CompareLT, stablehlo.CompareAuto)
	}, func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
		c := e.child()
		starts := at(rb, a[0])
		for i := range n {
			c.vals[comb.Args[i]] = a[1+i]
			c.vals[comb.Args[n+i]] = rb.DynamicSlice(xs[i], starts, slice)
		}
		if err := l.region(rb, comb, c); err != nil {
			inner = err
			return a
		}
		out := []*stablehlo.Value{rb.Add(a[0], rb.ScalarOf(xla.Int32, 1))}
		for _, y := range comb.Yield {
			out = append(out, c.vals[y])
		}
		for i, y := range comb.Yield {
			out = append(out, rb.DynamicUpdateSlice(a[1+n+i], c.vals[y], starts))
		}
		return out
	})
	if inner != nil {
		return inner
	}
	for i, r := range op.Results {
		e.vals[r] = res[1+n+i]
	}
	return nil
}

// vectorized copies r, an AssociativeScan's combine region (whose values
// are all scalars), with every value of the given shape instead: its
// elementwise ops then combine whole slices at once. Broadcasts and
// reshapes of its scalars are themselves.
func vectorized(r *Region, shape []int64) *Region {
	c := &Region{}
	m := map[*Value]*Value{}
	like := func(v *Value, def *Op) *Value {
		w := &Value{Type: Type{DType: v.Type.DType, Shape: slices.Clone(shape)}, Def: def, ID: v.ID, k: v.k}
		m[v] = w
		return w
	}
	for _, a := range r.Args {
		w := like(a, nil)
		w.argOf = c
		c.Args = append(c.Args, w)
	}
	for _, op := range r.Ops {
		if op.Name == "broadcast_in_dim" || op.Name == "reshape" {
			m[op.Results[0]] = m[op.Operands[0]]
			continue
		}
		o := &Op{Name: op.Name, Attrs: op.Attrs, Loc: op.Loc, region: c}
		for _, x := range op.Operands {
			o.Operands = append(o.Operands, m[x])
		}
		for _, res := range op.Results {
			o.Results = append(o.Results, like(res, o))
		}
		c.Ops = append(c.Ops, o)
	}
	for _, y := range r.Yield {
		c.Yield = append(c.Yield, m[y])
	}
	return c
}

// zeroIf is a lowered value that is zeros when cond holds, else other:
// the state of a ref after a When that zeroes it (an accumulator reset
// when a new output block starts).
type zeroIf struct{ cond, other *stablehlo.Value }

// minZeroIfAdd is the least number of elements for which an add of a
// zeroIf value is worth a stablehlo.if that skips it (see op "add").
const minZeroIfAdd = 1024

// addZeroIf lowers z + x, z a zeroIf value and x never -0 (an integer,
// or a dot's sum), as "if z.cond then x else z.other + x": at the steps
// that reset an accumulator, adding the product to it costs nothing.
func addZeroIf(fb *stablehlo.FuncBuilder, z zeroIf, x *stablehlo.Value) *stablehlo.Value {
	return fb.If(z.cond, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return []*stablehlo.Value{x}
	}, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return []*stablehlo.Value{rb.Add(z.other, x)}
	})[0]
}

func (l *interp) forLoop(fb *stablehlo.FuncBuilder, op *Op, e *env) error {
	r := op.Regions[0]
	mod := l.modified(r, e)
	lo, hi := e.vals[op.Operands[0]], e.vals[op.Operands[1]]
	nc := len(op.Operands) - 2
	init := []*stablehlo.Value{lo}
	for _, v := range op.Operands[2:] {
		init = append(init, e.vals[v])
	}
	init = append(init, pick(e.state, mod)...)
	errAt := l.errIndex(mod)
	var inner error
	res := fb.While(init, func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) *stablehlo.Value {
		more := rb.Compare(a[0], hi, stablehlo.CompareLT, stablehlo.CompareAuto)
		if errAt >= 0 {
			more = l.untilFailed(rb, more, a[1+nc+errAt])
		}
		return more
	}, func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
		c := e.child()
		for i, arg := range r.Args {
			c.vals[arg] = a[i]
		}
		for i, s := range mod {
			c.state[s] = a[1+nc+i]
		}
		if err := l.region(rb, r, c); err != nil {
			inner = err
			return a
		}
		out := []*stablehlo.Value{rb.Add(a[0], rb.ScalarOf(xla.Int32, 1))}
		for _, y := range r.Yield {
			out = append(out, c.vals[y])
		}
		return append(out, pick(c.state, mod)...)
	})
	if inner != nil {
		return inner
	}
	for i, v := range op.Results {
		e.vals[v] = res[1+i]
	}
	for i, s := range mod {
		e.state[s] = res[1+nc+i]
	}
	return nil
}

func (l *interp) while(fb *stablehlo.FuncBuilder, op *Op, e *env) error {
	rc, rb := op.Regions[0], op.Regions[1]
	mod := l.modified(rb, e)
	// A condition stores nothing (Trace refuses it), but with bounds checks
	// it updates the check state, which a while condition cannot (it
	// yields only its predicate): then the condition runs before the loop
	// and at the end of each body, which carry its predicate.
	rotate := l.checks && len(l.modified(rc, e)) > 0
	if rotate && !containsSlot(mod, l.errSlot) {
		mod = append(mod, l.errSlot)
	}
	nc := len(op.Operands)
	init := []*stablehlo.Value{}
	for _, v := range op.Operands {
		init = append(init, e.vals[v])
	}
	var inner error
	// cond lowers the condition on the carried values a in env c (whose
	// state it may update) and returns its predicate.
	cond := func(b *stablehlo.FuncBuilder, c *env, a []*stablehlo.Value) *stablehlo.Value {
		for i, arg := range rc.Args {
			c.vals[arg] = a[i]
		}
		if err := l.region(b, rc, c); err != nil {
			inner = err
			return b.ScalarOf(xla.Bool, 0)
		}
		return c.vals[rc.Yield[0]]
	}
	var first *stablehlo.Value
	if rotate {
		pre := e.child()
		first = l.untilFailed(fb, cond(fb, pre, init), pre.state[l.errSlot])
		e.state[l.errSlot] = pre.state[l.errSlot]
	}
	errAt := l.errIndex(mod)
	init = append(init, pick(e.state, mod)...)
	if rotate {
		init = append(init, first)
	}
	bind := func(c *env, r *Region, a []*stablehlo.Value) {
		for i, arg := range r.Args {
			c.vals[arg] = a[i]
		}
		for i, s := range mod {
			c.state[s] = a[nc+i]
		}
	}
	res := fb.While(init, func(b *stablehlo.FuncBuilder, a []*stablehlo.Value) *stablehlo.Value {
		if rotate {
			return a[len(a)-1]
		}
		c := e.child()
		bind(c, rc, a)
		more := cond(b, c, a)
		if errAt >= 0 {
			more = l.untilFailed(b, more, a[nc+errAt])
		}
		return more
	}, func(b *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
		c := e.child()
		bind(c, rb, a)
		if err := l.region(b, rb, c); err != nil {
			inner = err
			return a
		}
		var out []*stablehlo.Value
		for _, y := range rb.Yield {
			out = append(out, c.vals[y])
		}
		if rotate {
			next := l.untilFailed(b, cond(b, c, out), c.state[l.errSlot])
			return append(append(out, pick(c.state, mod)...), next)
		}
		return append(out, pick(c.state, mod)...)
	})
	if inner != nil {
		return inner
	}
	for i, v := range op.Results {
		e.vals[v] = res[i]
	}
	for i, s := range mod {
		e.state[s] = res[nc+i]
	}
	return nil
}

// errIndex is the position of the bounds-check state among a loop's
// carried state slots mod, or -1 (checks off, or no check in the loop).
func (l *interp) errIndex(mod []int) int {
	if !l.checks {
		return -1
	}
	for i, s := range mod {
		if s == l.errSlot {
			return i
		}
	}
	return -1
}

// untilFailed is more, and false once a bounds check has failed (errs
// holds a record): a loop inside a kernel stops at its first failed check
// instead of running on clamped values, whose condition may never turn
// false.
func (l *interp) untilFailed(b *stablehlo.FuncBuilder, more, errs *stablehlo.Value) *stablehlo.Value {
	first := b.Reshape(b.Slice(errs, []int64{0}, []int64{1}, nil))
	return b.And(more, b.Compare(first, b.ScalarOf(xla.Int32, 0), stablehlo.CompareEQ, stablehlo.CompareAuto))
}

func containsSlot(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// scan lowers a cumulative sum, product, maximum or minimum along
// op.Attrs.Axis to a reduce_window whose window spans the axis with all
// but one of its elements as low padding (output i folds inputs 0..i),
// JAX's default lowering of cumsum; the interpreter runs it in one
// pass along the axis, in order. The window starts from the reductions'
// identities (+0, 1, -inf, +inf: a float sum starts from +0). f16 and
// bf16 maxima and minima run in f32 (exactly), a type the interpreter's
// one-pass form takes.
func (l *interp) scan(fb *stablehlo.FuncBuilder, op *Op, x *stablehlo.Value) (*stablehlo.Value, error) {
	t, kind := op.Operands[0].Type, op.Attrs.Kind
	if t.Size() == 0 {
		return x, nil // nothing to fold
	}
	if op.Attrs.Reverse {
		// The forward scan of the axis reversed, reversed back: element i
		// folds n-1 down to i, in that order.
		ax := int64(op.Attrs.Axis)
		fwd := *op
		fwd.Attrs.Reverse = false
		y, err := l.scan(fb, &fwd, fb.Reverse(x, ax))
		if err != nil {
			return nil, err
		}
		return fb.Reverse(y, ax), nil
	}
	if dt := t.DType; (dt == xla.Float16 || dt == xla.BFloat16) && (kind == "max" || kind == "min") {
		return fb.Convert(scanWindow(fb, fb.Convert(x, xla.Float32), Type{DType: xla.Float32, Shape: t.Shape}, kind, op.Attrs.Axis), dt), nil
	}
	switch kind {
	case "sum", "prod", "max", "min":
		return scanWindow(fb, x, t, kind, op.Attrs.Axis), nil
	}
	return nil, l.opErr(op, "unknown scan %q", kind)
}

// scanWindow is the reduce_window of scan: x of type t folded by kind
// along axis.
func scanWindow(fb *stablehlo.FuncBuilder, x *stablehlo.Value, t Type, kind string, axis int) *stablehlo.Value {
	dt := t.DType
	var init *stablehlo.Value
	var combine func(rb *stablehlo.FuncBuilder, a, b *stablehlo.Value) *stablehlo.Value
	switch kind {
	case "sum":
		init, combine = fb.ScalarOf(dt, 0), (*stablehlo.FuncBuilder).Add
	case "prod":
		init, combine = fb.ScalarOf(dt, 1), (*stablehlo.FuncBuilder).Multiply
	case "max":
		// The reductions' identity for dt (-inf, the smallest integer).
		init, combine = fb.ReduceMax(fb.Zero(stablehlo.Tensor(dt, 0))), (*stablehlo.FuncBuilder).Maximum
	default:
		init, combine = fb.ReduceMin(fb.Zero(stablehlo.Tensor(dt, 0))), (*stablehlo.FuncBuilder).Minimum
	}
	r := len(t.Shape)
	w := stablehlo.Window{Dimensions: make([]int64, r), Padding: make([][2]int64, r)}
	for d := range w.Dimensions {
		w.Dimensions[d] = 1
	}
	n := t.Shape[axis]
	w.Dimensions[axis] = n
	w.Padding[axis] = [2]int64{n - 1, 0}
	return fb.ReduceWindow([]*stablehlo.Value{x}, []*stablehlo.Value{init}, w, func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) []*stablehlo.Value {
		return []*stablehlo.Value{combine(rb, args[0], args[1])}
	})[0]
}

// chloUnary are the unary ops interpret mode emits as CHLO ops.
var chloUnary = map[string]func(*stablehlo.FuncBuilder, *stablehlo.Value) *stablehlo.Value{
	"asin": chlo.Asin, "acos": chlo.Acos, "atan": chlo.Atan, "sinh": chlo.Sinh, "cosh": chlo.Cosh,
	"asinh": chlo.Asinh, "acosh": chlo.Acosh, "atanh": chlo.Atanh, "erf_inv": chlo.ErfInv,
	"erfc": chlo.Erfc, "lgamma": chlo.Lgamma,
}

// log2Exact is log2(x) as e + log(m)/ln 2 for x = m·2^e, m in [√½, √2)
// (m and e from x's bits, subnormals scaled up first): exactly e for a
// power of two, where log(x)/ln 2 (JAX's log2) gives 12.999999 for 2^13
// in f32, and within a few ulps elsewhere, near 1 too. Zero, negative,
// infinite and NaN x take log(x), which is log2's value there. f16 and
// bf16 compute in f32.
func log2Exact(fb *stablehlo.FuncBuilder, x *stablehlo.Value, dt xla.DType, dims []int64) *stablehlo.Value {
	wide, mant, bias, it := xla.Float32, 23, 127, xla.Int32
	if dt == xla.Float64 {
		wide, mant, bias, it = xla.Float64, 52, 1023, xla.Int64
	}
	if dt != wide {
		x = fb.Convert(x, wide)
	}
	c := func(dt xla.DType, v float64) *stablehlo.Value { return fb.SplatOf(dt, v, dims...) }
	cmp := func(a, b *stablehlo.Value, dir stablehlo.ComparisonDirection) *stablehlo.Value {
		return fb.Compare(a, b, dir, stablehlo.CompareAuto)
	}
	smallest := math.Ldexp(1, 1-bias) // the smallest normal
	sub := cmp(x, c(wide, smallest), stablehlo.CompareLT)
	scaled := fb.Select(sub, fb.Multiply(x, c(wide, math.Ldexp(1, mant))), x)
	bits := fb.BitcastConvert(scaled, it)
	e := fb.Subtract(fb.ShiftRightLogical(bits, c(it, float64(mant))), c(it, float64(bias)))
	e = fb.Select(sub, fb.Subtract(e, c(it, float64(mant))), e)
	one := math.Float64bits(1)
	if wide == xla.Float32 {
		one = uint64(math.Float32bits(1))
	}
	m := fb.BitcastConvert(fb.Or(fb.And(bits, c(it, math.Ldexp(1, mant)-1)), c(it, float64(one))), wide)
	high := cmp(m, c(wide, math.Sqrt2), stablehlo.CompareGT)
	m = fb.Select(high, fb.Multiply(m, c(wide, 0.5)), m)
	e = fb.Select(high, fb.Add(e, c(it, 1)), e)
	y := fb.Add(fb.Convert(e, wide), fb.Divide(fb.Log(m), c(wide, math.Ln2)))
	finite := fb.And(cmp(x, c(wide, 0), stablehlo.CompareGT), cmp(x, c(wide, math.Inf(1)), stablehlo.CompareLT))
	y = fb.Select(finite, y, fb.Log(x))
	if dt != wide {
		y = fb.Convert(y, dt)
	}
	return y
}
