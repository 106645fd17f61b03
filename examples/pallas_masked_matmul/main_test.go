package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/internal/pairbench"
	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func TestSparsifyMaskPrefetchMaps(t *testing.T) {
	// 4x4 mask in 2x2 blocks: only blocks (0,0) and (1,1) are non-zero and
	// (1,1) equals (0,0), so one data block is kept.
	mask := []float32{
		1, 0, 0, 0,
		1, 1, 0, 0,
		0, 0, 1, 0,
		0, 0, 1, 1,
	}
	s := sparsifyMask(mask, 4, 4, 2, 2)
	require.Equal(t, []int32{1, 0, 0, 1}, s.BlockMask)
	require.Equal(t, int64(1), s.NumData)
	require.Equal(t, []float32{1, 0, 1, 1}, s.Data)
	// cell (0,1) and (1,0) point at the next non-zero block (1,1)
	require.Equal(t, []int32{0, 1, 1, 1}, s.PrefetchI)
	require.Equal(t, []int32{0, 1, 1, 1}, s.PrefetchJ)
}

// A block of ones is marked 2: the GPU form stores its product without
// loading or multiplying a mask block.
func TestSparsifyMaskMarksFullBlocks(t *testing.T) {
	s := sparsifyMask(LowerTriangle(4, 4), 4, 4, 2, 2)
	require.Equal(t, []int32{1, 0, 2, 1}, s.BlockMask)
	require.Equal(t, int64(2), s.NumData, "the diagonal block and the block of ones")
}

func TestMaskedMatmulMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	random := func(m, n int64) []float32 {
		out := make([]float32, m*n)
		for i := range out {
			out[i] = float32(r.NormFloat64())
		}
		return out
	}
	cases := []struct {
		name                string
		m, k, n, bm, bn, bk int64
		mask                func(m, n int64) []float32
	}{
		{"lower triangle", 64, 64, 64, 16, 16, 32, LowerTriangle},
		{"lower triangle, rectangular", 32, 64, 128, 8, 16, 16, LowerTriangle},
		{"random block mask", 64, 32, 64, 16, 16, 16, func(m, n int64) []float32 {
			mask := make([]float32, m*n)
			for bi := int64(0); bi < m/16; bi++ {
				for bj := int64(0); bj < n/16; bj++ {
					if r.Float64() < 0.3 {
						for a := int64(0); a < 16; a++ {
							for b := int64(0); b < 16; b++ {
								mask[(bi*16+a)*n+bj*16+b] = float32(r.IntN(2))
							}
						}
					}
				}
			}
			return mask
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, y, mask := random(c.m, c.k), random(c.k, c.n), c.mask(c.m, c.n)
			got, err := RunMaskedMatmul(mask, x, y, c.m, c.k, c.n, c.bm, c.bn, c.bk)
			require.NoError(t, err)
			want := maskedReference(mask, x, y, c.m, c.k, c.n)
			require.InDeltaSlice(t, want, got, 1e-3)
			// The GPU form (one program per output block, a loop over K)
			// gives the same, and lowers to Triton.
			blocks, err := RunMaskedMatmulBlocks(mask, x, y, c.m, c.k, c.n, c.bm, c.bn, c.bk)
			require.NoError(t, err)
			require.InDeltaSlice(t, want, blocks, 1e-3)
			s := sparsifyMask(mask, c.m, c.n, c.bm, c.bn)
			for _, dt := range []xla.DType{xla.Float32, xla.BFloat16} {
				tm, err := BuildMaskedMatmulBlocks(s, c.m, c.k, c.n, Tiling{BM: c.bm, BN: c.bn, BK: c.bk}, dt, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
				require.NoError(t, err)
				require.Contains(t, tm.String(), "__gpu$xla.gpu.triton")
			}
			// In bf16 (as on a GPU): the operands rounded, sums in f32,
			// the result rounded once.
			bm, err := BuildMaskedMatmulBlocks(s, c.m, c.k, c.n, Tiling{BM: c.bm, BN: c.bn, BK: c.bk}, xla.BFloat16, pallas.Interpret, pallas.CompilerParams{})
			require.NoError(t, err)
			args := MaskedBlocksArgs(s, x, y, c.m, c.k, c.n, c.bm, c.bn, xla.BFloat16)
			bf, err := runF32(bm, args)
			require.NoError(t, err)
			wantBF := maskedReference(mask, args[2].(*interpreter.Tensor).Data.([]float32), args[3].(*interpreter.Tensor).Data.([]float32), c.m, c.k, c.n)
			require.NoError(t, plugintest.Close(bf, wantBF, 1.0/128))
			for i, v := range bf {
				require.Equal(t, interpreter.RoundNarrow(xla.BFloat16, v), v, "element %d is not a bf16 value", i)
			}
		})
	}
}

// BenchmarkMaskedMatmul compares the lower-triangular masked kernel
// (checks off and on) with the dense mask * (x @ y), through the same
// interpreter, at four sizes: the lower triangle skips 28 of 64 output
// blocks (at most 64/36 = 1.78x faster) or 120 of 256 (256/136 = 1.88x).
func BenchmarkMaskedMatmul(b *testing.B) {
	for _, c := range []struct{ m, bm, bk int64 }{{512, 64, 128}, {1024, 64, 1024}, {2048, 128, 2048}, {4096, 256, 4096}} {
		m, k, n, bm, bn, bk := c.m, c.m, c.m, c.bm, c.bm, c.bk
		prefix := fmt.Sprintf("%d^3_blocks%dx%d_bk%d/", m, bm, bn, bk)
		r := rand.New(rand.NewPCG(1, 1))
		x, y := uniform(r, m*k), uniform(r, k*n)
		mask := LowerTriangle(m, n)
		s := sparsifyMask(mask, m, n, bm, bn)
		for _, checks := range []bool{false, true} {
			name := "masked_nochecks"
			if checks {
				name = "masked_checks"
			}
			b.Run(prefix+name, func(b *testing.B) {
				mod, err := BuildMaskedMatmul(s, m, k, n, bm, bn, bk, checks)
				require.NoError(b, err)
				p, err := interpreter.Compile(mod, "main")
				require.NoError(b, err)
				args := MaskedArgs(s, x, y, m, k, n, bm, bn)
				for b.Loop() {
					_, err := p.Run(context.Background(), interpreter.Device{}, args)
					require.NoError(b, err)
				}
			})
		}
		b.Run(prefix+"dense", func(b *testing.B) {
			mod, err := BuildDenseMasked(m, k, n)
			require.NoError(b, err)
			p, err := interpreter.Compile(mod, "main")
			require.NoError(b, err)
			args := []interpreter.Value{f32Tensor(mask, m, n), f32Tensor(x, m, k), f32Tensor(y, k, n)}
			for b.Loop() {
				_, err := p.Run(context.Background(), interpreter.Device{}, args)
				require.NoError(b, err)
			}
		})
	}
}

// BenchmarkMaskedMatmulStepOverhead measures what a grid step costs beyond
// its block product: 512^3 with 64x64 blocks and K blocks of 128 (256
// steps) and a mask with a single non-zero block, so 252 steps skip their
// product. Reported per grid step; run with -cpu 1 to see one core's cost.
func BenchmarkMaskedMatmulStepOverhead(b *testing.B) {
	const m, bm, bk = 512, 64, 128
	x := make([]float32, m*m)
	mask := make([]float32, m*m)
	mask[0] = 1
	s := sparsifyMask(mask, m, m, bm, bm)
	mod, err := BuildMaskedMatmul(s, m, m, m, bm, bm, bk, false)
	require.NoError(b, err)
	p, err := interpreter.Compile(mod, "main")
	require.NoError(b, err)
	args := MaskedArgs(s, x, x, m, m, m, bm, bm)
	b.ReportAllocs()
	for b.Loop() {
		_, err := p.Run(context.Background(), interpreter.Device{}, args)
		require.NoError(b, err)
	}
	steps := (m / bm) * (m / bm) * (m / bk)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps), "ns/step")
}

// BenchmarkMaskedMatmulProfile runs the 4096^3 lower-triangular kernel
// (256x256 blocks, checks off) with an interpreter.Profile and reports
// where a run's time goes, in ms per run: the block products
// (dot_general, packing the windows of y included), the output block
// write-backs (dynamic_update_slice), the mask multiplies, the
// constants (the zeros the output starts as) and the rest. -v logs the
// whole table.
func BenchmarkMaskedMatmulProfile(b *testing.B) {
	const m, bm = 4096, 256
	x, y := uniformPair(1, 1, m*m)
	s := sparsifyMask(LowerTriangle(m, m), m, m, bm, bm)
	mod, err := BuildMaskedMatmul(s, m, m, m, bm, bm, m, false)
	require.NoError(b, err)
	p, err := interpreter.Compile(mod, "main")
	require.NoError(b, err)
	args := MaskedArgs(s, x, y, m, m, m, bm, bm)
	var prof interpreter.Profile
	ctx := interpreter.WithProfile(context.Background(), &prof)
	for b.Loop() {
		_, err := p.Run(ctx, interpreter.Device{}, args)
		require.NoError(b, err)
	}
	perRun := func(d time.Duration) float64 { return float64(d) / 1e6 / float64(b.N) }
	named := map[string]string{"stablehlo.dot_general": "products", "stablehlo.dynamic_update_slice": "writebacks",
		"stablehlo.multiply": "multiplies", "stablehlo.constant": "constants"}
	var rest time.Duration
	for _, o := range prof.Ops() {
		if name, ok := named[o.Op]; ok {
			b.ReportMetric(perRun(o.Time), name+"-ms")
			continue
		}
		rest += o.Time
	}
	b.ReportMetric(perRun(rest), "rest-ms")
	b.Logf("%d runs:\n%s", b.N, prof.String())
}

// BenchmarkMaskedMatmulPaired runs the dense mask * (x @ y) and the
// lower-triangular kernel (checks off) alternately, one of each per
// iteration, and reports each one's median time and the median of
// dense/masked over the pairs: the figure docs/benchmarks.md quotes, since
// drift on a shared machine slows both runs of a pair alike.
//
// 8192^3 (about a minute and 2 GB of memory) runs when HALO_BENCH_MAX is
// at least 8192.
func BenchmarkMaskedMatmulPaired(b *testing.B) {
	largest := plugintest.EnvInt(b, "HALO_BENCH_MAX", 4096)
	for _, c := range []struct{ m, bm int64 }{{2048, 128}, {2048, 256}, {4096, 256}, {8192, 256}} {
		m, bm := c.m, c.bm
		if m > largest {
			b.Run(fmt.Sprintf("%d^3_blocks%dx%d_bk%d", m, bm, bm, m), func(b *testing.B) {
				b.Skipf("%d^3 takes about a minute and 2 GB: set HALO_BENCH_MAX=%d to run it", m, m)
			})
			continue
		}
		x, y := uniformPair(1, 1, m*m)
		mask := LowerTriangle(m, m)
		s := sparsifyMask(mask, m, m, bm, bm)
		b.Run(fmt.Sprintf("%d^3_blocks%dx%d_bk%d", m, bm, bm, m), func(b *testing.B) {
			masked, err := BuildMaskedMatmul(s, m, m, m, bm, bm, m, false)
			require.NoError(b, err)
			dense, err := BuildDenseMasked(m, m, m)
			require.NoError(b, err)
			pairbench.Run(b, "dense", runner(b, dense, f32Tensor(mask, m, m), f32Tensor(x, m, m), f32Tensor(y, m, m)),
				"masked", runner(b, masked, MaskedArgs(s, x, y, m, m, m, bm, bm)...))
		})
		// The GPU form of the kernel (one program per output block) in
		// interpret mode, against the same dense product.
		b.Run(fmt.Sprintf("%d^3_blocks%dx%d_bk%d_gpuform", m, bm, bm, m), func(b *testing.B) {
			blocks, err := BuildMaskedMatmulBlocks(s, m, m, m, Tiling{BM: bm, BN: bm, BK: m}, xla.Float32, pallas.Interpret, pallas.CompilerParams{NoBoundsChecks: true})
			require.NoError(b, err)
			dense, err := BuildDenseMasked(m, m, m)
			require.NoError(b, err)
			pairbench.Run(b, "dense", runner(b, dense, f32Tensor(mask, m, m), f32Tensor(x, m, m), f32Tensor(y, m, m)),
				"masked", runner(b, blocks, MaskedBlocksArgs(s, x, y, m, m, m, bm, bm, xla.Float32)...))
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

// maskedReference is mask * (x @ y) in plain Go.
func maskedReference(mask, x, y []float32, m, k, n int64) []float32 {
	want := make([]float32, m*n)
	for i := int64(0); i < m; i++ {
		for j := int64(0); j < n; j++ {
			var s float32
			for l := int64(0); l < k; l++ {
				s += x[i*k+l] * y[l*n+j]
			}
			want[i*n+j] = mask[i*n+j] * s
		}
	}
	return want
}

// TestMaskedMatmulBlocksOnPlugin runs the GPU form through the HALO_PLUGIN
// plugin (as a Triton kernel on a GPU) in f32 and bf16 and compares with
// plain Go.
func TestMaskedMatmulBlocksOnPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the masked matmul as a Triton kernel")
	const m, k, n, bm, bk = 256, 256, 256, 64, 64
	x, y := uniformPair(1, 2, m*k) // m*k = k*n
	mask := LowerTriangle(m, n)
	s := sparsifyMask(mask, m, n, bm, bm)
	for _, c2 := range []struct {
		dt  xla.DType
		tol float64
	}{{xla.Float32, 1e-4}, {xla.BFloat16, 1.0 / 64}} {
		t.Run(c2.dt.String(), func(t *testing.T) {
			mod, err := BuildMaskedMatmulBlocks(s, m, k, n, Tiling{BM: bm, BN: bm, BK: bk}, c2.dt, pallas.BackendFor(c.PlatformName()), pallas.CompilerParams{NoBoundsChecks: true})
			require.NoError(t, err)
			args := MaskedBlocksArgs(s, x, y, m, k, n, bm, bm, c2.dt)
			out, err := plugintest.Run(context.Background(), c, mod, args, []xla.Shape{xla.MakeShape(c2.dt, m, n)})
			require.NoError(t, err)
			// The reference multiplies the operands as the kernel got them
			// (rounded to dt).
			want := maskedReference(mask, args[2].(*interpreter.Tensor).Data.([]float32), args[3].(*interpreter.Tensor).Data.([]float32), m, k, n)
			require.NoError(t, plugintest.Close(out[0].Data.([]float32), want, c2.tol))
		})
	}
}

// BenchmarkMaskedMatmulOnPlugin times the lower-triangular masked kernel's
// GPU form against the plugin's own dense product x @ y (no mask: the
// plain matmul a user would otherwise run), side by side (pairbench), on
// the HALO_PLUGIN plugin: bf16 operands and result, f32 accumulation,
// HALO_BENCH_SIZE^3 (default 8192). Each config of HALO_BENCH_CONFIGS
// (plugintest.Configs: output blocks bm x bn, K in steps of bk, Triton's
// warps and stages, a grouped program order) is a sub-benchmark; by
// default one, the fastest on an H100: blocks of HALO_BENCH_BLOCK (128) by
// twice that, K steps of HALO_BENCH_BK (64), 8 warps, 3 stages, groups of
// 8 block rows. Each kernel's result is first checked against the dense product
// masked.
func BenchmarkMaskedMatmulOnPlugin(b *testing.B) {
	c := plugintest.Open(b, "time the masked matmul against the plugin's dense product")
	size := plugintest.EnvInt(b, "HALO_BENCH_SIZE", 8192)
	blk := plugintest.EnvInt(b, "HALO_BENCH_BLOCK", 128)
	bk := plugintest.EnvInt(b, "HALO_BENCH_BK", 64)
	// The default: the fastest of the sweeps on an H100
	// (docs/gpu-validation.md).
	group := int64(8) // the largest of 8, 4, 2, 1 dividing the block rows
	for (size/blk)%group != 0 {
		group /= 2
	}
	configs := plugintest.Configs(b, "HALO_BENCH_CONFIGS", fmt.Sprintf("bm=%d,bn=%d,bk=%d,warps=8,stages=3,group=%d",
		blk, 2*blk, bk, group))
	const dt = xla.BFloat16
	backend := pallas.BackendFor(c.PlatformName())
	x, y := uniformPair(1, 2, size*size)
	mask := LowerTriangle(size, size)
	dense, err := BuildDense(size, size, size, dt)
	require.NoError(b, err)
	b.Logf("%s: %d^3 %v, lower triangle, kernel %v", c.PlatformName(), size, dt, backend)
	var variants []plugintest.Variant
	for _, cf := range configs {
		if cf.Tiles != 0 || cf.Order != 0 || cf.Programs != 0 {
			b.Fatalf("config %v: the masked matmul has no tiles, order or programs", cf)
		}
		bm, bn, bk := cmp.Or(cf.BM, blk), cmp.Or(cf.BN, blk), cmp.Or(cf.BK, bk)
		variants = append(variants, plugintest.Variant{Name: cf.String(), Build: func() (*stablehlo.Module, []interpreter.Value, error) {
			if size%bm != 0 || size%bn != 0 || size%bk != 0 || (cf.Group > 0 && (size/bm)%cf.Group != 0) {
				return nil, nil, fmt.Errorf("%w: %dx%d blocks, K steps of %d, groups of %d at %d^3", plugintest.ErrDoesNotFit, bm, bn, bk, cf.Group, size)
			}
			s := sparsifyMask(mask, size, size, bm, bn)
			m, err := BuildMaskedMatmulBlocks(s, size, size, size, Tiling{BM: bm, BN: bn, BK: bk, Group: cf.Group}, dt, backend,
				pallas.CompilerParams{NoBoundsChecks: true, NumWarps: cf.Warps, NumStages: cf.Stages})
			return m, MaskedBlocksArgs(s, x, y, size, size, size, bm, bn, dt), err
		}})
	}
	plugintest.Sweep(b, c, dense, []interpreter.Value{floatTensor(dt, x, size, size), floatTensor(dt, y, size, size)},
		xla.MakeShape(dt, size, size), func(dense, kernel []float32) error {
			want := make([]float32, len(dense))
			for i := range want {
				want[i] = mask[i] * dense[i]
			}
			return plugintest.Close(kernel, want, 1.0/64) // both round f32 sums to bf16 once
		}, variants...)
}

// uniform draws n values uniform in [0, 1) from r.
func uniform(r *rand.Rand, n int64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()
	}
	return v
}

// uniformPair draws two operands of n elements each, uniform in [0, 1),
// alternately from one PCG stream seeded (s1, s2).
func uniformPair(s1, s2 uint64, n int64) (x, y []float32) {
	r := rand.New(rand.NewPCG(s1, s2))
	x, y = make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = r.Float32(), r.Float32()
	}
	return x, y
}

// Grouped program orders compute every output block once (a block left
// unwritten would read NaN): the same result as the plain order, in
// interpret mode with the bounds checks on; a group that does not divide
// the block rows is an error.
func TestGroupedTiling(t *testing.T) {
	const m, k, n, blk = 64, 32, 48, 16
	r := rand.New(rand.NewPCG(5, 6))
	x, y := uniform(r, m*k), uniform(r, k*n)
	mask := LowerTriangle(m, n)
	s := sparsifyMask(mask, m, n, blk, blk)
	want := maskedReference(mask, x, y, m, k, n)
	for _, group := range []int64{1, 2, 4} {
		mod, err := BuildMaskedMatmulBlocks(s, m, k, n, Tiling{BM: blk, BN: blk, BK: 16, Group: group}, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
		require.NoError(t, err)
		got, err := runF32(mod, MaskedBlocksArgs(s, x, y, m, k, n, blk, blk, xla.Float32))
		require.NoError(t, err, "group %d", group)
		require.InDeltaSlice(t, want, got, 1e-4, "group %d", group)
		tm, err := BuildMaskedMatmulBlocks(s, m, k, n, Tiling{BM: blk, BN: blk, BK: 16, Group: group}, xla.BFloat16, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
		require.NoError(t, err)
		require.Contains(t, tm.String(), "arith.remsi")
	}
	_, err := BuildMaskedMatmulBlocks(s, m, k, n, Tiling{BM: blk, BN: blk, BK: 16, Group: 3}, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	require.ErrorContains(t, err, "group 3 must divide the 4 block rows")
}

// TestTritonFormMLIROpt: the GPU form's TTIR (plain and grouped program
// order, f32 and bf16) passes mlir-opt's parser and verifiers.
func TestTritonFormMLIROpt(t *testing.T) {
	const m, k, n, blk = 64, 32, 48, 16
	s := sparsifyMask(LowerTriangle(m, n), m, n, blk, blk)
	var irs []string
	for _, dt := range []xla.DType{xla.Float32, xla.BFloat16} {
		for _, group := range []int64{0, 2} {
			tm, err := BuildMaskedMatmulBlocks(s, m, k, n, Tiling{BM: blk, BN: blk, BK: 16, Group: group}, dt, pallas.Triton, pallas.CompilerParams{NoBoundsChecks: true})
			require.NoError(t, err)
			ks, err := pallas.TritonKernels(tm)
			require.NoError(t, err)
			require.Len(t, ks, 1)
			irs = append(irs, ks[0].IR)
		}
	}
	mliropt.Verify(t, irs...)
}
