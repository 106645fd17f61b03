package interpreter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
}`, "stablehlo.broadcast_in_dim (line 3): tensor<1099511627776xf32> needs 4.0 TiB, more than the"},
		{`func.func @main(%a: tensor<0x4294967296x4294967296xf32>) -> tensor<1x1xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<0x4294967296x4294967296xf32>, tensor<f32>) -> tensor<4294967296x4294967296xf32>
  %s = stablehlo.slice %r [5:6, 7:8] : (tensor<4294967296x4294967296xf32>) -> tensor<1x1xf32>
  return %s : tensor<1x1xf32>
}`, "stablehlo.reduce (line 3): its result of type tensor<4294967296x4294967296xf32> has more than 2^63 bytes"},
		// Results past the interpreter's limits for one buffer are
		// *AllocErrors too (they were plain errors).
		{`func.func @main() -> tensor<1099511627776xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<1099511627776xf32>
  return %c : tensor<1099511627776xf32>
}`, "stablehlo.constant (line 2): result 0: tensor<1099511627776xf32> is too large to hold"},
		{`func.func @main() -> tensor<1099511627776xf32> {
  %c = stablehlo.iota dim = 0 : tensor<1099511627776xf32>
  return %c : tensor<1099511627776xf32>
}`, "stablehlo.iota (line 2): result 0: tensor<1099511627776xf32> is too large to hold"},
		{`func.func @main() -> tensor<f32> {
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4096x1099511627xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%b init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<4096x1099511627xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}`, "stablehlo.broadcast_in_dim (line 3): tensor<4096x1099511627xf32> is too large to hold"},
	} {
		m, err := stablehlo.Parse([]byte(c.src))
		require.NoError(t, err)
		p, err := Compile(m, "")
		if strings.Contains(c.want, "2^63") { // no memory holds it: refused at once
			require.ErrorContains(t, err, c.want)
			continue
		}
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
}`, "stablehlo.if (line 3): branch 0 returns (tensor<i32>), the op's results are (tensor<f32>)"},
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
}`, "stablehlo.while (line 3): the body returns (tensor<5xf32>), the operands are (tensor<f32>)"},
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
}`, "func.call (line 2): result 0 is tensor<i32>, @f returns tensor<f32>"},
		{`func.func @main(%a: tensor<f32>) -> tensor<i32> {
  %0 = stablehlo.composite "my.op" %a {decomposition = @f} : (tensor<f32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func private @f(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}`, "stablehlo.composite (line 2): result 0 is tensor<i32>, @f returns tensor<f32>"},
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
	// An Exec without a context runs as under context.Background (its
	// first op's check of the context panicked; found in review).
	x = &Exec{Program: p}
	out, err = x.Call(p.Main, in)
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

// TestTooLargeWindowTables: a reduce_window (or select_and_scatter) whose
// window table (outputs x window positions of a dimension) would be large
// computes its input indices as needed, and its run ends with its context.
// An f32[1] operand with a window of 16384 and padding of 65536 asked for
// 6 GiB of int64 offsets and, with the memory, took 28 s to honour a
// 5 s deadline.
func TestTooLargeWindowTables(t *testing.T) {
	defer func(f func() (int64, bool)) { availableMemory = f }(availableMemory)
	availableMemory = func() (int64, bool) { return 512 << 20, true }
	geo, err := shpNewWindow([]int64{1}, []int64{16384}, []int64{1}, []int64{1}, []int64{1}, []int64{0}, []int64{65536}, nil)
	require.NoError(t, err)
	assert.Nil(t, geo.tab[0])
	for _, src := range []string{`func.func @main(%a: tensor<1xf32>) -> tensor<49154xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 16384>, padding = dense<[[0, 65536]]> : tensor<1x2xi64>} : (tensor<1xf32>, tensor<f32>) -> tensor<49154xf32>
  return %r : tensor<49154xf32>
}`, `func.func @main(%a: tensor<1xf32>) -> tensor<1xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.constant dense<1.0> : tensor<49154xf32>
  %r = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }) {window_dimensions = array<i64: 16384>, padding = dense<[[0, 65536]]> : tensor<1x2xi64>} : (tensor<1xf32>, tensor<49154xf32>, tensor<f32>) -> tensor<1xf32>
  return %r : tensor<1xf32>
}`} {
		// 805M window positions: more than a test waits for.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err = runText(ctx, src, NewTensor(xla.MakeShape(xla.Float32, 1)))
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	// A smaller one of the kind (12.6M positions, no table) runs to the end.
	a := NewTensor(xla.MakeShape(xla.Float32, 1))
	a.Data.([]float32)[0] = 3
	out, err := runText(context.Background(), `func.func @main(%a: tensor<1xf32>) -> tensor<6146xf32> {
  %z = stablehlo.constant dense<0.5> : tensor<f32>
  %r = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2048>, padding = dense<[[2047, 6145]]> : tensor<1x2xi64>} : (tensor<1xf32>, tensor<f32>) -> tensor<6146xf32>
  return %r : tensor<6146xf32>
}`, a)
	require.NoError(t, err)
	got := out[0].(*Tensor).Data.([]float32)
	for i, v := range got {
		want := float32(0.5)
		if i < 2048 {
			want = 3
		}
		require.Equal(t, want, v, "element %d", i)
	}
}

// runText parses, compiles (without Verify) and runs src with args under
// ctx: the error of whichever step fails.
func runText(ctx context.Context, src string, args ...Value) ([]Value, error) {
	m, err := stablehlo.Parse([]byte(src))
	if err != nil {
		return nil, err
	}
	p, err := Compile(m, "")
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, Device{}, args)
}

// TestConvolutionNeedsNoWindowTable: a convolution's table of input
// indices (kernel size x output size per spatial dimension) is made only
// when small. Kernels of 2^36 positions and no input features asked for
// 512 GiB (and as many offsets) for a result of one zero; an ordinary
// 65536-wide kernel with as much padding for a 64 GiB table.
func TestConvolutionNeedsNoWindowTable(t *testing.T) {
	for _, src := range []string{`func.func @main() -> tensor<1x1x1xf32> {
  %x = stablehlo.constant dense<0.0> : tensor<1x68719476736x0xf32>
  %w = stablehlo.constant dense<0.0> : tensor<68719476736x0x1xf32>
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x68719476736x0xf32>, tensor<68719476736x0x1xf32>) -> tensor<1x1x1xf32>
  return %0 : tensor<1x1x1xf32>
}`, `func.func @main() -> tensor<1x1x1xf32> {
  %x = stablehlo.constant dense<0.0> : tensor<1x68719476736x0xf32>
  %w = stablehlo.constant dense<0.0> : tensor<68719476736x0x1xf32>
  %p = stablehlo.constant dense<0> : tensor<1x2xi64>
  %0 = "stablehlo.dynamic_conv"(%x, %w, %p) {dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x68719476736x0xf32>, tensor<68719476736x0x1xf32>, tensor<1x2xi64>) -> tensor<1x1x1xf32>
  return %0 : tensor<1x1x1xf32>
}`} {
		out, err := runText(context.Background(), src)
		require.NoError(t, err)
		assert.Equal(t, []float32{0}, out[0].(*Tensor).Data)
	}
	// 65536 x 131071 indices (64 GiB as a table): computed as needed, the
	// run (8.6e9 products, far too long for a test) ends at its deadline.
	src := `func.func @main(%x: tensor<1x65536x1xf32>, %w: tensor<65536x1x1xf32>) -> tensor<1x131071x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {pad = [[65535, 65535]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x65536x1xf32>, tensor<65536x1x1xf32>) -> tensor<1x131071x1xf32>
  return %0 : tensor<1x131071x1xf32>
}`
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := runText(ctx, src, NewTensor(xla.MakeShape(xla.Float32, 1, 65536, 1)), NewTensor(xla.MakeShape(xla.Float32, 65536, 1, 1)))
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestHugeSplatIntegerAttributes: an integer list attribute written as a
// splat of a huge type (stored as one element) is refused, naming the
// attribute, instead of being expanded (1e12 int64s took the process
// down). Such lists hold a few values per dimension.
func TestHugeSplatIntegerAttributes(t *testing.T) {
	const huge = "dense<0> : tensor<1000000000000xi64>"
	for _, c := range []struct{ name, src string }{
		{"permutation", `func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.transpose"(%a) {permutation = ` + huge + `} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}`},
		{"start_indices", `func.func @main(%a: tensor<4xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.slice"(%a) {start_indices = ` + huge + `, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`},
		{"edge_padding_low", `func.func @main(%a: tensor<4xf32>, %z: tensor<f32>) -> tensor<4xf32> {
  %0 = "stablehlo.pad"(%a, %z) {edge_padding_low = ` + huge + `, edge_padding_high = array<i64: 0>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}`},
		{"padding", `func.func @main(%a: tensor<4x4xf32>, %s: tensor<f32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.reduce_window"(%a, %s) <{window_dimensions = array<i64: 1, 1>, padding = dense<0> : tensor<1000000000000x2xi64>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %1 = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}`},
		{"dimension", `func.func @main(%a: tensor<2xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.concatenate"(%a, %a) {dimension = ` + huge + `} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}`},
		{"fft_length", `func.func @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "stablehlo.fft"(%a) {fft_type = #stablehlo<fft_type FFT>, fft_length = dense<4> : tensor<1000000000000xi64>} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}`},
		{"padding", `func.func @main(%x: tensor<1x4x1xf32>, %w: tensor<2x1x1xf32>) -> tensor<1x3x1xf32> {
  %0 = "stablehlo.convolution"(%x, %w) {dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, padding = dense<0> : tensor<1000000000000x2xi64>, batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<2x1x1xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}`},
		{"window_strides", `func.func @main(%x: tensor<1x4x1xf32>, %w: tensor<2x1x1xf32>) -> tensor<1x3x1xf32> {
  %0 = "stablehlo.convolution"(%x, %w) {dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, window_strides = dense<1> : tensor<1000000000000xi64>, batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<2x1x1xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := stablehlo.Parse([]byte(c.src))
			require.NoError(t, err)
			var args []Value
			for _, a := range m.Funcs[0].ArgTypes() {
				args = append(args, NewTensor(a.(stablehlo.TensorType).Shape()))
			}
			_, err = runText(context.Background(), c.src, args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.name)
		})
	}
	// Within the bound, a splat list is expanded as before.
	got, err := denseInts(stablehlo.DenseElementsAttr{Type: stablehlo.Tensor(xla.Int64, 3, 2), Data: []byte{7, 0, 0, 0, 0, 0, 0, 0}, Splat: true})
	require.NoError(t, err)
	assert.Equal(t, []int64{7, 7, 7, 7, 7, 7}, got)
	_, err = denseInts(stablehlo.DenseElementsAttr{Type: stablehlo.Tensor(xla.Int8, maxIntAttr+1), Data: []byte{1}, Splat: true})
	assert.ErrorContains(t, err, "more elements than an integer list attribute holds")
}

// An error names the op's place in the Python source even when its
// location is a call-site chain kept as text (as JAX writes them): the
// innermost frame's file:line.
func TestErrorsNameCallSiteLocations(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mydialect.frob"(%a) : (tensor<2xf32>) -> tensor<2xf32> loc(#l)
  return %0 : tensor<2xf32>
}
#l = loc("jit(f)/frob"(callsite("layer"("/home/u/model.py":10:3) at "main"("/home/u/main.py":20:1))))
`))
	require.NoError(t, err)
	_, err = Compile(m, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mydialect.frob at /home/u/model.py:10 (line 2):")
}

// TestCompileNamesNestedModules: a module whose functions sit in a module
// inside it (or a file of modules one after another) is said as such, not
// only as a missing @main.
func TestCompileNamesNestedModules(t *testing.T) {
	const fn = "func.func @main() -> tensor<i32> {\n  %0 = stablehlo.constant dense<1> : tensor<i32>\n  return %0 : tensor<i32>\n}\n"
	m, err := stablehlo.Parse([]byte("module {\n  module @inner {\n" + fn + "  }\n}\n"))
	require.NoError(t, err)
	_, err = Compile(m, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "module has no function @main to run at its top level (it holds a module inside it")
	m, err = stablehlo.Parse([]byte(fn))
	require.NoError(t, err)
	_, err = Compile(m, "other")
	require.EqualError(t, err, "interpreter: module has no function @other to run")
}

// TestCompileRefusesComplexRemainder: the spec admits complex operands of
// remainder (Verify takes them) but leaves their semantics TBD, so the
// interpreter refuses them when it compiles, not when the op runs (found
// in review: Compile passed them and Run said the op was not defined).
func TestCompileRefusesComplexRemainder(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = stablehlo.remainder %a, %a : tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}`, "interpreter: @main: stablehlo.remainder (line 2): stablehlo.remainder is not defined for element type complex<f32>: the StableHLO spec admits complex operands but leaves their remainder undefined"},
		// In a reduction's body.
		{`func.func @main(%a: tensor<4xcomplex<f64>>, %z: tensor<complex<f64>>) -> tensor<complex<f64>> {
  %r = stablehlo.reduce(%a init: %z) across dimensions = [0] : (tensor<4xcomplex<f64>>, tensor<complex<f64>>) -> tensor<complex<f64>>
   reducer(%x: tensor<complex<f64>>, %y: tensor<complex<f64>>) {
    %m = stablehlo.remainder %x, %y : tensor<complex<f64>>
    stablehlo.return %m : tensor<complex<f64>>
  }
  return %r : tensor<complex<f64>>
}`, "stablehlo.remainder (line 4): stablehlo.remainder is not defined for element type complex<f64>"},
		{`func.func @main(%a: tensor<2xcomplex<f64>>, %b: tensor<complex<f64>>) -> tensor<2xcomplex<f64>> {
  %0 = "chlo.broadcast_remainder"(%a, %b) : (tensor<2xcomplex<f64>>, tensor<complex<f64>>) -> tensor<2xcomplex<f64>>
  return %0 : tensor<2xcomplex<f64>>
}`, "chlo.broadcast_remainder (line 2): chlo.broadcast_remainder is not defined for element type complex<f64>"},
	} {
		m, err := stablehlo.Parse([]byte(c.src))
		require.NoError(t, err)
		require.NoError(t, m.Verify(), "the spec admits complex remainder")
		_, err = Compile(m, "")
		assert.ErrorContains(t, err, c.want)
	}
	// Real remainders still compile.
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.remainder %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}`))
	require.NoError(t, err)
	_, err = Compile(m, "")
	assert.NoError(t, err)
}
