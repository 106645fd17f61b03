package interpreter

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// TestFactorizationsStop: cholesky and triangular_solve end early when
// the run's stop flag is set (a 3000x3000 cholesky ran 18 s past a 100 ms
// deadline), leaving their results unfinished.
func TestFactorizationsStop(t *testing.T) {
	const n = 64
	a := NewTensor(xla.MakeShape(xla.Float64, n, n))
	d := a.Data.([]float64)
	for i := 0; i < n; i++ {
		d[i*n+i] = 4
	}
	var stop atomic.Bool
	full, err := choleskyT[float64](a, true, a.Shape, &stop)
	require.NoError(t, err)
	assert.Equal(t, 2.0, full.Data.([]float64)[0])
	stop.Store(true)
	cut, err := choleskyT[float64](a, true, a.Shape, &stop)
	require.NoError(t, err)
	assert.Equal(t, 0.0, cut.Data.([]float64)[0], "no column computed")

	solved, err := triangularSolve(a, a, triSolveOptions{left: true, lower: true, transpose: "NO_TRANSPOSE", stop: &stop}, a.Shape)
	require.NoError(t, err)
	assert.Equal(t, 4.0, solved.Data.([]float64)[0], "b as it came: no row solved")
}

// stopCase is a program of one long op (named op) whose kernel must end
// early when the run's stop flag is set; its arguments are filled with
// i % mod + 1.
type stopCase struct {
	name, op, src string
	mod           int
}

// TestKernelsStop runs each op's kernel directly with the stop flag
// already set, as a run whose context ended: it must return errStopped
// or an unfinished result (one that differs from the finished run's).
// These kernels once ran to the end however long they took (an einsum
// never stopped).
func TestKernelsStop(t *testing.T) {
	region := func(op, et string) string {
		return fmt.Sprintf(`({
  ^bb0(%%x: tensor<%[2]s>, %%y: tensor<%[2]s>):
    %%r = %[1]s : tensor<%[2]s>
    stablehlo.return %%r : tensor<%[2]s>
  })`, op, et)
	}
	cases := []stopCase{
		{name: "einsum", op: "stablehlo.einsum", mod: 7, src: `func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = "stablehlo.einsum"(%a, %b) {einsum_config = "ij,jk->ik"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}`},
		{name: "integer dot", op: "stablehlo.dot_general", mod: 7, src: `func.func @main(%a: tensor<64x64xi32>, %b: tensor<64x64xi32>) -> tensor<64x64xi32> {
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi32>
  return %r : tensor<64x64xi32>
}`},
		{name: "complex dot", op: "stablehlo.dot_general", mod: 7, src: `func.func @main(%a: tensor<64x64xcomplex<f32>>, %b: tensor<64x64xcomplex<f32>>) -> tensor<64x64xcomplex<f32>> {
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x64xcomplex<f32>>, tensor<64x64xcomplex<f32>>) -> tensor<64x64xcomplex<f32>>
  return %r : tensor<64x64xcomplex<f32>>
}`},
		{name: "fft", op: "stablehlo.fft", mod: 7, src: `func.func @main(%a: tensor<8x64xcomplex<f32>>) -> tensor<8x64xcomplex<f32>> {
  %r = stablehlo.fft %a, type = FFT, length = [64] : (tensor<8x64xcomplex<f32>>) -> tensor<8x64xcomplex<f32>>
  return %r : tensor<8x64xcomplex<f32>>
}`},
		{name: "typed sort", op: "stablehlo.sort", mod: 97, src: `func.func @main(%a: tensor<4x5000xf32>) -> tensor<4x5000xf32> {
  %r = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<4x5000xf32>) -> tensor<4x5000xf32>
  return %r : tensor<4x5000xf32>
}`},
		{name: "gather", op: "stablehlo.gather", mod: 97, src: `func.func @main(%a: tensor<100x64xf32>, %i: tensor<500x1xi32>) -> tensor<500x64xf32> {
  %r = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 64>, indices_are_sorted = false} : (tensor<100x64xf32>, tensor<500x1xi32>) -> tensor<500x64xf32>
  return %r : tensor<500x64xf32>
}`},
		{name: "scatter-add", op: "stablehlo.scatter", mod: 97, src: `func.func @main(%a: tensor<100x64xf32>, %i: tensor<500x1xi32>, %u: tensor<500x64xf32>) -> tensor<100x64xf32> {
  %r = "stablehlo.scatter"(%a, %i, %u) ` + region("stablehlo.add %x, %y", "f32") + ` {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<100x64xf32>, tensor<500x1xi32>, tensor<500x64xf32>) -> tensor<100x64xf32>
  return %r : tensor<100x64xf32>
}`},
		{name: "torch_index_select", op: "stablehlo.torch_index_select", mod: 97, src: `func.func @main(%a: tensor<100x64xf32>, %i: tensor<500xi32>) -> tensor<500x64xf32> {
  %r = "stablehlo.torch_index_select"(%a, %i) {dim = 0 : i64, batch_dims = 0 : i64} : (tensor<100x64xf32>, tensor<500xi32>) -> tensor<500x64xf32>
  return %r : tensor<500x64xf32>
}`},
		{name: "rng_bit_generator", op: "stablehlo.rng_bit_generator", mod: 7, src: `func.func @main(%s: tensor<2xui64>) -> tensor<4096xui32> {
  %ns, %r = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4096xui32>)
  return %r : tensor<4096xui32>
}`},
		{name: "top_k, heap", op: "chlo.top_k", mod: 97, src: `func.func @main(%a: tensor<8x1000xf32>) -> tensor<8x3xf32> {
  %v, %i = "chlo.top_k"(%a) {k = 3 : i64} : (tensor<8x1000xf32>) -> (tensor<8x3xf32>, tensor<8x3xi32>)
  return %v : tensor<8x3xf32>
}`},
		{name: "top_k, sort", op: "chlo.top_k", mod: 97, src: `func.func @main(%a: tensor<8x1000xf32>) -> tensor<8x500xf32> {
  %v, %i = "chlo.top_k"(%a) {k = 500 : i64} : (tensor<8x1000xf32>) -> (tensor<8x500xf32>, tensor<8x500xi32>)
  return %v : tensor<8x500xf32>
}`},
		{name: "ragged_dot", op: "chlo.ragged_dot", mod: 3, src: `func.func @main(%a: tensor<64x32xf32>, %b: tensor<2x32x16xf32>, %g: tensor<2xi32>) -> tensor<64x16xf32> {
  %r = "chlo.ragged_dot"(%a, %b, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<64x32xf32>, tensor<2x32x16xf32>, tensor<2xi32>) -> tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := stablehlo.Parse([]byte(c.src))
			require.NoError(t, err)
			p, err := Compile(m, "")
			require.NoError(t, err)
			fp := p.funcs["main"]
			entry := fp.fn.Body.Blocks[0]
			args := make([]Value, len(entry.Args))
			for i, a := range entry.Args {
				tt := NewTensor(a.Type.(stablehlo.TensorType).Shape())
				for j := 0; j < tt.Len(); j++ {
					ewtSet(tt, j, j%c.mod+1)
				}
				args[i] = tt
			}
			full, err := p.Run(context.Background(), Device{}, args)
			require.NoError(t, err)
			var pl *opPlan
			for _, cand := range fp.blocks[entry] {
				if cand.op.Name == c.op {
					pl = cand
				}
			}
			require.NotNil(t, pl, "no plan for %s", c.op)
			x := &Exec{Ctx: context.Background(), Program: p}
			x.stop.Store(true)
			in := make([]Value, len(pl.op.Operands))
			for i, v := range pl.op.Operands {
				in[i] = args[slices.Index(entry.Args, v)]
			}
			cut, err := pl.kernel(x, pl.op, in)
			if err != nil {
				require.ErrorIs(t, err, errStopped)
				return
			}
			ops := entry.Ops
			r := slices.Index(pl.op.Results, ops[len(ops)-1].Operands[0]) // the result main returns
			require.GreaterOrEqual(t, r, 0)
			assert.NotEqual(t, laValues(full[0].(*Tensor)), laValues(cut[r].(*Tensor)), "the kernel ran to the end with its stop flag set")
		})
	}
}

// TestRunAfterCancelledRun: an Exec run again after a run whose context
// had ended runs to the end (the ended context's stop callback, started
// on its own goroutine, once set the flag after the next run had cleared
// it: kernels stopped early in a live run).
func TestRunAfterCancelledRun(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<64x32xi32>, %b: tensor<32x64xi32>) -> tensor<64x64xi32> {
  %r = "stablehlo.einsum"(%a, %b) {einsum_config = "ij,jk->ik"} : (tensor<64x32xi32>, tensor<32x64xi32>) -> tensor<64x64xi32>
  return %r : tensor<64x64xi32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	mk := func(d ...int64) *Tensor {
		tt := NewTensor(xla.MakeShape(xla.Int32, d...))
		for j := 0; j < tt.Len(); j++ {
			ewtSet(tt, j, j%7+1)
		}
		return tt
	}
	args := []Value{mk(64, 32), mk(32, 64)}
	want, err := p.Run(context.Background(), Device{}, args)
	require.NoError(t, err)
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 200; i++ {
		x := &Exec{Program: p, Ctx: dead}
		_, err := x.Call(p.Main, args)
		require.ErrorIs(t, err, context.Canceled)
		x.Ctx = context.Background()
		got, err := x.Call(p.Main, args)
		require.NoError(t, err, "run %d", i)
		require.Equal(t, laValues(want[0].(*Tensor)), laValues(got[0].(*Tensor)), "run %d: a live run cut short", i)
	}
}

// The top_k heap's pass over a row polls the stop flag too: one huge row
// with a k in the heap's range is not a pass the run must wait out.
func TestTopKHeapStops(t *testing.T) {
	var stop atomic.Bool
	before := func(p, q int) bool { return p < q }
	n, k := 3*stopPiece, 10
	assert.Len(t, chloTopKHeap(make([]int, 0, k), n, k, before, &stop), k)
	stop.Store(true)
	assert.Empty(t, chloTopKHeap(make([]int, 0, k), n, k, before, &stop))
}
