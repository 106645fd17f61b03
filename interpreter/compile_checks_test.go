package interpreter

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// TestTooLargeResultsAreErrors: results that cannot be allocated fail
// their op with an *AllocError naming the type (a failed allocation is
// fatal in Go: 4 TiB took the process down).
func TestTooLargeResultsAreErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`func.func @main() -> tensor<f32> {
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<1099511627776xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<1099511627776xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}`, "stablehlo.broadcast_in_dim: tensor<1099511627776xf32> needs 4.0 TiB, more than the"},
		{`func.func @main(%a: tensor<0x4294967296x4294967296xf32>) -> tensor<1x1xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<0x4294967296x4294967296xf32>, tensor<f32>) -> tensor<4294967296x4294967296xf32>
  %s = stablehlo.slice %r [5:6, 7:8] : (tensor<4294967296x4294967296xf32>) -> tensor<1x1xf32>
  return %s : tensor<1x1xf32>
}`, "stablehlo.reduce: tensor<4294967296x4294967296xf32> is too large to hold"},
	} {
		m, err := stablehlo.Parse([]byte(c.src))
		require.NoError(t, err)
		p, err := Compile(m, "")
		require.NoError(t, err)
		var args []Value
		if len(p.Main.ArgTypes()) > 0 {
			args = []Value{NewTensor(p.Main.ArgTypes()[0].(stablehlo.TensorType).Shape())}
		}
		_, err = p.Run(context.Background(), Device{}, args)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
		var ae *AllocError
		assert.True(t, errors.As(err, &ae), "%v", err)
	}
}

// TestCompileChecksTypesFlow: a branch, a loop body or a function that
// returns another type than declared is a compile error (an if returning
// i32 bits as its f32 result read them as a float).
func TestCompileChecksTypesFlow(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`func.func @main() -> tensor<f32> {
  %p = stablehlo.constant dense<true> : tensor<i1>
  %r = "stablehlo.if"(%p) ({
    %b = stablehlo.constant dense<1065353216> : tensor<i32>
    stablehlo.return %b : tensor<i32>
  }, {
    %a = stablehlo.constant dense<1.0> : tensor<f32>
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  return %r : tensor<f32>
}`, "stablehlo.if: branch 0 returns (tensor<i32>), the op's results are (tensor<f32>)"},
		{`func.func @main() -> tensor<f32> {
  %a = stablehlo.constant dense<1.0> : tensor<f32>
  %r = stablehlo.while(%i = %a) : tensor<f32>
    cond {
      %t = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %b = stablehlo.constant dense<1.0> : tensor<5xf32>
      stablehlo.return %b : tensor<5xf32>
    }
  return %r : tensor<f32>
}`, "stablehlo.while: the body returns (tensor<5xf32>), the operands are (tensor<f32>)"},
		{`func.func @main() -> tensor<f32> {
  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  return %a : tensor<3xi32>
}`, "@main result 0: returns tensor<3xi32>, declares tensor<f32>"},
		{`func.func @main() -> tensor<f32> {
  %p = stablehlo.constant dense<true> : tensor<i1>
  %r = "stablehlo.if"(%p) ({
    %b = stablehlo.constant dense<1065353216> : tensor<i32>
    "func.return"(%b) : (tensor<i32>) -> ()
  }, {
    %a = stablehlo.constant dense<1.0> : tensor<f32>
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  return %r : tensor<f32>
}`, "branch 0 returns (tensor<i32>)"},
		{`func.func @main(%a: tensor<f32>) -> tensor<i32> {
  %0 = func.call @f(%a) : (tensor<f32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func private @f(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}`, "func.call: result 0 is tensor<i32>, @f returns tensor<f32>"},
		{`func.func @main(%a: tensor<f32>) -> tensor<i32> {
  %0 = stablehlo.composite "my.op" %a {decomposition = @f} : (tensor<f32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func private @f(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}`, "stablehlo.composite: result 0 is tensor<i32>, @f returns tensor<f32>"},
		{`module attributes {mhlo.num_replicas = -3 : i32} {
  func.func @main() {
    return
  }
}`, "mhlo.num_replicas is -3, want 1 to 4096"},
		{`module attributes {mhlo.num_replicas = 4611686018427387904 : i64, mhlo.num_partitions = 4 : i32} {
  func.func @main() {
    return
  }
}`, "mhlo.num_replicas is 4611686018427387904"},
		{`module attributes {mhlo.num_replicas = 100 : i32, mhlo.num_partitions = 100 : i32} {
  func.func @main() {
    return
  }
}`, "100 replicas x 100 partitions is 10000 devices"},
	} {
		m, err := stablehlo.Parse([]byte(c.src))
		require.NoError(t, err)
		_, err = Compile(m, "")
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestTooLargeWorkingStorage: results of products, convolutions and
// einsums not made by NewTensor are checked too (an outer product of two
// 512 KiB vectors took the process down asking for 32 GiB).
func TestTooLargeWorkingStorage(t *testing.T) {
	defer func(f func() (int64, bool)) { availableMemory = f }(availableMemory)
	availableMemory = func() (int64, bool) { return 1 << 30, true } // 1 GiB left
	src := `func.func @main(%a: tensor<16384x1xf64>, %b: tensor<1x16384xf64>) -> tensor<16384x16384xf64> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<16384x1xf64>, tensor<1x16384xf64>) -> tensor<16384x16384xf64>
  return %0 : tensor<16384x16384xf64>
}`
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	_, err = p.Run(context.Background(), Device{}, []Value{
		NewTensor(xla.MakeShape(xla.Float64, 16384, 1)), NewTensor(xla.MakeShape(xla.Float64, 1, 16384))})
	var ae *AllocError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Contains(t, err.Error(), "tensor<16384x16384xf64> needs 2.0 GiB, more than the 1.0 GiB of memory available")
}

// TestRegionTypesMayBeCompatible: a branch may return a dynamic type
// where the op's result is static (and the other way round), as
// StableHLO allows.
func TestRegionTypesMayBeCompatible(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%p: tensor<i1>, %a: tensor<2xi32>, %d: tensor<?xi32>) -> tensor<2xi32> {
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %d : tensor<?xi32>
  }, {
    stablehlo.return %a : tensor<2xi32>
  }) : (tensor<i1>) -> tensor<2xi32>
  return %r : tensor<2xi32>
}`))
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	_, err = Compile(m, "")
	require.NoError(t, err)
}

// TestExecRunAgainAfterItsContextEnded: an Exec whose run was stopped by
// its context runs again under a new one.
func TestExecRunAgainAfterItsContextEnded(t *testing.T) {
	p := compileText(t, `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := &Exec{Ctx: ctx, Program: p}
	in := []Value{NewTensor(xla.MakeShape(xla.Float32, 2))}
	_, err := x.Call(p.Main, in)
	require.ErrorIs(t, err, context.Canceled)
	x.Ctx = context.Background()
	out, err := x.Call(p.Main, in)
	require.NoError(t, err)
	assert.Len(t, out, 1)
}

// TestDynamicArgumentsTakeAnySize: a function taking tensor<?xi32> takes
// a value of any length (a dynamic_iota's 5 elements were refused).
func TestDynamicArgumentsTakeAnySize(t *testing.T) {
	p := compileText(t, `func.func @main(%n: tensor<1xi32>) -> tensor<i32> {
  %i = stablehlo.dynamic_iota %n, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
  %s = func.call @sum(%i) : (tensor<?xi32>) -> tensor<i32>
  return %s : tensor<i32>
}
func.func private @sum(%a: tensor<?xi32>) -> tensor<i32> {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?xi32>, tensor<i32>) -> tensor<i32>
  return %r : tensor<i32>
}`)
	n := NewTensor(xla.MakeShape(xla.Int32, 1))
	n.Data.([]int32)[0] = 5
	out, err := p.Run(context.Background(), Device{}, []Value{n})
	require.NoError(t, err)
	assert.Equal(t, []int32{10}, out[0].(*Tensor).Data.([]int32))
}

// TestTooLargeWindowTables: a reduce_window whose window tables need more
// memory than is available fails its op (an f32[1] operand with a large
// window and padding asked for gigabytes of int64 offsets).
func TestTooLargeWindowTables(t *testing.T) {
	defer func(f func() (int64, bool)) { availableMemory = f }(availableMemory)
	availableMemory = func() (int64, bool) { return 512 << 20, true }
	p := compileText(t, `func.func @main(%a: tensor<1xf32>) -> tensor<49154xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 16384>, padding = dense<[[0, 65536]]> : tensor<1x2xi64>} : (tensor<1xf32>, tensor<f32>) -> tensor<49154xf32>
  return %r : tensor<49154xf32>
}`)
	_, err := p.Run(context.Background(), Device{}, []Value{NewTensor(xla.MakeShape(xla.Float32, 1))})
	var ae *AllocError
	require.True(t, errors.As(err, &ae), "%v", err)
}
