package interpreter

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// A program with a symbolic batch dimension, as JAX exports with shape
// polymorphism: a dot_general, elementwise ops, a convert and a
// reduction declared with `?` results run on any batch size (they failed
// with "result 0 has a dynamic shape"), beside the dynamism ops that make
// their shapes themselves.
func TestDynamicResultsRefined(t *testing.T) {
	src := `func.func @main(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> (tensor<?x3xf64>, tensor<?xf32>) {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c3 = stablehlo.constant dense<3> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.dynamic_broadcast_in_dim %one, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x3xf32>
  %s = stablehlo.add %d, %b : tensor<?x3xf32>
  %t = stablehlo.tanh %s : tensor<?x3xf32>
  %c = stablehlo.convert %t : (tensor<?x3xf32>) -> tensor<?x3xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [1] : (tensor<?x3xf32>, tensor<f32>) -> tensor<?xf32>
  return %c, %r : tensor<?x3xf64>, tensor<?xf32>
}`
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	p, err := Compile(m, "")
	require.NoError(t, err)
	w := NewTensor(xla.MakeShape(xla.Float32, 4, 3))
	for i := range w.Data.([]float32) {
		w.Data.([]float32)[i] = float32(i%5) / 10
	}
	for _, n := range []int64{1, 2, 5} {
		x := NewTensor(xla.MakeShape(xla.Float32, n, 4))
		for i := range x.Data.([]float32) {
			x.Data.([]float32)[i] = float32(i%7) - 3
		}
		out, err := p.Run(context.Background(), Device{}, []Value{x, w})
		require.NoError(t, err, "batch %d", n)
		c, r := out[0].(*Tensor), out[1].(*Tensor)
		require.Equal(t, []int64{n, 3}, c.Shape.Dims)
		require.Equal(t, xla.Float64, c.Shape.DType)
		require.Equal(t, []int64{n}, r.Shape.Dims)
		for i := int64(0); i < n; i++ {
			var sum float32
			for j := 0; j < 3; j++ {
				var dot float32
				for k := 0; k < 4; k++ {
					dot += x.Data.([]float32)[i*4+int64(k)] * w.Data.([]float32)[k*3+j]
				}
				s := dot + 1
				sum += s
				assert.InDelta(t, math.Tanh(float64(s)), c.Data.([]float64)[i*3+int64(j)], 1e-6, "batch %d [%d %d]", n, i, j)
			}
			assert.InDelta(t, sum, r.Data.([]float32)[i], 1e-5, "batch %d row %d", n, i)
		}
	}

	// `?` values carried by a loop, through an if's branch (whose ops are
	// refined too) and sorted.
	p = shpCompile(t, `func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %w:2 = stablehlo.while(%i = %z, %v = %x) : tensor<i32>, tensor<?xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %u = stablehlo.add %v, %v : tensor<?xf32>
      stablehlo.return %j, %u : tensor<i32>, tensor<?xf32>
    }
  %t = stablehlo.constant dense<true> : tensor<i1>
  %r = "stablehlo.if"(%t) ({
    %e = stablehlo.exponential %w#1 : tensor<?xf32>
    stablehlo.return %e : tensor<?xf32>
  }, {
    stablehlo.return %w#1 : tensor<?xf32>
  }) : (tensor<i1>) -> tensor<?xf32>
  %s = "stablehlo.sort"(%r) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<?xf32>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}`)
	x := NewTensor(xla.MakeShape(xla.Float32, 3))
	copy(x.Data.([]float32), []float32{0.1, -0.2, 0.3})
	out, err := p.Run(context.Background(), Device{}, []Value{x})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float32{float32(math.Exp(-1.6)), float32(math.Exp(0.8)), float32(math.Exp(2.4))}, out[0].(*Tensor).Data, 1e-5)

	// An op whose result shape its operands do not give (a reshape to
	// `?`) still says so.
	p = shpCompile(t, `func.func @main(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %r = stablehlo.reshape %x : (tensor<?x4xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}`)
	_, err = p.Run(context.Background(), Device{}, []Value{NewTensor(xla.MakeShape(xla.Float32, 2, 4))})
	assert.ErrorContains(t, err, "dynamic")
}

// What jax.export writes for symbolic shapes runs: @shape_assertion (a
// false predicate fails the run with its error_message, the dims filled
// in; the target was not registered), and @Sharding and other custom
// calls with `?` results (a declared `?` never matched the computed size;
// found in review).
func TestDynamicCustomCalls(t *testing.T) {
	p := shpCompile(t, `func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %d = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %ge = stablehlo.compare GE, %d, %two, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%ge, %d) {api_version = 2 : i32, error_message = "Expected value >= 2 for dimension variable 'b'. Obtained dimension variables: 'b' = {0}", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  %s = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{replicated}"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %t = stablehlo.add %s, %s : tensor<?x4xf32>
  return %t : tensor<?x4xf32>
}`)
	x := f32Tensor([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)
	out, err := p.Run(context.Background(), Device{}, []Value{x})
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8, 10, 12, 14, 16}, out[0].(*Tensor).Data)
	_, err = p.Run(context.Background(), Device{}, []Value{f32Tensor([]float32{1, 2, 3, 4}, 1, 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Expected value >= 2 for dimension variable 'b'. Obtained dimension variables: 'b' = 1")
}

// Values an op passes on unchanged (a branch's, a loop body's,
// optimization_barrier's) are checked against the op's result types at
// run time: a `?` value of another size flowed on as tensor<3xf32> and
// the reduce after it summed 2 or 6 elements (found in review).
func TestForwardedValuesMatchTheirTypes(t *testing.T) {
	reduce3 := `  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}`
	cases := []struct {
		name, src string
		args      []Value
	}{
		{"if", `func.func @main(%p: tensor<i1>, %x: tensor<?xf32>) -> tensor<f32> {
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %x : tensor<?xf32>
  }, {
    stablehlo.return %x : tensor<?xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
` + reduce3, []Value{shpT(xla.Bool, nil, 1), f32Tensor([]float32{1, 2}, 2)}},
		{"case", `func.func @main(%i: tensor<i32>, %x: tensor<?xf32>) -> tensor<f32> {
  %r = "stablehlo.case"(%i) ({
    stablehlo.return %x : tensor<?xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
` + reduce3, []Value{shpT(xla.Int32, nil, 0), f32Tensor([]float32{1, 2}, 2)}},
		{"optimization_barrier", `func.func @main(%x: tensor<?xf32>) -> tensor<f32> {
  %r = "stablehlo.optimization_barrier"(%x) : (tensor<?xf32>) -> tensor<3xf32>
` + reduce3, []Value{f32Tensor([]float32{1, 2}, 2)}},
		{"while", `func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %w:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<3xf32>
    cond {
      %n = stablehlo.constant dense<1> : tensor<i32>
      %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %u = stablehlo.concatenate %v, %v, dim = 0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<?xf32>
      stablehlo.return %j, %u : tensor<i32>, tensor<?xf32>
    }
  %r = stablehlo.optimization_barrier %w#1 : tensor<3xf32>
` + reduce3, []Value{f32Tensor([]float32{1, 2, 3}, 3)}},
	}
	for _, c := range cases {
		_, err := runText(context.Background(), c.src, c.args...)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), "the result's type tensor<3xf32>", c.name)
	}
}

// A dot_general with a `?` result whose operand is a dynamic_slice it
// reads in place (a slice view, not a tensor) is refined too: it failed
// with "result 0 has a dynamic shape" (found in review).
func TestDynamicDotOfSliceView(t *testing.T) {
	p := shpCompile(t, `func.func @main(%x: tensor<4x4xf32>, %y: tensor<2x?xf32>, %i: tensor<i32>) -> tensor<1x?xf32> {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %s = stablehlo.dynamic_slice %x, %i, %z, sizes = [1, 2] : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
  %d = stablehlo.dot_general %s, %y, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x?xf32>) -> tensor<1x?xf32>
  return %d : tensor<1x?xf32>
}`)
	x := f32Tensor([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 4, 4)
	for _, n := range []int64{1, 3} {
		y := NewTensor(xla.MakeShape(xla.Float32, 2, n))
		for i := range y.Data.([]float32) {
			y.Data.([]float32)[i] = float32(i + 1)
		}
		out, err := p.Run(context.Background(), Device{}, []Value{x, y, shpT(xla.Int32, nil, 2)})
		require.NoError(t, err, "n = %d", n)
		got := out[0].(*Tensor)
		require.Equal(t, []int64{1, n}, got.Shape.Dims)
		for j := int64(0); j < n; j++ { // row 2 of x is 8, 9
			assert.Equal(t, 8*float32(j+1)+9*float32(n+j+1), got.Data.([]float32)[j], "n = %d, column %d", n, j)
		}
	}
}

// dynamic_conv with a `?` result, its usual form: the result's size
// follows the run-time padding (it failed with "result 0 has a dynamic
// shape"; found in review). [1 2 3 4] with the kernel [1 1] and padding
// (lo, hi) sums neighbours over 4 + lo + hi - 1 windows.
func TestDynamicConvResult(t *testing.T) {
	p := shpCompile(t, `func.func @main(%a: tensor<1x4x1xf32>, %b: tensor<2x1x1xf32>, %p: tensor<1x2xi64>) -> tensor<1x?x1xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, window_strides = array<i64: 1>, batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<2x1x1xf32>, tensor<1x2xi64>) -> tensor<1x?x1xf32>
  return %0 : tensor<1x?x1xf32>
}`)
	a := f32Tensor([]float32{1, 2, 3, 4}, 1, 4, 1)
	b := f32Tensor([]float32{1, 1}, 2, 1, 1)
	for _, c := range []struct {
		lo, hi float64
		want   []float32
	}{
		{0, 0, []float32{3, 5, 7}},
		{1, 1, []float32{1, 3, 5, 7, 4}},
		{0, 2, []float32{3, 5, 7, 4, 0}},
	} {
		out, err := p.Run(context.Background(), Device{}, []Value{a, b, shpT(xla.Int64, []int64{1, 2}, c.lo, c.hi)})
		require.NoError(t, err, "padding %v %v", c.lo, c.hi)
		assert.Equal(t, c.want, out[0].(*Tensor).Data, "padding %v %v", c.lo, c.hi)
	}
}

// chlo.broadcast_* with `?` operands or results compile and broadcast the
// run-time shapes (the compile-time check read a ? as a size: refused;
// found in review); a run-time mismatch is an error.
func TestDynamicChloBroadcast(t *testing.T) {
	for _, rt := range []string{"tensor<?x?xf32>", "tensor<2x3xf32>"} {
		p := shpCompile(t, `func.func @main(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>) -> `+rt+` {
  %0 = chlo.broadcast_add %a, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> `+rt+`
  return %0 : `+rt+`
}`)
		out, err := p.Run(context.Background(), Device{}, []Value{f32Tensor([]float32{1, 2}, 2, 1), f32Tensor([]float32{10, 20, 30}, 1, 3)})
		require.NoError(t, err, rt)
		got := out[0].(*Tensor)
		assert.Equal(t, []int64{2, 3}, got.Shape.Dims, rt)
		assert.Equal(t, []float32{11, 21, 31, 12, 22, 32}, got.Data, rt)
		if rt == "tensor<2x3xf32>" {
			_, err = p.Run(context.Background(), Device{}, []Value{f32Tensor([]float32{1, 2, 3}, 3, 1), f32Tensor([]float32{10, 20, 30}, 1, 3)})
			assert.Error(t, err, "3x3 is not the declared 2x3")
		}
	}
}
