package pjrt

import (
	"context"
	"testing"
	"time"

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
	assert.Contains(t, err.Error(), "reach past byte 2^63")

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

// TestClosedUserEventCompletes closes an interpreter user event before
// setting it: waiters see Cancelled instead of waiting forever.
func TestClosedUserEventCompletes(t *testing.T) {
	c := openInterpreter(t)
	u, err := c.Plugin().NewUserEvent()
	require.NoError(t, err)
	require.NoError(t, u.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.ErrorIs(t, u.Event().Await(ctx), Cancelled)
}

// TestAliasFulfillmentsAreForgotten checks that closing (or fulfilling)
// alias buffers lets the client forget their fulfillments: the client's
// tracked objects do not grow round after round.
func TestAliasFulfillmentsAreForgotten(t *testing.T) {
	c := openInterpreter(t)
	tracked := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.live)
	}
	shape := xla.MakeShape(xla.Float32, 2)
	src, err := BufferFrom(c, []float32{1, 2}, []int64{2})
	require.NoError(t, err)
	wrong, err := BufferFrom(c, []float32{1, 2, 3}, []int64{3})
	require.NoError(t, err)
	before := tracked()
	for range 50 {
		b, f, err := c.CreateAliasBuffer(shape)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, b.Close())

		b, f, err = c.CreateAliasBuffer(shape)
		require.NoError(t, err)
		require.Error(t, f.Fulfill(wrong), "a source of another shape")
		require.NoError(t, f.Close())
		require.NoError(t, b.Close())

		b, f, err = c.CreateAliasBuffer(shape)
		require.NoError(t, err)
		require.NoError(t, f.Fulfill(src))
		require.NoError(t, f.Close())
		require.NoError(t, b.Close())
	}
	assert.Equal(t, before, tracked())
}

// TestExecuteChecksArguments gives Execute arguments of the wrong shape,
// dtype or device, and memories of another device: each is an
// InvalidArgument at once (the shape once failed later as Internal, the
// device went unchecked).
func TestExecuteChecksArguments(t *testing.T) {
	c := openInterpreter(t, DeviceCount(2))
	exe, err := c.Compile(MLIRText(addF32x4), nil)
	require.NoError(t, err)
	d0, err := c.Device(0)
	require.NoError(t, err)
	d1, err := c.Device(1)
	require.NoError(t, err)
	x, err := BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4})
	require.NoError(t, err)
	i32, err := BufferFrom(c, []int32{1, 2, 3, 4}, []int64{4})
	require.NoError(t, err)
	m22, err := BufferFrom(c, []float32{1, 2, 3, 4}, []int64{2, 2})
	require.NoError(t, err)
	x1, err := x.CopyToDevice(d1)
	require.NoError(t, err)
	for _, c := range []struct {
		args [][]*Buffer
		opts ExecuteOptions
		want string
	}{
		{[][]*Buffer{{x, i32}}, ExecuteOptions{}, "argument 1 of device 0 is tensor<4xi32>, @main takes tensor<4xf32>"},
		{[][]*Buffer{{m22, x}}, ExecuteOptions{}, "argument 0 of device 0 is tensor<2x2xf32>, @main takes tensor<4xf32>"},
		{[][]*Buffer{{x, x1}}, ExecuteOptions{}, "argument 1 for device 0 is on device 1"},
		{[][]*Buffer{{x, x}}, ExecuteOptions{Device: d1}, "argument 0 for device 1 is on device 0"},
	} {
		_, err := exe.Execute(c.args, c.opts)
		require.ErrorIs(t, err, InvalidArgument, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
	m0, err := d0.DefaultMemory()
	require.NoError(t, err)
	_, err = BufferFrom(c, []float32{1}, []int64{1}, OnDevice(d1), InMemory(m0))
	require.ErrorIs(t, err, InvalidArgument)
	assert.Contains(t, err.Error(), "is not attached to device 1")
}

// TestTupleParameterIsACompileError: a main taking a tuple could never be
// called (no buffer is a tuple); compiling it says so.
func TestTupleParameterIsACompileError(t *testing.T) {
	c := openInterpreter(t)
	_, err := c.Compile(MLIRText(`func.func @main(%t: tuple<tensor<f32>, tensor<i32>>) -> tensor<f32> {
  %0 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
  return %0 : tensor<f32>
}`), nil)
	require.ErrorIs(t, err, Unimplemented)
	assert.Contains(t, err.Error(), "parameter 0 of @main is tuple<tensor<f32>, tensor<i32>>: a buffer cannot be a tuple")
}

// Calls through a nil client or executable are errors, not panics.
func TestNilClientAndExecutable(t *testing.T) {
	var c *Client
	_, err := BufferFrom(c, []float32{1}, []int64{1})
	assert.ErrorContains(t, err, "client is nil")
	_, err = c.Compile(MLIRText("module {}"), nil)
	assert.ErrorContains(t, err, "client is nil")
	var e *Executable
	_, err = e.Run()
	assert.ErrorContains(t, err, "executable is nil")
	_, err = e.Execute(nil, ExecuteOptions{})
	assert.ErrorContains(t, err, "executable is nil")
}

// An argument of the wrong kind for a token or a dynamic parameter is the
// caller's error too: Execute refuses it, as one of the wrong static
// shape, instead of starting a run that failed later with INTERNAL
// (found in review).
func TestExecuteChecksTokenAndDynamicArguments(t *testing.T) {
	c := openInterpreter(t)
	f32x2, err := BufferFrom(c, []float32{1, 2}, []int64{2})
	require.NoError(t, err)
	i32x3, err := BufferFrom(c, []int32{1, 2, 3}, []int64{3})
	require.NoError(t, err)
	f32x2x1, err := BufferFrom(c, []float32{1, 2}, []int64{2, 1})
	require.NoError(t, err)
	f32x3, err := BufferFrom(c, []float32{1, 2, 3}, []int64{3})
	require.NoError(t, err)
	token := MLIRText(`func.func @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
  return %t, %x : !stablehlo.token, tensor<2xf32>
}`)
	dynamic := MLIRText(`func.func @main(%x: tensor<?xf32>) -> tensor<2xf32> {
  %0 = stablehlo.slice %x [0:2] : (tensor<?xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`)
	for _, tc := range []struct {
		prog Program
		args []*Buffer
		want string
	}{
		{token, []*Buffer{f32x2, f32x2}, "argument 0 of device 0 is tensor<2xf32>, @main takes !stablehlo.token"},
		{dynamic, []*Buffer{i32x3}, "argument 0 of device 0 is tensor<3xi32>, @main takes tensor<?xf32>"},
		{dynamic, []*Buffer{f32x2x1}, "is tensor<2x1xf32>, @main takes tensor<?xf32>"},
	} {
		exe, err := c.Compile(tc.prog, nil)
		require.NoError(t, err)
		_, err = exe.Run(tc.args...)
		assert.ErrorIs(t, err, InvalidArgument, tc.want)
		assert.ErrorContains(t, err, tc.want)
		exe.Close()
	}
	exe, err := c.Compile(dynamic, nil)
	require.NoError(t, err)
	defer exe.Close()
	out, err := exe.Run(f32x3)
	require.NoError(t, err, "any length for the ? dim")
	got, err := ToSlice[float32](ctxT(t), out[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, got)
}
