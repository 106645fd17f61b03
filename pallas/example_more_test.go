package pallas_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// runOne builds a module of one function taking args' shapes, whose body
// emit writes, runs it on the built-in interpreter and returns its first
// result's data.
func runOne(emit func(fb *stablehlo.FuncBuilder) []*stablehlo.Value, args ...*interpreter.Tensor) (any, error) {
	b := stablehlo.NewBuilder("example")
	types := make([]stablehlo.Type, len(args))
	vals := make([]interpreter.Value, len(args))
	for i, a := range args {
		types[i] = stablehlo.Tensor(a.Shape.DType, a.Shape.Dims...)
		vals[i] = a
	}
	fb := b.NewFunction("main", types...)
	fb.Return(emit(fb)...)
	m, err := b.Build()
	if err != nil {
		return nil, err
	}
	p, err := interpreter.Compile(m, "main")
	if err != nil {
		return nil, err
	}
	res, err := p.Run(context.Background(), interpreter.Device{}, vals)
	if err != nil {
		return nil, err
	}
	return res[0].(*interpreter.Tensor).Data, nil
}

func f32Tensor(data []float32, dims ...int64) *interpreter.Tensor {
	t := interpreter.NewTensor(xla.MakeShape(xla.Float32, dims...))
	copy(t.Data.([]float32), data)
	return t
}

func i32Tensor(data []int32, dims ...int64) *interpreter.Tensor {
	t := interpreter.NewTensor(xla.MakeShape(xla.Int32, dims...))
	copy(t.Data.([]int32), data)
	return t
}

// Masked loads and stores: the last of two (4,)-blocks of a 6-element
// vector reads `other` past the data and writes only its first two
// elements (the mask also keeps the padding, which reads as NaN, out of
// the result).
func ExampleLoad() {
	relu := func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, o := refs[0], refs[1]
		i := k.ProgramID(0).Mul(4).Add(k.Arange(4)) // element indices of the block
		in := i.Lt(6)
		v := pallas.Load(x, []any{pallas.All}, in, 0.0)
		pallas.Store(o, []any{pallas.All}, v.Max(0.0), in)
	}
	block := &pallas.BlockSpec{BlockShape: []int64{4}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }}
	out, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, relu, pallas.CallSpec{
			Name:      "relu",
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 6)},
			Grid:      []int64{2},
			InSpecs:   []*pallas.BlockSpec{block},
			OutSpecs:  []*pallas.BlockSpec{block},
		}, fb.Arg(0))
	}, f32Tensor([]float32{-1, 2, -3, 4, -5, 6}, 6))
	fmt.Println(out, err)
	// Output: [0 2 0 4 0 6] <nil>
}

// Scalar prefetch: the first operand (an index array) reaches the index
// maps, so the data decide which block each grid step reads. Here step i
// copies row block rows[i] of x (seed 001's block-aligned dynamic slice).
func ExampleCallSpec_scalarPrefetch() {
	copyBlock := func(k *pallas.Kernel, refs []*pallas.Ref) {
		// refs: rows (prefetch, whole), the x block, the output block.
		refs[2].Store(refs[1].Load())
	}
	out, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, copyBlock, pallas.CallSpec{
			Name:              "gather_rows",
			OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 4, 2)},
			Grid:              []int64{2},
			NumScalarPrefetch: 1,
			InSpecs: []*pallas.BlockSpec{{BlockShape: []int64{2, 2},
				IndexMap: func(g []*pallas.Value, pf []*pallas.Ref) []any { return []any{pf[0].Load(g[0]), 0} }}},
			OutSpecs: []*pallas.BlockSpec{{BlockShape: []int64{2, 2},
				IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }}},
		}, fb.Arg(0), fb.Arg(1))
	}, i32Tensor([]int32{2, 0}, 2), f32Tensor([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 6, 2))
	fmt.Println(out, err)
	// Output: [8 9 10 11 0 1 2 3] <nil>
}

// Vmap batches a call over a leading dim: the (2,)-block kernel runs on
// each of 3 rows of x, y stays shared.
func ExampleVmap() {
	add := func(k *pallas.Kernel, refs []*pallas.Ref) {
		refs[2].Store(refs[0].Load().Add(refs[1].Load()))
	}
	block := &pallas.BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }}
	spec := pallas.CallSpec{
		Name:      "add",
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
		Grid:      []int64{2},
		InSpecs:   []*pallas.BlockSpec{block, block},
		OutSpecs:  []*pallas.BlockSpec{block},
	}
	kernel, batched, err := pallas.Vmap(add, spec, 3, []bool{true, false})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("grid", batched.Grid, "output", batched.OutShapes[0])
	out, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, kernel, batched, fb.Arg(0), fb.Arg(1))
	}, f32Tensor([]float32{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}, 3, 4), f32Tensor([]float32{100, 200, 300, 400}, 4))
	fmt.Println(out, err)
	// Output:
	// grid [3 2] output tensor<3x4xf32>
	// [100 201 302 403 110 211 312 413 120 221 322 423] <nil>
}

// Vmap batches scalar prefetch too: each of 2 gathers picks its own rows
// (a batch of block-sparse layouts in one call), and the kernel and index
// map read their element of the prefetch array as if unbatched.
func ExampleVmap_scalarPrefetch() {
	copyBlock := func(k *pallas.Kernel, refs []*pallas.Ref) {
		refs[2].Store(refs[1].Load())
	}
	spec := pallas.CallSpec{
		Name:              "gather_rows",
		OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 4, 2)},
		Grid:              []int64{2},
		NumScalarPrefetch: 1,
		InSpecs: []*pallas.BlockSpec{{BlockShape: []int64{2, 2},
			IndexMap: func(g []*pallas.Value, pf []*pallas.Ref) []any { return []any{pf[0].Load(g[0]), 0} }}},
		OutSpecs: []*pallas.BlockSpec{{BlockShape: []int64{2, 2},
			IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }}},
	}
	// The rows (prefetch) are batched, x is shared.
	kernel, batched, err := pallas.Vmap(copyBlock, spec, 2, []bool{true, false})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, kernel, batched, fb.Arg(0), fb.Arg(1))
	}, i32Tensor([]int32{2, 0, 1, 1}, 2, 2), f32Tensor([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 6, 2))
	fmt.Println(out, err)
	// Output: [8 9 10 11 0 1 2 3 4 5 6 7 4 5 6 7] <nil>
}

// An unmasked load outside its block fails the run (interpret mode checks
// by default); the error wraps a *BoundsError that names the kernel, the
// grid point, the access and the index.
func ExampleBoundsError() {
	shift := func(k *pallas.Kernel, refs []*pallas.Ref) {
		// Step i reads elements i..i+1 of its (2,)-block: at step 1, one
		// past its end (a static slice would be a build-time error).
		refs[1].Store(refs[0].Load(pallas.DS(k.ProgramID(0), 2)))
	}
	block := &pallas.BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }}
	_, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, shift, pallas.CallSpec{
			Name:      "shift",
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
			Grid:      []int64{2},
			InSpecs:   []*pallas.BlockSpec{block},
			OutSpecs:  []*pallas.BlockSpec{block},
		}, fb.Arg(0))
	}, f32Tensor([]float32{1, 2, 3, 4}, 4))
	var be *pallas.BoundsError
	if errors.As(err, &be) {
		fmt.Println("kernel", be.Kernel, "grid point", be.GridPoint, be.Kind, be.Index, "bounds", be.Bounds)
	}
	// Output: kernel shift grid point [1] slice of size [2] starting at [1] bounds [2]
}

// A histogram: four programs each count their block of x into the same
// five bins with AtomicAdd (an index array with repeats: every repeat
// adds), the bins starting as the zeros the output is aliased to. On a
// GPU the programs' updates may land in any order; add commutes, so the
// Triton race check takes this kernel.
func ExampleAtomicAdd() {
	count := func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, bins := refs[0], refs[2]
		pallas.AtomicAdd(bins, []any{x.Load()}, 1, nil)
	}
	x := i32Tensor([]int32{0, 1, 1, 4, 2, 2, 2, 0, 4, 4, 1, 3, 0, 0, 0, 2}, 16)
	data, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, count, pallas.CallSpec{
			Name:      "histogram",
			OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 5)},
			Grid:      []int64{4},
			InSpecs: []*pallas.BlockSpec{
				{BlockShape: []int64{4}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }},
				nil, // the zeros, whole
			},
			InputOutputAliases: map[int]int{1: 0},
		}, fb.Arg(0), fb.Zero(stablehlo.Tensor(xla.Int32, 5)))
	}, x)
	fmt.Println(data, err)
	// Output: [5 3 4 1 3] <nil>
}

// Programs insert keys into an 8-slot hash table (key mod 8), each lane
// claiming its slot with a compare-and-swap that expects it empty (-1).
// Which key wins a slot depends on the programs' order on a GPU, so the
// call says any order is right; interpret mode runs the grid in order, and
// the first key of each slot wins.
func ExampleAtomicCas() {
	insert := func(k *pallas.Kernel, refs []*pallas.Ref) {
		keys, table := refs[0], refs[2]
		key := keys.Load()
		pallas.AtomicCas(table, []any{key.Rem(8)}, -1, key, nil)
	}
	keys := i32Tensor([]int32{3, 11, 4, 19, 12, 7, 27, 5}, 8)
	data, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		empty := fb.SplatOf(xla.Int32, -1, 8)
		return pallas.Call(fb, insert, pallas.CallSpec{
			Name:      "insert",
			OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 8)},
			Grid:      []int64{2},
			InSpecs: []*pallas.BlockSpec{
				{BlockShape: []int64{4}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }},
				nil, // the empty table, whole
			},
			InputOutputAliases: map[int]int{1: 0},
			CompilerParams:     pallas.CompilerParams{OrderDependentAtomics: true},
		}, fb.Arg(0), empty)
	}, keys)
	fmt.Println(data, err)
	// Output: [-1 -1 -1 3 4 5 -1 7] <nil>
}

// Attention's scores q·kᵀ with Einsum, as jnp.einsum("qd,kd->qk", q, k):
// the letters name the dims, d (in both inputs, not the output) is summed.
func ExampleEinsum() {
	scores := func(k *pallas.Kernel, refs []*pallas.Ref) {
		q, keys, out := refs[0], refs[1], refs[2]
		out.Store(pallas.Einsum("qd,kd->qk", q.Load(), keys.Load(), xla.Float32))
	}
	q := f32Tensor([]float32{1, 0, 0, 1, 1, 1, 0, 0}, 2, 4)
	keys := f32Tensor([]float32{1, 2, 3, 4, 0, 1, 0, 1, 2, 0, 0, 0}, 3, 4)
	data, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, scores, pallas.CallSpec{Name: "scores", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 3)}},
			fb.Arg(0), fb.Arg(1))
	}, q, keys)
	fmt.Println(data, err)
	// Output: [5 1 2 3 1 2] <nil>
}

// A row-wise layer norm, one program a row: Mean, Var and Rsqrt of the
// loaded row (JAX's jnp.mean, jnp.var and lax.rsqrt), and a running total
// with Cumsum.
func ExampleValue_Var() {
	norm := func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, y, run := refs[0], refs[1], refs[2]
		row := x.Load()                            // f32[1, 4]
		mean, v := row.Mean(1), row.Var(1)         // f32[1]
		scale := v.Add(1e-5).Rsqrt().ExpandDims(1) // f32[1, 1]
		y.Store(row.Sub(mean.ExpandDims(1)).Mul(scale).Round())
		run.Store(row.Cumsum(1))
	}
	rowMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }
	x := f32Tensor([]float32{1, 2, 3, 4, 10, 10, 10, 50}, 2, 4)
	for out := 0; out < 2; out++ {
		data, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
			return pallas.Call(fb, norm, pallas.CallSpec{
				Name:      "layer_norm",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4), xla.MakeShape(xla.Float32, 2, 4)},
				Grid:      []int64{2},
				InSpecs:   []*pallas.BlockSpec{{BlockShape: []int64{1, 4}, IndexMap: rowMap}},
				OutSpecs:  []*pallas.BlockSpec{{BlockShape: []int64{1, 4}, IndexMap: rowMap}, {BlockShape: []int64{1, 4}, IndexMap: rowMap}},
			}, fb.Arg(0))[out : out+1]
		}, x)
		fmt.Println(data, err)
	}
	// Output:
	// [-1 -0 0 1 -1 -1 -1 2] <nil>
	// [1 3 6 10 10 20 30 80] <nil>
}

// A data-dependent branch with results (lax.cond): each row is scaled
// down when its largest magnitude passes 10, and the kernel records which
// rows it scaled, a store in one branch only.
func ExampleKernel_Cond() {
	clip := func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, y, scaled := refs[0], refs[1], refs[2]
		row := x.Load() // f32[1, 4]
		peak := row.Abs().ReduceMax()
		out := k.Cond(peak.Gt(10), func() []*pallas.Value {
			scaled.Store(1)
			return []*pallas.Value{row.Mul(10).Div(peak)}
		}, func() []*pallas.Value {
			scaled.Store(0)
			return []*pallas.Value{row}
		})
		y.Store(out[0])
	}
	rowMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }
	one := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }
	x := f32Tensor([]float32{1, -2, 3, 4, 10, 20, -40, 5}, 2, 4)
	for out := 0; out < 2; out++ {
		data, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
			return pallas.Call(fb, clip, pallas.CallSpec{
				Name:      "clip_rows",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4), xla.MakeShape(xla.Int32, 2)},
				Grid:      []int64{2},
				InSpecs:   []*pallas.BlockSpec{{BlockShape: []int64{1, 4}, IndexMap: rowMap}},
				OutSpecs:  []*pallas.BlockSpec{{BlockShape: []int64{1, 4}, IndexMap: rowMap}, {BlockShape: []int64{pallas.Squeezed}, IndexMap: one}},
			}, fb.Arg(0))[out : out+1]
		}, x)
		fmt.Println(data, err)
	}
	// Output:
	// [1 -2 3 4 2.5 5 -10 1.25] <nil>
	// [0 1] <nil>
}

// Joining values in a kernel: each (1, 4) row block and ten times it,
// end to end along the row (jnp.concatenate), and the two stacked along a
// new last axis (jnp.stack), which interleaves them once reshaped.
func ExampleConcatenate() {
	join := func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, cat, stk := refs[0], refs[1], refs[2]
		row := x.Load() // f32[1, 4]
		cat.Store(pallas.Concatenate(1, row, row.Mul(10)))
		stk.Store(pallas.Stack(-1, row, row.Mul(10)).Reshape(1, 8))
	}
	rowMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }
	x := f32Tensor([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)
	for out := 0; out < 2; out++ {
		data, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
			return pallas.Call(fb, join, pallas.CallSpec{
				Name:      "join",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 8), xla.MakeShape(xla.Float32, 2, 8)},
				Grid:      []int64{2},
				InSpecs:   []*pallas.BlockSpec{{BlockShape: []int64{1, 4}, IndexMap: rowMap}},
				OutSpecs:  []*pallas.BlockSpec{{BlockShape: []int64{1, 8}, IndexMap: rowMap}, {BlockShape: []int64{1, 8}, IndexMap: rowMap}},
			}, fb.Arg(0))[out : out+1]
		}, x)
		fmt.Println(data, err)
	}
	// Output:
	// [1 2 3 4 10 20 30 40 5 6 7 8 50 60 70 80] <nil>
	// [1 10 2 20 3 30 4 40 5 50 6 60 7 70 8 80] <nil>
}

// The halves of each row rotated, as a rotary embedding does with the
// cosine c and sine s of its angle: [x1·c - x2·s, x2·c + x1·s] for the
// halves x1, x2 of the row (jnp.split and jnp.concatenate).
func ExampleSplit() {
	const c, s = 0.5, 0.75
	rotate := func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, y := refs[0], refs[1]
		h := pallas.Split(x.Load(), -1, 2) // two f32[1, 2]
		y.Store(pallas.Concatenate(-1, h[0].Mul(c).Sub(h[1].Mul(s)), h[1].Mul(c).Add(h[0].Mul(s))))
	}
	rowMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }
	x := f32Tensor([]float32{1, 2, 3, 4, 0, 4, 8, 0}, 2, 4)
	data, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, rotate, pallas.CallSpec{
			Name:      "rotate_halves",
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4)},
			Grid:      []int64{2},
			InSpecs:   []*pallas.BlockSpec{{BlockShape: []int64{1, 4}, IndexMap: rowMap}},
			OutSpecs:  []*pallas.BlockSpec{{BlockShape: []int64{1, 4}, IndexMap: rowMap}},
		}, fb.Arg(0))
	}, x)
	fmt.Println(data, err)
	// Output:
	// [-1.75 -2 2.25 3.5 -6 2 4 3] <nil>
}

// A linear recurrence h_t = a_t·h_{t-1} + b_t along each row, the state
// of a selective scan, as an associative scan of the pairs (a, b): two
// steps compose as (a1·a2, a2·b1 + b2).
func ExampleAssociativeScan() {
	recurrence := func(k *pallas.Kernel, refs []*pallas.Ref) {
		a, b, h := refs[0].Load(), refs[1].Load(), refs[2]
		step := func(x, y []*pallas.Value) []*pallas.Value {
			return []*pallas.Value{x[0].Mul(y[0]), y[0].Mul(x[1]).Add(y[1])}
		}
		h.Store(pallas.AssociativeScan(-1, pallas.Forward, step, a, b)[1])
	}
	rowMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }
	row := &pallas.BlockSpec{BlockShape: []int64{1, 4}, IndexMap: rowMap}
	a := f32Tensor([]float32{0.5, 0.5, 0.5, 0.5, 1, 2, 0, 1}, 2, 4)
	b := f32Tensor([]float32{1, 1, 1, 1, 1, 1, 5, 1}, 2, 4)
	data, err := runOne(func(fb *stablehlo.FuncBuilder) []*stablehlo.Value {
		return pallas.Call(fb, recurrence, pallas.CallSpec{
			Name:      "linear_recurrence",
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4)},
			Grid:      []int64{2},
			InSpecs:   []*pallas.BlockSpec{row, row},
			OutSpecs:  []*pallas.BlockSpec{row},
		}, fb.Arg(0), fb.Arg(1))
	}, a, b)
	fmt.Println(data, err)
	// Output:
	// [1 1.5 1.75 1.875 1 3 5 6] <nil>
}

// A kernel's Triton form run on the CPU: EvalTriton lowers the call as
// Backend: pallas.Triton does (race check included) and runs the TTIR on
// a reference evaluator, every program in row-major order and reversed,
// to check the GPU form where no GPU is at hand.
func ExampleEvalTriton() {
	scale := func(k *pallas.Kernel, refs []*pallas.Ref) {
		refs[1].Store(refs[0].Load().Mul(k.ProgramID(0).Add(1).Astype(xla.Float32)))
	}
	blocks := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }
	spec := pallas.CallSpec{
		Name:      "scale_by_program",
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
		Grid:      []int64{4},
		InSpecs:   []*pallas.BlockSpec{{BlockShape: []int64{2}, IndexMap: blocks}},
		OutSpecs:  []*pallas.BlockSpec{{BlockShape: []int64{2}, IndexMap: blocks}},
	}
	x := f32Tensor([]float32{1, 1, 1, 1, 1, 1, 1, 1}, 8)
	outs, err := pallas.EvalTriton(scale, spec, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(outs[0].Data)

	// Every program writing the whole output is a race: refused.
	spec.OutSpecs = nil
	_, err = pallas.EvalTriton(scale, spec, x)
	fmt.Println(err != nil)
	// Output:
	// [1 1 2 2 3 3 4 4]
	// true
}
