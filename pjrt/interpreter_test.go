package pjrt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func openInterpreter(t testing.TB, opts ...Option) *Client {
	t.Helper()
	c, err := Open("interpreter", opts...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestInterpreterClientDevicesMemories(t *testing.T) {
	c := openInterpreter(t, DeviceCount(4))
	assert.Equal(t, "interpreter", c.PlatformName())
	assert.Equal(t, "interpreter", c.Plugin().Name())
	assert.Equal(t, "", c.Plugin().Path())
	require.Len(t, c.Devices(), 4)
	require.Len(t, c.AddressableDevices(), 4)
	for i, d := range c.AddressableDevices() {
		assert.Equal(t, i, d.ID())
		assert.Equal(t, "interpreter", d.Kind())
		assert.True(t, d.IsAddressable())
		def, err := d.DefaultMemory()
		require.NoError(t, err)
		assert.Equal(t, "device", def.Kind())
		kinds := []string{}
		for _, m := range d.Memories() {
			kinds = append(kinds, m.Kind())
		}
		assert.Equal(t, []string{"device", "pinned_host"}, kinds)
	}
	_, err := c.Device(7)
	assert.True(t, errors.Is(err, NotFound), "%v", err)
	da, err := c.DefaultDeviceAssignment(2, 2)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 2}, {1, 3}}, da)
	_ = append(da[0], 99) // the rows do not share an array
	assert.Equal(t, []int{1, 3}, da[1])
	_, err = c.DefaultDeviceAssignment(4, 2)
	assert.True(t, errors.Is(err, InvalidArgument), "%v", err)

	c2 := openInterpreter(t, CPUDeviceCount(2))
	assert.Len(t, c2.Devices(), 2)
	_, err = Open("interpreter", DeviceCount(2), CPUDeviceCount(3))
	assert.True(t, errors.Is(err, InvalidArgument), "%v", err)
	_, err = Open("interpreter", DeviceCount(0))
	assert.Error(t, err)
}

func TestOpenFallsBackToInterpreter(t *testing.T) {
	if c := Candidates(); c[0].Name != "interpreter" {
		t.Skipf("a real plugin (%s at %s) is installed; Open(\"\") picks it", c[0].Name, c[0].Path)
	}
	c, err := Open("")
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "interpreter", c.PlatformName())
}

const interpAdd = `module @add_two_vectors {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`

func TestInterpreterCompileExecuteSerialize(t *testing.T) {
	c := openInterpreter(t)
	exe, err := c.Compile(MLIRText(interpAdd), nil)
	require.NoError(t, err)
	defer exe.Close()
	name, err := exe.Name()
	require.NoError(t, err)
	assert.Equal(t, "add_two_vectors", name)
	outs, err := exe.Outputs()
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Equal(t, xla.MakeShape(xla.Float32, 4), outs[0].Shape)
	fp, err := exe.Fingerprint()
	require.NoError(t, err)
	assert.NotEmpty(t, fp)
	// The same code compiled for two replicas is another executable, with
	// another fingerprint (they were the same, a hash of the code alone;
	// found in review); compiled alike, the same one.
	c2 := openInterpreter(t, DeviceCount(2))
	for replicas, same := range map[int]bool{1: true, 2: false} {
		o := xla.DefaultCompileOptions()
		o.NumReplicas = replicas
		other, err := c2.Compile(MLIRText(interpAdd), &o)
		require.NoError(t, err)
		ofp, err := other.Fingerprint()
		require.NoError(t, err)
		assert.Equal(t, same, ofp == fp, "%d replicas", replicas)
		other.Close()
	}

	a, err := BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4})
	require.NoError(t, err)
	b, err := BufferFrom(c, []float32{10, 20, 30, 40}, []int64{4})
	require.NoError(t, err)
	res, err := exe.Run(a, b)
	require.NoError(t, err)
	got, err := ToSlice[float32](ctxT(t), res[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 22, 33, 44}, got)
	// The inputs are untouched by the execution.
	in, err := ToSlice[float32](ctxT(t), a)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4}, in)

	ser, err := exe.Serialize()
	require.NoError(t, err)
	exe2, err := c.DeserializeAndLoad(ser, nil)
	require.NoError(t, err)
	defer exe2.Close()
	fp2, err := exe2.Fingerprint()
	require.NoError(t, err)
	assert.Equal(t, fp, fp2)
	res2, err := exe2.Run(a, b)
	require.NoError(t, err)
	got2, err := ToSlice[float32](ctxT(t), res2[0])
	require.NoError(t, err)
	assert.Equal(t, got, got2)
	_, err = c.DeserializeAndLoad([]byte("garbage"), nil)
	assert.True(t, errors.Is(err, InvalidArgument), "%v", err)

	prog, err := exe.OptimizedProgram()
	require.NoError(t, err)
	assert.Equal(t, "mlir", prog.Format)
	assert.Equal(t, interpAdd, string(prog.Code))
	ids, err := exe.LogicalDeviceIDs()
	require.NoError(t, err)
	assert.Equal(t, []LogicalDeviceID{{Replica: 0, Partition: 0}}, ids)
	da, err := exe.DeviceAssignment()
	require.NoError(t, err)
	assert.Equal(t, xla.DeviceAssignment{{0}}, da)
}

func TestInterpreterCompileErrors(t *testing.T) {
	c := openInterpreter(t)
	tests := []struct {
		name string
		prog Program
		code Code
		want string
	}{
		{"syntax", MLIRText("module { this is not mlir }"), InvalidArgument, "parsing the program"},
		{"bytecode", MLIR([]byte("ML\xefR\x00rest")), InvalidArgument, "MLIR bytecode"},
		{"hlo", HLO([]byte{1, 2, 3}), InvalidArgument, "not serialized HLO"},
		{"unsupported op", MLIRText(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mydialect.frob"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`), Unimplemented, "mydialect.frob is not supported"},
		{"unknown custom call", MLIRText(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @my.missing.target(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`), NotFound, `"my.missing.target" is not registered`},
		{"too many devices", MLIRText(`module @m attributes {mhlo.num_replicas = 8 : i32} {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    return %a : tensor<2xf32>
  }
}`), InvalidArgument, "need"},
		{"verify", MLIRText(`func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {
  return %a : tensor<2xf32>
}`), InvalidArgument, "@main"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Compile(tc.prog, nil)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.code), "want %v: %v", tc.code, err)
			var pe *Error
			require.True(t, errors.As(err, &pe), "%T", err)
			assert.Equal(t, "PJRT_Client_Compile", pe.Op)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestInterpreterBuffersEveryDType(t *testing.T) {
	c := openInterpreter(t, DeviceCount(2))
	for _, dt := range xla.AllDTypes() {
		shape := xla.MakeShape(dt, 3)
		data := make([]byte, shape.HostBytes())
		for i := range data {
			data[i] = byte(i * 37)
		}
		if dt.Bits() < 8 || dt == xla.Bool { // one byte per element, in range
			for i := range data {
				data[i] = byte(i % 2)
				if dt.IsInt() && !dt.IsUnsigned() {
					data[i] = byte(-(i % 2)) // -1 fits every signed width
				}
			}
		}
		b, err := c.BufferFromHost(data, shape)
		if err != nil {
			assert.True(t, errors.Is(err, Unimplemented), "%v: %v", dt, err)
			continue
		}
		got, err := b.Bytes(ctxT(t))
		require.NoError(t, err, dt)
		if dt.IsFloat() && dt.Bits() < 16 {
			// Narrow floats may canonicalize NaN encodings; compare values.
			assert.Len(t, got, len(data), dt)
		} else {
			assert.Equal(t, data, got, dt)
		}
		// Copies keep the data.
		d1, err := c.Device(1)
		require.NoError(t, err)
		cp, err := b.CopyToDevice(d1)
		require.NoError(t, err)
		dev, err := cp.Device()
		require.NoError(t, err)
		assert.Equal(t, 1, dev.ID())
		got2, err := cp.Bytes(ctxT(t))
		require.NoError(t, err)
		assert.Equal(t, got, got2, dt)
	}
}

func TestInterpreterBufferStridesMemoriesDelete(t *testing.T) {
	c := openInterpreter(t)
	// A 2x3 f32 array stored column-major: byte strides (4, 8).
	col := []float32{1, 4, 2, 5, 3, 6}
	raw := make([]byte, 4*len(col))
	for i, v := range col {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	b, err := c.BufferFromHost(raw, xla.MakeShape(xla.Float32, 2, 3), WithByteStrides(4, 8))
	require.NoError(t, err)
	got, err := ToSlice[float32](ctxT(t), b)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, got)
	_, err = c.BufferFromHost(raw[:8], xla.MakeShape(xla.Float32, 2, 3), WithByteStrides(4, 8))
	assert.True(t, errors.Is(err, InvalidArgument), "%v", err)

	var pinned *Memory
	for _, m := range c.Memories() {
		if m.Kind() == "pinned_host" {
			pinned = m
		}
	}
	require.NotNil(t, pinned)
	hb, err := b.CopyToMemory(pinned)
	require.NoError(t, err)
	m, err := hb.Memory()
	require.NoError(t, err)
	assert.Equal(t, "pinned_host", m.Kind())
	got, err = ToSlice[float32](ctxT(t), hb)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, got)
	onHost, err := hb.IsOnCPU()
	require.NoError(t, err)
	assert.True(t, onHost)

	require.NoError(t, b.Delete())
	assert.True(t, b.IsDeleted())
	_, err = b.Bytes(ctxT(t))
	assert.Error(t, err)
	err = b.Await(ctxT(t))
	assert.ErrorIs(t, err, FailedPrecondition, "waiting for a deleted buffer")
	assert.ErrorContains(t, err, "deleted")
}

// TestInterpreterAsyncChain feeds outputs that are not ready yet into the
// next execution and reads the end result.
func TestInterpreterAsyncChain(t *testing.T) {
	c := openInterpreter(t)
	exe, err := c.Compile(MLIRText(interpAdd), nil)
	require.NoError(t, err)
	x, err := BufferFrom(c, []float32{1, 1, 1, 1}, []int64{4})
	require.NoError(t, err)
	acc := x
	for i := 0; i < 20; i++ {
		outs, err := exe.Run(acc, x)
		require.NoError(t, err)
		acc = outs[0]
	}
	got, err := ToSlice[float32](ctxT(t), acc)
	require.NoError(t, err)
	assert.Equal(t, []float32{21, 21, 21, 21}, got)
}

func TestInterpreterConcurrentExecutes(t *testing.T) {
	c := openInterpreter(t)
	exe, err := c.Compile(MLIRText(interpAdd), nil)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			f := float32(i)
			a, err := BufferFrom(c, []float32{f, f, f, f}, []int64{4})
			if err != nil {
				errs <- err
				return
			}
			outs, err := exe.Run(a, a)
			if err != nil {
				errs <- err
				return
			}
			got, err := ToSlice[float32](context.Background(), outs[0])
			if err != nil {
				errs <- err
				return
			}
			if got[3] != 2*f {
				errs <- fmt.Errorf("execution %d: got %v", i, got)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

const interpAllReduce = `module @psum attributes {mhlo.num_replicas = %d : i32, mhlo.num_partitions = 1 : i32} {
  func.func public @main(%%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<ui32>) {
    %%0 = "stablehlo.all_reduce"(%%x) ({
    ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):
      %%s = stablehlo.add %%a, %%b : tensor<f32>
      stablehlo.return %%s : tensor<f32>
    }) {replica_groups = dense<%s> : tensor<1x%dxi64>} : (tensor<2xf32>) -> tensor<2xf32>
    %%1 = stablehlo.replica_id : tensor<ui32>
    return %%0, %%1 : tensor<2xf32>, tensor<ui32>
  }
}`

func TestInterpreterCollectives(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := openInterpreter(t, DeviceCount(n))
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprint(i)
			}
			text := fmt.Sprintf(interpAllReduce, n, "[["+strings.Join(ids, ", ")+"]]", n)
			exe, err := c.Compile(MLIRText(text), nil)
			require.NoError(t, err)
			r, err := exe.NumReplicas()
			require.NoError(t, err)
			assert.Equal(t, n, r)
			require.Len(t, exe.AddressableDevices(), n)
			args := make([][]*Buffer, n)
			for d := range args {
				dev := exe.AddressableDevices()[d]
				b, err := BufferFrom(c, []float32{float32(d), 1}, []int64{2}, OnDevice(dev))
				require.NoError(t, err)
				args[d] = []*Buffer{b}
			}
			x, err := exe.Execute(args, ExecuteOptions{CompletionEvents: true})
			require.NoError(t, err)
			require.Len(t, x.Completion, n)
			for d := 0; d < n; d++ {
				require.NoError(t, x.Completion[d].Await(ctxT(t)))
				got, err := ToSlice[float32](ctxT(t), x.Outputs[d][0])
				require.NoError(t, err)
				assert.Equal(t, []float32{float32(n * (n - 1) / 2), float32(n)}, got)
				id, err := ToScalar[uint32](ctxT(t), x.Outputs[d][1])
				require.NoError(t, err)
				assert.Equal(t, uint32(d), id)
				dev, err := x.Outputs[d][0].Device()
				require.NoError(t, err)
				assert.Equal(t, exe.AddressableDevices()[d].ID(), dev.ID())
			}
		})
	}
	t.Run("replicas from compile options", func(t *testing.T) {
		c := openInterpreter(t, DeviceCount(2))
		text := strings.Replace(fmt.Sprintf(interpAllReduce, 1, "[[0, 1]]", 2), "mhlo.num_replicas = 1 : i32, ", "", 1)
		opts := xla.DefaultCompileOptions()
		opts.NumReplicas = 2
		opts.DeviceAssignment = xla.DeviceAssignment{{1}, {0}}
		exe, err := c.Compile(MLIRText(text), &opts)
		require.NoError(t, err)
		assert.Equal(t, 1, exe.AddressableDevices()[0].ID())
		args := [][]*Buffer{nil, nil}
		for d := range args {
			b, err := BufferFrom(c, []float32{float32(d + 1), 0}, []int64{2}, OnDevice(exe.AddressableDevices()[d]))
			require.NoError(t, err)
			args[d] = []*Buffer{b}
		}
		x, err := exe.Execute(args, ExecuteOptions{})
		require.NoError(t, err)
		got, err := ToSlice[float32](ctxT(t), x.Outputs[1][0])
		require.NoError(t, err)
		assert.Equal(t, []float32{3, 0}, got)
	})
}

func TestInterpreterExecutionErrors(t *testing.T) {
	c := openInterpreter(t, DeviceCount(2), WithOption("collective_timeout_ms", int64(60000)))
	t.Run("failed check", func(t *testing.T) {
		exe, err := c.Compile(MLIRText(`func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
  check.expect_eq_const %a, dense<[1, 2]> : tensor<2xi32>
  return %a : tensor<2xi32>
}`), nil)
		require.NoError(t, err)
		a, err := BufferFrom(c, []int32{1, 3}, []int64{2})
		require.NoError(t, err)
		outs, err := exe.Run(a)
		require.NoError(t, err, "Execute returns at once; the error comes with the outputs")
		err = outs[0].Await(ctxT(t))
		require.Error(t, err)
		assert.True(t, errors.Is(err, Internal), "%v", err)
		var pe *Error
		require.True(t, errors.As(err, &pe))
		assert.Contains(t, pe.Msg, "first at index [1]: expected 2, got 3")
		_, err = outs[0].Bytes(ctxT(t))
		assert.Error(t, err)
	})
	t.Run("a failing device cancels its peers", func(t *testing.T) {
		exe, err := c.Compile(MLIRText(fmt.Sprintf(interpAllReduce, 2, "[[0, 1]]", 2)), nil)
		require.NoError(t, err)
		good, err := BufferFrom(c, []float32{1, 2}, []int64{2})
		require.NoError(t, err)
		d1, err := c.Device(1)
		require.NoError(t, err)
		// Device 1's argument failed: its run fails and cancels device 0's
		// (wherever it is: before the all-reduce, or waiting in it).
		bad, err := c.CreateErrorBuffer(xla.MakeShape(xla.Float32, 2), &Error{Code: DataLoss, Msg: "the data was lost"}, OnDevice(d1))
		require.NoError(t, err)
		start := time.Now()
		x, err := exe.Execute([][]*Buffer{{good}, {bad}}, ExecuteOptions{CompletionEvents: true})
		require.NoError(t, err)
		err1 := x.Completion[1].Await(ctxT(t))
		err0 := x.Completion[0].Await(ctxT(t))
		assert.Less(t, time.Since(start), 10*time.Second)
		require.Error(t, err1)
		assert.Contains(t, err1.Error(), "argument 0")
		assert.ErrorIs(t, err1, DataLoss, "the producer's code passes through")
		require.Error(t, err0)
		assert.True(t, errors.Is(err0, Cancelled), "%v", err0)
		assert.Contains(t, err0.Error(), "device 0 (replica 0, partition 0)")
	})
	t.Run("argument count", func(t *testing.T) {
		exe, err := c.Compile(MLIRText(interpAdd), nil)
		require.NoError(t, err)
		a, err := BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4})
		require.NoError(t, err)
		_, err = exe.Run(a)
		assert.True(t, errors.Is(err, InvalidArgument), "%v", err)
	})
	t.Run("an error buffer as argument", func(t *testing.T) {
		exe, err := c.Compile(MLIRText(interpAdd), nil)
		require.NoError(t, err)
		eb, err := c.CreateErrorBuffer(xla.MakeShape(xla.Float32, 4), errors.New("upstream failed"))
		if errors.Is(err, Unimplemented) {
			t.Skip(err)
		}
		require.NoError(t, err)
		outs, err := exe.Run(eb, eb)
		require.NoError(t, err)
		err = outs[0].Await(ctxT(t))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "upstream failed")
	})
}

func TestInterpreterFFIHandlers(t *testing.T) {
	c := openInterpreter(t, DeviceCount(2))
	p := c.Plugin()
	typeID, err := p.RegisterFFIType("halo_test_scale")
	require.NoError(t, err)
	again, err := p.RegisterFFIType("halo_test_scale")
	require.NoError(t, err)
	assert.Equal(t, typeID, again)
	var seen sync.Map
	err = p.RegisterFFIHandler("halo_test_scale", "Host", func(f *FFICallFrame) error {
		in := f.Args[0].Bytes()
		out := f.Rets[0].Bytes()
		scale, err := f.UserData(typeID)
		if err != nil {
			return err
		}
		dev, err := f.Context.DeviceOrdinal()
		if err != nil {
			return err
		}
		seen.Store(dev, f.Attrs["mode"])
		for i := 0; i < len(in); i += 4 {
			v := math.Float32frombits(binary.LittleEndian.Uint32(in[i:]))
			binary.LittleEndian.PutUint32(out[i:], math.Float32bits(v*float32(scale)+float32(f.Attrs["offset"].(int32))))
		}
		return nil
	}, 0)
	require.NoError(t, err)
	exe, err := c.Compile(MLIRText(fmt.Sprintf(`func.func @main(%%x: tensor<2xf32>) -> tensor<2xf32> {
  %%0 = stablehlo.custom_call @halo_test_scale(%%x) {api_version = 4 : i32, has_side_effect = true, backend_config = {halo.callback_id = %d : i64, mode = "affine", offset = 1 : i32}} : (tensor<2xf32>) -> tensor<2xf32>
  return %%0 : tensor<2xf32>
}`, FFICallbackID("halo_test_scale"))), nil)
	require.NoError(t, err)
	xctx, err := c.NewExecuteContext()
	require.NoError(t, err)
	defer xctx.Close()
	require.NoError(t, xctx.AddFFIUserData(typeID, 10))
	d1, err := c.Device(1)
	require.NoError(t, err)
	x, err := BufferFrom(c, []float32{1, 2}, []int64{2}, OnDevice(d1))
	require.NoError(t, err)
	run, err := exe.Execute([][]*Buffer{{x}}, ExecuteOptions{Context: xctx, Device: d1})
	require.NoError(t, err)
	got, err := ToSlice[float32](ctxT(t), run.Outputs[0][0])
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 21}, got)
	mode, ok := seen.Load(1)
	assert.True(t, ok, "the handler saw device 1")
	assert.Equal(t, "affine", mode)

	// Without the user data the handler's error fails the execution.
	run, err = exe.Execute([][]*Buffer{{x}}, ExecuteOptions{Device: d1})
	require.NoError(t, err)
	err = run.Outputs[0][0].Await(ctxT(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "execute context")
}

// BenchmarkInterpreterDispatch measures the cost of one execution of a
// tiny program (an add of two f32[4]) through pjrt (Execute, wait for the
// output, release it) against calling interpreter.Program.Run directly.
func BenchmarkInterpreterDispatch(b *testing.B) {
	c := openInterpreter(b)
	exe, err := c.Compile(MLIRText(interpAdd), nil)
	require.NoError(b, err)
	x, err := BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4})
	require.NoError(b, err)
	ctx := context.Background()
	b.Run("pjrt", func(b *testing.B) {
		b.ReportAllocs()
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
	})
	b.Run("direct", func(b *testing.B) {
		p := directProgram(b, interpAdd)
		t := interpreter.NewTensor(xla.MakeShape(xla.Float32, 4))
		args := []interpreter.Value{t, t}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := p.Run(ctx, interpreter.Device{}, args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func directProgram(b *testing.B, text string) *interpreter.Program {
	m, err := stablehlo.Parse([]byte(text))
	require.NoError(b, err)
	p, err := interpreter.Compile(m, "")
	require.NoError(b, err)
	return p
}

// mlpText is a 2-layer MLP forward pass: relu(x·w1 + b1)·w2 + b2 with x
// 32x256, w1 256x512, w2 512x10, and the sum of the logits per class.
const mlpText = `module @mlp {
  func.func @main(%x: tensor<32x256xf32>, %w1: tensor<256x512xf32>, %b1: tensor<512xf32>, %w2: tensor<512x10xf32>, %b2: tensor<10xf32>) -> (tensor<32x10xf32>, tensor<10xf32>) {
    %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<32x256xf32>, tensor<256x512xf32>) -> tensor<32x512xf32>
    %1 = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<512xf32>) -> tensor<32x512xf32>
    %2 = stablehlo.add %0, %1 : tensor<32x512xf32>
    %z = stablehlo.constant dense<0.0> : tensor<32x512xf32>
    %3 = stablehlo.maximum %2, %z : tensor<32x512xf32>
    %4 = stablehlo.dot_general %3, %w2, contracting_dims = [1] x [0] : (tensor<32x512xf32>, tensor<512x10xf32>) -> tensor<32x10xf32>
    %5 = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<10xf32>) -> tensor<32x10xf32>
    %6 = stablehlo.add %4, %5 : tensor<32x10xf32>
    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<32x10xf32>, tensor<f32>) -> tensor<10xf32>
    return %6, %7 : tensor<32x10xf32>, tensor<10xf32>
  }
}`

// BenchmarkInterpreterMLP runs the MLP end to end through pjrt (transfer
// x, execute, read both outputs back) and directly with Program.Run.
func BenchmarkInterpreterMLP(b *testing.B) {
	c := openInterpreter(b)
	exe, err := c.Compile(MLIRText(mlpText), nil)
	require.NoError(b, err)
	dims := [][]int64{{32, 256}, {256, 512}, {512}, {512, 10}, {10}}
	host := make([][]float32, len(dims))
	bufs := make([]*Buffer, len(dims))
	vals := make([]interpreter.Value, len(dims))
	for i, d := range dims {
		n := int64(1)
		for _, x := range d {
			n *= x
		}
		host[i] = make([]float32, n)
		for k := range host[i] {
			host[i][k] = float32((k*7919+i)%200)/100 - 1
		}
		bufs[i], err = BufferFrom(c, host[i], d)
		require.NoError(b, err)
		t := interpreter.NewTensor(xla.MakeShape(xla.Float32, d...))
		copy(t.Data.([]float32), host[i])
		vals[i] = t
	}
	ctx := context.Background()
	logits := make([]byte, 32*10*4)
	sums := make([]byte, 10*4)
	b.Run("pjrt", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			x, err := BufferFrom(c, host[0], dims[0])
			if err != nil {
				b.Fatal(err)
			}
			args := append([]*Buffer{x}, bufs[1:]...)
			outs, err := exe.Run(args...)
			if err != nil {
				b.Fatal(err)
			}
			if err := outs[0].ToHost(ctx, logits); err != nil {
				b.Fatal(err)
			}
			if err := outs[1].ToHost(ctx, sums); err != nil {
				b.Fatal(err)
			}
			x.Close()
			outs[0].Close()
			outs[1].Close()
		}
	})
	b.Run("direct", func(b *testing.B) {
		p := directProgram(b, mlpText)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := p.Run(ctx, interpreter.Device{}, vals); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInterpreterAllReduce8 executes an all_reduce of f32[1024] over
// 8 simulated devices (8 goroutines meeting at the rendezvous) and waits
// for every device.
func BenchmarkInterpreterAllReduce8(b *testing.B) {
	const n = 8
	c := openInterpreter(b, DeviceCount(n))
	text := `module @psum attributes {mhlo.num_replicas = 8 : i32} {
  func.func public @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>} : (tensor<1024xf32>) -> tensor<1024xf32>
    return %0 : tensor<1024xf32>
  }
}`
	exe, err := c.Compile(MLIRText(text), nil)
	require.NoError(b, err)
	args := make([][]*Buffer, n)
	for d := range args {
		x, err := BufferFrom(c, make([]float32, 1024), []int64{1024}, OnDevice(exe.AddressableDevices()[d]))
		require.NoError(b, err)
		args[d] = []*Buffer{x}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		x, err := exe.Execute(args, ExecuteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for d := range x.Outputs {
			if err := x.Outputs[d][0].Await(ctx); err != nil {
				b.Fatal(err)
			}
			x.Outputs[d][0].Close()
		}
	}
}

func TestInterpreterTokenAndTupleOutputs(t *testing.T) {
	c := openInterpreter(t)
	exe, err := c.Compile(MLIRText(`func.func @main(%x: tensor<2xf32>) -> (!stablehlo.token, tuple<tensor<2xf32>, tensor<2xf32>>) {
  %t = stablehlo.create_token : !stablehlo.token
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  %1 = stablehlo.tuple %x, %0 : tuple<tensor<2xf32>, tensor<2xf32>>
  return %t, %1 : !stablehlo.token, tuple<tensor<2xf32>, tensor<2xf32>>
}`), nil)
	require.NoError(t, err)
	outs, err := exe.Outputs()
	require.NoError(t, err)
	require.Len(t, outs, 3, "the tuple is flattened")
	assert.Equal(t, xla.Invalid, outs[0].Shape.DType)
	x, err := BufferFrom(c, []float32{1, 2}, []int64{2})
	require.NoError(t, err)
	res, err := exe.Run(x)
	require.NoError(t, err)
	require.Len(t, res, 3)
	require.NoError(t, res[0].Await(ctxT(t)))
	n, err := res[0].HostSize()
	require.NoError(t, err)
	assert.Equal(t, int64(0), n)
	got, err := ToSlice[float32](ctxT(t), res[2])
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4}, got)
}

// TestReadBackOfAFailedHugeResult: copying out a result whose computation
// failed (it would not fit in memory) returns the computation's error; the
// copy's memory was allocated first and ended the process.
func TestReadBackOfAFailedHugeResult(t *testing.T) {
	c := openInterpreter(t)
	exe, err := c.Compile(MLIRText(`func.func @main() -> tensor<100000000000xf32> {
  %0 = stablehlo.constant dense<1.0> : tensor<100000000000xf32>
  return %0 : tensor<100000000000xf32>
}`), nil)
	require.NoError(t, err)
	for _, read := range []func(b *Buffer) error{
		func(b *Buffer) error { _, err := ToSlice[float32](ctxT(t), b); return err },
		func(b *Buffer) error { _, err := b.Bytes(ctxT(t)); return err },
	} {
		outs, err := exe.Run()
		require.NoError(t, err)
		err = read(outs[0])
		require.Error(t, err)
		assert.Contains(t, err.Error(), "too large")
	}
}

// hugeBuffer is a backend buffer that says it holds more than 2^63 bytes
// (a plugin's word: halo's interpreter refuses such a type at compile).
type hugeBuffer struct{ backend.Buffer }

func (hugeBuffer) DType() xla.DType         { return xla.Float32 }
func (hugeBuffer) Dims() []int64            { return []int64{3e18} }
func (hugeBuffer) HostSize() (int64, error) { return -6446744073709551616, nil }

// A buffer whose size does not fit an int64 is an error when read, not a
// panic making room for it.
func TestReadingAnImpossiblyLargeBuffer(t *testing.T) {
	c, err := Open("interpreter")
	require.NoError(t, err)
	defer c.Close()
	small, err := BufferFrom(c, []float32{1}, nil)
	require.NoError(t, err)
	b, err := c.newBuffer(hugeBuffer{small.b})
	require.NoError(t, err)
	_, err = b.Bytes(context.Background())
	require.ErrorContains(t, err, "the plugin reports -6446744073709551616 host bytes for tensor<3000000000000000000xf32>")
	_, err = ToSlice[float32](context.Background(), b)
	require.ErrorContains(t, err, "more than 2^63 bytes")

	// The interpreter refuses such a type when compiling.
	_, err = c.Compile(MLIRText(`module {
  func.func @main() -> tensor<3000000000000000000xf32> {
    %0 = stablehlo.constant dense<1.0> : tensor<3000000000000000000xf32>
    return %0 : tensor<3000000000000000000xf32>
  }
}`), nil)
	require.ErrorContains(t, err, "result 0 of type tensor<3000000000000000000xf32> has more than 2^63 bytes")
}

// launchKeepingOnlyTheEvent runs a loop of about a second and returns its
// completion event alone: the client, executable and outputs are dropped.
//
//go:noinline
func launchKeepingOnlyTheEvent(t *testing.T) *Event {
	c, err := Open("interpreter")
	require.NoError(t, err)
	exe, err := c.Compile(MLIRText(`func.func @main() -> tensor<i64> {
  %z = stablehlo.constant dense<0> : tensor<i64>
  %1 = stablehlo.while(%i = %z) : tensor<i64>
    cond {
      %n = stablehlo.constant dense<1000000> : tensor<i64>
      %t = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %j = stablehlo.add %i, %one : tensor<i64>
      stablehlo.return %j : tensor<i64>
    }
  return %1 : tensor<i64>
}`), nil)
	require.NoError(t, err)
	x, err := exe.Execute([][]*Buffer{{}}, ExecuteOptions{CompletionEvents: true})
	require.NoError(t, err)
	return x.Completion[0]
}

// An Event keeps its client: a computation its caller keeps only the
// completion event of runs to its end, though the collector runs (a
// dropped Client's cleanup closes the backend client, which stops what
// runs on it).
func TestEventKeepsItsClient(t *testing.T) {
	ev := launchKeepingOnlyTheEvent(t)
	for range 20 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, ev.Await(context.Background()))
}

// refusingBackend loads but creates no client, as a CUDA plugin on a
// machine without a GPU.
type refusingBackend struct{}

func (refusingBackend) Version() (int, int)              { return 0, 0 }
func (refusingBackend) Attributes() []backend.NamedValue { return nil }
func (refusingBackend) NewClient([]backend.NamedValue) (backend.Client, error) {
	return nil, errors.New("no GPU here")
}

func init() {
	Register("refusing_test_backend", func() (backend.Plugin, error) { return refusingBackend{}, nil })
}

// Open("") passes over a plugin that loads but gives no client: the next
// candidate (here the interpreter) is used; when none gives one, the
// error says why for each.
func TestOpenPassesOverPluginsWithoutClients(t *testing.T) {
	refusing := PluginInfo{Name: "refusing_test_backend", Found: true}
	interp := PluginInfo{Name: "interpreter", Found: true}
	c, err := openFirst([]PluginInfo{refusing, interp}, nil)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "interpreter", c.Plugin().Name())
	_, err = openFirst([]PluginInfo{refusing, interp}, []Option{DeviceCount(0)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no GPU here")
	assert.Contains(t, err.Error(), "device_count")
}

// Programs written for XLA's SPMD partitioner (jax.jit with shardings,
// shard_map lowered for GSPMD or Shardy) are refused at compile, saying
// so: the interpreter would run the global program on every device.
func TestInterpreterRefusesProgramsForThePartitioner(t *testing.T) {
	c := openInterpreter(t, DeviceCount(2))
	spmd := xla.DefaultCompileOptions()
	spmd.NumPartitions, spmd.UseSPMDPartitioning = 2, true
	const sharded = `module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> (tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}`
	_, err := c.Compile(MLIRText(sharded), &spmd)
	require.ErrorIs(t, err, Unimplemented)
	assert.ErrorContains(t, err, `@main argument 0 is sharded {devices=[2]<=[2]}: the interpreter does not run XLA's SPMD partitioner`)
	// Without SPMD partitioning XLA runs the program as written on each
	// partition, as the interpreter does; replicated arguments need no
	// partitioner either.
	mpmd := spmd
	mpmd.UseSPMDPartitioning = false
	exe, err := c.Compile(MLIRText(sharded), &mpmd)
	require.NoError(t, err)
	exe.Close()
	exe, err = c.Compile(MLIRText(strings.ReplaceAll(sharded, "{devices=[2]<=[2]}", "{replicated}")), &spmd)
	require.NoError(t, err)
	exe.Close()

	for _, body := range []string{
		`%0 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @SPMDShardToFullShape(%0) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<4xf32>) -> tensor<8xf32>`,
		`%1 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}]> : tensor<8xf32>`,
	} {
		_, err := c.Compile(MLIRText(`module @jit_f attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    `+body+`
    return %1 : tensor<8xf32>
  }
}`), &spmd)
		require.ErrorIs(t, err, Unimplemented)
		assert.ErrorContains(t, err, "the interpreter does not run XLA's SPMD partitioner")
	}
}

// A device whose collective's peer does not arrive in time (busy in a
// long loop on the other branch) fails with DEADLINE_EXCEEDED, not
// CANCELLED: nobody cancelled it. A peer that finished without reaching
// the collective (the other branch returns at once) fails it with
// FAILED_PRECONDITION at once, naming that peer and the op.
func TestInterpreterCollectiveTimeoutCode(t *testing.T) {
	c := openInterpreter(t, DeviceCount(2), WithOption("collective_timeout_ms", int64(200)))
	program := func(other string) string {
		return `module @m attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = stablehlo.replica_id : tensor<ui32>
    %zero = stablehlo.constant dense<0> : tensor<ui32>
    %first = stablehlo.compare EQ, %r, %zero : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %y = "stablehlo.if"(%first) ({
      %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %t : tensor<f32>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
      stablehlo.return %s : tensor<2xf32>
    }, {
      ` + other + `
    }) : (tensor<i1>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }
}`
	}
	const busy = `%z = stablehlo.constant dense<0> : tensor<i64>
      %n = stablehlo.constant dense<10000000000> : tensor<i64>
      %w:2 = stablehlo.while(%i = %z, %v = %x) : tensor<i64>, tensor<2xf32>
        cond {
          %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %c : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i64>
          %j = stablehlo.add %i, %one : tensor<i64>
          stablehlo.return %j, %v : tensor<i64>, tensor<2xf32>
        }
      stablehlo.return %w#1 : tensor<2xf32>`
	run := func(other string) error {
		exe, err := c.Compile(MLIRText(program(other)), nil)
		require.NoError(t, err)
		defer exe.Close()
		var args [][]*Buffer
		for _, d := range exe.AddressableDevices() {
			x, err := BufferFrom(c, []float32{1, 2}, []int64{2}, OnDevice(d))
			require.NoError(t, err)
			args = append(args, []*Buffer{x})
		}
		x, err := exe.Execute(args, ExecuteOptions{CompletionEvents: true})
		require.NoError(t, err)
		err = x.Completion[0].Await(ctxT(t))
		for _, ev := range x.Completion[1:] {
			_ = ev.Await(ctxT(t)) // device 1 is cancelled after device 0 fails
		}
		return err
	}
	err := run(busy)
	require.Error(t, err)
	assert.ErrorIs(t, err, DeadlineExceeded)
	assert.False(t, errors.Is(err, Cancelled), "%v", err)
	assert.ErrorContains(t, err, "never arrived")

	err = run(`stablehlo.return %x : tensor<2xf32>`)
	require.Error(t, err)
	assert.ErrorIs(t, err, FailedPrecondition)
	assert.ErrorContains(t, err, "device (1, 0) finished without reaching stablehlo.all_reduce (line 7)")
	assert.NotContains(t, err.Error(), "cancelled")
}

// FFI array attributes reach Go handlers on the interpreter as slices of
// their element type, as FFICallFrame.Attrs says and the C-plugin path
// decodes them (array<i8: ...> and array<i16: ...> came as []int64;
// found in review).
func TestFFIAttributeTypesOnInterpreter(t *testing.T) {
	c := openInterpreter(t)
	const target = "halo_test_attr_types"
	var mu sync.Mutex
	types := map[string]string{}
	require.NoError(t, c.Plugin().RegisterFFIHandler(target, "Host", func(f *FFICallFrame) error {
		mu.Lock()
		defer mu.Unlock()
		for k, v := range f.Attrs {
			types[k] = fmt.Sprintf("%T", v)
		}
		copy(f.Rets[0].Bytes(), f.Args[0].Bytes())
		return nil
	}, 0))
	exe, err := c.Compile(MLIRText(fmt.Sprintf(`func.func @main(%%x: tensor<2xf32>) -> tensor<2xf32> {
  %%0 = stablehlo.custom_call @%s(%%x) {api_version = 4 : i32, backend_config = {halo.callback_id = %d : i64, a8 = array<i8: 1, 2>, a16 = array<i16: 3>, a32 = array<i32: 4>, a64 = array<i64: 5>, af = array<f32: 1.0>, ad = array<f64: 2.0>, ab = array<i1: true>, s8 = 1 : i8, s16 = 2 : i16}} : (tensor<2xf32>) -> tensor<2xf32>
  return %%0 : tensor<2xf32>
}`, target, FFICallbackID(target))), nil)
	require.NoError(t, err)
	x, err := BufferFrom(c, []float32{1, 2}, []int64{2})
	require.NoError(t, err)
	outs, err := exe.Run(x)
	require.NoError(t, err)
	require.NoError(t, outs[0].Await(ctxT(t)))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "[]int8", types["a8"])
	assert.Equal(t, "[]int16", types["a16"])
	assert.Equal(t, "[]int32", types["a32"])
	assert.Equal(t, "[]int64", types["a64"])
	assert.Equal(t, "int8", types["s8"])
	assert.Equal(t, "int16", types["s16"])
	assert.Equal(t, "[]float32", types["af"])
	assert.Equal(t, "[]float64", types["ad"])
	assert.Equal(t, "[]bool", types["ab"])
}

// A custom call's result aliased to an operand (output_operand_aliases,
// what jax.ffi.ffi_call's input_output_aliases lowers to) starts, on the
// interpreter as in XLA, as the operand's data: an in-place handler
// updates only what it changes (it started as zeros; found in review).
// The argument itself is not donated.
func TestFFIOutputOperandAliasOnInterpreter(t *testing.T) {
	c := openInterpreter(t)
	const target = "halo_test_set_first"
	require.NoError(t, c.Plugin().RegisterFFIHandler(target, "Host", func(f *FFICallFrame) error {
		for _, r := range f.Rets {
			binary.LittleEndian.PutUint32(r.Bytes(), math.Float32bits(100)) // element 0 only
		}
		return nil
	}, 0))
	exe, err := c.Compile(MLIRText(fmt.Sprintf(`func.func @main(%%x: tensor<4xf32>, %%y: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  %%0 = stablehlo.custom_call @%[1]s(%%x) {api_version = 4 : i32, output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], backend_config = {halo.callback_id = %[2]d : i64}} : (tensor<4xf32>) -> tensor<4xf32>
  %%1:2 = stablehlo.custom_call @%[1]s(%%x, %%y) {api_version = 4 : i32, output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, operand_tuple_indices = []>], backend_config = {halo.callback_id = %[2]d : i64}} : (tensor<4xf32>, tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>)
  return %%0, %%1#1 : tensor<4xf32>, tensor<2xf32>
}`, target, FFICallbackID(target))), nil)
	require.NoError(t, err)
	defer exe.Close()
	x, err := BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4})
	require.NoError(t, err)
	y, err := BufferFrom(c, []float32{5, 6}, []int64{2})
	require.NoError(t, err)
	outs, err := exe.Run(x, y)
	require.NoError(t, err)
	got, err := ToSlice[float32](ctxT(t), outs[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{100, 2, 3, 4}, got)
	got, err = ToSlice[float32](ctxT(t), outs[1])
	require.NoError(t, err)
	assert.Equal(t, []float32{100, 6}, got, "the second result aliases the second operand")
	in, err := ToSlice[float32](ctxT(t), x)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4}, in, "not donated")
}
