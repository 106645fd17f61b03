package pjrt

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/halo-ml/halo/internal/testplugin"
	"github.com/halo-ml/halo/xla"
)

// record returns a named record of the conformance plugin (conformance_record).
func (c *conformance) record(name string) string {
	p := cstring(name)
	r, _, _ := purego.SyscallN(c.sym("conformance_record"), uintptr(unsafe.Pointer(p)))
	runtime.KeepAlive(p)
	return goStringZ(r)
}

// waitLive waits until a live-object count of the plugin reaches want.
func (c *conformance) waitLive(t *testing.T, kind string, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.live(kind) != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	assert.Equal(t, want, c.live(kind), "live %s", kind)
}

func TestBufferDetails(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	ctx := ctxT(t)
	b, err := BufferFrom(cl, []float32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, WaitForTransfer())
	require.NoError(t, err)

	dims, err := b.UnpaddedDims()
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, dims)
	dyn, err := b.DynamicDims()
	require.NoError(t, err)
	assert.Empty(t, dyn)
	l, err := b.Layout()
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 0}, l.MinorToMajor)
	assert.Empty(t, l.Tiles)
	sl, err := b.SerializedLayout()
	require.NoError(t, err)
	assert.Equal(t, "{1,0}", string(sl))
	onCPU, err := b.IsOnCPU()
	require.NoError(t, err)
	assert.True(t, onCPU)

	p, err := b.UnsafePointer()
	require.NoError(t, err)
	require.NotZero(t, p)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, unsafe.Slice((*float32)(cptr(p)), 6), "the conformance plugin's buffers are host memory")
	dp, err := b.DeviceMemoryPointer()
	require.NoError(t, err)
	assert.Equal(t, p, dp)

	require.NoError(t, b.IncreaseExternalReferenceCount())
	require.NoError(t, b.DecreaseExternalReferenceCount())
	err = b.DecreaseExternalReferenceCount()
	assert.ErrorIs(t, err, FailedPrecondition, "more decreases than increases")

	dst := make([]byte, 8)
	ev, err := b.CopyRawToHost(dst, 4)
	require.NoError(t, err)
	require.NoError(t, ev.Await(ctx))
	assert.Equal(t, asBytes([]float32{2, 3}), dst)
	_, err = b.CopyRawToHost(make([]byte, 100), 0)
	assert.ErrorIs(t, err, InvalidArgument)
	_, err = b.CopyRawToHost(dst, -1)
	assert.ErrorIs(t, err, InvalidArgument)

	rc, err := b.CopyRawToHostLater(8, 12)
	require.NoError(t, err)
	assert.Error(t, rc.Provide(make([]byte, 4)), "a destination too small")
	later := make([]byte, 12)
	require.NoError(t, rc.Provide(later))
	require.NoError(t, rc.Done().Await(ctx))
	assert.Equal(t, asBytes([]float32{3, 4, 5}), later)
	assert.ErrorIs(t, rc.Provide(later), FailedPrecondition, "a second destination")
	rc2, err := b.CopyRawToHostLater(0, 4)
	require.NoError(t, err)
	require.NoError(t, rc2.Cancel(nil))
	assert.ErrorIs(t, rc2.Done().Await(ctx), Cancelled)
	c.waitLive(t, "raw_future", 0)

	cast, err := b.Bitcast(xla.MakeShape(xla.Int32, 6))
	require.NoError(t, err)
	ints, err := ToSlice[int32](ctx, cast)
	require.NoError(t, err)
	assert.Equal(t, int32(0x3f800000), ints[0], "1.0f viewed as int32")
	_, err = b.Bitcast(xla.MakeShape(xla.Int32, 5))
	assert.ErrorIs(t, err, InvalidArgument)

	out, dep, err := b.DonateWithControlDependency()
	require.NoError(t, err)
	assert.True(t, b.IsDeleted(), "the donated buffer is deleted")
	ready, err := out.Ready()
	require.NoError(t, err)
	select {
	case <-ready.Done():
		t.Fatal("the donated buffer is ready before its dependency")
	case <-time.After(20 * time.Millisecond):
	}
	require.NoError(t, dep.Ready(nil))
	assert.ErrorIs(t, dep.Ready(nil), FailedPrecondition)
	vals, err := ToSlice[float32](ctx, out)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, vals)

	b2, err := BufferFrom(cl, []float32{1}, []int64{1}, CopyDuringCall())
	require.NoError(t, err)
	out2, dep2, err := b2.DonateWithControlDependency()
	require.NoError(t, err)
	require.NoError(t, dep2.Ready(&Error{Code: Aborted, Msg: "dependency failed"}))
	err = out2.Await(ctx)
	assert.ErrorIs(t, err, Aborted)
	assert.Contains(t, err.Error(), "dependency failed")
	c.waitLive(t, "donation", 0)

	require.NoError(t, cast.Close())
	_, err = cast.UnpaddedDims()
	assert.ErrorIs(t, err, ErrClosed)
	_, err = cast.UnsafePointer()
	assert.ErrorIs(t, err, ErrClosed)
}

func TestClientBufferCreation(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t, DeviceCount(2))
	ctx := ctxT(t)
	devs := cl.AddressableDevices()

	d, err := cl.LookupAddressableDevice(101)
	require.NoError(t, err)
	assert.Same(t, devs[1], d)
	_, err = cl.LookupAddressableDevice(7)
	assert.ErrorIs(t, err, InvalidArgument)
	_, err = cl.Device(99)
	assert.ErrorIs(t, err, NotFound)
	assert.Contains(t, err.Error(), "no device with id 99", "the plugin's lookup explains the miss")

	u, err := cl.CreateUninitializedBuffer(xla.MakeShape(xla.Int16, 3), OnDevice(devs[1]))
	require.NoError(t, err)
	ud, err := u.Device()
	require.NoError(t, err)
	assert.Same(t, devs[1], ud)
	_, err = ToSlice[int16](ctx, u)
	require.NoError(t, err)
	_, err = cl.CreateUninitializedBuffer(xla.MakeShape(xla.Int16, -3))
	assert.Error(t, err)

	eb, err := cl.CreateErrorBuffer(xla.MakeShape(xla.Float32, 2), &Error{Code: DataLoss, Msg: "bad block"})
	require.NoError(t, err)
	err = eb.Await(ctx)
	assert.ErrorIs(t, err, DataLoss)
	assert.Contains(t, err.Error(), "bad block")
	exe, err := cl.Compile(MLIRText("// conformance: identity f32[2] -> f32[2]\n"), nil)
	require.NoError(t, err)
	outs, err := exe.Run(eb)
	require.NoError(t, err)
	assert.ErrorIs(t, outs[0].Await(ctx), DataLoss, "an error buffer fails the computations that read it")
	_, err = cl.CreateErrorBuffer(xla.MakeShape(xla.Float32, 2), nil)
	assert.ErrorIs(t, err, InvalidArgument)

	// A view of Go memory (the conformance plugin's device memory is host memory).
	host := []float64{1.25, 2.5, 3.75}
	var pin runtime.Pinner
	pin.Pin(&host[0])
	defer pin.Unpin()
	var deleted atomic.Int32
	v, err := cl.CreateViewOfDeviceBuffer(uintptr(unsafe.Pointer(&host[0])), xla.MakeShape(xla.Float64, 3), func() { deleted.Add(1) })
	require.NoError(t, err)
	got, err := ToSlice[float64](ctx, v)
	require.NoError(t, err)
	assert.Equal(t, host, got)
	require.NoError(t, v.Close())
	// The plugin frees the view once its last pending use (the transfer
	// above, completed on its own thread) lets go of it: wait for that.
	for deadline := time.Now().Add(10 * time.Second); deleted.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	assert.EqualValues(t, 1, deleted.Load(), "on-delete callback runs when the view is released")
	assert.Equal(t, 0, pendingViews())
	_, err = cl.CreateViewOfDeviceBuffer(0, xla.MakeShape(xla.Float64, 3), nil)
	assert.ErrorIs(t, err, InvalidArgument)

	// Alias buffers: made now, filled later.
	alias, f, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Int32, 2))
	require.NoError(t, err)
	src, err := BufferFrom(cl, []int32{7, 9}, []int64{2})
	require.NoError(t, err)
	require.NoError(t, f.Fulfill(src))
	assert.ErrorIs(t, f.Fulfill(src), FailedPrecondition)
	ai, err := ToSlice[int32](ctx, alias)
	require.NoError(t, err)
	assert.Equal(t, []int32{7, 9}, ai)
	alias2, f2, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Int32, 2))
	require.NoError(t, err)
	wrong, err := BufferFrom(cl, []int32{1, 2, 3}, []int64{3})
	require.NoError(t, err)
	assert.ErrorIs(t, f2.Fulfill(wrong), InvalidArgument, "shape mismatch")
	require.NoError(t, f2.Fail(errors.New("no data")))
	assert.ErrorIs(t, alias2.Await(ctx), Unknown)
	_, f3, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Int32, 2))
	require.NoError(t, err)
	require.NoError(t, f3.Close())
	require.NoError(t, f3.Close())
	assert.ErrorIs(t, f3.Fulfill(src), ErrClosed, "after its Close")
	// Fulfilled with itself, its readiness would wait for itself.
	alias4, f4, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Int32, 2))
	require.NoError(t, err)
	assert.ErrorContains(t, f4.Fulfill(alias4), "cannot be fulfilled with itself")
	require.NoError(t, f4.Fulfill(src))
	c.waitLive(t, "alias_callback", 0)
	// Client.Close cancels an alias buffer not fulfilled: later calls
	// are on a closed object.
	other := c.client(t)
	_, f5, err := other.CreateAliasBuffer(xla.MakeShape(xla.Int32, 2))
	require.NoError(t, err)
	require.NoError(t, other.Close())
	assert.ErrorIs(t, f5.Fulfill(src), ErrClosed)
	assert.ErrorIs(t, f5.Fail(errors.New("late")), ErrClosed)

	// DMA mappings stay pinned until unmapped; Close unmaps the rest.
	buf := make([]byte, 4096)
	require.NoError(t, cl.DMAMap(buf))
	assert.Error(t, cl.DMAMap(buf), "mapped twice")
	require.NoError(t, cl.DMAUnmap(buf))
	assert.ErrorIs(t, cl.DMAUnmap(buf), InvalidArgument)
	require.NoError(t, cl.DMAMap(buf))
	assert.True(t, strings.HasSuffix(c.record("dma"), "map:4096;unmap:4096;map:4096"), c.record("dma"))
	assert.ErrorIs(t, cl.DMAMap(nil), InvalidArgument)

	require.NoError(t, cl.UpdateGlobalProcessInfo([]ProcessInfo{
		{TaskID: 0, IncarnationID: 7, State: ProcessConnected},
		{TaskID: 1, IncarnationID: 8, State: ProcessError, Err: &Error{Code: Unavailable, Msg: "host down"}},
	}))
	assert.True(t, strings.HasSuffix(c.record("process_info"), "task=0:incarnation=7:state=3:error=0:;task=1:incarnation=8:state=4:error=14:host down"), c.record("process_info"))

	dl, err := cl.DefaultLayout(xla.MakeShape(xla.Float32, 2, 3, 4))
	require.NoError(t, err)
	assert.Equal(t, "{2,1,0}", string(dl))
	require.NoError(t, cl.Close())
	assert.EqualValues(t, 0, c.live("dma_mapping"), "Close unmaps what is still mapped")
}

func TestDeviceDetails(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t, DeviceCount(2))
	ctx := ctxT(t)
	d := cl.AddressableDevices()[1]
	b, err := BufferFrom(cl, make([]float32, 256), []int64{256}, OnDevice(d), WaitForTransfer())
	require.NoError(t, err)
	st, err := d.MemoryStats()
	require.NoError(t, err)
	assert.EqualValues(t, 1024, st.BytesInUse)
	assert.True(t, st.HasPeakBytesInUse)
	assert.True(t, st.HasBytesLimit)
	assert.EqualValues(t, int64(1)<<34, st.BytesLimit)
	assert.False(t, st.HasPoolBytes)
	require.NoError(t, b.Close())
	// The storage is freed once the plugin's thread drops its last use of
	// it; wait for that before resetting the peak.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st, err := d.MemoryStats(); err != nil || st.BytesInUse == 0 {
			break
		}
	}
	require.NoError(t, d.ClearMemoryStats())
	st, err = d.MemoryStats()
	require.NoError(t, err)
	assert.EqualValues(t, 0, st.BytesInUse)
	assert.EqualValues(t, 0, st.PeakBytesInUse, "ClearMemoryStats resets the peak")

	attrs, err := d.CurrentAttributes()
	require.NoError(t, err)
	assert.Equal(t, d.Attributes(), attrs)
	assert.EqualValues(t, 0, c.live("device_attributes"), "the attributes' deleter ran")

	mds, err := d.MemoryDescriptions()
	require.NoError(t, err)
	assert.Equal(t, []MemoryDescription{{Kind: "device", KindID: 0, Default: true}, {Kind: "pinned_host", KindID: 1}}, mds)

	te, err := d.CreateAsyncTrackingEvent("prefetch weights")
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.live("async_tracking_event"))
	require.NoError(t, te.Close())
	require.NoError(t, te.Close())
	assert.EqualValues(t, 0, c.live("async_tracking_event"))
	assert.True(t, strings.HasSuffix(c.record("async_tracking"), "device=1:prefetch weights"), c.record("async_tracking"))

	// Poison an execution that has not started: its argument is an alias
	// buffer whose data comes later.
	exe, err := cl.Compile(MLIRText("// conformance: identity f32[1] -> f32[1]\n"), nil)
	require.NoError(t, err)
	dev := cl.AddressableDevices()[0]
	x, fx, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Float32, 1), OnDevice(dev))
	require.NoError(t, err)
	res, err := exe.Execute([][]*Buffer{{x}}, ExecuteOptions{LaunchID: 42})
	require.NoError(t, err)
	poisoned, err := dev.PoisonExecution(42, &Error{Code: Aborted, Msg: "peer failed"})
	require.NoError(t, err)
	assert.True(t, poisoned)
	src, err := BufferFrom(cl, []float32{1}, []int64{1}, OnDevice(dev))
	require.NoError(t, err)
	require.NoError(t, fx.Fulfill(src))
	err = res.Outputs[0][0].Await(ctx)
	assert.ErrorIs(t, err, Aborted)
	assert.Contains(t, err.Error(), "peer failed")
	poisoned, err = dev.PoisonExecution(43, nil)
	require.NoError(t, err)
	assert.False(t, poisoned, "no execution with launch id 43")
	assert.Contains(t, c.record("poison"), "device=0:launch_id=42:code=10:poisoned=1")
}

func TestExecutableDetails(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t, DeviceCount(4))
	opts := xla.DefaultCompileOptions()
	opts.NumReplicas, opts.NumPartitions = 2, 2
	opts.EnvOptionOverrides = map[string]any{"xla_dump_to": "/tmp/x"}
	prog := "// conformance: add f32[4] f32[4] -> f32[4] replicas=2 partitions=2\n"
	exe, err := cl.Compile(MLIRText(prog), &opts)
	require.NoError(t, err)

	n, err := exe.SizeOfGeneratedCode()
	require.NoError(t, err)
	assert.EqualValues(t, len(prog), n)
	cost, err := exe.CostAnalysis()
	require.NoError(t, err)
	assert.Equal(t, float32(4), cost["flops"])
	assert.Equal(t, float32(48), cost["bytes accessed"])
	ms, err := exe.CompiledMemoryStats()
	require.NoError(t, err)
	assert.EqualValues(t, 32, ms.ArgumentSizeInBytes)
	assert.EqualValues(t, 16, ms.OutputSizeInBytes)
	opt, err := exe.OptimizedProgram()
	require.NoError(t, err)
	assert.Equal(t, MLIRText(prog), opt)
	co, err := exe.CompileOptions()
	require.NoError(t, err)
	assert.Equal(t, 2, co.NumReplicas)
	assert.Equal(t, 2, co.NumPartitions)
	assert.Equal(t, "/tmp/x", co.EnvOptionOverrides["xla_dump_to"])
	kinds, err := exe.ParameterMemoryKinds()
	require.NoError(t, err)
	assert.Equal(t, []string{"device", "device"}, kinds)
	ol, err := exe.OutputLayouts()
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("{0}")}, ol)
	pl, err := exe.ParameterLayouts()
	require.NoError(t, err)
	assert.Len(t, pl, 2)

	da, err := exe.DeviceAssignment()
	require.NoError(t, err)
	assert.Equal(t, xla.DeviceAssignment{{0, 1}, {2, 3}}, da)
	ids, err := exe.LogicalDeviceIDs()
	require.NoError(t, err)
	assert.Equal(t, []LogicalDeviceID{{Replica: 0, Partition: 0}, {Replica: 0, Partition: 1}, {Replica: 1, Partition: 0}, {Replica: 1, Partition: 1}}, ids)
	c.waitLive(t, "serialized_device_assignment", 0)

	del, err := exe.IsDeleted()
	require.NoError(t, err)
	assert.False(t, del)
	require.NoError(t, exe.Delete())
	del, err = exe.IsDeleted()
	require.NoError(t, err)
	assert.True(t, del)
	args := make([][]*Buffer, 4)
	for i, d := range cl.AddressableDevices() {
		x, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4}, OnDevice(d))
		require.NoError(t, err)
		args[i] = []*Buffer{x, x}
	}
	_, err = exe.Execute(args, ExecuteOptions{})
	assert.ErrorIs(t, err, FailedPrecondition, "a deleted executable does not run")

	require.NoError(t, exe.Close())
	_, err = exe.SizeOfGeneratedCode()
	assert.ErrorIs(t, err, ErrClosed)
	_, err = exe.DeviceAssignment()
	assert.ErrorIs(t, err, ErrClosed)
}

// A portable executable has no device assignment: the plugin reports 0
// bytes (as XLA does), which is no assignment, not a decoding error.
func TestPortableExecutableHasNoDeviceAssignment(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	exe, err := cl.Compile(MLIRText("// conformance: identity f32[1] -> f32[1] portable=1\n"), nil)
	require.NoError(t, err)
	defer exe.Close()
	da, err := exe.DeviceAssignment()
	require.NoError(t, err)
	assert.Nil(t, da)
	c.waitLive(t, "serialized_device_assignment", 0)
}

func TestTopologies(t *testing.T) {
	c := openConformance(t)
	p, err := LoadPlugin(c.path)
	require.NoError(t, err)
	cl := c.client(t, DeviceCount(3))

	ct, err := cl.Topology()
	require.NoError(t, err)
	name, err := ct.PlatformName()
	require.NoError(t, err)
	assert.Equal(t, "conformance", name)
	descs, err := ct.DeviceDescriptions()
	require.NoError(t, err)
	require.Len(t, descs, 3)
	assert.Equal(t, 2, descs[2].ID)
	assert.Equal(t, "conformance_device", descs[2].Kind)
	assert.Equal(t, int64(3), descs[2].Attributes["core_count"])
	assert.Len(t, descs[2].Memories, 2)
	require.NoError(t, ct.Close(), "a client's topology is not destroyed")

	topo, err := p.NewTopology("", WithOption("device_count", int64(4)))
	require.NoError(t, err)
	ver, err := topo.PlatformVersion()
	require.NoError(t, err)
	assert.Equal(t, "conformance 0.114", ver)
	attrs, err := topo.Attributes()
	require.NoError(t, err)
	assert.Equal(t, int64(4), attrs["device_count"])
	fp, err := topo.Fingerprint()
	require.NoError(t, err)
	assert.NotZero(t, fp)
	ser, err := topo.Serialize()
	require.NoError(t, err)
	assert.Equal(t, "CONFTOPO:4", string(ser))
	back, err := p.DeserializeTopology(ser)
	require.NoError(t, err)
	fp2, err := back.Fingerprint()
	require.NoError(t, err)
	assert.Equal(t, fp, fp2)
	require.NoError(t, back.Close())
	_, err = p.DeserializeTopology([]byte("nope"))
	assert.ErrorIs(t, err, InvalidArgument)
	kinds, err := topo.MemoryKindIDs()
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, kinds)
	dl, err := topo.DefaultLayout(xla.MakeShape(xla.Uint8, 5, 5))
	require.NoError(t, err)
	assert.Equal(t, "{1,0}", string(dl))

	shape, err := topo.CanonicalShape(1, xla.MakeShape(xla.Float32, 2, 3))
	require.NoError(t, err)
	et, dims, space := decodeShapeProto(t, shape)
	assert.EqualValues(t, 11, et, "F32 as an xla.PrimitiveType")
	assert.Equal(t, []int64{2, 3}, dims)
	assert.EqualValues(t, 1, space)
	_, err = topo.CanonicalShape(9, xla.MakeShape(xla.Float32, 2))
	assert.ErrorIs(t, err, InvalidArgument)
	assert.EqualValues(t, 0, c.live("serialized_shape"))

	// Ahead-of-time compilation, then loading on a client.
	opts := xla.DefaultCompileOptions()
	u, err := topo.Compile(MLIRText(addProgram), &opts)
	require.NoError(t, err)
	uname, err := u.Name()
	require.NoError(t, err)
	assert.Equal(t, "conformance_add", uname)
	outs, err := u.Outputs()
	require.NoError(t, err)
	assert.True(t, outs[0].Shape.Equal(xla.MakeShape(xla.Float32, 4)))
	r, err := u.NumReplicas()
	require.NoError(t, err)
	assert.Equal(t, 1, r)
	np, err := u.NumPartitions()
	require.NoError(t, err)
	assert.Equal(t, 1, np)
	ufp, err := u.Fingerprint()
	require.NoError(t, err)
	code, err := u.SizeOfGeneratedCode()
	require.NoError(t, err)
	assert.EqualValues(t, len(addProgram), code)
	exe, err := cl.Load(u, nil)
	require.NoError(t, err)
	efp, err := exe.Fingerprint()
	require.NoError(t, err)
	assert.Equal(t, ufp, efp)
	ctx := ctxT(t)
	a, _ := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
	res, err := exe.Run(a, a)
	require.NoError(t, err)
	sum, err := ToSlice[float32](ctx, res[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, sum)
	blob, err := u.Serialize()
	require.NoError(t, err)
	exe2, err := cl.DeserializeAndLoad(blob, nil)
	require.NoError(t, err)
	require.NoError(t, exe2.Close())
	_, err = topo.Compile(MLIRText("// conformance: add f32[4] f32[4] -> f32[4] replicas=8\n"), nil)
	assert.ErrorIs(t, err, InvalidArgument, "more devices than the topology has")
	ctExe, err := ct.Compile(MLIRText(addProgram), nil)
	assert.ErrorIs(t, err, ErrClosed, "the client's topology was closed")
	assert.Nil(t, ctExe)

	require.NoError(t, u.Close())
	require.NoError(t, u.Close())
	_, err = u.Name()
	assert.ErrorIs(t, err, ErrClosed)
	_, err = cl.Load(u, nil)
	assert.ErrorIs(t, err, ErrClosed)
	require.NoError(t, topo.Close())
	require.NoError(t, topo.Close())
	_, err = topo.PlatformName()
	assert.ErrorIs(t, err, ErrClosed)
	assert.EqualValues(t, 0, c.live("topology"))
}

// decodeShapeProto reads element_type (2), dimensions (3) and
// layout.memory_space (5.8) of a serialized xla.ShapeProto.
func decodeShapeProto(t *testing.T, b []byte) (et int64, dims []int64, space int64) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0)
		b = b[n:]
		switch {
		case num == 2 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			et, b = int64(v), b[n:]
		case num == 3 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			for len(v) > 0 {
				d, m := protowire.ConsumeVarint(v)
				dims, v = append(dims, int64(d)), v[m:]
			}
			b = b[n:]
		case num == 5 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			for len(v) > 0 {
				f, ft, m := protowire.ConsumeTag(v)
				v = v[m:]
				m = protowire.ConsumeFieldValue(f, ft, v)
				if f == 8 {
					s, _ := protowire.ConsumeVarint(v)
					space = int64(s)
				}
				v = v[m:]
			}
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			require.GreaterOrEqual(t, n, 0)
			b = b[n:]
		}
	}
	return et, dims, space
}

func TestAsyncTransfer(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t, DeviceCount(2))
	ctx := ctxT(t)
	dev := cl.AddressableDevices()[1]
	shapes := []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Int64, 2), xla.MakeShape(xla.Uint8, 3)}
	tr, err := cl.NewAsyncTransfer(shapes, OnDevice(dev))
	require.NoError(t, err)
	d, err := tr.Device()
	require.NoError(t, err)
	assert.Same(t, dev, d)
	n, err := tr.BufferCount()
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	size, err := tr.BufferSize(0)
	require.NoError(t, err)
	assert.EqualValues(t, 16, size)
	_, err = tr.BufferSize(3)
	assert.ErrorIs(t, err, InvalidArgument)
	require.NoError(t, tr.AddMetadata(map[string]any{"step": int64(3), "name": "weights"}))
	assert.True(t, strings.HasSuffix(c.record("async_metadata"), "name=string:weights;step=int64:3"), c.record("async_metadata"))

	// Buffer 0 in two pieces; it is usable by Execute before its data arrives.
	b0, err := tr.Buffer(0)
	require.NoError(t, err)
	_, err = tr.Buffer(0)
	assert.ErrorIs(t, err, FailedPrecondition, "each buffer is handed out once")
	exe, err := cl.Compile(MLIRText("// conformance: identity f32[4] -> f32[4]\n"), nil)
	require.NoError(t, err)
	res, err := exe.Execute([][]*Buffer{{b0}}, ExecuteOptions{Device: dev})
	require.NoError(t, err)
	first := asBytes([]float32{1, 2})
	e1, err := tr.TransferData(0, first, 0, false)
	require.NoError(t, err)
	e2, err := tr.TransferData(0, asBytes([]float32{3, 4}), 8, true)
	require.NoError(t, err)
	require.NoError(t, e1.Await(ctx))
	require.NoError(t, e2.Await(ctx))
	_, err = tr.TransferData(0, first, 0, false)
	assert.ErrorIs(t, err, FailedPrecondition, "after the last piece")
	_, err = tr.TransferData(1, make([]byte, 32), 0, true)
	assert.ErrorIs(t, err, InvalidArgument, "too much data")
	out, err := ToSlice[float32](ctx, res.Outputs[0][0])
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4}, out)

	// Buffer 1 as a literal, buffer 2 fails.
	e3, err := tr.TransferLiteral(1, asBytes([]int64{-5, 5}))
	require.NoError(t, err)
	require.NoError(t, e3.Await(ctx))
	_, err = tr.TransferLiteral(1, make([]byte, 3))
	assert.ErrorIs(t, err, InvalidArgument)
	b1, err := tr.Buffer(1)
	require.NoError(t, err)
	v1, err := ToSlice[int64](ctx, b1)
	require.NoError(t, err)
	assert.Equal(t, []int64{-5, 5}, v1)
	require.NoError(t, tr.SetBufferError(2, &Error{Code: Unavailable, Msg: "source gone"}))
	b2, err := tr.Buffer(2)
	require.NoError(t, err)
	assert.ErrorIs(t, b2.Await(ctx), Unavailable)

	require.NoError(t, tr.Close())
	require.NoError(t, tr.Close())
	_, err = tr.BufferCount()
	assert.ErrorIs(t, err, ErrClosed)
	assert.EqualValues(t, 0, c.live("transfer_manager"))

	// Closing with a buffer not yet complete cancels it.
	tr2, err := cl.NewAsyncTransfer(shapes[:1])
	require.NoError(t, err)
	pending, err := tr2.Buffer(0)
	require.NoError(t, err)
	require.NoError(t, tr2.Close())
	assert.ErrorIs(t, pending.Await(ctx), Cancelled)
	_, err = cl.NewAsyncTransfer(nil)
	assert.ErrorIs(t, err, InvalidArgument)
}

func TestUserEventsAndErrorPayloads(t *testing.T) {
	c := openConformance(t)
	p, err := LoadPlugin(c.path)
	require.NoError(t, err)
	ctx := ctxT(t)

	u, err := p.NewUserEvent()
	require.NoError(t, err)
	assert.NotZero(t, u.Handle())
	select {
	case <-u.Event().Done():
		t.Fatal("a new user event is done")
	default:
	}
	require.NoError(t, u.Set(nil))
	require.NoError(t, u.Event().Await(ctx))
	assert.Error(t, u.Set(nil), "set twice")
	require.NoError(t, u.Close())

	u2, err := p.NewUserEvent()
	require.NoError(t, err)
	require.NoError(t, u2.Set(&Error{Code: ResourceExhausted, Msg: "out of tickets"}))
	err = u2.Event().Await(ctx)
	assert.ErrorIs(t, err, ResourceExhausted)
	assert.Contains(t, err.Error(), "out of tickets")
	require.NoError(t, u2.Close())

	// A nil context waits as context.Background does (it panicked on an
	// event not yet done, found in review).
	u4, err := p.NewUserEvent()
	require.NoError(t, err)
	go func() { time.Sleep(10 * time.Millisecond); u4.Set(nil) }()
	require.NoError(t, u4.Event().Await(nil))
	require.NoError(t, u4.Close())

	u3, err := p.NewUserEvent()
	require.NoError(t, err)
	require.NoError(t, u3.Close())
	assert.Zero(t, u3.Handle(), "no handle after Close")
	assert.ErrorIs(t, u3.Event().Await(ctx), Cancelled, "closing an unset event cancels it")
	assert.ErrorIs(t, u3.Set(nil), ErrClosed)
	c.waitLive(t, "event", 0)

	_, err = Open(c.path, WithOption("fail_create", "quota exceeded"), WithOption("fail_payload", "halo.test/reason=quota"))
	var pe *Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, map[string]string{"halo.test/reason": "quota"}, pe.Payloads)
	_, err = Open(c.path, WithOption("fail_create", "plain"))
	require.ErrorAs(t, err, &pe)
	assert.Nil(t, pe.Payloads)
}

func TestStructSizeRejection(t *testing.T) {
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_PJRT_MINOR", "120")
	t.Setenv("CONFORMANCE_REQUIRE_LARGER", "PJRT_Client_Create_Args")
	p, err := LoadPlugin(path)
	require.NoError(t, err, "loading works: only client creation needs the larger struct")
	_, err = p.NewClient()
	require.Error(t, err)
	var se *StructSizeError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, InvalidArgument)
	assert.Equal(t, "PJRT_Client_Create_Args", se.Struct)
	assert.Equal(t, 120, se.PluginMinor)
	assert.Equal(t, 114, se.HaloMinor)
	msg := err.Error()
	for _, want := range []string{"PJRT_Client_Create_Args", "0.120", "0.114", "use a halo release built for PJRT 0.120 or newer", "expects at least 96 bytes", path} {
		assert.Contains(t, msg, want)
	}
	t.Log(msg)

	// A plugin of halo's own version that wants a larger struct: halo's
	// advice to upgrade would be wrong.
	t.Setenv("CONFORMANCE_PJRT_MINOR", "114")
	path = testplugin.Copy(t, testplugin.Build(t))
	p, err = LoadPlugin(path)
	require.NoError(t, err)
	_, err = p.NewClient()
	require.ErrorAs(t, err, &se)
	msg = err.Error()
	assert.Contains(t, msg, "though halo sent what PJRT 0.114 defines")
	assert.Contains(t, msg, "reports a wrong version")
	assert.NotContains(t, msg, "use a halo release")
}

func TestOptionalFeaturesMissing(t *testing.T) {
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_PJRT_MINOR", "60")
	cl, err := Open(path)
	require.NoError(t, err)
	defer cl.Close()
	_, err = cl.CreateUninitializedBuffer(xla.MakeShape(xla.Float32, 2)) // from minor 69
	assert.ErrorIs(t, err, Unimplemented)
	assert.Contains(t, err.Error(), "PJRT_Client_CreateUninitializedBuffer")
	d := cl.AddressableDevices()[0]
	_, err = d.CurrentAttributes() // from minor 92
	assert.ErrorIs(t, err, Unimplemented)
	_, err = d.PoisonExecution(1, nil)
	assert.ErrorIs(t, err, Unimplemented)
	u, err := cl.Plugin().NewUserEvent()
	assert.ErrorIs(t, err, Unimplemented)
	assert.Nil(t, u)
	_, err = cl.NewAsyncTransfer([]xla.Shape{xla.MakeShape(xla.Float32, 1)})
	require.NoError(t, err, "from minor 60")
	b, err := BufferFrom(cl, []float32{1}, []int64{1})
	require.NoError(t, err)
	_, err = b.Bitcast(xla.MakeShape(xla.Int32, 1))
	assert.ErrorIs(t, err, Unimplemented)
	assert.True(t, strings.Contains(err.Error(), "0.60"), err.Error())
}

func TestExtraNoLeaks(t *testing.T) {
	c := openConformance(t)
	ctx := ctxT(t)
	p, err := LoadPlugin(c.path)
	require.NoError(t, err)
	for round := 0; round < 2; round++ {
		cl, err := Open(c.path, DeviceCount(2))
		require.NoError(t, err)
		b, err := BufferFrom(cl, []float32{1, 2}, []int64{2}, WaitForTransfer())
		require.NoError(t, err)
		_, err = b.Bitcast(xla.MakeShape(xla.Int32, 2))
		require.NoError(t, err)
		_, err = b.SerializedLayout()
		require.NoError(t, err)
		_, err = cl.DefaultLayout(xla.MakeShape(xla.Float32, 3))
		require.NoError(t, err)
		_, _, err = cl.CreateAliasBuffer(xla.MakeShape(xla.Float32, 2)) // never fulfilled: released at Close
		require.NoError(t, err)
		tr, err := cl.NewAsyncTransfer([]xla.Shape{xla.MakeShape(xla.Float32, 2)})
		require.NoError(t, err)
		_ = tr // released by the client's Close
		_, err = cl.AddressableDevices()[0].CreateAsyncTrackingEvent("x")
		require.NoError(t, err)
		_, err = cl.CreateUninitializedBuffer(xla.MakeShape(xla.Uint8, 8))
		require.NoError(t, err)
		require.NoError(t, cl.DMAMap(make([]byte, 64)))
		topo, err := cl.Topology()
		require.NoError(t, err)
		u, err := topo.Compile(MLIRText(addProgram), nil)
		require.NoError(t, err)
		le, err := cl.Load(u, nil)
		require.NoError(t, err)
		_, err = le.OutputLayouts()
		require.NoError(t, err)
		_, err = le.DeviceAssignment()
		require.NoError(t, err)
		require.NoError(t, u.Close())
		xc, err := cl.NewExecuteContext()
		require.NoError(t, err)
		id, err := p.RegisterFFIType("leak_test_type")
		require.NoError(t, err)
		require.NoError(t, xc.AddFFIUserData(id, 1))
		st, err := p.NewTopology("")
		require.NoError(t, err)
		require.NoError(t, st.Close())
		ue, err := p.NewUserEvent()
		require.NoError(t, err)
		require.NoError(t, ue.Close())
		require.NoError(t, cl.Close())
	}
	_ = ctx
	for _, kind := range []string{"client", "buffer", "loaded_executable", "executable", "error", "execute_context",
		"topology", "transfer_manager", "dma_mapping", "async_tracking_event", "serialized_executable",
		"serialized_compile_options", "serialized_device_assignment", "serialized_shape", "serialized_layout",
		"device_attributes", "ffi_error", "raw_future", "donation", "layout", "alias_callback"} {
		assert.EqualValues(t, 0, c.live(kind), "live %s objects", kind)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (pendingEvents() != 0 || c.live("event") != 0 || c.live("storage") != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, 0, pendingEvents(), "event callbacks still pending")
	assert.EqualValues(t, 0, c.live("event"))
	assert.EqualValues(t, 0, c.live("storage"))
	assert.Equal(t, 0, pendingViews())
}

// TestAliasBufferCycles: an alias buffer fulfilled with an alias buffer
// that is, directly or through others, fulfilled with it would wait for
// itself: Fulfill refuses it (a1 with a2 and a2 with a1 was accepted and
// hung every wait: review). The chain fulfilled with data reaches all its
// links; a refused or failed Fulfill leaves the chain as it was.
func TestAliasBufferCycles(t *testing.T) {
	ctx := context.Background()
	interp, err := Open("interpreter")
	require.NoError(t, err)
	t.Cleanup(func() { interp.Close() })
	for name, cl := range map[string]*Client{"conformance": openConformance(t).client(t), "interpreter": interp} {
		t.Run(name, func(t *testing.T) {
			shape := xla.MakeShape(xla.Int32, 2)
			var as []*Buffer
			var fs []*AliasFulfillment
			for range 3 {
				a, f, err := cl.CreateAliasBuffer(shape)
				require.NoError(t, err)
				as, fs = append(as, a), append(fs, f)
			}
			require.NoError(t, fs[0].Fulfill(as[1]))
			assert.ErrorContains(t, fs[1].Fulfill(as[0]), "its readiness would wait for itself")
			require.NoError(t, fs[1].Fulfill(as[2]))
			assert.ErrorIs(t, fs[0].Fulfill(as[2]), FailedPrecondition, "fulfilled twice")
			err := fs[2].Fulfill(as[0])
			assert.ErrorIs(t, err, InvalidArgument)
			assert.ErrorContains(t, err, "through others")
			src, err := BufferFrom(cl, []int32{4, 5}, []int64{2})
			require.NoError(t, err)
			require.NoError(t, fs[2].Fulfill(src))
			for i, a := range as {
				got, err := ToSlice[int32](ctx, a)
				require.NoError(t, err, "alias %d", i)
				assert.Equal(t, []int32{4, 5}, got)
				require.NoError(t, a.Close())
			}
			require.NoError(t, src.Close())
		})
	}
}
