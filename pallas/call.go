package pallas

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Squeezed in a BlockShape drops that dim from the block the kernel sees
// (block size 1; the index map returns the element index), like None /
// pl.Squeezed in JAX.
const Squeezed int64 = -1

// BlockSpec says which block of an operand or output each grid step sees:
// BlockShape (Squeezed entries are dropped from the kernel's view) and
// IndexMap, from grid indices (then prefetch refs) to block indices. A nil
// IndexMap means block index 0 in every dim; a nil BlockShape (or a nil
// spec) the whole array.
type BlockSpec struct {
	BlockShape []int64      // the block's size per array dim (Squeezed: one element, dropped)
	IndexMap   IndexMapFunc // grid indices (then prefetch refs) to block indices

	// batchAxes is set by Vmap on the spec of an input some Vmap batched:
	// leading dim d of the input is a batch dim, indexed by grid axis
	// batchAxes[d], so its size must be that axis's (Trace checks it, as
	// Vmap does not know the input's shape). With BlockShape nil (a batched
	// input with no block spec: the whole array per batch element) Trace
	// resolves the spec into a plain one: the batch dims squeezed, the rest
	// whole.
	batchAxes []int
	// userMap is the index map the user wrote, when Vmap wrapped it in
	// IndexMap: errors point at it.
	userMap IndexMapFunc
}

// Backend selects the lowering of a call.
type Backend string

// The backends. Interpret is always available; Triton is registered by
// this package; Mosaic (TPU) has no lowering yet: a call asking for it
// fails with `backend "mosaic" is not available` until one registers.
const (
	Interpret Backend = "interpret"
	Triton    Backend = "triton"
	Mosaic    Backend = "mosaic"
)

// Lowering emits a traced kernel into fb and returns the call's results.
// It is what a backend registers.
type Lowering func(fb *stablehlo.FuncBuilder, p *Program, c *CallSpec, operands []*stablehlo.Value) ([]*stablehlo.Value, error)

var (
	backendsMu sync.RWMutex
	backends   = map[Backend]Lowering{}
)

// RegisterBackend makes l the lowering of backend b (replacing any
// earlier one; nil removes it, and restores the built-in lowering of
// Interpret, which is never missing). Lowerings register in init
// functions.
func RegisterBackend(b Backend, l Lowering) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if l == nil && b == Interpret {
		l = lowerInterpret
	}
	if l == nil {
		delete(backends, b)
		return
	}
	backends[b] = l
}

// BackendFor is the lowering a PJRT platform runs (a pjrt.Client's
// PlatformName, in any case): Triton on an NVIDIA GPU ("cuda", "gpu"), Interpret
// elsewhere, ROCm included (the Triton lowering calls NVIDIA's libdevice
// and sizes grids by CUDA's limits).
func BackendFor(platform string) Backend {
	switch strings.ToLower(platform) {
	case "cuda", "gpu":
		return Triton
	}
	return Interpret
}

// Backends lists the registered backends, sorted.
func Backends() []Backend {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	out := make([]Backend, 0, len(backends))
	for b := range backends {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func lowering(b Backend) (Lowering, bool) {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	l, ok := backends[b]
	return l, ok
}

func init() {
	RegisterBackend(Interpret, lowerInterpret)
	// Builder errors point at the user's line, not at pallas's own.
	stablehlo.RegisterBuilderPackage("github.com/halo-ml/halo/pallas")
}

// CompilerParams are backend options.
type CompilerParams struct {
	// NoBoundsChecks turns off interpret mode's run-time checks of unmasked
	// loads and stores (and block indices) against the ref bounds.
	NoBoundsChecks bool
	// NumWarps and NumStages are Triton's launch settings (0: defaults).
	NumWarps, NumStages int
	// DebugOutput is where Kernel.DebugPrint writes in interpret mode and
	// under EvalTriton (os.Stdout when nil); a GPU's prints go to the
	// process's standard output.
	DebugOutput io.Writer
	// OrderDependentAtomics lets the Triton lowering take atomic updates
	// whose outcome depends on the order the programs run in (an
	// AtomicXchg; old values put to use, as tickets from
	// AtomicAdd(count, idx, 1)) on an output that nothing else loads or
	// stores, which the race check refuses otherwise. On a GPU such an
	// output may then differ from run to run, and from interpret mode's
	// grid order: set it where any order is right (slot assignment, a
	// first-come index).
	OrderDependentAtomics bool
}

// CallSpec describes a pallas call (pallas_call's arguments).
type CallSpec struct {
	// Name names the kernel in errors and in the lowered code (Triton's
	// tt.func). "" takes the kernel function's package-qualified name
	// with dots as underscores: main_addKernel, or main_main_func1 for a
	// closure; set it when the kernel is a closure.
	Name string
	// OutShapes are the outputs' shapes and dtypes.
	OutShapes []xla.Shape
	// Grid is the iteration space (nil or empty: one step).
	Grid []int64
	// InSpecs has one entry per non-prefetch operand (nil entries, or an
	// empty InSpecs, mean the whole array); OutSpecs one per output.
	InSpecs, OutSpecs []*BlockSpec
	// NumScalarPrefetch operands lead the operand list; the kernel gets
	// them as whole refs first and index maps get them after the grid
	// indices.
	NumScalarPrefetch int
	// ScratchShapes are kernel-local buffers, kept across grid steps, that
	// the kernel gets last.
	ScratchShapes []xla.Shape
	// InputOutputAliases maps an operand index (prefetch operands
	// included) to an output that starts as that operand.
	InputOutputAliases map[int]int
	// Backend picks the lowering ("" is Interpret).
	Backend Backend
	// CompilerParams are backend options.
	CompilerParams CompilerParams

	// vmapped marks a spec made by Vmap, whose batched flags described
	// vmapOperands operands; Trace checks the call's operands against it.
	vmapped      bool
	vmapOperands int
	// vmapLevels is the number of Vmaps that made the spec: the number of
	// leading batch dims of every output.
	vmapLevels int
	// prefetchBatchAxes holds, per scalar-prefetch operand, the grid axes
	// that pick its batch element, one per leading batch dim (nil: not
	// batched). Loads from the ref prepend those grid indices.
	prefetchBatchAxes [][]int
}

// Call traces kernel and emits it into fb with the chosen backend; it
// returns one value per output. Errors (in the spec, in tracing, in
// lowering) are recorded on fb's builder, like the builder's own, and Call
// then returns placeholder values of the output types.
func Call(fb *stablehlo.FuncBuilder, kernel KernelFunc, spec CallSpec, operands ...*stablehlo.Value) []*stablehlo.Value {
	outs, err := CallErr(fb, kernel, spec, operands...)
	if err != nil {
		if fb != nil {
			fb.Fail("pallas.call", err)
		}
		return placeholderOutputs(fb, spec)
	}
	return outs
}

// CallErr is Call returning its error instead of recording it.
func CallErr(fb *stablehlo.FuncBuilder, kernel KernelFunc, spec CallSpec, operands ...*stablehlo.Value) ([]*stablehlo.Value, error) {
	name := kernelName(spec.Name, kernel)
	if fb == nil {
		return nil, &Error{Kernel: name, Msg: "nil FuncBuilder"}
	}
	if err := fb.Err(); err != nil {
		return nil, err
	}
	backend := spec.Backend
	if backend == "" {
		backend = Interpret
	}
	low, ok := lowering(backend)
	if !ok {
		return nil, &Error{Kernel: name, Msg: fmt.Sprintf("backend %q is not available (registered: %v)", backend, Backends())}
	}
	types := make([]stablehlo.TensorType, len(operands))
	for i, o := range operands {
		if o == nil {
			return nil, &Error{Kernel: name, Msg: fmt.Sprintf("operand %d is nil", i)}
		}
		t, ok := o.TensorType()
		if !ok {
			return nil, &Error{Kernel: name, Msg: fmt.Sprintf("operand %d is %v, not a tensor", i, o.Type)}
		}
		if why := outOfScope(fb, o); why != "" {
			return nil, &Error{Kernel: name, Op: "pallas_call", Msg: fmt.Sprintf("operand %d %s", i, why)}
		}
		types[i] = t
	}
	p, err := Trace(kernel, spec, types)
	if err != nil {
		return nil, err
	}
	outs, err := lowerOrRecover(low, fb, p, &spec, operands)
	if err == nil {
		err = fb.Err()
	}
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, err
		}
		// The lowering's own error, or an op it emitted that failed: the
		// error names the kernel and wraps the cause, so Call's Fail puts
		// it in the builder error's place.
		return nil, &Error{Kernel: p.Name, Op: "pallas_call", Msg: fmt.Sprintf("%s lowering: %v", backend, err), Err: err}
	}
	// A registered backend's outputs are what the spec promises: one a
	// shape of OutShapes, of its type (found in review: a lowering that
	// returned none left the caller indexing an empty slice).
	if len(outs) != len(spec.OutShapes) {
		return nil, &Error{Kernel: p.Name, Op: "pallas_call", Msg: fmt.Sprintf("%s lowering returned %d outputs for %d OutShapes", backend, len(outs), len(spec.OutShapes))}
	}
	for i, o := range outs {
		if o == nil {
			return nil, &Error{Kernel: p.Name, Op: "pallas_call", Msg: fmt.Sprintf("%s lowering returned a nil output %d", backend, i)}
		}
		if t, ok := o.TensorType(); !ok || !t.Shape().Equal(spec.OutShapes[i]) {
			return nil, &Error{Kernel: p.Name, Op: "pallas_call", Msg: fmt.Sprintf("%s lowering returned output %d of type %v, not %v", backend, i, o.Type, spec.OutShapes[i])}
		}
	}
	return outs, nil
}

// lowerOrRecover runs a backend's lowering, a panic in it (a registered
// backend's bug) becoming its error: nothing panics out of Call.
func lowerOrRecover(low Lowering, fb *stablehlo.FuncBuilder, p *Program, spec *CallSpec, operands []*stablehlo.Value) (outs []*stablehlo.Value, err error) {
	defer func() {
		if v := recover(); v != nil {
			outs, err = nil, fmt.Errorf("panic: %v (a bug of the lowering: please report it)", v)
		}
	}()
	return low(fb, p, spec, operands)
}

// outOfScope says why v cannot be an operand of ops built in fb (another
// function's value, one inside a finished region), or "" when it can or
// only the builder can tell (a value of a region still being built).
func outOfScope(fb *stablehlo.FuncBuilder, v *stablehlo.Value) string {
	blk := v.Block()
	if op := v.Op(); op != nil {
		blk = op.Parent()
	}
	if blk == nil {
		return "is not a value of a function (a placeholder or a detached op's result)"
	}
	if blk == fb.Block() {
		return ""
	}
	fn := fb.Func()
	// Climb to the outermost block: a function's body (its region has no
	// op), or a block of a region still being built (no region yet).
	nested := false
	for {
		r := blk.Parent()
		if r == nil {
			if nested {
				return "is defined in a region of an op, not visible here"
			}
			return "" // the builder knows whether fb is inside it
		}
		op := r.Parent()
		if op == nil {
			switch {
			case r == fn.Body && nested:
				return fmt.Sprintf("is defined in a region of an op of @%s, not visible here", fn.Name)
			case r == fn.Body:
				return ""
			}
			for _, f := range fb.Builder().Module().Funcs {
				if r == f.Body {
					return fmt.Sprintf("is defined in another function (@%s)", f.Name)
				}
			}
			// Another module's function, or a region whose op is not
			// built yet (a sibling of fb's).
			return fmt.Sprintf("is not a value of @%s visible here", fn.Name)
		}
		if op.Parent() == nil {
			return "is defined in a region of a detached op"
		}
		blk, nested = op.Parent(), true
	}
}

func placeholderOutputs(fb *stablehlo.FuncBuilder, spec CallSpec) []*stablehlo.Value {
	out := make([]*stablehlo.Value, len(spec.OutShapes))
	for i, s := range spec.OutShapes {
		dt := s.DType
		if !dt.Valid() {
			dt = xla.Float32
		}
		var dims []int64
		for _, d := range s.Dims {
			dims = append(dims, max(d, 0))
		}
		if fb != nil {
			out[i] = fb.Zero(stablehlo.Tensor(dt, dims...))
		}
	}
	return out
}

func kernelName(name string, kernel KernelFunc) string {
	if name != "" {
		// Invalid UTF-8 would not survive the JSON of the bounds
		// check's config: every error shows the name as it does.
		return strings.ToValidUTF8(name, "\uFFFD")
	}
	if kernel == nil {
		return "kernel"
	}
	f := runtime.FuncForPC(reflect.ValueOf(kernel).Pointer())
	if f == nil {
		return "kernel"
	}
	n := f.Name()
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	n = strings.NewReplacer(".", "_", "-", "_").Replace(n)
	return n
}

// Trace checks spec against the operand types and traces the kernel and
// its index maps into a Program (the kernel IR), without lowering it.
func Trace(kernel KernelFunc, spec CallSpec, operands []stablehlo.TensorType) (*Program, error) {
	name := kernelName(spec.Name, kernel)
	fail := func(format string, args ...any) (*Program, error) {
		return nil, &Error{Kernel: name, Op: "pallas_call", Msg: fmt.Sprintf(format, args...)}
	}
	if kernel == nil {
		return fail("kernel function is nil")
	}
	if spec.vmapped && spec.vmapOperands != len(operands) {
		return fail("Vmap was given batched flags for %d operands, the call has %d", spec.vmapOperands, len(operands))
	}
	for i, t := range operands {
		if !t.DType.Valid() {
			return fail("operand %d has no dtype", i)
		}
		for _, d := range t.Dims {
			if d < 0 {
				return fail("operand %d is %v: dynamic or negative dims are not supported", i, t)
			}
		}
	}
	np := spec.NumScalarPrefetch
	if np < 0 || np > len(operands) {
		return fail("NumScalarPrefetch %d with %d operands", np, len(operands))
	}
	nin := len(operands) - np
	if len(spec.InSpecs) != 0 && len(spec.InSpecs) != nin {
		return fail("%d InSpecs for %d non-prefetch operands", len(spec.InSpecs), nin)
	}
	if len(spec.InSpecs) > 0 {
		specs := append([]*BlockSpec(nil), spec.InSpecs...)
		for i, bs := range specs {
			if bs == nil || bs.batchAxes == nil {
				continue
			}
			dims := operands[np+i].Dims
			axes := bs.batchAxes
			vmapFail := func(format string, args ...any) (*Program, error) {
				return nil, &Error{Kernel: name, Op: "vmap", Msg: fmt.Sprintf(format, args...)}
			}
			if len(dims) < len(axes) {
				return vmapFail("batched input %d has rank %d, fewer than its %d batch dims", i, len(dims), len(axes))
			}
			for d, a := range axes {
				if a >= len(spec.Grid) {
					return vmapFail("batch axis %d of operand %d is outside the grid %v", a, np+i, spec.Grid)
				}
				if dims[d] != spec.Grid[a] {
					return vmapFail("operand %d (%v) is batched: its dim %d is %d, the batch size is %d", np+i, operands[np+i], d, dims[d], spec.Grid[a])
				}
			}
			if bs.BlockShape != nil {
				continue // Vmap's blocked spec: already plain
			}
			block := append([]int64{}, dims...)
			for d := range axes {
				block[d] = Squeezed
			}
			rank := len(dims)
			whole := bs.IndexMap // the block indices of the other dims (nil: zeros)
			specs[i] = &BlockSpec{BlockShape: block, batchAxes: axes, userMap: bs.userMap, IndexMap: func(g []*Value, pf []*Ref) []any {
				idx := make([]any, 0, rank)
				for _, a := range axes {
					idx = append(idx, g[a])
				}
				if whole != nil {
					return append(idx, whole(g, pf)...)
				}
				for len(idx) < rank {
					idx = append(idx, 0)
				}
				return idx
			}}
		}
		spec.InSpecs = specs
	}
	if len(spec.OutShapes) == 0 {
		return fail("no OutShapes")
	}
	if len(spec.OutSpecs) != 0 && len(spec.OutSpecs) != len(spec.OutShapes) {
		return fail("%d OutSpecs for %d outputs", len(spec.OutSpecs), len(spec.OutShapes))
	}
	for i, g := range spec.Grid {
		if g <= 0 {
			return fail("grid %v: dim %d is not positive", spec.Grid, i)
		}
	}
	if gridSteps(spec.Grid) < 0 {
		return fail("grid %v has more than %d steps", spec.Grid, int64(math.MaxInt64))
	}
	p := &Program{Name: name, Grid: append([]int64{}, spec.Grid...), NumPrefetch: np, NumInputs: nin,
		NumOutputs: len(spec.OutShapes), NumScratch: len(spec.ScratchShapes), batchAxes: spec.vmapLevels}
	aliasOf := map[int]int{}
	for in, out := range spec.InputOutputAliases {
		if in < 0 || in >= len(operands) || out < 0 || out >= len(spec.OutShapes) {
			return fail("input_output_aliases %d -> %d out of range (%d operands, %d outputs)", in, out, len(operands), len(spec.OutShapes))
		}
		if prev, dup := aliasOf[out]; dup {
			return fail("output %d aliased to operands %d and %d", out, prev, in)
		}
		ot := spec.OutShapes[out]
		if operands[in].DType != ot.DType || !sameShape(operands[in].Dims, ot.Dims) {
			return fail("operand %d (%v) aliased to output %d of a different type %v", in, operands[in], out, ot)
		}
		aliasOf[out] = in
	}
	for i := 0; i < np; i++ {
		t := operands[i]
		if !t.DType.IsInt() && !t.DType.IsBool() && !t.DType.IsFloat() {
			return fail("prefetch operand %d is %v: scalar-prefetch arrays hold integers, bools or floats", i, t)
		}
		var axes []int
		if i < len(spec.prefetchBatchAxes) {
			axes = spec.prefetchBatchAxes[i]
		}
		if len(t.Dims) < len(axes) {
			return nil, &Error{Kernel: name, Op: "vmap", Msg: fmt.Sprintf("batched scalar-prefetch operand %d has rank %d, fewer than its %d batch dims", i, len(t.Dims), len(axes))}
		}
		for d, a := range axes {
			if a >= len(spec.Grid) {
				return nil, &Error{Kernel: name, Op: "vmap", Msg: fmt.Sprintf("batch axis %d of scalar-prefetch operand %d is outside the grid %v", a, i, spec.Grid)}
			}
			if t.Dims[d] != spec.Grid[a] {
				return nil, &Error{Kernel: name, Op: "vmap", Msg: fmt.Sprintf("scalar-prefetch operand %d (%v) is batched: its dim %d is %d, the batch size is %d", i, t, d, t.Dims[d], spec.Grid[a])}
			}
		}
		p.Refs = append(p.Refs, RefInfo{Kind: PrefetchRef, Index: i, DType: t.DType, ArrayShape: clone(t.Dims),
			Block: clone(t.Dims), BlockShape: clone(t.Dims), Operand: i, AliasOf: -1, batchDims: len(axes), batchAxes: axes})
	}
	blocked := func(kind RefKind, idx int, dt xla.DType, shape []int64, bs *BlockSpec, operand int) (RefInfo, error) {
		r := RefInfo{Kind: kind, Index: idx, DType: dt, ArrayShape: clone(shape), Operand: operand, AliasOf: -1}
		if bs == nil || bs.BlockShape == nil {
			r.Block, r.BlockShape = clone(shape), clone(shape)
			return r, nil
		}
		// Errors show the block shape and dims the kernel was written
		// for: without the leading batch dims Vmap added.
		nbatch := spec.vmapLevels
		if kind == InputRef {
			nbatch = len(bs.batchAxes)
		}
		nbatch = min(nbatch, len(bs.BlockShape), len(shape))
		userBlock, userShape := bs.BlockShape[nbatch:], shape[nbatch:]
		if len(bs.BlockShape) != len(shape) {
			return r, &Error{Kernel: name, Op: "pallas_call", Msg: fmt.Sprintf("%s %d: block shape %v has rank %d, the array %s rank %d", kind, idx, userBlock, len(userBlock), shapeString(dt, userShape), len(userShape))}
		}
		r.Block = clone(bs.BlockShape)
		r.BlockShape = []int64{}
		for d, b := range bs.BlockShape {
			switch {
			case b == 0 && shape[d] == 0:
				// The whole of an empty dim (Vmap's spec of a
				// whole-array operand or output that has one).
				r.BlockShape = append(r.BlockShape, 0)
			case b != Squeezed && b <= 0:
				return r, &Error{Kernel: name, Op: "pallas_call", Msg: fmt.Sprintf("%s %d: block shape %v: dim %d is not positive", kind, idx, userBlock, d-nbatch)}
			case shape[d] == 0:
				// No block fits: there are no blocks to index.
				return r, &Error{Kernel: name, Op: "pallas_call", Msg: fmt.Sprintf("%s %d: block shape %v: dim %d of the array %s is empty (only a whole-array spec covers it)", kind, idx, userBlock, d-nbatch, shapeString(dt, userShape))}
			case b != Squeezed:
				r.BlockShape = append(r.BlockShape, b)
			}
		}
		// The array padded to whole blocks, and a block, must have a
		// countable number of bytes.
		padded, block := max(1, int64(dt.Bits())/8), int64(1)
		for d, b := range r.Block {
			if b == Squeezed {
				b = 1
			}
			if b == 0 { // an empty dim: the array and a block hold nothing
				padded, block = 0, 0
				continue
			}
			nb := numBlocks(shape[d], b)
			if nb > math.MaxInt64/b || padded > math.MaxInt64/(nb*b) || block > math.MaxInt64/b {
				batched := ""
				if nbatch > 0 {
					batched = fmt.Sprintf(" (with the %d batch dims of Vmap)", nbatch)
				}
				return r, &Error{Kernel: name, Op: "pallas_call", Msg: fmt.Sprintf("%s %d: block shape %v: the array %s%s padded to whole blocks has more than 2^63 bytes", kind, idx, userBlock, shapeString(dt, shape), batched)}
			}
			padded *= nb * b
			block *= b
		}
		return r, nil
	}
	for i := 0; i < nin; i++ {
		var bs *BlockSpec
		if len(spec.InSpecs) > 0 {
			bs = spec.InSpecs[i]
		}
		t := operands[np+i]
		r, err := blocked(InputRef, i, t.DType, t.Dims, bs, np+i)
		if err != nil {
			return nil, err
		}
		if bs != nil {
			r.batchDims = len(bs.batchAxes)
		}
		p.Refs = append(p.Refs, r)
	}
	for i, s := range spec.OutShapes {
		if !s.DType.Valid() {
			return fail("output %d has no dtype", i)
		}
		for _, d := range s.Dims {
			if d < 0 {
				return fail("output %d has shape %v", i, s)
			}
		}
		var bs *BlockSpec
		if len(spec.OutSpecs) > 0 {
			bs = spec.OutSpecs[i]
		}
		r, err := blocked(OutputRef, i, s.DType, s.Dims, bs, -1)
		if err != nil {
			return nil, err
		}
		r.batchDims = spec.vmapLevels
		if a, ok := aliasOf[i]; ok {
			r.AliasOf = a
		}
		p.Refs = append(p.Refs, r)
	}
	for i, s := range spec.ScratchShapes {
		if !s.DType.Valid() {
			return fail("scratch %d has no dtype", i)
		}
		for _, d := range s.Dims {
			if d < 0 {
				return fail("scratch %d has shape %v", i, s)
			}
		}
		p.Refs = append(p.Refs, RefInfo{Kind: ScratchRef, Index: i, DType: s.DType, ArrayShape: clone(s.Dims),
			Block: clone(s.Dims), BlockShape: clone(s.Dims), Operand: -1, AliasOf: -1})
	}

	st := &traceState{name: name}
	// Index maps.
	for i := 0; i < nin+len(spec.OutShapes); i++ {
		var bs *BlockSpec
		var ref RefInfo
		if i < nin {
			ref = p.Refs[np+i]
			if len(spec.InSpecs) > 0 {
				bs = spec.InSpecs[i]
			}
		} else {
			ref = p.Refs[np+i]
			if len(spec.OutSpecs) > 0 {
				bs = spec.OutSpecs[i-nin]
			}
		}
		if bs == nil || bs.IndexMap == nil {
			p.IndexMaps = append(p.IndexMaps, nil)
			continue
		}
		user := bs.userMap
		if user == nil {
			user = bs.IndexMap
		}
		m, err := traceIndexMap(st, p, bs.IndexMap, user, ref)
		if err != nil {
			return nil, err
		}
		p.IndexMaps = append(p.IndexMaps, m)
	}
	// Body.
	k := &Kernel{st: st, gridLen: len(p.Grid)}
	body := &Region{}
	k.stack = []*Region{body}
	refs := make([]*Ref, len(p.Refs))
	for i := range p.Refs {
		info := p.Refs[i]
		v := k.newValue(Type{DType: info.DType, Shape: info.BlockShape}, nil)
		v.Ref, v.argOf = &info, body
		body.Args = append(body.Args, v)
		refs[i] = &Ref{v: v, k: k, batch: info.batchAxes}
	}
	err := runTraced(k, "kernel", func() { kernel(k, refs) })
	k.done = true
	if err != nil {
		return nil, err
	}
	p.Body = body
	if err := checkAliasedReads(p); err != nil {
		return nil, err
	}
	return p, nil
}

// checkAliasedReads refuses a load of an input after a store to the output
// aliased to it (InputOutputAliases): on a GPU they are one buffer and the
// load reads what was stored, in interpret mode it reads the input as it
// came, so the kernel would differ between backends. Loop bodies are
// walked twice (a load early in an iteration follows the stores of the
// one before).
func checkAliasedReads(p *Program) error {
	aliased := map[int]bool{} // call operands an output aliases
	for _, r := range p.Refs {
		if r.Kind == OutputRef && r.AliasOf >= 0 {
			aliased[r.AliasOf] = true
		}
	}
	if len(aliased) == 0 {
		return nil
	}
	stored := map[int]bool{}
	// storesTo marks the operands op stores to through aliased outputs.
	storesTo := func(op *Op) {
		if len(op.Operands) > 0 && op.Operands[0].Ref != nil {
			if ref := op.Operands[0].Ref; (op.Name == "store" || op.Name == "atomic") && ref.Kind == OutputRef && ref.AliasOf >= 0 {
				stored[ref.AliasOf] = true
			}
		}
	}
	var walk func(r *Region) error
	walk = func(r *Region) error {
		for _, op := range r.Ops {
			if len(op.Operands) > 0 && op.Operands[0].Ref != nil {
				ref := op.Operands[0].Ref
				switch {
				case (op.Name == "store" || op.Name == "atomic") && ref.Kind == OutputRef && ref.AliasOf >= 0:
					stored[ref.AliasOf] = true
				case op.Name == "load" && (ref.Kind == InputRef || ref.Kind == PrefetchRef) && stored[ref.Operand]:
					return &Error{Kernel: p.Name, Op: "load", Loc: op.Loc, Msg: fmt.Sprintf(
						"%s is the memory of the output aliased to it (InputOutputAliases), stored to before this load: "+
							"a GPU reads the stored values, interpret mode the input's; load it before the first store", ref)}
				}
			}
			if op.Name == "for" || op.Name == "while" {
				// A later iteration loads after every store of the
				// body (walking it twice would take 2^depth for nested
				// loops).
				for _, sub := range op.Regions {
					eachOp(sub, storesTo)
				}
			}
			if op.Name == "when" && len(op.Regions) > 1 {
				// A Cond runs one branch: each starts from the stores
				// before it.
				before := maps.Clone(stored)
				if err := walk(op.Regions[0]); err != nil {
					return err
				}
				afterThen := stored
				stored = maps.Clone(before)
				if err := walk(op.Regions[1]); err != nil {
					return err
				}
				maps.Copy(stored, afterThen)
				continue
			}
			for _, sub := range op.Regions {
				if err := walk(sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(p.Body); err != nil {
		return err
	}
	// Index maps read scalar-prefetch arrays at every grid step: after a
	// store through an output aliased to one, a GPU's later programs
	// would see the stored values, interpret mode the array as it came.
	for _, m := range p.IndexMaps {
		if m == nil {
			continue
		}
		var found *Op
		eachOp(m, func(op *Op) {
			if found == nil && op.Name == "load" && len(op.Operands) > 0 && op.Operands[0].Ref != nil &&
				op.Operands[0].Ref.Kind == PrefetchRef && stored[op.Operands[0].Ref.Operand] {
				found = op
			}
		})
		if found != nil {
			return &Error{Kernel: p.Name, Op: "index map", Loc: found.Loc, Msg: fmt.Sprintf(
				"reads %s, which the kernel stores to through the output aliased to it (InputOutputAliases): "+
					"on a GPU later programs would read the stored values, interpret mode the array as it came", found.Operands[0].Ref)}
		}
	}
	return nil
}

// runTraced runs f, turning a panic of user code into an error that names
// what was being traced (what), the kernel's op the panic happened in, if
// any, and the user's line.
func runTraced(k *Kernel, what string, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			op, loc := panicSite()
			switch m, ok := r.(misuse); {
			case k.st.err != nil:
				// Errors are sticky: the first one is kept.
				err = k.st.err
			case ok:
				err = &Error{Kernel: k.st.name, Op: m.op, Loc: loc, Msg: m.msg}
			default:
				if op == "" {
					op = what
				}
				err = &Error{Kernel: k.st.name, Op: op, Loc: loc, Msg: fmt.Sprintf("panicked while tracing: %v", r)}
			}
		}
	}()
	f()
	if k.st.err == nil && k.st.abandoned != (Loc{}) {
		// A region body panicked and the kernel recovered: what it traced
		// after that went into a region that never closed.
		return &Error{Kernel: k.st.name, Op: what, Loc: k.st.abandoned,
			Msg: "a When, Cond, ForLoop or While body panicked and the kernel recovered: the trace cannot go on"}
	}
	return k.Err()
}

// panicSite, called by a deferred function during a panic, returns the
// innermost function of this package the panic went through (a kernel
// op, such as "Value.Add") and the user's line that called it (or that
// panicked).
func panicSite() (op string, loc Loc) {
	var pcs [64]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case !panicking:
			panicking = f.Function == "runtime.gopanic"
		case strings.HasPrefix(f.Function, "runtime."):
		case strings.HasPrefix(f.Function, pkgPrefix) && !strings.HasSuffix(f.File, "_test.go"):
			if op == "" {
				op = opName(f.Function)
			}
		case f.File != "":
			return op, Loc{File: filepath.Base(f.File), Line: f.Line}
		}
		if !more {
			return op, Loc{}
		}
	}
}

// opName is "Value.Add" for "github.com/halo-ml/halo/pallas.(*Value).Add".
func opName(function string) string {
	s := strings.TrimPrefix(function, pkgPrefix)
	s = strings.NewReplacer("(*", "", ")", "").Replace(s)
	return s
}

// funcLoc is where the function f is defined.
func funcLoc(f any) Loc {
	fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer())
	if fn == nil {
		return Loc{}
	}
	file, line := fn.FileLine(fn.Entry())
	return Loc{File: filepath.Base(file), Line: line}
}

// traceIndexMap traces the index map f of ref; user is the map the user
// wrote (f itself, or the map Vmap wrapped in f), where errors point.
func traceIndexMap(st *traceState, p *Program, f, user IndexMapFunc, ref RefInfo) (*Region, error) {
	k := &Kernel{st: st, gridLen: len(p.Grid)}
	r := &Region{}
	defer func() { k.grid = nil }()
	// Errors in what the map returns are reported at the user's map.
	loc := funcLoc(user)
	if fn := runtime.FuncForPC(reflect.ValueOf(user).Pointer()); fn != nil {
		if file, _ := fn.FileLine(fn.Entry()); !strings.HasPrefix(fn.Name(), pkgPrefix) || strings.HasSuffix(file, "_test.go") {
			r.Loc = loc
		}
	}
	k.stack = []*Region{r}
	grid := make([]*Value, len(p.Grid))
	for i := range grid {
		grid[i] = k.newValue(Type{DType: xla.Int32}, nil)
		grid[i].argOf = r
		r.Args = append(r.Args, grid[i])
	}
	k.grid = grid
	pf := make([]*Ref, p.NumPrefetch)
	for i := range pf {
		info := p.Refs[i]
		v := k.newValue(Type{DType: info.DType, Shape: info.BlockShape}, nil)
		v.Ref, v.argOf = &info, r
		r.Args = append(r.Args, v)
		pf[i] = &Ref{v: v, k: k, batch: info.batchAxes}
	}
	var idx []any
	what := fmt.Sprintf("index map of %s", ref)
	defer func() { k.done = true }()
	if err := runTraced(k, what, func() { idx = f(grid, pf) }); err != nil {
		return nil, err
	}
	// Errors count the indices and dims the map's author wrote: without
	// the batch dims Vmap added (the batch indices come first).
	nb := min(ref.batchDims, len(idx))
	if len(idx) != len(ref.ArrayShape) {
		return nil, &Error{Kernel: st.name, Op: what, Loc: loc, Msg: fmt.Sprintf("returns %d block indices for an array of rank %d",
			len(idx)-nb, len(ref.ArrayShape)-nb)}
	}
	for d, e := range idx {
		// A constant block index (a Go number of any kind, checked before
		// it becomes an i32, or a constant value) is checked here, on
		// every backend; interpret mode checks the others at run time
		// (blockStarts).
		nb := numBlocks(ref.ArrayShape[d], ref.Block[d])
		outside := func(c any) error {
			return &Error{Kernel: st.name, Op: what, Loc: loc, Msg: fmt.Sprintf("block index %v of dim %d is outside [0, %d)", c, d-ref.batchDims, nb)}
		}
		if c, ok, err := staticInt(e); ok && (err != nil || c < 0 || c >= nb) {
			return nil, outside(e)
		}
		switch e.(type) {
		case SliceIndex, DSIndex, allIndex:
			return nil, &Error{Kernel: st.name, Op: what, Loc: loc, Msg: fmt.Sprintf(
				"block index of dim %d is a ref index (%s): an index map returns which block, a number; Slice, DS and All index a Ref in the kernel", d-ref.batchDims, refIndexName(e))}
		}
		v, ok := k.intScalar(what, e)
		if !ok {
			if st.err != nil && st.err.Op == what {
				st.err.Loc = loc
			}
			return nil, k.Err()
		}
		if c, ok := constInt(v); ok && (c < 0 || c >= nb) {
			return nil, outside(c)
		}
		r.Yield = append(r.Yield, v)
	}
	return r, k.Err()
}

// CDiv is a divided by b rounded up (JAX's pl.cdiv) for a >= 0 and b > 0:
// the blocks of b elements that cover a dim of a, as a grid's size is
// usually written (Grid: []int64{pallas.CDiv(n, bn)}), without the
// overflow of (a+b-1)/b. Other signs give Go's a / b (which panics for b
// 0).
func CDiv(a, b int64) int64 {
	if a > 0 && b > 0 {
		return (a-1)/b + 1
	}
	return a / b
}

// numBlocks is the number of blocks along a dim (block Squeezed = 1).
func numBlocks(dim, block int64) int64 {
	if block == Squeezed {
		block = 1
	}
	if block <= 0 {
		return 1
	}
	if dim <= 0 {
		return 0
	}
	return (dim-1)/block + 1 // not (dim+block-1)/block: it may overflow
}

// gridSteps is the number of steps of a grid of positive dims, or -1 when
// it overflows an int64.
func gridSteps(grid []int64) int64 {
	n := int64(1)
	for _, g := range grid {
		if n > math.MaxInt64/g {
			return -1
		}
		n *= g
	}
	return n
}

func clone(s []int64) []int64 { return append([]int64{}, s...) }
