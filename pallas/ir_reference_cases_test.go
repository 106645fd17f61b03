package pallas

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// zzCompare compares interpret mode's result with the evaluator's: floats
// to rel (NaN matches NaN), the rest exactly.
func zzCompare(want, got *interpreter.Tensor, rel float64) error {
	if !want.Shape.Equal(got.Shape) {
		return fmt.Errorf("shape %v, want %v", got.Shape, want.Shape)
	}
	wv, gv := reflect.ValueOf(want.Data), reflect.ValueOf(got.Data)
	for i := 0; i < wv.Len(); i++ {
		w, g := wv.Index(i), gv.Index(i)
		switch w.Kind() {
		case reflect.Float32, reflect.Float64:
			a, b := w.Float(), g.Float()
			if math.IsNaN(a) && math.IsNaN(b) {
				continue
			}
			if math.IsInf(a, 0) || math.IsInf(b, 0) {
				if a != b {
					return fmt.Errorf("element %d: got %v want %v", i, b, a)
				}
				continue
			}
			if math.Abs(a-b) > rel*math.Max(1, math.Abs(a)) || math.IsNaN(a) != math.IsNaN(b) {
				return fmt.Errorf("element %d: got %v want %v", i, b, a)
			}
		default:
			if !reflect.DeepEqual(w.Interface(), g.Interface()) {
				return fmt.Errorf("element %d: got %v want %v\n got  %v\n want %v", i, g, w, got.Data, want.Data)
			}
		}
	}
	return nil
}

func zzExampleCases() []tritonCase {
	block2 := func() *BlockSpec {
		return &BlockSpec{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}
	}
	block4 := &BlockSpec{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}
	f32 := func(dims []int64, v ...float32) *interpreter.Tensor {
		x := interpreter.NewTensor(xla.MakeShape(xla.Float32, dims...))
		copy(x.Data.([]float32), v)
		return x
	}
	vk, vspec, err := Vmap(func(k *Kernel, refs []*Ref) { refs[2].Store(refs[0].Load().Add(refs[1].Load())) },
		CallSpec{Name: "add", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
			InSpecs: []*BlockSpec{block2(), block2()}, OutSpecs: []*BlockSpec{block2()}}, 3, []bool{true, false})
	if err != nil {
		panic(err)
	}
	return []tritonCase{
		{
			name: "Example",
			kernel: func(k *Kernel, refs []*Ref) {
				x, y, o := refs[0], refs[1], refs[2]
				o.Store(x.Load().Add(y.Load()).Mul(k.ProgramID(0).Add(1).Astype(xla.Float32)))
			},
			spec: CallSpec{Name: "ex", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{4},
				InSpecs: []*BlockSpec{block2(), block2()}, OutSpecs: []*BlockSpec{block2()}},
			args: []*interpreter.Tensor{f32([]int64{8}, 0, 1, 2, 3, 4, 5, 6, 7), f32([]int64{8}, 1, 1, 1, 1, 1, 1, 1, 1)},
		},
		{
			name: "ExampleTrace",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[1].Store(refs[0].Load().Exp().Sum())
			},
			spec: CallSpec{Name: "softsum", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32)}},
			args: []*interpreter.Tensor{f32([]int64{4}, 0.5, 1, -2, 3)},
		},
		{
			name: "ExampleLoad",
			kernel: func(k *Kernel, refs []*Ref) {
				x, o := refs[0], refs[1]
				i := k.ProgramID(0).Mul(4).Add(k.Arange(4))
				in := i.Lt(6)
				v := Load(x, []any{All}, in, 0.0)
				Store(o, []any{All}, v.Max(0.0), in)
			},
			spec: CallSpec{Name: "relu", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 6)}, Grid: []int64{2},
				InSpecs: []*BlockSpec{block4}, OutSpecs: []*BlockSpec{block4}},
			args: []*interpreter.Tensor{f32([]int64{6}, -1, 2, -3, 4, -5, 6)},
		},
		{
			name:   "ExampleCallSpec_scalarPrefetch",
			kernel: func(k *Kernel, refs []*Ref) { refs[2].Store(refs[1].Load()) },
			spec: CallSpec{Name: "gather_rows", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 2)}, Grid: []int64{2},
				NumScalarPrefetch: 1,
				InSpecs: []*BlockSpec{{BlockShape: []int64{2, 2},
					IndexMap: func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0]), 0} }}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{2, 2},
					IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }}}},
			args: []*interpreter.Tensor{iTensor([]int64{2}, 2, 0), f32([]int64{6, 2}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)},
		},
		{
			name: "ExampleVmap", kernel: vk, spec: vspec,
			args: []*interpreter.Tensor{f32([]int64{3, 4}, 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23), f32([]int64{4}, 100, 200, 300, 400)},
		},
	}
}

func zzOwnCases() []tritonCase {
	return []tritonCase{
		{
			// Output block revisited by consecutive steps (reduction axis
			// last): the kernel accumulates into it.
			name: "own_revisit_accumulate",
			kernel: func(k *Kernel, refs []*Ref) {
				x, o := refs[0], refs[1]
				k.When(k.ProgramID(1).Eq(0), func() { o.Store(k.Zeros(xla.Float32, 2)) })
				o.Store(o.Load().Add(x.Load()))
			},
			spec: CallSpec{Name: "acc", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 3},
				InSpecs:  []*BlockSpec{{BlockShape: []int64{Squeezed, 2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[1], g[0]} })}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
			args: []*interpreter.Tensor{fTensor([]int64{3, 4}, func(i int) float64 { return float64(i) })},
		},
		{
			// An output never stored: what it holds.
			name: "own_unwritten_output",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[1].Store(refs[0].Load())
			},
			spec: CallSpec{Name: "unwritten", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Int32, 3)}},
			args: []*interpreter.Tensor{fTensor([]int64{4}, func(i int) float64 { return float64(i) })},
		},
		{
			// An output block partly stored: the rest.
			name: "own_partial_store",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[1].Store(refs[0].Load(Slice(0, 2)), Slice(0, 2))
			},
			spec: CallSpec{Name: "partial", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2},
				InSpecs:  []*BlockSpec{vec4Block()},
				OutSpecs: []*BlockSpec{vec4Block()}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) + 1 })},
		},
		{
			// Scratch: initial value and persistence across steps.
			name: "own_scratch",
			kernel: func(k *Kernel, refs []*Ref) {
				x, o, s := refs[0], refs[1], refs[2]
				s.Store(s.Load().Add(x.Load()))
				o.Store(s.Load())
			},
			spec: CallSpec{Name: "scratch", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2},
				InSpecs: []*BlockSpec{vec4Block()}, OutSpecs: []*BlockSpec{vec4Block()},
				ScratchShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) + 1 })},
		},
		{
			// Integer div/rem by zero, MinInt/-1, negatives; float rem.
			name: "own_int_div",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b := refs[0].Load(), refs[1].Load()
				refs[3].Store(a.Div(b))
				refs[4].Store(a.Rem(b))
				f := refs[2].Load()
				refs[5].Store(f.Rem(f.Mul(0).Add(-2.5)))
			},
			spec: CallSpec{Name: "idiv", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 6), xla.MakeShape(xla.Int32, 6), xla.MakeShape(xla.Float32, 6)}},
			args: []*interpreter.Tensor{
				iTensor([]int64{6}, 7, -7, 7, math.MinInt32, 5, -5),
				iTensor([]int64{6}, 2, 2, -2, -1, 0, 0),
				fTensor([]int64{6}, func(i int) float64 { return float64(i)*1.7 - 4 }),
			},
		},
		{
			// convert int->bool, float->bool, bool->float, not on ints,
			// transpose 3-D, broadcast of size-1 dims, iota float.
			name: "own_shapes",
			kernel: func(k *Kernel, refs []*Ref) {
				x := refs[0].Load() // f32[2,3,4]
				refs[1].Store(x.Transpose(2, 0, 1))
				refs[2].Store(x.Sum(1).Reshape(2, 1, 4).BroadcastTo(2, 3, 4).Add(k.Iota(xla.Float32, 1, 2, 3, 4)))
				i := x.Astype(xla.Int32)
				refs[3].Store(i.Not().Add(i.Astype(xla.Bool).Astype(xla.Int32)))
				refs[4].Store(x.Astype(xla.Bool))
			},
			spec: CallSpec{Name: "shapes", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 2, 3), xla.MakeShape(xla.Float32, 2, 3, 4),
				xla.MakeShape(xla.Int32, 2, 3, 4), xla.MakeShape(xla.Bool, 2, 3, 4)}},
			args: []*interpreter.Tensor{fTensor([]int64{2, 3, 4}, func(i int) float64 { return float64(i%5) - 2 })},
		},
		{
			// 2-D gather with adjacent arrays after a slice, masked, into a
			// masked scatter store; an OOB index masked off.
			name: "own_gather2d",
			kernel: func(k *Kernel, refs []*Ref) {
				x := refs[0]                                  // f32[4,5,6]
				r := k.Iota(xla.Int32, 0, 3, 2)               // rows 0..2
				c := k.Iota(xla.Int32, 1, 3, 2).Mul(4).Add(1) // 1, 5
				m := c.Lt(6).Reshape(1, 3, 2).BroadcastTo(4, 3, 2)
				v := Load(x, []any{All, r, c}, m, -1.0) // [4,3,2]
				refs[1].Store(v)
				o2 := refs[2] // f32[3,2] whole
				Store(o2, []any{k.Iota(xla.Int32, 0, 3, 1), k.Iota(xla.Int32, 1, 1, 2)}, v.Sum(0), nil)
			},
			spec: CallSpec{Name: "gather2d", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 3, 2), xla.MakeShape(xla.Float32, 3, 2)}},
			args: []*interpreter.Tensor{fTensor([]int64{4, 5, 6}, func(i int) float64 { return float64(i) })},
		},
		{
			// Block index past the array (block 2 of size 4 over 10 starts
			// at 8, block 3 would start at 12): only check the edge block
			// padding for ints.
			name: "own_int_padding",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[1].Store(refs[0].Load().ReduceMin().BroadcastTo(4))
			},
			spec: CallSpec{Name: "ipad", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 12)}, Grid: []int64{3},
				InSpecs: []*BlockSpec{vec4Block()}, OutSpecs: []*BlockSpec{vec4Block()}},
			args: []*interpreter.Tensor{iTensor([]int64{10}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
		},
		{
			// Scratch persistence (stored before read), int scratch start.
			name: "own_scratch_persist",
			kernel: func(k *Kernel, refs []*Ref) {
				x, o, oi, s, si := refs[0], refs[1], refs[2], refs[3], refs[4]
				k.When(k.ProgramID(0).Eq(0), func() { s.Store(k.Zeros(xla.Float32, 4)) })
				s.Store(s.Load().Add(x.Load()))
				o.Store(s.Load())
				oi.Store(si.Load())
			},
			spec: CallSpec{Name: "scratch2", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Int32, 8)}, Grid: []int64{2},
				InSpecs: []*BlockSpec{vec4Block()}, OutSpecs: []*BlockSpec{vec4Block(), vec4Block()},
				ScratchShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Int32, 4)}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) + 1 })},
		},
		{
			// Aliased output partly stored: the rest keeps the operand.
			name: "own_alias_partial",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[1].Store(refs[0].Load(Slice(0, 2)).Mul(-1), Slice(0, 2))
			},
			spec: CallSpec{Name: "aliaspartial", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2},
				InSpecs: []*BlockSpec{vec4Block()}, OutSpecs: []*BlockSpec{vec4Block()}, InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) + 1 })},
		},
		{
			// Output block revisited non-consecutively: grid (2,2), out
			// block g[1]: block j at steps (0,j) and (1,j).
			name: "own_revisit_nonconsecutive",
			kernel: func(k *Kernel, refs []*Ref) {
				x, o := refs[0], refs[1]
				k.When(k.ProgramID(0).Eq(0), func() { o.Store(x.Load()) })
				k.When(k.ProgramID(0).Eq(1), func() { o.Store(o.Load().Add(100)) })
			},
			spec: CallSpec{Name: "revisit2", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2, 2},
				InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[1]} })}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[1]} })}}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) + 1 })},
		},
		{
			// Edge padding and unwritten outputs of u8 and bool.
			name: "own_pad_u8_bool",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[2].Store(refs[0].Load().Astype(xla.Int32))
				refs[3].Store(refs[1].Load())
			},
			spec: CallSpec{Name: "padu8", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 12), xla.MakeShape(xla.Bool, 12),
				xla.MakeShape(xla.Uint8, 3), xla.MakeShape(xla.Bool, 3)}, Grid: []int64{3},
				InSpecs: []*BlockSpec{vec4Block(), vec4Block()}, OutSpecs: []*BlockSpec{vec4Block(), vec4Block(),
					{BlockShape: []int64{3}}, {BlockShape: []int64{3}}}},
			args: []*interpreter.Tensor{
				typedTensor(xla.Uint8, []int64{10}, []uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}),
				func() *interpreter.Tensor {
					x := interpreter.NewTensor(xla.MakeShape(xla.Bool, 10))
					for i := range x.Data.([]bool) {
						x.Data.([]bool)[i] = i%2 == 0
					}
					return x
				}(),
			},
		},
		{
			// Masked store into an edge block's padding, masked load whose
			// masked-off indices lie outside the ref.
			name: "own_masked_outside",
			kernel: func(k *Kernel, refs []*Ref) {
				x, o := refs[0], refs[1]
				idx := k.Arange(4).Add(k.ProgramID(0).Mul(3)) // up to 9, ref is 4
				m := idx.Lt(4)
				v := Load(x, []any{idx}, m, 7.0)
				Store(o, []any{All}, v, k.Arange(4).Lt(4))
			},
			spec: CallSpec{Name: "maskout", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 10)}, Grid: []int64{3},
				InSpecs: []*BlockSpec{vec4Block()}, OutSpecs: []*BlockSpec{vec4Block()}},
			args: []*interpreter.Tensor{fTensor([]int64{10}, func(i int) float64 { return float64(i) + 1 })},
		},
		{
			// A u64 constant above MaxInt64 (Attrs.Value int64 holds its bits).
			name: "own_u64_const",
			kernel: func(k *Kernel, refs []*Ref) {
				x := refs[0].Load()
				refs[1].Store(x.Add(uint64(1<<63 + 5)))
				refs[2].Store(x.Lt(uint64(1<<63 + 5)))
			},
			spec: CallSpec{Name: "u64c", OutShapes: []xla.Shape{xla.MakeShape(xla.Uint64, 4), xla.MakeShape(xla.Bool, 4)}},
			args: []*interpreter.Tensor{typedTensor(xla.Uint64, []int64{4}, []uint64{0, 1, 1 << 63, 1<<63 + 7})},
		},
		{
			// A block spec with a block shape and no index map: IndexMaps
			// entry nil, but the block is not the whole array.
			name:   "own_block_no_map",
			kernel: func(k *Kernel, refs []*Ref) { refs[1].Store(refs[0].Load()) },
			spec: CallSpec{Name: "nomap", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
				InSpecs: []*BlockSpec{{BlockShape: []int64{4}}}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) + 1 })},
		},
		{
			// Output aliased to the input; step 1 reads input block 0, which
			// step 0 stored through the output.
			name: "own_alias_cross_step",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[1].Store(refs[0].Load().Add(1000))
			},
			spec: CallSpec{Name: "aliascross", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2},
				InSpecs:            []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{0} })}},
				OutSpecs:           []*BlockSpec{vec4Block()},
				InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) + 1 })},
		},
		{
			// A for loop with lo > hi, with an int8 dot into i32.
			name: "own_for_empty_dot_i8",
			kernel: func(k *Kernel, refs []*Ref) {
				a := refs[0].Load().Astype(xla.Int8)
				d := Dot(a, a, xla.Int32)
				r := k.ForLoop(5, 2, []*Value{d}, func(i *Value, c []*Value) []*Value { return []*Value{c[0].Add(1)} })
				refs[1].Store(r[0])
			},
			spec: CallSpec{Name: "dot8", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4, 4)}},
			args: []*interpreter.Tensor{iTensor([]int64{4, 4}, 100, -100, 120, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 127)},
		},
	}
}

// TestIRReferenceEvaluator runs ir_reference_test.go's evaluator on the
// package's examples, the Triton test kernels and kernels of its own, and
// requires interpret mode's results (floats to a relative 1e-5).
func TestIRReferenceEvaluator(t *testing.T) {
	groups := map[string][]tritonCase{
		"triton":   append(tritonCases(), vmappedCases()...),
		"examples": zzExampleCases(),
		"own":      zzOwnCases(),
	}
	matched, total := 0, 0
	for _, g := range []string{"examples", "triton", "own"} {
		for _, c := range groups[g] {
			total++
			ok := t.Run(g+"/"+c.name, func(t *testing.T) {
				want, err := runCall(c.kernel, c.spec, c.args...)
				if err != nil {
					t.Fatalf("interpret: %v", err)
				}
				p, err := Trace(c.kernel, c.spec, argTypes(c.args))
				if err != nil {
					t.Fatalf("trace: %v", err)
				}
				got, err := zzEval(p, c.args)
				if err != nil {
					t.Fatalf("%v\n%s", err, p)
				}
				if len(got) != len(want) {
					t.Fatalf("%d outputs, want %d", len(got), len(want))
				}
				for i := range want {
					if err := zzCompare(want[i], got[i], 1e-5); err != nil {
						t.Errorf("output %d: %v\n%s", i, err, p)
					}
				}
			})
			if ok {
				matched++
			}
		}
	}
	t.Logf("evaluator matched interpret mode on %d of %d kernels", matched, total)
}
