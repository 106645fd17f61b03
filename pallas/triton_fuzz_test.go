package pallas

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// A randomized differential test of the Triton lowering: random (valid)
// kernels, generated from a seed, run in interpret mode on the interpreter
// and as TTIR on the reference evaluator (runTritonEval), and must give the
// same outputs.
//
// A generated kernel is a small program (fzNode) over the kernel language:
// loads and stores of every indexing form, elementwise ops, casts,
// reductions, scans (cumulative sums, maxima, minima), dots, When, ForLoop
// and While; the call has a 0- to 4-D grid,
// blocked and whole-array refs, index maps of grid indices and prefetched
// values, edge blocks the block size does not divide, and outputs that are
// aliased to an input or stored whole before anything else.
//
// The comparison is exact where both backends must agree bit for bit, and
// within a bound where they may not: the generator tracks, for every value,
// an interval holding its elements and a bound on the difference between
// the backends (fzInfo). Integers, bools and the float ops IEEE defines
// (+ - * /, max, min, floor, fmod, casts) are exact; transcendental
// functions (different libraries), float sums and dots (different orders)
// are not, and such values never reach an op that would amplify a last-bit
// difference into a different result (a comparison, floor, a cast to an
// integer, an index); a kernel whose bounds would grow too large to check
// anything (fzMaxTol) is generated again from the same seed. An exact
// output is compared with tolerance 0, others with assertCloseTol's
// relative tolerance set to the bound. What the backends define
// differently by design is not generated: outputs are never read where the kernel has not written them
// (interpret mode's "uninitialized" values are not the GPU's), no two
// programs write the same output block (they run in parallel on a GPU),
// and a scatter's indices are distinct.
//
// Every twentieth kernel's TTIR is also verified by mlir-opt when it is
// installed (as TestTritonMLIROpt does for the fixed kernels).
//
// PALLAS_FUZZ_N sets the number of kernels (default 200), PALLAS_FUZZ_SEED
// the first seed (default 1): a failure prints the seed, the command that
// reruns it alone and the kernel, one op a line.

func TestTritonRandomKernels(t *testing.T) {
	first, n := fzSeeds(t)
	start := time.Now()
	var stats fzStats
	t.Run("kernels", func(t *testing.T) {
		for i := 0; i < n; i++ {
			seed := first + int64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				fzRun(t, seed, &stats)
			})
		}
	})
	t.Logf("%d random kernels in %v: %d ops, %d outputs compared exactly, %d within a bound (largest %.3g)",
		n, time.Since(start).Round(time.Millisecond), stats.ops, stats.exact, stats.approx, stats.maxTol)
}

// fzSeeds are the random kernels' seeds: n of them from first,
// PALLAS_FUZZ_SEED (default 1) and PALLAS_FUZZ_N (default 200).
func fzSeeds(t *testing.T) (first int64, n int) {
	n, first = 200, 1
	if s := os.Getenv("PALLAS_FUZZ_N"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "PALLAS_FUZZ_N")
		n = v
	}
	if s := os.Getenv("PALLAS_FUZZ_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "PALLAS_FUZZ_SEED")
		first = v
	}
	return first, n
}

type fzStats struct {
	mu                 sync.Mutex
	ops, exact, approx int
	maxTol             float64
}

func (s *fzStats) add(ops, exact, approx int, tol float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops, s.exact, s.approx = s.ops+ops, s.exact+exact, s.approx+approx
	s.maxTol = math.Max(s.maxTol, tol)
}

// fzRun generates the kernel of seed and compares the backends.
func fzRun(t *testing.T, seed int64, stats *fzStats) {
	var c *fzCase
	output := -1
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("panic: %v\n%s", r, debug.Stack())
		}
		if t.Failed() {
			if output >= 0 {
				t.Logf("output %d differs", output)
			}
			t.Logf("rerun: PALLAS_FUZZ_SEED=%d PALLAS_FUZZ_N=1 go test ./pallas -run TestTritonRandomKernels -v", seed)
			if c != nil {
				t.Logf("kernel:\n%s", c)
			}
		}
	}()
	c = fzGenerate(seed)
	spec := c.spec()
	args := c.args()
	want, err := runCall(c.kernel(), spec, args...)
	require.NoError(t, err, "interpret mode")
	got := runTritonEval(t, tritonCase{name: spec.Name, kernel: c.kernel(), spec: spec, args: args})
	require.Len(t, got, len(want))
	tol := c.tolerances()
	for i := range want {
		output = i
		rel := tol[i]
		require.False(t, math.IsNaN(rel) || math.IsInf(rel, 0), "output %d: no error bound", i)
		if rel == 0 {
			stats.add(0, 1, 0, 0)
		} else {
			stats.add(0, 0, 1, rel)
		}
		if want[i].Shape.DType == xla.Float64 {
			rel *= 1e7 // assertCloseTol scales f64 tolerances by 1e-7
		}
		assertCloseTol(t, want[i], got[i], rel)
	}
	output = -1
	stats.add(c.countOps(c.body), 0, 0, 0)
	// Every twentieth kernel's TTIR goes through mlir-opt too (when present):
	// the evaluator does not check every typing rule of the ops.
	if opt := fzMLIROpt(); opt != "" && seed%20 == 0 {
		p, err := Trace(c.kernel(), spec, argTypes(args))
		require.NoError(t, err)
		k, err := LowerTriton(p, CompilerParams{})
		require.NoError(t, err)
		_, err = mliropt.Run(opt, k.IR)
		require.NoError(t, err, "--- input ---\n%s", k.IR)
	}
}

var fzMLIROpt = sync.OnceValue(mliropt.Path)

// ---------------------------------------------------------------------
// Value types and bounds.

type fzType struct {
	dt    xla.DType
	shape []int64
}

func (t fzType) String() string { return shapeString(t.dt, t.shape) }

func (t fzType) size() int64 { return Type{Shape: t.shape}.Size() }

// fzInfo bounds a value: lo..hi holds each element that is not NaN (on
// both backends), and an element differs between the backends by at most
// ea + er*|x|. ea = er = 0: the backends agree bit for bit.
type fzInfo struct {
	lo, hi float64
	ea, er float64
}

func (f fzInfo) exact() bool { return f.ea == 0 && f.er == 0 }

func (f fzInfo) mag() float64 { return math.Max(math.Abs(f.lo), math.Abs(f.hi)) }

// abs is the difference bound as an absolute one.
func (f fzInfo) abs() float64 {
	if f.er == 0 {
		return f.ea
	}
	return f.ea + f.er*f.mag()
}

// minAbs is the smallest |x| of the interval.
func (f fzInfo) minAbs() float64 {
	switch {
	case f.lo > 0:
		return f.lo
	case f.hi < 0:
		return -f.hi
	}
	return 0
}

func fzJoin(a, b fzInfo) fzInfo {
	return fzInfo{lo: math.Min(a.lo, b.lo), hi: math.Max(a.hi, b.hi), ea: math.Max(a.ea, b.ea), er: math.Max(a.er, b.er)}
}

// fzU is the unit roundoff of a float type.
func fzU(dt xla.DType) float64 {
	switch dt {
	case xla.Float16:
		return 0x1p-11
	case xla.BFloat16:
		return 0x1p-8
	case xla.Float64:
		return 0x1p-53
	}
	return 0x1p-24
}

// fzTiny is the spacing of a float type's subnormals.
func fzTiny(dt xla.DType) float64 {
	switch dt {
	case xla.Float16:
		return 0x1p-24
	case xla.Float64:
		return 0
	}
	return 0x1p-149
}

func fzNarrow(dt xla.DType) bool { return dt == xla.Float16 || dt == xla.BFloat16 }

// fzLib is the difference of two math libraries' results: 8 ulps of f32
// (f16 and bf16 compute in f32), and one ulp more where the result is
// rounded to a narrow type.
func fzLib(dt xla.DType, f fzInfo) fzInfo {
	if dt == xla.Float64 {
		f.er += 16 * fzU(xla.Float64)
		return f
	}
	f.er += 16 * fzU(xla.Float32)
	f.ea += fzTiny(xla.Float32)
	if fzNarrow(dt) {
		f.er += 2 * fzU(dt)
		f.ea += fzTiny(dt)
	}
	return f
}

// fzRange is the range of a dtype's values.
func fzRange(dt xla.DType) (float64, float64) {
	switch {
	case dt.IsBool():
		return 0, 1
	case dt.IsFloat():
		return math.Inf(-1), math.Inf(1)
	case dt == xla.Uint64:
		return 0, math.Ldexp(1, 64) - 1
	}
	lo, hi := intRange(dt)
	return float64(lo), float64(hi)
}

// fzWrap widens an integer interval past its type's range (the value
// wrapped) to the whole range; NaN bounds (Inf - Inf) become infinite.
func fzWrap(dt xla.DType, lo, hi float64) (float64, float64) {
	if math.IsNaN(lo) {
		lo = math.Inf(-1)
	}
	if math.IsNaN(hi) {
		hi = math.Inf(1)
	}
	if dt.IsFloat() {
		return lo, hi
	}
	tlo, thi := fzRange(dt)
	if lo < tlo || hi > thi {
		return tlo, thi
	}
	return lo, hi
}

func fzMul(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a * b
}

func fzCorners(f func(x, y float64) float64, a, b fzInfo) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range []float64{a.lo, a.hi} {
		for _, y := range []float64{b.lo, b.hi} {
			v := f(x, y)
			if math.IsNaN(v) {
				return math.Inf(-1), math.Inf(1)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return lo, hi
}

// fzScalarValue is the value a Go scalar operand takes in dtype dt.
func fzScalarValue(sc any, dt xla.DType) float64 {
	var v float64
	switch x := sc.(type) {
	case nil:
		v = 0
	case int:
		v = float64(x)
	case int64:
		v = float64(x)
	case float64:
		v = x
	case bool:
		if x {
			v = 1
		}
	default:
		panic(fmt.Sprintf("scalar %T", sc))
	}
	switch dt {
	case xla.Float32:
		v = float64(float32(v))
	case xla.Float16:
		v = float64(xla.F16FromFloat32(float32(v)).Float32())
	case xla.BFloat16:
		v = float64(xla.BF16FromFloat32(float32(v)).Float32())
	}
	return v
}

func fzScalarInfo(sc any, dt xla.DType) fzInfo {
	v := fzScalarValue(sc, dt)
	return fzInfo{lo: v, hi: v}
}

// ---------------------------------------------------------------------
// The kernel program.

// fzIdx indexes one dim of a ref.
type fzIdx struct {
	kind  byte  // 'a' All, 's' Slice, 'd' DS, 'p' an integer, 'x' an index array
	start int64 // 's'; 'd' and 'p' when v < 0
	size  int64 // 's', 'd'
	v     int   // 'd', 'p': the start value (-1: static); 'x': the array
}

type fzRegion struct {
	args  []int
	nodes []*fzNode
	yield []int
}

// fzNode is one op of a generated kernel; its results are values numbered
// in fzCase.types.
type fzNode struct {
	kind string
	out  []int
	in   []int
	t    fzType // type of out[0]
	op   string // unary, binary, reduce and scan ops, cmp direction
	sc   any    // const value; a binary op's, where's or store's Go scalar operand; a masked load's scalar other
	dim  int    // iota dim, program_id/num_programs axis, scan axis
	perm []int64
	axes []int
	// dot
	transA, transB bool
	rev            bool // scan: Reverse
	custom         bool // scan: through AssociativeScan with the op as combine
	parts, part    int  // split: into parts, the part kept
	pref           xla.DType
	// load, store, bmask
	ref    int
	idx    []fzIdx
	trim   bool // leave trailing All indices out
	mask   int  // -1: none
	masked bool // load: masked (other is otherV, else sc)
	otherV int
	chk    []byte // bmask: per ref dim, 'b' check the ref's bounds, 'a' the array's too
	pos    []int  // bmask: result dim of each ref dim (-1 array, -2 point)
	apos   int
	// for, while
	loV, hiV   int // for: lo/hi values (-1: loC/hiC)
	loC, hiC   int64
	regions    []*fzRegion
	trips      int     // a bound on the iterations
	ivLo, ivHi float64 // for: the counter's range
}

// fzRef is a kernel ref with its operand.
type fzRef struct {
	kind  RefKind
	index int // among refs of its kind
	dt    xla.DType
	array []int64
	block []int64 // nil: the whole array
	imap  []fzIE  // per array dim (blocked refs)
	data  *interpreter.Tensor
	lo    float64 // bounds of data
	hi    float64
	// outputs
	alias int  // the operand it starts as, -1
	exact bool // only exact values are stored (it may be loaded)
	full  bool // stored whole before anything else (not aliased)
	ready bool // (generating) may be loaded and partly stored
	// inputs
	initOf int // the output it is the initial value of (never loaded), -1
	// prefetch
	permAxis int // a permutation of [0, grid[permAxis]), -1: values in [0, 16)
}

// view is the ref's shape as the kernel sees it.
func (r *fzRef) view() []int64 {
	if r.block == nil {
		return r.array
	}
	var v []int64
	for _, b := range r.block {
		if b != Squeezed {
			v = append(v, b)
		}
	}
	return v
}

// viewDims maps the kernel's dims to array dims.
func (r *fzRef) viewDims() []int {
	var v []int
	for d := range r.array {
		if r.block == nil || r.block[d] != Squeezed {
			v = append(v, d)
		}
	}
	return v
}

// paddedDim reports whether array dim d has a padded edge block.
func (r *fzRef) paddedDim(d int) bool {
	return r.block != nil && r.block[d] != Squeezed && r.array[d]%r.block[d] != 0
}

func (r *fzRef) padded() bool {
	for d := range r.array {
		if r.paddedDim(d) {
			return true
		}
	}
	return false
}

func (r *fzRef) name() string {
	switch r.kind {
	case PrefetchRef:
		return fmt.Sprintf("pf%d", r.index)
	case InputRef:
		return fmt.Sprintf("in%d", r.index)
	}
	return fmt.Sprintf("out%d", r.index)
}

// fzIE is one block index of an index map.
type fzIE struct {
	kind byte  // 'c' constant, 'g' g[a], 'r' grid[a]-1-g[a], 'l' g[a]*grid[b]+g[b], 'm' (g[a]+c)%n, 'p' pf[j][g[a]], 'q' pf[j][g[a]]%n
	c    int64 // 'c', 'm'
	a, b int
	j    int
	n    int64
}

func (ie fzIE) build(grid []int64, g []*Value, pf []*Ref) any {
	switch ie.kind {
	case 'c':
		return int(ie.c)
	case 'g':
		return g[ie.a]
	case 'r':
		return g[ie.a].Mul(-1).Add(int(grid[ie.a] - 1))
	case 'l':
		return g[ie.a].Mul(int(grid[ie.b])).Add(g[ie.b])
	case 'm':
		return g[ie.a].Add(int(ie.c)).Rem(int(ie.n))
	case 'p':
		return pf[ie.j].Load(g[ie.a])
	case 'q':
		return pf[ie.j].Load(g[ie.a]).Rem(int(ie.n))
	}
	panic("index expression " + string(ie.kind))
}

func (ie fzIE) String() string {
	switch ie.kind {
	case 'c':
		return fmt.Sprint(ie.c)
	case 'g':
		return fmt.Sprintf("g%d", ie.a)
	case 'r':
		return fmt.Sprintf("(n%d-1-g%d)", ie.a, ie.a)
	case 'l':
		return fmt.Sprintf("(g%d*n%d+g%d)", ie.a, ie.b, ie.b)
	case 'm':
		return fmt.Sprintf("(g%d+%d)%%%d", ie.a, ie.c, ie.n)
	case 'p':
		return fmt.Sprintf("pf%d[g%d]", ie.j, ie.a)
	case 'q':
		return fmt.Sprintf("pf%d[g%d]%%%d", ie.j, ie.a, ie.n)
	}
	return "?"
}

// fzCase is a generated kernel with its call and operands.
type fzCase struct {
	seed          int64
	attempt       int // generated again after attempts with too large bounds
	grid          []int64
	refs          []*fzRef // prefetch, inputs, outputs
	np, nin, nout int
	body          []*fzNode
	types         []fzType // of the values, by number
}

func (c *fzCase) spec() CallSpec {
	s := CallSpec{Name: fmt.Sprintf("fuzz_%d", c.seed), Grid: c.grid, NumScalarPrefetch: c.np}
	for _, r := range c.refs {
		switch r.kind {
		case InputRef:
			s.InSpecs = append(s.InSpecs, c.blockSpec(r))
		case OutputRef:
			s.OutShapes = append(s.OutShapes, xla.MakeShape(r.dt, r.array...))
			s.OutSpecs = append(s.OutSpecs, c.blockSpec(r))
			if r.alias >= 0 {
				if s.InputOutputAliases == nil {
					s.InputOutputAliases = map[int]int{}
				}
				s.InputOutputAliases[r.alias] = r.index
			}
		}
	}
	return s
}

func (c *fzCase) blockSpec(r *fzRef) *BlockSpec {
	if r.block == nil {
		return nil
	}
	imap, grid := r.imap, c.grid
	return &BlockSpec{BlockShape: clone(r.block), IndexMap: func(g []*Value, pf []*Ref) []any {
		out := make([]any, len(imap))
		for d, ie := range imap {
			out[d] = ie.build(grid, g, pf)
		}
		return out
	}}
}

func (c *fzCase) args() []*interpreter.Tensor {
	var out []*interpreter.Tensor
	for _, r := range c.refs {
		if r.kind != OutputRef {
			out = append(out, r.data)
		}
	}
	return out
}

func (c *fzCase) kernel() KernelFunc {
	return func(k *Kernel, refs []*Ref) {
		e := &fzEnv{c: c, k: k, refs: refs, v: make([]*Value, len(c.types))}
		e.exec(c.body)
	}
}

func (c *fzCase) countOps(nodes []*fzNode) int {
	n := 0
	for _, x := range nodes {
		n++
		for _, r := range x.regions {
			n += c.countOps(r.nodes)
		}
	}
	return n
}

// ---------------------------------------------------------------------
// Running a program as a kernel.

type fzEnv struct {
	c    *fzCase
	k    *Kernel
	refs []*Ref
	v    []*Value
}

func (e *fzEnv) exec(nodes []*fzNode) {
	for _, n := range nodes {
		e.node(n)
	}
}

func (e *fzEnv) rhs(n *fzNode, i int) any {
	if len(n.in) > i {
		return e.v[n.in[i]]
	}
	return n.sc
}

func (e *fzEnv) indices(n *fzNode) []any {
	out := make([]any, len(n.idx))
	for d, x := range n.idx {
		switch x.kind {
		case 'a':
			out[d] = All
		case 's':
			out[d] = Slice(x.start, x.start+x.size)
		case 'd':
			if x.v >= 0 {
				out[d] = DS(e.v[x.v], x.size)
			} else {
				out[d] = DS(int(x.start), x.size)
			}
		case 'p':
			if x.v >= 0 {
				out[d] = e.v[x.v]
			} else {
				out[d] = int(x.start)
			}
		case 'x':
			out[d] = e.v[x.v]
		}
	}
	if n.trim {
		for len(out) > 0 && n.idx[len(out)-1].kind == 'a' {
			out = out[:len(out)-1]
		}
	}
	return out
}

func (e *fzEnv) node(n *fzNode) {
	k := e.k
	var r *Value
	x := func(i int) *Value { return e.v[n.in[i]] }
	switch n.kind {
	case "const":
		r = k.Full(n.t.dt, n.sc, n.t.shape...)
	case "iota":
		r = k.Iota(n.t.dt, n.dim, n.t.shape...)
	case "pid":
		r = k.ProgramID(n.dim)
	case "nprog":
		r = k.NumPrograms(n.dim)
	case "unary":
		f := map[string]func(*Value) *Value{
			"neg": (*Value).Neg, "abs": (*Value).Abs, "exp": (*Value).Exp, "log": (*Value).Log,
			"tanh": (*Value).Tanh, "erf": (*Value).Erf, "sqrt": (*Value).Sqrt, "rsqrt": (*Value).Rsqrt,
			"floor": (*Value).Floor, "ceil": (*Value).Ceil, "sin": (*Value).Sin, "cos": (*Value).Cos,
			"logistic": (*Value).Sigmoid, "not": (*Value).Not, "log1p": (*Value).Log1p,
			"expm1": (*Value).Expm1, "tan": (*Value).Tan, "round": (*Value).Round, "sign": (*Value).Sign,
			"exp2": (*Value).Exp2, "log2": (*Value).Log2, "atan": (*Value).Atan, "asinh": (*Value).Asinh,
			"sinh": (*Value).Sinh, "cosh": (*Value).Cosh, "cbrt": (*Value).Cbrt, "acosh": (*Value).Acosh,
			"asin": (*Value).Asin, "acos": (*Value).Acos, "atanh": (*Value).Atanh, "erf_inv": (*Value).ErfInv,
			"erfc":   (*Value).Erfc,
			"popcnt": (*Value).PopCount, "clz": (*Value).CountLeadingZeros,
		}[n.op]
		r = f(x(0))
	case "binary":
		f := map[string]func(*Value, any) *Value{
			"add": (*Value).Add, "sub": (*Value).Sub, "mul": (*Value).Mul, "div": (*Value).Div,
			"rem": (*Value).Rem, "max": (*Value).Max, "min": (*Value).Min, "pow": (*Value).Pow,
			"and": (*Value).And, "or": (*Value).Or, "xor": (*Value).Xor, "shl": (*Value).Shl, "shr": (*Value).Shr,
		}[n.op]
		r = f(x(0), e.rhs(n, 1))
	case "cmp":
		f := map[string]func(*Value, any) *Value{
			"EQ": (*Value).Eq, "NE": (*Value).Ne, "LT": (*Value).Lt, "LE": (*Value).Le, "GT": (*Value).Gt, "GE": (*Value).Ge,
		}[n.op]
		r = f(x(0), e.rhs(n, 1))
	case "where":
		r = Where(x(0), x(1), e.rhs(n, 2))
	case "split":
		r = Split(x(0), n.dim, n.parts)[n.part]
	case "gather":
		r = TakeAlongAxis(x(0), x(1), n.dim)
	case "concat":
		if n.op == "stack" {
			r = Stack(n.dim, e.vals(n.in)...)
		} else {
			r = Concatenate(n.dim, e.vals(n.in)...)
		}
	case "convert":
		r = x(0).Astype(n.t.dt)
	case "bcast":
		r = x(0).BroadcastTo(n.t.shape...)
	case "reshape":
		r = x(0).Reshape(n.t.shape...)
	case "transpose":
		r = x(0).Transpose(n.perm...)
	case "reduce":
		switch n.op {
		case "sum":
			r = x(0).Sum(n.axes...)
		case "max":
			r = x(0).ReduceMax(n.axes...)
		case "min":
			r = x(0).ReduceMin(n.axes...)
		}
	case "scan":
		order := Forward
		if n.rev {
			order = Reverse
		}
		if n.custom {
			f := map[string]func(*Value, any) *Value{"sum": (*Value).Add, "max": (*Value).Max, "min": (*Value).Min}[n.op]
			r = AssociativeScan(n.dim, order, func(a, b []*Value) []*Value { return []*Value{f(a[0], b[0])} }, x(0))[0]
		} else {
			r = scanOf(x(0), n.op, n.dim, order)
		}
	case "dot":
		r = DotTransposed(x(0), x(1), n.transA, n.transB, n.pref)
	case "load":
		ref := e.refs[n.ref]
		if !n.masked {
			r = ref.Load(e.indices(n)...)
			break
		}
		var other any = n.sc
		if n.otherV >= 0 {
			other = e.v[n.otherV]
		}
		r = Load(ref, e.indices(n), e.v[n.mask], other)
	case "store":
		var mask *Value
		if n.mask >= 0 {
			mask = e.v[n.mask]
		}
		if mask == nil && !n.trim && len(n.idx) == 0 {
			e.refs[n.ref].Store(e.rhs(n, 0))
		} else {
			Store(e.refs[n.ref], e.indices(n), e.rhs(n, 0), mask)
		}
	case "bmask":
		r = e.boundsMask(n)
	case "when":
		k.When(x(0), func() { e.exec(n.regions[0].nodes) })
	case "cond":
		branch := func(r *fzRegion) func() []*Value {
			return func() []*Value { e.exec(r.nodes); return e.vals(r.yield) }
		}
		e.setAll(n.out, k.Cond(x(0), branch(n.regions[0]), branch(n.regions[1])))
	case "for":
		var lo, hi any = int(n.loC), int(n.hiC)
		if n.loV >= 0 {
			lo = e.v[n.loV]
		}
		if n.hiV >= 0 {
			hi = e.v[n.hiV]
		}
		res := k.ForLoop(lo, hi, e.vals(n.in), func(i *Value, c []*Value) []*Value {
			body := n.regions[0]
			e.v[body.args[0]] = i
			for j, a := range body.args[1:] {
				e.v[a] = c[j]
			}
			e.exec(body.nodes)
			return e.vals(body.yield)
		})
		e.setAll(n.out, res)
	case "while":
		cond, body := n.regions[0], n.regions[1]
		res := k.While(e.vals(n.in), func(c []*Value) *Value {
			e.setAll(cond.args, c)
			e.exec(cond.nodes)
			return e.v[cond.yield[0]]
		}, func(c []*Value) []*Value {
			e.setAll(body.args, c)
			e.exec(body.nodes)
			return e.vals(body.yield)
		})
		e.setAll(n.out, res)
	default:
		panic("fuzz node " + n.kind)
	}
	if r != nil {
		e.v[n.out[0]] = r
	}
}

func (e *fzEnv) vals(ids []int) []*Value {
	out := make([]*Value, len(ids))
	for i, id := range ids {
		out[i] = e.v[id]
	}
	return out
}

func (e *fzEnv) setAll(ids []int, vs []*Value) {
	for i, id := range ids {
		e.v[id] = vs[i]
	}
}

// boundsMask computes, with kernel ops, whether each element an indexer
// reaches lies inside the ref (chk 'b') and, for 'a', inside the array
// (not in the padding of an edge block), as a kernel masks its accesses.
func (e *fzEnv) boundsMask(n *fzNode) *Value {
	k := e.k
	r := e.c.refs[n.ref]
	view, vdims := r.view(), r.viewDims()
	shape := n.t.shape
	var m *Value
	for d, x := range n.idx {
		if n.chk[d] == 0 {
			continue
		}
		var at *Value
		switch x.kind {
		case 'a', 's', 'd':
			at = k.Iota(xla.Int32, n.pos[d], shape...)
			switch {
			case x.kind == 's':
				at = at.Add(int(x.start))
			case x.kind == 'd' && x.v >= 0:
				at = at.Add(e.v[x.v].Astype(xla.Int32))
			case x.kind == 'd':
				at = at.Add(int(x.start))
			}
		case 'p':
			if x.v >= 0 {
				at = e.v[x.v].Astype(xla.Int32).BroadcastTo(shape...)
			} else {
				at = k.Full(xla.Int32, int(x.start), shape...)
			}
		case 'x':
			arr := e.v[x.v].Astype(xla.Int32)
			as := arr.Shape()
			ext := make([]int64, len(shape))
			for i := range ext {
				ext[i] = 1
			}
			copy(ext[n.apos:], as)
			at = arr.Reshape(ext...).BroadcastTo(shape...)
		}
		ok := at.Ge(0).And(at.Lt(int(view[d])))
		if n.chk[d] == 'a' && r.paddedDim(vdims[d]) {
			ad := vdims[d]
			g := make([]*Value, len(e.c.grid))
			for a := range g {
				g[a] = k.ProgramID(a)
			}
			var limit any
			switch b := r.imap[ad].build(e.c.grid, g, e.refs[:e.c.np]).(type) {
			case int:
				limit = int(r.array[ad]) - b*int(r.block[ad])
			case *Value:
				limit = b.Astype(xla.Int32).Mul(-int(r.block[ad])).Add(int(r.array[ad]))
			}
			ok = ok.And(at.Lt(limit))
		}
		if m == nil {
			m = ok
		} else {
			m = m.And(ok)
		}
	}
	if m == nil {
		m = k.Full(xla.Bool, true, shape...)
	}
	return m
}

// ---------------------------------------------------------------------
// Bounds of values (used while generating, and again over the whole
// program with loops iterated, for the tolerances).

// fzInfer bounds the result of a one-result node.
func fzInfer(c *fzCase, n *fzNode, get func(int) fzInfo) fzInfo {
	dt := n.t.dt
	arg := func(i int) fzInfo {
		if len(n.in) > i {
			return get(n.in[i])
		}
		return fzScalarInfo(n.sc, c.types[n.in[0]].dt)
	}
	switch n.kind {
	case "const":
		return fzScalarInfo(n.sc, dt)
	case "iota":
		return fzInfo{lo: 0, hi: float64(n.t.shape[n.dim] - 1)}
	case "pid":
		return fzInfo{lo: 0, hi: float64(c.grid[n.dim] - 1)}
	case "nprog":
		g := float64(c.grid[n.dim])
		return fzInfo{lo: g, hi: g}
	case "load":
		f := c.refs[n.ref].contents()
		if n.masked {
			if n.otherV >= 0 {
				f = fzJoin(f, get(n.otherV))
			} else {
				f = fzJoin(f, fzScalarInfo(n.sc, dt))
			}
		}
		return f
	case "cmp", "bmask":
		return fzInfo{lo: 0, hi: 1}
	case "where":
		return fzJoin(arg(1), arg(2))
	case "split", "gather":
		return arg(0)
	case "concat":
		f := arg(0)
		for i := range n.in[1:] {
			f = fzJoin(f, arg(1+i))
		}
		return f
	case "bcast", "reshape", "transpose":
		return arg(0)
	case "unary":
		return fzUnary(n.op, dt, arg(0))
	case "binary":
		return fzBinary(n.op, dt, arg(0), arg(1))
	case "convert":
		return fzConvert(c.types[n.in[0]].dt, dt, arg(0))
	case "reduce":
		x := arg(0)
		cnt := float64(c.types[n.in[0]].size() / n.t.size())
		return fzReduce(n.op, dt, cnt, x)
	case "scan":
		// Its last element along the axis is the reduction of the whole
		// axis (the largest difference bound), its first the operand's.
		x, shape := arg(0), c.types[n.in[0]].shape
		axis := n.dim
		if axis < 0 {
			axis += len(shape)
		}
		r := fzReduce(n.op, dt, float64(shape[axis]), x)
		r.lo, r.hi = fzWrap(dt, math.Min(r.lo, x.lo), math.Max(r.hi, x.hi))
		return r
	case "dot":
		a, b := arg(0), arg(1)
		ta := c.types[n.in[0]]
		r := len(ta.shape)
		kdim := ta.shape[r-1]
		if n.transA {
			kdim = ta.shape[r-2]
		}
		return fzDot(ta.dt, dt, float64(kdim), a, b)
	}
	panic("no bounds for " + n.kind)
}

// contents bounds what a load from r reads (without a mask).
func (r *fzRef) contents() fzInfo {
	if r.kind == OutputRef {
		lo, hi := fzRange(r.dt)
		return fzInfo{lo: lo, hi: hi}
	}
	f := fzInfo{lo: r.lo, hi: r.hi}
	if r.padded() && !r.dt.IsFloat() {
		p := uninitValue(r.dt)
		f.lo, f.hi = math.Min(f.lo, p), math.Max(f.hi, p)
	}
	return f
}

func fzUnary(op string, dt xla.DType, x fzInfo) fzInfo {
	r := fzInfo{ea: x.ea, er: x.er}
	mono := func(f func(float64) float64) { r.lo, r.hi = f(x.lo), f(x.hi) }
	// lip: an absolute difference through a function of Lipschitz
	// constant l, then the libraries' own.
	lip := func(l float64) fzInfo {
		out := fzInfo{lo: r.lo, hi: r.hi}
		if !x.exact() {
			out.ea = l * x.abs() * 1.01
		}
		return fzLib(dt, out)
	}
	switch op {
	case "neg":
		r.lo, r.hi = fzWrap(dt, -x.hi, -x.lo)
		if dt.IsUnsigned() && (x.lo != 0 || x.hi != 0) {
			r.lo, r.hi = fzRange(dt)
		}
		return r
	case "abs":
		switch {
		case dt.IsUnsigned() || x.lo >= 0:
			r.lo, r.hi = x.lo, x.hi
		case x.hi <= 0:
			r.lo, r.hi = -x.hi, -x.lo
		default:
			r.lo, r.hi = 0, math.Max(-x.lo, x.hi)
		}
		if tlo, _ := fzRange(dt); !dt.IsFloat() && x.lo == tlo {
			r.lo = tlo // abs(MIN) = MIN
		}
		r.lo, r.hi = fzWrap(dt, r.lo, r.hi)
		return r
	case "floor", "ceil", "round":
		switch op {
		case "floor":
			mono(math.Floor)
		case "ceil":
			mono(math.Ceil)
		default:
			mono(math.RoundToEven)
		}
		if !x.exact() {
			r.ea = math.Inf(1) // never generated: a last-bit difference can move a whole unit
		}
		return r
	case "popcnt", "clz":
		return fzInfo{lo: 0, hi: float64(dt.Bits())}
	case "not":
		if dt.IsBool() {
			return fzInfo{lo: 0, hi: 1}
		}
		if _, hi := fzRange(dt); dt.IsUnsigned() {
			return fzInfo{lo: hi - x.hi, hi: hi - x.lo}
		}
		return fzInfo{lo: -x.hi - 1, hi: -x.lo - 1}
	case "sign":
		sign := func(v float64) float64 {
			switch {
			case v > 0:
				return 1
			case v < 0:
				return -1
			}
			return 0
		}
		mono(sign) // non-decreasing
		if !x.exact() {
			r.ea = math.Inf(1) // never generated: a last-bit difference can flip it
		}
		return r
	case "log1p":
		mono(math.Log1p)
		return lip(1) // of x >= 0
	case "expm1":
		mono(math.Expm1)
		return lip(math.Exp(math.Max(x.hi, 0)))
	case "tan":
		mono(math.Tan)
		return lip(1 / math.Pow(math.Cos(math.Max(-x.lo, x.hi)), 2)) // of |x| <= 1
	case "exp":
		mono(math.Exp)
		out := fzInfo{lo: r.lo, hi: r.hi}
		if !x.exact() {
			out.er = math.Expm1(x.abs()) * 1.01
		}
		return fzLib(dt, out)
	case "log":
		mono(math.Log)
		if x.lo <= 0 {
			r.lo = math.Inf(-1)
		}
		if x.exact() {
			return fzLib(dt, fzInfo{lo: r.lo, hi: r.hi})
		}
		// x(1+e)+a with |e| <= er, |a| <= ea: log differs by at most
		// -log(1 - er - ea/lo).
		d := x.er + x.ea/x.lo
		if x.lo <= 0 || d >= 0.5 {
			return fzInfo{lo: r.lo, hi: r.hi, ea: math.Inf(1)}
		}
		return fzLib(dt, fzInfo{lo: r.lo, hi: r.hi, ea: -math.Log1p(-d) * 1.01})
	case "log2": // log's bounds over ln 2
		f := fzUnary("log", dt, x)
		f.lo, f.hi, f.ea = f.lo/math.Ln2, f.hi/math.Ln2, f.ea/math.Ln2
		return f
	case "exp2": // exp of x·ln 2
		mono(math.Exp2)
		out := fzInfo{lo: r.lo, hi: r.hi}
		if !x.exact() {
			out.er = math.Expm1(x.abs()*math.Ln2) * 1.01
		}
		return fzLib(dt, out)
	case "atan", "asinh":
		mono(map[string]func(float64) float64{"atan": math.Atan, "asinh": math.Asinh}[op])
		return lip(1)
	case "sinh", "cosh": // of |x| <= 3
		if op == "sinh" {
			mono(math.Sinh)
		} else {
			r.lo, r.hi = math.Cosh(math.Min(math.Abs(x.lo), math.Abs(x.hi))), math.Cosh(math.Max(-x.lo, x.hi))
			if x.lo <= 0 && x.hi >= 0 {
				r.lo = 1
			}
		}
		return lip(math.Cosh(math.Max(-x.lo, x.hi)))
	case "cbrt": // of x >= 0.25
		mono(math.Cbrt)
		return lip(1 / (3 * math.Pow(x.lo, 2.0/3)))
	case "acosh": // of x >= 1.5
		mono(math.Acosh)
		return lip(1 / math.Sqrt(x.lo*x.lo-1))
	case "asin", "atanh", "erf_inv": // of |x| <= 0.5
		mono(map[string]func(float64) float64{"asin": math.Asin, "atanh": math.Atanh, "erf_inv": math.Erfinv}[op])
		return lip(1.34) // the largest slope there: atanh's 4/3
	case "acos": // of |x| <= 0.5, decreasing
		r.lo, r.hi = math.Acos(x.hi), math.Acos(x.lo)
		return lip(1.16)
	case "tanh":
		mono(math.Tanh)
		return lip(1)
	case "erf":
		mono(math.Erf)
		return lip(1.13)
	case "erfc": // decreasing
		r.lo, r.hi = math.Erfc(x.hi), math.Erfc(x.lo)
		return lip(1.13)
	case "logistic":
		mono(func(v float64) float64 { return 1 / (1 + math.Exp(-v)) })
		return lip(0.25)
	case "sin", "cos":
		r.lo, r.hi = -1, 1
		return lip(1)
	case "sqrt", "rsqrt":
		if op == "sqrt" {
			mono(func(v float64) float64 { return math.Sqrt(math.Max(v, 0)) })
		} else {
			r.lo, r.hi = 1/math.Sqrt(x.hi), 1/math.Sqrt(math.Max(x.lo, 0))
		}
		out := fzInfo{lo: r.lo, hi: r.hi}
		switch {
		case x.exact():
		case x.lo > 0 && x.abs() < x.lo/2:
			out.er = 0.5 * (x.ea/x.lo + x.er) * 1.1
		case op == "sqrt":
			out.ea = math.Sqrt(x.abs())
		default:
			out.ea = math.Inf(1)
		}
		return fzLib(dt, out)
	}
	panic("unary " + op)
}

// fzRound adds the rounding of an op whose operands may differ.
func fzRound(dt xla.DType, f fzInfo) fzInfo {
	if f.exact() || !dt.IsFloat() {
		return f
	}
	f.er += 2 * fzU(dt)
	f.ea += fzTiny(dt)
	return f
}

func fzBinary(op string, dt xla.DType, a, b fzInfo) fzInfo {
	var r fzInfo
	exact := a.exact() && b.exact()
	switch op {
	case "sub":
		b.lo, b.hi = -b.hi, -b.lo // and add: fzWrap sees an unsigned result below 0
		fallthrough
	case "add":
		r.lo, r.hi = fzWrap(dt, a.lo+b.lo, a.hi+b.hi)
		if exact {
			return r
		}
		if (a.lo >= 0 && b.lo >= 0) || (a.hi <= 0 && b.hi <= 0) {
			r.ea, r.er = a.ea+b.ea, math.Max(a.er, b.er)
		} else {
			r.ea = a.abs() + b.abs()
		}
		return fzRound(dt, r)
	case "mul":
		r.lo, r.hi = fzCorners(fzMul, a, b)
		r.lo, r.hi = fzWrap(dt, r.lo, r.hi)
		if exact {
			return r
		}
		r.ea = a.ea*(b.mag()+b.abs()) + b.ea*(a.mag()+a.abs())
		r.er = a.er + b.er + a.er*b.er
		return fzRound(dt, r)
	case "div":
		if !dt.IsFloat() {
			m := math.Max(a.mag(), 1)
			if dt.IsUnsigned() {
				if b.lo <= 0 {
					r.lo, r.hi = fzRange(dt) // x / 0 is all ones
				} else {
					r.lo, r.hi = 0, a.hi
				}
				return r
			}
			r.lo, r.hi = fzWrap(dt, -m, m)
			return r
		}
		if b.minAbs() > 0 {
			r.lo, r.hi = fzCorners(func(x, y float64) float64 { return x / y }, a, b)
		} else {
			r.lo, r.hi = math.Inf(-1), math.Inf(1)
		}
		if exact {
			return r
		}
		ym, e := b.minAbs(), b.abs()
		if ym <= e {
			r.ea = math.Inf(1)
			return r
		}
		r.ea = a.ea / (ym - e)
		r.er = (a.er+b.er)/(1-e/ym) + b.ea/(ym-e)
		return fzRound(dt, r)
	case "rem":
		// |x % y| <= |x|, < |y| (x % 0 is x), with the sign of x.
		m := a.mag()
		if b.minAbs() > 0 {
			if dt.IsFloat() {
				m = math.Min(m, b.mag())
			} else {
				m = math.Min(m, b.mag()-1)
			}
		}
		r.lo, r.hi = math.Max(a.lo, -m), math.Min(a.hi, m)
		if a.lo >= 0 {
			r.lo = 0
		}
		if a.hi <= 0 {
			r.hi = 0
		}
		if r.lo > 0 {
			r.lo = 0
		}
		if r.hi < 0 {
			r.hi = 0
		}
		if !exact {
			r.ea = math.Inf(1) // never generated
		}
		return r
	case "max", "min":
		if op == "max" {
			r.lo, r.hi = math.Max(a.lo, b.lo), math.Max(a.hi, b.hi)
		} else {
			r.lo, r.hi = math.Min(a.lo, b.lo), math.Min(a.hi, b.hi)
		}
		r.ea, r.er = math.Max(a.ea, b.ea), math.Max(a.er, b.er)
		return r
	case "pow":
		r.lo, r.hi = fzCorners(math.Pow, a, b)
		if a.lo <= 0 {
			r.lo, r.hi = math.Inf(-1), math.Inf(1)
		}
		out := fzInfo{lo: r.lo, hi: r.hi}
		if !exact {
			if a.lo <= a.abs() {
				out.ea = math.Inf(1)
				return out
			}
			ln := math.Max(math.Abs(math.Log(a.lo)), math.Abs(math.Log(a.hi)))
			d := b.mag()*(a.abs()/(a.lo-a.abs()))*1.01 + ln*b.abs()
			out.er = math.Expm1(d) * 1.01
		}
		return fzLib(dt, out)
	case "shl", "shr":
		r.lo, r.hi = fzRange(dt) // integers: exact on both backends
		return r
	case "and", "or", "xor":
		switch {
		case dt.IsBool():
			r.lo, r.hi = 0, 1
		case op == "and" && b.lo >= 0:
			r.lo, r.hi = 0, b.hi
		case op == "and" && a.lo >= 0:
			r.lo, r.hi = 0, a.hi
		case a.lo >= 0 && b.lo >= 0:
			r.lo, r.hi = 0, math.Exp2(math.Ceil(math.Log2(math.Max(a.hi, b.hi)+1)))-1
			r.lo, r.hi = fzWrap(dt, r.lo, r.hi)
		default:
			r.lo, r.hi = fzRange(dt)
		}
		return r
	}
	panic("binary " + op)
}

func fzConvert(from, to xla.DType, x fzInfo) fzInfo {
	switch {
	case to.IsBool() || from.IsBool():
		return fzInfo{lo: 0, hi: 1}
	case from.IsFloat() && to.IsFloat():
		r := x
		if fzU(to) > fzU(from) {
			// Rounding may move the bounds by an ulp, or to Inf.
			w := 2 * fzU(to)
			r.lo, r.hi = x.lo-w*math.Abs(x.lo), x.hi+w*math.Abs(x.hi)
			top := math.MaxFloat32
			if to == xla.Float16 {
				top = 65504
			}
			if r.hi > top {
				r.hi = math.Inf(1)
			}
			if r.lo < -top {
				r.lo = math.Inf(-1)
			}
			r = fzRound(to, r)
		}
		return r
	case from.IsFloat():
		lo, hi := fzRange(to)
		r := fzInfo{lo: math.Trunc(math.Max(x.lo, lo)), hi: math.Trunc(math.Min(x.hi, hi))}
		r.lo, r.hi = math.Min(r.lo, 0), math.Max(r.hi, 0) // NaN gives 0
		if !x.exact() {
			r.ea = math.Inf(1) // never generated
		}
		return r
	case to.IsFloat():
		w := 2 * fzU(to)
		return fzInfo{lo: x.lo - w*math.Abs(x.lo), hi: x.hi + w*math.Abs(x.hi)}
	}
	lo, hi := fzRange(to)
	if x.lo >= lo && x.hi <= hi {
		return fzInfo{lo: x.lo, hi: x.hi}
	}
	return fzInfo{lo: lo, hi: hi}
}

func fzReduce(op string, dt xla.DType, n float64, x fzInfo) fzInfo {
	if op != "sum" || n == 1 {
		return x
	}
	r := fzInfo{}
	r.lo, r.hi = fzWrap(dt, fzMul(n, x.lo), fzMul(n, x.hi))
	if !dt.IsFloat() {
		return r
	}
	u := fzU(xla.Float32)
	if dt == xla.Float64 {
		u = fzU(xla.Float64)
	}
	if x.lo >= 0 || x.hi <= 0 {
		r.ea, r.er = n*x.ea, x.er+2*n*u
	} else {
		r.ea = n*x.abs() + 2*n*n*u*x.mag()
	}
	if fzNarrow(dt) {
		r.er += 2 * fzU(dt)
		r.ea += fzTiny(dt)
	}
	return r
}

func fzDot(in, out xla.DType, k float64, a, b fzInfo) fzInfo {
	ma, mb := a.mag(), b.mag()
	m := k * fzMul(ma, mb)
	r := fzInfo{lo: -m, hi: m}
	if !in.IsFloat() {
		r.lo, r.hi = fzWrap(out, r.lo, r.hi)
		return r
	}
	u := fzU(xla.Float32)
	acc := xla.Float32
	if in == xla.Float64 || out == xla.Float64 {
		u, acc = fzU(xla.Float64), xla.Float64
	}
	ea, eb := a.abs(), b.abs()
	r.ea = k*(ma*eb+mb*ea+ea*eb) + 2*k*k*u*fzMul(ma, mb) + fzTiny(acc)
	if fzU(out) > u {
		r.er += 2 * fzU(out)
		r.ea += fzTiny(out)
	}
	return r
}

// ---------------------------------------------------------------------
// The analysis of a whole program: bounds with loops iterated, and the
// difference bound of each output.

type fzAnalysis struct {
	c    *fzCase
	info []fzInfo
	out  map[int]float64 // ref -> largest difference bound stored
}

func (c *fzCase) tolerances() []float64 {
	a := &fzAnalysis{c: c, info: make([]fzInfo, len(c.types)), out: map[int]float64{}}
	a.region(c.body)
	tol := make([]float64, c.nout)
	for i := range tol {
		tol[i] = a.out[c.np+c.nin+i]
	}
	return tol
}

func (a *fzAnalysis) get(id int) fzInfo { return a.info[id] }

func (a *fzAnalysis) region(nodes []*fzNode) {
	for _, n := range nodes {
		a.node(n)
	}
}

func (a *fzAnalysis) node(n *fzNode) {
	switch n.kind {
	case "store":
		f := fzInfo{}
		if len(n.in) > 0 {
			f = a.info[n.in[0]]
		}
		e := f.ea + f.er
		if f.exact() {
			e = 0
		}
		a.out[n.ref] = math.Max(a.out[n.ref], e)
	case "when":
		a.region(n.regions[0].nodes)
	case "cond":
		then, els := n.regions[0], n.regions[1]
		a.region(then.nodes)
		a.region(els.nodes)
		for i, id := range n.out {
			a.info[id] = fzJoin(a.info[then.yield[i]], a.info[els.yield[i]])
		}
	case "for", "while":
		carry := make([]fzInfo, len(n.in))
		for i, id := range n.in {
			carry[i] = a.info[id]
		}
		for it := 0; it <= n.trips; it++ {
			for _, r := range n.regions {
				args := r.args
				if n.kind == "for" {
					a.info[args[0]] = fzInfo{lo: n.ivLo, hi: n.ivHi}
					args = args[1:]
				}
				for i, id := range args {
					a.info[id] = carry[i]
				}
				a.region(r.nodes)
			}
			body := n.regions[len(n.regions)-1]
			for i, y := range body.yield {
				carry[i] = fzJoin(carry[i], a.info[y])
			}
		}
		for i, id := range n.out {
			a.info[id] = carry[i]
		}
	default:
		a.info[n.out[0]] = fzInfer(a.c, n, a.get)
	}
}

// ---------------------------------------------------------------------
// Printing.

func (c *fzCase) String() string {
	var b strings.Builder
	if c.attempt > 0 {
		fmt.Fprintf(&b, "(attempt %d)\n", c.attempt)
	}
	fmt.Fprintf(&b, "grid %v\n", c.grid)
	for _, r := range c.refs {
		b.WriteString("  " + r.describe() + "\n")
	}
	b.WriteString("body:\n")
	c.print(&b, c.body, 1)
	return b.String()
}

func (r *fzRef) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", r.name(), shapeString(r.dt, r.array))
	if r.block != nil {
		parts := make([]string, len(r.block))
		ies := make([]string, len(r.imap))
		for d, x := range r.block {
			parts[d] = fmt.Sprint(x)
			if x == Squeezed {
				parts[d] = "sq"
			}
			ies[d] = r.imap[d].String()
		}
		fmt.Fprintf(&b, " block [%s] map (%s)", strings.Join(parts, ","), strings.Join(ies, ", "))
		if r.padded() {
			b.WriteString(" padded")
		}
	}
	switch {
	case r.kind == OutputRef && r.alias >= 0:
		fmt.Fprintf(&b, " starts as operand %d", r.alias)
	case r.kind == OutputRef:
		b.WriteString(" stored whole first")
	case r.initOf >= 0:
		fmt.Fprintf(&b, " (initial value of out%d)", r.initOf)
	}
	if r.kind == OutputRef && r.exact {
		b.WriteString(" exact")
	}
	if r.data != nil {
		fmt.Fprintf(&b, " data %s", fzData(r.data))
	}
	return b.String()
}

// fzData prints a tensor's first elements.
func fzData(x *interpreter.Tensor) string {
	s := fmt.Sprint(x.Data)
	const max = 160
	if len(s) > max {
		s = s[:max] + "...]"
	}
	return s
}

func (c *fzCase) print(b *strings.Builder, nodes []*fzNode, depth int) {
	ind := strings.Repeat("  ", depth)
	for _, n := range nodes {
		b.WriteString(ind)
		switch n.kind {
		case "when":
			fmt.Fprintf(b, "when v%d {\n", n.in[0])
			c.print(b, n.regions[0].nodes, depth+1)
			b.WriteString(ind + "}\n")
			continue
		case "cond":
			then, els := n.regions[0], n.regions[1]
			fmt.Fprintf(b, "%s = cond v%d {\n", fzVals(n.out), n.in[0])
			c.print(b, then.nodes, depth+1)
			fmt.Fprintf(b, "%s  yield %s\n%s} else {\n", ind, fzVals(then.yield), ind)
			c.print(b, els.nodes, depth+1)
			fmt.Fprintf(b, "%s  yield %s\n%s}\n", ind, fzVals(els.yield), ind)
			continue
		case "for":
			lo, hi := fmt.Sprint(n.loC), fmt.Sprint(n.hiC)
			if n.loV >= 0 {
				lo = fmt.Sprintf("v%d", n.loV)
			}
			if n.hiV >= 0 {
				hi = fmt.Sprintf("v%d", n.hiV)
			}
			r := n.regions[0]
			fmt.Fprintf(b, "%s = for v%d in [%s, %s) carry %s as %s {\n", fzVals(n.out), r.args[0], lo, hi, fzVals(n.in), fzVals(r.args[1:]))
			c.print(b, r.nodes, depth+1)
			fmt.Fprintf(b, "%s  yield %s\n%s}\n", ind, fzVals(r.yield), ind)
			continue
		case "while":
			cond, body := n.regions[0], n.regions[1]
			fmt.Fprintf(b, "%s = while carry %s\n%scond %s {\n", fzVals(n.out), fzVals(n.in), ind, fzVals(cond.args))
			c.print(b, cond.nodes, depth+1)
			fmt.Fprintf(b, "%s  yield %s\n%s} body %s {\n", ind, fzVals(cond.yield), ind, fzVals(body.args))
			c.print(b, body.nodes, depth+1)
			fmt.Fprintf(b, "%s  yield %s\n%s}\n", ind, fzVals(body.yield), ind)
			continue
		case "store":
			fmt.Fprintf(b, "store %s%s = %s", c.refs[n.ref].name(), c.idxString(n), c.operand(n, 0))
			if n.mask >= 0 {
				fmt.Fprintf(b, " mask v%d", n.mask)
			}
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(b, "v%d = ", n.out[0])
		switch n.kind {
		case "const":
			fmt.Fprintf(b, "const %v", n.sc)
		case "iota":
			fmt.Fprintf(b, "iota dim %d", n.dim)
		case "pid":
			fmt.Fprintf(b, "program_id %d", n.dim)
		case "nprog":
			fmt.Fprintf(b, "num_programs %d", n.dim)
		case "unary", "convert", "bcast", "reshape":
			op := n.op
			if op == "" {
				op = n.kind
			}
			fmt.Fprintf(b, "%s v%d", op, n.in[0])
		case "transpose":
			fmt.Fprintf(b, "transpose v%d %v", n.in[0], n.perm)
		case "binary":
			fmt.Fprintf(b, "%s v%d, %s", n.op, n.in[0], c.operand(n, 1))
		case "cmp":
			fmt.Fprintf(b, "cmp %s v%d, %s", n.op, n.in[0], c.operand(n, 1))
		case "where":
			fmt.Fprintf(b, "where v%d, v%d, %s", n.in[0], n.in[1], c.operand(n, 2))
		case "concat":
			fmt.Fprintf(b, "%s %s axis %d", n.op, fzVals(n.in), n.dim)
		case "split":
			fmt.Fprintf(b, "split v%d axis %d into %d, part %d", n.in[0], n.dim, n.parts, n.part)
		case "gather":
			fmt.Fprintf(b, "take_along_axis v%d at v%d axis %d", n.in[0], n.in[1], n.dim)
		case "reduce":
			fmt.Fprintf(b, "%s v%d axes %v", n.op, n.in[0], n.axes)
		case "scan":
			fmt.Fprintf(b, "cum%s v%d axis %d reverse=%v custom=%v", n.op, n.in[0], n.dim, n.rev, n.custom)
		case "dot":
			fmt.Fprintf(b, "dot v%d, v%d transA=%v transB=%v preferred %v", n.in[0], n.in[1], n.transA, n.transB, n.pref)
		case "load":
			fmt.Fprintf(b, "load %s%s", c.refs[n.ref].name(), c.idxString(n))
			if n.masked {
				other := fmt.Sprint(n.sc)
				if n.otherV >= 0 {
					other = fmt.Sprintf("v%d", n.otherV)
				}
				fmt.Fprintf(b, " mask v%d other %s", n.mask, other)
			}
		case "bmask":
			chk := strings.Map(func(r rune) rune {
				if r == 0 {
					return '-'
				}
				return r
			}, string(n.chk))
			fmt.Fprintf(b, "in_bounds %s%s check %s", c.refs[n.ref].name(), c.idxString(n), chk)
		}
		fmt.Fprintf(b, " : %s\n", n.t)
	}
}

func (c *fzCase) operand(n *fzNode, i int) string {
	if len(n.in) > i {
		return fmt.Sprintf("v%d", n.in[i])
	}
	return fmt.Sprint(n.sc)
}

func (c *fzCase) idxString(n *fzNode) string {
	parts := make([]string, len(n.idx))
	for d, x := range n.idx {
		switch x.kind {
		case 'a':
			parts[d] = ":"
		case 's':
			parts[d] = fmt.Sprintf("%d:%d", x.start, x.start+x.size)
		case 'd':
			s := fmt.Sprint(x.start)
			if x.v >= 0 {
				s = fmt.Sprintf("v%d", x.v)
			}
			parts[d] = fmt.Sprintf("ds(%s, %d)", s, x.size)
		case 'p':
			parts[d] = fmt.Sprint(x.start)
			if x.v >= 0 {
				parts[d] = fmt.Sprintf("v%d", x.v)
			}
		case 'x':
			parts[d] = fmt.Sprintf("[v%d]", x.v)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func fzVals(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("v%d", id)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// ---------------------------------------------------------------------
// Generating.

type fzGen struct {
	r     *rand.Rand
	c     *fzCase
	info  []fzInfo
	scope [][]int    // visible values, innermost region last
	cur   *[]*fzNode // where ops go
	depth int        // region nesting
	deep  int        // recursion of operand generation
	ops   int        // ops emitted
}

const (
	fzMaxOps   = 250
	fzMaxElems = 1024
)

// fzMaxTol is the largest difference bound of an output: a kernel whose
// bounds grow past it (a loop feeding a dot its own inexact result) would
// check little, and is generated again.
const fzMaxTol = 0.05

// fzGenerate makes the kernel of seed.
func fzGenerate(seed int64) *fzCase {
	for attempt := 0; ; attempt++ {
		c := fzGenerateOnce(seed, attempt)
		ok := true
		for _, tol := range c.tolerances() {
			ok = ok && tol <= fzMaxTol
		}
		if ok || attempt == 50 {
			return c
		}
	}
}

func fzGenerateOnce(seed int64, attempt int) *fzCase {
	g := &fzGen{r: rand.New(rand.NewSource(seed + int64(attempt)<<32)), c: &fzCase{seed: seed, attempt: attempt}}
	g.genGrid()
	pf := g.genPrefetch()
	outs := g.genOutputs(pf)
	ins := g.genInputs(pf, outs)
	c := g.c
	c.np, c.nin, c.nout = len(pf), len(ins), len(outs)
	c.refs = append(append(append(c.refs, pf...), ins...), outs...)
	for i, r := range ins {
		if r.initOf >= 0 {
			outs[r.initOf].alias = c.np + i
		}
	}
	g.genBody()
	return c
}

func (g *fzGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *fzGen) intn(n int) int { return g.r.Intn(n) }

// weighted picks an index with the given weights.
func (g *fzGen) weighted(ws ...int) int {
	sum := 0
	for _, w := range ws {
		sum += w
	}
	x := g.intn(sum)
	for i, w := range ws {
		if x < w {
			return i
		}
		x -= w
	}
	return len(ws) - 1
}

// pow2 is a power of two in [1, max].
func (g *fzGen) pow2(max int64) int64 {
	k := 0
	for int64(2)<<k <= max {
		k++
	}
	return 1 << g.intn(k+1)
}

var fzDTypeWeights = []struct {
	dt xla.DType
	w  int
}{
	{xla.Float32, 40}, {xla.Int32, 20}, {xla.Bool, 8}, {xla.Float16, 5}, {xla.BFloat16, 5}, {xla.Int8, 4},
	{xla.Uint8, 4}, {xla.Int64, 4}, {xla.Float64, 4}, {xla.Uint32, 3}, {xla.Int16, 2}, {xla.Uint16, 1}, {xla.Uint64, 2},
}

func (g *fzGen) dtype() xla.DType {
	ws := make([]int, len(fzDTypeWeights))
	for i, x := range fzDTypeWeights {
		ws[i] = x.w
	}
	return fzDTypeWeights[g.weighted(ws...)].dt
}

func (g *fzGen) nontrivialAxes() []int {
	var axes []int
	for a, d := range g.c.grid {
		if d > 1 {
			axes = append(axes, a)
		}
	}
	return axes
}

func (g *fzGen) genGrid() {
	rank := g.weighted(1, 8, 7, 2, 2)
	total := int64(1)
	var grid []int64
	for a := 0; a < rank; a++ {
		d := int64(1 + g.intn(4))
		for total*d > 16 {
			d--
		}
		grid = append(grid, d)
		total *= d
	}
	g.c.grid = grid
}

func (g *fzGen) genPrefetch() []*fzRef {
	var out []*fzRef
	for j, n := 0, g.weighted(6, 3, 1); j < n; j++ {
		r := &fzRef{kind: PrefetchRef, index: j, alias: -1, initOf: -1, permAxis: -1}
		if axes := g.nontrivialAxes(); len(axes) > 0 && g.chance(0.6) {
			a := axes[g.intn(len(axes))]
			perm := g.r.Perm(int(g.c.grid[a]))
			r.permAxis, r.dt, r.array = a, xla.Int32, []int64{g.c.grid[a]}
			r.data = intTensor(r.dt, r.array, func(i int) int64 { return int64(perm[i]) })
			r.lo, r.hi = 0, float64(g.c.grid[a]-1)
		} else {
			r.dt = []xla.DType{xla.Int32, xla.Int32, xla.Int64, xla.Int16, xla.Uint8}[g.intn(5)]
			r.array = []int64{4}
			vals := make([]int64, 4)
			r.lo, r.hi = math.Inf(1), math.Inf(-1)
			for i := range vals {
				vals[i] = int64(g.intn(16))
				r.lo, r.hi = math.Min(r.lo, float64(vals[i])), math.Max(r.hi, float64(vals[i]))
			}
			r.data = intTensor(r.dt, r.array, func(i int) int64 { return vals[i] })
		}
		out = append(out, r)
	}
	return out
}

// inputIE is a block index in [0, nb) for an input's index map.
func (g *fzGen) inputIE(nb int64, pf []*fzRef) fzIE {
	grid := g.c.grid
	opts := []fzIE{{kind: 'c', c: int64(g.intn(int(nb)))}}
	for a, d := range grid {
		if d <= nb {
			opts = append(opts, fzIE{kind: 'g', a: a}, fzIE{kind: 'r', a: a})
		}
		if nb > 1 {
			opts = append(opts, fzIE{kind: 'm', a: a, c: int64(g.intn(4)), n: nb})
		}
		for b, d2 := range grid {
			if b != a && d*d2 <= nb {
				opts = append(opts, fzIE{kind: 'l', a: a, b: b})
			}
		}
	}
	for j, p := range pf {
		switch {
		case p.permAxis >= 0 && grid[p.permAxis] <= nb:
			opts = append(opts, fzIE{kind: 'p', a: p.permAxis, j: j})
		case p.permAxis < 0 && len(grid) > 0:
			opts = append(opts, fzIE{kind: 'q', a: g.intn(len(grid)), j: j, n: nb})
		}
	}
	return opts[g.intn(len(opts))]
}

// blockDims picks power-of-two block sizes with at most max elements.
func (g *fzGen) blockDims(rank int, max int64) []int64 {
	b := make([]int64, rank)
	size := int64(1)
	for d := range b {
		b[d] = g.pow2(16)
		size *= b[d]
	}
	for size > max {
		big := 0
		for d := range b {
			if b[d] > b[big] {
				big = d
			}
		}
		b[big] /= 2
		size /= 2
	}
	return b
}

// pad is how many elements the edge block of b has past the array.
func (g *fzGen) pad(b int64) int64 {
	if b > 1 && g.chance(0.35) {
		return 1 + int64(g.intn(int(b-1)))
	}
	return 0
}

// genOutputs makes outputs whose index maps visit each block from one
// program at most (no races on a GPU): each grid axis of more than one
// program picks the block along its own dim (two axes may share a dim).
func (g *fzGen) genOutputs(pf []*fzRef) []*fzRef {
	var out []*fzRef
	for o, n := 0, 1+g.weighted(5, 3, 1); o < n; o++ {
		r := &fzRef{kind: OutputRef, index: o, dt: g.dtype(), alias: -1, initOf: -1, permAxis: -1}
		if o == 0 && g.chance(0.6) {
			r.dt = []xla.DType{xla.Float32, xla.Float32, xla.Float32, xla.BFloat16, xla.Float16, xla.Float64}[g.intn(6)]
		}
		axes := g.nontrivialAxes()
		g.r.Shuffle(len(axes), func(i, j int) { axes[i], axes[j] = axes[j], axes[i] })
		var groups [][]int
		for len(axes) > 0 {
			if len(axes) >= 2 && (len(groups)+len(axes) > 3 || g.chance(0.2)) {
				groups = append(groups, axes[:2])
				axes = axes[2:]
			} else {
				groups = append(groups, axes[:1])
				axes = axes[1:]
			}
		}
		rank := min(3, max(len(groups), 1)+g.weighted(3, 2, 1))
		if len(groups) == 0 && g.chance(0.1) {
			rank = 0
		}
		if len(groups) == 0 && g.chance(0.3) {
			r.array = g.blockDims(rank, 256) // a whole-array spec
		} else {
			dimOf := g.r.Perm(rank)
			r.imap = make([]fzIE, rank)
			r.block = g.blockDims(rank, 256)
			r.array = make([]int64, rank)
			for d := range r.imap {
				r.imap[d] = fzIE{kind: 'c'}
			}
			nbs := make([]int64, rank)
			for d := range nbs {
				nbs[d] = 1
			}
			for i, grp := range groups {
				d := dimOf[i]
				a := grp[0]
				if len(grp) == 2 {
					r.imap[d] = fzIE{kind: 'l', a: a, b: grp[1]}
					nbs[d] = g.c.grid[a] * g.c.grid[grp[1]]
					continue
				}
				nbs[d] = g.c.grid[a]
				opts := []fzIE{{kind: 'g', a: a}, {kind: 'g', a: a}, {kind: 'r', a: a}}
				for j, p := range pf {
					if p.permAxis == a {
						opts = append(opts, fzIE{kind: 'p', a: a, j: j})
					}
				}
				r.imap[d] = opts[g.intn(len(opts))]
			}
			for d := range r.array {
				if g.chance(0.15) {
					r.block[d] = Squeezed
					r.array[d] = nbs[d]
				} else {
					r.array[d] = nbs[d]*r.block[d] - g.pad(r.block[d])
				}
			}
		}
		if g.chance(0.4) {
			r.alias = -2 // an input to start as is made with the inputs
		} else {
			r.full = true
		}
		r.exact = !r.dt.IsFloat() || (o > 0 && g.chance(0.3))
		out = append(out, r)
	}
	return out
}

func (g *fzGen) genInputs(pf, outs []*fzRef) []*fzRef {
	var ins []*fzRef
	for i, n := 0, 1+g.weighted(4, 4, 2); i < n; i++ {
		r := &fzRef{kind: InputRef, index: len(ins), alias: -1, initOf: -1, permAxis: -1}
		switch {
		case g.chance(0.2):
			// Operands of a dot.
			r.dt = []xla.DType{xla.Float32, xla.Float32, xla.Float32, xla.Float32, xla.BFloat16, xla.Float16, xla.Int8, xla.Float64}[g.intn(8)]
			r.block = []int64{16 << g.intn(2), 16 << g.intn(2)}
			r.array = make([]int64, 2)
			r.imap = make([]fzIE, 2)
			for d := range r.block {
				nb := int64(1 + g.intn(2))
				r.array[d] = nb*r.block[d] - g.pad(r.block[d])*int64(g.intn(2))
				r.imap[d] = g.inputIE(nb, pf)
			}
		case g.chance(0.25):
			r.dt = g.dtype()
			r.array = g.blockDims(g.weighted(1, 8, 8, 2), 256)
		default:
			r.dt = g.dtype()
			rank := g.weighted(1, 8, 8, 2)
			r.block = g.blockDims(rank, 256)
			r.array = make([]int64, rank)
			r.imap = make([]fzIE, rank)
			for d := range r.block {
				if g.chance(0.12) {
					r.block[d] = Squeezed
					r.array[d] = int64(1 + g.intn(5))
					r.imap[d] = g.inputIE(r.array[d], pf)
					continue
				}
				nb := int64(1 + g.intn(4))
				r.array[d] = nb*r.block[d] - g.pad(r.block[d])
				r.imap[d] = g.inputIE(nb, pf)
			}
		}
		r.data, r.lo, r.hi = g.data(r.dt, r.array)
		ins = append(ins, r)
	}
	for o, out := range outs {
		if out.alias != -2 {
			continue
		}
		r := &fzRef{kind: InputRef, index: len(ins), dt: out.dt, array: out.array, block: out.block, imap: out.imap,
			alias: -1, initOf: o, permAxis: -1}
		r.data, r.lo, r.hi = g.data(r.dt, r.array)
		ins = append(ins, r)
	}
	return ins
}

var fzSpecials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e30, -1e30, 3e9, -3e9,
	0.5, -2.5, 65504, 1e-3, 2147483520}

// data makes an operand and bounds its values.
func (g *fzGen) data(dt xla.DType, dims []int64) (*interpreter.Tensor, float64, float64) {
	n := int(Type{Shape: dims}.Size())
	if dt.IsBool() {
		x := interpreter.NewTensor(xla.MakeShape(dt, dims...))
		p := g.r.Float64()
		for i := range x.Data.([]bool) {
			x.Data.([]bool)[i] = g.r.Float64() < p
		}
		return x, 0, 1
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	if dt.IsFloat() {
		mode, specials := g.intn(4), g.chance(0.3)
		vals := make([]float64, n)
		for i := range vals {
			switch {
			case specials && g.chance(0.15):
				vals[i] = fzSpecials[g.intn(len(fzSpecials))]
			case mode == 0:
				vals[i] = float64(g.intn(17) - 8)
			default:
				vals[i] = (2*g.r.Float64() - 1) * []float64{1, 4, 100}[mode-1]
			}
		}
		x := floatTensor(dt, dims, func(i int) float64 { return vals[i] })
		for i := 0; i < n; i++ {
			var v float64
			if f, ok := x.Data.([]float32); ok {
				v = float64(f[i])
			} else {
				v = x.Data.([]float64)[i]
			}
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if lo > hi {
			lo, hi = 0, 0
		}
		return x, lo, hi
	}
	tlo, thi := fzRange(dt)
	span := []float64{8, 1000, math.Inf(1)}[g.weighted(5, 3, 1)]
	specials := g.chance(0.15)
	vals := make([]int64, n)
	for i := range vals {
		var v float64
		switch {
		case specials && g.chance(0.1):
			v = []float64{tlo, thi, 0, -1}[g.intn(4)]
		case math.IsInf(span, 1):
			v = tlo + math.Floor(g.r.Float64()*(math.Min(thi, 1<<62)-tlo))
		case dt.IsUnsigned():
			v = float64(g.intn(int(span) + 1))
		default:
			v = float64(g.intn(2*int(span)+1)) - span
		}
		v = math.Max(tlo, math.Min(v, math.Min(thi, 1<<62)))
		vals[i] = int64(v)
		if dt == xla.Uint64 || (dt.Bits() == 64 && v >= 1<<62) {
			vals[i] = int64(uint64(v))
		}
		lo, hi = math.Min(lo, float64(vals[i])), math.Max(hi, float64(vals[i]))
	}
	if lo > hi {
		lo, hi = 0, 0
	}
	return intTensor(dt, dims, func(i int) int64 { return vals[i] }), lo, hi
}

// ---------------------------------------------------------------------
// Generating the body.

func (g *fzGen) t(id int) fzType { return g.c.types[id] }

func (g *fzGen) newVal(t fzType, f fzInfo) int {
	id := len(g.c.types)
	g.c.types = append(g.c.types, fzType{dt: t.dt, shape: clone(t.shape)})
	g.info = append(g.info, f)
	g.scope[len(g.scope)-1] = append(g.scope[len(g.scope)-1], id)
	return id
}

func (g *fzGen) node(kind string, t fzType, in ...int) *fzNode {
	return &fzNode{kind: kind, t: fzType{dt: t.dt, shape: clone(t.shape)}, in: in, mask: -1, otherV: -1, loV: -1, hiV: -1}
}

// add appends a one-result op and returns its value.
func (g *fzGen) add(n *fzNode) int {
	f := fzInfer(g.c, n, func(id int) fzInfo { return g.info[id] })
	n.out = []int{g.newVal(n.t, f)}
	*g.cur = append(*g.cur, n)
	g.ops++
	return n.out[0]
}

func (g *fzGen) stmtNode(n *fzNode) {
	*g.cur = append(*g.cur, n)
	g.ops++
}

// usable reports whether x may be an operand: its difference bound is
// small (a larger one would grow into a bound that checks nothing).
func (g *fzGen) usable(x int) bool {
	f := g.info[x]
	return f.ea <= 1e-3 && f.er <= 0.05
}

// pick is a visible value that ok accepts (recent ones more often), or -1.
func (g *fzGen) pick(ok func(id int) bool) int {
	var cands []int
	for _, s := range g.scope {
		for _, id := range s {
			if g.usable(id) && ok(id) {
				cands = append(cands, id)
			}
		}
	}
	if len(cands) == 0 {
		return -1
	}
	if g.chance(0.5) {
		return cands[len(cands)-1-g.intn(min(len(cands), 4))]
	}
	return cands[g.intn(len(cands))]
}

// pickRecent is one of the last values ok accepts, or -1.
func (g *fzGen) pickRecent(ok func(id int) bool) int {
	var cands []int
	for i := len(g.scope) - 1; i >= 0 && len(cands) < 4; i-- {
		for j := len(g.scope[i]) - 1; j >= 0 && len(cands) < 4; j-- {
			if id := g.scope[i][j]; g.usable(id) && ok(id) {
				cands = append(cands, id)
			}
		}
	}
	if len(cands) == 0 {
		return -1
	}
	return cands[g.intn(len(cands))]
}

// operand picks a value for an op: a float one more often.
func (g *fzGen) operand(ok func(id int) bool) int {
	if g.chance(0.6) {
		if x := g.pick(func(id int) bool { return ok(id) && g.t(id).dt.IsFloat() }); x >= 0 {
			return x
		}
	}
	return g.pick(ok)
}

func fzIsNum(dt xla.DType) bool { return dt.IsInt() || dt.IsFloat() }

func (g *fzGen) exact(id int) bool { return g.info[id].exact() }

// Small op helpers.

func (g *fzGen) un(op string, x int) int {
	n := g.node("unary", g.t(x), x)
	n.op = op
	return g.add(n)
}

func (g *fzGen) binS(op string, x int, sc any) int {
	n := g.node("binary", g.t(x), x)
	n.op, n.sc = op, sc
	return g.add(n)
}

func (g *fzGen) bin(op string, x, y int) int {
	s, _ := broadcastShapes(g.t(x).shape, g.t(y).shape)
	n := g.node("binary", fzType{dt: g.t(x).dt, shape: s}, x, y)
	n.op = op
	return g.add(n)
}

func (g *fzGen) conv(x int, dt xla.DType) int {
	if g.t(x).dt == dt {
		return x
	}
	return g.add(g.node("convert", fzType{dt: dt, shape: g.t(x).shape}, x))
}

func (g *fzGen) reshape(x int, shape []int64) int {
	if sameShape(g.t(x).shape, shape) {
		return x
	}
	return g.add(g.node("reshape", fzType{dt: g.t(x).dt, shape: shape}, x))
}

func (g *fzGen) bcast(x int, shape []int64) int {
	if sameShape(g.t(x).shape, shape) {
		return x
	}
	return g.add(g.node("bcast", fzType{dt: g.t(x).dt, shape: shape}, x))
}

// bound clamps a float value to [-l, l] (NaN stays NaN) when it may leave it.
func (g *fzGen) bound(x int, l float64) int {
	f := g.info[x]
	if !g.t(x).dt.IsFloat() || (f.lo >= -l && f.hi <= l) {
		return x
	}
	if f.lo < -l {
		x = g.binS("max", x, -l)
	}
	if g.info[x].hi > l {
		x = g.binS("min", x, l)
	}
	return x
}

// scalar is a Go constant of dt for an operand.
func (g *fzGen) scalar(dt xla.DType) any {
	switch {
	case dt.IsBool():
		return g.chance(0.5)
	case dt.IsFloat():
		if g.chance(0.1) {
			return g.r.NormFloat64() * 10
		}
		return []float64{0, 1, -1, 0.5, 2, -3, 1.5, 0.25, 7, 100, -0.75, 4, math.Copysign(0, -1)}[g.intn(13)]
	}
	lo, hi := intRange(dt) // (u64: up to MaxInt64)
	if g.chance(0.05) {
		return []int64{lo, hi}[g.intn(2)]
	}
	if dt == xla.Int64 && g.chance(0.05) {
		return []int64{1<<53 + 1, -(1 << 62) - 3, 1<<62 + 1<<39 + 1}[g.intn(3)] // not float64s
	}
	if dt.IsUnsigned() {
		return g.intn(9)
	}
	return g.intn(17) - 8
}

// leaf makes a new value of t from nothing: an iota or a constant (a
// comparison of an iota for bools).
func (g *fzGen) leaf(t fzType) int {
	switch {
	case t.dt.IsBool() && len(t.shape) > 0 && g.chance(0.7):
		it := g.leaf(fzType{dt: xla.Int32, shape: t.shape})
		n := g.node("cmp", t, it)
		n.op, n.sc = []string{"LT", "GE", "EQ", "NE"}[g.intn(4)], g.intn(5)
		return g.add(n)
	case !t.dt.IsBool() && len(t.shape) > 0 && g.chance(0.6):
		n := g.node("iota", t)
		n.dim = g.intn(len(t.shape))
		return g.add(n)
	}
	n := g.node("const", t)
	n.sc = g.scalar(t.dt)
	return g.add(n)
}

// shape is a random block shape.
func (g *fzGen) shape() []int64 { return g.blockDims(g.weighted(2, 6, 5, 1), 256) }

func (g *fzGen) leafAny() int {
	if len(g.c.grid) > 0 && g.chance(0.3) {
		kind := "pid"
		if g.chance(0.25) {
			kind = "nprog"
		}
		n := g.node(kind, fzType{dt: xla.Int32})
		n.dim = g.intn(len(g.c.grid))
		return g.add(n)
	}
	return g.leaf(fzType{dt: g.dtype(), shape: g.shape()})
}

// subShape is a shape of n elements whose dims are shape's or 1, so it
// broadcasts to shape.
func (g *fzGen) subShape(shape []int64, n int64) ([]int64, bool) {
	out := make([]int64, len(shape))
	rem := n
	for _, d := range g.r.Perm(len(shape)) {
		out[d] = 1
		if shape[d] <= rem && rem%shape[d] == 0 {
			out[d] = shape[d]
			rem /= shape[d]
		}
	}
	return out, rem == 1
}

// reshapeTo makes x of shape (reshape, broadcast, or a reduction then a
// broadcast).
func (g *fzGen) reshapeTo(x int, shape []int64) int {
	t := g.t(x)
	n := Type{Shape: shape}.Size()
	switch {
	case sameShape(t.shape, shape):
		return x
	case t.size() == n:
		return g.reshape(x, shape)
	}
	if _, ok := broadcastShapes(t.shape, shape); ok && len(t.shape) <= len(shape) {
		if s, _ := broadcastShapes(t.shape, shape); sameShape(s, shape) {
			return g.bcast(x, shape)
		}
	}
	if t.size() < n {
		if s, ok := g.subShape(shape, t.size()); ok {
			return g.bcast(g.reshape(x, s), shape)
		}
	}
	// Reduce to a scalar.
	if t.dt.IsBool() {
		x = g.conv(x, xla.Int32)
	}
	r := g.node("reduce", fzType{dt: g.t(x).dt}, x)
	r.op = []string{"max", "min"}[g.intn(2)]
	if !g.t(x).dt.IsFloat() && g.chance(0.5) {
		r.op = "sum"
	}
	x = g.add(r)
	if t.dt.IsBool() {
		x = g.conv(x, xla.Bool)
	}
	return g.bcast(x, shape)
}

// coerce returns a value of type t: a visible one, one made of a visible
// one (converted, reshaped, broadcast), or a leaf. With exact, or for a
// type that is not float, the value is exact.
func (g *fzGen) coerce(t fzType, exact bool) int {
	g.deep++
	defer func() { g.deep-- }()
	ok := func(id int) bool {
		if (exact || !t.dt.IsFloat()) && !g.exact(id) {
			return false
		}
		return g.t(id).size() <= 4*fzMaxElems
	}
	if g.deep < 4 && g.chance(0.9) {
		same := func(id int) bool { return ok(id) && g.t(id).dt == t.dt && sameShape(g.t(id).shape, t.shape) }
		if id := g.pick(same); id >= 0 && g.chance(0.6) {
			return id
		}
		sameType := func(id int) bool { return ok(id) && g.t(id).dt == t.dt }
		if id := g.pickRecent(sameType); id >= 0 && g.chance(0.75) {
			return g.reshapeTo(id, t.shape)
		}
		if id := g.pick(ok); id >= 0 {
			s := g.t(id)
			if s.size() > t.size() {
				// Convert after reducing, else before broadcasting.
				return g.conv(g.reshapeTo(id, t.shape), t.dt)
			}
			return g.reshapeTo(g.conv(id, t.dt), t.shape)
		}
	}
	return g.leaf(t)
}

// intScalar is an exact integer scalar.
func (g *fzGen) intScalar() int {
	isInt := func(id int) bool { t := g.t(id); return t.dt.IsInt() && len(t.shape) == 0 && g.exact(id) }
	if id := g.pick(isInt); id >= 0 && g.chance(0.7) {
		return id
	}
	g.deep++
	defer func() { g.deep-- }()
	w := []int{4, 1, 2, 2, 2}
	if len(g.c.grid) == 0 {
		w[0], w[1] = 0, 0
	}
	if g.deep > 2 || g.c.np == 0 {
		w[3] = 0
	}
	if g.deep > 2 {
		w[4] = 0
	}
	switch g.weighted(w...) {
	case 0, 1:
		n := g.node("pid", fzType{dt: xla.Int32})
		if w[1] > 0 && g.chance(0.2) {
			n.kind = "nprog"
		}
		n.dim = g.intn(len(g.c.grid))
		return g.add(n)
	case 3:
		j := g.intn(g.c.np)
		r := g.c.refs[j]
		n := g.node("load", fzType{dt: r.dt})
		n.ref = j
		n.idx = []fzIdx{{kind: 'p', v: g.index(r.array[0])}}
		return g.add(n)
	case 4:
		var cands []int
		for i, r := range g.c.refs {
			if r.kind == InputRef && r.initOf < 0 && r.dt.IsInt() {
				cands = append(cands, i)
			}
		}
		if len(cands) > 0 {
			i := cands[g.intn(len(cands))]
			r := g.c.refs[i]
			n := g.node("load", fzType{dt: r.dt})
			n.ref = i
			for _, d := range r.view() {
				n.idx = append(n.idx, fzIdx{kind: 'p', v: g.index(d)})
			}
			return g.add(n)
		}
	}
	n := g.node("const", fzType{dt: []xla.DType{xla.Int32, xla.Int32, xla.Int64, xla.Int8, xla.Uint8}[g.intn(5)]})
	n.sc = g.intn(40) - 5
	if n.t.dt.IsUnsigned() {
		n.sc = g.intn(40)
	}
	return g.add(n)
}

// inRange maps integer value x (scalar or array) into [lo, lo+n).
func (g *fzGen) inRange(x int, lo, n int64) int {
	f := g.info[x]
	if f.lo >= float64(lo) && f.hi < float64(lo+n) {
		return x
	}
	_, thi := fzRange(g.t(x).dt)
	if float64(2*n+max(lo, -lo)) > thi || (lo < 0 && g.t(x).dt.IsUnsigned()) {
		x = g.conv(x, xla.Int32)
		f = g.info[x]
	}
	switch {
	case isPow2(n) && g.chance(0.6):
		x = g.binS("and", x, int(n-1))
	case f.lo >= 0:
		x = g.binS("rem", x, int(n))
	default:
		x = g.binS("rem", g.binS("add", g.binS("rem", x, int(n)), int(n)), int(n))
	}
	if lo != 0 {
		x = g.binS("add", x, int(lo))
	}
	return x
}

// index is an exact integer scalar in [0, n).
func (g *fzGen) index(n int64) int {
	x := g.intScalar()
	if g.chance(0.25) {
		x = g.binS([]string{"add", "mul", "sub"}[g.intn(3)], x, g.intn(4))
	}
	return g.inRange(x, 0, n)
}

func (g *fzGen) i32(x int) int { return g.conv(x, xla.Int32) }

// indexArray is an exact integer array of shape with elements in
// [lo, lo+n).
func (g *fzGen) indexArray(shape []int64, lo, n int64) int {
	var x int
	switch g.weighted(3, 2, 2) {
	case 0:
		it := g.node("iota", fzType{dt: []xla.DType{xla.Int32, xla.Int32, xla.Int64, xla.Int16, xla.Uint8}[g.intn(5)], shape: shape})
		it.dim = g.intn(len(shape))
		x = g.add(it)
		if g.chance(0.5) {
			x = g.binS("mul", x, 1+g.intn(5))
		}
		if g.chance(0.5) {
			x = g.bin("add", g.i32(x), g.i32(g.index(n)))
		}
	case 1:
		x = g.coerce(fzType{dt: []xla.DType{xla.Int32, xla.Int32, xla.Int8, xla.Int64, xla.Uint32}[g.intn(5)], shape: shape}, true)
	default:
		x = g.bin("add", g.i32(g.leaf(fzType{dt: xla.Int32, shape: shape})), g.i32(g.intScalar()))
	}
	return g.inRange(x, lo, n)
}

// permArray is an i32 vector of s distinct elements of [lo, lo+n)
// (s <= n, n a power of two).
func (g *fzGen) permArray(s, lo, n int64) int {
	it := g.node("iota", fzType{dt: xla.Int32, shape: []int64{s}})
	x := g.binS("mul", g.add(it), 2*g.intn(8)+1)
	if g.chance(0.5) {
		x = g.bin("add", x, g.i32(g.index(n)))
	} else {
		x = g.binS("add", x, g.intn(int(n)))
	}
	x = g.binS("and", x, int(n-1))
	if lo != 0 {
		x = g.binS("add", x, int(lo))
	}
	return x
}

// fzAccess is the indexing of a load or store.
type fzAccess struct {
	idx   []fzIdx
	shape []int64
	pos   []int
	apos  int
	oob   []bool // dims whose indices may leave the ref: masked
}

// access makes the indices of a load (or store) of r.
func (g *fzGen) access(r *fzRef, store, masked bool) (fzAccess, bool) {
	view := r.view()
	for try := 0; try < 6; try++ {
		kinds := make([]byte, len(view))
		var arrDims []int
		for d, n := range view {
			w := []int{45, 12, 15, 12, 12}
			if !isPow2(n) { // a prefetch array's length: Triton tensors are powers of two
				w[0] = 0
			}
			if n == 1 {
				w[1], w[2] = 0, 0
			}
			if len(arrDims) >= 2 {
				w[4] = 0
			}
			kinds[d] = "asdpx"[g.weighted(w...)]
			if kinds[d] == 'x' {
				arrDims = append(arrDims, d)
			}
		}
		var ashape []int64
		if len(arrDims) > 0 {
			if !store && g.chance(0.2) {
				ashape = []int64{g.pow2(4), g.pow2(4)}
			} else {
				lim := int64(16)
				if store {
					for _, d := range arrDims {
						lim = min(lim, view[d])
					}
				}
				ashape = []int64{g.pow2(lim)}
			}
		}
		a := fzAccess{idx: make([]fzIdx, len(view)), pos: make([]int, len(view)), oob: make([]bool, len(view))}
		sizes := make([]int64, len(view))
		for d, n := range view {
			switch kinds[d] {
			case 'a':
				sizes[d] = n
			case 's', 'd':
				sizes[d] = g.pow2(n)
			}
		}
		// NumPy's rule: with index arrays, the advanced indices (arrays
		// and integers) put the array dims where they are when adjacent,
		// else first.
		if len(arrDims) > 0 {
			first, last, cnt := -1, -1, 0
			for d, k := range kinds {
				if k == 'p' || k == 'x' {
					if first < 0 {
						first = d
					}
					last, cnt = d, cnt+1
				}
			}
			if last-first == cnt-1 {
				for _, k := range kinds[:first] {
					if k == 'a' || k == 's' || k == 'd' {
						a.apos++
					}
				}
			}
		}
		slices := 0
		for d, k := range kinds {
			switch k {
			case 'a', 's', 'd':
				p := slices
				if len(arrDims) > 0 && slices >= a.apos {
					p += len(ashape)
				}
				a.pos[d] = p
				slices++
			case 'p':
				a.pos[d] = -2
			case 'x':
				a.pos[d] = -1
			}
		}
		for d, k := range kinds {
			if k == 'a' || k == 's' || k == 'd' {
				a.shape = append(a.shape, sizes[d])
			}
		}
		if len(arrDims) > 0 {
			s := append(clone(a.shape[:a.apos]), ashape...)
			a.shape = append(s, a.shape[a.apos:]...)
		}
		if (Type{Shape: a.shape}).Size() > fzMaxElems {
			continue
		}
		for d, n := range view {
			x := fzIdx{kind: kinds[d], v: -1}
			switch kinds[d] {
			case 's':
				x.size = sizes[d]
				x.start = int64(g.intn(int(n - x.size + 1)))
			case 'd':
				x.size = sizes[d]
				switch {
				case masked && g.chance(0.3):
					x.v = g.inRange(g.intScalar(), -(x.size - 1), n+x.size-1)
					a.oob[d] = true
				case g.chance(0.25):
					x.start = int64(g.intn(int(n - x.size + 1)))
				default:
					x.v = g.index(n - x.size + 1)
				}
			case 'p':
				switch {
				case masked && g.chance(0.2):
					x.v = g.inRange(g.intScalar(), -1, n+2)
					a.oob[d] = true
				case g.chance(0.4):
					x.start = int64(g.intn(int(n)))
				default:
					x.v = g.index(n)
				}
			case 'x':
				loose := masked && g.chance(0.3)
				switch {
				case store && d == arrDims[0]:
					lo := int64(0)
					if loose {
						lo = int64(g.intn(3) - 1)
					}
					x.v = g.permArray(ashape[0], lo, n)
					a.oob[d] = lo != 0
				case loose:
					x.v = g.indexArray(ashape, -2, n+4)
					a.oob[d] = true
				default:
					x.v = g.indexArray(ashape, 0, n)
				}
			}
			a.idx[d] = x
		}
		return a, true
	}
	return fzAccess{}, false
}

// accessMask is the mask of a load or store: the bounds of the dims that
// may leave the ref, sometimes those of an edge block's array (as kernels
// mask their loads), and the kernel's own mask.
func (g *fzGen) accessMask(ri int, a fzAccess, load, user bool) int {
	r := g.c.refs[ri]
	chk := make([]byte, len(a.idx))
	need := false
	for d := range a.idx {
		if a.oob[d] {
			chk[d], need = 'b', true
		}
	}
	if load && r.padded() && g.chance(0.3) {
		for d, ad := range r.viewDims() {
			if r.paddedDim(ad) {
				chk[d], need = 'a', true
			}
		}
	}
	m := -1
	if need {
		n := g.node("bmask", fzType{dt: xla.Bool, shape: a.shape})
		n.ref, n.idx, n.chk, n.pos, n.apos = ri, a.idx, chk, a.pos, a.apos
		m = g.add(n)
	}
	if user || (m >= 0 && g.chance(0.3)) {
		u := g.coerce(fzType{dt: xla.Bool, shape: a.shape}, true)
		if m < 0 {
			m = u
		} else {
			m = g.bin("and", m, u)
		}
	}
	return m
}

func (g *fzGen) loadable(ri int) bool {
	r := g.c.refs[ri]
	switch r.kind {
	case PrefetchRef:
		return true
	case InputRef:
		return r.initOf < 0
	}
	return r.exact && (r.alias >= 0 || r.ready)
}

func (g *fzGen) storable(ri int) bool {
	r := g.c.refs[ri]
	return r.kind == OutputRef && (r.alias >= 0 || r.ready)
}

func (g *fzGen) refWhere(ok func(int) bool) int {
	var cands []int
	for i := range g.c.refs {
		if ok(i) {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return -1
	}
	return cands[g.intn(len(cands))]
}

func (g *fzGen) load() int {
	ri := g.refWhere(g.loadable)
	if ri < 0 {
		return -1
	}
	r := g.c.refs[ri]
	masked := g.chance(0.25)
	a, ok := g.access(r, false, masked)
	if !ok {
		return -1
	}
	m := g.accessMask(ri, a, true, masked)
	n := g.node("load", fzType{dt: r.dt, shape: a.shape})
	n.ref, n.idx, n.trim = ri, a.idx, g.chance(0.3)
	if m >= 0 {
		n.masked, n.mask = true, m
		switch g.intn(3) {
		case 0:
		case 1:
			n.sc = g.scalar(r.dt)
		default:
			n.otherV = g.coerce(fzType{dt: r.dt, shape: a.shape}, false)
		}
	}
	return g.add(n)
}

func (g *fzGen) store() {
	ri := g.refWhere(g.storable)
	if ri < 0 {
		return
	}
	r := g.c.refs[ri]
	masked := g.chance(0.3)
	a, ok := g.access(r, true, masked)
	if !ok {
		return
	}
	m := g.accessMask(ri, a, false, masked)
	n := g.node("store", fzType{})
	n.ref, n.idx, n.mask, n.trim = ri, a.idx, m, g.chance(0.3)
	if g.chance(0.1) {
		n.sc = g.scalar(r.dt)
	} else {
		n.in = []int{g.coerce(fzType{dt: r.dt, shape: a.shape}, r.exact)}
	}
	g.stmtNode(n)
}

// observe stores value x (converted, reshaped, reduced) into an output,
// so that what it computes is compared.
func (g *fzGen) observe(x int) {
	if !g.usable(x) {
		return
	}
	ri := g.refWhere(func(i int) bool {
		r := g.c.refs[i]
		return g.storable(i) && (g.exact(x) || (r.dt.IsFloat() && !r.exact))
	})
	if ri < 0 {
		return
	}
	r := g.c.refs[ri]
	masked := g.chance(0.2)
	a, ok := g.access(r, true, masked)
	if !ok {
		return
	}
	m := g.accessMask(ri, a, false, masked)
	n := g.node("store", fzType{})
	n.ref, n.idx, n.mask, n.trim = ri, a.idx, m, g.chance(0.3)
	if g.t(x).size() > (Type{Shape: a.shape}).Size() {
		n.in = []int{g.conv(g.reshapeTo(x, a.shape), r.dt)}
	} else {
		n.in = []int{g.reshapeTo(g.conv(x, r.dt), a.shape)}
	}
	g.stmtNode(n)
}

// fullStores stores outputs that must be stored whole first and are not
// yet (each with probability p).
func (g *fzGen) fullStores(p float64) {
	for i, r := range g.c.refs {
		if r.kind != OutputRef || !r.full || r.ready || !g.chance(p) {
			continue
		}
		n := g.node("store", fzType{})
		n.ref = i
		if g.chance(0.05) {
			n.sc = g.scalar(r.dt)
		} else {
			n.in = []int{g.coerce(fzType{dt: r.dt, shape: r.view()}, r.exact)}
		}
		g.stmtNode(n)
		r.ready = true
	}
}

func (g *fzGen) genBody() {
	g.scope = [][]int{nil}
	g.cur = &g.c.body
	for s, steps := 0, 6+g.intn(20); s < steps; s++ {
		if g.chance(0.3) {
			g.fullStores(0.6)
		}
		g.stmt()
	}
	g.fullStores(1)
	for i := g.intn(4); i > 0; i-- {
		if x := g.pickRecent(func(int) bool { return true }); x >= 0 {
			g.observe(x)
		}
	}
}

func (g *fzGen) stmt() {
	if g.ops > fzMaxOps {
		return
	}
	nested := g.depth < 2
	switch g.weighted(55, 20, 7, 8, 5) {
	case 0:
		if v := g.value(); g.chance(0.6) {
			g.observe(v)
		}
	case 1:
		g.store()
	case 2:
		if nested && g.chance(0.5) {
			g.when()
		} else if nested {
			g.cond()
		}
	case 3:
		if nested {
			g.forLoop()
		}
	case 4:
		if nested {
			g.whileLoop()
		}
	}
}

func (g *fzGen) value() int {
	for try := 0; try < 8; try++ {
		var id int
		switch g.weighted(20, 22, 20, 7, 6, 6, 6, 8, 4, 4, 4, 4) {
		case 0:
			id = g.load()
		case 1:
			id = g.unary()
		case 2:
			id = g.binary()
		case 3:
			id = g.cmp()
		case 4:
			id = g.where()
		case 5:
			id = g.convert()
		case 6:
			id = g.shapeOp()
		case 7:
			id = g.reduce()
		case 8:
			id = g.dot()
		case 9:
			id = g.leafAny()
		case 10:
			id = g.divRem()
		default:
			id = g.scan()
		}
		if id >= 0 {
			return id
		}
	}
	return g.leafAny()
}

func (g *fzGen) unary() int {
	x := g.operand(func(id int) bool { return g.t(id).size() <= fzMaxElems })
	if x < 0 {
		return -1
	}
	dt := g.t(x).dt
	switch {
	case dt.IsBool():
		return g.un("not", x)
	case !dt.IsFloat():
		return g.un([]string{"neg", "abs", "not", "sign", "popcnt", "clz"}[g.intn(6)], x)
	}
	ops := []string{"neg", "abs", "floor", "ceil", "exp", "log", "tanh", "erf", "sqrt", "rsqrt", "sin", "cos", "logistic",
		"log1p", "expm1", "tan", "round", "sign", "exp2", "log2", "atan", "asinh", "sinh", "cosh", "cbrt", "acosh",
		"asin", "acos", "atanh", "erf_inv", "erfc"}
	op := ops[g.intn(len(ops))]
	if !g.exact(x) {
		x = g.bound(x, 64)
	}
	switch op {
	case "floor", "ceil", "round", "sign":
		if !g.exact(x) {
			op = "abs"
		}
	case "exp", "expm1", "exp2":
		if g.info[x].hi > 3 {
			x = g.binS("min", x, 3.0)
		}
	case "sinh", "cosh":
		x = g.bound(x, 3)
	case "asin", "acos", "atanh", "erf_inv":
		x = g.bound(x, 0.5)
	case "cbrt", "acosh":
		off := 0.25
		if op == "acosh" {
			off = 1.5
		}
		x = g.binS("add", g.un("abs", x), off)
	case "log1p":
		x = g.un("abs", x)
	case "tan":
		x = g.bound(x, 1)
	case "log", "log2", "sqrt", "rsqrt":
		off := 0.5
		if op != "log" && op != "log2" {
			off = 0.25
		}
		x = g.binS("add", g.un("abs", x), off)
	case "tanh", "erf", "erfc", "sin", "cos", "logistic", "atan", "asinh":
		x = g.bound(x, 16)
	}
	return g.un(op, x)
}

// operandLike is a second operand for x: of x's dtype, broadcasting with
// x's shape.
func (g *fzGen) operandLike(x int, exact bool) int {
	t := g.t(x)
	shape := clone(t.shape)
	switch g.weighted(6, 2, 2, 1) {
	case 1:
		shape = nil
	case 2:
		for d := range shape {
			if g.chance(0.5) {
				shape[d] = 1
			}
		}
		if len(shape) > 0 && g.chance(0.3) {
			shape = shape[1:]
		}
	case 3:
		if t.size()*4 <= fzMaxElems && len(shape) < 3 {
			shape = append([]int64{g.pow2(4)}, shape...)
		}
	}
	return g.coerce(fzType{dt: t.dt, shape: shape}, exact)
}

func (g *fzGen) binary() int {
	x := g.operand(func(id int) bool { return g.t(id).size() <= fzMaxElems })
	if x < 0 {
		return -1
	}
	dt := g.t(x).dt
	var op string
	switch {
	case dt.IsBool():
		op = []string{"and", "or", "xor"}[g.intn(3)]
	case dt.IsInt():
		op = []string{"add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor", "div", "rem", "shl", "shr"}[g.intn(14)]
	default:
		op = []string{"add", "sub", "mul", "div", "rem", "max", "min", "pow", "add", "mul"}[g.intn(10)]
	}
	y := -1
	var sc any
	if g.chance(0.3) {
		sc = g.scalar(dt)
	} else {
		y = g.operandLike(x, false)
	}
	if dt.IsFloat() {
		approx := !g.exact(x) || (y >= 0 && !g.exact(y))
		if op == "rem" && approx {
			op = "sub"
		}
		if approx || op == "pow" {
			x = g.bound(x, 64)
			if y >= 0 {
				y = g.bound(y, 64)
			}
		}
		switch {
		case op == "div" && approx:
			// A divisor away from 0.
			if y >= 0 {
				y = g.binS("add", g.un("abs", y), 1.0)
			} else {
				sc = []float64{2, -4, 1.5, 3, -1}[g.intn(5)]
			}
		case op == "pow":
			x = g.binS("add", g.un("abs", g.bound(x, 8)), 0.5)
			if y >= 0 {
				y = g.bound(y, 2)
			} else {
				sc = []float64{-2, -1.5, -1, -0.5, 0.5, 1.5, 2, 3}[g.intn(8)]
			}
		}
	}
	if y >= 0 {
		return g.bin(op, x, y)
	}
	return g.binS(op, x, sc)
}

// divRem divides integers by values that hold zeros (and -1).
func (g *fzGen) divRem() int {
	x := g.pick(func(id int) bool { t := g.t(id); return t.dt.IsInt() && t.size() <= fzMaxElems && g.exact(id) })
	if x < 0 {
		return -1
	}
	t := g.t(x)
	if g.chance(0.2) && !t.dt.IsUnsigned() {
		// The minimum integer (MIN / -1 overflows).
		lo, _ := intRange(t.dt)
		mn := g.node("const", t)
		mn.sc = lo
		m := g.add(mn)
		x = g.bin("max", x, m)
		if g.chance(0.5) {
			x = g.binS("sub", g.binS("add", x, 1), 1) // wraps back
		}
		x = g.bin("min", x, m)
	}
	var y int
	switch g.intn(3) {
	case 0:
		y = g.operandLike(x, true)
	case 1:
		// -1, 0, 1, ... along a dim.
		it := g.node("iota", fzType{dt: t.dt, shape: t.shape})
		if len(t.shape) == 0 {
			it = g.node("const", t)
			it.sc = g.intn(3) - 1
			if t.dt.IsUnsigned() {
				it.sc = g.intn(2)
			}
		} else {
			it.dim = g.intn(len(t.shape))
		}
		y = g.add(it)
		if !t.dt.IsUnsigned() && g.chance(0.5) {
			y = g.binS("sub", y, 1)
		}
	default:
		y = g.bin("and", g.operandLike(x, true), g.leaf(t))
	}
	return g.bin([]string{"div", "rem"}[g.intn(2)], x, y)
}

func (g *fzGen) cmp() int {
	x := g.pick(func(id int) bool { return g.exact(id) && g.t(id).size() <= fzMaxElems })
	if x < 0 {
		return -1
	}
	dir := []string{"EQ", "NE", "LT", "LE", "GT", "GE"}[g.intn(6)]
	if g.chance(0.35) {
		n := g.node("cmp", fzType{dt: xla.Bool, shape: g.t(x).shape}, x)
		n.op, n.sc = dir, g.scalar(g.t(x).dt)
		if dt := g.t(x).dt; !dt.IsBool() && g.chance(0.5) {
			// A value the data likely holds.
			n.sc = g.intn(9) - 4
			if dt.IsUnsigned() {
				n.sc = g.intn(5)
			}
		}
		return g.add(n)
	}
	var y int
	switch g.weighted(3, 1, 1) {
	case 0:
		y = g.operandLike(x, true)
	case 1:
		y = x // equal elements
	default:
		// Equal elements in places.
		op := "max"
		if g.t(x).dt.IsBool() {
			op = "or"
		}
		y = g.bin(op, g.reshapeTo(g.operandLike(x, true), g.t(x).shape), x)
	}
	s, _ := broadcastShapes(g.t(x).shape, g.t(y).shape)
	n := g.node("cmp", fzType{dt: xla.Bool, shape: s}, x, y)
	n.op = dir
	return g.add(n)
}

func (g *fzGen) where() int {
	x := g.operand(func(id int) bool { return g.t(id).size() <= fzMaxElems })
	if x < 0 {
		return -1
	}
	t := g.t(x)
	cshape := clone(t.shape)
	if g.chance(0.3) {
		cshape = nil
	}
	c := g.coerce(fzType{dt: xla.Bool, shape: cshape}, true)
	n := g.node("where", t, c, x)
	if g.chance(0.3) {
		n.sc = g.scalar(t.dt)
	} else {
		y := g.operandLike(x, false)
		n.in = append(n.in, y)
		n.t.shape, _ = broadcastShapes(t.shape, g.t(y).shape)
	}
	n.t.shape, _ = broadcastShapes(n.t.shape, cshape)
	return g.add(n)
}

func (g *fzGen) convert() int {
	x := g.operand(func(id int) bool { return g.t(id).size() <= fzMaxElems })
	if x < 0 {
		return -1
	}
	to := g.dtype()
	if g.t(x).dt.IsFloat() && g.exact(x) && g.chance(0.4) {
		to = []xla.DType{xla.Int32, xla.Int8, xla.Uint8, xla.Int64, xla.Uint32, xla.Int16, xla.Bool, xla.Uint64}[g.intn(8)]
	}
	if !g.exact(x) && !to.IsFloat() {
		to = []xla.DType{xla.Float32, xla.Float16, xla.BFloat16, xla.Float64}[g.intn(4)]
	}
	if to == g.t(x).dt {
		return -1
	}
	return g.conv(x, to)
}

// factor splits 2^k elements into rank power-of-two dims.
func (g *fzGen) factor(size int64, rank int) []int64 {
	s := make([]int64, rank)
	for d := range s {
		s[d] = 1
	}
	if rank == 0 {
		return s
	}
	for size > 1 {
		s[g.intn(rank)] *= 2
		size /= 2
	}
	return s
}

func (g *fzGen) shapeOp() int {
	x := g.operand(func(id int) bool { return g.t(id).size() <= fzMaxElems })
	if x < 0 {
		return -1
	}
	t := g.t(x)
	switch g.intn(6) {
	case 3:
		return g.concat(x)
	case 4:
		return g.split(x)
	case 5:
		return g.gather(x)
	case 0:
		shape := clone(t.shape)
		grown := false
		for d := range shape {
			if shape[d] == 1 && g.chance(0.5) && t.size()*4 <= fzMaxElems {
				shape[d], grown = g.pow2(4), true
			}
		}
		if !grown || g.chance(0.3) {
			if len(shape) >= 3 || t.size()*4 > fzMaxElems {
				return -1
			}
			shape = append([]int64{g.pow2(4)}, shape...)
		}
		return g.bcast(x, shape)
	case 1:
		rank := 1 + g.intn(3)
		if t.size() == 1 && g.chance(0.3) {
			rank = 0
		}
		return g.reshape(x, g.factor(t.size(), rank))
	}
	if len(t.shape) < 2 {
		return -1
	}
	perm := make([]int64, len(t.shape))
	shape := make([]int64, len(t.shape))
	for i, p := range g.r.Perm(len(perm)) {
		perm[i], shape[i] = int64(p), t.shape[p]
	}
	n := g.node("transpose", fzType{dt: t.dt, shape: shape}, x)
	n.perm = perm
	return g.add(n)
}

// concat joins x with 1 or 3 values of its type (Triton joins a
// power-of-two count of equal blocks) along one of its axes, or stacks
// them along a new one.
func (g *fzGen) concat(x int) int {
	t := g.t(x)
	cnt := 2
	if g.chance(0.3) {
		cnt = 4
	}
	if len(t.shape) == 0 || len(t.shape) >= 3 || t.size()*int64(cnt) > fzMaxElems {
		return -1
	}
	in := []int{x}
	for len(in) < cnt {
		in = append(in, g.coerce(fzType{dt: t.dt, shape: clone(t.shape)}, g.exact(x)))
	}
	n := g.node("concat", t, in...)
	n.op = "concatenate"
	shape := clone(t.shape)
	if g.chance(0.3) {
		n.op = "stack"
		n.dim = g.intn(len(shape) + 1)
		shape = slices.Insert(shape, n.dim, int64(cnt))
	} else {
		n.dim = g.intn(len(shape))
		shape[n.dim] *= int64(cnt)
	}
	n.t.shape = shape
	if g.chance(0.2) {
		n.dim -= len(shape) // counted from the end
	}
	return g.add(n)
}

// gather takes x along an axis at positions of an integer type (exact,
// many outside the axis: clamped), as many along it as a power of two
// up to twice the axis.
func (g *fzGen) gather(x int) int {
	t := g.t(x)
	if len(t.shape) == 0 {
		return -1
	}
	axis := g.intn(len(t.shape))
	if t.shape[axis] == 0 {
		return -1
	}
	shape := clone(t.shape)
	shape[axis] = g.pow2(2 * t.shape[axis])
	if t.size()/t.shape[axis]*shape[axis] > fzMaxElems {
		return -1
	}
	dt := []xla.DType{xla.Int32, xla.Int32, xla.Int8, xla.Uint8, xla.Int64, xla.Uint32}[g.intn(6)]
	idx := g.coerce(fzType{dt: dt, shape: shape}, true)
	if g.chance(0.6) && t.shape[axis] <= 100 {
		idx = g.binS("rem", idx, t.shape[axis]) // mostly inside (negatives clamp to 0)
	}
	n := g.node("gather", fzType{dt: t.dt, shape: shape}, x, idx)
	n.dim = axis
	if g.chance(0.2) {
		n.dim -= len(shape) // counted from the end
	}
	return g.add(n)
}

// split keeps one of 2 or 4 equal parts of x along an axis long enough.
func (g *fzGen) split(x int) int {
	t := g.t(x)
	var axes []int
	for d, n := range t.shape {
		if n >= 2 {
			axes = append(axes, d)
		}
	}
	if len(axes) == 0 {
		return -1
	}
	n := g.node("split", t, x)
	n.dim = axes[g.intn(len(axes))]
	n.parts = 2
	if t.shape[n.dim] >= 4 && g.chance(0.3) {
		n.parts = 4
	}
	n.part = g.intn(n.parts)
	n.t.shape = clone(t.shape)
	n.t.shape[n.dim] /= int64(n.parts)
	if g.chance(0.2) {
		n.dim -= len(t.shape) // counted from the end
	}
	return g.add(n)
}

func (g *fzGen) reduce() int {
	x := g.operand(func(id int) bool {
		t := g.t(id)
		return fzIsNum(t.dt) && len(t.shape) > 0 && t.size() <= fzMaxElems
	})
	if x < 0 {
		return -1
	}
	t := g.t(x)
	op := []string{"sum", "max", "min"}[g.intn(3)]
	var axes []int
	drop := make([]bool, len(t.shape))
	if g.chance(0.75) {
		for d := range t.shape {
			if g.chance(0.5) {
				drop[d] = true
				a := d
				if g.chance(0.2) {
					a -= len(t.shape)
				}
				axes = append(axes, a)
			}
		}
	}
	if len(axes) == 0 {
		axes = nil
		for d := range drop {
			drop[d] = true
		}
	}
	var shape []int64
	cnt := int64(1)
	for d, n := range t.shape {
		if drop[d] {
			cnt *= n
		} else {
			shape = append(shape, n)
		}
	}
	if op == "sum" && t.dt.IsFloat() {
		l := 64.0
		if t.dt == xla.Float16 {
			l = math.Min(l, 30000/float64(cnt))
		}
		x = g.bound(x, l)
	}
	n := g.node("reduce", fzType{dt: t.dt, shape: shape}, x)
	n.op, n.axes = op, axes
	return g.add(n)
}

// scan is a cumulative sum, maximum or minimum along one axis (products
// are left out: their bounds grow past anything checkable).
func (g *fzGen) scan() int {
	x := g.operand(func(id int) bool {
		t := g.t(id)
		return fzIsNum(t.dt) && len(t.shape) > 0 && t.size() <= fzMaxElems
	})
	if x < 0 {
		return -1
	}
	t := g.t(x)
	op := []string{"sum", "max", "min"}[g.intn(3)]
	axis := g.intn(len(t.shape))
	n := t.shape[axis]
	if g.chance(0.2) {
		axis -= len(t.shape)
	}
	if op == "sum" && t.dt.IsFloat() {
		l := 64.0
		if t.dt == xla.Float16 {
			l = math.Min(l, 30000/float64(n))
		}
		x = g.bound(x, l)
	}
	s := g.node("scan", fzType{dt: t.dt, shape: append([]int64(nil), t.shape...)}, x)
	s.op, s.dim, s.rev = op, axis, g.chance(0.3)
	// A custom combine of the same op (16-bit float sums excepted: the
	// built-in one sums in f32, a combine in the values' own type).
	s.custom = g.chance(0.3) && !(op == "sum" && (t.dt == xla.Float16 || t.dt == xla.BFloat16))
	return g.add(s)
}

func (g *fzGen) dot() int {
	m, nn, k := int64(16)<<g.intn(2), int64(16)<<g.intn(2), int64(16)<<g.intn(2)
	dt := []xla.DType{xla.Float32, xla.Float32, xla.Float32, xla.Float32, xla.Float32, xla.Float32,
		xla.BFloat16, xla.BFloat16, xla.Float16, xla.Int8, xla.Float64}[g.intn(11)]
	n := g.node("dot", fzType{}, 0, 0)
	n.transA, n.transB = g.chance(0.25), g.chance(0.25)
	as, bs := []int64{m, k}, []int64{k, nn}
	if n.transA {
		as = []int64{k, m}
	}
	if n.transB {
		bs = []int64{nn, k}
	}
	var batch []int64
	if g.chance(0.25) { // a batch of 2 (3-D operands), of smaller matrices
		if m*k*nn > 32*32*32 {
			return -1
		}
		batch = []int64{2}
		as, bs = append(batch, as...), append(batch, bs...)
	}
	a, b := g.coerce(fzType{dt: dt, shape: as}, false), g.coerce(fzType{dt: dt, shape: bs}, false)
	if dt.IsFloat() {
		a, b = g.bound(a, 4), g.bound(b, 4)
		n.pref = []xla.DType{xla.Float32, xla.Float32, xla.Float32, xla.Float32, xla.Float32, xla.Invalid, xla.Invalid, xla.Float64}[g.intn(8)]
	} else {
		n.pref = []xla.DType{xla.Int32, xla.Int32, xla.Int32, xla.Invalid}[g.intn(4)]
	}
	n.in = []int{a, b}
	n.t = fzType{dt: n.pref, shape: append(clone(batch), m, nn)}
	if n.pref == xla.Invalid {
		n.t.dt = dt
	}
	return g.add(n)
}

// boolScalar is an exact bool scalar.
func (g *fzGen) boolScalar() int {
	if id := g.pick(func(id int) bool { return g.t(id).dt.IsBool() && len(g.t(id).shape) == 0 }); id >= 0 && g.chance(0.4) {
		return id
	}
	x := g.pick(func(id int) bool { t := g.t(id); return fzIsNum(t.dt) && len(t.shape) == 0 && g.exact(id) })
	if x < 0 || g.chance(0.3) {
		x = g.intScalar()
	}
	n := g.node("cmp", fzType{dt: xla.Bool}, x)
	n.op = []string{"EQ", "NE", "LT", "LE", "GT", "GE"}[g.intn(6)]
	if f := g.info[x]; !math.IsInf(f.lo, 0) && !math.IsInf(f.hi, 0) && f.hi-f.lo < 1e6 && math.Abs(f.lo)+math.Abs(f.hi) < 1<<62 {
		v := f.lo + math.Floor(g.r.Float64()*(f.hi-f.lo+1))
		if g.t(x).dt.IsFloat() {
			n.sc = v
		} else {
			n.sc = int64(v)
		}
	} else {
		n.sc = g.scalar(g.t(x).dt)
	}
	return g.add(n)
}

// lt2 is counter < limit (a value, else limMax), for a While condition.
func lt2(g *fzGen, counter, limit int, limMax int64) *fzNode {
	lt := g.node("cmp", fzType{dt: xla.Bool}, counter)
	lt.op = "LT"
	if limit >= 0 {
		lt.in = append(lt.in, limit)
	} else {
		lt.sc = int(limMax)
	}
	return lt
}

// region generates the ops of r (with args declared) in a new scope.
func (g *fzGen) region(r *fzRegion, body func()) {
	saved := g.cur
	g.cur = &r.nodes
	g.scope = append(g.scope, append([]int(nil), r.args...))
	g.depth++
	body()
	g.depth--
	g.scope = g.scope[:len(g.scope)-1]
	g.cur = saved
}

// arg declares a region argument.
func (g *fzGen) arg(t fzType, f fzInfo) int {
	id := len(g.c.types)
	g.c.types = append(g.c.types, fzType{dt: t.dt, shape: clone(t.shape)})
	g.info = append(g.info, f)
	return id
}

func (g *fzGen) when() {
	c := g.boolScalar()
	n := g.node("when", fzType{}, c)
	n.regions = []*fzRegion{{}}
	g.stmtNode(n)
	g.region(n.regions[0], func() {
		for i, k := 0, 1+g.intn(3); i < k; i++ {
			g.stmt()
		}
	})
}

// cond makes a Cond whose results take the types of up to 2 values in
// scope; each branch runs a few statements and yields values of those
// types.
func (g *fzGen) cond() {
	c := g.boolScalar()
	n := g.node("cond", fzType{}, c)
	cs := g.carries(g.intn(3))
	n.regions = []*fzRegion{{}, {}}
	for _, r := range n.regions {
		g.region(r, func() {
			for i, k := 0, g.intn(3); i < k; i++ {
				g.stmt()
			}
			r.yield = g.yields(cs)
		})
	}
	g.stmtNode(n)
	then, els := n.regions[0], n.regions[1]
	for i, cr := range cs {
		n.out = append(n.out, g.newVal(g.t(cr.init), fzJoin(g.info[then.yield[i]], g.info[els.yield[i]])))
	}
	if len(n.out) > 0 && g.chance(0.7) {
		g.observe(n.out[g.intn(len(n.out))])
	}
}

// fzCarry is a loop-carried value as generated.
type fzCarry struct {
	init  int
	exact bool // the body keeps it exact
	clamp bool // the body clamps it to [-64, 64] (floats)
}

func (g *fzGen) carries(n int) []fzCarry {
	var out []fzCarry
	for i := 0; i < n; i++ {
		x := g.pick(func(id int) bool { return g.t(id).size() <= 256 })
		if x < 0 {
			continue
		}
		c := fzCarry{init: x, exact: g.exact(x)}
		if g.t(x).dt.IsFloat() {
			c.exact = c.exact && g.chance(0.6)
			c.clamp = !c.exact || g.chance(0.5)
		}
		out = append(out, c)
	}
	return out
}

// carryArg declares a body argument for c: its bounds hold in every
// iteration.
func (g *fzGen) carryArg(c fzCarry) int {
	t := g.t(c.init)
	lo, hi := fzRange(t.dt)
	f := fzInfo{lo: lo, hi: hi}
	if c.clamp {
		f = fzJoin(g.info[c.init], fzInfo{lo: -64, hi: 64})
	}
	if !c.exact {
		f.ea, f.er = math.Max(f.ea, 1e-30), math.Max(f.er, 1e-30)
	}
	return g.arg(t, f)
}

// yields makes the next value of each carry in the body.
func (g *fzGen) yields(cs []fzCarry) []int {
	out := make([]int, len(cs))
	for i, c := range cs {
		t := g.t(c.init)
		y := -1
		if g.chance(0.6) {
			inner := g.scope[len(g.scope)-1]
			var cands []int
			for _, id := range inner {
				if g.usable(id) && g.t(id).dt == t.dt && sameShape(g.t(id).shape, t.shape) && (!c.exact || g.exact(id)) {
					cands = append(cands, id)
				}
			}
			if len(cands) > 0 {
				y = cands[g.intn(len(cands))]
			}
		}
		if y < 0 {
			y = g.coerce(t, c.exact)
		}
		if c.clamp {
			y = g.binS("min", g.binS("max", y, -64.0), 64.0)
		}
		out[i] = y
	}
	return out
}

func (g *fzGen) loopResults(n *fzNode, args []int) {
	for _, a := range args {
		n.out = append(n.out, g.newVal(g.t(a), g.info[a]))
	}
}

func (g *fzGen) forLoop() {
	n := g.node("for", fzType{})
	var loMin, hiMax int64
	if g.chance(0.7) {
		n.loC = int64(g.intn(2))
		loMin = n.loC
	} else {
		n.loV = g.index(3)
		loMin = int64(g.info[n.loV].lo)
	}
	if g.chance(0.6) {
		n.hiC = max(n.loC, 2) + int64(g.intn(3))
		hiMax = n.hiC
	} else {
		n.hiV = g.index(5)
		hiMax = int64(g.info[n.hiV].hi)
	}
	n.trips = int(max(0, hiMax-loMin))
	if n.trips > 8 {
		panic(fmt.Sprintf("for loop of up to %d trips", n.trips))
	}
	n.ivLo, n.ivHi = float64(loMin), float64(max(loMin, hiMax-1))
	cs := g.carries(g.intn(3))
	body := &fzRegion{args: []int{g.arg(fzType{dt: xla.Int32}, fzInfo{lo: n.ivLo, hi: n.ivHi})}}
	for _, c := range cs {
		n.in = append(n.in, c.init)
		body.args = append(body.args, g.carryArg(c))
	}
	n.regions = []*fzRegion{body}
	g.region(body, func() {
		for i, k := 0, 1+g.intn(4); i < k; i++ {
			g.stmt()
		}
		body.yield = g.yields(cs)
	})
	g.stmtNode(n)
	g.loopResults(n, body.args[1:])
	if len(n.out) > 0 && g.chance(0.7) {
		g.observe(n.out[g.intn(len(n.out))])
	}
}

func (g *fzGen) whileLoop() {
	n := g.node("while", fzType{})
	var counter int
	if g.chance(0.6) {
		k := g.node("const", fzType{dt: xla.Int32})
		k.sc = 0
		counter = g.add(k)
	} else {
		counter = g.i32(g.index(2))
	}
	limit, limMax := -1, int64(g.intn(5)) // a value, else limMax
	if g.chance(0.5) {
		limit = g.i32(g.index(5))
		limMax = int64(g.info[limit].hi)
	}
	cmin := int64(g.info[counter].lo)
	n.trips = int(max(0, limMax-cmin))
	if n.trips > 8 {
		panic(fmt.Sprintf("while loop of up to %d trips", n.trips))
	}
	cs := append([]fzCarry{{init: counter, exact: true}}, g.carries(g.intn(3))...)
	cond, body := &fzRegion{}, &fzRegion{}
	for _, c := range cs {
		n.in = append(n.in, c.init)
	}
	cinfo := fzInfo{lo: float64(cmin), hi: math.Max(g.info[counter].hi, float64(limMax))}
	cond.args = append(cond.args, g.arg(fzType{dt: xla.Int32}, cinfo))
	body.args = append(body.args, g.arg(fzType{dt: xla.Int32}, cinfo))
	for _, c := range cs[1:] {
		cond.args = append(cond.args, g.carryArg(c))
		body.args = append(body.args, g.carryArg(c))
	}
	n.regions = []*fzRegion{cond, body}
	g.region(cond, func() {
		c := g.add(lt2(g, cond.args[0], limit, limMax))
		if ri := g.refWhere(func(i int) bool {
			r := g.c.refs[i]
			return r.kind == InputRef && r.initOf < 0 && len(r.view()) > 0
		}); ri >= 0 && g.chance(0.3) {
			// A condition on a ref's element.
			r := g.c.refs[ri]
			ld := g.node("load", fzType{dt: r.dt})
			ld.ref = ri
			for _, d := range r.view() {
				ld.idx = append(ld.idx, fzIdx{kind: 'p', v: g.index(d)})
			}
			x := g.add(ld)
			p := g.node("cmp", fzType{dt: xla.Bool}, x)
			p.op, p.sc = []string{"GE", "LE", "NE", "EQ"}[g.intn(4)], g.scalar(r.dt)
			c = g.bin([]string{"and", "or"}[g.intn(2)], c, g.add(p))
			c = g.bin("and", c, g.add(lt2(g, cond.args[0], limit, limMax)))
		}
		if len(cs) > 1 && g.chance(0.5) {
			// A condition on the data too (the counter bounds the trips).
			for i, cr := range cs[1:] {
				a := cond.args[1+i]
				t := g.t(a)
				if !cr.exact || !(fzIsNum(t.dt) || t.dt.IsBool()) {
					continue
				}
				if t.dt.IsBool() {
					a = g.conv(a, xla.Int32)
				}
				if len(t.shape) > 0 {
					r := g.node("reduce", fzType{dt: g.t(a).dt}, a)
					r.op = []string{"max", "min"}[g.intn(2)]
					a = g.add(r)
				}
				p := g.node("cmp", fzType{dt: xla.Bool}, a)
				p.op, p.sc = []string{"GE", "LE", "NE"}[g.intn(3)], g.scalar(g.t(a).dt)
				c = g.bin("and", c, g.add(p))
				break
			}
		}
		cond.yield = []int{c}
	})
	g.region(body, func() {
		next := g.binS("add", body.args[0], 1)
		for i, k := 0, 1+g.intn(3); i < k; i++ {
			g.stmt()
		}
		body.yield = append([]int{next}, g.yields(cs[1:])...)
	})
	g.stmtNode(n)
	g.loopResults(n, body.args)
	if g.chance(0.7) {
		g.observe(n.out[g.intn(len(n.out))])
	}
}
