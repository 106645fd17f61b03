package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func runNoArgs(t *testing.T, src string) []Value {
	t.Helper()
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	out, err := p.Run(context.Background(), Device{}, nil)
	require.NoError(t, err)
	return out
}

func TestChloScan(t *testing.T) {
	// Running product along dim 1, from the end, with the carry also
	// counting steps.
	out := runNoArgs(t, `func.func @main() -> (tensor<2x3xi32>, tensor<2xi32>, tensor<i32>) {
  %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %one = stablehlo.constant dense<1> : tensor<2xi32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = chlo.scan(%x) inits(%one, %zero) dimension=1 attributes {is_reverse = true} {
  ^bb0(%e: tensor<2xi32>, %acc: tensor<2xi32>, %n: tensor<i32>):
    %p = stablehlo.multiply %e, %acc : tensor<2xi32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %n1 = stablehlo.add %n, %c1 : tensor<i32>
    stablehlo.return %p, %p, %n1 : tensor<2xi32>, tensor<2xi32>, tensor<i32>
  } : (tensor<2x3xi32>, tensor<2xi32>, tensor<i32>) -> (tensor<2x3xi32>, tensor<2xi32>, tensor<i32>)
  return %r#0, %r#1, %r#2 : tensor<2x3xi32>, tensor<2xi32>, tensor<i32>
}`)
	assert.Equal(t, []int32{6, 6, 3, 120, 30, 6}, out[0].(*Tensor).Data.([]int32))
	assert.Equal(t, []int32{6, 120}, out[1].(*Tensor).Data.([]int32))
	assert.Equal(t, []int32{3}, out[2].(*Tensor).Data.([]int32))
}

func TestChloScanErrors(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%x: tensor<3xi32>, %i: tensor<i32>) -> (tensor<3xi32>, tensor<i32>) {
  %r:2 = "chlo.scan"(%x, %i) <{dimension = 0 : i64}> ({
  ^bb0(%e: tensor<i32>, %c: tensor<i32>):
    stablehlo.return %e, %c : tensor<i32>, tensor<i32>
  }) : (tensor<3xi32>, tensor<i32>) -> (tensor<3xi32>, tensor<i32>)
  return %r#0, %r#1 : tensor<3xi32>, tensor<i32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	_, err = p.Run(context.Background(), Device{}, []Value{NewTensor(xla.MakeShape(xla.Int32, 3)), NewTensor(xla.MakeShape(xla.Int32))})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "operandSegmentSizes")
}

func TestChloMulhi(t *testing.T) {
	out := runNoArgs(t, `func.func @main() -> (tensor<3xi8>, tensor<2xui8>, tensor<4xi64>, tensor<2xui64>, tensor<2xi4>) {
  %a = stablehlo.constant dense<[64, -64, -64]> : tensor<3xi8>
  %b = stablehlo.constant dense<[4, 4, -4]> : tensor<3xi8>
  %r0 = "chlo.mulhi"(%a, %b) : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  %c = stablehlo.constant dense<[240, 128]> : tensor<2xui8>
  %d = stablehlo.constant dense<[16, 2]> : tensor<2xui8>
  %r1 = "chlo.mulhi"(%c, %d) : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %e = stablehlo.constant dense<[4611686018427387904, -4611686018427387904, -1, -9223372036854775808]> : tensor<4xi64>
  %f = stablehlo.constant dense<[4, 4, -1, -9223372036854775808]> : tensor<4xi64>
  %r2 = "chlo.mulhi"(%e, %f) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %g = stablehlo.constant dense<[18446744073709551615, 4294967296]> : tensor<2xui64>
  %h = stablehlo.constant dense<[18446744073709551615, 4294967296]> : tensor<2xui64>
  %r3 = "chlo.mulhi"(%g, %h) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
  %i = stablehlo.constant dense<[7, -8]> : tensor<2xi4>
  %r4 = "chlo.mulhi"(%i, %i) : (tensor<2xi4>, tensor<2xi4>) -> tensor<2xi4>
  return %r0, %r1, %r2, %r3, %r4 : tensor<3xi8>, tensor<2xui8>, tensor<4xi64>, tensor<2xui64>, tensor<2xi4>
}`)
	assert.Equal(t, []int8{1, -1, 1}, out[0].(*Tensor).Data.([]int8))
	assert.Equal(t, []uint8{15, 1}, out[1].(*Tensor).Data.([]uint8))
	// 2^62*4 = 2^64 -> high word 1; -2^62*4 -> -1; (-1)(-1) = 1 -> 0;
	// (-2^63)^2 = 2^126 -> 2^62.
	assert.Equal(t, []int64{1, -1, 0, 1 << 62}, out[2].(*Tensor).Data.([]int64))
	assert.Equal(t, []uint64{18446744073709551614, 1}, out[3].(*Tensor).Data.([]uint64))
	// 7*7 = 49 = 0b0011_0001 -> 3; (-8)^2 = 64 -> 4.
	assert.Equal(t, []int8{3, 4}, out[4].(*Tensor).Data.([]int8))
}

// TestChloScanHugeOutput: a scan's outputs are allocated checked (a
// scan of no inputs takes its length from a declared output of 10^12
// elements: an error, not the process's end).
func TestChloScanHugeOutput(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main() -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = "chlo.scan"(%zero) <{dimension = 0 : i64, operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%n: tensor<i32>):
    stablehlo.return %n, %n : tensor<i32>, tensor<i32>
  }) : (tensor<i32>) -> (tensor<1000000000000xi32>, tensor<i32>)
  return %r#1 : tensor<i32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	_, err = p.Run(context.Background(), Device{}, nil)
	var ae *AllocError
	require.ErrorAs(t, err, &ae)
}
