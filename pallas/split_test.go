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

// Split (jnp.split into equal parts): halves of the last axis swapped and
// combined (the shape of a rotary embedding), rows reversed through four
// parts of the first axis, and eight pairs of a vector. splitCase is part
// of tritonCases (interpret mode against the TTIR evaluator in both
// program orders, mlir-opt, the IR reference evaluator, a real GPU with
// HALO_PLUGIN); TestSplit checks it against Go.

// splitKernel gets a (4, 16) block v of x and stores: out 0 [v2, v1]
// (its halves along axis 1 swapped); out 1 [v1·c - v2·s, v2·c + v1·s]
// for c = 0.5, s = 0.25 (a rotation of the halves); out 2 v's rows in
// reverse order (Split(v, 0, 4) concatenated backward); out 3 the sums of
// the 8 pairs of v's first row, broadcast to 4 rows and repeated.
func splitKernel(k *Kernel, r []*Ref) {
	v := r[0].Load()
	h := Split(v, -1, 2)
	r[1].Store(Concatenate(1, h[1], h[0]))
	r[2].Store(Concatenate(1, h[0].Mul(0.5).Sub(h[1].Mul(0.25)), h[1].Mul(0.5).Add(h[0].Mul(0.25))))
	rows := Split(v, 0, 4)
	r[3].Store(Concatenate(0, rows[3], rows[2], rows[1], rows[0]))
	pairs := Split(rows[0].Reshape(16), 0, 8)
	sums := make([]*Value, len(pairs))
	for i, p := range pairs {
		sums[i] = p.Sum().Reshape(1)
	}
	s := Concatenate(0, sums...).ExpandDims(0) // (1, 8)
	r[4].Store(Concatenate(1, s, s).BroadcastTo(4, 16))
}

func splitCase() tritonCase {
	rows := &BlockSpec{BlockShape: []int64{4, 16}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}
	f32 := xla.MakeShape(xla.Float32, 8, 16)
	return tritonCase{
		name:   "split",
		kernel: splitKernel,
		spec: CallSpec{
			Name:      "split",
			OutShapes: []xla.Shape{f32, f32, f32, f32},
			Grid:      []int64{2},
			InSpecs:   []*BlockSpec{rows},
			OutSpecs:  []*BlockSpec{rows, rows, rows, rows},
		},
		args: []*interpreter.Tensor{fTensor([]int64{8, 16}, func(i int) float64 { return float64(i%13-6) / 8 })},
	}
}

func TestSplit(t *testing.T) {
	c := splitCase()
	x := c.args[0].Data.([]float32)
	want := make([][]float32, 4)
	for o := range want {
		want[o] = make([]float32, 8*16)
	}
	for g := 0; g < 2; g++ {
		v := func(i, j int) float32 { return x[(4*g+i)*16+j] }
		for i := 0; i < 4; i++ {
			at := (4*g + i) * 16
			for j := 0; j < 8; j++ {
				a, b := v(i, j), v(i, j+8)
				want[0][at+j], want[0][at+j+8] = b, a
				want[1][at+j], want[1][at+j+8] = a*0.5-b*0.25, b*0.5+a*0.25
				want[3][at+j] = v(0, 2*j) + v(0, 2*j+1)
				want[3][at+j+8] = want[3][at+j]
			}
			for j := 0; j < 16; j++ {
				want[2][at+j] = v(3-i, j)
			}
		}
	}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		for o := range want {
			assert.Equal(t, want[o], got[o].Data, "%s: output %d", backend, o)
		}
	})
}

// The TTIR halves with tt.reshape, tt.trans and tt.split: a half of the
// last axis takes one split, a quarter of the first two.
func TestSplitTTIR(t *testing.T) {
	c := splitCase()
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	assert.Regexp(t, `%\w+:2 = "tt.split"\(%\w+\) : \(tensor<4x8x2xf32>\) -> \(tensor<4x8xf32>, tensor<4x8xf32>\)`, k.IR)
	assert.Regexp(t, `"tt.trans"\(%\w+\) <\{order = array<i32: 0, 2, 1>\}> : \(tensor<4x2x8xf32>\) -> tensor<4x8x2xf32>`, k.IR)
	assert.Regexp(t, `"tt.trans"\(%\w+\) <\{order = array<i32: 1, 2, 0>\}> : \(tensor<2x2x16xf32>\) -> tensor<2x16x2xf32>`, k.IR)
	assert.Positive(t, strings.Count(k.IR, `"tt.split"`))
}

// The race check follows index arrays through Split parts.
func TestSplitRaceCheck(t *testing.T) {
	spec := CallSpec{Name: "split_race", Grid: []int64{2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}}
	// Program p stores at the second half of [sp, sp+8): programs 0 and 1
	// meet at 4..7 for s = 0, not for s = 8.
	kernel := func(s int) KernelFunc {
		return func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			idx := Split(k.Arange(8).Add(p.Mul(s)), 0, 2)[1]
			Store(r[0], []any{idx}, p.Astype(xla.Float32).Add(1).BroadcastTo(4), nil)
		}
	}
	assertRefusedRace(t, tritonCase{name: "split_race", kernel: kernel(0), spec: spec}, "both reach its element (4)")
	c := tritonCase{name: "split_race", kernel: kernel(8), spec: spec}
	assertTritonMatchesInterpret(t, c)
	got, err := runCall(c.kernel, c.spec)
	require.NoError(t, err)
	d := got[0].Data.([]float32)
	assert.Equal(t, []float32{1, 1, 1, 1}, d[4:8])
	assert.Equal(t, []float32{2, 2, 2, 2}, d[12:16])
}

func TestSplitMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)}}
	z := func(k *Kernel) *Value { return k.Zeros(xla.Float32, 4, 6) }
	var nilValue *Value
	runMisuseCases(t, []misuseCase{
		{name: "parts that do not divide", kernel: func(k *Kernel, r []*Ref) { Split(z(k), 1, 4) }, spec: spec,
			want: []string{"split at split_test.go:", "4 parts do not divide axis 1 of f32[4,6] (6 elements) evenly"}},
		// 2^30 placeholders would take tens of GB: the error comes with a few.
		{name: "a huge count of parts", kernel: func(k *Kernel, r []*Ref) { Split(z(k), 1, 1<<30) }, spec: spec,
			want: []string{"1073741824 parts do not divide axis 1"}},
		{name: "no parts", kernel: func(k *Kernel, r []*Ref) { Split(z(k), 0, 0) }, spec: spec,
			want: []string{"split at split_test.go:", "0 parts do not divide"}},
		{name: "bad axis", kernel: func(k *Kernel, r []*Ref) { Split(z(k), 2, 2) }, spec: spec,
			want: []string{"split at split_test.go:", "bad axis 2 for rank 2"}},
		{name: "a scalar", kernel: func(k *Kernel, r []*Ref) { Split(z(k).Sum(), 0, 1) }, spec: spec,
			want: []string{"bad axis 0 for rank 0"}},
		{name: "nil", kernel: func(k *Kernel, r []*Ref) { Split(nilValue, 0, 2) }, spec: spec,
			want: []string{"split", "operand 0 is nil"}},
		// Three parts of a 6-long axis are fine in interpret mode, not on
		// Triton (no tensor of 6 elements there in the first place).
		{name: "three parts on Triton", kernel: func(k *Kernel, r []*Ref) {
			r[0].Store(Split(z(k), 1, 3)[0].Sum().BroadcastTo(4, 4))
		}, spec: CallSpec{OutShapes: spec.OutShapes, Backend: Triton}, want: []string{"Triton tensors need power-of-two dims"}},
	})
	got, err := runCall(func(k *Kernel, r []*Ref) {
		parts := Split(k.Iota(xla.Float32, 1, 4, 6), 1, 3)
		r[0].Store(Concatenate(1, parts[2], parts[0]))
	}, spec)
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 5, 0, 1}, got[0].Data.([]float32)[:4])
}

// sliceAxisCase takes parts of a [4,16] block with SliceAxis (aligned,
// unaligned) and with DynamicSliceAxis and DynamicIndex at positions from
// the program id (one clamped at each end): part of tritonCases.
func sliceAxisCase() tritonCase {
	rows := func(n int64) *BlockSpec {
		return &BlockSpec{BlockShape: []int64{4, n}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}
	}
	f32 := func(n int64) xla.Shape { return xla.MakeShape(xla.Float32, 8, n) }
	return tritonCase{
		name: "slice_axis",
		kernel: func(k *Kernel, r []*Ref) {
			v := r[0].Load()
			r[1].Store(v.SliceAxis(1, 12, 16))
			r[2].Store(v.SliceAxis(-1, 6, 8))
			r[3].Store(v.SliceAxis(0, 2, 4).Sum(0).Reshape(1, 16).BroadcastTo(4, 16))
			// Unaligned parts (a gather on Triton): columns 3..6, rows 1..2.
			r[4].Store(v.SliceAxis(1, 3, 7))
			r[5].Store(v.SliceAxis(0, 1, 3).Sum(0).Reshape(1, 16).BroadcastTo(4, 16))
			// Dynamic: columns from 11·pid+2 (program 1's 13 clamped to 8),
			// row 3·pid-1 (program 0's -1 the last row, 3, as in JAX).
			p := k.ProgramID(0)
			r[6].Store(v.DynamicSliceAxis(1, p.Mul(11).Add(2), 8))
			r[7].Store(v.DynamicIndex(0, p.Mul(3).Sub(1)).Reshape(1, 16).BroadcastTo(4, 16))
		},
		spec: CallSpec{
			Name:      "slice_axis",
			OutShapes: []xla.Shape{f32(4), f32(2), f32(16), f32(4), f32(16), f32(8), f32(16)},
			Grid:      []int64{2},
			InSpecs:   []*BlockSpec{rows(16)},
			OutSpecs:  []*BlockSpec{rows(4), rows(2), rows(16), rows(4), rows(16), rows(8), rows(16)},
		},
		args: []*interpreter.Tensor{fTensor([]int64{8, 16}, func(i int) float64 { return float64(i) })},
	}
}

// TestDynamicSliceStarts: starts as JAX takes them: a negative one counts
// from the end, then clamped into the axis; Go constants of any size (one
// past i32 clamped too, not refused) and computed values (i64 beyond i32,
// below -n) alike, on every backend.
func TestDynamicSliceStarts(t *testing.T) {
	x := fTensor([]int64{16}, func(i int) float64 { return float64(i) })
	starts := []any{-3, int64(1) << 40, uint64(math.MaxUint64), -100, 5}
	want := [][]float32{{13, 14}, {14, 15}, {14, 15}, {0, 1}, {5, 6}}
	c := tritonCase{name: "dynamic_starts", kernel: func(k *Kernel, r []*Ref) {
		v := r[0].Load()
		for i, s := range starts {
			r[1].Store(v.DynamicSliceAxis(0, s, 2), DS(2*i, 2))
		}
		big := k.Const(xla.Int64, int64(1)<<40)
		r[1].Store(v.DynamicSliceAxis(0, big, 2), DS(10, 2))
		r[1].Store(v.DynamicSliceAxis(0, big.Neg(), 2), DS(12, 2))
		r[1].Store(v.DynamicIndex(0, k.Const(xla.Int8, -1)).BroadcastTo(2), DS(14, 2))
	}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}}, args: []*interpreter.Tensor{x}}
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		got := outs[0].Data.([]float32)
		for i, w := range want {
			assert.Equal(t, w, got[2*i:2*i+2], "%s: start %v", backend, starts[i])
		}
		assert.Equal(t, []float32{14, 15, 0, 1, 15, 15}, got[10:], backend)
	})
}

// SliceAxis: aligned parts on every backend (the Triton form halves the
// value), unaligned ones of a power-of-two size (a gather on Triton), any
// part in interpret mode, and Triton's refusal of a part of three;
// DynamicSliceAxis and DynamicIndex with clamped positions.
func TestSliceAxis(t *testing.T) {
	c := sliceAxisCase()
	x := c.args[0]
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		for row := 0; row < 8; row++ {
			g := row / 4
			for j := 0; j < 4; j++ {
				require.Equal(t, float32(row*16+12+j), got[0].Data.([]float32)[row*4+j], backend)
			}
			for j := 0; j < 2; j++ {
				require.Equal(t, float32(row*16+6+j), got[1].Data.([]float32)[row*2+j], backend)
			}
			for j := 0; j < 16; j++ {
				require.Equal(t, float32((4*g+2)*16+j+(4*g+3)*16+j), got[2].Data.([]float32)[row*16+j], backend)
				require.Equal(t, float32((4*g+1)*16+j+(4*g+2)*16+j), got[4].Data.([]float32)[row*16+j], backend)
			}
			for j := 0; j < 4; j++ {
				require.Equal(t, float32(row*16+3+j), got[3].Data.([]float32)[row*4+j], backend)
			}
			start := []int{2, 8}[g]
			for j := 0; j < 8; j++ {
				require.Equal(t, float32(row*16+start+j), got[5].Data.([]float32)[row*8+j], "%s: dynamic slice", backend)
			}
			at := []int{3, 2}[g]
			for j := 0; j < 16; j++ {
				require.Equal(t, float32((4*g+at)*16+j), got[6].Data.([]float32)[row*16+j], "%s: dynamic index", backend)
			}
		}
	})

	// An unaligned part in interpret mode: elements 1..3 of each row.
	got, err := runCall(func(k *Kernel, r []*Ref) {
		r[1].Store(r[0].Load().SliceAxis(1, 1, 4).Sum(1))
	}, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}}, x)
	require.NoError(t, err)
	assert.Equal(t, float32(1+2+3), got[0].Data.([]float32)[0])

	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)}}
	z := func(k *Kernel) *Value { return k.Zeros(xla.Float32, 4, 8) }
	runMisuseCases(t, []misuseCase{
		{name: "stop past the axis", kernel: func(k *Kernel, r []*Ref) { z(k).SliceAxis(1, 4, 9) }, spec: spec,
			want: []string{"slice at split_test.go:", "elements [4, 9) of axis 1 of f32[4,8] (0 <= start <= stop <= 8; no counting from the end)"}},
		{name: "a negative start", kernel: func(k *Kernel, r []*Ref) { z(k).SliceAxis(1, -2, 8) }, spec: spec,
			want: []string{"elements [-2, 8) of axis 1"}},
		{name: "stop before start", kernel: func(k *Kernel, r []*Ref) { z(k).SliceAxis(0, 3, 2) }, spec: spec,
			want: []string{"elements [3, 2) of axis 0"}},
		{name: "bad axis", kernel: func(k *Kernel, r []*Ref) { z(k).SliceAxis(2, 0, 1) }, spec: spec,
			want: []string{"slice at split_test.go:", "bad axis 2 for rank 2"}},
		{name: "a dynamic slice too long", kernel: func(k *Kernel, r []*Ref) { z(k).DynamicSliceAxis(1, 0, 9) }, spec: spec,
			want: []string{"dynamic_slice at split_test.go:", "9 elements of axis 1 of f32[4,8] (1 <= size <= 8)"}},
		{name: "an empty dynamic slice", kernel: func(k *Kernel, r []*Ref) { z(k).DynamicSliceAxis(0, 0, 0) }, spec: spec,
			want: []string{"0 elements of axis 0"}},
		{name: "an index into no elements", kernel: func(k *Kernel, r []*Ref) { k.Zeros(xla.Float32, 0, 4).DynamicIndex(0, 0) }, spec: spec,
			want: []string{"dynamic_index at split_test.go:", "axis 0 of f32[0,4] has no elements"}},
		{name: "a float start", kernel: func(k *Kernel, r []*Ref) { z(k).DynamicSliceAxis(0, 1.5, 2) }, spec: spec,
			want: []string{"dynamic_slice at split_test.go:", "want an integer, got the Go float64 1.5"}},
		{name: "a vector index", kernel: func(k *Kernel, r []*Ref) { z(k).DynamicIndex(1, k.Zeros(xla.Int32, 2)) }, spec: spec,
			want: []string{"dynamic_index at split_test.go:", "want an integer scalar, got i32[2]"}},
		{name: "a dynamic index's bad axis", kernel: func(k *Kernel, r []*Ref) { z(k).DynamicIndex(-3, 0) }, spec: spec,
			want: []string{"bad axis -3 for rank 2"}},
		{name: "a part of three on Triton", kernel: func(k *Kernel, r []*Ref) { r[0].Store(z(k).SliceAxis(1, 2, 5).Sum(1).Reshape(4, 1).BroadcastTo(4, 4)) },
			spec: CallSpec{OutShapes: spec.OutShapes, Backend: Triton},
			want: []string{"triton: slice at split_test.go:", "power-of-two dims"}},
	})
}

// TestRaceCheckThroughGathers: positions picked from a block by
// DynamicIndex, DynamicSliceAxis, SliceAxis, a narrowing Bitcast (a
// gather, slice or concatenation, then a reduction or reshape to a
// scalar) are computed at build time, as positions in plain integer
// arithmetic are: programs that store the same elements are refused as a
// race, loads outside the array as out of bounds, and distinct positions
// pass (found in review: they were judged by dependence alone).
func TestRaceCheckThroughGathers(t *testing.T) {
	x := fTensor([]int64{16}, func(i int) float64 { return float64(i) })
	store := func(pos func(k *Kernel, p *Value) *Value) tritonCase {
		return tritonCase{name: "gathered_pos", kernel: func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load(DS(0, 2)), DS(pos(k, k.ProgramID(0)), 2))
		}, spec: CallSpec{Name: "gathered_pos", Grid: []int64{8}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}},
			args: []*interpreter.Tensor{x}}
	}
	races := map[string]func(k *Kernel, p *Value) *Value{
		"dynamic index": func(k *Kernel, p *Value) *Value { return k.Iota(xla.Int32, 0, 4).Mul(2).DynamicIndex(0, p) },
		"dynamic slice": func(k *Kernel, p *Value) *Value {
			return k.Iota(xla.Int32, 0, 8).Mul(2).DynamicSliceAxis(0, p, 4).ReduceMin(0)
		},
		"unaligned slice": func(k *Kernel, p *Value) *Value {
			return k.Iota(xla.Int32, 0, 16).SliceAxis(0, 3, 7).DynamicIndex(0, p).Sub(3).Mul(2)
		},
		"bitcast bytes": func(k *Kernel, p *Value) *Value { return p.Bitcast(xla.Uint8).DynamicIndex(0, 1).Astype(xla.Int32) },
	}
	for name, pos := range races {
		t.Run(name, func(t *testing.T) {
			err := lowerTritonErr(t, store(pos))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "both reach its element")
			assert.Contains(t, err.Error(), "(positions computed at build time)")
		})
	}
	// Distinct positions: program p stores elements 2p and 2p+1.
	ok := store(func(k *Kernel, p *Value) *Value { return k.Iota(xla.Int32, 0, 8).Mul(2).DynamicIndex(0, p) })
	require.NoError(t, lowerTritonErr(t, ok))
	got, err := EvalTriton(ok.kernel, ok.spec, ok.args...)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 0, 1}, got[0].Data.([]float32)[:4])

	// A load past the array's end through a gathered start.
	oob := tritonCase{name: "gathered_load", kernel: func(k *Kernel, r []*Ref) {
		at := k.Iota(xla.Int32, 0, 8).Mul(4).DynamicIndex(0, k.ProgramID(0))
		r[1].Store(r[0].Load(DS(at, 2)), DS(k.ProgramID(0).Mul(2), 2))
	}, spec: CallSpec{Name: "gathered_load", Grid: []int64{8}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}},
		args: []*interpreter.Tensor{x}}
	err = lowerTritonErr(t, oob)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outside the array")
}

// TestRaceCheckGatheredScalarsBounded: the scalars the checks pick from
// blocks stay within bounds (found in review): a program id of an axis the
// check does not fix, inside such a block, is left uncomputed (it
// crashed the check), so the refusal is the one without it; an index map
// through a gather of a large cumulative sum over a 65,536-program grid
// is refused as not followed (it was evaluated at every point); a
// position picked from a block past the bound is judged by dependence.
func TestRaceCheckGatheredScalarsBounded(t *testing.T) {
	const g1 = 1 << 17
	x := fTensor([]int64{8 * g1}, func(i int) float64 { return float64(i % 64) })
	pinned := tritonCase{name: "pinned_mask", kernel: func(k *Kernel, r []*Ref) {
		x, o := r[0], r[1]
		p0, p1 := k.ProgramID(0), k.ProgramID(1)
		at := k.Iota(xla.Int32, 0, 4).Mul(2).DynamicIndex(0, p0.Add(p1.Mul(0)))
		o.Store(x.Load(DS(at, 2)), DS(at, 2))
		k.When(p0.Eq(0), func() { o.Store(k.Full(xla.Float32, -5.0, 1), DS(1, 1)) })
	}, spec: CallSpec{Name: "pinned_mask", Grid: []int64{4, g1}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8*g1)},
		InSpecs:  []*BlockSpec{{BlockShape: []int64{8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[1]} })}},
		OutSpecs: []*BlockSpec{{BlockShape: []int64{8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[1]} })}}},
		args: []*interpreter.Tensor{x}}
	err := lowerTritonErr(t, pinned)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "internal error")
	assert.Contains(t, err.Error(), "is not inside that program's own")

	big := tritonCase{name: "big_map", kernel: func(k *Kernel, r []*Ref) {
		r[0].Store(k.Full(xla.Float32, 1.0, 4))
	}, spec: CallSpec{Name: "big_map", Grid: []int64{1 << 16}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4<<16)},
		OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any {
			return []any{g[0].BroadcastTo(8192).Cumsum(0).DynamicIndex(0, 0).Sub(g[0]).Add(g[0])}
		})}}}}
	err = lowerTritonErr(t, big)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "which the race check cannot follow")
}
