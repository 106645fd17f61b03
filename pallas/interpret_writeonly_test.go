package pallas

import (
	"math"
	"strings"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An output the kernel only overwrites is never read: a visit that stores
// nothing leaves the block as the array had it (the aliased operand here,
// or what an earlier visit stored), and the lowering slices no block out
// of it.
func TestWriteOnlyOutputsAreNotRead(t *testing.T) {
	// Output 0 is aliased to operand 0 and visited once per block; the
	// kernel stores only where j != 1. Output 1 (aliased to operand 1)
	// has column blocks visited twice, on the grid's two rows: the first
	// row stores, the second does not, so the first row's values stay.
	kernel := func(k *Kernel, r []*Ref) {
		i, j := k.ProgramID(0), k.ProgramID(1)
		o0, o1 := r[2], r[3]
		id := i.Mul(10).Add(j).Astype(xla.Float32)
		k.When(j.Ne(1), func() { o0.Store(id.BroadcastTo(2, 2)) })
		k.When(i.Eq(0), func() { o1.Store(id.Add(100).BroadcastTo(4, 2), All, All) })
	}
	blk := func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }
	col := func(g []*Value, _ []*Ref) []any { return []any{0, g[1]} }
	spec := CallSpec{
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 6), xla.MakeShape(xla.Float32, 4, 6)},
		Grid:      []int64{2, 3},
		InSpecs: []*BlockSpec{
			{BlockShape: []int64{2, 2}, IndexMap: blk},
			{BlockShape: []int64{4, 2}, IndexMap: col},
		},
		OutSpecs: []*BlockSpec{
			{BlockShape: []int64{2, 2}, IndexMap: blk},
			{BlockShape: []int64{4, 2}, IndexMap: col},
		},
		InputOutputAliases: map[int]int{0: 0, 1: 1},
	}
	in0, in1 := interpreter.NewTensor(xla.MakeShape(xla.Float32, 4, 6)), interpreter.NewTensor(xla.MakeShape(xla.Float32, 4, 6))
	for e := range 24 {
		in0.Data.([]float32)[e] = float32(-1 - e)
		in1.Data.([]float32)[e] = float32(-100 - e)
	}
	out, err := runCall(kernel, spec, in0, in1)
	require.NoError(t, err)
	o0, o1 := out[0].Data.([]float32), out[1].Data.([]float32)
	for row := range 4 {
		for c := range 6 {
			e := row*6 + c
			if j := c / 2; j != 1 {
				assert.Equal(t, float32((row/2)*10+j), o0[e], "output 0 element %d", e)
			} else {
				assert.Equal(t, float32(-1-e), o0[e], "output 0 element %d keeps the operand", e)
			}
			assert.Equal(t, float32(100+c/2), o1[e], "output 1 element %d keeps the first visit's store", e)
		}
	}

	b := stablehlo.NewBuilder("write_only")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4, 6), stablehlo.Tensor(xla.Float32, 4, 6))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	for _, line := range strings.Split(m.String(), "\n") {
		assert.False(t, strings.Contains(line, "stablehlo.dynamic_slice") && strings.Contains(line, "tensor<4x6xf32>"),
			"a block is sliced out of an output or operand: %s", line)
	}
}

func TestWriteOnly(t *testing.T) {
	cases := []struct {
		name   string
		kernel KernelFunc
		want   bool
	}{
		{"whole-block store", func(k *Kernel, r []*Ref) { r[0].Store(0.0) }, true},
		{"whole block by full slices", func(k *Kernel, r []*Ref) { r[0].Store(0.0, Slice(0, 4), All) }, true},
		{"store under When", func(k *Kernel, r []*Ref) { k.When(k.ProgramID(0).Eq(0), func() { r[0].Store(1.0) }) }, true},
		{"partial store", func(k *Kernel, r []*Ref) { r[0].Store(0.0, Slice(0, 2), All) }, false},
		{"dynamic start", func(k *Kernel, r []*Ref) { r[0].Store(0.0, DS(k.ProgramID(0).Mul(0), 4), All) }, false},
		{"masked store", func(k *Kernel, r []*Ref) {
			Store(r[0], []any{All, All}, 0.0, k.Iota(xla.Int32, 0, 4, 8).Lt(2))
		}, false},
		{"load", func(k *Kernel, r []*Ref) { r[0].Store(r[0].Load().Add(1.0)) }, false},
		{"load in a loop", func(k *Kernel, r []*Ref) {
			r[0].Store(0.0)
			k.ForLoop(0, 2, nil, func(i *Value, _ []*Value) []*Value { r[0].Store(r[0].Load().Mul(2.0)); return nil })
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := CallSpec{
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8, 8)},
				Grid:      []int64{2, 2},
				OutSpecs:  []*BlockSpec{{BlockShape: []int64{4, 8}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }}},
			}
			p, err := Trace(c.kernel, spec, nil)
			require.NoError(t, err)
			assert.Equal(t, c.want, writeOnly(p.Body, p.Body.Args[0], []int64{4, 8}))
		})
	}
}

// An output that starts as zeros (its index map visits each block once)
// does not write back a block the kernel stored as zeros: the array holds
// them already. A block stored otherwise after or in part, or never
// stored, is written back as usual.
func TestZeroBlocksAreNotWrittenBack(t *testing.T) {
	const (
		zeros         = iota // all of it zeros
		value                // the step's id
		valueThenZero        // id, then all zeros
		zeroThenPart         // zeros, then id in its first row
		nothing              // never stored: NaN
		zeroThenLoad         // zeros, then what it loads back plus one
		negativeZero         // all of it -0.0, which is not the zeros under it
	)
	kernel := func(k *Kernel, r []*Ref) {
		mode, o := r[0], r[1]
		i, j := k.ProgramID(0), k.ProgramID(1)
		id := i.Mul(10).Add(j).Add(1).Astype(xla.Float32)
		m := mode.Load(i, j)
		k.When(m.Eq(zeros), func() { o.Store(0.0) })
		k.When(m.Eq(value), func() { o.Store(id.BroadcastTo(2, 2)) })
		k.When(m.Eq(valueThenZero), func() {
			o.Store(id.BroadcastTo(2, 2))
			o.Store(k.Zeros(xla.Float32, 2, 2))
		})
		k.When(m.Eq(zeroThenPart), func() {
			o.Store(0.0)
			o.Store(id.BroadcastTo(1, 2), Slice(0, 1), All)
		})
		k.When(m.Eq(zeroThenLoad), func() {
			o.Store(0.0)
			o.Store(o.Load().Add(1.0))
		})
		k.When(m.Eq(negativeZero), func() { o.Store(math.Copysign(0, -1)) })
	}
	blk := func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }
	spec := CallSpec{
		Name:              "zero_blocks",
		OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 4, 6)},
		Grid:              []int64{2, 3},
		NumScalarPrefetch: 1,
		OutSpecs:          []*BlockSpec{{BlockShape: []int64{2, 2}, IndexMap: blk}},
	}
	for _, modes := range [][]int32{
		{zeros, value, valueThenZero, zeroThenPart, nothing, zeroThenLoad},
		{zeroThenLoad, nothing, zeroThenPart, valueThenZero, value, zeros},
		{zeros, zeros, zeros, zeros, zeros, zeros},
		{nothing, zeros, nothing, value, zeros, valueThenZero},
		{negativeZero, zeros, negativeZero, zeros, value, negativeZero},
	} {
		out, err := runCall(kernel, spec, tensor(t, xla.Int32, modes, 2, 3))
		require.NoError(t, err)
		got := out[0].Data.([]float32)
		for e := range 24 {
			row, c := e/6, e%6
			i, j := row/2, c/2
			id := float32(i*10 + j + 1)
			var want float32
			switch modes[i*3+j] {
			case value:
				want = id
			case zeroThenPart:
				if row%2 == 0 {
					want = id
				}
			case zeroThenLoad:
				want = 1
			case nothing:
				assert.True(t, math.IsNaN(float64(got[e])), "modes %v: element %d of a block never stored is %v, want NaN", modes, e, got[e])
				continue
			case negativeZero:
				assert.True(t, got[e] == 0 && math.Signbit(float64(got[e])), "modes %v: element %d is %v, want -0", modes, e, got[e])
				continue
			}
			assert.Equal(t, want, got[e], "modes %v: element %d (block %d,%d)", modes, e, i, j)
		}
	}

	b := stablehlo.NewBuilder("zero_blocks")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Int32, 2, 3))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	// The write-back of the block left is in an if in an if: on a new
	// block, then on the flag.
	text := m.String()
	indent := func(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }
	loop := -1
	nested := false
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "stablehlo.while") {
			loop = indent(line)
		}
		if strings.Contains(line, "stablehlo.dynamic_update_slice") && strings.Contains(line, "(tensor<4x6xf32>, tensor<2x2xf32>") && indent(line) == loop+6 {
			nested = true
		}
	}
	assert.True(t, nested, "no write-back under a flag: %s", text)
}
