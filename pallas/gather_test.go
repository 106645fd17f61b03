package pallas

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// TakeAlongAxis (jnp.take_along_axis, clip mode): a permutation of each
// row, rows picked along the first axis with positions outside clamped
// (negative ones counted from the end first, as in JAX), a lookup at
// positions computed from the data, and positions of i8, u8 and i64
// (saturated into i32 first: none wraps). gatherCase is part of tritonCases
// (interpret mode against the TTIR evaluator in both program orders,
// mlir-opt, the IR reference evaluator, a real GPU with HALO_PLUGIN);
// TestTakeAlongAxis checks it against Go.

// gatherKernel gets a (4, 16) block v and stores: out 0 v[i, (5j+3) % 16];
// out 1 v[clamp(3i-2), j]; out 2 v[i, clamp(int(8·v[i,j]))]; out 3 the
// same through i8 positions 20j - 40 (many past the row); out 4 through
// u8 positions 16j; out 5 through i64 positions j·2^40 - 1 (-1, the
// last, then saturated: none wraps in i32).
func gatherKernel(k *Kernel, r []*Ref) {
	v := r[0].Load()
	row := k.Iota(xla.Int32, 1, 4, 16)
	r[1].Store(TakeAlongAxis(v, row.Mul(5).Add(3).Rem(16), 1))
	r[2].Store(TakeAlongAxis(v, k.Iota(xla.Int32, 0, 4, 16).Mul(3).Sub(2), 0))
	r[3].Store(TakeAlongAxis(v, v.Mul(8).Astype(xla.Int32), -1))
	r[4].Store(TakeAlongAxis(v, k.Iota(xla.Int8, 1, 4, 16).Mul(20).Sub(40), 1))
	r[5].Store(TakeAlongAxis(v, k.Iota(xla.Uint8, 1, 4, 16).Mul(16), 1))
	r[6].Store(TakeAlongAxis(v, k.Iota(xla.Int64, 1, 4, 16).Mul(int64(1)<<40).Sub(1), 1))
}

func gatherCase() tritonCase {
	rows := &BlockSpec{BlockShape: []int64{4, 16}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}
	f32 := xla.MakeShape(xla.Float32, 8, 16)
	return tritonCase{
		name:   "take_along_axis",
		kernel: gatherKernel,
		spec: CallSpec{
			Name:      "take_along_axis",
			OutShapes: []xla.Shape{f32, f32, f32, f32, f32, f32},
			Grid:      []int64{2},
			InSpecs:   []*BlockSpec{rows},
			OutSpecs:  []*BlockSpec{rows, rows, rows, rows, rows, rows},
		},
		args: []*interpreter.Tensor{fTensor([]int64{8, 16}, func(i int) float64 { return float64(i*7%19-2) / 8 })},
	}
}

func TestTakeAlongAxis(t *testing.T) {
	c := gatherCase()
	x := c.args[0].Data.([]float32)
	clamp := func(p, n int64) int64 { // as JAX: a negative position counts from the end, then clipped
		if p < 0 {
			p += n
		}
		return max(0, min(p, n-1))
	}
	want := make([][]float32, 6)
	for o := range want {
		want[o] = make([]float32, 8*16)
	}
	for g := 0; g < 2; g++ {
		v := func(i, j int64) float32 { return x[(4*int64(g)+i)*16+j] }
		for i := int64(0); i < 4; i++ {
			for j := int64(0); j < 16; j++ {
				at := (4*int64(g)+i)*16 + j
				want[0][at] = v(i, (5*j+3)%16)
				want[1][at] = v(clamp(3*i-2, 4), j)
				want[2][at] = v(i, clamp(int64(8*v(i, j)), 16)) // int() truncates, as Astype
				want[3][at] = v(i, clamp(int64(int8(20*j-40)), 16))
				want[4][at] = v(i, clamp(int64(uint8(16*j)), 16))
				want[5][at] = v(i, clamp(j<<40-1, 16))
			}
		}
	}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		for o := range want {
			assert.Equal(t, want[o], got[o].Data, "%s: output %d", backend, o)
		}
	})
}

// On Triton the gather is one tt.gather of i32 positions.
func TestTakeAlongAxisTTIR(t *testing.T) {
	c := gatherCase()
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	assert.Regexp(t, `"tt.gather"\(%\w+, %\w+\) <\{axis = 1 : i32\}> : \(tensor<4x16xf32>, tensor<4x16xi32>\) -> tensor<4x16xf32>`, k.IR)
	assert.Regexp(t, `"tt.gather"\(%\w+, %\w+\) <\{axis = 0 : i32\}> : \(tensor<4x16xf32>, tensor<4x16xi32>\) -> tensor<4x16xf32>`, k.IR)
}

// Positions through a gather are computed by the race check: a store at
// a table's entries, looked up per program, that two programs share.
func TestTakeAlongAxisRaceCheck(t *testing.T) {
	spec := CallSpec{Name: "gather_race", Grid: []int64{2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}}
	// The table [0, 2, 4, 6, 1, 3, 5, 0] + 8ps read at [2p, 2p+4): program
	// 0 stores at 0, 2, 4, 6, program 1 at 4, 6, 1, 3 (s = 0: they meet)
	// or 12, 14, 9, 11 (s = 1).
	kernel := func(s int) KernelFunc {
		return func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			table := k.Arange(8).Mul(2).Rem(7).Add(p.Mul(8 * s))
			idx := TakeAlongAxis(table, k.Arange(4).Add(p.Mul(2)), 0)
			Store(r[0], []any{idx}, p.Astype(xla.Float32).Add(1).BroadcastTo(4), nil)
		}
	}
	assertRefusedRace(t, tritonCase{name: "gather_race", kernel: kernel(0), spec: spec}, "both reach its element")
	c := tritonCase{name: "gather_race", kernel: kernel(1), spec: spec}
	assertTritonMatchesInterpret(t, c)
	got, err := runCall(c.kernel, c.spec)
	require.NoError(t, err)
	d := got[0].Data.([]float32)
	assert.Equal(t, []float32{1, 1, 1, 1, 2, 2, 2, 2}, []float32{d[0], d[2], d[4], d[6], d[9], d[11], d[12], d[14]})
}

func TestTakeAlongAxisMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)}}
	z := func(k *Kernel) *Value { return k.Zeros(xla.Float32, 4, 4) }
	runMisuseCases(t, []misuseCase{
		{name: "float positions", kernel: func(k *Kernel, r []*Ref) { TakeAlongAxis(z(k), z(k), 0) }, spec: spec,
			want: []string{"take_along_axis at gather_test.go:", "positions are f32[4,4], not integers"}},
		{name: "other dims differ", kernel: func(k *Kernel, r []*Ref) { TakeAlongAxis(z(k), k.Zeros(xla.Int32, 2, 2), 0) }, spec: spec,
			want: []string{"positions i32[2,2] for f32[4,4]: they need its rank and its dims but along axis 0"}},
		{name: "ranks differ", kernel: func(k *Kernel, r []*Ref) { TakeAlongAxis(z(k), k.Zeros(xla.Int32, 4), 0) }, spec: spec,
			want: []string{"positions i32[4] for f32[4,4]"}},
		{name: "bad axis", kernel: func(k *Kernel, r []*Ref) { TakeAlongAxis(z(k), k.Zeros(xla.Int32, 4, 4), -3) }, spec: spec,
			want: []string{"take_along_axis at gather_test.go:", "bad axis -3 for rank 2"}},
		{name: "an empty axis", kernel: func(k *Kernel, r []*Ref) {
			TakeAlongAxis(k.Zeros(xla.Float32, 4, 0), k.Zeros(xla.Int32, 4, 2), 1)
		}, spec: spec, want: []string{"axis 1 of f32[4,0] has no elements to take"}},
		{name: "nil positions", kernel: func(k *Kernel, r []*Ref) { TakeAlongAxis(z(k), nil, 0) }, spec: spec,
			want: []string{"take_along_axis at gather_test.go:", "operand 1 is nil"}},
	})
	// Fewer positions than the axis holds (and more) are fine.
	got, err := runCall(func(k *Kernel, r []*Ref) {
		x := k.Iota(xla.Float32, 1, 4, 8)
		r[0].Store(TakeAlongAxis(x, k.Iota(xla.Int32, 1, 4, 4).Mul(2), 1))
	}, spec)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 2, 4, 6}, got[0].Data.([]float32)[:4])
}

// Rows of a table (table[ids]) through TakeAlongAxis, the ids broadcast
// along the row, as docs/pallas.md shows, on every backend.
func TestTakeAlongAxisRows(t *testing.T) {
	c := tritonCase{
		name: "table_rows",
		kernel: func(k *Kernel, r []*Ref) {
			ids := r[1].Load() // (4,) i32
			r[2].Store(TakeAlongAxis(r[0].Load(), ids.ExpandDims(1).BroadcastTo(4, 8), 0))
		},
		spec: CallSpec{Name: "table_rows", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 8)}},
		args: []*interpreter.Tensor{
			fTensor([]int64{16, 8}, func(i int) float64 { return float64(i) }),
			tensor(t, xla.Int32, []int32{3, 0, 15, 3}, 4),
		},
	}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		d := got[0].Data.([]float32)
		for i, id := range []int{3, 0, 15, 3} {
			for j := 0; j < 8; j++ {
				require.Equal(t, float32(id*8+j), d[i*8+j], "%s: row %d", backend, i)
			}
		}
	})
}

// A gather of nothing (a dim other than the axis is empty) is an empty
// result in interpret mode too (the stablehlo.gather it built was refused).
func TestTakeAlongAxisEmpty(t *testing.T) {
	got, err := runCall(func(k *Kernel, r []*Ref) {
		r[0].Store(TakeAlongAxis(k.Zeros(xla.Float32, 0, 8), k.Zeros(xla.Int32, 0, 1), 1))
	}, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 0, 1)}})
	require.NoError(t, err)
	assert.Empty(t, got[0].Data)
}
