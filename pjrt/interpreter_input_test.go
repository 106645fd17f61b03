package pjrt

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

const addF32x4 = `func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}`

// TestHugeReplicaCountsAreErrors asks for device assignments and programs
// of more replicas x partitions than fit an int (once a wrapped product
// passed the device check and the process ran out of memory).
func TestHugeReplicaCountsAreErrors(t *testing.T) {
	c := openInterpreter(t, DeviceCount(2))
	for _, rp := range [][2]int{{1 << 32, 1 << 32}, {1 << 62, 4}, {3, 1}} {
		_, err := c.DefaultDeviceAssignment(rp[0], rp[1])
		require.ErrorIs(t, err, InvalidArgument, "%v", rp)
		o := xla.DefaultCompileOptions()
		o.NumReplicas, o.NumPartitions = rp[0], rp[1]
		_, err = c.Compile(MLIRText(addF32x4), &o)
		require.ErrorIs(t, err, InvalidArgument, "%v", rp)
	}
}

// TestBadBufferInputsAreErrors feeds buffer creation and reads inputs
// that once crashed the process: strides and shapes whose byte counts
// overflow, a buffer too large to allocate, nil options and nil buffers.
func TestBadBufferInputsAreErrors(t *testing.T) {
	c := openInterpreter(t)
	ctx := context.Background()
	_, err := c.BufferFromHost(make([]byte, 16), xla.MakeShape(xla.Float32, 3, 2), WithByteStrides(1<<62, 4))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reach past the 16 bytes of host data")

	_, err = c.BufferFromHost(nil, xla.MakeShape(xla.Float32, 1<<62, 4))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 2^63 bytes")
	_, err = c.CreateUninitializedBuffer(xla.MakeShape(xla.Float32, 1<<62, 4))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 2^63 bytes")

	_, err = c.CreateUninitializedBuffer(xla.MakeShape(xla.Float32, 1<<40))
	require.ErrorIs(t, err, ResourceExhausted)

	b, err := BufferFrom(c, []float32{1}, []int64{1}, nil)
	require.NoError(t, err, "a nil option is ignored")
	got, err := ToSlice[float32](ctx, b)
	require.NoError(t, err)
	assert.Equal(t, []float32{1}, got)

	_, err = ToSlice[float32](ctx, nil)
	require.ErrorIs(t, err, InvalidArgument)
	_, err = ToScalar[float32](ctx, nil)
	require.ErrorIs(t, err, InvalidArgument)
	var nb *Buffer
	require.ErrorIs(t, nb.Await(ctx), InvalidArgument)
}
