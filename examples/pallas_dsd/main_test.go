package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/internal/pairbench"
	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func denseMatmul(x, y []float32, m, k, n int64) []float32 {
	out := make([]float32, m*n)
	for i := int64(0); i < m; i++ {
		for l := int64(0); l < k; l++ {
			a := x[i*k+l]
			if a == 0 {
				continue
			}
			for j := int64(0); j < n; j++ {
				out[i*n+j] += a * y[l*n+j]
			}
		}
	}
	return out
}

func TestDSDMatchesDense(t *testing.T) {
	cases := []struct {
		name                string
		m, k, n, bm, bk, bn int64
		p                   float64
	}{
		{"10% density, 4 column blocks", 64, 64, 64, 16, 16, 16, 0.1},
		{"half density, rectangular blocks", 64, 32, 48, 16, 8, 16, 0.5},
		{"dense", 32, 32, 32, 8, 8, 16, 1},
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := RandomBlockSparse(r, c.m, c.k, c.bm, c.bk, c.p)
			y := make([]float32, c.k*c.n)
			for i := range y {
				y[i] = r.Float32()*2 - 1
			}
			got, err := RunDSD(s, y, c.n, c.bn)
			require.NoError(t, err)
			want := denseMatmul(s.Dense(), y, c.m, c.k, c.n)
			require.InDeltaSlice(t, want, got, 1e-4)
			// The GPU form (one program per output block, a loop over the
			// row's blocks) gives the same, and lowers to Triton.
			rows, err := RunDSDRows(s, y, c.n, c.bn)
			require.NoError(t, err)
			require.InDeltaSlice(t, want, rows, 1e-4)
			for _, dt := range []xla.DType{xla.Float32, xla.BFloat16} {
				tm, err := BuildDSDRows(s, c.n, c.bn, 0, dt, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
				require.NoError(t, err)
				require.Contains(t, tm.String(), "__gpu$xla.gpu.triton")
			}
			// In bf16 (as on a GPU): the operands rounded, sums in f32,
			// the result rounded once.
			bm, err := BuildDSDRows(s, c.n, c.bn, 0, xla.BFloat16, pallas.Interpret, pallas.CompilerParams{})
			require.NoError(t, err)
			args := DSDRowsArgs(s, y, c.n, xla.BFloat16)
			bf, err := runF32(bm, args)
			require.NoError(t, err)
			xr := (&BlockCOO{M: c.m, K: c.k, BM: c.bm, BK: c.bk, Blocks: args[2].(*interpreter.Tensor).Data.([]float32),
				RowIdx: s.RowIdx, ColIdx: s.ColIdx}).Dense()
			require.NoError(t, plugintest.Close(bf, denseMatmul(xr, args[3].(*interpreter.Tensor).Data.([]float32), c.m, c.k, c.n), 1.0/128))
			for i, v := range bf {
				require.Equal(t, interpreter.RoundNarrow(xla.BFloat16, v), v, "element %d is not a bf16 value", i)
			}
			// Rows without any block must be exactly zero (the aliased zeros).
			hasRow := map[int32]bool{}
			for _, i := range s.RowIdx {
				hasRow[i] = true
			}
			for bi := int64(0); bi < c.m/c.bm; bi++ {
				if !hasRow[int32(bi)] {
					for j := bi * c.bm * c.n; j < (bi+1)*c.bm*c.n; j++ {
						require.Zero(t, got[j])
					}
				}
			}
		})
	}
}

// BenchmarkDSD compares the DSD kernel at 10% block density (interpret
// mode, bounds checks off and on) with the dense matmul, both on the
// interpreter, at M = N = K = 1024 (128x128 sparse blocks, output blocks of
// 128 rows by all 1024 columns, so the grid runs over the non-zero blocks)
// and at 4096 (256x256 blocks, output blocks of 256 by 4096).
//
// "dense" multiplies the sparse matrix expanded with its zeros, and
// "dense_nozeros" a matrix of the same shape with no zeros: the
// interpreter's product computes every multiply-add, so the two take the
// same time (gonum's sgemm, which the interpreter used before, skipped
// zero elements of its left operand).
func BenchmarkDSD(b *testing.B) {
	for _, c := range []struct{ size, blk, bn int64 }{{1024, 128, 1024}, {4096, 256, 4096}} {
		m, k, n, blk, bn := c.size, c.size, c.size, c.blk, c.bn
		prefix := fmt.Sprintf("%d^3_blocks%d/", m, blk)
		r := rand.New(rand.NewPCG(0, 1))
		s := RandomBlockSparse(r, m, k, blk, blk, 0.1)
		y := make([]float32, k*n)
		for i := range y {
			y[i] = r.Float32()
		}
		b.Logf("%d^3: %d non-zero blocks of %d", m, s.NumBlocks(), (m/blk)*(k/blk))
		for _, checks := range []bool{false, true} {
			name := "sparse_nochecks"
			if checks {
				name = "sparse_checks"
			}
			b.Run(prefix+name, func(b *testing.B) {
				mod, err := BuildDSD(s, n, bn, checks)
				require.NoError(b, err)
				p, err := interpreter.Compile(mod, "main")
				require.NoError(b, err)
				args := DSDArgs(s, y, n)
				for b.Loop() {
					_, err := p.Run(context.Background(), interpreter.Device{}, args)
					require.NoError(b, err)
				}
			})
		}
		full := make([]float32, m*k)
		for i := range full {
			full[i] = r.Float32() + 0.5
		}
		for _, c := range []struct {
			name string
			x    []float32
		}{{"dense", s.Dense()}, {"dense_nozeros", full}} {
			b.Run(prefix+c.name, func(b *testing.B) {
				mod, err := BuildDense(m, k, n, xla.Float32)
				require.NoError(b, err)
				p, err := interpreter.Compile(mod, "main")
				require.NoError(b, err)
				args := []interpreter.Value{f32Tensor(c.x, m, k), f32Tensor(y, k, n)}
				for b.Loop() {
					_, err := p.Run(context.Background(), interpreter.Device{}, args)
					require.NoError(b, err)
				}
			})
		}
	}
}

// BenchmarkDSDPaired runs the dense product and the DSD kernel (checks
// off) alternately, one of each per iteration, and reports each one's
// median time and the median of dense/sparse over the pairs: the figure
// docs/benchmarks.md quotes, since drift on a shared machine slows both
// runs of a pair alike.
//
// 8192^3 (about a minute and 2 GB of memory) runs when HALO_BENCH_MAX is
// at least 8192.
func BenchmarkDSDPaired(b *testing.B) {
	largest := plugintest.EnvInt(b, "HALO_BENCH_MAX", 4096)
	for _, c := range []struct{ size, blk, bn int64 }{{1024, 128, 1024}, {2048, 128, 2048}, {2048, 256, 2048}, {4096, 256, 4096}, {8192, 256, 8192}} {
		m, k, n, blk, bn := c.size, c.size, c.size, c.blk, c.bn
		if m > largest {
			b.Run(fmt.Sprintf("%d^3_blocks%d", m, blk), func(b *testing.B) {
				b.Skipf("%d^3 takes about a minute and 2 GB: set HALO_BENCH_MAX=%d to run it", m, m)
			})
			continue
		}
		r := rand.New(rand.NewPCG(0, 1))
		s := RandomBlockSparse(r, m, k, blk, blk, 0.1)
		y := make([]float32, k*n)
		for i := range y {
			y[i] = r.Float32()
		}
		b.Run(fmt.Sprintf("%d^3_blocks%d_%dof%d", m, blk, s.NumBlocks(), (m/blk)*(k/blk)), func(b *testing.B) {
			sparse, err := BuildDSD(s, n, bn, false)
			require.NoError(b, err)
			dense, err := BuildDense(m, k, n, xla.Float32)
			require.NoError(b, err)
			pairbench.Run(b, "dense", runner(b, dense, f32Tensor(s.Dense(), m, k), f32Tensor(y, k, n)),
				"sparse", runner(b, sparse, DSDArgs(s, y, n)...))
		})
		// The GPU form (one program per output block, a loop over the
		// row's blocks) in interpret mode, against the same dense product.
		b.Run(fmt.Sprintf("%d^3_blocks%d_%dof%d_gpuform", m, blk, s.NumBlocks(), (m/blk)*(k/blk)), func(b *testing.B) {
			rows, err := BuildDSDRows(s, n, bn, 0, xla.Float32, pallas.Interpret, pallas.CompilerParams{NoBoundsChecks: true})
			require.NoError(b, err)
			dense, err := BuildDense(m, k, n, xla.Float32)
			require.NoError(b, err)
			pairbench.Run(b, "dense", runner(b, dense, f32Tensor(s.Dense(), m, k), f32Tensor(y, k, n)),
				"sparse", runner(b, rows, DSDRowsArgs(s, y, n, xla.Float32)...))
		})
	}
}

// runner compiles mod and returns a function that runs it with args.
func runner(b *testing.B, mod *stablehlo.Module, args ...interpreter.Value) func() error {
	p, err := interpreter.Compile(mod, "main")
	require.NoError(b, err)
	return func() error {
		_, err := p.Run(context.Background(), interpreter.Device{}, args)
		return err
	}
}

// TestDSDRowsOnPlugin runs the GPU form through the HALO_PLUGIN plugin (as
// a Triton kernel on a GPU) in f32 and bf16 and compares with the dense
// product in plain Go.
func TestDSDRowsOnPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the DSD kernel as a Triton kernel")
	const m, k, n, blk = 512, 512, 512, 64
	s := HashedBlockSparse(m, k, blk, blk, 0.1, 1)
	r := rand.New(rand.NewPCG(0, 1))
	y := make([]float32, k*n)
	for i := range y {
		y[i] = r.Float32()
	}
	for _, c2 := range []struct {
		dt    xla.DType
		tol   float64
		progs int64
	}{{xla.Float32, 1e-4, 0}, {xla.BFloat16, 1.0 / 64, 0}, {xla.Float32, 1e-4, 7}, {xla.BFloat16, 1.0 / 64, 7}} {
		name := c2.dt.String()
		if c2.progs > 0 {
			name += fmt.Sprintf("_persistent%d", c2.progs)
		}
		t.Run(name, func(t *testing.T) {
			tl := DSDTiling{BN: blk, Programs: c2.progs}
			if c2.progs > 0 {
				tl.BK = blk / 2
			}
			mod, err := BuildDSDTiled(s, n, tl, c2.dt, pallas.BackendFor(c.PlatformName()), pallas.CompilerParams{NoBoundsChecks: true})
			require.NoError(t, err)
			args, err := DSDTiledArgs(s, y, n, tl, c2.dt)
			require.NoError(t, err)
			x, yv := args[len(args)-2], args[len(args)-1]
			out, err := plugintest.Run(context.Background(), c, mod, args, []xla.Shape{xla.MakeShape(c2.dt, m, n)})
			require.NoError(t, err)
			// The reference multiplies the operands as the kernel got them
			// (rounded to dt).
			xd := (&BlockCOO{M: m, K: k, BM: blk, BK: blk, Blocks: x.(*interpreter.Tensor).Data.([]float32),
				RowIdx: s.RowIdx, ColIdx: s.ColIdx}).Dense()
			want := denseMatmul(xd, yv.(*interpreter.Tensor).Data.([]float32), m, k, n)
			require.NoError(t, plugintest.Close(out[0].Data.([]float32), want, c2.tol))
		})
	}
}

// BenchmarkDSDOnPlugin times the DSD kernel's GPU form against the
// plugin's own dense product of the expanded matrix, side by side
// (pairbench), on the HALO_PLUGIN plugin: bf16 operands and result, f32
// accumulation, HALO_BENCH_SIZE^3 (default 8192) with square blocks of
// HALO_BENCH_BLOCK (default 128) at 10% density, the blocks of
// HashedBlockSparse with seed 1 (the JAX version in
// benchmarks/gpu/pallas_jax.py draws the same). Each config of
// HALO_BENCH_CONFIGS (plugintest.Configs: the output block's rows bm (a
// divisor of the sparse blocks' height) and width bn, K steps of bk
// within the sparse blocks, Triton's warps and stages, output blocks per
// program, order=1 for DSDTiling.HeavyRowsFirst, programs=N for a
// persistent kernel of N programs (DSDTiling.Programs), BuildDSDTiled) is a
// sub-benchmark; by default one, bn the block size, K steps of a quarter
// block, 4 warps, 6 stages (the fastest on an H100, queued, in two
// sessions). Each kernel's result is first checked
// against the dense one. Arguments stay on the device; each timed call
// runs the program and waits for its result.
func BenchmarkDSDOnPlugin(b *testing.B) {
	c := plugintest.Open(b, "time the DSD kernel against the plugin's dense product")
	size := plugintest.EnvInt(b, "HALO_BENCH_SIZE", 8192)
	// HALO_DSD_BLOCK: the sparse blocks' size, when it is not the other
	// benchmarks' HALO_BENCH_BLOCK.
	blk := plugintest.EnvInt(b, "HALO_DSD_BLOCK", plugintest.EnvInt(b, "HALO_BENCH_BLOCK", 128))
	// The default: the fastest, queued, in two sessions' sweeps on an
	// H100 (K steps of a quarter block, 6 stages: 0.259 ms, 5.25x, in both;
	// docs/gpu-validation.md).
	configs := plugintest.Configs(b, "HALO_BENCH_CONFIGS", fmt.Sprintf("bn=%d,bk=%d,warps=4,stages=6", blk, blk/4))
	const dt = xla.BFloat16
	backend := pallas.BackendFor(c.PlatformName())
	s := HashedBlockSparse(size, size, blk, blk, 0.1, 1)
	r := rand.New(rand.NewPCG(0, 1))
	y := make([]float32, size*size)
	for i := range y {
		y[i] = r.Float32()
	}
	dense, err := BuildDense(size, size, size, dt)
	require.NoError(b, err)
	b.Logf("%s: %d^3 %v, %d of %d blocks of %dx%d, kernel %v", c.PlatformName(), size, dt, s.NumBlocks(),
		(size/blk)*(size/blk), blk, blk, backend)
	var variants []plugintest.Variant
	for _, cf := range configs {
		if cf.Group != 0 {
			b.Fatalf("config %v: the DSD has no group", cf)
		}
		bn := cmp.Or(cf.BN, blk)
		// Sparse blocks other than 128 wide name themselves, so that the
		// sweeps of two block sizes in one log stay apart.
		name := cf.String()
		if blk != 128 {
			name = fmt.Sprintf("blk%d_%s", blk, name)
		}
		variants = append(variants, plugintest.Variant{Name: name, Build: func() (*stablehlo.Module, []interpreter.Value, error) {
			if tiles := cmp.Or(cf.Tiles, 1); size%bn != 0 || (size/bn)%tiles != 0 || blk%cmp.Or(cf.BM, blk) != 0 {
				return nil, nil, fmt.Errorf("%w: %d output blocks of %dx%d per program at %d^3, sparse blocks of %d", plugintest.ErrDoesNotFit,
					tiles, cmp.Or(cf.BM, blk), bn, size, blk)
			}
			t := DSDTiling{BM: cf.BM, BN: bn, BK: cf.BK, Tiles: cf.Tiles, HeavyRowsFirst: cf.Order == 1, Programs: cf.Programs}
			m, err := BuildDSDTiled(s, size, t, dt, backend,
				pallas.CompilerParams{NoBoundsChecks: true, NumWarps: cf.Warps, NumStages: cf.Stages})
			if err != nil {
				return nil, nil, err
			}
			args, err := DSDTiledArgs(s, y, size, t, dt)
			return m, args, err
		}})
	}
	plugintest.Sweep(b, c, dense, []interpreter.Value{floatTensor(dt, s.Dense(), size, size), floatTensor(dt, y, size, size)},
		xla.MakeShape(dt, size, size), func(dense, kernel []float32) error {
			return plugintest.Close(kernel, dense, 1.0/64) // both round f32 sums to bf16 once
		}, variants...)
}

// HashedBlockSparse's matrix is a contract with the JAX benchmark
// (benchmarks/gpu/pattern.py): these are the blocks and first
// values that script prints for the same arguments.
func TestHashedBlockSparseMatchesPython(t *testing.T) {
	// SplitMix64's first output from state 0, as published with it.
	require.Equal(t, uint64(0xe220a8397b1dcdaf), splitmix64(0))
	require.Equal(t, uint64(0x910a2dec89025cc1), splitmix64(1))
	s := HashedBlockSparse(64, 64, 8, 8, 0.1, 1)
	require.Equal(t, []int32{0, 1, 2, 2, 5, 5, 6}, s.RowIdx)
	require.Equal(t, []int32{2, 1, 1, 4, 0, 7, 0}, s.ColIdx)
	require.Equal(t, []float32{0.7431573867797852, 0.038848698139190674, 0.8471075892448425, 0.22960901260375977}, s.Blocks[:4])
	require.Len(t, s.Blocks, 7*8*8)
	// ceil(10%) of the blocks whatever the size.
	big := HashedBlockSparse(8192, 8192, 128, 128, 0.1, 1)
	require.Equal(t, int64(410), big.NumBlocks())
	require.Equal(t, []int32{0, 5, 10, 16, 21}, big.RowPtr()[:5])
	require.Equal(t, []int32{9, 17, 20, 40, 47}, big.ColIdx[:5])
	// The heavy-rows-first order (pattern.heavy_rows_first).
	require.Equal(t, []int32{2, 5, 0, 1, 6, 3, 4, 7}, s.HeavyRowsFirst(8))
	require.Equal(t, []int32{4, 5, 10, 11, 0, 1, 2, 3, 12, 13, 6, 7, 8, 9, 14, 15}, s.HeavyRowsFirst(4))
	require.Equal(t, []int32{24, 28, 31, 56, 9, 5, 15, 41}, big.HeavyRowsFirst(128)[:8])
}

// K in steps smaller than the sparse blocks (two or four parts of each)
// sums the same products: the dense result, in interpret mode with the
// bounds checks on, and the kernel lowers to Triton; a step that does not
// divide the blocks is an error.
func TestDSDRowsKSteps(t *testing.T) {
	const m, k, n, blk = 64, 96, 32, 16
	s := RandomBlockSparse(rand.New(rand.NewPCG(3, 4)), m, k, blk, blk, 0.3)
	r := rand.New(rand.NewPCG(7, 8))
	y := make([]float32, k*n)
	for i := range y {
		y[i] = r.Float32()
	}
	want := denseMatmul(s.Dense(), y, m, k, n)
	for _, step := range []int64{0, 8, 4} {
		mod, err := BuildDSDRows(s, n, 16, step, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
		require.NoError(t, err)
		got, err := runF32(mod, DSDRowsArgs(s, y, n, xla.Float32))
		require.NoError(t, err, "step %d", step)
		require.InDeltaSlice(t, want, got, 1e-4, "step %d", step)
		tm, err := BuildDSDRows(s, n, 16, step, xla.BFloat16, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
		require.NoError(t, err)
		require.Contains(t, tm.String(), "__gpu$xla.gpu.triton")
	}
	_, err := BuildDSDRows(s, n, 16, 6, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	require.ErrorContains(t, err, "K step 6 must divide the blocks' width 16")
}

// Several output blocks per program (one loop over all their products,
// each block stored after its last) give the dense product too, in
// interpret mode with the bounds checks on, with and without K steps, a
// block row without blocks included; they lower to Triton; tiles that do
// not divide the block columns are an error.
func TestDSDTiles(t *testing.T) {
	const m, k, n, blk = 64, 96, 64, 16
	s := RandomBlockSparse(rand.New(rand.NewPCG(3, 4)), m, k, blk, blk, 0.3)
	// Empty block row 1 (rows 16..31), whatever the draw gave it.
	keep := &BlockCOO{M: m, K: k, BM: blk, BK: blk}
	for b := range s.RowIdx {
		if s.RowIdx[b] != 1 {
			keep.RowIdx = append(keep.RowIdx, s.RowIdx[b])
			keep.ColIdx = append(keep.ColIdx, s.ColIdx[b])
			keep.Blocks = append(keep.Blocks, s.Blocks[int64(b)*blk*blk:int64(b+1)*blk*blk]...)
		}
	}
	s = keep
	r := rand.New(rand.NewPCG(7, 8))
	y := make([]float32, k*n)
	for i := range y {
		y[i] = r.Float32()
	}
	want := denseMatmul(s.Dense(), y, m, k, n)
	for _, c := range []DSDTiling{{BK: 0, Tiles: 2}, {BK: 8, Tiles: 2}, {BK: 0, Tiles: 4}, {BK: 4, Tiles: 4},
		{BM: 8, Tiles: 1}, {BM: 4, BK: 8, Tiles: 1}, {BM: 8, BK: 8, Tiles: 2}, {BM: 2, Tiles: 4},
		{Tiles: 2, HeavyRowsFirst: true}, {BM: 8, BK: 8, HeavyRowsFirst: true}, {BM: 4, Tiles: 4, HeavyRowsFirst: true},
		{Programs: 1}, {Programs: 3}, {BK: 8, Programs: 5}, {BM: 8, BK: 4, Programs: 7}, {BM: 4, Programs: 64}, {Programs: 1000}} {
		c.BN = 16
		mod, err := BuildDSDTiled(s, n, c, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
		require.NoError(t, err)
		args, err := DSDTiledArgs(s, y, n, c, xla.Float32)
		require.NoError(t, err, "%+v", c)
		got, err := runF32(mod, args)
		require.NoError(t, err, "%+v", c)
		require.InDeltaSlice(t, want, got, 1e-4, "%+v", c)
		tm, err := BuildDSDTiled(s, n, c, xla.BFloat16, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
		require.NoError(t, err, "%+v", c)
		require.Contains(t, tm.String(), "__gpu$xla.gpu.triton")
	}
	_, err := BuildDSDTiled(s, n, DSDTiling{BN: 16, Tiles: 3}, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	require.ErrorContains(t, err, "3 output blocks per program must divide the 4 block columns")
	_, err = BuildDSDTiled(s, n, DSDTiling{BM: 32, BN: 16}, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	require.ErrorContains(t, err, "32 output rows per program must divide the blocks' height 16")
	_, err = BuildDSDTiled(s, n, DSDTiling{BN: 24}, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	require.ErrorContains(t, err, "output blocks of width 24 must divide the 64 columns")
	_, err = BuildDSDTiled(s, n, DSDTiling{BN: 16, Tiles: 2, Programs: 4}, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	require.ErrorContains(t, err, "a persistent kernel (4 programs) takes neither tiles nor the heavy-rows-first order")
	_, err = BuildDSDTiled(s, n, DSDTiling{BN: 16, Programs: -1}, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	require.ErrorContains(t, err, "-1 programs")
}

// A Schedule gives every output block to one program: its steps are
// consecutive, cover each non-zero block of its block row in every K
// part once, in order, and end on the one step marked last; blocks of
// empty block rows are in Empty instead. Programs get work in turns that
// keep them within one output block's work of each other.
func TestSchedule(t *testing.T) {
	// Block rows of 8 with 1, 3, 0 and 3 non-zero blocks.
	s := &BlockCOO{M: 32, K: 32, BM: 8, BK: 8, RowIdx: []int32{0, 1, 1, 1, 3, 3, 3}, ColIdx: []int32{2, 0, 1, 3, 0, 1, 3}}
	const n = 16
	for _, tl := range []DSDTiling{{BM: 8, BN: 8, BK: 8, Programs: 2}, {BM: 4, BN: 16, BK: 4, Programs: 3}, {BM: 8, BN: 8, BK: 2, Programs: 40}} {
		sc, err := s.Schedule(n, tl)
		require.NoError(t, err)
		rows, cols, parts := s.M/tl.BM, n/tl.BN, s.BK/tl.BK
		// Programs beyond the output blocks would get nothing: there are
		// at most as many as blocks.
		progs := int(min(tl.Programs, rows*cols))
		require.Len(t, sc.ProgSteps, progs+1, "%+v", tl)
		require.Len(t, sc.ProgEmpty, progs+1, "%+v", tl)
		seen := map[int32]int{}
		var work []int64
		for p := range progs {
			var w int64
			for e := sc.ProgEmpty[p]; e < sc.ProgEmpty[p+1]; e++ {
				seen[sc.Empty[e]]++
				w += storeSteps
			}
			for st := sc.ProgSteps[p]; st < sc.ProgSteps[p+1]; {
				id := sc.StepOut[st]
				if id < 0 { // a block of one step
					id = -1 - id
				}
				seen[id]++
				r := (int64(id) % rows) * tl.BM / s.BM
				ptr := s.RowPtr()
				for b := ptr[r]; b < ptr[r+1]; b++ {
					for h := int64(0); h < parts; h++ {
						want := id
						if b == ptr[r+1]-1 && h == parts-1 {
							want = -1 - id
						}
						require.Equal(t, want, sc.StepOut[st], "%+v: step %d", tl, st)
						require.Equal(t, int32(int64(b)*parts+h), sc.StepA[st], "%+v: step %d", tl, st)
						require.Equal(t, int32(int64(s.ColIdx[b])*s.BK+h*tl.BK), sc.StepY[st], "%+v: step %d", tl, st)
						st++
						w++
					}
				}
				w += storeSteps
			}
			work = append(work, w)
		}
		require.Len(t, seen, int(rows*cols), "%+v: every output block", tl)
		for id, c := range seen {
			require.Equal(t, 1, c, "%+v: output block %d", tl, id)
		}
		// A list schedule: no program ends more than one block's work
		// (at most 3 blocks of parts steps, and the store) after another.
		lo, hi := slices.Min(work), slices.Max(work)
		require.LessOrEqual(t, hi-lo, 3*parts+storeSteps, "%+v: work %v", tl, work)
	}
}

// TestHeavyRowsFirst checks the program order of DSDTiling.HeavyRowsFirst:
// output row blocks by decreasing non-zero blocks in their block row, ties
// in row order, each block row's sub-rows together.
func TestHeavyRowsFirst(t *testing.T) {
	// Block rows of 8 rows with 1, 3, 0, 3 non-zero blocks.
	s := &BlockCOO{M: 32, K: 32, BM: 8, BK: 8, RowIdx: []int32{0, 1, 1, 1, 3, 3, 3}, ColIdx: []int32{0, 0, 1, 2, 0, 1, 3}}
	require.Equal(t, []int32{1, 3, 0, 2}, s.HeavyRowsFirst(8))
	require.Equal(t, []int32{2, 3, 6, 7, 0, 1, 4, 5}, s.HeavyRowsFirst(4))
}

// TestTritonFormMLIROpt: the GPU forms' TTIR (one block a program with and
// without K steps, the many-tile form, heavy rows first; f32 and bf16)
// passes mlir-opt's parser and verifiers.
func TestTritonFormMLIROpt(t *testing.T) {
	const m, k, n, blk = 64, 96, 64, 16
	s := RandomBlockSparse(rand.New(rand.NewPCG(3, 4)), m, k, blk, blk, 0.3)
	var mods []*stablehlo.Module
	for _, dt := range []xla.DType{xla.Float32, xla.BFloat16} {
		for _, step := range []int64{0, 8} {
			tm, err := BuildDSDRows(s, n, 16, step, dt, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
			require.NoError(t, err)
			mods = append(mods, tm)
		}
		for _, c := range []DSDTiling{{BN: 16, Tiles: 2}, {BN: 16, BM: 8, BK: 8, Tiles: 2, HeavyRowsFirst: true}} {
			tm, err := BuildDSDTiled(s, n, c, dt, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
			require.NoError(t, err)
			mods = append(mods, tm)
		}
	}
	var irs []string
	for _, tm := range mods {
		ks, err := pallas.TritonKernels(tm)
		require.NoError(t, err)
		require.Len(t, ks, 1)
		irs = append(irs, ks[0].IR)
	}
	mliropt.Verify(t, irs...)
}

// Schedule is a contract with the JAX benchmark (benchmarks/gpu/pattern.py
// schedule, so that both sides' persistent kernels get the same work
// lists): these are the arrays that function returns for the same
// matrix and tiling.
func TestScheduleMatchesPython(t *testing.T) {
	s := &BlockCOO{M: 32, K: 32, BM: 8, BK: 8, RowIdx: []int32{0, 1, 1, 1, 3, 3, 3}, ColIdx: []int32{2, 0, 1, 3, 0, 1, 3}}
	sc, err := s.Schedule(16, DSDTiling{BM: 4, BN: 8, BK: 4, Programs: 3})
	require.NoError(t, err)
	require.Equal(t, []int32{0, 18, 38, 56}, sc.ProgSteps)
	require.Equal(t, []int32{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 0, 1, 8, 9, 10, 11, 12, 13, 0, 1, 8, 9, 10, 11, 12, 13, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 2, 3, 4, 5, 6, 7}, sc.StepA)
	require.Equal(t, []int32{16, 20, 0, 4, 8, 12, 24, 28, 16, 20, 16, 20, 0, 4, 8, 12, 24, 28, 16, 20, 0, 4, 8, 12, 24, 28, 0, 4, 8, 12, 24, 28, 0, 4, 8, 12, 24, 28, 0, 4, 8, 12, 24, 28, 0, 4, 8, 12, 24, 28, 0, 4, 8, 12, 24, 28}, sc.StepY)
	require.Equal(t, []int32{0, -1, 3, 3, 3, 3, 3, -4, 8, -9, 9, -10, 14, 14, 14, 14, 14, -15, 1, -2, 6, 6, 6, 6, 6, -7, 10, 10, 10, 10, 10, -11, 15, 15, 15, 15, 15, -16, 2, 2, 2, 2, 2, -3, 7, 7, 7, 7, 7, -8, 11, 11, 11, 11, 11, -12}, sc.StepOut)
	require.Equal(t, []int32{0, 2, 4, 4}, sc.ProgEmpty)
	require.Equal(t, []int32{12, 13, 4, 5}, sc.Empty)
}

// A sparse matrix without stored blocks multiplies to zeros in every GPU
// form (the block arrays get one unused block, as arrays cannot be
// empty), in interpret mode and lowered to Triton; the grid-over-blocks
// form says why it cannot take one.
func TestDSDWithoutBlocks(t *testing.T) {
	s := &BlockCOO{M: 32, K: 32, BM: 16, BK: 16}
	const n = 32
	y := make([]float32, s.K*n)
	for i := range y {
		y[i] = float32(i%7) - 3
	}
	for _, c := range []DSDTiling{{}, {BK: 8, Tiles: 2}, {HeavyRowsFirst: true}, {Programs: 3}, {BM: 8, BK: 4, Programs: 2}} {
		c.BN = 16
		mod, err := BuildDSDTiled(s, n, c, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
		require.NoError(t, err, "%+v", c)
		args, err := DSDTiledArgs(s, y, n, c, xla.Float32)
		require.NoError(t, err, "%+v", c)
		got, err := runF32(mod, args)
		require.NoError(t, err, "%+v", c)
		require.Equal(t, make([]float32, s.M*n), got, "%+v", c)
		_, err = BuildDSDTiled(s, n, c, xla.BFloat16, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
		require.NoError(t, err, "%+v", c)
	}
	_, err := RunDSD(s, y, n, 16)
	require.ErrorContains(t, err, "stores no blocks")
}

// Bad tilings are errors from DSDTiledArgs and Schedule too, not panics;
// a persistent schedule whose int32 arrays would overflow is refused
// before anything is allocated.
func TestDSDTilingErrors(t *testing.T) {
	s := &BlockCOO{M: 32, K: 32, BM: 16, BK: 16, RowIdx: []int32{0}, ColIdx: []int32{1}, Blocks: make([]float32, 256)}
	y := make([]float32, 32*16)
	_, err := DSDTiledArgs(s, y, 16, DSDTiling{Programs: 4}, xla.Float32)
	require.ErrorContains(t, err, "output blocks of width 0 must divide the 16 columns")
	_, err = s.Schedule(16, DSDTiling{BN: 16})
	require.ErrorContains(t, err, "a schedule needs at least one program, not 0")
	huge := &BlockCOO{M: 1 << 40, K: 1 << 20, BM: 128, BK: 128}
	_, err = BuildDSDTiled(huge, 1<<20, DSDTiling{BN: 128, Programs: 132}, xla.BFloat16, pallas.Triton, pallas.CompilerParams{})
	require.ErrorContains(t, err, "does not fit int32 arrays")
}
