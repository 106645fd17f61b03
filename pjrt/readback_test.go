package pjrt

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// BytesPrefix reads back only the bytes asked for where the plugin copies
// raw bytes and its buffers are in host form (the conformance plugin's
// are): with host copies limited to less than the buffer, the prefix
// still reads, the whole buffer does not.
func TestBytesPrefixReadsOnlyThePrefix(t *testing.T) {
	withHostLimit(t, 1024)
	cl := openConformance(t).client(t)
	ctx := ctxT(t)
	vals := make([]float32, 1000)
	for i := range vals {
		vals[i] = float32(i) + 0.5
	}
	b, err := BufferFrom(cl, vals, []int64{10, 100}, WaitForTransfer())
	require.NoError(t, err)

	got, err := b.BytesPrefix(ctx, 17*4)
	require.NoError(t, err)
	assert.Equal(t, asBytes(vals[:17]), got)
	got, err = b.BytesPrefix(ctx, 0)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = b.BytesPrefix(ctx, -1)
	assert.ErrorIs(t, err, InvalidArgument)
	assert.ErrorContains(t, err, "negative length -1")

	// Asking for as much as the buffer holds, or more, is Bytes: the
	// whole copy, over the limit here.
	for _, n := range []int64{4000, 1 << 20} {
		_, err = b.BytesPrefix(ctx, n)
		assert.ErrorIs(t, err, ResourceExhausted, n)
	}
	small, err := BufferFrom(cl, vals[:8], []int64{8}, WaitForTransfer())
	require.NoError(t, err)
	got, err = small.BytesPrefix(ctx, 1000)
	require.NoError(t, err)
	assert.Equal(t, asBytes(vals[:8]), got)
}

// Where the backend has no raw copies (the interpreter), BytesPrefix
// copies the whole buffer and returns the prefix, also for sub-byte types
// (one byte per element on the host).
func TestBytesPrefixWithoutRawCopies(t *testing.T) {
	c := openInterpreter(t)
	ctx := ctxT(t)
	vals := []float32{1, 2, 3, 4, 5, 6}
	b, err := BufferFrom(c, vals, []int64{2, 3})
	require.NoError(t, err)
	_, err = b.CopyRawToHost(make([]byte, 4), 0)
	require.ErrorIs(t, err, Unimplemented, "the interpreter has no raw copies (else this test tests nothing)")
	got, err := b.BytesPrefix(ctx, 8)
	require.NoError(t, err)
	assert.Equal(t, asBytes(vals[:2]), got)
	assert.Len(t, got, 8)
	assert.Equal(t, 8, cap(got), "the prefix does not keep the whole copy")

	i4, err := c.BufferFromHost([]byte{0xff, 7, 0xf8, 1}, xla.MakeShape(xla.Int4, 4)) // -1 7 -8 1
	require.NoError(t, err)
	got, err = i4.BytesPrefix(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xff, 7, 0xf8}, got)
}

// withHostLimit makes host copies of more than limit bytes fail as they
// do when they need more memory than is available (checkHostAlloc's
// check), for the rest of the test.
func withHostLimit(t *testing.T, limit int64) {
	old := checkHostAlloc
	checkHostAlloc = func(shape xla.Shape, n int64) error {
		if n > limit {
			return &interpreter.AllocError{Shape: shape.Clone(), Bytes: n, Available: limit}
		}
		return old(shape, n)
	}
	t.Cleanup(func() { checkHostAlloc = old })
}

// A host copy that needs more memory than is available is a
// RESOURCE_EXHAUSTED error naming the buffer, from Bytes, ToSlice and
// BytesPrefix when it copies the whole buffer; a raw copy of the prefix
// needs no room for the whole.
func TestHostCopyLargerThanMemoryIsAnError(t *testing.T) {
	withHostLimit(t, 1024)
	ctx := ctxT(t)
	c := openInterpreter(t)
	big, err := BufferFrom(c, make([]float32, 1000), []int64{1000})
	require.NoError(t, err)
	for name, read := range map[string]func() error{
		"Bytes":       func() error { _, err := big.Bytes(ctx); return err },
		"ToSlice":     func() error { _, err := ToSlice[float32](ctx, big); return err },
		"BytesPrefix": func() error { _, err := big.BytesPrefix(ctx, 64); return err },
	} {
		err := read()
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ResourceExhausted, name)
		assert.Contains(t, err.Error(), "copying to the host: tensor<1000xf32> needs 3.9 KiB, more than the 1.0 KiB of memory available", name)
		var ae *interpreter.AllocError
		require.True(t, errors.As(err, &ae), name)
		assert.Equal(t, int64(4000), ae.Bytes, name)
	}
	small, err := BufferFrom(c, []float32{1, 2, 3}, []int64{3})
	require.NoError(t, err)
	vals, err := ToSlice[float32](ctx, small)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, vals)

	conf := openConformance(t).client(t)
	raw, err := BufferFrom(conf, make([]float32, 1000), []int64{1000}, WaitForTransfer())
	require.NoError(t, err)
	got, err := raw.BytesPrefix(ctx, 64)
	require.NoError(t, err)
	assert.Len(t, got, 64)
	_, err = raw.Bytes(ctx)
	assert.ErrorIs(t, err, ResourceExhausted)
}

// vastBuffer is a backend buffer that says it holds 4 EiB (a plugin's
// word: no machine has the memory to copy it to).
type vastBuffer struct{ backend.Buffer }

func (vastBuffer) DType() xla.DType         { return xla.Float32 }
func (vastBuffer) Dims() []int64            { return []int64{1 << 60} }
func (vastBuffer) HostSize() (int64, error) { return 1 << 62, nil }

// The real check (the interpreter's, no limit set by the test) refuses a
// host copy larger than the memory available before allocating it.
func TestHostCopyIsCheckedAgainstTheMemoryAvailable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the memory available is read from /proc/meminfo")
	}
	c := openInterpreter(t)
	small, err := BufferFrom(c, []float32{1}, nil)
	require.NoError(t, err)
	b, err := c.newBuffer(vastBuffer{small.b})
	require.NoError(t, err)
	_, err = b.Bytes(ctxT(t))
	assert.ErrorIs(t, err, ResourceExhausted)
	assert.ErrorContains(t, err, "pjrt: Bytes: RESOURCE_EXHAUSTED: copying to the host: tensor<1152921504606846976xf32> needs 4.0 EiB, more than the ")
}

// ToSlice's destination, allocated as words, holds every element type.
func TestToSliceAfterTheCheckedAllocation(t *testing.T) {
	ctx := ctxT(t)
	c := openInterpreter(t)
	b, err := BufferFrom(c, []complex128{1 + 2i, 3 - 4i}, []int64{2})
	require.NoError(t, err)
	z, err := ToSlice[complex128](ctx, b)
	require.NoError(t, err)
	assert.Equal(t, []complex128{1 + 2i, 3 - 4i}, z)
	b, err = BufferFrom(c, []int8{-1, 2, 3}, []int64{3})
	require.NoError(t, err)
	i8, err := ToSlice[int8](ctx, b)
	require.NoError(t, err)
	assert.Equal(t, []int8{-1, 2, 3}, i8)
	b, err = BufferFrom(c, []float32{}, []int64{0})
	require.NoError(t, err)
	empty, err := ToSlice[float32](ctx, b)
	require.NoError(t, err)
	assert.NotNil(t, empty)
	assert.Empty(t, empty)
}

// Run on an executable for several devices says Run is for one device and
// how to run it (Execute, one argument list per device) rather than
// "1 argument lists for 4 devices"; Execute says it for one argument
// list, so Run asks the devices only once.
func TestRunOnSeveralDevicesPointsToExecute(t *testing.T) {
	c := openInterpreter(t, DeviceCount(4))
	exe, err := c.Compile(MLIRText(`module attributes {mhlo.num_replicas = 4 : i32} {
  func.func @main() -> tensor<ui32> {
    %0 = stablehlo.replica_id : tensor<ui32>
    return %0 : tensor<ui32>
  }
}`), nil)
	require.NoError(t, err)
	defer exe.Close()
	_, err = exe.Run()
	assert.ErrorIs(t, err, InvalidArgument)
	assert.ErrorContains(t, err, "Run, and Execute with one argument list, run an executable on one device; this one runs on 4 (its replicas x partitions)")
	assert.ErrorContains(t, err, "use Executable.Execute with one argument list per device")
	_, err = exe.Execute(make([][]*Buffer, 1), ExecuteOptions{})
	assert.ErrorContains(t, err, "this one runs on 4")
	_, err = exe.Execute(make([][]*Buffer, 3), ExecuteOptions{})
	assert.ErrorContains(t, err, "3 argument lists for 4 devices: pass one per device")

	x, err := exe.Execute(make([][]*Buffer, 4), ExecuteOptions{})
	require.NoError(t, err)
	for d, outs := range x.Outputs {
		id, err := ToScalar[uint32](ctxT(t), outs[0])
		require.NoError(t, err)
		assert.Equal(t, uint32(d), id)
	}
	var nilExe *Executable
	_, err = nilExe.Run()
	assert.ErrorContains(t, err, "executable is nil")
}

// portableExecutable is a backend executable without addressable devices
// of its own, as a portable executable reports: it runs on the device
// ExecuteOptions.Device names.
type portableExecutable struct{ backend.Executable }

func (portableExecutable) AddressableDevices() []backend.Device { return nil }

// Run, or Execute without a device, on an executable without addressable
// devices says to choose the device (ExecuteOptions.Device), not that it
// "runs on 0" devices and takes one argument list per device.
func TestRunWithoutAddressableDevicesPointsToTheDeviceOption(t *testing.T) {
	c := openInterpreter(t)
	inner, err := c.Compile(MLIRText(`func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = stablehlo.add %x, %x : tensor<2xi32>
  return %0 : tensor<2xi32>
}`), nil)
	require.NoError(t, err)
	exe, err := c.newExecutable(portableExecutable{inner.b})
	require.NoError(t, err)
	require.Empty(t, exe.AddressableDevices())
	x, err := BufferFrom(c, []int32{3, -4}, []int64{2})
	require.NoError(t, err)

	const want = "PJRT_LoadedExecutable_Execute: INVALID_ARGUMENT: the executable has no addressable devices (a portable executable, or one for devices of other processes): " +
		"name the device to run it on in ExecuteOptions.Device and pass Executable.Execute one argument list"
	_, err = exe.Run(x)
	assert.EqualError(t, err, "pjrt: "+want)
	assert.NotContains(t, err.Error(), "runs on 0")
	for _, lists := range [][][]*Buffer{nil, {{x}}, {{x}, {x}}} {
		_, err = exe.Execute(lists, ExecuteOptions{})
		assert.EqualError(t, err, "pjrt: "+want, "%d argument lists", len(lists))
	}

	run, err := exe.Execute([][]*Buffer{{x}}, ExecuteOptions{Device: c.AddressableDevices()[0]})
	require.NoError(t, err)
	got, err := ToSlice[int32](ctxT(t), run.Outputs[0][0])
	require.NoError(t, err)
	assert.Equal(t, []int32{6, -8}, got)
}

// StableHLO compiles a built module without printing it by hand; a module
// that cannot be printed is Compile's INVALID_ARGUMENT.
func TestStableHLOProgram(t *testing.T) {
	c := openInterpreter(t)
	b := stablehlo.NewBuilder("twice")
	f := b.NewFunction("main", stablehlo.Tensor(xla.Int32, 2))
	f.Return(f.Add(f.Arg(0), f.Arg(0)))
	mod, err := b.Build()
	require.NoError(t, err)
	p := StableHLO(mod)
	assert.Equal(t, "mlir", p.Format)
	assert.Equal(t, mod.String(), string(p.Code))
	exe, err := c.Compile(p, nil)
	require.NoError(t, err)
	defer exe.Close()
	x, err := BufferFrom(c, []int32{3, -4}, []int64{2})
	require.NoError(t, err)
	outs, err := exe.Run(x)
	require.NoError(t, err)
	got, err := ToSlice[int32](context.Background(), outs[0])
	require.NoError(t, err)
	assert.Equal(t, []int32{6, -8}, got)

	_, err = c.Compile(StableHLO(nil), nil)
	assert.ErrorIs(t, err, InvalidArgument)
	assert.ErrorContains(t, err, "PJRT_Client_Compile: INVALID_ARGUMENT: printing the module: stablehlo: Print: nil module")
}

// layoutBuffer is a backend buffer that copies raw bytes (what the
// interpreter's do not) and reports the given layout and device size:
// its raw bytes are the host data only in the host's form (hostForm);
// otherwise they are the device's own, here 0xee bytes, as a tiled or
// padded layout's would differ from the host data.
type layoutBuffer struct {
	backend.Buffer
	layout   backend.Layout
	extra    int64 // device bytes beyond the host size (padding)
	hostForm bool
	raw      *int // raw copies asked for
}

func (b layoutBuffer) OnDeviceSize() (int64, error) {
	n, err := b.Buffer.HostSize()
	return n + b.extra, err
}
func (b layoutBuffer) Layout() (backend.Layout, error) { return b.layout, nil }
func (layoutBuffer) UnpaddedDims() ([]int64, error) {
	return nil, backend.Errorf(int(Unimplemented), "PJRT_Buffer_UnpaddedDimensions", "not in this test")
}
func (layoutBuffer) DynamicDims() ([]int, error) {
	return nil, backend.Errorf(int(Unimplemented), "PJRT_Buffer_DynamicDimensionIndices", "not in this test")
}
func (layoutBuffer) IsOnCPU() (bool, error) { return false, nil }
func (layoutBuffer) SerializedLayout() ([]byte, error) {
	return nil, backend.Errorf(int(Unimplemented), "PJRT_Layouts_PJRT_Buffer_MemoryLayout", "not in this test")
}

func (b layoutBuffer) CopyRawToHost(dst []byte, offset int64) (backend.Event, error) {
	*b.raw++
	n, err := b.Buffer.HostSize()
	if err != nil {
		return nil, err
	}
	host := make([]byte, n)
	ev, err := b.Buffer.ToHost(host)
	if err != nil {
		return nil, err
	}
	<-ev.Done()
	if err := ev.Err(); err != nil {
		return nil, err
	}
	if !b.hostForm {
		host = bytes.Repeat([]byte{0xee}, int(n))
	}
	copy(dst, host[offset:])
	return firedEvent{}, nil
}

func (layoutBuffer) CopyRawToHostFuture(offset, size int64) (backend.Event, func([]byte, int, string) error, error) {
	return nil, nil, backend.Errorf(int(Unimplemented), "PJRT_Buffer_CopyRawToHostFuture", "not in this test")
}

// firedEvent is an event that has fired without error.
type firedEvent struct{}

func (firedEvent) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
func (firedEvent) Err() error { return nil }

// BytesPrefix copies raw bytes only where the device's bytes are the host
// data (a dense row-major layout without tiles or byte strides, as many
// bytes on the device as on the host); for any other layout it copies the
// whole buffer and returns the right bytes, not the device's.
func TestBytesPrefixRawOnlyInHostForm(t *testing.T) {
	c := openInterpreter(t)
	ctx := ctxT(t)
	vals := []float32{1, 2, 3, 4, 5, 6}
	want := asBytes(vals[:2])
	rowMajor := []int64{1, 0}
	for _, tc := range []struct {
		name     string
		layout   backend.Layout
		extra    int64
		hostForm bool
	}{
		{name: "host form", layout: backend.Layout{MinorToMajor: rowMajor}, hostForm: true},
		{name: "tiled", layout: backend.Layout{MinorToMajor: rowMajor, Tiles: [][]int64{{8, 128}}}},
		{name: "byte strides", layout: backend.Layout{ByteStrides: []int64{16, 4}}},
		{name: "column-major", layout: backend.Layout{MinorToMajor: []int64{0, 1}}},
		{name: "minor_to_major of another rank", layout: backend.Layout{MinorToMajor: []int64{0}}},
		{name: "padded", layout: backend.Layout{MinorToMajor: rowMajor}, extra: 8},
	} {
		src, err := BufferFrom(c, vals, []int64{2, 3}, WaitForTransfer())
		require.NoError(t, err)
		raw := 0
		b, err := c.newBuffer(&layoutBuffer{Buffer: src.b, layout: tc.layout, extra: tc.extra, hostForm: tc.hostForm, raw: &raw})
		require.NoError(t, err)
		got, err := b.BytesPrefix(ctx, 8)
		require.NoError(t, err, tc.name)
		assert.Equal(t, want, got, tc.name)
		if tc.hostForm {
			assert.Equal(t, 1, raw, "%s: the prefix is copied raw", tc.name)
		} else {
			assert.Zero(t, raw, "%s: no raw copy of bytes not in host form", tc.name)
		}
	}
}

// failedBuffer is a backend buffer whose computation failed.
type failedBuffer struct{ backend.Buffer }

func (failedBuffer) ReadyEvent() (backend.Event, error) { return failedEvent{}, nil }

// failedEvent is an event that has fired with an error.
type failedEvent struct{ firedEvent }

func (failedEvent) Err() error {
	return backend.Errorf(int(Internal), "PJRT_LoadedExecutable_Execute", "the computation failed")
}

// BytesPrefix of no bytes still waits for the buffer, and returns its
// error without a slice (nil, as with an error for any other length).
func TestBytesPrefixOfNothingReturnsTheBuffersError(t *testing.T) {
	c := openInterpreter(t)
	src, err := BufferFrom(c, []float32{1, 2}, []int64{2}, WaitForTransfer())
	require.NoError(t, err)
	b, err := c.newBuffer(failedBuffer{src.b})
	require.NoError(t, err)
	got, err := b.BytesPrefix(ctxT(t), 0)
	assert.ErrorContains(t, err, "the computation failed")
	assert.Nil(t, got)

	got, err = src.BytesPrefix(ctxT(t), 0)
	require.NoError(t, err)
	assert.NotNil(t, got)
	assert.Empty(t, got)
}

// TestHostCopiesTakeNilContext: ToHost, Bytes and BytesPrefix wait on a
// nil context as on context.Background, on a plugin that blocks in its
// own wait (ToHost called ctx.Done on nil and crashed, found in review)
// and on the interpreter.
func TestHostCopiesTakeNilContext(t *testing.T) {
	interp, err := Open("interpreter")
	require.NoError(t, err)
	t.Cleanup(func() { interp.Close() })
	for name, cl := range map[string]*Client{"conformance": openConformance(t).client(t), "interpreter": interp} {
		t.Run(name, func(t *testing.T) {
			b, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
			require.NoError(t, err)
			defer b.Close()
			dst := make([]byte, 16)
			require.NoError(t, b.ToHost(nil, dst))
			assert.Equal(t, []float32{1, 2, 3, 4}, asFloat32(dst))
			all, err := b.Bytes(nil)
			require.NoError(t, err)
			assert.Equal(t, dst, all)
			head, err := b.BytesPrefix(nil, 8)
			require.NoError(t, err)
			assert.Equal(t, dst[:8], head)
		})
	}
}
