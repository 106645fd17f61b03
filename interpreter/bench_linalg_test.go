package interpreter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Benchmarks of the linear-algebra kernels. BenchmarkMatmulF32_1024 runs a
// parsed 1024×1024×1024 dot_general through the interpreter;
// BenchmarkGonumSgemm1024 calls gonum's blas32.Gemm directly on the same
// sizes, so the two side by side give the interpreter's overhead. Both
// report GFLOP/s (2·N³ per op) and CPU time per op (user + system, all
// threads: the development machines are shared, so wall-clock figures move
// with other load); run with -benchmem for allocs/op.

func benchRandF32(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]float32, n)
	for i := range out {
		out[i] = rng.Float32()*2 - 1
	}
	return out
}

func benchF32Tensor(dims []int64, seed uint64) *Tensor {
	t := NewTensor(xla.MakeShape(xla.Float32, dims...))
	copy(t.Data.([]float32), benchRandF32(t.Len(), seed))
	return t
}

func benchProgram(b *testing.B, src string) *Program {
	b.Helper()
	m, err := stablehlo.Parse([]byte(src))
	if err != nil {
		b.Fatal(err)
	}
	p, err := Compile(m, "")
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchMatmul(b *testing.B, n int) {
	ty := fmt.Sprintf("tensor<%dx%dxf32>", n, n)
	p := benchProgram(b, fmt.Sprintf(`func.func @main(%%a: %s, %%b: %s) -> %s {
  %%0 = stablehlo.dot_general %%a, %%b, contracting_dims = [1] x [0] : (%s, %s) -> %s
  return %%0 : %s
}`, ty, ty, ty, ty, ty, ty, ty))
	args := []Value{benchF32Tensor([]int64{int64(n), int64(n)}, 1), benchF32Tensor([]int64{int64(n), int64(n)}, 2)}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := laCPUTime()
	for b.Loop() {
		if _, err := p.Run(ctx, Device{}, args); err != nil {
			b.Fatal(err)
		}
	}
	benchReport(b, 2*float64(n)*float64(n)*float64(n), laCPUTime()-cpu)
}

// benchReport adds GFLOP/s (wall clock) and CPU ms/op.
func benchReport(b *testing.B, flops float64, cpu time.Duration) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu > 0 {
		b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
	}
}

func benchSgemm(b *testing.B, n int) {
	a := blas32.General{Rows: n, Cols: n, Stride: n, Data: benchRandF32(n*n, 1)}
	bb := blas32.General{Rows: n, Cols: n, Stride: n, Data: benchRandF32(n*n, 2)}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := laCPUTime()
	for b.Loop() {
		// Allocate the result each time, as the interpreter does.
		c := blas32.General{Rows: n, Cols: n, Stride: n, Data: make([]float32, n*n)}
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, a, bb, 0, c)
	}
	benchReport(b, 2*float64(n)*float64(n)*float64(n), laCPUTime()-cpu)
}

// BenchmarkMatmulF32_1024 is a 1024³ f32 dot_general through the interpreter.
func BenchmarkMatmulF32_1024(b *testing.B) { benchMatmul(b, 1024) }

// BenchmarkGonumSgemm1024 is the same multiplication calling gonum directly.
func BenchmarkGonumSgemm1024(b *testing.B) { benchSgemm(b, 1024) }

// BenchmarkMatmulF32_256 and BenchmarkGonumSgemm256 compare a smaller size,
// where the interpreter's fixed cost per op shows more.
func BenchmarkMatmulF32_256(b *testing.B) { benchMatmul(b, 256) }

// BenchmarkGonumSgemm256 calls gonum directly for 256³.
func BenchmarkGonumSgemm256(b *testing.B) { benchSgemm(b, 256) }

// BenchmarkBatchedMatmulF32 is 64 independent 64×64×64 products (batches
// spread across cores).
func BenchmarkBatchedMatmulF32(b *testing.B) {
	ty := "tensor<64x64x64xf32>"
	p := benchProgram(b, fmt.Sprintf(`func.func @main(%%a: %s, %%b: %s) -> %s {
  %%0 = stablehlo.dot_general %%a, %%b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (%s, %s) -> %s
  return %%0 : %s
}`, ty, ty, ty, ty, ty, ty, ty))
	args := []Value{benchF32Tensor([]int64{64, 64, 64}, 1), benchF32Tensor([]int64{64, 64, 64}, 2)}
	b.ReportAllocs()
	cpu := laCPUTime()
	for b.Loop() {
		if _, err := p.Run(context.Background(), Device{}, args); err != nil {
			b.Fatal(err)
		}
	}
	benchReport(b, 2*64*64*64*64, laCPUTime()-cpu)
}

// BenchmarkConv2DF32 is a 3×3 same-padded convolution, NHWC
// [8, 32, 32, 64] with an HWIO [3, 3, 64, 64] kernel (im2col tiles through
// gonum's sgemm); GFLOP/s counts 2 flops per multiply-add.
func BenchmarkConv2DF32(b *testing.B) {
	p := benchProgram(b, `func.func @main(%a: tensor<8x32x32x64xf32>, %w: tensor<3x3x64x64xf32>) -> tensor<8x32x32x64xf32> {
  %0 = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x32x64xf32>, tensor<3x3x64x64xf32>) -> tensor<8x32x32x64xf32>
  return %0 : tensor<8x32x32x64xf32>
}`)
	args := []Value{benchF32Tensor([]int64{8, 32, 32, 64}, 1), benchF32Tensor([]int64{3, 3, 64, 64}, 2)}
	b.ReportAllocs()
	cpu := laCPUTime()
	for b.Loop() {
		if _, err := p.Run(context.Background(), Device{}, args); err != nil {
			b.Fatal(err)
		}
	}
	benchReport(b, 2*8*32*32*64*64*9, laCPUTime()-cpu)
}

// BenchmarkFFTC64_64K is a 65536-point complex64 FFT.
func BenchmarkFFTC64_64K(b *testing.B) {
	p := benchProgram(b, `func.func @main(%a: tensor<65536xcomplex<f32>>) -> tensor<65536xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = FFT, length = [65536] : (tensor<65536xcomplex<f32>>) -> tensor<65536xcomplex<f32>>
  return %0 : tensor<65536xcomplex<f32>>
}`)
	in := NewTensor(xla.MakeShape(xla.Complex64, 65536))
	for i, v := range benchRandF32(65536, 3) {
		in.Data.([]complex64)[i] = complex(v, -v)
	}
	args := []Value{in}
	b.ReportAllocs()
	cpu := laCPUTime()
	for b.Loop() {
		if _, err := p.Run(context.Background(), Device{}, args); err != nil {
			b.Fatal(err)
		}
	}
	// 5·N·log2(N) flops per complex FFT, the usual convention.
	benchReport(b, 5*65536*16, laCPUTime()-cpu)
}
