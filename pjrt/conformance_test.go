package pjrt

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/dl"
	"github.com/halo-ml/halo/internal/testplugin"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// conformance gives tests access to the conformance plugin's own exported
// introspection functions (counters, live objects, recorded calls).
type conformance struct {
	t    testing.TB
	path string
	lib  uintptr
}

func openConformance(t testing.TB) *conformance {
	path := testplugin.Build(t)
	lib, err := dl.Open(path, false)
	require.NoError(t, err)
	return &conformance{t: t, path: path, lib: lib}
}

func (c *conformance) sym(name string) uintptr {
	s, err := dl.Sym(c.lib, name)
	require.NoError(c.t, err, "conformance plugin lacks %s", name)
	return s
}

func cstring(s string) *byte { b := append([]byte(s), 0); return &b[0] }

func (c *conformance) counter(name string) int64 {
	p := cstring(name)
	r, _, _ := purego.SyscallN(c.sym("conformance_counter"), uintptr(unsafe.Pointer(p)))
	runtime.KeepAlive(p)
	return int64(r)
}

func (c *conformance) live(kind string) int64 {
	p := cstring(kind)
	r, _, _ := purego.SyscallN(c.sym("conformance_live"), uintptr(unsafe.Pointer(p)))
	runtime.KeepAlive(p)
	return int64(r)
}

func (c *conformance) text(fn string) string {
	r, _, _ := purego.SyscallN(c.sym(fn))
	return goStringZ(r)
}

func (c *conformance) lastCompileOptions() []byte {
	var n uint64
	r, _, _ := purego.SyscallN(c.sym("conformance_last_compile_options"), uintptr(unsafe.Pointer(&n)))
	return []byte(goStringN(r, int(n)))
}

func (c *conformance) client(t testing.TB, opts ...Option) *Client {
	cl, err := Open(c.path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { cl.Close() })
	return cl
}

const addProgram = `// conformance: add f32[4] f32[4] -> f32[4]
module { func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32> } }`

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestLoadErrors(t *testing.T) {
	_, err := LoadPlugin("/nonexistent/dir/libpjrt_missing.so")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/dir/libpjrt_missing.so")

	_, err = LoadPlugin(testplugin.BuildNoGetAPI(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GetPjrtApi")

	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_PJRT_MAJOR", "1")
	_, err = LoadPlugin(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PJRT C API 1.")
	assert.Contains(t, err.Error(), "major version 0")

	_, err = LoadPlugin("no-such-short-name")
	require.Error(t, err)
}

func TestPluginVersionAndAttributes(t *testing.T) {
	c := openConformance(t)
	p, err := LoadPlugin(c.path)
	require.NoError(t, err)
	p2, err := LoadPlugin(c.path)
	require.NoError(t, err)
	assert.Same(t, p, p2, "a plugin is loaded once")
	assert.EqualValues(t, 1, c.counter("plugin_initialize"), "PJRT_Plugin_Initialize runs once")
	major, minor := p.Version()
	assert.Equal(t, 0, major)
	assert.Equal(t, 114, minor)
	attrs := p.Attributes()
	assert.Equal(t, int64(2), attrs["xla_version"])
	assert.Equal(t, []int64{1, 13, 0}, attrs["stablehlo_current_version"])
	assert.Equal(t, []int64{0, 9, 0}, attrs["stablehlo_minimum_version"])
	assert.Equal(t, "halo-conformance", attrs["conformance_name"])
	assert.Equal(t, float32(0.5), attrs["conformance_float"])
	assert.Equal(t, true, attrs["conformance_bool"])
}

func TestNewerMinorStillLoads(t *testing.T) {
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_PJRT_MINOR", "120")
	p, err := LoadPlugin(path)
	require.NoError(t, err)
	_, minor := p.Version()
	assert.Equal(t, 120, minor)
	cl, err := p.NewClient()
	require.NoError(t, err)
	require.NoError(t, cl.Close())
}

func TestOlderMinorMissingSlot(t *testing.T) {
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_PJRT_MINOR", "45")
	cl, err := Open(path)
	require.NoError(t, err)
	defer cl.Close()
	_, err = cl.NewExecuteContext() // PJRT_ExecuteContext_Create exists from minor 52
	require.Error(t, err)
	assert.ErrorIs(t, err, Unimplemented)
	assert.Contains(t, err.Error(), "PJRT_ExecuteContext_Create")
	assert.Contains(t, err.Error(), "0.45")
}

func TestClientDevicesMemories(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t, DeviceCount(3), MemoryFraction(0.5), Preallocate(false), VisibleDevices(0, 1), WithOption("name", "x"))
	assert.Equal(t, "device_count=int64:3;memory_fraction=float:0.5;preallocate=bool:false;visible_devices=int64list:0,1;name=string:x",
		c.text("conformance_last_client_options"))
	assert.Equal(t, "conformance", cl.PlatformName())
	assert.Equal(t, "conformance 0.114", cl.PlatformVersion())
	assert.Equal(t, 0, cl.ProcessIndex())
	devs := cl.AddressableDevices()
	require.Len(t, devs, 3)
	require.Len(t, cl.Devices(), 3)
	for i, d := range devs {
		assert.Equal(t, i, d.ID())
		assert.Equal(t, "conformance_device", d.Kind())
		assert.Equal(t, 100+i, d.LocalHardwareID())
		assert.True(t, d.IsAddressable())
		assert.Equal(t, int64(i+1), d.Attributes()["core_count"])
		mems := d.Memories()
		require.Len(t, mems, 2)
		def, err := d.DefaultMemory()
		require.NoError(t, err)
		assert.Equal(t, "device", def.Kind())
		kinds := []string{mems[0].Kind(), mems[1].Kind()}
		assert.ElementsMatch(t, []string{"device", "pinned_host"}, kinds)
		assert.Contains(t, def.Devices(), d)
	}
	assert.Len(t, cl.Memories(), 6)
	d1, err := cl.Device(1)
	require.NoError(t, err)
	assert.Same(t, devs[1], d1)
	_, err = cl.Device(42)
	assert.ErrorIs(t, err, NotFound)
	assign, err := cl.DefaultDeviceAssignment(2, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0}, {1}}, assign)

	_, err = Open(c.path, WithOption("fail_create", "boom"))
	require.Error(t, err)
	assert.ErrorIs(t, err, Internal)
	assert.Contains(t, err.Error(), "boom")
	_, err = Open(c.path, WithOption("bad", struct{}{}))
	require.Error(t, err)
}

func TestBufferRoundTripEveryDType(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	ctx := ctxT(t)
	for _, dt := range xla.AllDTypes() {
		if _, ok := BufferType(dt); !ok {
			continue
		}
		shape := xla.MakeShape(dt, 2, 3)
		data := make([]byte, shape.HostBytes())
		for i := range data {
			data[i] = byte(i*7 + 1)
		}
		for _, opt := range []BufferOption{nil, CopyDuringCall(), WaitForTransfer(), ZeroCopy()} {
			opts := []BufferOption{}
			if opt != nil {
				opts = append(opts, opt)
			}
			b, err := cl.BufferFromHost(data, shape, opts...)
			require.NoError(t, err, dt)
			assert.Equal(t, dt, b.DType())
			assert.Equal(t, []int64{2, 3}, b.Dims())
			got, err := b.Bytes(ctx)
			require.NoError(t, err, dt)
			assert.Equal(t, data, got, dt)
			n, err := b.OnDeviceSize()
			require.NoError(t, err)
			assert.Equal(t, shape.HostBytes(), n)
			require.NoError(t, b.Close())
		}
	}
}

func TestBufferGenericsAndStrides(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	ctx := ctxT(t)
	b, err := BufferFrom(cl, []float32{1, 2, 3, 4, 5, 6}, []int64{2, 3})
	require.NoError(t, err)
	got, err := ToSlice[float32](ctx, b)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, got)
	_, err = ToSlice[int32](ctx, b)
	assert.Error(t, err, "element type mismatch")

	s, err := ScalarBuffer(cl, int64(-7))
	require.NoError(t, err)
	v, err := ToScalar[int64](ctx, s)
	require.NoError(t, err)
	assert.Equal(t, int64(-7), v)

	h, err := BufferFrom(cl, []xla.BF16{0x3f80, 0x4000}, []int64{2})
	require.NoError(t, err)
	assert.Equal(t, xla.BFloat16, h.DType())
	bs, err := ToSlice[xla.BF16](ctx, h)
	require.NoError(t, err)
	assert.Equal(t, []xla.BF16{0x3f80, 0x4000}, bs)

	// Go's int and named types transfer as the element type of their
	// layout, and come back.
	type celsius float32
	ib, err := BufferFrom(cl, []int{-1, 1 << 40}, []int64{2})
	require.NoError(t, err)
	assert.Equal(t, xla.Int64, ib.DType())
	is, err := ToSlice[int](ctx, ib)
	require.NoError(t, err)
	assert.Equal(t, []int{-1, 1 << 40}, is)
	i64, err := ToSlice[int64](ctx, ib)
	require.NoError(t, err)
	assert.Equal(t, []int64{-1, 1 << 40}, i64)
	cb, err := BufferFrom(cl, []celsius{21.5}, nil)
	require.NoError(t, err)
	assert.Equal(t, xla.Float32, cb.DType())
	cv, err := ToScalar[celsius](ctx, cb)
	require.NoError(t, err)
	assert.Equal(t, celsius(21.5), cv)

	// Column-major 2x2 int32 data through byte strides.
	colMajor := []int32{1, 3, 2, 4}
	bb, err := cl.BufferFromHost(asBytes(colMajor), xla.MakeShape(xla.Int32, 2, 2), WithByteStrides(4, 8), WaitForTransfer())
	require.NoError(t, err)
	ints, err := ToSlice[int32](ctx, bb)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3, 4}, ints)

	_, err = cl.BufferFromHost(make([]byte, 3), xla.MakeShape(xla.Float32, 2))
	assert.ErrorIs(t, err, InvalidArgument)
	_, err = BufferFrom(cl, []float32{1}, []int64{-1})
	assert.Error(t, err)

	// A C plugin gets no length with strided data and reads as far as the
	// strides say: strides reaching past the data (or past 2^63, once a
	// crash) are refused before the call.
	four := asBytes([]float32{1, 2, 3, 4})
	_, err = cl.BufferFromHost(four[:4:4], xla.MakeShape(xla.Float32, 4), WithByteStrides(4), CopyDuringCall())
	assert.ErrorIs(t, err, InvalidArgument)
	assert.ErrorContains(t, err, "reach byte 16 of 4 bytes")
	_, err = cl.BufferFromHost(make([]byte, 8), xla.MakeShape(xla.Float32, 2), WithByteStrides(1<<40), CopyDuringCall())
	assert.ErrorContains(t, err, "reach byte")
	_, err = cl.BufferFromHost(make([]byte, 8), xla.MakeShape(xla.Float32, 2), WithByteStrides(-4), CopyDuringCall())
	assert.ErrorContains(t, err, "negative byte stride")
	_, err = cl.BufferFromHost(make([]byte, 16), xla.MakeShape(xla.Float32, 3, 2), WithByteStrides(1<<62, 4))
	assert.ErrorContains(t, err, "past byte 2^63")
	empty, err := cl.BufferFromHost(nil, xla.MakeShape(xla.Float32, 0, 4), WithByteStrides(16, 4))
	require.NoError(t, err, "no elements: no bytes needed")
	empty.Close()
}

func TestBufferCopiesAndMetadata(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t, DeviceCount(2))
	ctx := ctxT(t)
	devs := cl.AddressableDevices()
	b, err := BufferFrom(cl, []float64{1.5, -2.5}, []int64{2}, OnDevice(devs[1]))
	require.NoError(t, err)
	d, err := b.Device()
	require.NoError(t, err)
	assert.Same(t, devs[1], d)
	mem, err := b.Memory()
	require.NoError(t, err)
	assert.Equal(t, "device", mem.Kind())

	moved, err := b.CopyToDevice(devs[0])
	require.NoError(t, err)
	d0, err := moved.Device()
	require.NoError(t, err)
	assert.Same(t, devs[0], d0)
	vals, err := ToSlice[float64](ctx, moved)
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5, -2.5}, vals)

	var host *Memory
	for _, m := range devs[0].Memories() {
		if m.Kind() == "pinned_host" {
			host = m
		}
	}
	require.NotNil(t, host)
	inHost, err := moved.CopyToMemory(host)
	require.NoError(t, err)
	m2, err := inHost.Memory()
	require.NoError(t, err)
	assert.Same(t, host, m2)
	require.NoError(t, inHost.Await(ctx))

	require.NoError(t, b.Delete())
	assert.True(t, b.IsDeleted())
	_, err = b.Bytes(ctx)
	require.Error(t, err, "reading a deleted buffer")
	assert.ErrorIs(t, err, FailedPrecondition)
}

func TestUseAfterClose(t *testing.T) {
	c := openConformance(t)
	cl, err := Open(c.path)
	require.NoError(t, err)
	ctx := ctxT(t)
	b, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
	require.NoError(t, err)
	exe, err := cl.Compile(MLIRText(addProgram), nil)
	require.NoError(t, err)

	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close is idempotent")
	_, err = b.Bytes(ctx)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = exe.Run(b, b)
	assert.ErrorIs(t, err, ErrClosed)

	b2, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
	require.NoError(t, err)
	require.NoError(t, cl.Close())
	require.NoError(t, cl.Close())
	_, err = b2.Bytes(ctx)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = exe.Name()
	assert.ErrorIs(t, err, ErrClosed)
	_, err = BufferFrom(cl, []float32{1}, []int64{1})
	assert.ErrorIs(t, err, ErrClosed)
	_, err = cl.Compile(MLIRText(addProgram), nil)
	assert.ErrorIs(t, err, ErrClosed)
	assert.EqualValues(t, 0, c.live("buffer"), "client Close releases its buffers")
	assert.EqualValues(t, 0, c.live("loaded_executable"))
}

func TestCompileAndExecute(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	ctx := ctxT(t)
	opts := xla.DefaultCompileOptions()
	opts.EnvOptionOverrides = map[string]any{"xla_gpu_autotune_level": int64(0)}
	exe, err := cl.Compile(MLIRText(addProgram), &opts)
	require.NoError(t, err)
	got, err := xla.UnmarshalCompileOptions(c.lastCompileOptions())
	require.NoError(t, err)
	assert.Equal(t, 1, got.NumReplicas)
	assert.Equal(t, 1, got.NumPartitions)
	assert.Equal(t, -1, got.DeviceOrdinal)
	assert.Equal(t, int64(0), got.EnvOptionOverrides["xla_gpu_autotune_level"])

	name, err := exe.Name()
	require.NoError(t, err)
	assert.Equal(t, "conformance_add", name)
	outs, err := exe.Outputs()
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.True(t, outs[0].Shape.Equal(xla.MakeShape(xla.Float32, 4)), outs[0].Shape)
	assert.Equal(t, "device", outs[0].MemoryKind)
	r, err := exe.NumReplicas()
	require.NoError(t, err)
	assert.Equal(t, 1, r)
	fp, err := exe.Fingerprint()
	require.NoError(t, err)
	assert.NotEmpty(t, fp)

	a, _ := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
	b, _ := BufferFrom(cl, []float32{10, 20, 30, 40}, []int64{4})
	res, err := exe.Run(a, b)
	require.NoError(t, err)
	sum, err := ToSlice[float32](ctx, res[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 22, 33, 44}, sum)

	// Serialize, reload, run again: an executable cache round trip.
	ser, err := exe.Serialize()
	require.NoError(t, err)
	exe2, err := cl.DeserializeAndLoad(ser, nil)
	require.NoError(t, err)
	fp2, err := exe2.Fingerprint()
	require.NoError(t, err)
	assert.Equal(t, fp, fp2)
	res2, err := exe2.Run(a, b)
	require.NoError(t, err)
	sum2, err := ToSlice[float32](ctx, res2[0])
	require.NoError(t, err)
	assert.Equal(t, sum, sum2)
	_, err = cl.DeserializeAndLoad([]byte("garbage"), nil)
	assert.ErrorIs(t, err, InvalidArgument)

	_, err = cl.Compile(MLIRText("module {}"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "conformance directive")
	_, err = cl.Compile(Program{Code: []byte("x"), Format: "onnx"}, nil)
	assert.ErrorIs(t, err, InvalidArgument)
	bad := xla.DefaultCompileOptions()
	bad.NumReplicas = 0
	_, err = cl.Compile(MLIRText(addProgram), &bad)
	assert.Error(t, err)
}

func TestExecuteMarshalling(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t, DeviceCount(2))
	ctx := ctxT(t)
	exe, err := cl.Compile(MLIRText(strings.Replace(addProgram, "-> f32[4]", "-> f32[4] replicas=2", 1)), nil)
	require.NoError(t, err)
	require.Len(t, exe.AddressableDevices(), 2)
	var args [][]*Buffer
	for i, d := range cl.AddressableDevices() {
		x, err := BufferFrom(cl, []float32{1, 2, 3, float32(i)}, []int64{4}, OnDevice(d))
		require.NoError(t, err)
		args = append(args, []*Buffer{x, x})
	}
	xctx, err := cl.NewExecuteContext()
	require.NoError(t, err)
	defer xctx.Close()
	res, err := exe.Execute(args, ExecuteOptions{LaunchID: 7, NonDonatable: []int{0, 1}, CompletionEvents: true, Context: xctx})
	require.NoError(t, err)
	assert.Equal(t, "devices=2;args=2;launch_id=7;non_donatable=0,1;context=1;complete_events=1", c.text("conformance_last_execute"))
	require.Len(t, res.Completion, 2)
	for d := range res.Completion {
		require.NoError(t, res.Completion[d].Await(ctx))
		v, err := ToSlice[float32](ctx, res.Outputs[d][0])
		require.NoError(t, err)
		assert.Equal(t, []float32{2, 4, 6, float32(2 * d)}, v)
	}

	// Argument errors are caught before the plugin sees them, or by it.
	for _, bad := range []int{2, -1} {
		_, err = exe.Execute(args, ExecuteOptions{NonDonatable: []int{0, bad}})
		assert.ErrorContains(t, err, fmt.Sprintf("non-donatable argument %d: the call has 2 arguments", bad))
	}
	_, err = exe.Execute(args[:1], ExecuteOptions{})
	assert.ErrorIs(t, err, InvalidArgument)
	_, err = exe.Execute([][]*Buffer{{args[0][0]}, {args[1][0]}}, ExecuteOptions{})
	assert.ErrorIs(t, err, InvalidArgument)
	_, err = exe.Execute([][]*Buffer{{nil, nil}, {nil, nil}}, ExecuteOptions{})
	assert.ErrorIs(t, err, InvalidArgument)
}

func TestExecutionFailureSurfacesThroughEvents(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	ctx := ctxT(t)
	exe, err := cl.Compile(MLIRText("// conformance: fail f32[4] -> f32[4]\n"), nil)
	require.NoError(t, err)
	a, _ := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
	res, err := exe.Execute([][]*Buffer{{a}}, ExecuteOptions{CompletionEvents: true})
	require.NoError(t, err, "Execute returns at once; the failure arrives on the events")
	err = res.Completion[0].Await(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, Internal)
	assert.Contains(t, err.Error(), "requested failure")
	err = res.Outputs[0][0].Await(ctx)
	assert.ErrorIs(t, err, Internal)

	// An output without elements has nothing to copy, but reading it
	// waits for its computation and reports its failure (it returned
	// nothing at once, the failure lost), whatever the context.
	exe0, err := cl.Compile(MLIRText("// conformance: fail f32[0] -> f32[0]\n"), nil)
	require.NoError(t, err)
	empty, err := BufferFrom(cl, []float32{}, []int64{0}, CopyDuringCall())
	require.NoError(t, err)
	res, err = exe0.Execute([][]*Buffer{{empty}}, ExecuteOptions{})
	require.NoError(t, err)
	for _, rctx := range []context.Context{context.Background(), ctx} {
		_, err = ToSlice[float32](rctx, res.Outputs[0][0])
		assert.ErrorIs(t, err, Internal)
		assert.ErrorContains(t, err, "requested failure")
	}
}

func TestConcurrentExecutes(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	ctx := ctxT(t)
	exe, err := cl.Compile(MLIRText(addProgram), nil)
	require.NoError(t, err)
	a, _ := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4}, WaitForTransfer())
	before := c.counter("execute_calls")
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := 0; g < 1000; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			b, err := BufferFrom(cl, []float32{float32(g), 0, 0, 0}, []int64{4})
			if err != nil {
				errs <- err
				return
			}
			defer b.Close()
			out, err := exe.Run(a, b)
			if err != nil {
				errs <- err
				return
			}
			v, err := ToSlice[float32](ctx, out[0])
			if err == nil && v[0] != float32(g)+1 {
				err = errors.New("wrong sum")
			}
			out[0].Close()
			if err != nil {
				errs <- err
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, int64(1000), c.counter("execute_calls")-before)
	assert.Greater(t, c.counter("onready_foreign_thread"), int64(0), "OnReady callbacks arrive on the plugin's own threads")
}

func TestNoLeaksAfterClose(t *testing.T) {
	c := openConformance(t)
	ctx := ctxT(t)
	runtime.GC()
	goroutines := runtime.NumGoroutine()
	for round := 0; round < 3; round++ {
		cl, err := Open(c.path, DeviceCount(2))
		require.NoError(t, err)
		exe, err := cl.Compile(MLIRText(addProgram), nil)
		require.NoError(t, err)
		for i := 0; i < 50; i++ {
			a, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
			require.NoError(t, err)
			out, err := exe.Run(a, a)
			require.NoError(t, err)
			_, err = ToSlice[float32](ctx, out[0])
			require.NoError(t, err)
			if i%2 == 0 {
				a.Close()
				out[0].Close()
			} // the rest is released by the client's Close
		}
		require.NoError(t, cl.Close())
	}
	for _, kind := range []string{"client", "buffer", "loaded_executable", "executable", "error", "execute_context"} {
		assert.EqualValues(t, 0, c.live(kind), "live %s objects", kind)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (pendingEvents() != 0 || c.live("event") != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, 0, pendingEvents(), "event callbacks still pending")
	assert.EqualValues(t, 0, c.live("event"))
	runtime.GC()
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines+1, "goroutines leaked")
}

func TestErrorCodesAndMessages(t *testing.T) {
	e := &Error{Code: InvalidArgument, Msg: "bad", Op: "PJRT_X"}
	assert.ErrorIs(t, e, InvalidArgument)
	assert.NotErrorIs(t, e, Internal)
	assert.Equal(t, "pjrt: PJRT_X: INVALID_ARGUMENT: bad", e.Error())
	assert.Equal(t, "UNAUTHENTICATED", Unauthenticated.String())
}

// TestExecuteAsksBuffersForUnreportedShapes runs a program on a plugin
// whose executables do not report their output dimensions: each output's
// shape then comes from its buffer (PJRT_Buffer_ElementType and
// PJRT_Buffer_Dimensions).
func TestExecuteAsksBuffersForUnreportedShapes(t *testing.T) {
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_NO_OUTPUT_DIMS", "1")
	cl, err := Open(path)
	require.NoError(t, err)
	defer cl.Close()
	exe, err := cl.Compile(MLIRText(addProgram), nil)
	require.NoError(t, err)
	outs, err := exe.Outputs()
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Nil(t, outs[0].Shape.Dims, "the plugin reported output dimensions: the test does not test the fallback")
	a, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
	require.NoError(t, err)
	res, err := exe.Run(a, a)
	require.NoError(t, err)
	assert.True(t, res[0].Shape().Equal(xla.MakeShape(xla.Float32, 4)), res[0].Shape())
	sum, err := ToSlice[float32](ctxT(t), res[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, sum)
}

// TestExecuteKeepsOutputsOfUnmappedTypes runs a program whose output type
// (TOKEN) halo has no dtype for, with its dimensions reported: Execute
// hands it out as a buffer of dtype Invalid (which can be passed on to
// another execution) rather than failing.
func TestExecuteKeepsOutputsOfUnmappedTypes(t *testing.T) {
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_TOKEN_OUTPUTS", "1")
	cl, err := Open(path)
	require.NoError(t, err)
	defer cl.Close()
	exe, err := cl.Compile(MLIRText("// conformance: identity s32[2] -> s32[2]\nmodule { func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> { return %a : tensor<2xi32> } }"), nil)
	require.NoError(t, err)
	a, err := BufferFrom(cl, []int32{1, 2}, []int64{2})
	require.NoError(t, err)
	res, err := exe.Run(a)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, xla.Invalid, res[0].Shape().DType)
	assert.Equal(t, []int64{2}, res[0].Shape().Dims)
}

// closingExecutable closes its client once the run has made its outputs,
// as another goroutine's Client.Close may.
type closingExecutable struct {
	backend.Executable
	c *Client
}

// Execute runs, then starts closing the client in another goroutine and
// returns once the client counts as closed: Close waits for the call in
// progress (this one) before it releases anything.
func (x closingExecutable) Execute(args [][]backend.Buffer, opts backend.ExecuteOptions) ([][]backend.Buffer, []backend.Event, error) {
	outs, events, err := x.Executable.Execute(args, opts)
	go x.c.Close()
	for !x.c.isClosed() {
		time.Sleep(time.Millisecond)
	}
	return outs, events, err
}

func (c *Client) isClosed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

// TestExecuteReleasesOutputsWhenTheClientCloses checks that a run whose
// client closes before its outputs are handed out releases every output
// buffer (the conformance plugin counts live buffers), and that Close
// waited for the run: nothing was released under it.
func TestExecuteReleasesOutputsWhenTheClientCloses(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	exe, err := cl.Compile(MLIRText("// conformance: identity s32[] pred[2,2] s32[2] -> s32[] pred[2,2] s32[2]\nmodule {}"), nil)
	require.NoError(t, err)
	a, err := BufferFrom(cl, []int32{7}, nil)
	require.NoError(t, err)
	b, err := BufferFrom(cl, []bool{true, false, false, true}, []int64{2, 2})
	require.NoError(t, err)
	d, err := BufferFrom(cl, []int32{1, 2}, []int64{2})
	require.NoError(t, err)
	exe.b = closingExecutable{Executable: exe.b, c: cl}
	invalid := c.counter("invalid_handles")
	_, err = exe.Run(a, b, d)
	require.ErrorIs(t, err, ErrClosed)
	require.Eventually(t, func() bool { return c.live("buffer") == 0 }, 10*time.Second, time.Millisecond, "buffers left alive")
	assert.Equal(t, invalid, c.counter("invalid_handles"))
}

func TestAwaitBlocksInThePluginWhenItCannotBeCancelled(t *testing.T) {
	// A context that cannot end: the plugin blocks the thread
	// (PJRT_Event_Await), no completion callback; one that can: the
	// callback. A blocked waiter sees a failure that arrives while it
	// waits; no event is left alive.
	c := openConformance(t)
	cl := c.client(t)
	exe, err := cl.Compile(MLIRText(addProgram), nil)
	require.NoError(t, err)
	a, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4}, WaitForTransfer())
	require.NoError(t, err)
	awaits, callbacks := c.counter("event_awaits"), c.counter("onready_registered")
	out, err := exe.Run(a, a)
	require.NoError(t, err)
	require.NoError(t, out[0].Await(context.Background()))
	assert.Equal(t, int64(1), c.counter("event_awaits")-awaits)
	assert.Equal(t, int64(0), c.counter("onready_registered")-callbacks)
	v, err := ToSlice[float32](ctxT(t), out[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, v)

	awaits = c.counter("event_awaits")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out2, err := exe.Run(a, a)
	require.NoError(t, err)
	require.NoError(t, out2[0].Await(ctx))
	assert.Equal(t, int64(0), c.counter("event_awaits")-awaits, "a cancellable wait uses the callback")

	forceReadyCallback = true
	t.Cleanup(func() { forceReadyCallback = false })
	out3, err := exe.Run(a, a)
	require.NoError(t, err)
	require.NoError(t, out3[0].Await(context.Background()))
	forceReadyCallback = false
	assert.Equal(t, int64(0), c.counter("event_awaits")-awaits)

	// ToHost blocks the same way; too small a destination is an error.
	awaits = c.counter("event_awaits")
	host := make([]byte, 16)
	require.NoError(t, out2[0].ToHost(context.Background(), host))
	assert.Equal(t, int64(1), c.counter("event_awaits")-awaits)
	assert.Equal(t, []float32{2, 4, 6, 8}, unsafe.Slice((*float32)(unsafe.Pointer(&host[0])), 4))
	assert.ErrorIs(t, out2[0].ToHost(context.Background(), host[:8]), InvalidArgument)
	var nilBuf *Buffer
	assert.ErrorIs(t, nilBuf.ToHost(context.Background(), host), InvalidArgument)

	// A failure that arrives while the waiter is blocked in the plugin,
	// named after the call that made the event, as the callback's is.
	awaits = c.counter("event_awaits")
	alias, f, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Float32, 2, 2))
	require.NoError(t, err)
	waited := make(chan error, 1)
	go func() { waited <- alias.Await(context.Background()) }()
	deadline := time.Now().Add(5 * time.Second)
	for c.counter("event_awaits") == awaits && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, f.Fail(errorf(Aborted, "test", "boom")))
	werr := <-waited
	assert.ErrorIs(t, werr, Aborted)
	assert.ErrorContains(t, werr, "boom")
	assert.ErrorContains(t, werr, "PJRT_Buffer_ReadyEvent")
	assert.Equal(t, int64(1), c.counter("event_awaits")-awaits, "the waiter blocked in the plugin")
	herr := alias.ToHost(context.Background(), host)
	assert.ErrorIs(t, herr, Aborted)
	assert.ErrorContains(t, herr, "PJRT_Buffer_ToHostBuffer")
	require.NoError(t, f.Close())
	require.NoError(t, alias.Close())

	require.NoError(t, out[0].Close())
	assert.ErrorIs(t, out[0].Await(context.Background()), ErrClosed, "await after Close")
	for _, o := range [][]*Buffer{out2, out3} {
		require.NoError(t, o[0].Close())
	}
	require.NoError(t, a.Close())
	deadline = time.Now().Add(5 * time.Second)
	for (pendingEvents() != 0 || c.live("event") != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.EqualValues(t, 0, c.live("event"))
}

// A Client dropped without Close is released once it is collected (its
// buffers and executables first, by their own cleanups): the plugin's
// clients, devices and memories go back to what they were. The wait for
// the collector is bounded generously; it measures nothing.
func TestDroppedClientIsReleased(t *testing.T) {
	path := testplugin.Copy(t, testplugin.Build(t)) // counters of its own
	lib, err := loadLib(path)
	require.NoError(t, err)
	c := &conformance{t: t, path: path, lib: lib}
	before := [3]int64{c.live("client"), c.live("buffer"), c.live("loaded_executable")}
	func() {
		for range 5 {
			cl, err := Open(path)
			require.NoError(t, err)
			exe, err := cl.Compile(MLIRText(addProgram), nil)
			require.NoError(t, err)
			a, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
			require.NoError(t, err)
			out, err := exe.Run(a, a)
			require.NoError(t, err)
			got, err := ToSlice[float32](context.Background(), out[0])
			require.NoError(t, err)
			require.Equal(t, []float32{2, 4, 6, 8}, got)
		}
	}()
	require.Greater(t, c.live("client"), before[0])
	deadline := time.Now().Add(time.Minute)
	for [3]int64{c.live("client"), c.live("buffer"), c.live("loaded_executable")} != before {
		require.True(t, time.Now().Before(deadline), "clients %d, buffers %d, executables %d still live (before: %v)",
			c.live("client"), c.live("buffer"), c.live("loaded_executable"), before)
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}
