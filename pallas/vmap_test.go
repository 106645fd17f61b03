package pallas

import (
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVmapAddsLeadingGridAxis(t *testing.T) {
	// o[i] = x[i] + y (+ 100 * program_id(0)) with (2,) blocks over a (2,)
	// grid; x is batched (3 rows), y is not; a whole-array batched input z.
	kernel := func(k *Kernel, r []*Ref) {
		r[3].Store(r[0].Load().Add(r[1].Load()).Add(k.ProgramID(0).Mul(100).Astype(xla.Float32)).Add(r[2].Load(0)))
	}
	blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
	spec := CallSpec{Name: "addv", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
		InSpecs: []*BlockSpec{blk, blk, nil}, OutSpecs: []*BlockSpec{blk}}
	vk, vspec, err := Vmap(kernel, spec, 3, []bool{true, false, true})
	require.NoError(t, err)
	require.Equal(t, []int64{3, 2}, vspec.Grid)
	x := tensor(t, xla.Float32, f32s(12, func(i int) float32 { return float32(i) }), 3, 4)
	y := tensor(t, xla.Float32, []float32{1000, 2000, 3000, 4000}, 4)
	z := tensor(t, xla.Float32, []float32{0.5, 9, 0.25, 9, 0.125, 9}, 3, 2)
	out, err := runCall(vk, vspec, x, y, z)
	require.NoError(t, err)
	want := make([]float32, 12)
	zs := []float32{0.5, 0.25, 0.125}
	for b := 0; b < 3; b++ {
		for i := 0; i < 4; i++ {
			want[b*4+i] = float32(b*4+i) + float32(1000*(i+1)) + float32(100*(i/2)) + zs[b]
		}
	}
	require.Equal(t, want, out[0].Data)
	require.Equal(t, []int64{3, 4}, out[0].Shape.Dims)
}

func TestVmapErrors(t *testing.T) {
	k := func(k *Kernel, r []*Ref) {}
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, NumScalarPrefetch: 1}
	// A batched prefetch array whose leading dim is not the batch size,
	// or that has no leading dim.
	vk, vspec, err := Vmap(k, spec, 2, []bool{true, false})
	require.NoError(t, err)
	out := tensor(t, xla.Float32, make([]float32, 8), 2, 4)
	_, err = runCall(vk, vspec, tensor(t, xla.Int32, []int32{1, 2, 3}, 3), out)
	require.ErrorContains(t, err, "scalar-prefetch operand 0 (tensor<3xi32>) is batched: its dim 0 is 3, the batch size is 2")
	_, err = runCall(vk, vspec, interpreter.NewTensor(xla.MakeShape(xla.Int32)), out)
	require.ErrorContains(t, err, "batched scalar-prefetch operand 0 has rank 0, fewer than its 1 batch dims")
	// A spec whose grid lost Vmap's axis.
	vspec.Grid = nil
	_, err = runCall(vk, vspec, tensor(t, xla.Int32, []int32{1, 2}, 2), out)
	require.ErrorContains(t, err, "batch axis 0 of scalar-prefetch operand 0 is outside the grid []")
	_, _, err = Vmap(k, spec, 0, []bool{false, false})
	require.ErrorContains(t, err, "batch size 0")
	_, _, err = Vmap(nil, spec, 2, []bool{false})
	require.ErrorContains(t, err, "nil")
}

func TestVmapNested(t *testing.T) {
	// o = x + y + z + 10 * program_id(0) over (2,) blocks. x (blocked) is
	// batched by both Vmaps, y (whole array) by the inner one only, z (whole
	// array) by the outer one only: o[a, b] = x[a, b] + y[b] + z[a].
	kernel := func(k *Kernel, r []*Ref) {
		r[3].Store(r[0].Load().Add(r[1].Load(Slice(0, 2))).Add(r[2].Load(Slice(0, 2))).Add(k.ProgramID(0).Mul(10).Astype(xla.Float32)))
	}
	blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
	spec := CallSpec{Name: "add3", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
		InSpecs: []*BlockSpec{blk, nil, nil}, OutSpecs: []*BlockSpec{blk}}
	ik, ispec, err := Vmap(kernel, spec, 3, []bool{true, true, false}) // inner batch b = 3
	require.NoError(t, err)
	ok, ospec, err := Vmap(ik, ispec, 2, []bool{true, false, true}) // outer batch a = 2
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3, 2}, ospec.Grid)
	x := tensor(t, xla.Float32, f32s(24, func(i int) float32 { return float32(i) }), 2, 3, 4)
	y := tensor(t, xla.Float32, f32s(6, func(i int) float32 { return float32(100 * (i + 1)) }), 3, 2)
	z := tensor(t, xla.Float32, []float32{0.5, 0.25, 0.125, 0.0625}, 2, 2)
	out, err := runCall(ok, ospec, x, y, z)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3, 4}, out[0].Shape.Dims)
	want := make([]float32, 24)
	for a := 0; a < 2; a++ {
		for b := 0; b < 3; b++ {
			for i := 0; i < 4; i++ {
				e := i % 2
				want[(a*3+b)*4+i] = float32((a*3+b)*4+i) + float32(100*(2*b+e+1)) + []float32{0.5, 0.25, 0.125, 0.0625}[2*a+e] + float32(10*(i/2))
			}
		}
	}
	require.Equal(t, want, out[0].Data)
}

// batchElem is element b of x along its leading (batch) dim.
func batchElem(t *testing.T, x *interpreter.Tensor, b int) *interpreter.Tensor {
	t.Helper()
	dims := x.Shape.Dims[1:]
	out := interpreter.NewTensor(xla.MakeShape(x.Shape.DType, dims...))
	n := int(out.Shape.Size())
	switch d := x.Data.(type) {
	case []float32:
		copy(out.Data.([]float32), d[b*n:(b+1)*n])
	case []int32:
		copy(out.Data.([]int32), d[b*n:(b+1)*n])
	default:
		require.Failf(t, "unsupported", "%v", x.Shape)
	}
	return out
}

// requireVmapMatchesLoop runs the Vmap of (kernel, spec) on args and the
// un-batched call on each batch element (unbatched args as they are), and
// requires the batched outputs to be the per-element ones, stacked.
func requireVmapMatchesLoop(t *testing.T, kernel KernelFunc, spec CallSpec, batch int64, batched []bool, args ...*interpreter.Tensor) {
	t.Helper()
	vk, vspec, err := Vmap(kernel, spec, batch, batched)
	require.NoError(t, err)
	got, err := runCall(vk, vspec, args...)
	require.NoError(t, err)
	require.Len(t, got, len(spec.OutShapes))
	for b := 0; b < int(batch); b++ {
		elem := make([]*interpreter.Tensor, len(args))
		for i, a := range args {
			elem[i] = a
			if batched[i] {
				elem[i] = batchElem(t, a, b)
			}
		}
		want, err := runCall(kernel, spec, elem...)
		require.NoError(t, err)
		for o := range want {
			require.Equal(t, append([]int64{batch}, spec.OutShapes[o].Dims...), got[o].Shape.Dims)
			assert.Equal(t, want[o].Data, batchElem(t, got[o], b).Data, "output %d, batch element %d", o, b)
		}
	}
}

func TestVmapScalarPrefetch(t *testing.T) {
	// The prefetch array (unbatched) picks each step's input block and is
	// read by the kernel; x is batched, y is not.
	kernel := func(k *Kernel, r []*Ref) {
		i := k.ProgramID(0)
		r[3].Store(r[1].Load().Add(r[2].Load()).Add(r[0].Load(i).Mul(100).Add(i).Astype(xla.Float32)))
	}
	pick := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0])} }}
	blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
	spec := CallSpec{Name: "pf", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{4}, NumScalarPrefetch: 1,
		InSpecs: []*BlockSpec{pick, blk}, OutSpecs: []*BlockSpec{blk}}
	perm := tensor(t, xla.Int32, []int32{2, 0, 3, 1}, 4)
	x := tensor(t, xla.Float32, f32s(24, func(i int) float32 { return float32(i) }), 3, 8)
	y := tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(1000 * i) }), 8)
	requireVmapMatchesLoop(t, kernel, spec, 3, []bool{false, true, false}, perm, x, y)
}

// A batched prefetch array: each batch element's kernel and index maps
// see their own element, with the shape they were written for (Shape,
// Info), whether indexed by a scalar, a dynamic slice or an index array.
func TestVmapBatchedScalarPrefetch(t *testing.T) {
	var shapes [][]int64
	var infos []RefInfo
	kernel := func(k *Kernel, r []*Ref) {
		pf, x, o := r[0], r[1], r[2]
		shapes, infos = append(shapes[:0], pf.Shape()), append(infos[:0], pf.Info())
		i := k.ProgramID(0)
		// pf[i, :] (a whole row); pf[:, [1, 0]] with an index array
		// (NumPy's placement: the array's dims where the index is, so
		// f32[4,2], whose column sums, swapped, are added).
		row := pf.Load(i).Astype(xla.Float32).Sum(0)
		cols := pf.Load(All, k.Arange(2).Mul(-1).Add(1)).Astype(xla.Float32).Sum(0)
		o.Store(x.Load().Add(row.Mul(100)).Add(cols.Mul(10000)))
	}
	pick := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0], 0)} }}
	blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
	spec := CallSpec{Name: "bpf", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{4}, NumScalarPrefetch: 1,
		InSpecs: []*BlockSpec{pick}, OutSpecs: []*BlockSpec{blk}}
	// Three block permutations (with a second column), one per element.
	perm := tensor(t, xla.Int32, []int32{2, 1, 0, 2, 3, 3, 1, 4, 0, 5, 1, 6, 2, 7, 3, 8, 3, 9, 2, 1, 1, 2, 0, 3}, 3, 4, 2)
	x := tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i) }), 8)
	bx := tensor(t, xla.Float32, f32s(24, func(i int) float32 { return float32(i) }), 3, 8)
	requireVmapMatchesLoop(t, kernel, spec, 3, []bool{true, false}, perm, x)
	requireVmapMatchesLoop(t, kernel, spec, 3, []bool{true, true}, perm, bx)
	assert.Equal(t, [][]int64{{4, 2}}, shapes)
	assert.Equal(t, []int64{4, 2}, infos[0].ArrayShape)
	assert.Equal(t, []int64{4, 2}, infos[0].BlockShape)

	// Indexing errors count the dims the kernel sees.
	bad := func(k *Kernel, r []*Ref) { r[2].Store(r[1].Load().Add(r[0].Load(0, 5).Astype(xla.Float32))) }
	vk, vspec, err := Vmap(bad, spec, 3, []bool{true, false})
	require.NoError(t, err)
	_, err = runCall(vk, vspec, perm, x)
	require.ErrorContains(t, err, "index 5 is outside dim 1 (size 2) of prefetch 0 (i32[4,2] element of i32[3,4,2] batched by Vmap)")
	bad = func(k *Kernel, r []*Ref) { r[2].Store(r[1].Load().Add(r[0].Load(0, 0, 0).Astype(xla.Float32))) }
	vk, vspec, err = Vmap(bad, spec, 3, []bool{true, false})
	require.NoError(t, err)
	_, err = runCall(vk, vspec, perm, x)
	require.ErrorContains(t, err, "3 indices for prefetch 0 (i32[4,2] element of i32[3,4,2] batched by Vmap) of rank 2")
	// So do the run-time bounds errors: a dynamic index past the element's
	// dim 1 is reported in the element's dims, without the batch's.
	bad = func(k *Kernel, r []*Ref) {
		r[2].Store(r[1].Load().Add(r[0].Load(0, k.ProgramID(0).Add(1)).Astype(xla.Float32)))
	}
	vk, vspec, err = Vmap(bad, spec, 3, []bool{true, false})
	require.NoError(t, err)
	_, err = runCall(vk, vspec, perm, x)
	require.ErrorContains(t, err, "(i32[4,2] element of i32[3,4,2] batched by Vmap)")
	require.ErrorContains(t, err, "element index (0, 2) outside [0, 4) x [0, 2)")
}

// Nested Vmaps batch a prefetch array by both, one of them, or neither:
// o[a, b] picks its x block with p[a, b] (or p[b], p[a]) and adds the
// picked block index.
func TestVmapNestedBatchedPrefetch(t *testing.T) {
	kernel := func(k *Kernel, r []*Ref) {
		r[2].Store(r[1].Load().Add(r[0].Load(k.ProgramID(0)).Astype(xla.Float32).Mul(1000)))
	}
	pick := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0])} }}
	blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
	spec := CallSpec{Name: "npf", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}, NumScalarPrefetch: 1,
		InSpecs: []*BlockSpec{pick}, OutSpecs: []*BlockSpec{blk}}
	x := tensor(t, xla.Float32, f32s(6, func(i int) float32 { return float32(i) }), 6) // 3 blocks
	// p holds, for outer a (2) and inner b (3), the blocks of the 2 steps.
	pv := []int32{0, 1, 1, 2, 2, 0, 2, 2, 1, 0, 0, 0}
	for _, c := range []struct {
		inner, outer bool
		dims         []int64
		at           func(a, b, s int) int32
	}{
		{true, true, []int64{2, 3, 2}, func(a, b, s int) int32 { return pv[(a*3+b)*2+s] }},
		{true, false, []int64{3, 2}, func(a, b, s int) int32 { return pv[b*2+s] }},
		{false, true, []int64{2, 2}, func(a, b, s int) int32 { return pv[a*2+s] }},
	} {
		ik, ispec, err := Vmap(kernel, spec, 3, []bool{c.inner, false})
		require.NoError(t, err)
		ok, ospec, err := Vmap(ik, ispec, 2, []bool{c.outer, false})
		require.NoError(t, err)
		n := int64(1)
		for _, d := range c.dims {
			n *= d
		}
		p := tensor(t, xla.Int32, pv[:n], c.dims...)
		out, err := runCall(ok, ospec, p, x)
		require.NoError(t, err, "inner %v outer %v", c.inner, c.outer)
		require.Equal(t, []int64{2, 3, 4}, out[0].Shape.Dims)
		want := make([]float32, 24)
		for a := 0; a < 2; a++ {
			for b := 0; b < 3; b++ {
				for i := 0; i < 4; i++ {
					blkIdx := c.at(a, b, i/2)
					want[(a*3+b)*4+i] = float32(int(blkIdx)*2+i%2) + 1000*float32(blkIdx)
				}
			}
		}
		assert.Equal(t, want, out[0].Data, "inner %v outer %v", c.inner, c.outer)
	}
}

func TestVmapInputOutputAliases(t *testing.T) {
	// Output 0 starts as operand 1 (batched): the kernel reads it and
	// writes only blocks 0 and 1 of 3, so block 2 keeps the operand's
	// values; output 1 is not aliased.
	kernel := func(k *Kernel, r []*Ref) {
		r[2].Store(r[2].Load().Mul(2).Add(r[0].Load()).Add(k.ProgramID(0).Astype(xla.Float32)))
		r[3].Store(r[0].Load().Neg())
	}
	blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
	spec := CallSpec{Name: "alias", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 6), xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
		InSpecs: []*BlockSpec{blk, blk}, OutSpecs: []*BlockSpec{blk, blk}, InputOutputAliases: map[int]int{1: 0}}
	x := tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i) }), 8)
	acc := tensor(t, xla.Float32, f32s(12, func(i int) float32 { return float32(10 * (i + 1)) }), 2, 6)
	requireVmapMatchesLoop(t, kernel, spec, 2, []bool{false, true}, x, acc)
}

// A kernel templated on its refs' Info (here the array length, to mask
// the edge block) sees the shapes it was written for under Vmap, nested
// Vmaps included: the batch dims are hidden.
func TestVmapRefInfoHidesBatchDims(t *testing.T) {
	var seen []RefInfo
	kernel := func(k *Kernel, r []*Ref) {
		seen = append(seen[:0], r[0].Info(), r[1].Info(), r[2].Info())
		n := r[0].Info().ArrayShape[0] // 5
		idx := k.Arange(2).Add(k.ProgramID(0).Mul(2))
		v := Load(r[0], []any{Slice(0, 2)}, idx.Lt(n), 0.0)
		r[2].Store(v.Sum(0).Reshape(1).Add(r[1].Load()))
	}
	row := func(g []*Value, _ []*Ref) []any { return []any{g[0]} }
	spec := CallSpec{Name: "edge_sums", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 3)}, Grid: []int64{3},
		InSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: row}, nil},
		OutSpecs: []*BlockSpec{{BlockShape: []int64{1}, IndexMap: row}}}
	x := tensor(t, xla.Float32, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2, 5)
	one := tensor(t, xla.Float32, []float32{100}, 1)
	requireVmapMatchesLoop(t, kernel, spec, 2, []bool{true, false}, x, one)
	got, err := runCall(kernel, spec, batchElem(t, x, 1), one)
	require.NoError(t, err)
	assert.Equal(t, []float32{113, 117, 110}, got[0].Data)
	plain := append([]RefInfo(nil), seen...)

	vk, vspec, err := Vmap(kernel, spec, 2, []bool{true, false})
	require.NoError(t, err)
	vk, vspec, err = Vmap(vk, vspec, 3, []bool{true, true})
	require.NoError(t, err)
	xx := tensor(t, xla.Float32, make([]float32, 30), 3, 2, 5)
	ones := tensor(t, xla.Float32, []float32{1, 2, 3}, 3, 1)
	_, err = runCall(vk, vspec, xx, ones)
	require.NoError(t, err)
	for i := range plain {
		assert.Equal(t, plain[i].ArrayShape, seen[i].ArrayShape, "ref %d", i)
		assert.Equal(t, plain[i].Block, seen[i].Block, "ref %d", i)
		assert.Equal(t, plain[i].BlockShape, seen[i].BlockShape, "ref %d", i)
	}
	assert.Equal(t, []int64{5}, seen[0].ArrayShape)
	assert.Equal(t, []int64{2}, seen[0].Block)
	assert.Equal(t, []int64{3}, seen[2].ArrayShape)
	// The kernel's copy is its own: the traced program keeps its shapes.
	p, err := Trace(kernel, spec, []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, 5), stablehlo.Tensor(xla.Float32, 1)})
	require.NoError(t, err)
	seen[0].ArrayShape[0] = 99
	assert.Equal(t, []int64{5}, p.Refs[0].ArrayShape)
}

// A whole-array operand or output with an empty dim is valid in a call,
// so it is in the Vmap of that call, batched or not.
func TestVmapZeroSizeWholeArrays(t *testing.T) {
	kernel := func(k *Kernel, r []*Ref) {
		r[2].Store(r[0].Load())
		r[3].Store(r[1].Load())
	}
	spec := CallSpec{Name: "empty", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 0, 3)}, Grid: []int64{1}}
	x := tensor(t, xla.Float32, []float32{10, 11, 12, 13, 20, 21, 22, 23}, 2, 4)
	requireVmapMatchesLoop(t, kernel, spec, 2, []bool{true, false}, x, interpreter.NewTensor(xla.MakeShape(xla.Float32, 0, 3)))
	requireVmapMatchesLoop(t, kernel, spec, 2, []bool{true, true}, x, interpreter.NewTensor(xla.MakeShape(xla.Float32, 2, 0, 3)))
}

// The index map of a whole-array spec (no BlockShape) is traced under
// Vmap as it is without: a block index other than 0 is refused in both.
func TestVmapKeepsWholeArrayIndexMaps(t *testing.T) {
	kernel := func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load()) }
	for _, idx := range []int64{0, 1} {
		spec := CallSpec{Name: "whole_map", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
			InSpecs: []*BlockSpec{{IndexMap: func([]*Value, []*Ref) []any { return []any{idx} }}}}
		x := tensor(t, xla.Float32, []float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)
		for _, batched := range []bool{true, false} {
			arg := x
			if !batched {
				arg = batchElem(t, x, 1)
			}
			vk, vspec, err := Vmap(kernel, spec, 2, []bool{batched})
			require.NoError(t, err)
			got, err := runCall(vk, vspec, arg)
			if idx != 0 {
				require.ErrorContains(t, err, "block index 1 of dim", "batched %v", batched)
				require.ErrorContains(t, err, "vmap_test.go", "the error points at the user's map")
				continue
			}
			require.NoError(t, err)
			want := []float32{5, 6, 7, 8, 5, 6, 7, 8}
			if batched {
				want = []float32{1, 2, 3, 4, 5, 6, 7, 8}
			}
			assert.Equal(t, want, got[0].Data, "batched %v", batched)
		}
		_, err := runCall(kernel, spec, batchElem(t, x, 0))
		if idx != 0 {
			require.ErrorContains(t, err, "block index 1 of dim 0")
		} else {
			require.NoError(t, err)
		}
	}
}

// TestVmapErrorsNameTheKernelsAxes: errors about a vmapped call speak of
// the grid axes and dims its kernel and maps were written for: the Triton
// race check's advice names ProgramID(1) of a 2-D kernel (not the
// vmapped grid's axis 2), and interpret mode's run-time block-index check
// leaves the batch's block index out.
func TestVmapErrorsNameTheKernelsAxes(t *testing.T) {
	kernel := func(k *Kernel, r []*Ref) {
		k.When(k.ProgramID(1).Eq(0), func() { r[1].Store(k.Zeros(xla.Float32, 2)) })
		r[1].Store(r[1].Load().Add(r[0].Load()))
	}
	row := func(g []*Value, _ []*Ref) []any { return []any{g[0]} }
	spec := CallSpec{Name: "acc", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 3},
		InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: row}}, OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: row}}}
	vk, vspec, err := Vmap(kernel, spec, 2, []bool{true})
	require.NoError(t, err)
	c := tritonCase{kernel: vk, spec: vspec, args: []*interpreter.Tensor{interpreter.NewTensor(xla.MakeShape(xla.Float32, 2, 4))}}
	err = lowerTritonErr(t, c)
	require.ErrorContains(t, err, "ignores grid axis 1 (3 steps)")
	require.ErrorContains(t, err, "When(ProgramID(1) == …)")

	past := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0].Add(1)} }}
	copyKernel := func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load()) }
	spec = CallSpec{Name: "past", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
		InSpecs: []*BlockSpec{past}, OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: row}}}
	vk, vspec, err = Vmap(copyKernel, spec, 2, []bool{true})
	require.NoError(t, err)
	_, err = runCall(vk, vspec, interpreter.NewTensor(xla.MakeShape(xla.Float32, 2, 4)))
	var be *BoundsError
	require.ErrorAs(t, err, &be)
	require.Equal(t, []int64{2}, be.Index)
	require.Equal(t, []int64{2}, be.Bounds)
	require.ErrorContains(t, err, "block index (2) outside [0, 2)")
}
