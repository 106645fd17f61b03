package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/halo-ml/halo/internal/pairbench"
	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/require"
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
			tm, err := BuildDSDRows(s, c.n, c.bn, pallas.Triton, false)
			require.NoError(t, err)
			require.Contains(t, tm.String(), "__gpu$xla.gpu.triton")
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
				mod, err := BuildDense(m, k, n)
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
func BenchmarkDSDPaired(b *testing.B) {
	for _, c := range []struct{ size, blk, bn int64 }{{1024, 128, 1024}, {2048, 128, 2048}, {2048, 256, 2048}, {4096, 256, 4096}} {
		m, k, n, blk, bn := c.size, c.size, c.size, c.blk, c.bn
		r := rand.New(rand.NewPCG(0, 1))
		s := RandomBlockSparse(r, m, k, blk, blk, 0.1)
		y := make([]float32, k*n)
		for i := range y {
			y[i] = r.Float32()
		}
		b.Run(fmt.Sprintf("%d^3_blocks%d_%dof%d", m, blk, s.NumBlocks(), (m/blk)*(k/blk)), func(b *testing.B) {
			sparse, err := BuildDSD(s, n, bn, false)
			require.NoError(b, err)
			dense, err := BuildDense(m, k, n)
			require.NoError(b, err)
			pairbench.Run(b, "dense", runner(b, dense, f32Tensor(s.Dense(), m, k), f32Tensor(y, k, n)),
				"sparse", runner(b, sparse, DSDArgs(s, y, n)...))
		})
		// The GPU form (one program per output block, a loop over the
		// row's blocks) in interpret mode, against the same dense product.
		b.Run(fmt.Sprintf("%d^3_blocks%d_%dof%d_gpuform", m, blk, s.NumBlocks(), (m/blk)*(k/blk)), func(b *testing.B) {
			rows, err := BuildDSDRows(s, n, bn, pallas.Interpret, false)
			require.NoError(b, err)
			dense, err := BuildDense(m, k, n)
			require.NoError(b, err)
			pairbench.Run(b, "dense", runner(b, dense, f32Tensor(s.Dense(), m, k), f32Tensor(y, k, n)),
				"sparse", runner(b, rows, DSDRowsArgs(s, y, n)...))
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

// TestDSDRowsOnPlugin runs the GPU form as a Triton kernel through the
// HALO_PLUGIN plugin and compares with the dense product.
func TestDSDRowsOnPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the DSD kernel as a Triton kernel")
	const m, k, n, blk = 512, 512, 512, 64
	r := rand.New(rand.NewPCG(0, 1))
	s := RandomBlockSparse(r, m, k, blk, blk, 0.1)
	y := make([]float32, k*n)
	for i := range y {
		y[i] = r.Float32()
	}
	mod, err := BuildDSDRows(s, n, blk, pallas.Triton, false)
	require.NoError(t, err)
	out, err := plugintest.Run(context.Background(), c, mod, DSDRowsArgs(s, y, n), []xla.Shape{xla.MakeShape(xla.Float32, m, n)})
	require.NoError(t, err)
	require.InDeltaSlice(t, denseMatmul(s.Dense(), y, m, k, n), out[0].Data, 1e-3)
}
