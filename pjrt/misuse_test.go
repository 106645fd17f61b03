package pjrt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// TestMisuseGivesErrors: misuse a Go user might commit returns an error
// naming the problem, or is harmless, never a panic (found in review).
func TestMisuseGivesErrors(t *testing.T) {
	t.Run("nil receivers", func(t *testing.T) {
		var c *Client
		var e *Executable
		var b *Buffer
		var x *ExecuteContext
		assert.NoError(t, c.Close())
		assert.NoError(t, e.Close(), "defer exe.Close() after a failed Compile")
		assert.NoError(t, x.Close())
		// Every closable type: defer x.Close() after a failed constructor.
		assert.NoError(t, (*UnloadedExecutable)(nil).Close())
		assert.NoError(t, (*AsyncTransfer)(nil).Close())
		assert.NoError(t, (*UserEvent)(nil).Close())
		assert.NoError(t, (*AsyncTrackingEvent)(nil).Close())
		assert.NoError(t, (*AliasFulfillment)(nil).Close())
		assert.NoError(t, (*Topology)(nil).Close())
		assert.Nil(t, c.Devices())
		assert.Nil(t, c.AddressableDevices())
		assert.Nil(t, c.Memories())
		assert.Zero(t, c.LiveBuffers())
		assert.Empty(t, c.PlatformName())
		assert.Equal(t, "client(nil)", c.String())
		_, err := c.Device(0)
		assert.ErrorIs(t, err, InvalidArgument)
		assert.Nil(t, e.AddressableDevices())
		assert.Equal(t, xla.Invalid, b.DType())
		assert.Nil(t, b.Dims())
		assert.Equal(t, xla.Shape{}, b.Shape())
		assert.Equal(t, "Buffer(nil)", b.String())
		assert.ErrorIs(t, x.AddFFIUserData(1, 0), InvalidArgument)
		// The rest of a nil client's, device's and event's methods
		// (found in review: they panicked).
		assert.Empty(t, c.PlatformVersion())
		assert.Zero(t, c.ProcessIndex())
		assert.Nil(t, c.Plugin())
		assert.ErrorIs(t, c.OnClose(func() {}), InvalidArgument)
		var d *Device
		assert.Equal(t, -1, d.ID())
		assert.Equal(t, "Device(nil)", d.String())
		assert.Empty(t, d.Kind())
		assert.Empty(t, d.Attributes())
		assert.False(t, d.IsAddressable())
		assert.Nil(t, d.Memories())
		assert.Nil(t, d.Client())
		_, err = d.DefaultMemory()
		assert.ErrorIs(t, err, InvalidArgument)
		_, err = d.MemoryStats()
		assert.ErrorIs(t, err, InvalidArgument)
		var ev *Event
		assert.ErrorIs(t, ev.Err(), InvalidArgument)
		assert.ErrorIs(t, ev.Await(context.Background()), InvalidArgument)
		<-ev.Done()
	})
	c := openInterpreter(t, DeviceCount(2))
	t.Run("zero strides over a huge shape", func(t *testing.T) {
		_, err := BufferFrom(c, []float32{7}, []int64{1 << 40, 1 << 20}, WithByteStrides(0, 0))
		assert.ErrorIs(t, err, ResourceExhausted)
	})
	t.Run("validation errors carry a code", func(t *testing.T) {
		_, err := BufferFrom(c, []float32{1}, []int64{-1})
		assert.ErrorIs(t, err, InvalidArgument)
		assert.ErrorContains(t, err, "negative")
		o := xla.DefaultCompileOptions()
		o.NumReplicas = 0
		_, err = c.Compile(MLIRText("func.func @main() -> () {\n  return\n}\n"), &o)
		assert.ErrorIs(t, err, InvalidArgument)
		_, err = c.DeserializeAndLoad([]byte("x"), &o)
		assert.ErrorIs(t, err, InvalidArgument, "DeserializeAndLoad")
		// Every call that takes a shape checks it so.
		bad := xla.MakeShape(xla.Float32, -1)
		_, err = c.CreateUninitializedBuffer(bad)
		assert.ErrorIs(t, err, InvalidArgument, "CreateUninitializedBuffer")
		_, err = c.CreateErrorBuffer(bad, Internal)
		assert.ErrorIs(t, err, InvalidArgument, "CreateErrorBuffer")
		_, _, err = c.CreateAliasBuffer(bad)
		assert.ErrorIs(t, err, InvalidArgument, "CreateAliasBuffer")
		_, err = openConformance(t).client(t).NewAsyncTransfer([]xla.Shape{bad})
		assert.ErrorIs(t, err, InvalidArgument, "NewAsyncTransfer")
		b, err := BufferFrom(c, []float32{1, 2}, []int64{2})
		require.NoError(t, err)
		defer b.Close()
		_, err = b.Bitcast(bad)
		assert.ErrorIs(t, err, InvalidArgument, "Bitcast")
		_, err = ToSlice[int32](ctxT(t), b)
		assert.ErrorIs(t, err, InvalidArgument, "ToSlice of the wrong type")
		assert.ErrorContains(t, err, "buffer holds f32, not int32")
		_, err = ToScalar[float32](ctxT(t), b)
		assert.ErrorIs(t, err, InvalidArgument, "ToScalar of a vector")
	})
	t.Run("uneven argument lists", func(t *testing.T) {
		o := xla.DefaultCompileOptions()
		o.NumReplicas = 2
		exe, err := c.Compile(MLIRText(`func.func @main(%x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %x, %y : tensor<f32>
  return %0 : tensor<f32>
}`), &o)
		require.NoError(t, err)
		defer exe.Close()
		devs := c.AddressableDevices()
		b0, err := ScalarBuffer(c, float32(1), OnDevice(devs[0]))
		require.NoError(t, err)
		b1, err := ScalarBuffer(c, float32(2), OnDevice(devs[1]))
		require.NoError(t, err)
		_, err = exe.Execute([][]*Buffer{{b0}, {b1, b1}}, ExecuteOptions{NonDonatable: []int{1}})
		assert.ErrorIs(t, err, InvalidArgument)
		assert.ErrorContains(t, err, "device 1 has 2 arguments, device 0 has 1")
	})
	// A device with a memory of another device: refused on every backend
	// and for every call that places a buffer (a C plugin is passed only
	// the memory, so the device was silently dropped).
	t.Run("a device and another device's memory", func(t *testing.T) {
		shape := xla.MakeShape(xla.Float32, 4)
		for name, cl := range map[string]*Client{"interpreter": c, "conformance": openConformance(t).client(t)} {
			devs := cl.AddressableDevices()
			require.GreaterOrEqual(t, len(devs), 2, name)
			m0, err := devs[0].DefaultMemory()
			require.NoError(t, err)
			where := []BufferOption{OnDevice(devs[1]), InMemory(m0)}
			_, err = cl.BufferFromHost(make([]byte, 16), shape, append(where, WaitForTransfer())...)
			assert.ErrorIs(t, err, InvalidArgument, name)
			assert.ErrorContains(t, err, "is not attached to device 1", name)
			_, err = cl.CreateErrorBuffer(shape, Internal, where...)
			assert.ErrorIs(t, err, InvalidArgument, name)
			if name == "conformance" { // the interpreter has no async transfers
				_, err = cl.NewAsyncTransfer([]xla.Shape{shape}, where...)
				assert.ErrorIs(t, err, InvalidArgument, name)
			}
			// Together with its own memory the device is fine.
			m1, err := devs[1].DefaultMemory()
			require.NoError(t, err)
			b, err := cl.BufferFromHost(make([]byte, 16), shape, OnDevice(devs[1]), InMemory(m1), WaitForTransfer())
			require.NoError(t, err, name)
			d, err := b.Device()
			require.NoError(t, err)
			assert.Equal(t, devs[1].ID(), d.ID(), name)
			b.Close()
		}
	})
}

// TestFFIHandlerCodeOnInterpreter: an FFI handler's error fails the
// execution with the error's code on the built-in interpreter too (it was
// always Internal; found in review).
func TestFFIHandlerCodeOnInterpreter(t *testing.T) {
	c := openInterpreter(t)
	for _, tc := range []struct {
		target string
		err    error
		want   Code
	}{
		{"halo_test_code_notfound", NotFound, NotFound},
		{"halo_test_code_exists", &Error{Code: AlreadyExists, Msg: "twice"}, AlreadyExists},
		{"halo_test_code_plain", errors.New("plain"), Internal},
	} {
		require.NoError(t, c.Plugin().RegisterFFIHandler(tc.target, "Host", func(*FFICallFrame) error { return tc.err }, 0))
		exe, err := c.Compile(MLIRText(fmt.Sprintf(`func.func @main(%%x: tensor<f32>) -> tensor<f32> {
  %%0 = stablehlo.custom_call @%s(%%x) {api_version = 4 : i32, backend_config = {%s = %d : i64}} : (tensor<f32>) -> tensor<f32>
  return %%0 : tensor<f32>
}`, tc.target, FFICallbackAttr, FFICallbackID(tc.target))), nil)
		require.NoError(t, err)
		x, err := ScalarBuffer(c, float32(1))
		require.NoError(t, err)
		outs, err := exe.Run(x)
		if err == nil {
			_, err = ToSlice[float32](context.Background(), outs[0])
		}
		var pe *Error
		require.ErrorAs(t, err, &pe, tc.target)
		assert.Equal(t, tc.want, pe.Code, "%s: %v", tc.target, err)
		exe.Close()
	}
}

// TestClosedClientDevice: a device asked for after Close, and its default
// memory, report ErrClosed like every other call (they came from a cache;
// found in review).
func TestClosedClientDevice(t *testing.T) {
	c, err := Open("interpreter")
	require.NoError(t, err)
	d, err := c.Device(0)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = c.Device(0)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = d.DefaultMemory()
	assert.ErrorIs(t, err, ErrClosed)
}

// A backend that reports no device for a buffer: Buffer.Device is an
// error naming the call, not a nil *Device (whose methods panic; a C
// plugin's failing PJRT_Buffer_Device gave that; found in review).
func TestBufferWithoutDeviceIsAnError(t *testing.T) {
	registerNoDevice.Do(func() {
		Register("halo-test-no-device", func() (backend.Plugin, error) {
			p, err := interpreter.OpenBackend()
			return noDevicePlugin{p}, err
		})
	})
	c, err := Open("halo-test-no-device")
	require.NoError(t, err)
	defer c.Close()
	b, err := BufferFrom(c, []float32{1}, []int64{1})
	require.NoError(t, err)
	defer b.Close()
	d, err := b.Device()
	assert.Nil(t, d)
	assert.ErrorIs(t, err, Internal)
	assert.ErrorContains(t, err, "PJRT_Buffer_Device")
}

var registerNoDevice sync.Once

type noDevicePlugin struct{ backend.Plugin }

func (p noDevicePlugin) NewClient(o []backend.NamedValue) (backend.Client, error) {
	c, err := p.Plugin.NewClient(o)
	return noDeviceClient{c}, err
}

type noDeviceClient struct{ backend.Client }

func (c noDeviceClient) BufferFromHost(h backend.HostBuffer, d backend.Device, m backend.Memory) (backend.Buffer, backend.Event, error) {
	b, done, err := c.Client.BufferFromHost(h, d, m)
	if err != nil {
		return nil, nil, err
	}
	return noDeviceBuffer{b}, done, nil
}

type noDeviceBuffer struct{ backend.Buffer }

func (noDeviceBuffer) Device() backend.Device { return nil }
