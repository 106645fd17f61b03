package pallas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// A reference evaluator of the TTIR tree the Triton lowering builds, for
// EvalTriton and the tests: it runs every program of the launch grid one
// after another on host buffers, so the index arithmetic, masks and
// control flow of the emitted kernel can be checked against interpret mode
// without a GPU. An access outside a buffer is an error (an unmasked
// padded edge would show up here).

// tevVal is a runtime value: floats in f, integers (and i1, pointers'
// offsets) in i, with the shape of its type. TTIR integers are signless:
// an iN value is kept sign-extended from bit N-1 (i1 as 0 or 1), and the
// unsigned ops (divui, cmpi ult, uitofp, extui ...) read its low N bits.
// A float is kept as a float64 holding a value of its element type (f16
// and bf16 rounded after every op).
type tevVal struct {
	t   ttType
	f   []float64
	i   []int64
	buf int // pointer values: the buffer
}

func (v *tevVal) n() int {
	if v.f != nil {
		return len(v.f)
	}
	return len(v.i)
}

// tevBuf is one kernel argument's memory.
type tevBuf struct {
	elem string // element type in memory
	f    []float64
	i    []int64
}

type tevMachine struct {
	bufs []*tevBuf
	pid  [3]int64
	vals map[*ttVal]*tevVal
	// since holds, per buffer, the program's accesses since its last
	// gpu.barrier (1 stored, 2 loaded): on a GPU the program's threads
	// may hold a block's elements in a different layout at each access,
	// so a load after a store, or a store after any access, without a
	// barrier between them races. A store after stores only races where
	// it writes an element another thread stored: owners holds, per
	// buffer, which store op and position stored each element since the
	// barrier (one op keeps one layout, so the same op and position is
	// the same thread).
	since  map[*tevBuf]uint8
	owners map[*tevBuf]map[int64]tevOwner
	// atomOp is, per buffer with atomic updates since the barrier (since
	// bit 4), their atomic_rmw_op.
	atomOp map[*tevBuf]int64
	// out takes tt.print's lines (nil: dropped).
	out io.Writer
}

// tevOwner is the thread that stored an element: a tt.store and the
// position in its value.
type tevOwner struct {
	op  *ttOp
	pos int
}

type tevError struct{ msg string }

func tevFail(format string, args ...any) { panic(tevError{fmt.Sprintf(format, args...)}) }

// tevRunOrder executes f on every program of grid, in row-major order or
// reversed (a GPU runs them in any order), stopping when ctx ends; its
// prints go to out (nil: nowhere).
func tevRunOrder(ctx context.Context, f *ttFunc, grid [3]int64, bufs []*tevBuf, reverse bool, out io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(tevError); ok {
				err = fmt.Errorf("%s", e.msg)
				return
			}
			panic(r)
		}
	}()
	if len(bufs) != len(f.body.args) {
		return fmt.Errorf("%d buffers for %d arguments", len(bufs), len(f.body.args))
	}
	at := func(i, n int64) int64 {
		if reverse {
			return n - 1 - i
		}
		return i
	}
	for xi := int64(0); xi < grid[0]; xi++ {
		for yi := int64(0); yi < grid[1]; yi++ {
			for zi := int64(0); zi < grid[2]; zi++ {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("pallas: EvalTriton: %w", err)
				}
				x, y, z := at(xi, grid[0]), at(yi, grid[1]), at(zi, grid[2])
				m := &tevMachine{bufs: bufs, pid: [3]int64{x, y, z}, vals: map[*ttVal]*tevVal{}, since: map[*tevBuf]uint8{}, owners: map[*tevBuf]map[int64]tevOwner{}, atomOp: map[*tevBuf]int64{}, out: out}
				for i, a := range f.body.args {
					m.vals[a] = &tevVal{t: a.t, i: []int64{0}, buf: i}
				}
				m.region(f.body)
			}
		}
	}
	return nil
}

func (m *tevMachine) region(r *ttRegion) []*tevVal {
	for _, op := range r.ops {
		if out := m.op(op); out != nil {
			return out
		}
	}
	return nil
}

// combineOnly fails when an op of r, the combine region of a tt.reduce
// or tt.scan (name), uses a value made outside it: the region computes
// on its arguments alone (its constants made inside it).
func combineOnly(name string, r *ttRegion) {
	inside := map[*ttVal]bool{}
	for _, a := range r.args {
		inside[a] = true
	}
	for _, op := range r.ops {
		for _, o := range op.operands {
			if !inside[o] {
				tevFail("%s: %s in its combine region uses a value made outside it", name, op.name)
			}
		}
		for _, res := range op.results {
			inside[res] = true
		}
	}
}

// scanInTree folds each line of a tt.scan of integers (or bools) again,
// as a GPU may: in a tree (each element combined with the one d before
// it, d = 1, 2, 4 ...), and fails where that differs from outs, the fold
// in order: the combine region is not associative on these values.
// (Float scans differ in their last bits either way and are not
// compared.)
func (m *tevMachine) scanInTree(op *ttOp, xs, outs []*tevVal, axis int, reverse bool) {
	r := op.regions[0]
	nx := len(xs)
	shape := xs[0].t.shape
	n := int(shape[axis])
	stride := 1
	for _, d := range shape[axis+1:] {
		stride *= int(d)
	}
	total := xs[0].n()
	for start := 0; start < total; start++ {
		if start/stride%n != 0 {
			continue // not the first of its line
		}
		at := make([]int, n) // the line's elements in fold order
		for j := range at {
			at[j] = start + j*stride
			if reverse {
				at[j] = start + (n-1-j)*stride
			}
		}
		cur := make([][]int64, nx)
		for q, x := range xs {
			cur[q] = make([]int64, n)
			for j, k := range at {
				cur[q][j] = x.i[k]
			}
		}
		for d := 1; d < n; d *= 2 {
			next := make([][]int64, nx)
			for q := range next {
				next[q] = slices.Clone(cur[q])
			}
			for j := d; j < n; j++ {
				for q := range nx {
					m.vals[r.args[q]] = &tevVal{t: r.args[q].t, i: []int64{cur[q][j-d]}}
					m.vals[r.args[nx+q]] = &tevVal{t: r.args[nx+q].t, i: []int64{cur[q][j]}}
				}
				for q, y := range m.region(r) {
					next[q][j] = y.i[0]
				}
			}
			cur = next
		}
		for q, o := range outs {
			for j, k := range at {
				if o.i[k] != cur[q][j] {
					tevFail("tt.scan: its combine region folds element %d of a line to %d in order and to %d in a tree: it is not associative on these values, and a GPU folds in a tree", j, o.i[k], cur[q][j])
				}
			}
		}
	}
}

func (m *tevMachine) get(v *ttVal) *tevVal {
	x, ok := m.vals[v]
	if !ok {
		tevFail("value used before definition")
	}
	return x
}

func newTev(t ttType) *tevVal {
	n := int64(1)
	for _, d := range t.shape {
		n *= d
	}
	v := &tevVal{t: t}
	if t.isFloat() {
		v.f = make([]float64, n)
	} else {
		v.i = make([]int64, n)
	}
	return v
}

// round keeps a float in its element type's precision: rounded once to
// nearest even from the exact float64 value (f16 and bf16 directly, not
// through f32), with overflow to Inf.
func round(x float64, elem string) float64 {
	switch elem {
	case "f32":
		return float64(float32(x))
	case "f16":
		return float64(interpreter.RoundNarrow64(xla.Float16, x))
	case "bf16":
		return float64(interpreter.RoundNarrow64(xla.BFloat16, x))
	}
	return x
}

func parseLit(lit string, t ttType) (float64, int64) {
	switch {
	case lit == "true":
		return 0, 1
	case lit == "false":
		return 0, 0
	case strings.HasPrefix(lit, "0x") && t.isFloat():
		// The bit pattern of the element type (floatLit's NaN, Inf, f16
		// and bf16 constants).
		u, err := strconv.ParseUint(lit[2:], 16, t.bits())
		if err != nil || len(lit) != 2+t.bits()/4 {
			tevFail("%s literal %q", t.elem, lit)
		}
		switch t.elem {
		case "f32":
			return float64(math.Float32frombits(uint32(u))), 0
		case "f64":
			return math.Float64frombits(u), 0
		case "f16":
			return float64(xla.F16(u).Float32()), 0
		case "bf16":
			return float64(xla.BF16(u).Float32()), 0
		}
		tevFail("hex literal %q of %s", lit, t.elem)
	case t.isFloat():
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			tevFail("float literal %q", lit)
		}
		return f, 0
	}
	i, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		tevFail("int literal %q", lit)
	}
	return 0, i
}

// tevLib are libdevice's float functions, computed in float64 (then
// rounded to the call's type): Go's math, or internal/special's forms
// where math is inaccurate (exp near its overflow, log of subnormals,
// sinh and cosh past 709.78, asin and acos near ±1, log2 near 1).
var tevLib = map[string]func(float64) float64{
	"exp": special.RealExp, "log": special.RealLog, "tanh": math.Tanh, "erf": math.Erf, "sqrt": math.Sqrt,
	"rsqrt": func(x float64) float64 { return 1 / math.Sqrt(x) }, "sin": math.Sin, "cos": math.Cos,
	"log1p": math.Log1p, "expm1": math.Expm1, "tan": math.Tan, "rint": math.RoundToEven,
	"exp2": math.Exp2, "log2": special.RealLog2, "asin": special.RealAsin, "acos": special.RealAcos, "atan": math.Atan,
	"sinh": special.RealSinh, "cosh": special.RealCosh, "asinh": math.Asinh, "acosh": math.Acosh, "atanh": math.Atanh,
	"cbrt": math.Cbrt, "erfinv": special.ErfInv, "erfc": math.Erfc, "lgamma": special.Lgamma,
}

// tevIntLib are libdevice's integer bit counts, each into an i32.
var tevIntLib = map[string]func(int64) int64{
	"__nv_popc":   func(x int64) int64 { return int64(bits.OnesCount32(uint32(x))) },
	"__nv_popcll": func(x int64) int64 { return int64(bits.OnesCount64(uint64(x))) },
	"__nv_clz":    func(x int64) int64 { return int64(bits.LeadingZeros32(uint32(x))) },
	"__nv_clzll":  func(x int64) int64 { return int64(bits.LeadingZeros64(uint64(x))) },
}

func (m *tevMachine) op(op *ttOp) []*tevVal {
	in := func(i int) *tevVal { return m.get(op.operands[i]) }
	var res *tevVal
	if len(op.results) == 1 {
		res = newTev(op.results[0].t)
	}
	rt := ttType{}
	if len(op.results) > 0 {
		rt = op.results[0].t
	}
	bits := rt.bits()
	wrap := func(x int64) int64 { return intLit(x, bits) }
	name := op.name
	switch {
	case name == "tt.return":
		return []*tevVal{}
	case name == "tt.print":
		m.print(op)
	case name == "scf.yield" || name == "tt.reduce.return" || name == "tt.scan.return":
		out := make([]*tevVal, len(op.operands))
		for i := range op.operands {
			out[i] = in(i)
		}
		return out
	case name == "scf.condition":
		out := make([]*tevVal, len(op.operands))
		for i := range op.operands {
			out[i] = in(i)
		}
		return out
	case name == "arith.constant":
		f, i := parseLit(op.results[0].lit, rt)
		for k := 0; k < res.n(); k++ {
			if res.f != nil {
				res.f[k] = round(f, rt.elem)
			} else {
				res.i[k] = wrap(i)
			}
		}
	case name == "tt.get_program_id":
		res.i[0] = m.pid[op.attr("axis").(int64)]
	case name == "tt.make_range":
		for k := range res.i {
			res.i[k] = op.attr("start").(int64) + int64(k)
		}
	case name == "tt.splat":
		x := in(0)
		for k := 0; k < res.n(); k++ {
			if res.f != nil {
				res.f[k] = x.f[0]
			} else {
				res.i[k] = x.i[0]
			}
		}
		res.buf = x.buf
	case name == "tt.expand_dims" || name == "tt.reshape":
		x := in(0)
		res.f, res.i, res.buf = x.f, x.i, x.buf
	case name == "tt.broadcast":
		x := in(0)
		res.buf = x.buf
		eachIndex(rt.shape, func(k int, idx []int64) {
			src := 0
			for d, n := range x.t.shape {
				j := idx[d]
				if n == 1 {
					j = 0
				}
				src = src*int(n) + int(j)
			}
			if res.f != nil {
				res.f[k] = x.f[src]
			} else {
				res.i[k] = x.i[src]
			}
		})
	case name == "tt.join":
		// Stacked along a new last dim: element (..., 0) from x, (..., 1) from y.
		x, y := in(0), in(1)
		for k := range len(x.f) + len(x.i) {
			if res.f != nil {
				res.f[2*k], res.f[2*k+1] = x.f[k], y.f[k]
			} else {
				res.i[2*k], res.i[2*k+1] = x.i[k], y.i[k]
			}
		}
	case name == "tt.gather":
		// res[i] = x[i with its coordinate along axis idx[i]].
		x, idx := in(0), in(1)
		axis := int(op.attr("axis").(int64))
		n := x.t.shape[axis]
		eachIndex(rt.shape, func(k int, at []int64) {
			p := idx.i[k]
			if p < 0 || p >= n {
				tevFail("tt.gather position %d outside [0, %d) (undefined on a GPU)", p, n)
			}
			src := slices.Clone(at)
			src[axis] = p
			f := flat(x.t.shape, src)
			if res.f != nil {
				res.f[k] = x.f[f]
			} else {
				res.i[k] = x.i[f]
			}
		})
	case name == "tt.split":
		// The halves of the last dim (of size 2): x[..., 0] and x[..., 1].
		x := in(0)
		lo, hi := newTev(op.results[0].t), newTev(op.results[1].t)
		for k := range lo.n() {
			if x.f != nil {
				lo.f[k], hi.f[k] = x.f[2*k], x.f[2*k+1]
			} else {
				lo.i[k], hi.i[k] = x.i[2*k], x.i[2*k+1]
			}
		}
		m.vals[op.results[0]], m.vals[op.results[1]] = lo, hi
	case name == "tt.trans":
		x := in(0)
		order := op.attr("order").([]int64)
		eachIndex(rt.shape, func(k int, idx []int64) {
			srcIdx := make([]int64, len(idx))
			for i, o := range order {
				srcIdx[o] = idx[i]
			}
			src := flat(x.t.shape, srcIdx)
			if res.f != nil {
				res.f[k] = x.f[src]
			} else {
				res.i[k] = x.i[src]
			}
		})
	case name == "tt.addptr":
		p, o := in(0), in(1)
		res.buf = p.buf
		for k := range res.i {
			res.i[k] = p.i[k] + o.i[k]
		}
	case name == "gpu.barrier":
		clear(m.since)
		clear(m.owners)
	case name == "tt.load":
		p := in(0)
		b := m.bufs[p.buf]
		m.checkElem(name, p, b, rt.elem)
		if m.since[b]&(1|4) != 0 {
			tevFail("program %v loads argument %d after storing to it with no gpu.barrier between", m.pid, p.buf)
		}
		m.since[b] |= 2
		var mask, other *tevVal
		if len(op.operands) > 1 {
			mask, other = in(1), in(2)
		}
		for k := 0; k < res.n(); k++ {
			if mask != nil && mask.i[k] == 0 {
				if res.f != nil {
					res.f[k] = other.f[k]
				} else {
					res.i[k] = other.i[k]
				}
				continue
			}
			a := p.i[k]
			if a < 0 || int(a) >= max(len(b.f), len(b.i)) {
				tevFail("program %v loads element %d of argument %d (size %d)", m.pid, a, p.buf, max(len(b.f), len(b.i)))
			}
			if res.f != nil {
				res.f[k] = b.f[a]
			} else {
				res.i[k] = b.i[a]
			}
		}
	case name == "tt.store":
		p, x := in(0), in(1)
		b := m.bufs[p.buf]
		m.checkElem(name, p, b, x.t.elem)
		if m.since[b]&(2|4) != 0 {
			tevFail("program %v stores to argument %d after loading from it with no gpu.barrier between", m.pid, p.buf)
		}
		m.since[b] |= 1
		owners := m.owners[b]
		if owners == nil {
			owners = map[int64]tevOwner{}
			m.owners[b] = owners
		}
		var mask *tevVal
		if len(op.operands) > 2 {
			mask = in(2)
		}
		for k := 0; k < x.n(); k++ {
			if mask != nil && mask.i[k] == 0 {
				continue
			}
			a := p.i[k]
			if a < 0 || int(a) >= max(len(b.f), len(b.i)) {
				tevFail("program %v stores element %d of argument %d (size %d)", m.pid, a, p.buf, max(len(b.f), len(b.i)))
			}
			me := tevOwner{op, k}
			if o, ok := owners[a]; ok && o != me {
				tevFail("program %v stores element %d of argument %d, which another thread stored, with no gpu.barrier between", m.pid, a, p.buf)
			}
			owners[a] = me
			if b.f != nil {
				b.f[a] = x.f[k]
			} else {
				b.i[a] = x.i[k]
			}
		}
	case name == "tt.atomic_rmw":
		m.atomic(op, in(0), in(1), res)
	case name == "tt.atomic_cas":
		m.atomicCas(op, in(0), in(1), in(2), res)
	case name == "tt.extern_elementwise":
		sym := op.attr("symbol").(string)
		base := strings.TrimSuffix(strings.TrimPrefix(sym, "__nv_"), "f")
		if rt.elem == "f64" {
			base = strings.TrimPrefix(sym, "__nv_")
		}
		if fn := tevIntLib[sym]; fn != nil {
			x := in(0)
			if x.t.elem != map[bool]string{true: "i64", false: "i32"}[strings.HasSuffix(sym, "ll")] {
				tevFail("%s of %s", sym, x.t.elem)
			}
			for k := range res.i {
				res.i[k] = fn(x.i[k])
			}
			break
		}
		if base == "pow" || base == "fmod" || base == "atan2" {
			x, y := in(0), in(1)
			fn := map[string]func(a, b float64) float64{"pow": special.RealPow, "fmod": math.Mod, "atan2": special.Atan2}[base]
			for k := range res.f {
				res.f[k] = round(fn(x.f[k], y.f[k]), rt.elem)
			}
			break
		}
		fn := tevLib[base]
		if fn == nil {
			tevFail("unknown libdevice function %s", sym)
		}
		x := in(0)
		for k := range res.f {
			res.f[k] = round(fn(x.f[k]), rt.elem)
		}
	case name == "tt.reduce":
		x := in(0)
		axis := int(op.attr("axis").(int64))
		r := op.regions[0]
		combineOnly(name, r)
		first := map[int]bool{}
		eachIndex(x.t.shape, func(k int, idx []int64) {
			dst := append(append([]int64{}, idx[:axis]...), idx[axis+1:]...)
			j := flat(rt.shape, dst)
			elem := func(vals []float64, ints []int64, at int) *tevVal {
				v := &tevVal{t: r.args[0].t}
				if vals != nil {
					v.f = []float64{vals[at]}
				} else {
					v.i = []int64{ints[at]}
				}
				return v
			}
			cur := elem(x.f, x.i, k)
			if first[j] {
				m.vals[r.args[0]] = elem(res.f, res.i, j)
				m.vals[r.args[1]] = cur
				cur = m.region(r)[0]
			}
			first[j] = true
			if res.f != nil {
				res.f[j] = cur.f[0]
			} else {
				res.i[j] = cur.i[0]
			}
		})
	case name == "tt.scan":
		// Sequentially along the axis through the combine region: element
		// i is region(element i-1's results, the xs at i), the first the
		// xs at 0; with reverse = true from the end, element i+1 before i.
		nx := len(op.operands)
		xs := make([]*tevVal, nx)
		outs := make([]*tevVal, nx)
		for q := range xs {
			xs[q] = in(q)
			outs[q] = newTev(op.results[q].t)
		}
		x := xs[0]
		axis := int(op.attr("axis").(int64))
		reverse, ok := op.attr("reverse").(bool)
		if !ok {
			tevFail("tt.scan without a bool reverse")
		}
		r := op.regions[0]
		combineOnly(name, r)
		stride, n := 1, int(x.t.shape[axis])
		for _, d := range x.t.shape[axis+1:] {
			stride *= int(d)
		}
		elem := func(v *tevVal, t ttType, at int) *tevVal {
			e := &tevVal{t: t}
			if v.f != nil {
				e.f = []float64{v.f[at]}
			} else {
				e.i = []int64{v.i[at]}
			}
			return e
		}
		total := len(x.f) + len(x.i)
		for j := 0; j < total; j++ {
			// Row major, or its reverse: the element before k along the
			// axis is always done first.
			k, prev, first := j, j-stride, j/stride%n == 0
			if reverse {
				k = total - 1 - j
				prev, first = k+stride, k/stride%n == n-1
			}
			cur := make([]*tevVal, nx)
			for q := range xs {
				cur[q] = elem(xs[q], r.args[nx+q].t, k)
			}
			if !first {
				for q := range xs {
					m.vals[r.args[q]] = elem(outs[q], r.args[q].t, prev)
					m.vals[r.args[nx+q]] = cur[q]
				}
				cur = m.region(r)
			}
			for q, o := range outs {
				if o.f != nil {
					o.f[k] = cur[q].f[0]
				} else {
					o.i[k] = cur[q].i[0]
				}
			}
		}
		if !slices.ContainsFunc(r.args, func(a *ttVal) bool { return a.t.isFloat() }) {
			m.scanInTree(op, xs, outs, axis, reverse)
		}
		if res != nil {
			res = outs[0]
		} else {
			for q, o := range outs {
				m.vals[op.results[q]] = o
			}
		}
	case name == "tt.dot":
		// [M,K] by [K,N], or a batch of them: [B,M,K] by [B,K,N].
		a, b, c := in(0), in(1), in(2)
		r := len(a.t.shape)
		M, K, N := a.t.shape[r-2], a.t.shape[r-1], b.t.shape[r-1]
		B := int64(1)
		if r == 3 {
			B = a.t.shape[0]
		}
		if minK := map[string]int64{"f16": 16, "bf16": 16, "i8": 32, "f64": 16}[a.t.elem]; K < minK || (a.t.elem == "f64" && (M < 16 || N < 8)) {
			tevFail("tt.dot of %dx%d by %dx%d %s is below the tensor-core minimum", M, K, K, N, a.t.elem)
		}
		if a.t.elem == "f64" && (fromExtf(op.operands[0]) || fromExtf(op.operands[1])) {
			// Seen on an H100 (XLA's Triton, jax 0.11.2): sums far off.
			tevFail("f64 tt.dot of operands widened in the kernel (arith.extf): Triton sums them wrongly")
		}
		for bb := int64(0); bb < B; bb++ {
			ao, bo, ro := bb*M*K, bb*K*N, bb*M*N
			for i := int64(0); i < M; i++ {
				for j := int64(0); j < N; j++ {
					if res.f != nil {
						s := c.f[ro+i*N+j]
						for k := int64(0); k < K; k++ {
							s += a.f[ao+i*K+k] * b.f[bo+k*N+j]
						}
						res.f[ro+i*N+j] = round(s, rt.elem)
					} else {
						s := c.i[ro+i*N+j]
						for k := int64(0); k < K; k++ {
							s += a.i[ao+i*K+k] * b.i[bo+k*N+j]
						}
						res.i[ro+i*N+j] = wrap(s)
					}
				}
			}
		}
	case name == "scf.if":
		var ys []*tevVal
		switch {
		case in(0).i[0] != 0:
			ys = m.region(op.regions[0])
		case len(op.regions) > 1:
			ys = m.region(op.regions[1])
		}
		for i, r := range op.results {
			m.vals[r] = ys[i]
		}
		return nil
	case name == "scf.for":
		lo, hi, step := in(0).i[0], in(1).i[0], in(2).i[0]
		carry := make([]*tevVal, len(op.operands)-3)
		for i := range carry {
			carry[i] = in(3 + i)
		}
		r := op.regions[0]
		for iv := lo; iv < hi; iv += step {
			m.vals[r.args[0]] = &tevVal{t: r.args[0].t, i: []int64{iv}}
			for i, c := range carry {
				m.vals[r.args[1+i]] = c
			}
			carry = m.region(r)
		}
		for i, c := range carry {
			m.vals[op.results[i]] = c
		}
		return nil
	case name == "scf.while":
		carry := make([]*tevVal, len(op.operands))
		for i := range carry {
			carry[i] = in(i)
		}
		before, after := op.regions[0], op.regions[1]
		for steps := 0; ; steps++ {
			if steps > 1<<20 {
				tevFail("scf.while runs away")
			}
			for i, c := range carry {
				m.vals[before.args[i]] = c
			}
			out := m.region(before)
			if out[0].i[0] == 0 {
				carry = out[1:]
				break
			}
			for i, c := range out[1:] {
				m.vals[after.args[i]] = c
			}
			carry = m.region(after)
		}
		for i, c := range carry {
			m.vals[op.results[i]] = c
		}
		return nil
	case name == "arith.cmpi" || name == "arith.cmpf":
		x, y := in(0), in(1)
		ob := op.operands[0].t.bits()
		for k := range res.i {
			var r bool
			if name == "arith.cmpf" {
				a, b := x.f[k], y.f[k]
				nan := math.IsNaN(a) || math.IsNaN(b)
				switch op.pred {
				case "oeq":
					r = a == b
				case "une":
					r = nan || a != b
				case "olt":
					r = a < b
				case "ole":
					r = a <= b
				case "ogt":
					r = a > b
				case "oge":
					r = a >= b
				case "uno":
					r = nan
				default:
					tevFail("cmpf %s", op.pred)
				}
			} else {
				a, b := x.i[k], y.i[k]
				ua, ub := uint64(a)&mask(ob), uint64(b)&mask(ob)
				switch op.pred {
				case "eq":
					r = a == b
				case "ne":
					r = a != b
				case "slt":
					r = a < b
				case "sle":
					r = a <= b
				case "sgt":
					r = a > b
				case "sge":
					r = a >= b
				case "ult":
					r = ua < ub
				case "ule":
					r = ua <= ub
				case "ugt":
					r = ua > ub
				case "uge":
					r = ua >= ub
				default:
					tevFail("cmpi %s", op.pred)
				}
			}
			if r {
				res.i[k] = 1
			}
		}
	case name == "arith.select":
		c, x, y := in(0), in(1), in(2)
		if strings.HasPrefix(rt.elem, "!tt.ptr") {
			// Pointers into two buffers would need a buffer per lane (a
			// cas's masked lanes point at the first element of their own).
			if x.buf != y.buf {
				tevFail("arith.select of pointers into arguments %d and %d", x.buf, y.buf)
			}
			res.buf = x.buf
		}
		for k := 0; k < res.n(); k++ {
			ck := c.i[0]
			if len(c.i) > 1 {
				ck = c.i[k]
			}
			src := y
			if ck != 0 {
				src = x
			}
			if res.f != nil {
				res.f[k] = src.f[k]
			} else {
				res.i[k] = src.i[k]
			}
		}
	case name == "tt.bitcast" && strings.HasPrefix(rt.elem, "!tt.ptr"):
		// Pointers to another element type of the same width (an atomic
		// max of floats through integer pointers): the same addresses.
		x := in(0)
		pointee := func(e string) int {
			return ttType{elem: strings.TrimSuffix(strings.TrimPrefix(e, "!tt.ptr<"), ">")}.bits()
		}
		if pointee(op.operands[0].t.elem) != pointee(rt.elem) {
			tevFail("bitcast %s to %s", op.operands[0].t.elem, rt.elem)
		}
		res.buf = x.buf
		copy(res.i, x.i)
	case isCastOp(name) || name == "tt.bitcast":
		x := in(0)
		sb := op.operands[0].t.bits()
		for k := 0; k < res.n(); k++ {
			switch name {
			case "arith.extf", "arith.truncf":
				res.f[k] = round(x.f[k], rt.elem)
			case "arith.extsi":
				v := x.i[k]
				if sb == 1 { // i1 true is all ones
					v = -(v & 1)
				}
				res.i[k] = wrap(v)
			case "arith.trunci":
				res.i[k] = wrap(x.i[k])
			case "arith.extui":
				res.i[k] = wrap(int64(uint64(x.i[k]) & mask(sb)))
			case "arith.sitofp", "arith.uitofp":
				// Triton's NVIDIA lowering converts integers to f16 and
				// bf16 through f32: two roundings.
				via := rt.elem
				if via == "f16" || via == "bf16" {
					via = "f32"
				}
				res.f[k] = round(intToFloat(x.i[k], name == "arith.uitofp", sb, via), rt.elem)
			case "tt.bitcast": // arith.bitcast on tensors: XLA's Triton refuses it
				// (Floats are float64 here: a signalling NaN comes back
				// quiet, where a GPU keeps its bits.)
				from := op.operands[0].t.elem
				if sb != rt.bits() || from == rt.elem {
					tevFail("bitcast %s to %s", from, rt.elem)
				}
				var bits uint64
				switch from {
				case "f64":
					bits = math.Float64bits(x.f[k])
				case "f32":
					bits = uint64(math.Float32bits(float32(x.f[k])))
				case "f16":
					bits = uint64(xla.F16FromFloat64(x.f[k]))
				case "bf16":
					bits = uint64(xla.BF16FromFloat64(x.f[k]))
				default:
					bits = uint64(x.i[k]) & mask(sb)
				}
				switch rt.elem {
				case "f64":
					res.f[k] = math.Float64frombits(bits)
				case "f32":
					res.f[k] = float64(math.Float32frombits(uint32(bits)))
				case "f16":
					res.f[k] = float64(xla.F16(bits).Float32())
				case "bf16":
					res.f[k] = float64(xla.BF16(bits).Float32())
				default:
					res.i[k] = wrap(int64(bits))
				}
			case "arith.fptosi", "arith.fptoui":
				// Outside the target's range (NaN included) the result is
				// poison: the lowering must never convert such a value.
				v := math.Trunc(x.f[k])
				tb := rt.bits()
				lo, hi := -math.Ldexp(1, tb-1), math.Ldexp(1, tb-1)
				if name == "arith.fptoui" {
					lo, hi = 0, math.Ldexp(1, tb)
				}
				if !(v >= lo && v < hi) {
					tevFail("%s of %v to %s is poison", name, x.f[k], rt.elem)
				}
				if v >= math.Ldexp(1, 63) {
					res.i[k] = wrap(int64(uint64(v)))
				} else {
					res.i[k] = wrap(int64(v))
				}
			default:
				tevFail("cast %s", name)
			}
		}
	case strings.HasPrefix(name, "arith.") || strings.HasPrefix(name, "math.") || name == "tt.precise_divf":
		// What Triton's NVIDIA lowering cannot do (it aborts the
		// process) or does approximately.
		switch e := rt.elem; {
		case (name == "arith.divf" || name == "arith.remf") && e != "f32" && e != "f64":
			tevFail("%s on %s: Triton's NVIDIA lowering takes 32 and 64 bits only", name, e)
		case name == "arith.remf":
			tevFail("arith.remf: the lowering takes remainders with libdevice's exact fmod (LLVM's NVPTX frem need not be exact)")
		case name == "arith.divf" && e == "f32":
			tevFail("arith.divf on f32 is approximate on NVIDIA GPUs (tt.precise_divf is IEEE)")
		}
		m.arith(op, res)
	default:
		tevFail("no evaluation of %s", name)
	}
	if res != nil {
		m.vals[op.results[0]] = res
	}
	return nil
}

// atomic evaluates tt.atomic_rmw: each element the mask keeps (in order)
// becomes old op x; res is old there and 0 elsewhere (a GPU leaves those
// undefined: the lowering must select them).
func (m *tevMachine) atomic(op *ttOp, p, x, res *tevVal) {
	b := m.bufs[p.buf]
	// A float buffer updated through integer pointers of its width works
	// on the floats' bits.
	bitView := b.f != nil && x.t.elem == map[string]string{"f32": "i32", "f64": "i64"}[b.elem] && p.t.elem == ptrType(x.t.elem)
	if !bitView {
		m.checkElem(op.name, p, b, x.t.elem)
	}
	if m.since[b]&(1|2) != 0 {
		tevFail("program %v updates argument %d atomically after loading or storing it with no gpu.barrier between", m.pid, p.buf)
	}
	if op.attr("sem") != int64(4) || op.attr("scope") != int64(1) {
		tevFail("tt.atomic_rmw with sem %v, scope %v", op.attr("sem"), op.attr("scope"))
	}
	rmw, _ := op.attr("atomic_rmw_op").(int64)
	// Updates of one element by two ops may fall to different threads,
	// in either order: only updates of one kind (not exch) commute. The
	// two integer updates of a float max (min) on its bits are one kind.
	family := rmw
	if bitView {
		family = map[int64]int64{6: 106, 9: 106, 7: 107, 8: 107}[rmw]
	}
	if m.since[b]&4 != 0 && (m.atomOp[b] != family || rmw == 10) {
		tevFail("program %v updates argument %d with atomic_rmw %d after atomic_rmw %d with no gpu.barrier between", m.pid, p.buf, rmw, m.atomOp[b])
	}
	m.since[b] |= 4
	m.atomOp[b] = family
	var keep *tevVal
	if len(op.operands) > 2 {
		keep = m.get(op.operands[2])
	}
	bits := x.t.bits()
	for k := 0; k < x.n(); k++ {
		if keep != nil && keep.i[k] == 0 {
			continue
		}
		a := p.i[k]
		if a < 0 || int(a) >= max(len(b.f), len(b.i)) {
			tevFail("program %v updates element %d of argument %d (size %d)", m.pid, a, p.buf, max(len(b.f), len(b.i)))
		}
		if bitView {
			b.f[a] = m.bitsAtomic(rmw, b.elem, b.f[a], x.i[k], x.t.bits(), &res.i[k])
			continue
		}
		if b.f != nil {
			old := b.f[a]
			switch rmw {
			case 5:
				b.f[a] = round(old+x.f[k], x.t.elem)
			case 10:
				b.f[a] = x.f[k]
			default:
				tevFail("tt.atomic_rmw %d of %s", rmw, x.t.elem)
			}
			res.f[k] = old
			continue
		}
		old := b.i[a]
		b.i[a] = intLit(intRMW(rmw, old, x.i[k], bits, x.t.elem), bits)
		res.i[k] = old
	}
}

// atomicCas is tt.atomic_cas: lane after lane (row-major), an element
// that holds cmp's bits becomes x; each lane gets the element's value
// before it. It commutes with no other update: one after another update of
// the buffer with no gpu.barrier between is an error.
func (m *tevMachine) atomicCas(op *ttOp, p, cmp, x, res *tevVal) {
	b := m.bufs[p.buf]
	m.checkElem(op.name, p, b, x.t.elem)
	if m.since[b]&(1|2) != 0 {
		tevFail("program %v swaps argument %d atomically after loading or storing it with no gpu.barrier between", m.pid, p.buf)
	}
	if op.attr("sem") != int64(4) || op.attr("scope") != int64(1) {
		tevFail("tt.atomic_cas with sem %v, scope %v", op.attr("sem"), op.attr("scope"))
	}
	if m.since[b]&4 != 0 {
		tevFail("program %v swaps argument %d after another atomic update of it with no gpu.barrier between", m.pid, p.buf)
	}
	m.since[b] |= 4
	m.atomOp[b] = -1 // no atomic_rmw code: nothing commutes with it
	bits := x.t.bits()
	for k := 0; k < x.n(); k++ {
		a := p.i[k]
		if a < 0 || int(a) >= max(len(b.f), len(b.i)) {
			tevFail("program %v swaps element %d of argument %d (size %d)", m.pid, a, p.buf, max(len(b.f), len(b.i)))
		}
		if b.f != nil {
			old := b.f[a]
			if floatBits(old, bits) == floatBits(cmp.f[k], bits) {
				b.f[a] = x.f[k]
			}
			res.f[k] = old
			continue
		}
		old := b.i[a]
		if uint64(old)&mask(bits) == uint64(cmp.i[k])&mask(bits) {
			b.i[a] = x.i[k]
		}
		res.i[k] = old
	}
}

// floatBits are the bits of f as a float of the given width (32 or 64).
func floatBits(f float64, bits int) uint64 {
	if bits == 32 {
		return uint64(math.Float32bits(float32(f)))
	}
	return math.Float64bits(f)
}

// intRMW is integer atomic_rmw code rmw of old with v (bits wide; elem
// names the type for errors).
func intRMW(rmw, old, v int64, bits int, elem string) int64 {
	uo, uv := uint64(old)&mask(bits), uint64(v)&mask(bits)
	switch rmw {
	case 1:
		return old & v
	case 2:
		return old | v
	case 3:
		return old ^ v
	case 4:
		return old + v
	case 6:
		return max(old, v)
	case 7:
		return min(old, v)
	case 8:
		return int64(max(uo, uv))
	case 9:
		return int64(min(uo, uv))
	case 10:
		return v
	}
	tevFail("tt.atomic_rmw %d of %s", rmw, elem)
	return 0
}

// bitsAtomic applies integer atomic_rmw code rmw (a max or min) with
// value v (bits wide) to float f of a buffer of elem, on its bits: the new
// float, and (in *old) the old bits.
func (m *tevMachine) bitsAtomic(rmw int64, elem string, f float64, v int64, bits int, old *int64) float64 {
	if rmw < 6 || rmw > 9 {
		tevFail("tt.atomic_rmw %d on the bits of %s", rmw, elem)
	}
	if elem == "f32" {
		*old = int64(int32(math.Float32bits(float32(f))))
		return float64(math.Float32frombits(uint32(intRMW(rmw, *old, v, bits, elem))))
	}
	*old = int64(math.Float64bits(f))
	return math.Float64frombits(uint64(intRMW(rmw, *old, v, bits, elem)))
}

// intToFloat rounds the integer v (its low bits read as unsigned when
// unsigned) once to float type elem, as arith.sitofp/uitofp do (a 64-bit
// integer going through float64 first could round twice).
func intToFloat(v int64, unsigned bool, bits int, elem string) float64 {
	prec := map[string]uint{"f64": 53, "f32": 24, "f16": 11, "bf16": 8}[elem]
	if prec == 0 {
		tevFail("int to %s", elem)
	}
	z := new(big.Float).SetPrec(prec).SetMode(big.ToNearestEven)
	if unsigned {
		z.SetUint64(uint64(v) & mask(bits))
	} else {
		z.SetInt64(v)
	}
	f, _ := z.Float64()   // exact: prec <= 53
	return round(f, elem) // overflow (f16 past 65504) to Inf
}

// checkElem fails unless pointer p, its buffer b and the loaded or
// stored value (element type elem) agree on the element type.
func (m *tevMachine) checkElem(name string, p *tevVal, b *tevBuf, elem string) {
	if pe := p.t.elem; pe != ptrType(b.elem) || pe != ptrType(elem) {
		tevFail("%s of %s through %s from a buffer of %s", name, elem, pe, b.elem)
	}
}

func mask(bits int) uint64 {
	if bits >= 64 || bits <= 0 {
		return ^uint64(0)
	}
	return 1<<uint(bits) - 1
}

func (m *tevMachine) arith(op *ttOp, res *tevVal) {
	rt := op.results[0].t
	bits := rt.bits()
	xs := make([]*tevVal, len(op.operands))
	for i, o := range op.operands {
		xs[i] = m.get(o)
	}
	for k := 0; k < res.n(); k++ {
		if res.f != nil {
			a := xs[0].f[k]
			b := 0.0
			if len(xs) > 1 {
				b = xs[1].f[k]
			}
			var r float64
			switch op.name {
			case "arith.addf":
				r = a + b
			case "arith.subf":
				r = a - b
			case "arith.mulf":
				r = a * b
			case "arith.divf", "tt.precise_divf":
				r = a / b
			case "arith.remf":
				r = math.Mod(a, b)
			case "arith.maximumf", "arith.minimumf":
				// IEEE 754-2019 maximum/minimum (LLVM's llvm.maximum):
				// NaN if either is NaN. Go's math.Max(NaN, +Inf) is +Inf.
				switch {
				case math.IsNaN(a) || math.IsNaN(b):
					r = math.NaN()
				case op.name == "arith.maximumf":
					r = math.Max(a, b)
				default:
					r = math.Min(a, b)
				}
			case "arith.maxnumf", "arith.minnumf": // NaN only when both are
				switch {
				case math.IsNaN(a):
					r = b
				case math.IsNaN(b):
					r = a
				case op.name == "arith.maxnumf":
					r = math.Max(a, b)
				default:
					r = math.Min(a, b)
				}
			case "arith.negf":
				r = -a
			case "math.absf":
				r = math.Abs(a)
			case "math.floor":
				r = math.Floor(a)
			case "math.ceil":
				r = math.Ceil(a)
			default:
				tevFail("no evaluation of %s", op.name)
			}
			res.f[k] = round(r, rt.elem)
			continue
		}
		a := xs[0].i[k]
		var b int64
		if len(xs) > 1 {
			b = xs[1].i[k]
		}
		ua, ub := uint64(a)&mask(bits), uint64(b)&mask(bits)
		var r int64
		switch op.name {
		case "arith.addi":
			r = a + b
		case "arith.subi":
			r = a - b
		case "arith.muli":
			r = a * b
		case "arith.divsi", "arith.remsi", "arith.divui", "arith.remui":
			if b == 0 {
				tevFail("integer division by zero")
			}
			if (op.name == "arith.divsi" || op.name == "arith.remsi") && b == -1 && a == -1<<(bits-1) {
				tevFail("%s overflows (minimum of i%d by -1)", op.name, bits)
			}
			switch op.name {
			case "arith.divsi":
				r = a / b
			case "arith.remsi":
				r = a % b
			case "arith.divui":
				r = int64(ua / ub)
			default:
				r = int64(ua % ub)
			}
		case "arith.andi":
			r = a & b
		case "arith.ori":
			r = a | b
		case "arith.xori":
			r = a ^ b
		case "arith.shli", "arith.shrsi", "arith.shrui":
			if ub >= uint64(bits) {
				tevFail("%s by %d of an i%d: poison in LLVM", op.name, ub, bits)
			}
			switch op.name {
			case "arith.shli":
				r = a << ub
			case "arith.shrsi":
				r = a >> ub // a is sign-extended
			default:
				r = int64(ua >> ub)
			}
		case "arith.maxsi":
			r = max(a, b)
		case "arith.minsi":
			r = min(a, b)
		case "arith.maxui":
			r = int64(max(ua, ub))
		case "arith.minui":
			r = int64(min(ua, ub))
		case "math.absi":
			r = a
			if a < 0 {
				r = -a
			}
		default:
			tevFail("no evaluation of %s", op.name)
		}
		res.i[k] = intLit(r, bits)
	}
}

// eachIndex calls f with every row-major index of shape.
func eachIndex(shape []int64, f func(k int, idx []int64)) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	idx := make([]int64, len(shape))
	for k := int64(0); k < n; k++ {
		f(int(k), idx)
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

func flat(shape, idx []int64) int {
	k := 0
	for d, n := range shape {
		k = k*int(n) + int(idx[d])
	}
	return k
}

// fromExtf reports whether any element of v came from an arith.extf
// through ops that only move or pick elements: the evaluator's model of
// the f64 tt.dot operands Triton summed wrongly on an H100, kept apart
// from the lowering's own test (widenedInKernel) so that each checks the
// other.
func fromExtf(v *ttVal) bool {
	moves := map[string][]int{"tt.trans": {0}, "tt.reshape": {0}, "tt.broadcast": {0},
		"tt.expand_dims": {0}, "tt.splat": {0}, "arith.select": {1, 2},
		"tt.join": {0, 1}, "tt.split": {0}, "tt.gather": {0}}
	stack := []*ttVal{v}
	for len(stack) > 0 {
		v, stack = stack[len(stack)-1], stack[:len(stack)-1]
		if v.def == nil {
			continue
		}
		if v.def.name == "arith.extf" {
			return true
		}
		for _, i := range moves[v.def.name] {
			stack = append(stack, v.def.operands[i])
		}
	}
	return false
}

// newTevBuf copies a tensor into an evaluator buffer of memory type elem.
// Integers are kept as the evaluator keeps them, sign-extended from their
// width (a u8 200 is the i8 -56); f16 and bf16 are the interpreter's
// float32 values of the type.
func newTevBuf(x *interpreter.Tensor, elem string) (*tevBuf, error) {
	b := &tevBuf{elem: elem}
	bits := ttType{elem: elem}.bits()
	switch d := x.Data.(type) {
	case []float32:
		for _, v := range d {
			b.f = append(b.f, float64(v))
		}
	case []float64:
		b.f = append([]float64{}, d...)
	case []int8:
		b.i = intsOf(d, bits)
	case []int16:
		b.i = intsOf(d, bits)
	case []int32:
		b.i = intsOf(d, bits)
	case []int64:
		b.i = intsOf(d, bits)
	case []uint8:
		b.i = intsOf(d, bits)
	case []uint16:
		b.i = intsOf(d, bits)
	case []uint32:
		b.i = intsOf(d, bits)
	case []uint64:
		b.i = intsOf(d, bits)
	case []bool:
		b.i = make([]int64, len(d))
		for i, v := range d {
			if v {
				b.i[i] = 1
			}
		}
	default:
		return nil, fmt.Errorf("a tensor of %v, which the Triton lowering does not take", x.Shape)
	}
	if isF := (ttType{elem: elem}).isFloat(); len(b.f) > 0 && !isF || len(b.i) > 0 && isF {
		return nil, fmt.Errorf("a tensor of %v for a buffer of %s", x.Shape, elem)
	}
	return b, nil
}

// tevTensor copies an evaluator buffer into a tensor of shape (integers
// truncated to the dtype's width, which reads them as its signedness).
func tevTensor(b *tevBuf, shape xla.Shape) (*interpreter.Tensor, error) {
	x := interpreter.NewTensor(shape)
	switch d := x.Data.(type) {
	case []float32:
		for i := range d {
			d[i] = float32(b.f[i])
		}
	case []float64:
		copy(d, b.f)
	case []int8:
		setInts(d, b.i)
	case []int16:
		setInts(d, b.i)
	case []int32:
		setInts(d, b.i)
	case []int64:
		setInts(d, b.i)
	case []uint8:
		setInts(d, b.i)
	case []uint16:
		setInts(d, b.i)
	case []uint32:
		setInts(d, b.i)
	case []uint64:
		setInts(d, b.i)
	case []bool:
		for i := range d {
			d[i] = b.i[i] != 0
		}
	default:
		return nil, fmt.Errorf("an output of %v, which the Triton lowering does not take", shape)
	}
	return x, nil
}

type anyInt interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// intsOf is d as the evaluator keeps integers: sign-extended from bits.
func intsOf[T anyInt](d []T, bits int) []int64 {
	out := make([]int64, len(d))
	for i, v := range d {
		out[i] = intLit(int64(v), bits)
	}
	return out
}

// setInts stores the evaluator's integers in d, truncated to T.
func setInts[T anyInt](d []T, src []int64) {
	for i := range d {
		d[i] = T(src[i])
	}
}

// EvalTriton runs the Triton form of a call on the CPU, to check a kernel
// where no GPU is at hand: kernel and spec are traced and lowered as Call
// lowers them for Triton (the race check included: its error is
// returned), and the TTIR is run by a reference evaluator of its ops on
// args (the call's operands), every program of the grid one after another
// in row-major order and then again in reverse. It returns the outputs of
// the row-major run; an output no operand is aliased to starts as NaN (or
// -1 for integers: a GPU leaves what memory held). It fails, naming the
// problem, on what a GPU leaves undefined or racy: an access outside a
// buffer, a load of what another thread of the program stored without a
// gpu.barrier between, an out-of-range float-to-integer conversion, an
// integer division by zero, an integer scan whose combine folds its
// values differently in a tree (as a GPU folds) than in order (it is not
// associative), and outputs that differ, to the bit, between the two
// orders, except outputs that float atomic adds update (their sums round
// in the order the programs run); with
// CompilerParams.OrderDependentAtomics the orders are not compared. f16 and bf16 round after each op,
// as on a GPU; math functions are Go's (internal/special's where Go's are
// inaccurate), not libdevice's; floats are kept as float64, so a
// signalling NaN comes back quieted (its bits differ from a GPU's). The
// evaluator is what halo's own tests check every Triton kernel with; a run
// takes time in proportion to the grid times the block sizes (a model of
// the ops, not a fast path): EvalTritonContext can be stopped.
func EvalTriton(kernel KernelFunc, spec CallSpec, args ...*interpreter.Tensor) ([]*interpreter.Tensor, error) {
	return EvalTritonContext(context.Background(), kernel, spec, args...)
}

// EvalTritonContext is EvalTriton stopping, with ctx's error, when ctx
// ends (it looks between programs); a nil ctx never ends.
func EvalTritonContext(ctx context.Context, kernel KernelFunc, spec CallSpec, args ...*interpreter.Tensor) ([]*interpreter.Tensor, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	types := make([]stablehlo.TensorType, len(args))
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("pallas: EvalTriton: argument %d is nil", i)
		}
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("pallas: EvalTriton: argument %d: %w", i, err)
		}
		types[i] = stablehlo.TensorOf(a.Shape)
	}
	spec.Backend = Triton
	p, err := Trace(kernel, spec, types)
	if err != nil {
		return nil, err
	}
	f, grid, _, _, err := checkedTritonFunc(p, spec.CompilerParams)
	if err != nil {
		return nil, err
	}
	outs, err := evalTritonRun(ctx, p, f, grid, args, false, debugWriter{spec.CompilerParams.DebugOutput})
	if err != nil {
		return nil, err
	}
	if grid[0]*grid[1]*grid[2] <= 1 {
		return outs, nil
	}
	back, err := evalTritonRun(ctx, p, f, grid, args, true, nil) // prints once, in the first run
	if err != nil || spec.CompilerParams.OrderDependentAtomics {
		return outs, err // the outputs may depend on the order: asked for
	}
	floatAdds := floatAddOutputs(p)
	for i := range outs {
		if !floatAdds[i] && !sameTensorBits(outs[i], back[i]) {
			return nil, &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf(
				"output %d differs between the programs run in row-major order and in reverse: they race", i)}
		}
	}
	return outs, nil
}

// evalTritonRun runs f, p's Triton kernel, over grid on copies of args
// with the programs in row-major order or reversed, and returns the
// outputs (starting as their aliased operand, else NaN / -1).
func evalTritonRun(ctx context.Context, p *Program, f *ttFunc, grid [3]int64, args []*interpreter.Tensor, reverse bool, out io.Writer) (outs []*interpreter.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil { // a bug of the evaluator, said as an error rather than a crash
			outs, err = nil, &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf("the evaluator failed (a bug in halo): %v", r)}
		}
	}()
	np, nin := p.NumPrefetch, p.NumInputs
	if len(args) != np+nin {
		return nil, fmt.Errorf("pallas: kernel %q takes %d operands, got %d", p.Name, np+nin, len(args))
	}
	var bufs []*tevBuf
	for i, a := range args {
		e, _ := ttMemElem(p.Refs[i].DType)
		b, err := newTevBuf(a, e)
		if err != nil {
			return nil, fmt.Errorf("pallas: kernel %q: operand %d: %w", p.Name, i, err)
		}
		bufs = append(bufs, b)
	}
	shapes := make([]xla.Shape, p.NumOutputs)
	for i := range shapes {
		r := p.Refs[np+nin+i]
		shapes[i] = xla.MakeShape(r.DType, r.ArrayShape...)
		e, _ := ttMemElem(r.DType)
		var b *tevBuf
		if r.AliasOf >= 0 {
			b = bufs[r.AliasOf] // the same memory, as on a GPU
		} else {
			var err error
			if b, err = newTevBuf(interpreter.NewTensor(shapes[i]), e); err != nil {
				return nil, fmt.Errorf("pallas: kernel %q: output %d: %w", p.Name, i, err)
			}
			for k := range b.f {
				b.f[k] = math.NaN()
			}
			for k := range b.i {
				b.i[k] = -1
			}
		}
		bufs = append(bufs, b)
	}
	if err := tevRunOrder(ctx, f, grid, bufs, reverse, out); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, err
		}
		return nil, &Error{Kernel: p.Name, Op: "triton", Msg: "the evaluator: " + err.Error()}
	}
	outs = make([]*interpreter.Tensor, len(shapes))
	for i, s := range shapes {
		if outs[i], err = tevTensor(bufs[np+nin+i], s); err != nil {
			return nil, fmt.Errorf("pallas: kernel %q: output %d: %w", p.Name, i, err)
		}
	}
	return outs, nil
}

// floatAddOutputs marks the outputs that float atomic adds update: those
// whose bits may depend on the programs' order.
func floatAddOutputs(p *Program) map[int]bool {
	out := map[int]bool{}
	first := p.NumPrefetch + p.NumInputs
	eachOp(p.Body, func(op *Op) {
		if op.Name != "atomic" || op.Attrs.Kind != "add" || !op.Results[0].Type.DType.IsFloat() {
			return
		}
		for i := range p.NumOutputs {
			if op.Operands[0] == p.Body.Args[first+i] {
				out[i] = true
			}
		}
	})
	return out
}

// sameTensorBits reports whether two tensors hold the same shape and bits
// (NaN payloads included).
func sameTensorBits(a, b *interpreter.Tensor) bool {
	if !a.Shape.Equal(b.Shape) {
		return false
	}
	switch x := a.Data.(type) {
	case []float32:
		y := b.Data.([]float32)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	case []float64:
		y := b.Data.([]float64)
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Data, b.Data)
}

// print writes a tt.print's lines as a GPU does, one per element (or one
// line for a print of no values, once per program rather than per thread),
// in row-major order rather than the threads' order.
func (m *tevMachine) print(op *ttOp) {
	if m.out == nil {
		return
	}
	prefix, _ := op.attr("prefix").(string)
	signed, _ := op.attr("isSigned").([]int64)
	var b strings.Builder
	pid := fmt.Sprintf("pid (%d, %d, %d)", m.pid[0], m.pid[1], m.pid[2])
	if len(op.operands) == 0 {
		b.WriteString(pid + prefix + "\n")
	}
	for i := range op.operands {
		x := m.get(op.operands[i])
		shape := op.operands[i].t.shape
		widths := make([]int, len(shape))
		for d, n := range shape {
			widths[d] = len(strconv.FormatInt(n-1, 10)) // digits of the largest index
		}
		tag := ""
		if len(op.operands) > 1 {
			tag = fmt.Sprintf("(operand %d) ", i)
		}
		eachIndex(shape, func(k int, idx []int64) {
			b.WriteString(pid + " idx (")
			for d, v := range idx {
				if d > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%*d", widths[d], v)
			}
			b.WriteString(")" + prefix + tag)
			switch {
			case x.f != nil:
				b.WriteString(printfF(x.f[k]))
			case i < len(signed) && signed[i] != 0:
				fmt.Fprintf(&b, "%d", x.i[k])
			default:
				fmt.Fprintf(&b, "%d", uint64(x.i[k])&mask(op.operands[i].t.bits()))
			}
			b.WriteString("\n")
		})
	}
	if _, err := io.WriteString(m.out, b.String()); err != nil {
		tevFail("printing: %v", err)
	}
}

// printfF is f as C's printf %f writes it ("nan", "inf", "-inf" where Go
// would write NaN, +Inf, -Inf).
func printfF(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 0):
		if f < 0 {
			return "-inf"
		}
		return "inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}
