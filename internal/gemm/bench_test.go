package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/halo-ml/halo/internal/pairbench"

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

// BenchmarkMulWindow multiplies blk-row blocks of A by size×blk windows
// of a size×size B, a new window each call, as a pallas kernel's grid
// steps do: B's rows are size×4 bytes apart and come from memory, not
// cache.
func BenchmarkMulWindow(b *testing.B) {
	for _, s := range []struct{ size, blk int }{{2048, 128}, {4096, 256}} {
		r := rand.New(rand.NewPCG(7, 8))
		a := randomMatrix[float32](r, s.size*s.size)
		bm := randomMatrix[float32](r, s.size*s.size)
		c := make([]float32, s.blk*s.blk)
		flops := 2 * float64(s.blk) * float64(s.blk) * float64(s.size)
		nb := s.size / s.blk
		b.Run(fmt.Sprintf("%d_%d", s.size, s.blk), func(b *testing.B) {
			i := 0
			for b.Loop() {
				row, col := (i/nb)%nb, i%nb
				Mul(false, false, s.blk, s.blk, s.size, a[row*s.blk*s.size:], s.size, bm[col*s.blk:], s.size, c, s.blk, runtime.GOMAXPROCS(0))
				i++
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		// The same with each window of B packed once beforehand (Pack), as
		// the interpreter keeps the windows of a run's arguments.
		packs := make([]*Packed[float32], nb)
		for j := range packs {
			packs[j] = Pack(false, s.size, s.blk, bm[j*s.blk:], s.size, runtime.GOMAXPROCS(0))
		}
		b.Run(fmt.Sprintf("%d_%d_prepacked", s.size, s.blk), func(b *testing.B) {
			i := 0
			for b.Loop() {
				row, col := (i/nb)%nb, i%nb
				MulPacked(false, s.blk, a[row*s.blk*s.size:], s.size, packs[col], c, s.blk, runtime.GOMAXPROCS(0))
				i++
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkPack packs a 128×1024 window of B (rows 4 KiB apart, as a
// pallas kernel's y window at 1024^3) with the assembly row copies and
// with the Go ones, alternately (internal/pairbench): from a 4 MiB B
// that stays in cache, and from a 64 MiB one, a new window each call.
func BenchmarkPack(b *testing.B) {
	if copyRowsFast == nil {
		b.Skip("no assembly row copies on this machine (not amd64 with AVX2, or the purego tag)")
	}
	r := rand.New(rand.NewPCG(7, 8))
	small := randomMatrix[float32](r, 1024*1024)
	large := randomMatrix[float32](r, 16*1024*1024)
	defer func() { copyRows = copyRowsFast }()
	for _, c := range []struct {
		name string
		src  []float32
	}{{"cached", small}, {"memory", large}} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			pack := func(rows func(dst, src unsafe.Pointer, stride, n int)) func() error {
				return func() error {
					copyRows = rows
					i++
					off := (i % (len(c.src) / (128 * 1024))) * 128 * 1024
					Pack(false, 128, 1024, c.src[off:], 1024, 1).Free()
					return nil
				}
			}
			pairbench.Run(b, "go", pack(copyRowsGo), "asm", pack(copyRowsFast))
		})
	}
}

// BenchmarkBlockTriangle pairs the dense 4096^3 product with the 136 block
// products of its lower triangle of 256x256 blocks (each block of C as
// 256 rows of A times a window of B packed beforehand, as the masked pallas
// kernel runs them): dense/blocks shows whether block products keep the
// dense product's rate (the triangle's work allows 256/136 = 1.88x).
func BenchmarkBlockTriangle(b *testing.B) {
	const n, blk = 4096, 256
	r := rand.New(rand.NewPCG(5, 6))
	a := randomMatrix[float32](r, n*n)
	bm := randomMatrix[float32](r, n*n)
	c := make([]float32, n*n)
	w := runtime.GOMAXPROCS(0)
	windows := make([]*Packed[float32], n/blk)
	for j := range windows {
		windows[j] = Pack(false, n, blk, bm[j*blk:], n, w)
	}
	cb := make([]float32, blk*blk)
	pairbench.Run(b, "dense", func() error {
		Mul(false, false, n, n, n, a, n, bm, n, c, n, w)
		return nil
	}, "blocks", func() error {
		for i := range windows {
			for j := 0; j <= i; j++ {
				MulPacked(false, blk, a[i*blk*n:], n, windows[j], cb, blk, w)
			}
		}
		return nil
	})
}
