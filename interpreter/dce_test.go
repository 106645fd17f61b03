package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// profiledCalls runs src's main with args and returns how many times each
// op ran.
func profiledCalls(t *testing.T, src string, args ...Value) (map[string]int64, []Value) {
	t.Helper()
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	var prof Profile
	out, err := p.Run(WithProfile(context.Background(), &prof), Device{}, args)
	require.NoError(t, err)
	calls := map[string]int64{}
	for _, o := range prof.Ops() {
		calls[o.Op] = o.Calls
	}
	return calls, out
}

func TestOpsNothingReadsDoNotRun(t *testing.T) {
	// %e and the chain %n -> %m -> %d (a dot, a multiply, an if whose
	// branches only compute) are read by nothing: none of them runs.
	calls, out := profiledCalls(t, `func.func @main(%x: tensor<4x4xf32>, %c: tensor<i1>) -> tensor<4x4xf32> {
  %d = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = stablehlo.multiply %d, %x : tensor<4x4xf32>
  %n = "stablehlo.if"(%c) ({
    %s = stablehlo.subtract %m, %x : tensor<4x4xf32>
    stablehlo.return %s : tensor<4x4xf32>
  }, {
    stablehlo.return %x : tensor<4x4xf32>
  }) : (tensor<i1>) -> tensor<4x4xf32>
  %e = stablehlo.exponential %x : tensor<4x4xf32>
  %a = stablehlo.add %x, %x : tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}`, f32Tensor(make([]float32, 16), 4, 4), shpT(xla.Bool, nil, 1))
	assert.Equal(t, map[string]int64{"stablehlo.add": 1}, calls)
	require.Len(t, out, 1)
}

func TestShapeOpsNothingReadsDoNotRun(t *testing.T) {
	// Ops whose result shape is part of the op (checked against their
	// operand, not inferred from it): a broadcast read only by an if that
	// nothing reads (pallas's unused accumulator reset), a reshape, a
	// convert and an iota.
	calls, _ := profiledCalls(t, `func.func @main(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
  %n = "stablehlo.if"(%c) ({
    stablehlo.return %b : tensor<64x64xf32>
  }, {
    %b2 = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<4xf32>) -> tensor<1024x4xf32>
    %r = stablehlo.reshape %b2 : (tensor<1024x4xf32>) -> tensor<64x64xf32>
    stablehlo.return %r : tensor<64x64xf32>
  }) : (tensor<i1>) -> tensor<64x64xf32>
  %v = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xi32>
  %i = stablehlo.iota dim = 0 : tensor<4xi32>
  %a = stablehlo.add %x, %x : tensor<4xf32>
  return %a : tensor<4xf32>
}`, f32Tensor(make([]float32, 4), 4), shpT(xla.Bool, nil, 1))
	assert.Equal(t, map[string]int64{"stablehlo.add": 1}, calls)
}

func TestOpsWithEffectsRunWhenNothingReadsThem(t *testing.T) {
	ran := 0
	RegisterCustomCall("halo_test.count", func(c *CustomCall) ([]*Tensor, error) {
		ran++
		return []*Tensor{NewTensor(xla.MakeShape(xla.Float32))}, nil
	})
	defer RegisterCustomCall("halo_test.count", nil)
	// A custom call whose result nothing reads, the same inside an if,
	// and random numbers from the run's state: all run.
	calls, _ := profiledCalls(t, `func.func @main(%x: tensor<f32>, %c: tensor<i1>) -> tensor<f32> {
  %k = stablehlo.custom_call @halo_test.count(%x) : (tensor<f32>) -> tensor<f32>
  %n = "stablehlo.if"(%c) ({
    %k2 = stablehlo.custom_call @halo_test.count(%x) : (tensor<f32>) -> tensor<f32>
    stablehlo.return %k2 : tensor<f32>
  }, {
    stablehlo.return %x : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<1.0> : tensor<f32>
  %shape = stablehlo.constant dense<[2]> : tensor<1xi64>
  %r = stablehlo.rng %lo, %hi, %shape, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<2xf32>
  return %x : tensor<f32>
}`, shpT(xla.Float32, nil, 2), shpT(xla.Bool, nil, 1))
	assert.Equal(t, 2, ran, "both custom calls ran")
	assert.Equal(t, int64(1), calls["stablehlo.if"])
	assert.Equal(t, int64(1), calls["stablehlo.rng"])
}

func TestMalformedOpsNothingReadsStillReportTheirError(t *testing.T) {
	// Each op is malformed and read by nothing: it runs anyway, and fails.
	for _, c := range []struct{ op, body string }{
		// operands that differ in shape
		{"stablehlo.add", `%d = stablehlo.add %x, %y : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>`},
		// an operand that cannot become the result
		{"stablehlo.broadcast_in_dim", `%b = stablehlo.broadcast_in_dim %y, dims = [0] : (tensor<3xf32>) -> tensor<4xf32>`},
		// booleans, which have no order to count in
		{"stablehlo.iota", `%i = stablehlo.iota dim = 0 : tensor<3xi1>`},
	} {
		m, err := stablehlo.Parse([]byte(`func.func @main(%x: tensor<4xf32>, %y: tensor<3xf32>) -> tensor<4xf32> {
  ` + c.body + `
  return %x : tensor<4xf32>
}`))
		require.NoError(t, err, c.op)
		p, err := Compile(m, "")
		require.NoError(t, err, c.op)
		_, err = p.Run(context.Background(), Device{}, []Value{NewTensor(xla.MakeShape(xla.Float32, 4)), NewTensor(xla.MakeShape(xla.Float32, 3))})
		require.Error(t, err, c.op)
		assert.Contains(t, err.Error(), c.op)
	}
}
