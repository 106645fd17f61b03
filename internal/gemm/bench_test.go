package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// BenchmarkMul compares Mul with gonum's sgemm on the same float32
// matrices (no zeros, so gonum skips nothing), side by side, at the sizes
// the interpreter meets in dense products and in pallas block products.
func BenchmarkMul(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range []struct{ m, n, k int }{
		{64, 64, 64}, {64, 64, 1024}, {128, 128, 2048}, {128, 1024, 128}, {512, 512, 512}, {1024, 1024, 1024},
	} {
		a := randomMatrix[float32](r, s.m*s.k)
		bm := randomMatrix[float32](r, s.k*s.n)
		c := make([]float32, s.m*s.n)
		name := fmt.Sprintf("%dx%dx%d", s.m, s.n, s.k)
		flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		b.Run(name+"/halo", func(b *testing.B) {
			for b.Loop() {
				Mul(false, false, s.m, s.n, s.k, a, s.k, bm, s.n, c, s.n, runtime.GOMAXPROCS(0))
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(name+"/gonum", func(b *testing.B) {
			for b.Loop() {
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
					blas32.General{Rows: s.m, Cols: s.k, Stride: s.k, Data: a},
					blas32.General{Rows: s.k, Cols: s.n, Stride: s.n, Data: bm},
					0, blas32.General{Rows: s.m, Cols: s.n, Stride: s.n, Data: c})
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkMulWindow multiplies 128-row blocks of A by 2048×128 windows of a
// 2048×2048 B, a new window each call, as a pallas kernel's grid steps do:
// B's rows are 8 KiB apart and come from memory, not cache.
func BenchmarkMulWindow(b *testing.B) {
	const size, blk = 2048, 128
	r := rand.New(rand.NewPCG(7, 8))
	a := randomMatrix[float32](r, size*size)
	bm := randomMatrix[float32](r, size*size)
	c := make([]float32, blk*blk)
	flops := 2 * float64(blk) * float64(blk) * float64(size)
	i := 0
	for b.Loop() {
		row, col := (i/16)%16, i%16
		Mul(false, false, blk, blk, size, a[row*blk*size:], size, bm[col*blk:], size, c, blk, runtime.GOMAXPROCS(0))
		i++
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
