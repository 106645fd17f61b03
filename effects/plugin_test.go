package effects

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// realClient opens the PJRT plugin HALO_PLUGIN names (e.g. the CUDA
// plugin's path, or "cuda"), skipping, with the reason, when it is unset:
// the tests below are the GPU validation of the package (callbacks reading
// device arrays through the FFI handler, runtime tokens as tensor<0xi1>).
func realClient(t *testing.T) *pjrt.Client {
	name := os.Getenv("HALO_PLUGIN")
	if name == "" {
		t.Skip("set HALO_PLUGIN to a PJRT plugin (path or cpu/cuda) to run the effects tests on it")
	}
	c, err := pjrt.Open(name)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.True(t, TokenArraysFor(c), "real plugins get tensor<0xi1> runtime tokens")
	return c
}

// On a real plugin: a callback reads a device array and returns one; 1,000
// ordered prints alternate over the plugin's devices in call order.
func TestRealPlugin(t *testing.T) {
	c := realClient(t)
	t.Run("callback reads a device array", func(t *testing.T) {
		var seen []float32
		f := HostFunc{Name: "negate", Results: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
			Fn: func(args []Array) ([]Array, error) {
				v, err := Values[float32](args[0])
				if err != nil {
					return nil, err
				}
				seen = append([]float32(nil), v...)
				for i := range v {
					v[i] = -v[i]
				}
				a, err := ArrayOf(v, 4)
				return []Array{a}, err
			}}
		m := build(t, func(fb *stablehlo.FuncBuilder) {
			y := fb.Multiply(fb.Arg(0), fb.SplatOf(xla.Float32, 2, 4))
			res, err := Callback(fb, f, Ordered("log"), y)
			require.NoError(t, err)
			fb.Return(fb.Add(res[0], fb.SplatOf(xla.Float32, 1, 4)))
		}, stablehlo.Tensor(xla.Float32, 4))
		exe := compile(t, c, m)
		x, err := pjrt.BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4}, pjrt.CopyDuringCall())
		require.NoError(t, err)
		outs, err := Execute(exe, x)
		require.NoError(t, err)
		got, err := pjrt.ToSlice[float32](ctxT(t), outs[0])
		require.NoError(t, err)
		assert.Equal(t, []float32{-1, -3, -5, -7}, got)
		require.NoError(t, Barrier(ctxT(t)))
		assert.Equal(t, []float32{2, 4, 6, 8}, seen)
	})
	// Barrier names a failed callback through the stream's execute
	// context (FFI user data of a type registered once per process: XLA
	// refuses a second registration of the name, once per client).
	t.Run("Barrier reports a failed callback", func(t *testing.T) {
		for range 2 {
			s := NewStream()
			bad := compile(t, c, build(t, func(fb *stablehlo.FuncBuilder) {
				_, err := Callback(fb, HostFunc{Name: "failing", Fn: func([]Array) ([]Array, error) { return nil, errBoom }}, Ordered("log"))
				require.NoError(t, err)
				fb.Return(fb.ScalarOf(xla.Float32, 1))
			}))
			_, err := s.Execute(bad)
			require.NoError(t, err)
			err = s.Barrier(ctxT(t))
			var cerr *CallbackError
			require.ErrorAs(t, err, &cerr, "got %v", err)
			assert.Equal(t, "failing", cerr.Callback)
			assert.ErrorIs(t, err, errBoom)
			require.NoError(t, s.Close(ctxT(t)))
		}
	})
	t.Run("order across devices", func(t *testing.T) {
		var out lines
		exe := printIndex(t, c, &out, Ordered("log"), true)
		devs := c.AddressableDevices()
		s := NewStream()
		want := make([]string, 1000)
		for i := range want {
			d := devs[i%len(devs)]
			_, err := s.ExecuteOn(d, exe, scalar(t, c, int32(i), d))
			require.NoError(t, err)
			want[i] = strconv.Itoa(i)
		}
		require.NoError(t, s.Barrier(ctxT(t)))
		assert.Equal(t, want, out.all())
	})
}
