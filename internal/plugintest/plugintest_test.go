package plugintest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func TestRunOnTheInterpreterBackend(t *testing.T) {
	// Run works with any client; the built-in interpreter stands in for a
	// plugin here.
	c := interpreterClient(t)
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4), stablehlo.Tensor(xla.Int32, 4))
	fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)), fb.Compare(fb.Arg(1), fb.Arg(1), stablehlo.CompareEQ, stablehlo.CompareAuto))
	m, err := b.Build()
	require.NoError(t, err)
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 4))
	copy(x.Data.([]float32), []float32{1, 2, 3, 4})
	y := interpreter.NewTensor(xla.MakeShape(xla.Int32, 4))
	out, err := Run(context.Background(), c, m, []interpreter.Value{x, y},
		[]xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Bool, 4)})
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, out[0].Data)
	assert.Equal(t, []bool{true, true, true, true}, out[1].Data)

	_, err = Run(context.Background(), c, m, []interpreter.Value{x, y}, []xla.Shape{xla.MakeShape(xla.Float32, 4)})
	assert.ErrorContains(t, err, "2 results, want 1")
}

func TestOpenSkipsWithoutPlugin(t *testing.T) {
	t.Setenv("HALO_PLUGIN", "")
	var skipped bool
	t.Run("needs a plugin", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Open(t, "test the skip")
	})
	assert.True(t, skipped)
}

func TestBFloat16RoundTrip(t *testing.T) {
	c := interpreterClient(t)
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.BFloat16, 3), stablehlo.Tensor(xla.Float16, 3))
	fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)), fb.Multiply(fb.Arg(1), fb.Arg(1)))
	m, err := b.Build()
	require.NoError(t, err)
	x := interpreter.NewTensor(xla.MakeShape(xla.BFloat16, 3))
	copy(x.Data.([]float32), []float32{1.5, -3, 1000})
	y := interpreter.NewTensor(xla.MakeShape(xla.Float16, 3))
	copy(y.Data.([]float32), []float32{0.5, -2, 3})
	out, err := Run(context.Background(), c, m, []interpreter.Value{x, y},
		[]xla.Shape{xla.MakeShape(xla.BFloat16, 3), xla.MakeShape(xla.Float16, 3)})
	require.NoError(t, err)
	assert.Equal(t, []float32{3, -6, 2000}, out[0].Data)
	assert.Equal(t, xla.BFloat16, out[0].Shape.DType)
	assert.Equal(t, []float32{0.25, 4, 9}, out[1].Data)

	// Timed runs the program on buffers already on the device.
	exe, err := Compile(c, m)
	require.NoError(t, err)
	defer exe.Close()
	bufs, err := UploadAll(c, []interpreter.Value{x, y})
	require.NoError(t, err)
	run := Timed(context.Background(), exe, bufs)
	require.NoError(t, run())
	require.NoError(t, run())
	// Queued starts n runs, waits for them all and releases every result.
	live := c.LiveBuffers()
	queue := Queued(context.Background(), exe, bufs)
	require.NoError(t, queue(5))
	assert.Equal(t, live, c.LiveBuffers(), "the queued runs' results are released")
	CloseAll(bufs)
	assert.Error(t, run(), "the arguments are closed")
	assert.Error(t, queue(2), "the arguments are closed")
	assert.Equal(t, live-2, c.LiveBuffers(), "a failed queue leaves nothing behind")
	_, err = UploadAll(c, []interpreter.Value{x, interpreter.Tuple{}})
	assert.ErrorContains(t, err, "argument 1 is interpreter.Tuple, not a tensor")
}

func TestHelpers(t *testing.T) {
	t.Setenv("HALO_TEST_N", "")
	assert.Equal(t, int64(7), EnvInt(t, "HALO_TEST_N", 7))
	t.Setenv("HALO_TEST_N", "4096")
	assert.Equal(t, int64(4096), EnvInt(t, "HALO_TEST_N", 7))

	assert.NoError(t, Close([]float32{1, 100.5}, []float32{1.01, 100}, 0.01))
	assert.EqualError(t, Close([]float32{1, 102}, []float32{1, 100}, 0.01), "element 1: 102, want 100 (tolerance 0.01)")
	assert.Error(t, Close([]float32{1}, []float32{1, 2}, 0.01))
}

func TestCompare(t *testing.T) {
	c := interpreterClient(t)
	build := func(f func(fb *stablehlo.FuncBuilder) *stablehlo.Value) *stablehlo.Module {
		b := stablehlo.NewBuilder("m")
		fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4))
		fb.Return(f(fb))
		m, err := b.Build()
		require.NoError(t, err)
		return m
	}
	twice := build(func(fb *stablehlo.FuncBuilder) *stablehlo.Value { return fb.Add(fb.Arg(0), fb.Arg(0)) })
	double := build(func(fb *stablehlo.FuncBuilder) *stablehlo.Value {
		return fb.Multiply(fb.Arg(0), fb.SplatOf(xla.Float32, 2, 4))
	})
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 4))
	copy(x.Data.([]float32), []float32{1, 2, 3, 4})
	var checked [][]float32
	res := testing.Benchmark(func(b *testing.B) {
		Compare(b, c, twice, []interpreter.Value{x}, double, []interpreter.Value{x}, xla.MakeShape(xla.Float32, 4),
			func(dense, kernel []float32) error {
				checked = [][]float32{dense, kernel}
				return Close(kernel, dense, 0)
			})
	})
	require.Equal(t, [][]float32{{2, 4, 6, 8}, {2, 4, 6, 8}}, checked)
	assert.Contains(t, res.Extra, "dense/kernel")
	assert.Contains(t, res.Extra, "kernel-ms")
	assert.Zero(t, c.LiveBuffers(), "every buffer closed")
}

// interpreterClient is a client of the built-in interpreter, standing in
// for a plugin; closed when t ends.
func interpreterClient(t *testing.T) *pjrt.Client {
	t.Helper()
	c, err := pjrt.Open("interpreter")
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// Every element type the Pallas test kernels use travels both ways with
// its bits intact (the GPU run found ui32, i8, f64 and friends refused).
func TestUploadDownloadEveryType(t *testing.T) {
	c := interpreterClient(t)
	ctx := context.Background()
	for _, dt := range []xla.DType{xla.Bool, xla.Int8, xla.Int16, xla.Int32, xla.Int64, xla.Uint8, xla.Uint16,
		xla.Uint32, xla.Uint64, xla.Float16, xla.BFloat16, xla.Float32, xla.Float64, xla.Complex64} {
		t.Run(dt.String(), func(t *testing.T) {
			s := xla.MakeShape(dt, 2, 3)
			host := make([]byte, s.HostBytes())
			for i := range host {
				host[i] = byte(i*37 + 11)
			}
			if dt == xla.Bool {
				for i := range host {
					host[i] &= 1
				}
			}
			x, err := interpreter.TensorFromHost(s, host)
			require.NoError(t, err)
			b, err := Upload(c, x)
			require.NoError(t, err)
			defer b.Close()
			assert.Equal(t, dt, b.DType())
			got, err := Download(ctx, b, s)
			require.NoError(t, err)
			assert.Equal(t, host, got.Host())
			_, err = Download(ctx, b, xla.MakeShape(xla.Int32, 2, 3))
			if dt != xla.Int32 {
				assert.ErrorContains(t, err, "want tensor<2x3xi32>")
			}
			_, err = Download(ctx, b, xla.MakeShape(dt, 3, 2))
			assert.ErrorContains(t, err, "want "+xla.MakeShape(dt, 3, 2).String())
		})
	}
}

func TestConfigs(t *testing.T) {
	t.Setenv("HALO_TEST_CONFIGS", "bn=256,warps=8,stages=2 bm=128,bn=128,bk=64,group=8 bn=128,tiles=4,order=1 bn=128,programs=264")
	cs := Configs(t, "HALO_TEST_CONFIGS", "bn=64")
	require.Equal(t, []Config{{BN: 256, Warps: 8, Stages: 2}, {BM: 128, BN: 128, BK: 64, Group: 8}, {BN: 128, Tiles: 4, Order: 1}, {BN: 128, Programs: 264}}, cs)
	assert.Equal(t, "bn256_w8_s2", cs[0].String())
	assert.Equal(t, "bm128_bn128_bk64_g8", cs[1].String())
	assert.Equal(t, "bn128_t4_o1", cs[2].String())
	assert.Equal(t, "bn128_p264", cs[3].String())
	assert.Equal(t, "default", Config{}.String())
	t.Setenv("HALO_TEST_CONFIGS", "")
	assert.Equal(t, []Config{{BN: 64}}, Configs(t, "HALO_TEST_CONFIGS", "bn=64"))
	for _, bad := range []string{"bn=0", "bn", "rows=4", "bn=x", "order=2", "programs=-1"} {
		t.Setenv("HALO_TEST_CONFIGS", bad)
		failed := false
		t.Run(bad, func(t *testing.T) {
			ft := &fatalRecorder{TB: t}
			func() {
				defer func() { recover() }()
				Configs(ft, "HALO_TEST_CONFIGS", "")
			}()
			failed = ft.failed
		})
		assert.True(t, failed, "%q is refused", bad)
	}
}

// fatalRecorder records Fatalf instead of ending the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
func (f *fatalRecorder) Helper()               {}

func TestSweepChecksEachVariantAndSkipsWhatDoesNotFit(t *testing.T) {
	c := interpreterClient(t)
	build := func(scale float64) *stablehlo.Module {
		b := stablehlo.NewBuilder("m")
		fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4))
		fb.Return(fb.Multiply(fb.Arg(0), fb.SplatOf(xla.Float32, scale, 4)))
		m, err := b.Build()
		require.NoError(t, err)
		return m
	}
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 4))
	copy(x.Data.([]float32), []float32{1, 2, 3, 4})
	var checks int
	var built []string
	variant := func(name string, scale float64, err error) Variant {
		return Variant{Name: name, Build: func() (*stablehlo.Module, []interpreter.Value, error) {
			built = append(built, name)
			return build(scale), []interpreter.Value{x}, err
		}}
	}
	var failed bool
	testing.Benchmark(func(b *testing.B) {
		defer func() { failed = b.Failed() }()
		Sweep(b, c, build(2), []interpreter.Value{x}, xla.MakeShape(xla.Float32, 4), func(dense, kernel []float32) error {
			checks++
			return Close(kernel, dense, 0)
		}, variant("same", 2, nil), variant("too_big", 2, fmt.Errorf("%w: blocks of 8", ErrDoesNotFit)), variant("again", 2, nil))
	})
	assert.Equal(t, []string{"same", "too_big", "again"}, built)
	assert.Equal(t, 2, checks, "the variant that does not fit is neither checked nor timed")
	assert.False(t, failed, "the sweep did not fail")
	assert.Zero(t, c.LiveBuffers(), "every buffer closed")
}

func TestPluginOptions(t *testing.T) {
	opts, err := PluginOptions("allocator=platform, preallocate=false,memory_fraction=0.5,device_count=2,")
	if err != nil {
		t.Fatal(err)
	}
	want := []pjrt.Option{{Name: "allocator", Value: "platform"}, {Name: "preallocate", Value: false},
		{Name: "memory_fraction", Value: float32(0.5)}, {Name: "device_count", Value: int64(2)}}
	if !reflect.DeepEqual(opts, want) {
		t.Fatalf("got %#v, want %#v", opts, want)
	}
	if opts, err := PluginOptions(""); err != nil || len(opts) != 0 {
		t.Fatalf("empty: %v %v", opts, err)
	}
	for _, bad := range []string{"preallocate", "=1"} {
		if _, err := PluginOptions(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
