package pallas

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// TestZeroSizeGathers runs gathers and scatters with no elements, or
// from a ref with none (every element masked off), with checks on and
// off: they are valid kernels and give what NumPy would.
func TestZeroSizeGathers(t *testing.T) {
	x4 := tensor(t, xla.Float32, []float32{10, 11, 12, 13}, 4)
	x0 := interpreter.NewTensor(xla.MakeShape(xla.Float32, 0))
	for _, checks := range []bool{true, false} {
		params := CompilerParams{NoBoundsChecks: !checks}
		for _, c := range []struct {
			name   string
			x      *interpreter.Tensor
			out    int64
			kernel KernelFunc
			want   []float32
		}{
			{"no indices", x4, 0, func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(k.Arange(0))) }, []float32{}},
			{"no indices, masked", x4, 0, func(k *Kernel, r []*Ref) {
				r[1].Store(Load(r[0], []any{k.Arange(0)}, k.Zeros(xla.Bool, 0), 0.0))
			}, []float32{}},
			{"empty ref, all masked", x0, 2, func(k *Kernel, r []*Ref) {
				r[1].Store(Load(r[0], []any{k.Arange(2)}, k.Zeros(xla.Bool, 2), 7.0))
			}, []float32{7, 7}},
			{"scatter of nothing", x4, 4, func(k *Kernel, r []*Ref) {
				r[1].Store(r[0].Load())
				r[1].Store(k.Zeros(xla.Float32, 0), k.Arange(0))
			}, []float32{10, 11, 12, 13}},
		} {
			t.Run(fmt.Sprintf("%s/checks=%v", c.name, checks), func(t *testing.T) {
				spec := CallSpec{Name: "empty", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, c.out)}, Grid: []int64{1}, CompilerParams: params}
				got, err := runCall(c.kernel, spec, c.x)
				require.NoError(t, err)
				assert.Equal(t, c.want, got[0].Data)
			})
		}
	}
	// Unmasked, a gather from an empty ref is out of bounds.
	_, err := runCall(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(k.Arange(2))) },
		CallSpec{Name: "empty", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2)}, Grid: []int64{1}}, x0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "element index (0) outside [0, 0)")
}

// TestElementOfEmptyDim: an unmasked access of an element of an empty
// dim reaches outside the array. The Triton lowering refuses it (a GPU
// would read or write past the buffer); interpret mode builds the call
// and reports the access when it runs, not when a When skips it (a point
// load of an empty dim used to fail the build with the StableHLO
// builder's dynamic_slice error). Masked, both take it.
func TestElementOfEmptyDim(t *testing.T) {
	empty := interpreter.NewTensor(xla.MakeShape(xla.Float32, 0))
	out := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	loads := map[string]KernelFunc{
		"point":  func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(k.ProgramID(0)).BroadcastTo(4)) },
		"gather": func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(k.Arange(4))) },
	}
	for name, kernel := range loads {
		t.Run(name, func(t *testing.T) {
			err := lowerTritonErr(t, tritonCase{kernel: kernel, spec: CallSpec{Name: "empty", OutShapes: out, Grid: []int64{1}}, args: []*interpreter.Tensor{empty}})
			require.ErrorContains(t, err, "outside the array")
		})
	}
	store := tritonCase{kernel: func(k *Kernel, r []*Ref) { r[0].Store(1.0, k.ProgramID(0)) },
		spec: CallSpec{Name: "empty", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 0)}, Grid: []int64{1}}}
	require.ErrorContains(t, lowerTritonErr(t, store), "outside the array")

	// Interpret mode: the load runs only where program < n.
	n := tensor(t, xla.Int32, []int32{0}, 1)
	guarded := func(k *Kernel, r []*Ref) {
		r[2].Store(0.0)
		k.When(k.ProgramID(0).Lt(r[1].Load(0)), func() { r[2].Store(r[0].Load(k.ProgramID(0)).BroadcastTo(4)) })
	}
	spec := CallSpec{Name: "rows", OutShapes: out, Grid: []int64{3}}
	got, err := runCall(guarded, spec, empty, n)
	require.NoError(t, err)
	require.Equal(t, []float32{0, 0, 0, 0}, got[0].Data)
	_, err = runCall(guarded, spec, empty, tensor(t, xla.Int32, []int32{1}, 1))
	var be *BoundsError
	require.ErrorAs(t, err, &be)
	require.Equal(t, []int64{0}, be.Index)
	require.Equal(t, []int64{0}, be.Bounds)

	masked := func(k *Kernel, r []*Ref) {
		r[1].Store(Load(r[0], []any{k.ProgramID(0)}, k.ProgramID(0).Lt(0), 2.0).BroadcastTo(4))
	}
	mc := tritonCase{kernel: masked, spec: CallSpec{Name: "masked", OutShapes: out, Grid: []int64{1}}, args: []*interpreter.Tensor{empty}}
	assertTritonMatchesInterpret(t, mc)
}
