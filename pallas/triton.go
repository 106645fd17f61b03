package pallas

import (
	"fmt"
	"math"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
)

// The Triton lowering (Backend Triton): the kernel becomes Triton IR (TTIR)
// text inside a stablehlo.custom_call @__gpu$xla.gpu.triton, which XLA's
// GPU backend compiles with its own Triton and launches over the grid.
//
// The custom call is spelled as JAX writes it (see the recorded export in
// stablehlo/testdata/add_one.stablehlo.mlir): no api_version (ORIGINAL), no backend_config,
// and the dictionary mhlo.backend_config = {debug, grid_x, grid_y, grid_z,
// ir, name, num_stages, num_warps} (i32 except debug, ir and name). The
// operands are the call's operands (scalar-prefetch arrays first), the
// results its outputs, all row-major; InputOutputAliases become
// output_operand_aliases.
//
// The TTIR module holds one tt.func public @name whose arguments are one
// !tt.ptr<T> per operand then per output ({tt.divisibility = 32 : i32}),
// with no results. How the kernel IR maps onto it:
//
//   - Grid: up to three axes map to tt.get_program_id x, y, z. More axes,
//     or a y/z axis over CUDA's 65535 limit, collapse the leading axes
//     into x; each collapsed axis is recovered by div/rem, last axis
//     fastest. A size-1 axis is the constant 0.
//   - Index maps run at the top of the kernel on the program ids (and on
//     scalars loaded from the prefetch pointers); block index times block
//     size is each dim's element start (a squeezed dim's index is the
//     element index).
//   - A load or store computes one pointer per element: the ref's base
//     pointer advanced by the scalar part of the row-major offset (block
//     starts, integer indices, slice starts, times the array strides), then
//     splatted and advanced by the tensor part (tt.make_range for slices,
//     the index arrays for gathers, expanded and broadcast to the indexed
//     shape).
//   - Masks: the user's mask, and-ed with a bounds mask along every dim
//     whose block size does not divide the array (the padded edge blocks);
//     masked loads read `other` (the user's, else zero) where the mask is
//     false. Unmasked accesses are not checked on the GPU.
//   - Elementwise math is arith (and math.absf/absi/floor/ceil); integers
//     wider than 24 bits become bf16 through f32 rounded to odd (Triton's
//     conversion goes through f32, which would round twice). Integer
//     div and rem give interpret mode's results where arith's are
//     undefined (x / 0 = -1, x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0):
//     a divisor that is not a constant is replaced by 1 there and the
//     result selected; shifts (arith.shli/shrsi/shrui) likewise by an
//     amount of the width or more (0, or the sign fill). exp, log, tanh, erf, sqrt, rsqrt, sin, cos,
//     log1p, expm1, tan, pow and round (rint: halves to even)
//     call libdevice through tt.extern_elementwise as JAX does (f16/bf16
//     go through f32); sign is two selects; bitcast is tt.bitcast (none
//     between i32 and u32: Triton's integers are signless). Bool refs are
//     i8 in memory.
//   - Division of floats is IEEE: f32 through tt.precise_divf (arith.divf
//     on f32 lowers to an approximate division on NVIDIA GPUs), f16 and
//     bf16 divided (and rem) in f32 and rounded once (Triton's NVIDIA
//     lowering aborts on 16-bit divf); remainders call libdevice's exact
//     fmod.
//   - reduce is one tt.reduce per axis (f16 and bf16 sums and products in f32, rounded
//     once, as the trace asks on every backend); scan is one tt.scan
//     (axis, reverse = false) whose combine region is the same arith op
//     (addf/addi, mulf/muli, maximumf/minimumf, max/min si or ui), a
//     float sum then plus +0 (sums start from +0, as reduce's); dot is
//     tt.dot with an f32
//     (i32 for i8, f64 for f64 operands) zero accumulator, IEEE precision
//     for f32, then a convert to the preferred type. Dots below the tensor
//     cores' sizes (K under 16 for f16, bf16 and f64, under 32 for i8; M
//     under 16 or N under 8 for f64), dots of narrower operands into f64
//     (which Triton's f64 tt.dot summed wrongly on an H100) and integer
//     dots other than i8 are products and sums instead, of at most 2^20
//     products.
//   - ForLoop, When and While are scf.for (i32 counter), scf.if and
//     scf.while.
//   - An atomic update is tt.atomic_rmw (acquire-release, GPU scope) at
//     the pointers and mask of a store; its old values are selected to
//     zero where the kernel's mask is false and to the pad value in an
//     edge block's padding, as a load's. A compare-and-swap is
//     tt.atomic_cas, which has no mask: masked-off lanes swap cmp for cmp
//     at the array's first element (none at all for an empty array).
//   - A load from a ref the program stored to or updated atomically, a
//     store to a ref it accessed, or an atomic update of a ref it loaded,
//     stored or updated in a way the update does not commute with, first
//     waits at gpu.barrier: threads hold a block in the
//     layout Triton picks per access (a scalar is stored by one thread and
//     loaded by all). Not a store after stores of the same op only whose
//     blocks are aligned to their size (a loop storing one output block
//     per iteration: each element is stored by the same thread), and a
//     loop whose body would wait for accesses made before it waits once,
//     before it.
//
// Build-time errors name the kernel and the op and its file:line (or the
// block spec's ref): tensors whose dims are not powers of two (Triton's
// rule) or larger than 2^20 elements, block shapes that are not powers of
// two, dtypes without a Triton type (complex, 8-, 6- and 4-bit floats,
// sub-byte ints), scratch refs the kernel uses (grid steps run in
// parallel on a GPU), dots it cannot do (integer operands other than i8
// into a float result; products and sums of more than 2^20 products),
// ops with no lowering, and kernels whose programs would race (an output
// block loaded and stored by several programs, output elements that
// every program along a grid axis stores, an aliased input loaded
// through another block spec than its output's, and the others
// triton_races.go lists).

// TritonTarget is the custom_call target of Triton kernels in XLA.
const TritonTarget = "__gpu$xla.gpu.triton"

// Triton's launch defaults (JAX's for GPU).
const (
	DefaultNumWarps  = 4
	DefaultNumStages = 3
)

// TritonKernel is a kernel lowered to Triton: what the custom call carries.
type TritonKernel struct {
	// Name is the tt.func symbol (the kernel name made an identifier).
	Name string
	// IR is the TTIR module text.
	IR string
	// Grid is the launch grid (x, y, z).
	Grid [3]int64
	// NumWarps and NumStages are the launch settings.
	NumWarps, NumStages int
}

func init() { RegisterBackend(Triton, lowerTriton) }

// checkRaces is checkParallelPrograms, whose failure to follow a
// program (a bug) is an error, not a crash of the caller's build.
func checkRaces(p *Program, anyOrder bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf("internal error in the race check: %v", r)}
		}
	}()
	return checkPrograms(p, anyOrder)
}

// LowerTriton lowers a traced kernel to Triton IR with the launch settings
// of params (zero NumWarps/NumStages take the defaults).
func LowerTriton(p *Program, params CompilerParams) (k *TritonKernel, err error) {
	f, grid, warps, stages, err := checkedTritonFunc(p, params)
	if err != nil {
		return nil, err
	}
	return &TritonKernel{Name: f.name, IR: f.String(), Grid: grid, NumWarps: warps, NumStages: stages}, nil
}

// checkedTritonFunc is p's Triton function, its launch grid and settings,
// after every check LowerTriton makes (EvalTriton's too).
func checkedTritonFunc(p *Program, params CompilerParams) (f *ttFunc, grid [3]int64, warps, stages int, err error) {
	fail := func(e error) (*ttFunc, [3]int64, int, int, error) { return nil, [3]int64{}, 0, 0, e }
	if p == nil {
		return fail(&Error{Kernel: "kernel", Op: "triton", Msg: "nil program"})
	}
	if err := p.check(); err != nil {
		return fail(err)
	}
	warps, stages = params.NumWarps, params.NumStages
	if warps == 0 {
		warps = DefaultNumWarps
	}
	if stages == 0 {
		stages = DefaultNumStages
	}
	if warps < 1 || warps > 32 || warps&(warps-1) != 0 {
		return fail(&Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf("NumWarps %d is not a power of two in [1, 32]", warps)})
	}
	if stages < 1 || stages > math.MaxInt32 { // the config's num_stages is an i32
		return fail(&Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf("NumStages %d is not in [1, %d]", stages, math.MaxInt32)})
	}
	if err := checkRaces(p, params.OrderDependentAtomics); err != nil {
		return fail(err)
	}
	f, grid, err = lowerTritonFunc(p)
	if err != nil {
		return fail(err)
	}
	return f, grid, warps, stages, nil
}

// BackendConfig is the custom call's mhlo.backend_config dictionary, keys
// sorted as MLIR prints them.
func (k *TritonKernel) BackendConfig() stablehlo.DictAttr {
	return stablehlo.DictAttr{
		{Name: "debug", Value: stablehlo.BoolAttr(false)},
		{Name: "grid_x", Value: stablehlo.I32Attr(int32(k.Grid[0]))},
		{Name: "grid_y", Value: stablehlo.I32Attr(int32(k.Grid[1]))},
		{Name: "grid_z", Value: stablehlo.I32Attr(int32(k.Grid[2]))},
		{Name: "ir", Value: stablehlo.StringAttr(k.IR)},
		{Name: "name", Value: stablehlo.StringAttr(k.Name)},
		{Name: "num_stages", Value: stablehlo.I32Attr(int32(k.NumStages))},
		{Name: "num_warps", Value: stablehlo.I32Attr(int32(k.NumWarps))},
	}
}

// TritonKernels returns the Triton kernels of m: those of its
// @__gpu$xla.gpu.triton custom calls, in program order, read from their
// mhlo.backend_config (as BackendConfig writes it, or JAX). Use it to
// look at, save or check the TTIR of a module built with Call. A config
// that lacks a key or holds a value of the wrong kind is an error naming
// the function and the key.
func TritonKernels(m *stablehlo.Module) ([]*TritonKernel, error) {
	if m == nil {
		return nil, fmt.Errorf("pallas: TritonKernels of a nil module")
	}
	var ks []*TritonKernel
	var err error
	for _, f := range m.Funcs {
		f.Walk(func(op *stablehlo.Op) bool {
			if err != nil || op.Name != "stablehlo.custom_call" || op.Attr("call_target_name") != stablehlo.StringAttr(TritonTarget) {
				return err == nil
			}
			var k *TritonKernel
			if k, err = tritonKernelOf(op); err != nil {
				err = fmt.Errorf("pallas: @%s: Triton custom call: %w", f.Name, err)
				return false
			}
			ks = append(ks, k)
			return true
		})
	}
	return ks, err
}

// tritonKernelOf reads a Triton custom call's backend config.
func tritonKernelOf(op *stablehlo.Op) (*TritonKernel, error) {
	cfg, ok := op.Attr("mhlo.backend_config").(stablehlo.DictAttr)
	if !ok {
		return nil, fmt.Errorf("mhlo.backend_config is %T, want a dictionary", op.Attr("mhlo.backend_config"))
	}
	str := func(key string) (string, error) {
		v, ok := cfg.Get(key).(stablehlo.StringAttr)
		if !ok {
			return "", fmt.Errorf("backend config key %s is %v, want a string", key, cfg.Get(key))
		}
		return string(v), nil
	}
	num := func(key string) (int64, error) {
		v, ok := cfg.Get(key).(stablehlo.IntAttr)
		if !ok {
			return 0, fmt.Errorf("backend config key %s is %v, want an integer", key, cfg.Get(key))
		}
		return v.Value, nil
	}
	k := &TritonKernel{}
	var err error
	if k.Name, err = str("name"); err != nil {
		return nil, err
	}
	if k.IR, err = str("ir"); err != nil {
		return nil, err
	}
	for i, key := range []string{"grid_x", "grid_y", "grid_z"} {
		if k.Grid[i], err = num(key); err != nil {
			return nil, err
		}
	}
	for _, c := range []struct {
		key string
		to  *int
	}{{"num_warps", &k.NumWarps}, {"num_stages", &k.NumStages}} {
		v, err := num(c.key)
		if err != nil {
			return nil, err
		}
		*c.to = int(v)
	}
	return k, nil
}

// rowMajor is the minor-to-major layout of a row-major array of rank r.
func rowMajor(r int) []int64 {
	l := make([]int64, r)
	for i := range l {
		l[i] = int64(r - 1 - i)
	}
	return l
}

func lowerTriton(fb *stablehlo.FuncBuilder, p *Program, c *CallSpec, operands []*stablehlo.Value) ([]*stablehlo.Value, error) {
	if len(operands) != p.NumPrefetch+p.NumInputs {
		return nil, &Error{Kernel: p.Name, Op: "triton", Msg: fmt.Sprintf("%d operands for %d prefetch and %d inputs", len(operands), p.NumPrefetch, p.NumInputs)}
	}
	k, err := LowerTriton(p, c.CompilerParams)
	if err != nil {
		return nil, err
	}
	// Operand and result layouts are given together: a call without
	// operands has an empty (not a missing) operand layout list.
	// A kernel that prints is kept even when its results go unused.
	cfg := stablehlo.CustomCallConfig{Attrs: []stablehlo.NamedAttr{{Name: "mhlo.backend_config", Value: k.BackendConfig()}},
		OperandLayouts: [][]int64{}, HasSideEffect: prints(p.Body)}
	for _, o := range operands {
		t, _ := o.TensorType()
		cfg.OperandLayouts = append(cfg.OperandLayouts, rowMajor(len(t.Dims)))
	}
	var results []stablehlo.Type
	for i := 0; i < p.NumOutputs; i++ {
		r := p.Refs[p.NumPrefetch+p.NumInputs+i]
		results = append(results, stablehlo.Tensor(r.DType, r.ArrayShape...))
		cfg.ResultLayouts = append(cfg.ResultLayouts, rowMajor(len(r.ArrayShape)))
		if r.AliasOf >= 0 {
			a := stablehlo.OutputOperandAlias{OperandIndex: int64(r.AliasOf)}
			if p.NumOutputs > 1 {
				a.OutputTupleIndices = []int64{int64(i)}
			}
			cfg.OutputOperandAliases = append(cfg.OutputOperandAliases, a)
		}
	}
	outs := fb.CustomCall(TritonTarget, operands, results, cfg)
	if err := fb.Err(); err != nil {
		return nil, err
	}
	return outs, nil
}

// tritonSymbol makes a kernel name a plain identifier ([A-Za-z0-9_], not
// starting with a digit) usable as a tt.func and PTX symbol.
func tritonSymbol(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "kernel"
	}
	return b.String()
}
