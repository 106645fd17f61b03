package pallas

import (
	"context"
	"math"
	"testing"

	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEvalTriton: the exported evaluator runs a kernel's Triton form and
// returns what interpret mode computes (the vector add, the attention
// case); refuses what the race check refuses and what has no Triton
// lowering; reports a kernel whose outputs depend on the programs' order
// (a race the build-time check cannot see: positions from loaded data);
// and takes float atomic adds, whose sums round in the programs' order.
func TestEvalTriton(t *testing.T) {
	for _, c := range []tritonCase{tritonCases()[0], attentionCase(true)} {
		want, err := runCall(c.kernel, c.spec, c.args...)
		require.NoError(t, err)
		got, err := EvalTriton(c.kernel, c.spec, c.args...)
		require.NoError(t, err, c.name)
		require.Len(t, got, len(want))
		for i := range want {
			assertClose(t, want[i], got[i])
		}
	}

	one := []xla.Shape{xla.MakeShape(xla.Float32, 8)}
	x := fTensor([]int64{8}, func(i int) float64 { return float64(i) })
	// Every program stores the whole output: the race check refuses it.
	_, err := EvalTriton(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Add(k.ProgramID(0).Astype(xla.Float32))) },
		CallSpec{Name: "racy", OutShapes: one, Grid: []int64{2}}, x)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "race")
	// Blocks of 3 have no Triton lowering.
	_, err = EvalTriton(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load()) },
		CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 3)}}, fTensor([]int64{3}, func(int) float64 { return 1 }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "power")
	// Programs that store where loaded data says, all at element 0: the
	// build-time check judges data positions by dependence; the two orders
	// leave different values.
	at := intTensor(xla.Int32, []int64{2}, func(int) int64 { return 0 })
	_, err = EvalTriton(func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		Store(r[1], []any{r[0].Load(p.Add(0))}, p.Astype(xla.Float32), nil)
	}, CallSpec{Name: "data_race", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2)}, Grid: []int64{2}}, at)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kernel "data_race": triton: output 0 differs between the programs run in row-major order and in reverse: they race`)
	_, err = EvalTriton(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load()) }, CallSpec{OutShapes: one}, nil)
	require.EqualError(t, err, "pallas: EvalTriton: argument 0 is nil")
	// A tensor whose data does not fit its shape (it was read as a bad
	// load of the kernel's: found in review).
	short := fTensor([]int64{8}, func(i int) float64 { return 1 })
	short.Data = short.Data.([]float32)[:2]
	_, err = EvalTriton(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load()) }, CallSpec{OutShapes: one}, short)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pallas: EvalTriton: argument 0:")

	// A split-K product of fractions: its f32 sums differ between the two
	// orders (shown on the tests' own runner), and EvalTriton takes it.
	c := splitKCase(16, 16, 64, 16)
	c.args[0] = fTensor([]int64{16, 64}, func(i int) float64 { return math.Sin(float64(i)) / 3 })
	_, outs, back := tevOrders(t, c)
	require.False(t, sameBits(outs[0], back[0]), "the orders round differently")
	got, err := EvalTriton(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	assert.True(t, sameBits(outs[0], got[0]), "the row-major run's outputs")
}

// TestEvalTritonContext: an ended context stops the evaluator between
// programs, with the context's error.
func TestEvalTritonContext(t *testing.T) {
	c := tritonCases()[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := EvalTritonContext(ctx, c.kernel, c.spec, c.args...)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pallas: EvalTriton: context canceled")
	got, err := EvalTritonContext(context.Background(), c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	assert.Len(t, got, 1)
	// A nil context never ends (it crashed the evaluator: review).
	again, err := EvalTritonContext(nil, c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	assert.True(t, sameBits(got[0], again[0]))
}
