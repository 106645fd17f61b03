package pjrt

import (
	"context"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/capi"
)

// Benchmarks against the conformance plugin. They measure the binding's
// own cost: the plugin does almost no work. Each halo benchmark has a
// baseline beside it (the same C function called with bare purego, or a
// plain copy) so docs/benchmarks.md can report ratios from one run.

func benchClient(b *testing.B) (*conformance, *Client) {
	c := openConformance(b)
	// No artificial delay: measure the binding, not the plugin's sleep.
	cl, err := Open(c.path, WithOption("event_delay_us", int64(0)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	return c, cl
}

// benchBuffer is an f32[4] buffer on a benchClient.
func benchBuffer(b *testing.B) *Buffer {
	_, cl := benchClient(b)
	buf, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4}, WaitForTransfer())
	if err != nil {
		b.Fatal(err)
	}
	return buf
}

// BenchmarkCallOnDeviceSize is one PJRT call through halo's call helper
// (pinning, error check) plus the public wrapper's closed checks.
func BenchmarkCallOnDeviceSize(b *testing.B) {
	buf := benchBuffer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := buf.OnDeviceSize(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallOnDeviceSizeRawPurego is the same C call with bare purego
// and a reused args struct: the floor the binding is compared against.
func BenchmarkCallOnDeviceSizeRawPurego(b *testing.B) {
	buf := benchBuffer(b)
	cb := buf.b.(*cBuffer)
	fn := cb.c.p.slots[capi.SlotPJRT_Buffer_OnDeviceSizeInBytes]
	args := &capi.PJRT_Buffer_OnDeviceSizeInBytes_Args{StructSize: capi.PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE, Buffer: cb.h}
	p := uintptr(unsafe.Pointer(args))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, _, _ := purego.SyscallN(fn, p); r != 0 {
			b.Fatal("error")
		}
	}
}

// BenchmarkBufferRoundTrip1MiB transfers 1 MiB to the device and back.
func BenchmarkBufferRoundTrip1MiB(b *testing.B) {
	_, cl := benchClient(b)
	data := make([]float32, 1<<18)
	out := make([]float32, len(data))
	ctx := context.Background()
	b.SetBytes(int64(len(data) * 4 * 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf, err := BufferFrom(cl, data, []int64{int64(len(data))})
		if err != nil {
			b.Fatal(err)
		}
		if err := buf.ToHost(ctx, asBytes(out)); err != nil {
			b.Fatal(err)
		}
		buf.Close()
	}
}

// BenchmarkMemcpyRoundTrip1MiB is two plain copies of the same data: the
// work the conformance plugin does for a round trip, without halo.
func BenchmarkMemcpyRoundTrip1MiB(b *testing.B) {
	data := make([]float32, 1<<18)
	mid := make([]float32, len(data))
	out := make([]float32, len(data))
	b.SetBytes(int64(len(data) * 4 * 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(mid, data)
		copy(out, mid)
	}
}

// BenchmarkExecuteDispatch is Execute of a 2-input program up to the
// return (dispatch only), then waiting for the output.
func BenchmarkExecuteDispatch(b *testing.B) {
	_, cl := benchClient(b)
	exe, err := cl.Compile(MLIRText(addProgram), nil)
	if err != nil {
		b.Fatal(err)
	}
	x, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4}, WaitForTransfer())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		outs, err := exe.Run(x, x)
		if err != nil {
			b.Fatal(err)
		}
		if err := outs[0].Await(ctx); err != nil {
			b.Fatal(err)
		}
		outs[0].Close()
	}
}

// BenchmarkToSliceSmall reads back 4 floats into a new slice (the memory
// check, the allocation and the copy); BenchmarkToHostSmall, the copy into
// a reused slice, is its floor.
func BenchmarkToSliceSmall(b *testing.B) {
	buf := benchBuffer(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ToSlice[float32](ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToHostSmall is BenchmarkToSliceSmall's copy into a reused
// slice.
func BenchmarkToHostSmall(b *testing.B) {
	buf := benchBuffer(b)
	ctx := context.Background()
	dst := make([]byte, 16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := buf.ToHost(ctx, dst); err != nil {
			b.Fatal(err)
		}
	}
}
