package pallas

import "slices"

// maskTape computes, element by element at build time, a mask that does
// not leave a box (boxTerms: a 2-D triangle, (iota + p) % 4 == 0, a 16-bit
// iota that may wrap), so that overlapRace knows the elements an access
// under it reaches; it computes index arrays the same way. The value
// must be integer and boolean arithmetic (evalOp's ops) on iotas, integer
// and boolean constants, reshapes, broadcasts, transposes, integer
// reductions (sum, max, min) and scans (cumulative sums, products, maxima,
// minima) of such values, and values the same
// everywhere that the site's tape computes (uniform): the program ids,
// loop indices, bounds.
type maskTape struct {
	nodes []maskNode
	node  map[*Value]int // -1: not computable
	out   int            // the mask's node
	shape []int64        // the mask's
	uses  []int          // the tape registers the mask reads
	// cost is the work of one placement: the elements a run computes and
	// scans, or the runs of a fixed mask.
	cost int
	// constant: the mask reads no register (a triangle); its runs are
	// computed once, in fixed: per run, its lo then its hi.
	constant bool
	fixed    [][]int64
	// limit, when above 0, bounds the elements of the values compiled
	// (total), checked before each is made: a scalar's tape (viaMask)
	// gives up on large blocks at once.
	limit, total int64
}

// maskNode is one value of a mask's computation with its elements, row
// major (one element when it is the same everywhere).
type maskNode struct {
	kind uint8
	op   *Op     // maskElem: the elementwise op
	reg  int     // maskUniform: the tape register
	args [3]int  // maskElem: its operands' nodes (-1 none); maskBroadcast: args[0]
	from []int32 // maskBroadcast: per element, the operand's; maskReduce: per operand element, the result's; maskScan: per element, the one before it along the axis (after it in a reverse scan; -1: the first)
	val  []int64
	seen []bool // maskReduce: scratch, the results begun
	// maskConcat: the operands' nodes, and per operand element where it
	// goes in the result.
	parts []int
	dests [][]int32
	// maskAssoc: the scan op, the result it is (parts holds the
	// operands' nodes, from the elements before as maskScan's), and
	// scratch for the combine region's values.
	scan *Op
	res  int
	env  map[*Value]int64
	// maskGather: per result element, its position in x with the
	// coordinate along axis 0 (added to stride times idx), and that
	// stride.
	base   []int32
	stride int64
}

const (
	maskFixed     = iota // values computed once (an iota, a constant)
	maskUniform          // one value, a tape register
	maskBroadcast        // an operand's elements, spread (or permuted)
	maskElem             // an elementwise op
	maskReduce           // a sum, maximum or minimum along axes
	maskScan             // a cumulative sum, product, maximum or minimum along an axis
	maskConcat           // operands end to end along an axis
	maskGather           // x (args[0]) at positions along an axis from idx (args[1])
	maskAssoc            // one result of an AssociativeScan of integer values
)

// maxMaskElements bounds the elements of a mask maskTape computes.
const maxMaskElements = 1 << 20

// newMaskTape compiles mask m against tape t; ok is false when m is not
// computable at build time (or too large to compute).
func newMaskTape(t *tape, m *Value) (*maskTape, bool) {
	return newMaskTapeWithin(t, m, 0)
}

// newMaskTapeWithin is newMaskTape, giving up when the values it computes
// would hold more than limit elements in all (0: no limit).
func newMaskTapeWithin(t *tape, m *Value, limit int64) (*maskTape, bool) {
	shape := m.Type.Shape
	size := maskElements(shape)
	if size < 0 {
		return nil, false
	}
	mt := &maskTape{node: map[*Value]int{}, shape: shape, limit: limit}
	mt.out = mt.compile(t, m)
	if mt.out < 0 || int64(len(mt.nodes[mt.out].val)) != size && len(mt.nodes[mt.out].val) != 1 {
		return nil, false
	}
	if mt.nodes[mt.out].kind == maskFixed {
		mt.constant = true
		lo, hi := make([]int64, len(shape)), make([]int64, len(shape))
		mt.scan(mt.nodes[mt.out].val, lo, hi, func(lo, hi []int64) bool {
			mt.fixed = append(mt.fixed, append(slices.Clone(lo), hi...))
			return true
		})
		mt.cost = len(mt.fixed)
		return mt, true
	}
	for _, n := range mt.nodes {
		switch n.kind {
		case maskUniform:
			mt.uses = append(mt.uses, n.reg)
		case maskBroadcast, maskElem:
			mt.cost += len(n.val)
		case maskReduce, maskScan:
			mt.cost += len(n.from)
		case maskConcat, maskGather:
			mt.cost += len(n.val)
		case maskAssoc:
			mt.cost += len(n.val) * (1 + len(n.scan.Regions[0].Ops))
		}
	}
	mt.cost += int(size) // the scan for runs
	return mt, true
}

// runs calls f with each run of elements where the mask holds along its
// last dim at the registers regs (maskRuns), lo and hi its scratch.
func (mt *maskTape) runs(regs []int64, lo, hi []int64, f func(lo, hi []int64) bool) {
	if mt.constant {
		r := len(mt.shape)
		for _, run := range mt.fixed {
			if !f(run[:r], run[r:]) {
				return
			}
		}
		return
	}
	mt.scan(mt.run(regs), lo, hi, f)
}

// scan calls f with the runs of the mask's values val (maskRuns; one value
// stands for every element).
func (mt *maskTape) scan(val []int64, lo, hi []int64, f func(lo, hi []int64) bool) {
	if len(val) == 1 && maskElements(mt.shape) != 1 {
		// One value everywhere (a reshaped uniform): all or nothing.
		if val[0] == 0 {
			return
		}
		clear(lo)
		copy(hi, mt.shape)
		f(lo, hi)
		return
	}
	maskRuns(val, mt.shape, lo, hi, f)
}

// usesOf is the registers mt reads (none for a nil mt).
func (mt *maskTape) usesOf() []int {
	if mt == nil {
		return nil
	}
	return mt.uses
}

// compile adds the nodes computing v and returns its node, or -1.
func (mt *maskTape) compile(t *tape, v *Value) int {
	if n, ok := mt.node[v]; ok {
		return n
	}
	mt.node[v] = -1 // also while its operands are compiled
	n := mt.build(t, v)
	mt.node[v] = n
	return n
}

func (mt *maskTape) build(t *tape, v *Value) int {
	if c, ok := spreadConst(v); ok {
		return mt.add(maskNode{kind: maskFixed, val: []int64{c}})
	}
	if r := t.uniform(v); r >= 0 {
		return mt.add(maskNode{kind: maskUniform, reg: r, val: make([]int64, 1)})
	}
	op := v.Def
	dt := v.Type.DType
	if maskElements(v.Type.Shape) < 0 {
		return -1 // a value larger than the mask, broadcast to no elements
	}
	if mt.limit > 0 {
		if mt.total += maskElements(v.Type.Shape); mt.total > mt.limit {
			return -1
		}
	}
	if op != nil && op.Name == "assoc_scan" {
		return mt.assocScan(t, op, v)
	}
	if sel, operands, ok := condSelect(v); ok {
		// A Cond's result: elementwise, the select of its (uniform)
		// condition between what the branches yield.
		n := maskNode{kind: maskElem, op: sel, args: [3]int{-1, -1, -1}, val: make([]int64, int(maskElements(v.Type.Shape)))}
		for i, o := range operands {
			if n.args[i] = mt.compile(t, o); n.args[i] < 0 {
				return -1
			}
		}
		return mt.add(n)
	}
	if op == nil || len(op.Regions) != 0 || len(op.Results) != 1 || !(dt.IsInt() || dt.IsBool()) {
		return -1
	}
	shape := v.Type.Shape
	switch op.Name {
	case "iota":
		val := make([]int64, int(maskElements(shape)))
		stride := maskElements(shape[op.Attrs.Dim+1:])
		for i := range val {
			val[i] = wrapInt(int64(i)/stride%shape[op.Attrs.Dim], dt)
		}
		return mt.add(maskNode{kind: maskFixed, val: val})
	case "reshape":
		a := mt.compile(t, op.Operands[0]) // row-major order is kept
		if a < 0 {
			return a
		}
		return mt.spread(a, maskElements(shape))
	case "broadcast_in_dim", "transpose":
		x := op.Operands[0]
		a := mt.compile(t, x)
		if a < 0 {
			return -1
		}
		xs := x.Type.Shape
		// Per element, the operand's: for a broadcast, its coordinate
		// along each operand dim is the result's along the dim it goes
		// to (0 when spread); for a transpose, result dim i is operand
		// dim Perm[i].
		from := elementMap(shape, func(coord []int64) int64 {
			at := int64(0)
			if op.Name == "transpose" {
				for d := range xs {
					at = at*xs[d] + coord[slices.Index(op.Attrs.Perm, int64(d))]
				}
				return at
			}
			for d, to := range op.Attrs.Dims {
				c := coord[to]
				if xs[d] == 1 {
					c = 0
				}
				at = at*xs[d] + c
			}
			return at
		})
		return mt.add(maskNode{kind: maskBroadcast, args: [3]int{a, -1, -1}, from: from, val: make([]int64, len(from))})
	case "reduce":
		x := op.Operands[0]
		if maskElements(x.Type.Shape) < 0 || !slices.Contains([]string{"sum", "max", "min"}, op.Attrs.Kind) {
			return -1
		}
		a := mt.compile(t, x)
		if a < 0 {
			return -1
		}
		// Per operand element, the result's it folds into (the reduced
		// axes dropped).
		to := elementMap(x.Type.Shape, func(coord []int64) int64 {
			at := int64(0)
			for d, c := range coord {
				if !slices.Contains(op.Attrs.Axes, int64(d)) {
					at = at*x.Type.Shape[d] + c
				}
			}
			return at
		})
		return mt.add(maskNode{kind: maskReduce, op: op, args: [3]int{a, -1, -1}, from: to, val: make([]int64, maskElements(shape))})
	case "gather":
		x, idx := op.Operands[0], op.Operands[1]
		a, p := mt.compile(t, x), mt.compile(t, idx)
		if a < 0 || p < 0 {
			return -1
		}
		xs := x.Type.Shape
		a = mt.spread(a, maskElements(xs))
		axis := op.Attrs.Axis
		base := elementMap(shape, func(coord []int64) int64 {
			at := int64(0)
			for d, c := range coord {
				if d == axis {
					c = 0
				}
				at = at*xs[d] + c
			}
			return at
		})
		return mt.add(maskNode{kind: maskGather, args: [3]int{a, p, -1}, base: base, stride: maskElements(xs[axis+1:]), val: make([]int64, len(base))})
	case "slice":
		x := op.Operands[0]
		a := mt.compile(t, x)
		if a < 0 || len(mt.nodes[a].val) == 1 {
			return a // one value stands for every element of a part too
		}
		// Per element, the operand's: moved by Start along the axis.
		xs := x.Type.Shape
		from := elementMap(shape, func(coord []int64) int64 {
			at := int64(0)
			for d, c := range coord {
				if d == op.Attrs.Axis {
					c += op.Attrs.Start
				}
				at = at*xs[d] + c
			}
			return at
		})
		return mt.add(maskNode{kind: maskBroadcast, args: [3]int{a, -1, -1}, from: from, val: make([]int64, len(from))})
	case "concatenate":
		n := maskNode{kind: maskConcat, val: make([]int64, maskElements(shape))}
		axis, at := op.Attrs.Axis, int64(0) // at: the operand's first position along axis
		for _, o := range op.Operands {
			a := mt.compile(t, o)
			if a < 0 {
				return -1
			}
			xs := o.Type.Shape
			a = mt.spread(a, maskElements(xs))
			off := at
			n.parts = append(n.parts, a)
			n.dests = append(n.dests, elementMap(xs, func(coord []int64) int64 {
				r := int64(0)
				for d, c := range coord {
					if d == axis {
						c += off
					}
					r = r*shape[d] + c
				}
				return r
			}))
			at += xs[axis]
		}
		return mt.add(n)
	case "scan":
		if !slices.Contains([]string{"sum", "prod", "max", "min"}, op.Attrs.Kind) {
			return -1
		}
		a := mt.compile(t, op.Operands[0])
		if a < 0 {
			return -1
		}
		prev := scanPrev(shape, op.Attrs.Axis, op.Attrs.Reverse)
		return mt.add(maskNode{kind: maskScan, op: op, args: [3]int{a, -1, -1}, from: prev, val: make([]int64, len(prev))})
	}
	if !evaluable[op.Name] || op.Name == "const" || len(op.Operands) > 3 {
		return -1 // a const here is a float: integer ones are uniform
	}
	if op.Name == "program_id" || op.Name == "num_programs" {
		return -1 // not uniform: an axis the tape does not know (evalScalar's)
	}
	n := maskNode{kind: maskElem, op: op, args: [3]int{-1, -1, -1}, val: make([]int64, int(maskElements(shape)))}
	for i, o := range op.Operands {
		if n.args[i] = mt.compile(t, o); n.args[i] < 0 {
			return -1
		}
	}
	return mt.add(n)
}

// assocScan compiles result v of op, an AssociativeScan: integer (and
// bool) scans whose combine the tape's ops compute, folded along each
// line in order, as the evaluators fold them; -1 for others.
func (mt *maskTape) assocScan(t *tape, op *Op, v *Value) int {
	shape := v.Type.Shape
	if maskElements(shape) < 0 {
		return -1
	}
	for _, x := range op.Operands {
		if dt := x.Type.DType; !dt.IsInt() && !dt.IsBool() {
			return -1
		}
	}
	for _, o := range op.Regions[0].Ops {
		if !evaluable[o.Name] || o.Name == "program_id" || o.Name == "num_programs" {
			return -1
		}
		for _, r := range append(slices.Clone(o.Operands), o.Results...) {
			if dt := r.Type.DType; !dt.IsInt() && !dt.IsBool() {
				return -1
			}
		}
		if o.Name == "const" {
			if _, ok := o.Attrs.Value.(float64); ok {
				return -1
			}
		}
	}
	n := maskNode{kind: maskAssoc, scan: op, res: slices.Index(op.Results, v), env: map[*Value]int64{}, val: make([]int64, maskElements(shape))}
	for _, o := range op.Operands {
		a := mt.compile(t, o)
		if a < 0 {
			return -1
		}
		n.parts = append(n.parts, mt.spread(a, maskElements(shape)))
	}
	n.from = scanPrev(shape, op.Attrs.Axis, op.Attrs.Reverse)
	return mt.add(n)
}

// spread is node a with its elements all there: a itself, or, when it
// holds one value standing for all size elements, that value spread.
func (mt *maskTape) spread(a int, size int64) int {
	if int64(len(mt.nodes[a].val)) == size {
		return a
	}
	return mt.add(maskNode{kind: maskBroadcast, args: [3]int{a, -1, -1}, val: make([]int64, size)})
}

// scanPrev is, per element of a scan of shape along axis, the element
// folded just before it: the one before it along the axis, which comes
// first in row-major order, or with reverse the one after it, which comes
// first walking backward (the scans' run walks that way); -1 for the
// first of a line.
func scanPrev(shape []int64, axis int, reverse bool) []int32 {
	stride, n := maskElements(shape[axis+1:]), shape[axis]
	return elementMap(shape, func(coord []int64) int64 {
		at := int64(0)
		for d, c := range coord {
			at = at*shape[d] + c
		}
		switch {
		case !reverse && coord[axis] > 0:
			return at - stride
		case reverse && coord[axis] < n-1:
			return at + stride
		}
		return -1
	})
}

// elementMap is at(coord) for each element of shape, row major.
func elementMap(shape []int64, at func(coord []int64) int64) []int32 {
	out := make([]int32, maskElements(shape))
	coord := make([]int64, len(shape))
	for i := range out {
		rest := int64(i)
		for d := len(shape) - 1; d >= 0; d-- {
			coord[d], rest = rest%shape[d], rest/shape[d]
		}
		out[i] = int32(at(coord))
	}
	return out
}

// spreadConst is the value of v when it is an integer or boolean constant
// (broadcast or reshaped).
func spreadConst(v *Value) (int64, bool) {
	for op := v.Def; op != nil; op = op.Operands[0].Def {
		switch op.Name {
		case "broadcast_in_dim", "reshape":
			continue
		case "const":
			switch c := op.Attrs.Value.(type) {
			case int64:
				return c, true
			case bool:
				return b2i(c), true
			}
		}
		break
	}
	return 0, false
}

// maskElements is the number of elements of shape, or -1 past
// maxMaskElements.
func maskElements(shape []int64) int64 {
	if slices.Contains(shape, 0) {
		return 0
	}
	n := int64(1)
	for _, d := range shape {
		if d > maxMaskElements/n {
			return -1
		}
		n *= d
	}
	return n
}

// add appends n; one that reads fixed values only is computed now and
// becomes fixed itself (a triangle's row >= col costs nothing a run).
func (mt *maskTape) add(n maskNode) int {
	fixed := n.kind == maskBroadcast || n.kind == maskElem || n.kind == maskReduce || n.kind == maskScan
	for _, a := range n.args {
		fixed = fixed && (a < 0 || mt.nodes[a].kind == maskFixed)
	}
	mt.nodes = append(mt.nodes, n)
	if fixed {
		mt.step(len(mt.nodes) - 1)
		mt.nodes[len(mt.nodes)-1].kind = maskFixed
	}
	return len(mt.nodes) - 1
}

// run computes the mask from the tape's registers regs: its elements,
// row major (nonzero where it holds).
func (mt *maskTape) run(regs []int64) []int64 {
	for i := range mt.nodes {
		if n := &mt.nodes[i]; n.kind == maskUniform {
			n.val[0] = regs[n.reg]
		} else {
			mt.step(i)
		}
	}
	return mt.nodes[mt.out].val
}

// step computes node i from its operands (nothing for a fixed or
// uniform node).
func (mt *maskTape) step(i int) {
	switch n := &mt.nodes[i]; n.kind {
	case maskBroadcast:
		x := mt.nodes[n.args[0]].val
		if len(x) == 1 {
			for k := range n.val {
				n.val[k] = x[0]
			}
			return
		}
		for k, f := range n.from {
			n.val[k] = x[f]
		}
	case maskAssoc:
		// Every result, element by element in fold order (the one
		// before comes first); this node keeps result n.res.
		r := n.scan.Regions[0]
		m := len(n.parts)
		folds := make([][]int64, m)
		for q := range folds {
			folds[q] = make([]int64, len(n.val))
		}
		cur := make([]int64, m)
		for j := range n.from {
			k := j
			if n.scan.Attrs.Reverse {
				k = len(n.from) - 1 - j
			}
			for q, part := range n.parts {
				cur[q] = mt.nodes[part].val[k]
			}
			if p := n.from[k]; p >= 0 {
				for q := range m {
					n.env[r.Args[q]] = folds[q][p]
					n.env[r.Args[m+q]] = cur[q]
				}
				for _, o := range r.Ops {
					var xs [3]int64
					for i, x := range o.Operands {
						xs[i] = n.env[x]
					}
					n.env[o.Results[0]] = evalOp(o, xs[0], xs[1], xs[2], nil, nil)
				}
				for q, y := range r.Yield {
					cur[q] = n.env[y]
				}
			}
			for q := range m {
				folds[q][k] = cur[q]
			}
		}
		copy(n.val, folds[n.res])
	case maskGather:
		x, idx := mt.nodes[n.args[0]].val, mt.nodes[n.args[1]].val
		for k, b := range n.base {
			// idx is in range (the trace clamps it); one value stands
			// for all.
			n.val[k] = x[int64(b)+n.stride*idx[min(k, len(idx)-1)]]
		}
	case maskConcat:
		for p, part := range n.parts {
			x := mt.nodes[part].val
			for e, d := range n.dests[p] {
				n.val[d] = x[e]
			}
		}
	case maskReduce:
		x := mt.nodes[n.args[0]].val
		dt := n.op.Results[0].Type.DType
		if n.seen == nil {
			n.seen = make([]bool, len(n.val))
		}
		seen := n.seen
		clear(seen)
		for i, o := range n.from {
			v := x[min(i, len(x)-1)] // one value: the same everywhere
			switch {
			case !seen[o]:
				n.val[o], seen[o] = v, true
			case n.op.Attrs.Kind == "sum":
				n.val[o] = wrapInt(n.val[o]+v, dt)
			case compareInts("LT", v, n.val[o], dt.IsUnsigned()) == (n.op.Attrs.Kind == "min"):
				n.val[o] = v
			}
		}
	case maskScan:
		x := mt.nodes[n.args[0]].val
		dt := n.op.Results[0].Type.DType
		for j := range n.from {
			k := j
			if n.op.Attrs.Reverse {
				k = len(n.from) - 1 - j
			}
			p := n.from[k]
			v := x[min(k, len(x)-1)] // one value: the same everywhere
			switch {
			case p < 0:
			case n.op.Attrs.Kind == "sum":
				v = wrapInt(n.val[p]+v, dt)
			case n.op.Attrs.Kind == "prod":
				v = wrapInt(n.val[p]*v, dt)
			case compareInts("LT", n.val[p], v, dt.IsUnsigned()) == (n.op.Attrs.Kind == "min"):
				v = n.val[p]
			}
			n.val[k] = v
		}
	case maskElem:
		var xs [3][]int64
		for a, arg := range n.args {
			if arg >= 0 {
				xs[a] = mt.nodes[arg].val
			}
		}
		elem := func(x []int64, k int) int64 {
			switch len(x) {
			case 0:
				return 0
			case 1:
				return x[0]
			}
			return x[k]
		}
		for k := range n.val {
			n.val[k] = evalOp(n.op, elem(xs[0], k), elem(xs[1], k), elem(xs[2], k), nil, nil)
		}
	}
}

// maskRuns calls f with each run of elements where mask (row major over
// shape) holds along its last dim, as the box [lo, hi)
// of the mask's coordinates; it stops when f returns false.
func maskRuns(mask []int64, shape []int64, lo, hi []int64, f func(lo, hi []int64) bool) {
	if len(mask) == 0 {
		return
	}
	if len(shape) == 0 {
		if mask[0] != 0 {
			f(lo, hi) // one element: the box of no dims
		}
		return
	}
	last := len(shape) - 1
	row := shape[last]
	for start := int64(0); start < int64(len(mask)); start += row {
		rest := start / row
		for d := last - 1; d >= 0; d-- {
			lo[d], rest = rest%shape[d], rest/shape[d]
			hi[d] = lo[d] + 1
		}
		for k := int64(0); k < row; {
			if mask[start+k] == 0 {
				k++
				continue
			}
			lo[last] = k
			for k < row && mask[start+k] != 0 {
				k++
			}
			hi[last] = k
			if !f(lo, hi) {
				return
			}
		}
	}
}
