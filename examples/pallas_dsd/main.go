// Command pallas_dsd multiplies a block-sparse matrix by a dense one (DSD:
// dense = sparse @ dense) with seed 001's kernel: the sparse matrix is
// block-COO (non-zero blocks with their block row and column, grouped by
// row), the grid runs over output column blocks (outer) and non-zero blocks
// (inner), scalar prefetch of the block indices drives the index maps, an
// f32 scratch accumulator is reset when the block row changes and written
// out when it ends, and output blocks no non-zero block touches are zero
// because the output starts as zeros made in the program and aliased to
// it (InputOutputAliases).
//
// Note: the seed's grid is (num_blocks, N/blk_N) with the column index
// fastest, which mixes the accumulators of different column blocks when
// N/blk_N > 1; this program iterates the columns in the outer axis so each
// output block's accumulation runs in consecutive steps.
package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// BlockCOO is a block-sparse matrix: Blocks[b] is the (BM, BK) block at
// block row RowIdx[b], block column ColIdx[b]; blocks are sorted by row.
type BlockCOO struct {
	M, K, BM, BK   int64     // the matrix is M x K, its blocks BM x BK
	Blocks         []float32 // the stored blocks, row-major: len(RowIdx) * BM * BK
	RowIdx, ColIdx []int32   // each stored block's block row and block column
}

// NumBlocks is the number of stored blocks.
func (s *BlockCOO) NumBlocks() int64 { return int64(len(s.RowIdx)) }

// Dense expands the matrix.
func (s *BlockCOO) Dense() []float32 {
	d := make([]float32, s.M*s.K)
	for b := range s.RowIdx {
		for i := int64(0); i < s.BM; i++ {
			for j := int64(0); j < s.BK; j++ {
				d[(int64(s.RowIdx[b])*s.BM+i)*s.K+int64(s.ColIdx[b])*s.BK+j] = s.Blocks[(int64(b)*s.BM+i)*s.BK+j]
			}
		}
	}
	return d
}

// RandomBlockSparse keeps ceil(p × the number of blocks) blocks, at least
// one, chosen uniformly at random, so the density is p (rounded up to a
// whole block) whatever the draw.
func RandomBlockSparse(r *rand.Rand, m, k, bm, bk int64, p float64) *BlockCOO {
	s := &BlockCOO{M: m, K: k, BM: bm, BK: bk}
	gm, gk := m/bm, k/bk
	n := max(1, min(gm*gk, int64(math.Ceil(p*float64(gm*gk)))))
	picked := r.Perm(int(gm * gk))[:n]
	slices.Sort(picked) // row-major: grouped by block row
	for _, b := range picked {
		s.RowIdx = append(s.RowIdx, int32(int64(b)/gk))
		s.ColIdx = append(s.ColIdx, int32(int64(b)%gk))
	}
	s.Blocks = make([]float32, s.NumBlocks()*bm*bk)
	for i := range s.Blocks {
		s.Blocks[i] = r.Float32()
	}
	return s
}

// HashedBlockSparse is RandomBlockSparse with the blocks and values drawn
// from splitmix64 hashes of seed, so that a program in another language
// (the JAX version of the kernel on a GPU machine) builds the same matrix:
// the non-zero blocks are the ceil(p × blocks) block numbers b (row-major)
// with the smallest splitmix64(seed + b), and element e (row-major, over
// the stored blocks in order) is the top 24 bits of
// splitmix64((seed xor 0x5eed) + e) over 2^24, in [0, 1).
func HashedBlockSparse(m, k, bm, bk int64, p float64, seed uint64) *BlockCOO {
	s := &BlockCOO{M: m, K: k, BM: bm, BK: bk}
	gm, gk := m/bm, k/bk
	n := max(1, min(gm*gk, int64(math.Ceil(p*float64(gm*gk)))))
	order := make([]int64, gm*gk)
	for b := range order {
		order[b] = int64(b)
	}
	slices.SortFunc(order, func(a, b int64) int {
		ha, hb := splitmix64(seed+uint64(a)), splitmix64(seed+uint64(b))
		switch {
		case ha < hb:
			return -1
		case ha > hb:
			return 1
		}
		return int(a - b)
	})
	picked := order[:n]
	slices.Sort(picked)
	for _, b := range picked {
		s.RowIdx = append(s.RowIdx, int32(b/gk))
		s.ColIdx = append(s.ColIdx, int32(b%gk))
	}
	s.Blocks = make([]float32, n*bm*bk)
	for e := range s.Blocks {
		s.Blocks[e] = float32(splitmix64((seed^0x5eed)+uint64(e))>>40) / (1 << 24)
	}
	return s
}

// splitmix64 is the output function of the SplitMix64 generator (Steele,
// Lea and Flood, 2014) at state x.
func splitmix64(x uint64) uint64 {
	z := x + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// dsdKernel: refs are idx_i, idx_k (prefetch), x block, y block, the
// zeros placeholder, the output block and the f32 accumulator.
func dsdKernel(numBlocks int64) pallas.KernelFunc {
	return func(k *pallas.Kernel, refs []*pallas.Ref) {
		idxI, x, y, o, acc := refs[0], refs[2], refs[3], refs[5], refs[6]
		blk := k.ProgramID(1)
		isStart := blk.Eq(0)
		changed := idxI.Load(blk).Ne(idxI.Load(blk.Sub(1).Max(0)))
		k.When(isStart.Or(changed), func() { acc.Store(0.0) })
		acc.Store(acc.Load().Add(pallas.Dot(x.Load(0), y.Load(), xla.Float32)))
		nextChange := idxI.Load(blk).Ne(idxI.Load(blk.Add(1).Min(numBlocks - 1)))
		isEnd := blk.Eq(numBlocks - 1)
		k.When(isEnd.Or(nextChange), func() { o.Store(acc.Load().Astype(o.DType())) })
	}
}

// BuildDSD emits main(idx_i, idx_k i32[nb], blocks f32[nb,bm,bk], y f32[k,n])
// -> f32[m,n] = sparse @ y. The output starts as zeros made in the program
// and handed to the kernel aliased to its output, as a JAX program passes
// jnp.zeros: the kernel's loop then writes into them in place, where zeros
// passed in by the caller would first be copied (the caller keeps them).
func BuildDSD(s *BlockCOO, n, bn int64, checks bool) (*stablehlo.Module, error) {
	nb := s.NumBlocks()
	if nb == 0 {
		return nil, fmt.Errorf("dsd: the sparse matrix stores no blocks, and this kernel's grid runs over them (the product is zeros; BuildDSDTiled's forms take such a matrix)")
	}
	b := stablehlo.NewBuilder("dsd")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Int32, nb), stablehlo.Tensor(xla.Int32, nb),
		stablehlo.Tensor(xla.Float32, nb, s.BM, s.BK), stablehlo.Tensor(xla.Float32, s.K, n))
	zeros := fb.Zero(stablehlo.Tensor(xla.Float32, s.M, n))
	xMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[1], 0, 0} }
	yMap := func(g []*pallas.Value, pf []*pallas.Ref) []any { return []any{pf[1].Load(g[1]), g[0]} }
	oMap := func(g []*pallas.Value, pf []*pallas.Ref) []any { return []any{pf[0].Load(g[1]), g[0]} }
	spec := pallas.CallSpec{
		Name:              "dsd",
		OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, s.M, n)},
		Grid:              []int64{n / bn, nb},
		NumScalarPrefetch: 2,
		InSpecs: []*pallas.BlockSpec{
			{BlockShape: []int64{1, s.BM, s.BK}, IndexMap: xMap},
			{BlockShape: []int64{s.BK, bn}, IndexMap: yMap},
			{BlockShape: []int64{s.BM, bn}, IndexMap: oMap}, // zeros, aliased to the output
		},
		OutSpecs:           []*pallas.BlockSpec{{BlockShape: []int64{s.BM, bn}, IndexMap: oMap}},
		ScratchShapes:      []xla.Shape{xla.MakeShape(xla.Float32, s.BM, bn)},
		InputOutputAliases: map[int]int{4: 0},
		CompilerParams:     pallas.CompilerParams{NoBoundsChecks: !checks},
	}
	fb.Return(pallas.Call(fb, dsdKernel(nb), spec, append(fb.Args(), zeros)...)...)
	return b.Build()
}

// RowPtr is the block-CSR row index of the matrix: the blocks of block
// row i are rowPtr[i] .. rowPtr[i+1]-1 (blocks are sorted by row).
func (s *BlockCOO) RowPtr() []int32 {
	ptr := make([]int32, s.M/s.BM+1)
	for _, i := range s.RowIdx {
		ptr[i+1]++
	}
	for i := 1; i < len(ptr); i++ {
		ptr[i] += ptr[i-1]
	}
	return ptr
}

// DSDTiling is how the GPU form of the DSD splits the product.
type DSDTiling struct {
	// BM and BN are the output block's rows and columns; BM divides the
	// sparse blocks' height (0: that height), so that a program's rows
	// lie in one block row of the sparse matrix.
	BM, BN int64
	// BK is the K step within a sparse block: a divisor of its width (0:
	// the width).
	BK int64
	// Tiles is the number of output blocks of a block row one program
	// computes, in one loop over all their products (0 or 1: one); it
	// divides the number of block columns. On an H100 (8192^3 at 10%)
	// every Tiles above 1 was slower than one block a program: 0.61-0.69
	// ms against 0.37-0.40 (docs/gpu-validation.md).
	Tiles int64
	// HeavyRowsFirst orders the programs by decreasing work within each
	// column group: grid axis 0, which a GPU launches fastest, walks the
	// output row blocks in HeavyRowsFirst's order (a third
	// scalar-prefetch array), axis 1 the column groups. The longest
	// programs do not come last to leave the other cores idle, and the
	// programs running at once still share a few column groups' strip of
	// the dense operand in L2, as in the plain order. It implies the
	// many-tile kernel (dsdTilesKernel), with Tiles 1 or more.
	HeavyRowsFirst bool
	// Programs, when above 0, makes the kernel persistent
	// (dsdPersistentKernel): that many programs (on a GPU, as many as
	// run at once: SMs times programs an SM) work through a Schedule
	// planned from the sparsity pattern, passed as six more
	// scalar-prefetch arrays (BuildDSDTiled's arguments then come from
	// DSDTiledArgs with the same t and n). Not with Tiles or
	// HeavyRowsFirst. Slower than one program an output block on an
	// H100 (docs/gpu-validation.md).
	Programs int64
}

// HeavyRowsFirst is the order of the output row blocks of bm rows (bm
// divides the blocks' height) by decreasing number of non-zero blocks in
// their block row, ties in row order.
func (s *BlockCOO) HeavyRowsFirst(bm int64) []int32 {
	ptr := s.RowPtr()
	sub := s.BM / bm
	order := make([]int32, s.M/bm)
	for i := range order {
		order[i] = int32(i)
	}
	work := func(i int32) int32 { r := int64(i) / sub; return ptr[r+1] - ptr[r] }
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(work(b), work(a)) })
	return order
}

// dsdRowKernel is the DSD kernel in the form a GPU runs, where grid steps
// run in parallel and keep nothing from one to the next: one program per
// output block (rows i, column block j) loops over the non-zero blocks
// of its block row of the sparse matrix (from the prefetched block-CSR
// row pointer) and accumulates their products in a loop-carried value. A
// row without blocks stores zeros, so no zeros operand is needed. Refs:
// row_ptr, col_idx (prefetch), the blocks and y (whole arrays), the
// output block. bm divides the sparse blocks' height sbm; step divides
// their width bk.
func dsdRowKernel(sbm, bk int64, t DSDTiling) pallas.KernelFunc {
	bm, bn, step := t.BM, t.BN, t.BK
	// With K steps smaller than a block, one loop over (block, part)
	// pairs: a deeper pipeline for the same shared memory.
	parts := bk / step
	return func(k *pallas.Kernel, refs []*pallas.Ref) {
		rowPtr, colIdx, blocks, y, o := refs[0], refs[1], refs[2], refs[3], refs[4]
		i, j := k.ProgramID(0), k.ProgramID(1)
		row, xRows := sparseRow(i, sbm, bm)
		bound := func(v *pallas.Value) *pallas.Value { // a block index in (block, part) pairs
			if parts > 1 {
				return v.Mul(parts)
			}
			return v
		}
		acc := k.ForLoop(bound(rowPtr.Load(row)), bound(rowPtr.Load(row.Add(1))), []*pallas.Value{k.Zeros(xla.Float32, bm, bn)},
			func(t *pallas.Value, c []*pallas.Value) []*pallas.Value {
				b, h, xCols := t, (*pallas.Value)(nil), any(pallas.All)
				if parts > 1 {
					b, h = t.Div(parts), t.Rem(parts).Mul(step)
					xCols = pallas.DS(h, step)
				}
				x := blocks.Load(b, xRows, xCols)
				yRow := colIdx.Load(b).Mul(bk)
				if h != nil {
					yRow = yRow.Add(h)
				}
				yb := y.Load(pallas.DS(yRow, step), pallas.DS(j.Mul(bn), bn))
				return []*pallas.Value{c[0].Add(pallas.Dot(x, yb, xla.Float32))}
			})
		o.Store(acc[0].Astype(o.DType()))
	}
}

// sparseRow is the block row of the sparse matrix that output rows
// i*bm .. i*bm+bm-1 lie in, and those rows' index within its blocks (All
// when bm is the blocks' height sbm).
func sparseRow(i *pallas.Value, sbm, bm int64) (*pallas.Value, any) {
	if bm == sbm {
		return i, pallas.All
	}
	sub := sbm / bm // programs per block row
	return i.Div(sub), pallas.DS(i.Rem(sub).Mul(bm), bm)
}

// dsdTilesKernel is dsdRowKernel for several output blocks per program:
// program (i, g) computes the t.Tiles output blocks (i, g*tiles) to (i,
// g*tiles+tiles-1) in one loop over (block, block row's non-zero block, K
// part) triples, storing each output block after its last product and
// starting the next from zeros. One long loop instead of tiles short ones
// was meant to keep a GPU's load pipeline full across output blocks (a
// block row holds few non-zero blocks: 6.4 at 10% of 64); on an H100 it
// runs at half the speed of dsdRowKernel (Triton gives it 244 registers
// a thread against 156, two programs an SM against three, and far fewer
// programs to spread). The output ref is the whole array.
func dsdTilesKernel(sbm, bk int64, t DSDTiling) pallas.KernelFunc {
	bm, bn, step, tiles := t.BM, t.BN, t.BK, t.Tiles
	parts := bk / step
	return func(k *pallas.Kernel, refs []*pallas.Ref) {
		rowPtr, colIdx := refs[0], refs[1]
		i, g := k.ProgramID(0), k.ProgramID(1)
		if t.HeavyRowsFirst { // axis 0 is a position in HeavyRowsFirst's order
			i = refs[2].Load(i)
			refs = refs[1:]
		}
		blocks, y, o := refs[2], refs[3], refs[4]
		row, xRows := sparseRow(i, sbm, bm)
		lo, hi := rowPtr.Load(row), rowPtr.Load(row.Add(1))
		per := hi.Sub(lo).Mul(parts) // iterations per output block
		zeros := k.Zeros(xla.Float32, bm, bn)
		rows := pallas.DS(i.Mul(bm), bm)
		k.When(per.Eq(0), func() {
			k.ForLoop(0, tiles, nil, func(t *pallas.Value, _ []*pallas.Value) []*pallas.Value {
				o.Store(0.0, rows, pallas.DS(g.Mul(tiles).Add(t).Mul(bn), bn))
				return nil
			})
		})
		k.ForLoop(0, per.Mul(tiles), []*pallas.Value{zeros},
			func(t *pallas.Value, c []*pallas.Value) []*pallas.Value {
				r := t.Rem(per)
				b := lo.Add(r.Div(parts))
				h := r.Rem(parts).Mul(step)
				cols := pallas.DS(g.Mul(tiles).Add(t.Div(per)).Mul(bn), bn)
				x := blocks.Load(b, xRows, pallas.DS(h, step))
				yb := y.Load(pallas.DS(colIdx.Load(b).Mul(bk).Add(h), step), cols)
				acc := c[0].Add(pallas.Dot(x, yb, xla.Float32))
				last := r.Eq(per.Sub(1))
				k.When(last, func() { o.Store(acc.Astype(o.DType()), rows, cols) })
				return []*pallas.Value{pallas.Where(last, zeros, acc)}
			})
	}
}

// BuildDSDRows emits main(row_ptr i32[m/bm+1], col_idx i32[nb], blocks
// dt[nb,bm,bk], y dt[k,n]) -> dt[m,n] = sparse @ y with dsdRowKernel on
// the given backend (pallas.Interpret or pallas.Triton): output blocks of
// the sparse blocks' height by bn, K in steps of step (0: whole sparse
// blocks; else a divisor of their width); products accumulate in f32
// whatever dt (f32, or bf16 as on a GPU); params are the call's compiler
// parameters (interpret mode's bounds checks, Triton's warps and stages).
func BuildDSDRows(s *BlockCOO, n, bn, step int64, dt xla.DType, backend pallas.Backend, params pallas.CompilerParams) (*stablehlo.Module, error) {
	return BuildDSDTiled(s, n, DSDTiling{BN: bn, BK: step}, dt, backend, params)
}

// BuildDSDTiled is BuildDSDRows tiled as t: output blocks of t.BM rows
// (several per block row of the sparse matrix) and t.Tiles output blocks
// per program (dsdTilesKernel).
func BuildDSDTiled(s *BlockCOO, n int64, t DSDTiling, dt xla.DType, backend pallas.Backend, params pallas.CompilerParams) (*stablehlo.Module, error) {
	t, err := s.tiling(n, t)
	if err != nil {
		return nil, err
	}
	if t.Programs > 0 {
		return buildDSDPersistent(s, n, t, dt, backend, params)
	}
	nb := s.storedBlocks()
	b := stablehlo.NewBuilder("dsd_rows")
	args := []stablehlo.Type{stablehlo.Tensor(xla.Int32, s.M/s.BM+1), stablehlo.Tensor(xla.Int32, nb)}
	if t.HeavyRowsFirst {
		args = append(args, stablehlo.Tensor(xla.Int32, s.M/t.BM))
	}
	fb := b.NewFunction("main", append(args, stablehlo.Tensor(dt, nb, s.BM, s.BK), stablehlo.Tensor(dt, s.K, n))...)
	spec := pallas.CallSpec{
		Name:              "dsd_rows",
		OutShapes:         []xla.Shape{xla.MakeShape(dt, s.M, n)},
		Grid:              []int64{s.M / t.BM, n / t.BN},
		NumScalarPrefetch: 2,
		OutSpecs: []*pallas.BlockSpec{{BlockShape: []int64{t.BM, t.BN},
			IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], g[1]} }}},
		Backend:        backend,
		CompilerParams: params,
	}
	kernel := dsdRowKernel(s.BM, s.BK, t)
	if t.Tiles > 1 || t.HeavyRowsFirst {
		spec.Grid[1] /= t.Tiles
		spec.OutSpecs = nil // the whole array: the kernel stores each block
		kernel = dsdTilesKernel(s.BM, s.BK, t)
	}
	if t.HeavyRowsFirst {
		spec.NumScalarPrefetch = 3
	}
	fb.Return(pallas.Call(fb, kernel, spec, fb.Args()...)...)
	return b.Build()
}

// tiling is t completed with its defaults (the sparse blocks' height and
// width, one tile) and checked for an n-column dense operand; Programs
// above the number of output blocks (the rest would have no work) become
// that number.
func (s *BlockCOO) tiling(n int64, t DSDTiling) (DSDTiling, error) {
	t.BM = cmp.Or(t.BM, s.BM)
	t.BK = cmp.Or(t.BK, s.BK)
	t.Tiles = cmp.Or(t.Tiles, 1)
	switch {
	case t.BM < 0 || s.BM%t.BM != 0:
		return t, fmt.Errorf("dsd: %d output rows per program must divide the blocks' height %d", t.BM, s.BM)
	case t.BK < 0 || s.BK%t.BK != 0:
		return t, fmt.Errorf("dsd: K step %d must divide the blocks' width %d", t.BK, s.BK)
	case t.BN <= 0 || n%t.BN != 0:
		return t, fmt.Errorf("dsd: output blocks of width %d must divide the %d columns", t.BN, n)
	case t.Tiles < 1 || (n/t.BN)%t.Tiles != 0:
		return t, fmt.Errorf("dsd: %d output blocks per program must divide the %d block columns", t.Tiles, n/t.BN)
	case t.Programs < 0:
		return t, fmt.Errorf("dsd: %d programs: want 0 (one an output block) or more", t.Programs)
	case t.Programs > 0 && (t.Tiles > 1 || t.HeavyRowsFirst):
		return t, fmt.Errorf("dsd: a persistent kernel (%d programs) takes neither tiles nor the heavy-rows-first order", t.Programs)
	}
	if t.Programs > 0 {
		// The schedule's arrays are int32: output block ids, and steps
		// (each stored block is in BM-row parts of its height, times the
		// column blocks, times its K parts).
		blocks := float64(s.M/t.BM) * float64(n/t.BN)
		steps := float64(s.NumBlocks()) * float64(s.BM/t.BM) * float64(n/t.BN) * float64(s.BK/t.BK)
		if blocks > math.MaxInt32 || steps > math.MaxInt32 || s.K > math.MaxInt32 {
			return t, fmt.Errorf("dsd: a persistent kernel's schedule (%.0f output blocks, %.0f K steps, K = %d) does not fit int32 arrays", blocks, steps, s.K)
		}
		t.Programs = min(t.Programs, int64(blocks))
	}
	return t, nil
}

// storedBlocks is the length of the kernels' block arrays: the stored
// blocks, or one unused zero block when there are none (arrays cannot
// be empty; no row pointer reaches it).
func (s *BlockCOO) storedBlocks() int64 { return max(s.NumBlocks(), 1) }

// blockArgs are the stored blocks rounded to dt and their block columns,
// padded as storedBlocks says.
func (s *BlockCOO) blockArgs(dt xla.DType) (blocks, colIdx *interpreter.Tensor) {
	data, cols := s.Blocks, s.ColIdx
	if s.NumBlocks() == 0 {
		data, cols = make([]float32, s.BM*s.BK), []int32{0}
	}
	return floatTensor(dt, data, s.storedBlocks(), s.BM, s.BK), i32Tensor(cols)
}

// DSDRowsArgs are the arguments of BuildDSDRows's module, the blocks and
// y rounded to dt.
func DSDRowsArgs(s *BlockCOO, y []float32, n int64, dt xla.DType) []interpreter.Value {
	return s.rowFormArgs(y, n, dt)
}

// rowFormArgs are the arguments of the row-pointer kernels: the row
// pointers, the block columns, the further prefetch arrays, the blocks
// and y rounded to dt.
func (s *BlockCOO) rowFormArgs(y []float32, n int64, dt xla.DType, prefetch ...[]int32) []interpreter.Value {
	blocks, colIdx := s.blockArgs(dt)
	args := []interpreter.Value{i32Tensor(s.RowPtr()), colIdx}
	for _, a := range prefetch {
		args = append(args, i32Tensor(a))
	}
	return append(args, blocks, floatTensor(dt, y, s.K, n))
}

// DSDTiledArgs are the arguments of BuildDSDTiled's module for tiling t
// (an error where BuildDSDTiled's is).
func DSDTiledArgs(s *BlockCOO, y []float32, n int64, t DSDTiling, dt xla.DType) ([]interpreter.Value, error) {
	t, err := s.tiling(n, t)
	if err != nil {
		return nil, err
	}
	switch {
	case t.Programs > 0:
		sc, err := s.Schedule(n, t)
		if err != nil {
			return nil, err
		}
		var args []interpreter.Value
		for _, a := range sc.arrays() {
			args = append(args, i32Tensor(a))
		}
		blocks, _ := s.blockArgs(dt)
		return append(args, blocks, floatTensor(dt, y, s.K, n)), nil
	case t.HeavyRowsFirst:
		return s.rowFormArgs(y, n, dt, s.HeavyRowsFirst(t.BM)), nil
	}
	return s.rowFormArgs(y, n, dt), nil
}

// BuildDense emits main(x dt[m,k], y dt[k,n]) = x @ y, the dense product
// the kernels are measured against (through the same interpreter, or
// XLA's own on a plugin).
func BuildDense(m, k, n int64, dt xla.DType) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("dense")
	fb := b.NewFunction("main", stablehlo.Tensor(dt, m, k), stablehlo.Tensor(dt, k, n))
	fb.Return(fb.Dot(fb.Arg(0), fb.Arg(1)))
	return b.Build()
}

func f32Tensor(data []float32, dims ...int64) *interpreter.Tensor {
	return floatTensor(xla.Float32, data, dims...)
}

// floatTensor is a tensor of float type dt holding data rounded to dt;
// the callers' shapes match their data by construction.
func floatTensor(dt xla.DType, data []float32, dims ...int64) *interpreter.Tensor {
	t, err := interpreter.NewFloatTensor(dt, data, dims...)
	if err != nil {
		panic(err)
	}
	return t
}

func i32Tensor(data []int32) *interpreter.Tensor {
	t := interpreter.NewTensor(xla.MakeShape(xla.Int32, int64(len(data))))
	copy(t.Data.([]int32), data)
	return t
}

// DSDArgs are the arguments of BuildDSD's module.
func DSDArgs(s *BlockCOO, y []float32, n int64) []interpreter.Value {
	return []interpreter.Value{i32Tensor(s.RowIdx), i32Tensor(s.ColIdx), f32Tensor(s.Blocks, s.NumBlocks(), s.BM, s.BK),
		f32Tensor(y, s.K, n)}
}

// RunDSD computes sparse @ y with the kernel on the interpreter.
func RunDSD(s *BlockCOO, y []float32, n, bn int64) ([]float32, error) {
	m, err := BuildDSD(s, n, bn, true)
	if err != nil {
		return nil, err
	}
	return runF32(m, DSDArgs(s, y, n))
}

// RunDSDRows computes sparse @ y with the per-row (GPU) form of the
// kernel, in interpret mode on the interpreter.
func RunDSDRows(s *BlockCOO, y []float32, n, bn int64) ([]float32, error) {
	m, err := BuildDSDRows(s, n, bn, 0, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	if err != nil {
		return nil, err
	}
	return runF32(m, DSDRowsArgs(s, y, n, xla.Float32))
}

// runF32 compiles m, runs it on the interpreter and returns its f32
// result.
func runF32(m *stablehlo.Module, args []interpreter.Value) ([]float32, error) {
	out, err := interpreter.RunModule(context.Background(), m, "main", args...)
	if err != nil {
		return nil, err
	}
	return out[0].(*interpreter.Tensor).Data.([]float32), nil
}

func main() {
	const m, k, n, blk = 256, 256, 256, 32
	r := rand.New(rand.NewPCG(0, 1))
	s := RandomBlockSparse(r, m, k, blk, blk, 0.1)
	y := make([]float32, k*n)
	for i := range y {
		y[i] = r.Float32()
	}
	x := s.Dense()
	fmt.Printf("%d non-zero blocks of %d\n", s.NumBlocks(), (m/blk)*(k/blk))
	for _, form := range []struct {
		name string
		run  func(s *BlockCOO, y []float32, n, bn int64) ([]float32, error)
	}{{"grid over non-zero blocks, zeros aliased (TPU form)", RunDSD}, {"one program per output block (GPU form)", RunDSDRows}} {
		got, err := form.run(s, y, n, blk)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var sum float64
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var ref float32
				for l := 0; l < k; l++ {
					ref += x[i*k+l] * y[l*n+j]
				}
				d := float64(got[i*n+j] - ref)
				if d < 0 {
					d = -d
				}
				sum += d
			}
		}
		// The tolerance leaves room for the summation order of the
		// machine's GEMM kernel (f32 sums of k products).
		if mean := sum / float64(m*n); mean > 1e-5 {
			fmt.Fprintf(os.Stderr, "%s: mean |result - ref| = %g, more than 1e-5\n", form.name, mean)
			os.Exit(1)
		}
		fmt.Printf("%s: matches x @ y (mean |result - ref| below 1e-5)\n", form.name)
	}
}
