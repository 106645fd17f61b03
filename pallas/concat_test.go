package pallas

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// Concatenate and Stack (jnp.concatenate, jnp.stack): blocks joined along
// either axis, four at once, stacked along a new last axis (interleaved),
// and bool masks joined. concatCases are part of tritonCases (interpret
// mode against the TTIR evaluator in both program orders, mlir-opt, the
// IR reference evaluator, a real GPU with HALO_PLUGIN); TestConcatenate
// checks them against Go.

// concatKernel gets (4, 8) blocks v of x and stores: out 0 [v, 2v] along
// axis 1 (4, 16); out 1 [v; -v] along axis 0 (8, 8); out 2 Stack(-1, v,
// v+1) as (4, 16) (v and v+1 interleaved); out 3 [v; v+1; v+2; v+3]
// along axis 0 (16, 8); out 4 where [v > 0, v < 0] along axis 1 (4, 16),
// 1 else 0.
func concatKernel(k *Kernel, r []*Ref) {
	v := r[0].Load()
	r[1].Store(Concatenate(1, v, v.Mul(2)))
	r[2].Store(Concatenate(0, v, v.Neg()))
	r[3].Store(Stack(-1, v, v.Add(1)).Reshape(4, 16))
	r[4].Store(Concatenate(0, v, v.Add(1), v.Add(2), v.Add(3)))
	r[5].Store(Where(Concatenate(-1, v.Gt(0), v.Lt(0)), 1.0, 0.0))
}

func concatCases() []tritonCase {
	block := func(bm, bn int64) *BlockSpec {
		return &BlockSpec{BlockShape: []int64{bm, bn}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1]} })}
	}
	f32 := func(m, n int64) xla.Shape { return xla.MakeShape(xla.Float32, m, n) }
	return []tritonCase{{
		name:   "concatenate",
		kernel: concatKernel,
		spec: CallSpec{
			Name:      "concatenate",
			OutShapes: []xla.Shape{f32(8, 32), f32(16, 16), f32(8, 32), f32(32, 16), f32(8, 32)},
			Grid:      []int64{2, 2},
			InSpecs:   []*BlockSpec{block(4, 8)},
			OutSpecs:  []*BlockSpec{block(4, 16), block(8, 8), block(4, 16), block(16, 8), block(4, 16)},
		},
		args: []*interpreter.Tensor{concatInput()},
	}}
}

// concatInput is (8, 16) f32 of small values of both signs and zeros.
func concatInput() *interpreter.Tensor {
	return fTensor([]int64{8, 16}, func(i int) float64 { return float64(i%7-3) / 4 })
}

// concatWant computes concatKernel's outputs in Go, block by block.
func concatWant() [5][]float32 {
	x := concatInput().Data.([]float32)
	var out [5][]float32
	dims := [5][2]int{{8, 32}, {16, 16}, {8, 32}, {32, 16}, {8, 32}}
	for i := range out {
		out[i] = make([]float32, dims[i][0]*dims[i][1])
	}
	for g0 := 0; g0 < 2; g0++ {
		for g1 := 0; g1 < 2; g1++ {
			v := func(i, j int) float32 { return x[(4*g0+i)*16+8*g1+j] }
			set := func(o, bm, bn, i, j int, val float32) {
				out[o][(bm*g0+i)*dims[o][1]+bn*g1+j] = val
			}
			for i := 0; i < 4; i++ {
				for j := 0; j < 8; j++ {
					a := v(i, j)
					set(0, 4, 16, i, j, a)
					set(0, 4, 16, i, j+8, 2*a)
					set(1, 8, 8, i, j, a)
					set(1, 8, 8, i+4, j, -a)
					set(2, 4, 16, i, 2*j, a)
					set(2, 4, 16, i, 2*j+1, a+1)
					for q := 0; q < 4; q++ {
						set(3, 16, 8, i+4*q, j, a+float32(q))
					}
					set(4, 4, 16, i, j, b2f(a > 0))
					set(4, 4, 16, i, j+8, b2f(a < 0))
				}
			}
		}
	}
	return out
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

func TestConcatenate(t *testing.T) {
	c := concatCases()[0]
	want := concatWant()
	got, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	_, tev, back := tevOrders(t, c)
	for name, outs := range map[string][]*interpreter.Tensor{"interpret": got, "TTIR": tev, "TTIR reversed": back} {
		for i := range want {
			assert.Equal(t, want[i], outs[i].Data, "%s: output %d", name, i)
		}
	}
}

// The TTIR pairs blocks with tt.join, moves the pair's dim before the axis
// and merges it: four blocks take three joins.
func TestConcatenateTTIR(t *testing.T) {
	c := concatCases()[0]
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	assert.Equal(t, 1+1+1+3+1, strings.Count(k.IR, `"tt.join"`), k.IR)
	assert.Contains(t, k.IR, `"tt.join"(%`)
	assert.Regexp(t, `"tt.join"\(%\w+, %\w+\) : \(tensor<4x8xf32>, tensor<4x8xf32>\) -> tensor<4x8x2xf32>`, k.IR)
	// Along axis 1: (4, 8, 2) -> (4, 2, 8) -> (4, 16).
	assert.Regexp(t, `"tt.trans"\(%\w+\) <\{order = array<i32: 0, 2, 1>\}> : \(tensor<4x8x2xf32>\) -> tensor<4x2x8xf32>`, k.IR)
	// Along axis 0: (4, 8, 2) -> (2, 4, 8) -> (8, 8).
	assert.Regexp(t, `"tt.trans"\(%\w+\) <\{order = array<i32: 2, 0, 1>\}> : \(tensor<4x8x2xf32>\) -> tensor<2x4x8xf32>`, k.IR)
}

// The race check computes integer index arrays through Concatenate
// element by element.
func TestConcatenateRaceCheck(t *testing.T) {
	spec := CallSpec{Name: "concat_race", Grid: []int64{2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}}
	// Program p stores at [sp, sp+4) and [sp+8, sp+12): programs 0 and 1
	// meet at 2 and 3 for s = 2, not for s = 4.
	kernel := func(s int) KernelFunc {
		return func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			a := k.Arange(4).Add(p.Mul(s))
			idx := Concatenate(0, a, a.Add(8))
			Store(r[0], []any{idx}, p.Astype(xla.Float32).Add(1).BroadcastTo(8), nil)
		}
	}
	assertRefusedRace(t, tritonCase{name: "concat_race", kernel: kernel(2), spec: spec}, "both reach its element (2)")
	c := tritonCase{name: "concat_race", kernel: kernel(4), spec: spec}
	assertTritonMatchesInterpret(t, c)
	got, err := runCall(c.kernel, c.spec)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2}, got[0].Data)
}

func TestConcatenateMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8, 4)}}
	tri := spec
	tri.Backend = Triton
	f := func(k *Kernel) *Value { return k.Zeros(xla.Float32, 4, 4) }
	var nilValue *Value
	runMisuseCases(t, []misuseCase{
		{name: "dtypes differ", kernel: func(k *Kernel, r []*Ref) { Concatenate(0, f(k), f(k).Astype(xla.Int32)) }, spec: spec,
			want: []string{"concatenate at concat_test.go:", "operand 1 is i32[4,4], operand 0 f32[4,4]: they must agree but along axis 0"}},
		{name: "other dims differ", kernel: func(k *Kernel, r []*Ref) { Concatenate(0, f(k), k.Zeros(xla.Float32, 4, 2)) }, spec: spec,
			want: []string{"operand 1 is f32[4,2], operand 0 f32[4,4]"}},
		{name: "ranks differ", kernel: func(k *Kernel, r []*Ref) { Concatenate(0, f(k), k.Zeros(xla.Float32, 4)) }, spec: spec,
			want: []string{"operand 1 is f32[4], operand 0 f32[4,4]"}},
		{name: "bad axis", kernel: func(k *Kernel, r []*Ref) { Concatenate(2, f(k), f(k)) }, spec: spec,
			want: []string{"concatenate at concat_test.go:", "bad axis 2 for rank 2"}},
		{name: "scalars", kernel: func(k *Kernel, r []*Ref) { Concatenate(0, f(k).Sum(), f(k).Sum()) }, spec: spec,
			want: []string{"bad axis 0 for rank 0 (scalars have no axis to join along: ExpandDims them)"}},
		{name: "nothing", kernel: func(k *Kernel, r []*Ref) { Concatenate(0) }, spec: spec,
			want: []string{"concatenate", "no values to concatenate"}},
		{name: "a nil value", kernel: func(k *Kernel, r []*Ref) { Concatenate(0, f(k), nilValue) }, spec: spec,
			want: []string{"concatenate at concat_test.go:", "operand 1 is nil"}},
		{name: "stack of different shapes", kernel: func(k *Kernel, r []*Ref) { Stack(0, f(k), k.Zeros(xla.Float32, 2, 8)) }, spec: spec,
			want: []string{"stack at concat_test.go:", "operand 1 is f32[2,8], operand 0 f32[4,4]: they must have one type"}},
		{name: "stack axis past the result's rank", kernel: func(k *Kernel, r []*Ref) { Stack(3, f(k), f(k)) }, spec: spec,
			want: []string{"stack at concat_test.go:", "bad axis 3 for a result of rank 3"}},
		{name: "a joined dim past int64", kernel: func(k *Kernel, r []*Ref) {
			h := k.Zeros(xla.Int32, 1<<62)
			Concatenate(0, h, h, h, h)
		}, spec: spec, want: []string{"concatenate at concat_test.go:", "the joined axis 0 of 4 values of i32[4611686018427387904] overflows int64"}},
		{name: "three blocks on Triton", kernel: func(k *Kernel, r []*Ref) {
			r[0].Store(Concatenate(0, f(k), k.Zeros(xla.Float32, 2, 4), k.Zeros(xla.Float32, 2, 4)))
		}, spec: tri, want: []string{"triton: concatenate at concat_test.go:", "power-of-two count of blocks", "not 3"}},
		{name: "three equal blocks on Triton", kernel: func(k *Kernel, r []*Ref) {
			// The count is named, not only the result's shape (review).
			z := k.Zeros(xla.Float32, 4, 4)
			r[0].Store(Concatenate(0, z, z, z).SliceAxis(0, 0, 8))
		}, spec: tri, want: []string{"triton: concatenate at concat_test.go:", "power-of-two count of blocks", "not 3"}},
		{name: "unequal blocks on Triton", kernel: func(k *Kernel, r []*Ref) {
			z := func(n int64) *Value { return k.Zeros(xla.Float32, n, 4) }
			r[0].Store(Concatenate(0, z(1), z(1), z(2), z(4)))
		}, spec: tri, want: []string{"triton: concatenate at concat_test.go:", "blocks of one shape", "not f32[1,4] and f32[2,4]"}},
	})
	// Interpret mode joins what Triton refuses.
	for _, n := range []int64{2, 6} {
		got, err := runCall(func(k *Kernel, r []*Ref) {
			r[0].Store(Concatenate(0, k.Full(xla.Float32, 1.0, 8-n, 4), k.Full(xla.Float32, 2.0, n, 4)))
		}, spec)
		require.NoError(t, err)
		d := got[0].Data.([]float32)
		assert.Equal(t, float32(1), d[4*(8-n)-1])
		assert.Equal(t, float32(2), d[4*(8-n)])
		assert.False(t, math.IsNaN(float64(d[31])))
	}
}
