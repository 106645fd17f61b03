package stablehlo

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/halo-ml/halo/xla"
)

// The benchmark programs (the side-by-side module in
// benchmarks/stablehlo-vs-gomlx builds the same ones with another builder).

// BuildElementwise builds one function of n elementwise ops on
// tensor<128xf32>: v = (v + x) * y, repeated.
func BuildElementwise(n int) (*Module, error) {
	b := NewBuilder("elementwise")
	t := Tensor(xla.Float32, 128)
	f := b.NewFunction("main", t, t)
	x, y := f.Arg(0), f.Arg(1)
	v := x
	for i := range n {
		if i%2 == 0 {
			v = f.Add(v, x)
		} else {
			v = f.Multiply(v, y)
		}
	}
	f.Return(v)
	return b.Build()
}

// BuildMLP builds an MLP of the given number of layers, each
// h = max(dot_general(h, w) + bias, 0), on a [32, 256] batch with shared
// [256, 256] weights and [32, 256] bias; 0 is a broadcast scalar constant
// and dot_general has precision_config [DEFAULT, DEFAULT].
func BuildMLP(layers int) (*Module, error) {
	b := NewBuilder("mlp")
	f := b.NewFunction("main", Tensor(xla.Float32, 32, 256), Tensor(xla.Float32, 256, 256), Tensor(xla.Float32, 32, 256))
	h, w, bias := f.Arg(0), f.Arg(1), f.Arg(2)
	zero := f.BroadcastInDim(ConstantScalar(f, float32(0)), []int64{32, 256}, nil)
	dn := DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}
	for range layers {
		h = f.Maximum(f.Add(f.DotGeneral(h, w, dn, PrecisionDefault, PrecisionDefault), bias), zero)
	}
	f.Return(h)
	return b.Build()
}

func benchBuild(b *testing.B, ops int, build func() (*Module, error)) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := build(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ops), "ns/stablehlo-op")
}

func BenchmarkBuildElementwise1M(b *testing.B) {
	benchBuild(b, 1_000_000, func() (*Module, error) { return BuildElementwise(1_000_000) })
}

func BenchmarkBuildMLP10k(b *testing.B) {
	benchBuild(b, 30_000, func() (*Module, error) { return BuildMLP(10_000) })
}

func benchBuildPrint(b *testing.B, ops int, generic bool, build func() (*Module, error)) {
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		m, err := build()
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		if err := Print(&buf, m, PrintOptions{Generic: generic}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ops), "ns/stablehlo-op")
}

func BenchmarkBuildPrintElementwise1M(b *testing.B) {
	build := func() (*Module, error) { return BuildElementwise(1_000_000) }
	b.Run("pretty", func(b *testing.B) { benchBuildPrint(b, 1_000_000, false, build) })
	b.Run("generic", func(b *testing.B) { benchBuildPrint(b, 1_000_000, true, build) })
}

func BenchmarkBuildPrintMLP10k(b *testing.B) {
	build := func() (*Module, error) { return BuildMLP(10_000) }
	b.Run("pretty", func(b *testing.B) { benchBuildPrint(b, 30_000, false, build) })
	b.Run("generic", func(b *testing.B) { benchBuildPrint(b, 30_000, true, build) })
}

// BenchmarkNewFunctions builds a module of 30000 one-op functions: the
// check that a new function's name is free must not scan the module
// (with a scan, the build took about 3 s).
func BenchmarkNewFunctions(b *testing.B) {
	names := make([]string, 30000)
	for i := range names {
		names[i] = fmt.Sprintf("f%d", i)
	}
	for b.Loop() {
		bl := NewBuilder("m")
		for _, name := range names {
			fb := bl.NewFunction(name, f32(4)).Private()
			fb.Return(fb.Arg(0))
		}
		if _, err := bl.Build(); err != nil {
			b.Fatal(err)
		}
	}
}
