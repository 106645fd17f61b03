package interpreter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Benchmarks of the linear-algebra kernels. BenchmarkMatmulF32_1024 runs a
// parsed 1024×1024×1024 dot_general through the interpreter;
// BenchmarkGonumSgemm1024 calls gonum's blas32.Gemm directly on the same
// sizes, so the two side by side give the interpreter's overhead. Both
// report GFLOP/s (2·N³ per op); run with -benchmem for allocs/op.

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
	for b.Loop() {
		if _, err := p.Run(ctx, Device{}, args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func benchSgemm(b *testing.B, n int) {
	a := blas32.General{Rows: n, Cols: n, Stride: n, Data: benchRandF32(n*n, 1)}
	bb := blas32.General{Rows: n, Cols: n, Stride: n, Data: benchRandF32(n*n, 2)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// Allocate the result each time, as the interpreter does.
		c := blas32.General{Rows: n, Cols: n, Stride: n, Data: make([]float32, n*n)}
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, a, bb, 0, c)
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
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
	for b.Loop() {
		if _, err := p.Run(context.Background(), Device{}, args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*64*64*64*64*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
