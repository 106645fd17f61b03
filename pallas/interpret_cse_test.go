package pallas

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInterpretReusesRepeatedComputations(t *testing.T) {
	// The index maps and the body load the same prefetch element: interpret
	// mode slices it once per step. A load after a store sees the store.
	kernel := func(k *Kernel, refs []*Ref) {
		pf, x, o, s := refs[0], refs[1], refs[2], refs[3]
		i := k.ProgramID(0)
		j := pf.Load(i)
		s.Store(x.Load().Add(j.Astype(xla.Float32)))
		before := s.Load()
		s.Store(before.Mul(2.0))
		after := s.Load()
		o.Store(before.Add(after).Add(pf.Load(i).Astype(xla.Float32)))
	}
	bmap := func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0])} }
	spec := CallSpec{
		Name:              "cse",
		OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 8)},
		Grid:              []int64{4},
		NumScalarPrefetch: 1,
		InSpecs:           []*BlockSpec{{BlockShape: []int64{2}, IndexMap: bmap}},
		OutSpecs:          []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
		ScratchShapes:     []xla.Shape{xla.MakeShape(xla.Float32, 2)},
		CompilerParams:    CompilerParams{NoBoundsChecks: true},
	}
	perm := []int32{3, 1, 0, 2}
	x := f32s(8, func(i int) float32 { return float32(10 * i) })
	out, err := runCall(kernel, spec, tensor(t, xla.Int32, perm, 4), tensor(t, xla.Float32, x, 8))
	require.NoError(t, err)
	want := make([]float32, 8)
	for i := 0; i < 4; i++ {
		for e := 0; e < 2; e++ {
			v := x[int(perm[i])*2+e] + float32(perm[i])
			want[i*2+e] = v + 2*v + float32(perm[i])
		}
	}
	assert.Equal(t, want, out[0].Data)

	b := stablehlo.NewBuilder("cse")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Int32, 4), stablehlo.Tensor(xla.Float32, 8))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	text := m.String()
	// One slice of the prefetch array (four loads of pf[i]), one of x.
	assert.Equal(t, 1, strings.Count(text, "stablehlo.dynamic_slice %arg0"), text)
}

func TestInterpretFoldsIntegerConstants(t *testing.T) {
	// NumPrograms(0) - 1 and a constant block index times the block size
	// are constants in the lowered program: no subtract or multiply runs
	// at each step. The result is still right.
	kernel := func(k *Kernel, refs []*Ref) {
		x, o := refs[0], refs[1]
		last := k.NumPrograms(0).Sub(1)
		v := x.Load()
		o.Store(Where(k.ProgramID(0).Eq(last), v.Mul(2.0), v))
	}
	spec := CallSpec{
		Name:           "fold",
		OutShapes:      []xla.Shape{xla.MakeShape(xla.Float32, 8)},
		Grid:           []int64{4},
		InSpecs:        []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
		OutSpecs:       []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
		CompilerParams: CompilerParams{NoBoundsChecks: true},
	}
	x := f32s(8, func(i int) float32 { return float32(i) })
	out, err := runCall(kernel, spec, tensor(t, xla.Float32, x, 8))
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 2, 3, 4, 5, 12, 14}, out[0].Data)

	b := stablehlo.NewBuilder("fold")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 8))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	assert.NotContains(t, m.String(), "stablehlo.subtract")
}

func TestInterpretSharesBlockStarts(t *testing.T) {
	// The input and the output use the same index map: one multiply per
	// step computes the block start of both.
	kernel := func(k *Kernel, refs []*Ref) { refs[1].Store(refs[0].Load().Add(1.0)) }
	m := func(g []*Value, _ []*Ref) []any { return []any{g[0]} }
	spec := CallSpec{
		Name:           "starts",
		OutShapes:      []xla.Shape{xla.MakeShape(xla.Float32, 8)},
		Grid:           []int64{4},
		InSpecs:        []*BlockSpec{{BlockShape: []int64{2}, IndexMap: m}},
		OutSpecs:       []*BlockSpec{{BlockShape: []int64{2}, IndexMap: m}},
		CompilerParams: CompilerParams{NoBoundsChecks: true},
	}
	b := stablehlo.NewBuilder("starts")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 8))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	mod, err := b.Build()
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(mod.String(), "stablehlo.multiply"), mod.String())
	out, err := runCall(kernel, spec, tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i) }), 8))
	require.NoError(t, err)
	assert.Equal(t, f32s(8, func(i int) float32 { return float32(i + 1) }), out[0].Data)
}

func TestInterpretHoistsLoopInvariantValues(t *testing.T) {
	// A block of constants built from an iota, a zeroed scratch block and
	// the scale inside a When and a ForLoop depend on nothing a grid step
	// changes: interpret mode computes them once, before the grid loop.
	// Stores into the zeroed scratch still work (values are immutable), and
	// so does reading the hoisted block at every step.
	kernel := func(k *Kernel, refs []*Ref) {
		x, o, s := refs[0], refs[1], refs[2]
		ramp := k.Iota(xla.Float32, 0, 4).Mul(2.0).Add(1.0) // 1 3 5 7
		s.Store(k.Zeros(xla.Float32, 4))
		s.Store(x.Load(Slice(0, 2)), Slice(0, 2))
		k.When(k.ProgramID(0).Eq(1), func() {
			s.Store(s.Load().Add(k.Full(xla.Float32, 100.0, 4)))
		})
		acc := k.ForLoop(0, 2, []*Value{k.Zeros(xla.Float32, 4)}, func(i *Value, c []*Value) []*Value {
			return []*Value{c[0].Add(ramp)}
		})
		o.Store(s.Load().Add(acc[0]))
	}
	bmap := func(g []*Value, _ []*Ref) []any { return []any{g[0]} }
	spec := CallSpec{
		Name:           "hoist",
		OutShapes:      []xla.Shape{xla.MakeShape(xla.Float32, 12)},
		Grid:           []int64{3},
		InSpecs:        []*BlockSpec{{BlockShape: []int64{4}, IndexMap: bmap}},
		OutSpecs:       []*BlockSpec{{BlockShape: []int64{4}, IndexMap: bmap}},
		ScratchShapes:  []xla.Shape{xla.MakeShape(xla.Float32, 4)},
		CompilerParams: CompilerParams{NoBoundsChecks: true},
	}
	x := f32s(12, func(i int) float32 { return float32(10 * i) })
	out, err := runCall(kernel, spec, tensor(t, xla.Float32, x, 12))
	require.NoError(t, err)
	want := make([]float32, 12)
	for g := 0; g < 3; g++ {
		for e := 0; e < 4; e++ {
			v := 2 * float32(2*e+1)
			if e < 2 {
				v += x[4*g+e]
			}
			if g == 1 {
				v += 100
			}
			want[4*g+e] = v
		}
	}
	assert.Equal(t, want, out[0].Data)

	b := stablehlo.NewBuilder("hoist")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 12))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	text := m.String()
	loop := strings.Index(text, "stablehlo.while")
	require.Positive(t, loop)
	before, body := text[:loop], text[loop:]
	for _, op := range []string{"stablehlo.iota", "stablehlo.broadcast_in_dim", "stablehlo.constant dense<1.000000e+02>"} {
		assert.Contains(t, before, op)
		assert.NotContains(t, body, op, "computed at every step")
	}
	// One zeros block serves the scratch store and the loop's start.
	assert.Equal(t, 1, strings.Count(before, "stablehlo.constant dense<0.000000e+00> : tensor<4xf32>"), before)
}

func TestInterpretFoldsKnownConditions(t *testing.T) {
	// Along a grid axis of one step, ProgramID is 0: a When on it runs
	// inline (no stablehlo.if) or not at all, And with a known true is its
	// other operand, a zeroed accumulator plus a product is the product (no
	// add), and an index map's product by that axis' index is a constant.
	// The results are those of the kernel run as written.
	const bm, bk = 2, 4
	kernel := func(k *Kernel, refs []*Ref) {
		x, y, o, acc := refs[0], refs[1], refs[2], refs[3]
		kk := k.ProgramID(1)
		k.When(kk.Eq(0), func() { acc.Store(0.0) })
		k.When(kk.Ne(0), func() { acc.Store(100.0) }) // never runs
		acc.Store(acc.Load().Add(Dot(x.Load(), y.Load(), xla.Float32)))
		last := kk.Eq(k.NumPrograms(1).Sub(1))
		k.When(last.And(k.NumPrograms(0).Gt(1)), func() {
			o.Store(Where(kk.Gt(0), acc.Load().Mul(3.0), acc.Load().Sub(k.Zeros(xla.Float32, bm, bm))))
		})
	}
	spec := CallSpec{
		Name:      "known",
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, bm)},
		Grid:      []int64{2, 1},
		InSpecs: []*BlockSpec{
			{BlockShape: []int64{bm, bk}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1].Mul(5)} }},
			{BlockShape: []int64{bk, bm}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[1], 0} }},
		},
		OutSpecs:       []*BlockSpec{{BlockShape: []int64{bm, bm}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }}},
		ScratchShapes:  []xla.Shape{xla.MakeShape(xla.Float32, bm, bm)},
		CompilerParams: CompilerParams{NoBoundsChecks: true},
	}
	x := f32s(4*bk, func(i int) float32 { return float32(i%5) - 1 })
	y := f32s(bk*bm, func(i int) float32 { return float32(i%3) + 0.5 })
	out, err := runCall(kernel, spec, tensor(t, xla.Float32, x, 4, bk), tensor(t, xla.Float32, y, bk, bm))
	require.NoError(t, err)
	want := make([]float32, 4*bm)
	for r := 0; r < 4; r++ {
		for c := 0; c < bm; c++ {
			for q := 0; q < bk; q++ {
				want[r*bm+c] += x[r*bk+q] * y[q*bm+c]
			}
		}
	}
	assert.Equal(t, want, out[0].Data)

	b := stablehlo.NewBuilder("known")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4, bk), stablehlo.Tensor(xla.Float32, bk, bm))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	text := m.String()
	body := text[strings.Index(text, "stablehlo.while"):]
	// The only ifs left write output blocks back: the previous one when
	// the block changes, the last one at the last step.
	assert.Equal(t, 2, strings.Count(body, "stablehlo.if"), body)
	assert.Equal(t, 2, strings.Count(body, "stablehlo.dynamic_update_slice"), body)
	for _, op := range []string{"stablehlo.subtract", "stablehlo.and", "stablehlo.select", "dense<1.000000e+02>", "stablehlo.remainder"} {
		assert.NotContains(t, body, op)
	}
	assert.Equal(t, 1, strings.Count(body, "stablehlo.add"), "only the step counter's add: %s", body)
}

func TestInterpretChecksFoldedIndices(t *testing.T) {
	// Block indices and slice starts that fold to constants (ProgramID
	// along an axis of one step) are still checked.
	x := tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i) }), 8)
	out := []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}}
	for _, c := range []struct {
		name   string
		in     IndexMapFunc
		kernel KernelFunc
		want   []string
	}{
		{"block index", func(g []*Value, _ []*Ref) []any { return []any{g[0].Add(2)} },
			func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load()) },
			[]string{"grid point (0)", "index map of input 0 (f32[4] block of f32[8]) at interpret_cse_test.go:", "block index (2) outside [0, 2)"}},
		{"slice start", func(g []*Value, _ []*Ref) []any { return []any{g[0]} },
			func(k *Kernel, r []*Ref) {
				r[1].Store(r[0].Load(DS(k.ProgramID(0).Add(3), 2)).Sum(), Slice(0, 1))
				r[1].Store(0.0, Slice(1, 4))
			},
			[]string{"grid point (0)", "load from input 0", "starting at (3) does not fit in (4)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := CallSpec{Name: "folded", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{1},
				InSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: c.in}}, OutSpecs: out}
			_, err := runCall(c.kernel, spec, x)
			var be *BoundsError
			require.True(t, errors.As(err, &be), "want a *BoundsError, got %T: %v", err, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestInterpretSkipsAddingToAResetAccumulator(t *testing.T) {
	// An integer accumulator zeroed at some steps (a prefetched flag) and
	// then added to: at those steps the sum is the addend, so the add of a
	// block sits in the else branch of an if on the flag. A float one is
	// added to at every step (+0 + -0 is +0, not the addend).
	const n, bs = 4, 32
	kernel := func(k *Kernel, refs []*Ref) {
		reset, x, o, acc := refs[0], refs[1], refs[2], refs[3]
		k.When(reset.Load(k.ProgramID(0)).Ne(0), func() { acc.Store(0) })
		acc.Store(acc.Load().Add(x.Load()))
		o.Store(acc.Load())
	}
	bmap := func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }
	spec := CallSpec{
		Name:              "reset",
		OutShapes:         []xla.Shape{xla.MakeShape(xla.Int32, n*bs, bs)},
		Grid:              []int64{n},
		NumScalarPrefetch: 1,
		InSpecs:           []*BlockSpec{{BlockShape: []int64{bs, bs}, IndexMap: bmap}},
		OutSpecs:          []*BlockSpec{{BlockShape: []int64{bs, bs}, IndexMap: bmap}},
		ScratchShapes:     []xla.Shape{xla.MakeShape(xla.Int32, bs, bs)},
		CompilerParams:    CompilerParams{NoBoundsChecks: true},
	}
	x := make([]int32, n*bs*bs)
	for i := range x {
		x[i] = int32(i%97) - 40
	}
	for _, flags := range [][]int32{{1, 0, 1, 0}, {1, 1, 1, 1}, {1, 0, 0, 0}, {1, 0, 0, 1}} {
		out, err := runCall(kernel, spec, tensor(t, xla.Int32, flags, n), tensor(t, xla.Int32, x, n*bs, bs))
		require.NoError(t, err)
		want := make([]int32, n*bs*bs)
		for g := 0; g < n; g++ {
			for e := 0; e < bs*bs; e++ {
				v := x[g*bs*bs+e]
				if flags[g] == 0 {
					v += want[(g-1)*bs*bs+e]
				}
				want[g*bs*bs+e] = v
			}
		}
		assert.Equal(t, want, out[0].Data, "reset flags %v", flags)
	}

	program := func(dt xla.DType) string {
		spec := spec
		spec.OutShapes = []xla.Shape{xla.MakeShape(dt, n*bs, bs)}
		spec.ScratchShapes = []xla.Shape{xla.MakeShape(dt, bs, bs)}
		b := stablehlo.NewBuilder("reset")
		fb := b.NewFunction("main", stablehlo.Tensor(xla.Int32, n), stablehlo.Tensor(dt, n*bs, bs))
		fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
		m, err := b.Build()
		require.NoError(t, err)
		return m.String()
	}
	blockAdd := func(text, elem string) int {
		add := -1
		for _, line := range strings.SplitAfter(text, "\n") {
			if strings.Contains(line, "stablehlo.add") && strings.HasSuffix(line, "tensor<32x32x"+elem+">\n") {
				require.Negative(t, add, "two adds of blocks: %s", text)
				add = strings.Index(text, line)
			}
		}
		require.Positive(t, add, "no add of blocks: %s", text)
		return add
	}
	text := program(xla.Int32)
	add := blockAdd(text, "i32")
	// The grid loop's ops are indented two more than the while, those of
	// an if in it four more.
	indent := func(at int) int {
		line := text[strings.LastIndex(text[:at], "\n")+1:]
		return len(line) - len(strings.TrimLeft(line, " "))
	}
	loop := indent(strings.Index(text, "stablehlo.while"))
	assert.Equal(t, loop+4, indent(add), "the add is not in a branch: %s", text)
	branch := text[strings.LastIndex(text[:add], `"stablehlo.if"`):add]
	assert.Contains(t, branch, "}, {", "the add is not in an else branch: %s", text)

	text = program(xla.Float32)
	add = blockAdd(text, "f32")
	loop = indent(strings.Index(text, "stablehlo.while"))
	assert.Equal(t, loop+2, indent(add), "the float add is in a branch: %s", text)

	// A float accumulator to which a dot is added: a dot's sum is never
	// -0, so skipping the add is exact.
	kernel = func(k *Kernel, refs []*Ref) {
		reset, x, o, acc := refs[0], refs[1], refs[2], refs[3]
		k.When(reset.Load(k.ProgramID(0)).Ne(0), func() { acc.Store(0) })
		acc.Store(acc.Load().Add(Dot(x.Load(), x.Load(), xla.Float32)))
		o.Store(acc.Load())
	}
	text = program(xla.Float32)
	add = blockAdd(text, "f32")
	loop = indent(strings.Index(text, "stablehlo.while"))
	assert.Equal(t, loop+4, indent(add), "the add to a dot is not in a branch: %s", text)
}

func TestInterpretSharedUninitializedStartIsNotWrittenThrough(t *testing.T) {
	// The scratch buffer and the output blocks start from one
	// "uninitialized" array (same type): a partial store into the scratch
	// (an in-place update in a loop) must not show in a new output block,
	// which reads as NaN until stored.
	kernel := func(k *Kernel, refs []*Ref) {
		o, s := refs[0], refs[1]
		s.Store(k.ProgramID(0).Add(1).Astype(xla.Float32).BroadcastTo(2), Slice(0, 2))
		v := o.Load()
		o.Store(Where(v.Ne(v), s.Load().Add(100.0), v)) // NaN: scratch + 100
	}
	spec := CallSpec{
		Name:          "shared_uninit",
		OutShapes:     []xla.Shape{xla.MakeShape(xla.Float32, 12)},
		Grid:          []int64{3},
		OutSpecs:      []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
		ScratchShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
	}
	out, err := runCall(kernel, spec)
	require.NoError(t, err)
	got := out[0].Data.([]float32)
	for g := 0; g < 3; g++ {
		for e := 0; e < 2; e++ {
			assert.Equal(t, float32(g+1+100), got[4*g+e], "element %d", 4*g+e)
		}
		for e := 2; e < 4; e++ {
			assert.True(t, math.IsNaN(float64(got[4*g+e])), "element %d is %v: NaN scratch + 100", 4*g+e, got[4*g+e])
		}
	}
}

func TestInterpretF32DotsAskForFullPrecision(t *testing.T) {
	// XLA's GPU backend rounds f32 dot operands to TF32 under DEFAULT
	// precision (seen on an H100): interpret mode asks for HIGHEST on f32
	// dots, as the Triton lowering asks for IEEE; bf16 dots keep DEFAULT.
	for _, c := range []struct {
		dt   xla.DType
		want int
	}{{xla.Float32, 1}, {xla.BFloat16, 0}} {
		kernel := func(k *Kernel, refs []*Ref) {
			refs[2].Store(Dot(refs[0].Load(), refs[1].Load(), xla.Float32))
		}
		spec := CallSpec{Name: "dot", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16, 16)}}
		b := stablehlo.NewBuilder("dot")
		fb := b.NewFunction("main", stablehlo.Tensor(c.dt, 16, 16), stablehlo.Tensor(c.dt, 16, 16))
		fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
		m, err := b.Build()
		require.NoError(t, err)
		text := m.String()
		assert.Equal(t, c.want, strings.Count(text, "precision = [HIGHEST, HIGHEST]"), text)
		assert.Equal(t, 1, strings.Count(text, "stablehlo.dot_general"), text)
	}
}

func TestInterpretF64DotsWidenTheirOperands(t *testing.T) {
	// An f64 result accumulates in f64 on XLA too: the bf16 operands are
	// converted to f64 before the dot (XLA's GPU backend summed a bf16 dot
	// with an f64 result in f32).
	kernel := func(k *Kernel, refs []*Ref) {
		refs[2].Store(Dot(refs[0].Load(), refs[1].Load(), xla.Float64))
	}
	spec := CallSpec{Name: "dot64", OutShapes: []xla.Shape{xla.MakeShape(xla.Float64, 16, 16)}}
	b := stablehlo.NewBuilder("dot64")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.BFloat16, 16, 16), stablehlo.Tensor(xla.BFloat16, 16, 16))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	text := m.String()
	assert.Contains(t, text, ": (tensor<16x16xf64>, tensor<16x16xf64>) -> tensor<16x16xf64>", text)
}
