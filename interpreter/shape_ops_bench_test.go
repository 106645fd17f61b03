package interpreter

import (
	"context"
	"math/rand"
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Benchmarks of the shape, reduction, gather and sort kernels on large
// inputs (GB/s over the input bytes), each beside a plain Go loop doing the
// same work where one is meaningful.

func shpBenchProgram(b *testing.B, src string) *Program {
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

func shpBenchRun(b *testing.B, p *Program, bytes int64, args ...Value) {
	b.Helper()
	ctx := context.Background()
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Run(ctx, Device{}, args); err != nil {
			b.Fatal(err)
		}
	}
}

// shpBenchSwitch runs run as two sub-benchmarks, named on and off, with
// *flag (a kernel's switch between two forms) true and then false.
func shpBenchSwitch(b *testing.B, flag *bool, on, off string, run func(b *testing.B)) {
	defer func(v bool) { *flag = v }(*flag)
	for _, c := range []struct {
		name string
		v    bool
	}{{on, true}, {off, false}} {
		b.Run(c.name, func(b *testing.B) {
			*flag = c.v
			run(b)
		})
	}
}

func shpBenchF32(dims ...int64) *Tensor {
	t := NewTensor(xla.MakeShape(xla.Float32, dims...))
	r := rand.New(rand.NewSource(1))
	for i := range t.Data.([]float32) {
		t.Data.([]float32)[i] = float32(r.NormFloat64())
	}
	return t
}

const shpReduceRowsSrc = `func.func @main(%a: tensor<4096x4096xf32>) -> tensor<4096xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4096x4096xf32>, tensor<f32>) -> tensor<4096xf32>
  return %0 : tensor<4096xf32>
}`

// BenchmarkReduceSumRowsF32_16M sums each row of a 4096x4096 f32 matrix.
func BenchmarkReduceSumRowsF32_16M(b *testing.B) {
	shpBenchRun(b, shpBenchProgram(b, shpReduceRowsSrc), 4096*4096*4, shpBenchF32(4096, 4096))
}

// BenchmarkReduceSumRowsF32_16MGoBaseline is the same sum as a plain Go loop.
func BenchmarkReduceSumRowsF32_16MGoBaseline(b *testing.B) {
	a := shpBenchF32(4096, 4096).Data.([]float32)
	out := make([]float32, 4096)
	b.SetBytes(4096 * 4096 * 4)
	for i := 0; i < b.N; i++ {
		for r := 0; r < 4096; r++ {
			s := float32(0)
			for _, v := range a[r*4096 : (r+1)*4096] {
				s += v
			}
			out[r] = s
		}
	}
}

// BenchmarkReduceMaxColumnsF32_16M takes the maximum down each column.
func BenchmarkReduceMaxColumnsF32_16M(b *testing.B) {
	src := `func.func @main(%a: tensor<4096x4096xf32>) -> tensor<4096xf32> {
  %z = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.maximum across dimensions = [0] : (tensor<4096x4096xf32>, tensor<f32>) -> tensor<4096xf32>
  return %0 : tensor<4096xf32>
}`
	shpBenchRun(b, shpBenchProgram(b, src), 4096*4096*4, shpBenchF32(4096, 4096))
}

// BenchmarkTransposeF32_16M transposes a 4096x4096 f32 matrix.
func BenchmarkTransposeF32_16M(b *testing.B) {
	src := `func.func @main(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}`
	shpBenchRun(b, shpBenchProgram(b, src), 4096*4096*4, shpBenchF32(4096, 4096))
}

// BenchmarkTransposeF32_16MGoBaseline is a plain Go transpose.
func BenchmarkTransposeF32_16MGoBaseline(b *testing.B) {
	a := shpBenchF32(4096, 4096).Data.([]float32)
	b.SetBytes(4096 * 4096 * 4)
	for i := 0; i < b.N; i++ {
		out := make([]float32, len(a))
		for r := 0; r < 4096; r++ {
			for c := 0; c < 4096; c++ {
				out[c*4096+r] = a[r*4096+c]
			}
		}
	}
}

// BenchmarkBroadcastF32_16M broadcasts a row to 4096x4096.
func BenchmarkBroadcastF32_16M(b *testing.B) {
	src := `func.func @main(%a: tensor<4096xf32>) -> tensor<4096x4096xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4096xf32>) -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}`
	shpBenchRun(b, shpBenchProgram(b, src), 4096*4096*4, shpBenchF32(4096))
}

// BenchmarkGatherRows gathers 65536 rows of 64 floats from a 4096-row table.
func BenchmarkGatherRows(b *testing.B) {
	src := `func.func @main(%t: tensor<4096x64xf32>, %i: tensor<65536x1xi32>) -> tensor<65536x64xf32> {
  %0 = "stablehlo.gather"(%t, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 64>} : (tensor<4096x64xf32>, tensor<65536x1xi32>) -> tensor<65536x64xf32>
  return %0 : tensor<65536x64xf32>
}`
	idx := NewTensor(xla.MakeShape(xla.Int32, 65536, 1))
	r := rand.New(rand.NewSource(2))
	for i := range idx.Data.([]int32) {
		idx.Data.([]int32)[i] = int32(r.Intn(4096))
	}
	shpBenchRun(b, shpBenchProgram(b, src), 65536*64*4, shpBenchF32(4096, 64), idx)
}

// BenchmarkScatterAddRows adds 65536 rows of 64 floats into a 4096-row table.
func BenchmarkScatterAddRows(b *testing.B) {
	src := `func.func @main(%t: tensor<4096x64xf32>, %i: tensor<65536x1xi32>, %u: tensor<65536x64xf32>) -> tensor<4096x64xf32> {
  %0 = "stablehlo.scatter"(%t, %i, %u) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<4096x64xf32>, tensor<65536x1xi32>, tensor<65536x64xf32>) -> tensor<4096x64xf32>
  return %0 : tensor<4096x64xf32>
}`
	idx := NewTensor(xla.MakeShape(xla.Int32, 65536, 1))
	r := rand.New(rand.NewSource(3))
	for i := range idx.Data.([]int32) {
		idx.Data.([]int32)[i] = int32(r.Intn(4096))
	}
	shpBenchRun(b, shpBenchProgram(b, src), 65536*64*4, shpBenchF32(4096, 64), idx, shpBenchF32(65536, 64))
}

// BenchmarkArgmaxRows256 is jnp.argmax's variadic reduce (a general region,
// run vectorised) over the rows of a 256x256 matrix.
func BenchmarkArgmaxRows256(b *testing.B) {
	src := `func.func @main(%v: tensor<256x256xf32>, %ix: tensor<256x256xi32>) -> tensor<256xi32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%v init: %ninf), (%ix init: %zero) across dimensions = [1] : (tensor<256x256xf32>, tensor<256x256xi32>, tensor<f32>, tensor<i32>) -> (tensor<256xf32>, tensor<256xi32>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
      %4 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %5 = stablehlo.compare  NE, %a, %a,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.or %4, %5 : tensor<i1>
      %7 = stablehlo.compare  EQ, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %8 = stablehlo.compare  LT, %ai, %bi,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %9 = stablehlo.and %7, %8 : tensor<i1>
      %10 = stablehlo.or %6, %9 : tensor<i1>
      %11 = stablehlo.select %6, %a, %b : tensor<i1>, tensor<f32>
      %12 = stablehlo.select %10, %ai, %bi : tensor<i1>, tensor<i32>
      stablehlo.return %11, %12 : tensor<f32>, tensor<i32>
    }
  return %0#1 : tensor<256xi32>
}`
	ix := NewTensor(xla.MakeShape(xla.Int32, 256, 256))
	for i := range ix.Data.([]int32) {
		ix.Data.([]int32)[i] = int32(i % 256)
	}
	shpBenchRun(b, shpBenchProgram(b, src), 256*256*8, shpBenchF32(256, 256), ix)
}

// BenchmarkSortF32_10K sorts 10,000 floats with jnp.sort's comparator (NaN
// and signed-zero canonicalisation, then a TOTALORDER compare): by keys
// computed once per element ("keys") and by the vectorised bitonic
// network ("network", what such comparators took before).
func BenchmarkSortF32_10K(b *testing.B) {
	src := `func.func @main(%x: tensor<10000xf32>) -> tensor<10000xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %1 = stablehlo.compare  EQ, %a, %z,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %2 = stablehlo.select %1, %z, %a : tensor<i1>, tensor<f32>
    %3 = stablehlo.compare  NE, %a, %a,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = stablehlo.select %3, %nan, %2 : tensor<i1>, tensor<f32>
    %5 = stablehlo.compare  EQ, %b, %z,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.select %5, %z, %b : tensor<i1>, tensor<f32>
    %7 = stablehlo.compare  NE, %b, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %8 = stablehlo.select %7, %nan, %6 : tensor<i1>, tensor<f32>
    %9 = stablehlo.compare  LT, %4, %8,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %9 : tensor<i1>
  }) : (tensor<10000xf32>) -> tensor<10000xf32>
  return %0 : tensor<10000xf32>
}`
	p := shpBenchProgram(b, src)
	x := shpBenchF32(10000)
	shpBenchSwitch(b, &shpSortByKeys, "keys", "network", func(b *testing.B) { shpBenchRun(b, p, 10000*4, x) })
}

// BenchmarkSortF32_10KTyped sorts 10,000 floats with a single-compare
// comparator (the typed path).
func BenchmarkSortF32_10KTyped(b *testing.B) {
	src := `func.func @main(%x: tensor<10000xf32>) -> tensor<10000xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %9 = stablehlo.compare  LT, %a, %b,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %9 : tensor<i1>
  }) : (tensor<10000xf32>) -> tensor<10000xf32>
  return %0 : tensor<10000xf32>
}`
	shpBenchRun(b, shpBenchProgram(b, src), 10000*4, shpBenchF32(10000))
}

// BenchmarkCumulativeSum is jnp.cumsum as TPU programs write it: a
// reduce_window over 4 rows of 4096 f32 with windows of the whole row and
// 4095 elements of low padding, in one pass ("one-pass") and by walking
// every window ("window-walk", what the interpreter did before: 4096x4096
// steps a row).
func BenchmarkCumulativeSum(b *testing.B) {
	const src = `func.func @main(%a: tensor<4x4096xf32>) -> tensor<4x4096xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 1, 4096>, padding = dense<[[0, 0], [4095, 0]]> : tensor<2x2xi64>} : (tensor<4x4096xf32>, tensor<f32>) -> tensor<4x4096xf32>
  return %0 : tensor<4x4096xf32>
}`
	p := shpBenchProgram(b, src)
	in := shpBenchF32(4, 4096)
	shpBenchSwitch(b, &shpCumulative, "one-pass", "window-walk", func(b *testing.B) { shpBenchRun(b, p, 4*4096*4, in) })
}

// BenchmarkTopK is chlo.top_k with k = 8 over 256 rows of 4096 f32, with
// the best k kept in a heap ("heap") and by sorting each row ("sort", what
// a large k does).
func BenchmarkTopK(b *testing.B) {
	const src = `func.func @main(%a: tensor<256x4096xf32>) -> (tensor<256x8xf32>, tensor<256x8xi32>) {
  %v, %i = "chlo.top_k"(%a) {k = 8 : i64} : (tensor<256x4096xf32>) -> (tensor<256x8xf32>, tensor<256x8xi32>)
  return %v, %i : tensor<256x8xf32>, tensor<256x8xi32>
}`
	p := shpBenchProgram(b, src)
	in := shpBenchF32(256, 4096)
	shpBenchSwitch(b, &chloTopKHeapOn, "heap", "sort", func(b *testing.B) { shpBenchRun(b, p, 256*4096*4, in) })
}
