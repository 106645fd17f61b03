package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func TestCompileRejectsUnknownOps(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mydialect.frob"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`))
	require.NoError(t, err)
	_, err = Compile(m, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mydialect.frob is not supported")
	assert.Contains(t, err.Error(), "@main")
}

func TestIdentityFunctionRuns(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<2xf32>, %b: tensor<i32>) -> (tensor<i32>, tensor<2xf32>) {
  return %b, %a : tensor<i32>, tensor<2xf32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	a := NewTensor(xla.MakeShape(xla.Float32, 2))
	a.Data.([]float32)[1] = 5
	b := NewTensor(xla.MakeShape(xla.Int32))
	out, err := p.Run(context.Background(), Device{}, []Value{a, b})
	require.NoError(t, err)
	assert.Same(t, b, out[0])
	assert.Same(t, a, out[1])
	_, err = p.Run(context.Background(), Device{}, []Value{b, a})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "argument 0")
}

func TestHostRoundTripEveryDType(t *testing.T) {
	for _, dt := range xla.AllDTypes() {
		if StorageOf(dt) == StorageInvalid {
			continue
		}
		shape := xla.MakeShape(dt, 3)
		data := NewTensor(shape).Host()
		tt, err := TensorFromHost(shape, data)
		require.NoError(t, err, dt)
		assert.Equal(t, data, tt.Host(), dt)
	}
}

func TestWrap(t *testing.T) {
	assert.Equal(t, int64(-8), WrapInt(xla.Int4, 8))
	assert.Equal(t, int64(7), WrapInt(xla.Int4, -9))
	assert.Equal(t, int64(-2), WrapInt(xla.Int2, 2))
	assert.Equal(t, uint64(0), WrapUint(xla.Uint4, 16))
	assert.Equal(t, uint64(3), WrapUint(xla.Uint2, 7))
}

func TestNarrowFloats(t *testing.T) {
	// f16: 1.0 is 0x3c00, 65504 is the max, 65520 rounds to inf.
	assert.Equal(t, uint32(0x3c00), EncodeNarrow(xla.Float16, 1))
	assert.Equal(t, float32(65504), DecodeNarrow(xla.Float16, 0x7bff))
	assert.Equal(t, uint32(0x7c00), EncodeNarrow(xla.Float16, 65520))
	// bf16 rounds to nearest even.
	assert.Equal(t, uint32(0x3f80), EncodeNarrow(xla.BFloat16, 1.00390625))
	// f8e4m3fn: max 448, no infinity: overflow is NaN (0x7f).
	assert.Equal(t, float32(448), DecodeNarrow(xla.Float8E4M3FN, 0x7e))
	assert.Equal(t, uint32(0x7f), EncodeNarrow(xla.Float8E4M3FN, 1000))
}
