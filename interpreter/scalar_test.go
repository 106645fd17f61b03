package interpreter

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// scalarCase is one op on one-element values: the op's line (operands
// %a, %b, %c), the argument types and the values each argument takes.
type scalarCase struct {
	line   string
	args   []string
	result string
	vals   [][]Value
}

// i32s makes a rank-0 i32 tensor of each value.
func i32s(vs ...int64) []Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = ewtShaped(xla.Int32, nil, v)
	}
	return out
}

// bools makes a rank-0 i1 tensor of each value.
func bools(vs ...bool) []Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = ewtShaped(xla.Bool, nil, v)
	}
	return out
}

func scalarCases() []scalarCase {
	edges := i32s(math.MinInt32, -7, -1, 0, 1, 3, math.MaxInt32)
	tf := bools(false, true)
	f32 := []Value{ewtShaped(xla.Float32, nil, -1.5), ewtShaped(xla.Float32, nil, math.NaN())}
	var cs []scalarCase
	for _, op := range []string{"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or", "xor"} {
		cs = append(cs, scalarCase{fmt.Sprintf("stablehlo.%s %%a, %%b : tensor<i32>", op), []string{"tensor<i32>", "tensor<i32>"}, "tensor<i32>", [][]Value{edges, edges}})
	}
	for _, op := range []string{"and", "or", "xor"} {
		cs = append(cs, scalarCase{fmt.Sprintf("stablehlo.%s %%a, %%b : tensor<i1>", op), []string{"tensor<i1>", "tensor<i1>"}, "tensor<i1>", [][]Value{tf, tf}})
	}
	for _, dir := range []string{"EQ", "NE", "GE", "GT", "LE", "LT"} {
		cs = append(cs,
			scalarCase{fmt.Sprintf("stablehlo.compare %s, %%a, %%b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>", dir), []string{"tensor<i32>", "tensor<i32>"}, "tensor<i1>", [][]Value{edges, edges}},
			scalarCase{fmt.Sprintf("stablehlo.compare %s, %%a, %%b, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>", dir), []string{"tensor<i1>", "tensor<i1>"}, "tensor<i1>", [][]Value{tf, tf}})
	}
	cs = append(cs,
		scalarCase{"stablehlo.not %a : tensor<i32>", []string{"tensor<i32>"}, "tensor<i32>", [][]Value{edges}},
		scalarCase{"stablehlo.not %a : tensor<i1>", []string{"tensor<i1>"}, "tensor<i1>", [][]Value{tf}},
		scalarCase{"stablehlo.convert %a : (tensor<i1>) -> tensor<i32>", []string{"tensor<i1>"}, "tensor<i32>", [][]Value{tf}},
		scalarCase{"stablehlo.convert %a : (tensor<i32>) -> tensor<i1>", []string{"tensor<i32>"}, "tensor<i1>", [][]Value{edges}},
		scalarCase{"stablehlo.select %a, %b, %c : tensor<i1>, tensor<i32>", []string{"tensor<i1>", "tensor<i32>", "tensor<i32>"}, "tensor<i32>", [][]Value{tf, edges[:2], edges[5:]}},
		scalarCase{"stablehlo.select %a, %b, %c : tensor<i1>, tensor<f32>", []string{"tensor<i1>", "tensor<f32>", "tensor<f32>"}, "tensor<f32>", [][]Value{tf, f32, f32}},
		scalarCase{"stablehlo.reshape %a : (tensor<1x1xi32>) -> tensor<i32>", []string{"tensor<1x1xi32>"}, "tensor<i32>",
			[][]Value{{ewtShaped(xla.Int32, []int64{1, 1}, -4)}}},
		scalarCase{"stablehlo.reshape %a : (tensor<f32>) -> tensor<1xf32>", []string{"tensor<f32>"}, "tensor<1xf32>", [][]Value{f32}},
	)
	grid := ewtShaped(xla.Int32, []int64{3, 4}, 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23)
	starts := i32s(math.MinInt32, -1, 0, 2, 3, 9)
	cs = append(cs, scalarCase{"stablehlo.dynamic_slice %a, %b, %c, sizes = [1, 1] : (tensor<3x4xi32>, tensor<i32>, tensor<i32>) -> tensor<1x1xi32>",
		[]string{"tensor<3x4xi32>", "tensor<i32>", "tensor<i32>"}, "tensor<1x1xi32>", [][]Value{{grid}, starts, starts}})
	return cs
}

// TestScalarFastPathMatchesKernels runs each op the scalar fast path
// covers over edge values (division by zero, MinInt / -1, out-of-range
// slice starts, NaN) through the fast path and through the op's kernel
// (a program compiled with every optimisation off) and requires the same
// results.
func TestScalarFastPathMatchesKernels(t *testing.T) {
	for _, c := range scalarCases() {
		t.Run(strings.Fields(c.line)[0]+"_"+strings.Join(c.args, "_"), func(t *testing.T) {
			names := []string{"%a", "%b", "%c"}
			var params []string
			for i, a := range c.args {
				params = append(params, names[i]+": "+a)
			}
			src := fmt.Sprintf("func.func @main(%s) -> %s {\n  %%0 = %s\n  return %%0 : %s\n}\n", strings.Join(params, ", "), c.result, c.line, c.result)
			fast, plain := compileTwice(t, src)
			planned := 0
			for _, pl := range fast.funcs["main"].ops {
				if pl.scalar != nil {
					planned++
				}
			}
			require.Equal(t, 1, planned, "the op has no fast path:\n%s", src)
			ctx := context.Background()
			var each func(args []Value)
			each = func(args []Value) {
				if len(args) == len(c.vals) {
					want, err := plain.Run(ctx, Device{}, args)
					require.NoError(t, err)
					got, err := fast.Run(ctx, Device{}, args)
					require.NoError(t, err)
					requireSameValues(t, want, got, fmt.Sprintf("%s on %v", c.line, args))
					return
				}
				for _, v := range c.vals[len(args)] {
					each(append(args, v))
				}
			}
			each(nil)
		})
	}
}

// TestScalarFastPathDeclines checks that the fast path hands an operand
// that does not have its static type back to the kernel.
func TestScalarFastPathDeclines(t *testing.T) {
	m, err := stablehlo.Parse([]byte("func.func @main(%a: tensor<i32>, %b: tensor<i32>) -> tensor<i32> {\n  %0 = stablehlo.add %a, %b : tensor<i32>\n  return %0 : tensor<i32>\n}\n"))
	require.NoError(t, err)
	op := m.Funcs[0].Body.Blocks[0].Ops[0]
	f := planScalar(op)
	require.NotNil(t, f)
	got, ok := f(i32s(2, 3))
	require.True(t, ok)
	require.Equal(t, []int32{5}, got.Data)
	for _, bad := range [][]Value{
		{ewtShaped(xla.Int64, nil, 2), i32s(3)[0]},
		{ewtShaped(xla.Int32, []int64{1}, 2), i32s(3)[0]},
		{&Tensor{Shape: xla.MakeShape(xla.Int32), Data: []int64{2}}, i32s(3)[0]},
		{&Tensor{Shape: xla.MakeShape(xla.Int32), Data: []int32{}}, i32s(3)[0]},
		{(*Tensor)(nil), i32s(3)[0]},
		{Tuple{}, i32s(3)[0]},
		{i32s(3)[0], nil},
	} {
		_, ok := f(bad)
		require.False(t, ok, "%v", bad)
	}
}

// TestScalarLoopAllocates checks that a loop of index arithmetic
// allocates less through the fast path than through the kernels (the same
// program with its fast paths removed), and computes the same as a
// program compiled with every optimisation off.
func TestScalarLoopAllocates(t *testing.T) {
	src := `func.func @main(%p: tensor<4x8xi32>) -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %c0) : tensor<i32>, tensor<i32>
   cond {
    %n = stablehlo.constant dense<1000> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %c8 = stablehlo.constant dense<8> : tensor<i32>
    %c4 = stablehlo.constant dense<4> : tensor<i32>
    %j = stablehlo.remainder %i, %c8 : tensor<i32>
    %q = stablehlo.divide %i, %c8 : tensor<i32>
    %k = stablehlo.remainder %q, %c4 : tensor<i32>
    %s = stablehlo.dynamic_slice %p, %k, %j, sizes = [1, 1] : (tensor<4x8xi32>, tensor<i32>, tensor<i32>) -> tensor<1x1xi32>
    %v = stablehlo.reshape %s : (tensor<1x1xi32>) -> tensor<i32>
    %nz = stablehlo.compare NE, %v, %c0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %w = stablehlo.select %nz, %v, %j : tensor<i1>, tensor<i32>
    %a = stablehlo.add %acc, %w : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %a : tensor<i32>, tensor<i32>
  }
  return %r#1 : tensor<i32>
}
`
	fast, plain := compileTwice(t, src)
	slow, _ := compileTwice(t, src)
	for _, fp := range slow.funcs {
		for _, pl := range fp.ops {
			pl.scalar = nil
		}
	}
	p := make([]int32, 32)
	for i := range p {
		p[i] = int32(i % 3)
	}
	args := []Value{&Tensor{Shape: xla.MakeShape(xla.Int32, 4, 8), Data: p}}
	ctx := context.Background()
	want, err := plain.Run(ctx, Device{}, args)
	require.NoError(t, err)
	got, err := fast.Run(ctx, Device{}, args)
	require.NoError(t, err)
	requireSameValues(t, want, got, "loop result")
	allocs := func(p *Program) float64 {
		return testing.AllocsPerRun(5, func() {
			if _, err := p.Run(ctx, Device{}, args); err != nil {
				t.Fatal(err)
			}
		}) / 1000
	}
	fastAllocs, slowAllocs := allocs(fast), allocs(slow)
	t.Logf("allocations per iteration: %.1f through the fast path, %.1f through the kernels", fastAllocs, slowAllocs)
	// 12 ops per iteration (the condition's compare included), each
	// allocating its result: the tensor with its element, and the slice
	// header Data boxes; the kernels allocate twice as much.
	require.LessOrEqual(t, fastAllocs, 0.6*slowAllocs)
}

// cancelAfter is a context whose Err reports Canceled from its n-th call
// on: a deterministic stand-in for a deadline that passes mid-run.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestScalarRegionStopsWhenCanceled runs a scatter whose combiner region
// is all fast-path ops (it runs once per update, and scatter has no
// cancellation check of its own): canceling the run stops it.
func TestScalarRegionStopsWhenCanceled(t *testing.T) {
	const n = 100000
	src := fmt.Sprintf(`func.func @main(%%e: tensor<1xi32>, %%idx: tensor<%[1]dx1xi32>, %%upd: tensor<%[1]dxi32>) -> tensor<1xi32> {
  %%sc = "stablehlo.scatter"(%%e, %%idx, %%upd) ({
  ^bb0(%%a: tensor<i32>, %%b: tensor<i32>):
    %%s = stablehlo.add %%a, %%b : tensor<i32>
    %%m = stablehlo.maximum %%s, %%a : tensor<i32>
    "stablehlo.return"(%%m) : (tensor<i32>) -> ()
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<1xi32>, tensor<%[1]dx1xi32>, tensor<%[1]dxi32>) -> tensor<1xi32>
  return %%sc : tensor<1xi32>
}`, n)
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	args := []Value{
		&Tensor{Shape: xla.MakeShape(xla.Int32, 1), Data: []int32{0}},
		&Tensor{Shape: xla.MakeShape(xla.Int32, n, 1), Data: make([]int32, n)},
		&Tensor{Shape: xla.MakeShape(xla.Int32, n), Data: make([]int32, n)},
	}
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(1000)
	_, err = p.Run(ctx, Device{}, args)
	require.ErrorIs(t, err, context.Canceled)
}
