package pallas

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Program is the kernel IR.
//
// A kernel function and the index maps of its block specs are traced once
// into a Program: a tree of Regions holding Ops on Values. The IR knows
// nothing about any backend; each lowering (interpret.go, triton*.go, a
// later Mosaic lowering) walks it.
//
// How a lowering walks it:
//
//   - Program.Refs lists the kernel's refs in the order the kernel receives
//     them: scalar-prefetch refs, inputs, outputs, scratch (RefKind says which).
//     A prefetch or scratch ref has the full array shape; an input or output
//     ref has its BlockSpec's block shape with squeezed dims removed
//     (RefInfo.BlockShape) while RefInfo.ArrayShape is the operand's shape.
//   - Program.Body is a Region whose Args are the refs (Value.Ref set, one per
//     Program.Refs entry, same order). It yields nothing.
//   - Program.IndexMaps[i] belongs to input i (i < NumInputs) or output
//     i-NumInputs; it is nil when the spec has no index map: block index 0
//     in every dim (a whole-array spec, or a block smaller than the array
//     given no map). Its Args are the grid indices (i32 scalars, one per
//     grid axis) then the prefetch refs; it yields one i32 scalar block
//     index per array dim (squeezed dims included: a squeezed dim has block
//     size 1, so its block index is the element index). Vmap's batch dims
//     are such squeezed dims, in ArrayShape and Block.
//   - The grid runs step by step in row-major order (the semantics every
//     lowering must keep; triton_races.go lists the kernels that still
//     give the same results when programs run in parallel). At a step with
//     block indices bi, an input or output ref is the window [bi*Block,
//     bi*Block+Block) of its array (a squeezed dim: element bi). Stores to
//     an output reach the array: a later step whose map gives the same
//     block sees them, consecutive or not. Scratch keeps its contents
//     across steps. An input reads the operand as it came, also when an
//     output aliased to it (RefInfo.AliasOf) was stored to at an earlier
//     step; tracing refuses a load of an aliased input after a store to its
//     output in the body.
//   - Memory nobody wrote reads as NaN (floats, complex: NaN parts; -0 for
//     the 4- and 6-bit floats, which have no NaN), the minimum (signed integers), 0
//     (unsigned) or false (bool): outputs not
//     aliased to an input and scratch start so, and the part of an edge
//     block past the end of its array reads so at every step, stores there
//     being dropped.
//   - Ops of a Region run in order. A Value is defined once (an op result or
//     a region argument) and may be used in its region and the regions nested
//     in it. Refs are mutable: "store" changes a ref, later "load"s see it.
//   - Every elementwise op has operands of exactly the result's shape and
//     dtype (tracing inserts broadcast_in_dim and rejects mixed dtypes), so a
//     lowering never broadcasts implicitly. Go scalars become "const" ops:
//     a float64 is rounded to r's dtype (once, to nearest even); an
//     unsigned 64-bit value above MaxInt64 is the int64 holding its bits.
//   - Op.Loc is the user's file:line, for error messages of lowerings.
//
// Op table (Name: operands -> results; attributes in Op.Attrs):
//
//	const            -> r              Value: float64, int64 or bool (splatted to r's shape)
//	iota             -> r              Dim int: counts along that dim of r (integer or float dtype)
//	program_id       -> i32 scalar     Axis int
//	num_programs     -> i32 scalar     Axis int
//	neg exp log tanh erf sqrt rsqrt abs floor ceil sin cos logistic not
//	log1p expm1 tan round sign exp2 log2 asin acos atan sinh cosh asinh acosh
//	atanh cbrt erf_inv erfc lgamma popcnt clz
//	                 x -> r            (unary elementwise; "not" on bool/int; round
//	                                   halves to even; sign on ints and floats: -1, 0, 1,
//	                                   a float's ±0 and NaN kept; popcnt, clz on ints,
//	                                   counts in r's dtype)
//	is_finite        x -> bool r       (floats: neither ±inf nor NaN)
//	add sub mul div rem max min pow and or xor atan2
//	                 x, y -> r         (binary elementwise, same types; atan2(y, x) is
//	                                   the angle of the point (x, y))
//	shl shr          x, y -> r         (integers; shr is arithmetic for signed, logical for
//	                                   unsigned dtypes; an amount y outside [0, bits), read as
//	                                   unsigned, gives 0, or for shr of a signed x its sign fill)
//	cmp              x, y -> bool r    Dir string: EQ NE LT LE GT GE
//	select           pred, x, y -> r   pred bool of r's shape
//	convert          x -> r            (dtype change, shape kept: rules below)
//	bitcast          x -> r            (the same bits as another integer or float
//	                                   dtype of x's width, shape kept)
//	broadcast_in_dim x -> r            Dims []int64: result dim of each operand dim, whose
//	                                   size is the operand dim's or the operand dim is 1
//	reshape          x -> r            (same element count, row-major order)
//	transpose        x -> r            Perm []int64: result dim i is operand dim Perm[i]
//	concatenate      x... -> r         Axis int: the operands (two or more, one dtype and
//	                                   rank, the same dims but Axis) end to end along Axis
//	gather           x, idx -> r       Axis int: r[i] = x[i with its coordinate along Axis
//	                                   replaced by idx[i]]; idx i32 of x's rank, its dims
//	                                   x's but along Axis, every element in [0, x's dim)
//	slice            x -> r            Axis int, Start int64: elements [Start, Start+n) of x
//	                                   along Axis (n r's dim there), the other dims whole
//	reduce           x -> r            Kind string (sum|prod|max|min), Axes []int64 (sorted)
//	scan             x -> r            Kind string (sum|prod|max|min), Axis int, Reverse
//	                                   bool: r has x's type; element i along Axis folds
//	                                   elements 0..i of x in order (a cumulative sum,
//	                                   product, maximum or minimum; x has rank 1 or more),
//	                                   with Reverse elements i..n-1 from n-1 down
//	assoc_scan       x... -> r...      Axis int, Reverse bool; Regions[0] combine: args
//	                                   (a..., b...), scalars of the xs' dtypes, yields
//	                                   as many, computed by the elementwise ops, consts,
//	                                   casts, cmp and select from its args alone. r_j's
//	                                   element i along Axis is the j-th of the values
//	                                   combine folds elements 0..i of the xs into (with
//	                                   Reverse n-1 down to i); the xs have one shape.
//	                                   combine is associative: any bracketing may be used
//	dot              a[m,k], b[k,n] -> r[m,n]   r's dtype is the preferred (accumulator) dtype;
//	                                   TransA, TransB bool: a is [k,m] / b is [n,k]; or
//	                                   a[b,m,k], b[b,k,n] -> r[b,m,n] (a batch of them, the
//	                                   transposes of the last two dims)
//	load             ref, idx... [, mask [, other]] -> r      Indexer Indexer
//	store            ref, idx..., value [, mask] -> (none)    Indexer Indexer
//	atomic           ref, idx..., value [, mask] [, cmp] -> r  Kind string (add|max|min|and|or|xor|xchg|cas),
//	                                   Indexer Indexer: each element the mask keeps becomes
//	                                   old+value (max, min, and, or, xor of the two; value for
//	                                   xchg; for cas, whose last operand is cmp, value where old
//	                                   has cmp's bits, else old); r is old (zero where the mask
//	                                   is false). Elements
//	                                   an index array repeats get every update, in some order
//	                                   (interpret mode and the evaluators: row-major, float max
//	                                   and min the lanes of values whose sign bit is clear
//	                                   first; each lane's old value what the lanes before it
//	                                   left); max and min
//	                                   of floats as the max and min ops (a GPU's order
//	                                   NaNs by their bits instead of propagating them)
//	debug_print      x... -> (none)    Format string: fmt's format, applied to the values
//	                                   (as effects.Arrays) when the op runs (interpret mode)
//	when             cond -> r...      cond a bool scalar; Regions[0] (then) runs where it
//	                                   holds, the optional Regions[1] (else) where it does
//	                                   not; no args; each yields r (none without an else)
//	for              lo, hi, init... -> carry...   Regions[0]: args (i, carry...), yields carry
//	                                   (i32 counter from lo while i < hi, step 1)
//	while            init... -> carry...   Regions[0] cond: args carry, yields a bool scalar;
//	                                   Regions[1] body: args carry, yields carry
//
// For load/store the Indexer describes each dim of the ref; the operands
// after the ref are the Indexer's dynamic operands in order, then (store)
// the value, then the mask when HasMask, then (load) other when HasOther.
// The value, mask and other always have exactly the indexed shape.
// Elements the mask turns off are not accessed and may lie outside the
// ref (a static start outside it becomes a dynamic i32 operand); a load
// gives them other (zeros without it). An unmasked access outside the ref,
// or a block index outside the array's blocks, is the kernel's error:
// interpret mode reports a *BoundsError unless CompilerParams.NoBoundsChecks.
//
// Arithmetic (every lowering gives these results):
//
//   - Integers wrap. div truncates toward zero; x/0 is -1 (all ones), x%0
//     is x, MIN/-1 is MIN and MIN%-1 is 0. Unsigned dtypes make div, rem,
//     max, min, cmp, reduce and scan unsigned. not is bitwise (logical on bool).
//   - Float rem is fmod (the sign of the dividend). max and min, as ops,
//     reductions and scans, propagate NaN and order -0 below +0. cmp with a NaN
//     operand is false but for NE.
//   - convert: float to integer truncates toward zero and saturates, NaN
//     giving 0; integer to float rounds once to nearest even; integer to
//     integer wraps; to bool is x != 0, from bool 0 or 1.
//   - dot: operands are converted to r's dtype (i8 by i8 into i32 does not
//     overflow); float products are summed in f32 or wider (f64 for an f64
//     result) and rounded once to r, in any order, so float results may
//     differ in their last bits between lowerings; integer sums wrap.
//     Integer operands of 16 bits or fewer into a float r are summed
//     exactly and rounded once to r.
//   - Float sums (dot, reduce sum, scan sum) start from +0: -0 values
//     sum to +0 (a scan's prefixes too). A float reduce or scan sum, and
//     a scan product, may add (multiply) in any order, so float results
//     may differ in their last bits between lowerings.
//     Float add follows IEEE (+0 + -0 is +0) but for one rule every
//     lowering keeps: an add whose operand is a zero constant in the IR
//     (a const of 0, or a broadcast, reshape or convert of one, each of a
//     type that has a zero: f8E8M0FNU's 0 is NaN) gives the other
//     operand, so 0 + x keeps a -0 x (as XLA simplifies it); x - 0
//     likewise. A zero that only a lowering can tell (stored, then
//     loaded) adds as IEEE does.
//
// ir_reference_test.go holds an evaluator of Programs written from this
// comment alone; TestIRReferenceEvaluator requires it to agree with
// interpret mode, so a rule a lowering relies on is written here.
//
// Stability: this file is the contract with the Triton and Mosaic
// lowerings. Changes are additive only and listed here:
//
//	2026-11-28: the unary ops exp2 ... clz, erfc, lgamma and is_finite, the binary
//	atan2; the atomic op's cas kind (its cmp the last operand); slices of
//	any part; dots of more than three dims fold their batch dims in the
//	trace (the dot op stays 2-D or 3-D).
//	2026-11-28: the scan op (cumulative sums, products, maxima and
//	minima along one axis); its Reverse attribute; the when op's else
//	region and results (Kernel.Cond); the concatenate, slice, gather and
//	assoc_scan ops; 3-D dots.
//	2026-11-28: the atomic op (atomic updates; a read and a store of
//	its ref for every rule above that speaks of them); shl and shr
//	written down (the lowerings had them already); narrow integer dots
//	into floats summed exactly.
//	2026-11-27: the grid's step semantics, unwritten memory, masks and
//	bounds, arithmetic and conversion rules written down (what the
//	lowerings did already); a nil index map may come with a block smaller
//	than the array.
type Program struct {
	// Name is the kernel's name (for errors and backend symbols).
	Name string
	// Grid is the iteration space, row-major (last axis fastest).
	Grid []int64
	// NumPrefetch, NumInputs, NumOutputs, NumScratch count Refs by kind.
	NumPrefetch, NumInputs, NumOutputs, NumScratch int
	// Refs are the kernel's refs in order: prefetch, inputs, outputs, scratch.
	Refs []RefInfo
	// Body is the kernel body; its Args are the refs.
	Body *Region
	// IndexMaps has one entry per input then per output (nil: whole array).
	IndexMaps []*Region

	// batchAxes counts the leading grid axes Vmap added (the kernel's
	// ProgramID numbers its own axes after them), for errors.
	batchAxes int
}

// RefKind says which kind of kernel argument a ref is.
type RefKind int

// The ref kinds, in the order the kernel receives them.
const (
	PrefetchRef RefKind = iota
	InputRef
	OutputRef
	ScratchRef
)

// String is the kind's name in messages: "prefetch", "input", "output"
// or "scratch".
func (k RefKind) String() string {
	switch k {
	case PrefetchRef:
		return "prefetch"
	case InputRef:
		return "input"
	case OutputRef:
		return "output"
	case ScratchRef:
		return "scratch"
	}
	return fmt.Sprintf("RefKind(%d)", int(k))
}

// RefInfo describes one kernel ref.
type RefInfo struct {
	Kind RefKind // prefetch, input, output or scratch
	// Index is the position among refs of the same kind.
	Index int
	// DType is the element type.
	DType xla.DType
	// ArrayShape is the shape of the whole operand (for prefetch and scratch
	// refs the same as BlockShape).
	ArrayShape []int64
	// Block is the block shape over ArrayShape's dims, with Squeezed for
	// squeezed dims; equal to ArrayShape for whole-array refs.
	Block []int64
	// BlockShape is the shape the kernel sees: Block without squeezed dims.
	BlockShape []int64
	// Operand is the index of the pallas.Call operand the ref reads (prefetch
	// and inputs), -1 otherwise.
	Operand int
	// AliasOf is, for an output, the Call operand it starts as
	// (InputOutputAliases), -1 otherwise.
	AliasOf int

	// batchDims is the number of leading dims of ArrayShape and Block
	// that Vmaps added, which Ref.Info hides from the kernel.
	batchDims int
	// batchAxes are, for a scalar-prefetch array Vmap batched, the grid
	// axes whose indices pick its batch element (see Ref.batch).
	batchAxes []int
}

// String names the ref for messages: "input 1 (f32[2,2] block of f32[8,8])".
func (r RefInfo) String() string {
	s := fmt.Sprintf("%s %d (%s", r.Kind, r.Index, shapeString(r.DType, r.BlockShape))
	switch {
	case r.Kind == InputRef || r.Kind == OutputRef:
		s += " block of " + shapeString(r.DType, r.ArrayShape)
	case len(r.batchAxes) > 0:
		s = fmt.Sprintf("%s %d (%s element of %s batched by Vmap", r.Kind, r.Index,
			shapeString(r.DType, r.ArrayShape[len(r.batchAxes):]), shapeString(r.DType, r.ArrayShape))
	}
	return s + ")"
}

// Type is the type of a block value: an element type and a shape (rank 0
// for scalars).
type Type struct {
	DType xla.DType // the element type
	Shape []int64   // the dims (none: a scalar)
}

// String writes the type as f32[2,3].
func (t Type) String() string { return shapeString(t.DType, t.Shape) }

// Size is the number of elements (math.MaxInt64 for more).
func (t Type) Size() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		if d > 0 && n > math.MaxInt64/d {
			return math.MaxInt64
		}
		n *= d
	}
	return n
}

// Rank is len(Shape).
func (t Type) Rank() int { return len(t.Shape) }

func shapeString(dt xla.DType, shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("%s[%s]", dt, strings.Join(parts, ","))
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Value is an SSA value of the kernel IR: a block value, or (with Ref set)
// a ref argument of Program.Body or of an index map.
type Value struct {
	// Type is the value's type (for a ref: its element type and block shape).
	Type Type
	// Def is the op that defines the value (nil for region arguments).
	Def *Op
	// ID numbers values within one Program, for printing and maps.
	ID int
	// Ref is the ref's description when the value is a ref argument.
	Ref *RefInfo

	k     *Kernel // the trace that made it
	argOf *Region // the region whose argument it is (nil for op results)
}

// Op is one operation of the kernel IR (see the table on Program).
type Op struct {
	Name     string    // the op table's name ("load", "add", ...)
	Operands []*Value  // in the op table's order
	Results  []*Value  // the values it defines
	Attrs    Attrs     // the attributes its name uses
	Regions  []*Region // the bodies of when, for and while
	Loc      Loc       // the user's file:line
	// Via is the function the user called that made the op as one of its
	// parts ("top_k" for a concatenate TopK emitted), or "".
	Via string

	region *Region // the region holding the op
}

// Attrs are an op's attributes; which fields are set depends on the op.
type Attrs struct {
	Value   any     // const: float64, int64 or bool
	Dim     int     // iota
	Axis    int     // program_id, num_programs, scan, concatenate, slice
	Start   int64   // slice: its first element along Axis
	Dir     string  // cmp
	Dims    []int64 // broadcast_in_dim
	Perm    []int64 // transpose
	Kind    string  // reduce, scan, atomic
	Reverse bool    // scan: from the end of the axis
	Axes    []int64 // reduce
	TransA  bool    // dot
	TransB  bool    // dot
	Indexer Indexer // load, store, atomic
	Format  string  // debug_print
}

// Loc is the user's source position of an op.
type Loc struct {
	File string // the file's base name
	Line int
}

// label is the op's name for errors: "concatenate in top_k" for a part
// of a function built of other ops.
func (op *Op) label() string {
	if op.Via != "" && op.Via != op.Name {
		return op.Name + " in " + op.Via
	}
	return op.Name
}

// String is "file.go:12", or "unknown location".
func (l Loc) String() string {
	if l.File == "" {
		return "unknown location"
	}
	return fmt.Sprintf("%s:%d", l.File, l.Line)
}

// Region is a list of ops with arguments and yielded values.
type Region struct {
	Args  []*Value // its arguments (refs, grid indices, loop counters and carries)
	Ops   []*Op    // run in order
	Yield []*Value // what it gives back (an index map's block indices, a loop's carries)
	// Loc is where an index map's Go function is (zero for other regions,
	// and for the maps Vmap wraps).
	Loc Loc

	parent *Op // the op owning the region (nil for a body or index map)
}

// DimIndexKind says how one dim of a ref is indexed.
type DimIndexKind int

const (
	// DimSlice keeps the dim: elements [start, start+Size); All, Slice and
	// DS are slices.
	DimSlice DimIndexKind = iota
	// DimPoint picks one element and drops the dim (an integer index).
	DimPoint
	// DimArray indexes with an integer array (advanced indexing): the
	// arrays of all DimArray dims broadcast together into the result dims
	// Indexer.ArrayShape, placed at Indexer.ArrayPos.
	DimArray
)

// DimIndex is the index of one ref dim.
type DimIndex struct {
	Kind DimIndexKind // slice, point or array
	// Start is the static start (DimSlice, DimPoint) when Operand < 0.
	Start int64
	// Size is the slice size (DimSlice; 1 otherwise).
	Size int64
	// Operand is the position among the op's dynamic index operands
	// (Op.Operands[1+Operand]) of the dynamic start (DimSlice, DimPoint:
	// an i32 scalar) or of the index array (DimArray: an i32 array of
	// shape Indexer.ArrayShape, broadcast already), -1 when static.
	Operand int
}

// Indexer is the indexing of a load or store: one DimIndex per ref dim.
type Indexer struct {
	Dims []DimIndex // one per ref dim
	// NumOperands is how many dynamic index operands follow the ref.
	NumOperands int
	// ArrayShape is the broadcast shape of the DimArray indices (nil when
	// there are none); ArrayPos is where those dims sit in the result.
	ArrayShape []int64
	ArrayPos   int
	// HasMask, HasOther: a mask (and for loads an "other" value) operand
	// follow.
	HasMask, HasOther bool
	// Shape is the indexed (result) shape.
	Shape []int64
}

// HasArrays reports whether some dim is indexed by an array.
func (ix Indexer) HasArrays() bool { return ix.ArrayShape != nil }

// indexMapOf is the index map of an input or output ref (nil for other
// refs and for specs without one).
func (p *Program) indexMapOf(r *RefInfo) *Region {
	i := r.Index
	switch r.Kind {
	case InputRef:
	case OutputRef:
		i += p.NumInputs
	default:
		return nil
	}
	if i < 0 || i >= len(p.IndexMaps) {
		return nil
	}
	return p.IndexMaps[i]
}

// check reports the first way p breaks the shape a lowering relies on (a
// Program Trace made never does; one built or edited by hand may).
func (p *Program) check() error {
	fail := func(format string, args ...any) error {
		return &Error{Kernel: p.Name, Op: "program", Msg: fmt.Sprintf(format, args...)}
	}
	if p.Body == nil {
		return fail("no body")
	}
	counts := []int{p.NumPrefetch, p.NumInputs, p.NumOutputs, p.NumScratch}
	n := 0
	for _, c := range counts {
		if c < 0 {
			return fail("a negative ref count (NumPrefetch %d, NumInputs %d, NumOutputs %d, NumScratch %d)", counts[0], counts[1], counts[2], counts[3])
		}
		n += c
	}
	if len(p.Refs) != n {
		return fail("%d Refs for %d prefetch, %d input, %d output and %d scratch refs", len(p.Refs), counts[0], counts[1], counts[2], counts[3])
	}
	if len(p.Body.Args) != n {
		return fail("a body of %d arguments for %d refs", len(p.Body.Args), n)
	}
	if len(p.IndexMaps) != p.NumInputs+p.NumOutputs {
		return fail("%d index maps for %d inputs and %d outputs", len(p.IndexMaps), p.NumInputs, p.NumOutputs)
	}
	for i, r := range p.Refs {
		want := RefKind(0)
		for k, c := 0, i; k < len(counts); k++ {
			if c < counts[k] {
				want = RefKind(k)
				break
			}
			c -= counts[k]
		}
		if r.Kind != want || p.Body.Args[i] == nil || p.Body.Args[i].Ref == nil {
			return fail("ref %d is not the body's argument %d of kind %v", i, i, want)
		}
		if len(r.Block) != len(r.ArrayShape) {
			return fail("%s: a block of rank %d for an array of rank %d", r, len(r.Block), len(r.ArrayShape))
		}
	}
	for g, n := range p.Grid {
		if n <= 0 {
			return fail("grid %v: axis %d is not positive", p.Grid, g)
		}
	}
	if gridSteps(p.Grid) < 0 {
		return fail("grid %v has more than 2^63 steps", p.Grid)
	}
	return nil
}

// String prints the program as text, for debugging and golden tests.
func (p *Program) String() string {
	if p == nil {
		return "<nil program>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "kernel %s grid%v\n", p.Name, p.Grid)
	for i, m := range p.IndexMaps {
		if m == nil {
			continue
		}
		fmt.Fprintf(&b, "index_map %d", i)
		printRegion(&b, m, 1)
	}
	b.WriteString("body")
	printRegion(&b, p.Body, 1)
	return b.String()
}

func printRegion(b *strings.Builder, r *Region, depth int) {
	printRegionWith(b, r, depth, func(v *Value) int { return v.ID })
}

// printRegionWith prints r with the value numbers num gives.
func printRegionWith(b *strings.Builder, r *Region, depth int, num func(*Value) int) {
	if r == nil {
		b.WriteString(" <nil>\n")
		return
	}
	ind := strings.Repeat("  ", depth)
	b.WriteString("(")
	for i, a := range r.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%%%d: ", num(a))
		if a.Ref != nil {
			b.WriteString("ref ")
		}
		b.WriteString(a.Type.String())
	}
	b.WriteString(") {\n")
	for _, op := range r.Ops {
		b.WriteString(ind)
		for i, res := range op.Results {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "%%%d", num(res))
		}
		if len(op.Results) > 0 {
			b.WriteString(" = ")
		}
		b.WriteString(op.Name)
		for i, o := range op.Operands {
			if i == 0 {
				b.WriteString(" ")
			} else {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "%%%d", num(o))
		}
		if a := attrString(op); a != "" {
			b.WriteString(" {" + a + "}")
		}
		if len(op.Results) > 0 {
			b.WriteString(" : ")
			for i, res := range op.Results {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(res.Type.String())
			}
		}
		for _, reg := range op.Regions {
			b.WriteString(" ")
			printRegionWith(b, reg, depth+1, num)
		}
		b.WriteString("\n")
	}
	if len(r.Yield) > 0 {
		b.WriteString(ind + "yield")
		for i, y := range r.Yield {
			if i == 0 {
				b.WriteString(" ")
			} else {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "%%%d", num(y))
		}
		b.WriteString("\n")
	}
	b.WriteString(strings.Repeat("  ", depth-1) + "}")
	if depth == 1 {
		b.WriteString("\n")
	}
}

func attrString(op *Op) string {
	a := op.Attrs
	switch op.Name {
	case "const":
		return fmt.Sprintf("value=%v", a.Value)
	case "iota":
		return fmt.Sprintf("dim=%d", a.Dim)
	case "program_id", "num_programs":
		return fmt.Sprintf("axis=%d", a.Axis)
	case "cmp":
		return a.Dir
	case "broadcast_in_dim":
		return fmt.Sprintf("dims=%v", a.Dims)
	case "transpose":
		return fmt.Sprintf("perm=%v", a.Perm)
	case "reduce":
		return fmt.Sprintf("%s axes=%v", a.Kind, a.Axes)
	case "debug_print":
		return strconv.Quote(a.Format)
	case "concatenate":
		return fmt.Sprintf("axis=%d", a.Axis)
	case "slice":
		return fmt.Sprintf("axis=%d start=%d", a.Axis, a.Start)
	case "gather":
		return fmt.Sprintf("axis=%d", a.Axis)
	case "assoc_scan":
		if a.Reverse {
			return fmt.Sprintf("axis=%d reverse", a.Axis)
		}
		return fmt.Sprintf("axis=%d", a.Axis)
	case "scan":
		if a.Reverse {
			return fmt.Sprintf("%s axis=%d reverse", a.Kind, a.Axis)
		}
		return fmt.Sprintf("%s axis=%d", a.Kind, a.Axis)
	case "dot":
		if a.TransA || a.TransB {
			return fmt.Sprintf("trans_a=%v trans_b=%v", a.TransA, a.TransB)
		}
	case "load", "store", "atomic":
		parts := make([]string, len(a.Indexer.Dims))
		for i, d := range a.Indexer.Dims {
			start := fmt.Sprint(d.Start)
			if d.Operand >= 0 {
				start = fmt.Sprintf("$%d", d.Operand)
			}
			switch d.Kind {
			case DimSlice:
				parts[i] = fmt.Sprintf("%s:+%d", start, d.Size)
			case DimPoint:
				parts[i] = start
			case DimArray:
				parts[i] = fmt.Sprintf("[$%d]", d.Operand)
			}
		}
		s := "[" + strings.Join(parts, ", ") + "]"
		if a.Indexer.HasMask {
			s += " masked"
		}
		if a.Kind != "" {
			s = a.Kind + " " + s
		}
		return s
	}
	return ""
}

// inElse reports whether op a lies in the else region of o, a When
// with one (a Cond's false branch).
func inElse(a, o *Op) bool {
	for r := a.region; r != nil && r.parent != nil; r = r.parent.region {
		if r.parent == o {
			return len(o.Regions) > 1 && r == o.Regions[1]
		}
	}
	return false
}
