package pjrt

import (
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
// do when they need more memory than is available (allocHostWords's
// check), for the rest of the test.
func withHostLimit(t *testing.T, limit int64) {
	old := allocHostWords
	allocHostWords = func(n int64) ([]uint64, error) {
		if n*8 > limit {
			return nil, &interpreter.AllocError{Shape: xla.MakeShape(xla.Uint64, n), Bytes: n * 8, Available: limit}
		}
		return old(n)
	}
	t.Cleanup(func() { allocHostWords = old })
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
// "1 argument lists for 4 devices".
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
	assert.ErrorContains(t, err, "Run runs an executable on one device; this one runs on 4")
	assert.ErrorContains(t, err, "use Executable.Execute with one argument list per device")

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
