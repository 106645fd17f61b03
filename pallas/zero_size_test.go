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
