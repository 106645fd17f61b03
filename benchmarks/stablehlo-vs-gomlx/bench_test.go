package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/halo-ml/halo/stablehlo"
)

// The two programs of the issue, built and printed by each library in the
// same run. "Build" is constructing the program with the library's API;
// "BuildPrint" adds writing the MLIR text (go-xla's Builder.Build, halo's
// stablehlo.Print). go-xla writes the generic op form, so halo's generic
// form is the like-for-like comparison; halo's pretty form is timed too,
// and so is halo's parser reading the printed text back (go-xla has none).

const (
	elementwiseOps = 1_000_000
	mlpLayers      = 10_000
	mlpOps         = 3 * mlpLayers
)

// report adds throughput metrics; cpu0 is cpuTime() before the loop.
func report(b *testing.B, ops int, cpu0 time.Duration) {
	b.ReportMetric(float64(ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ops), "ns/stablehlo-op")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/float64(ops), "cpu-ns/stablehlo-op")
}

func haloBuild(b *testing.B, ops int, build func() (*stablehlo.Module, error)) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := build(); err != nil {
			b.Fatal(err)
		}
	}
	report(b, ops, cpu0)
}

func haloBuildPrint(b *testing.B, ops int, generic bool, build func() (*stablehlo.Module, error)) {
	b.ReportAllocs()
	var buf bytes.Buffer
	cpu0 := cpuTime()
	for b.Loop() {
		m, err := build()
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		if err := stablehlo.Print(&buf, m, stablehlo.PrintOptions{Generic: generic}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes-of-text")
	report(b, ops, cpu0)
}

func haloParse(b *testing.B, ops int, generic bool, build func() (*stablehlo.Module, error)) {
	m, err := build()
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := stablehlo.Print(&buf, m, stablehlo.PrintOptions{Generic: generic}); err != nil {
		b.Fatal(err)
	}
	text := buf.Bytes()
	m = nil
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := stablehlo.Parse(text); err != nil {
			b.Fatal(err)
		}
	}
	report(b, ops, cpu0)
}

type gomlxBuilder interface{ Build() ([]byte, error) }

func gomlxBuild[B gomlxBuilder](b *testing.B, ops int, print bool, build func() (B, error)) {
	b.ReportAllocs()
	var n int
	cpu0 := cpuTime()
	for b.Loop() {
		gb, err := build()
		if err != nil {
			b.Fatal(err)
		}
		if print {
			out, err := gb.Build()
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
	}
	if print {
		b.ReportMetric(float64(n), "bytes-of-text")
	}
	report(b, ops, cpu0)
}

func haloElementwise() (*stablehlo.Module, error) { return HaloElementwise(elementwiseOps) }
func haloMLP() (*stablehlo.Module, error)         { return HaloMLP(mlpLayers) }

func BenchmarkElementwise1M(b *testing.B) {
	b.Run("halo/Build", func(b *testing.B) { haloBuild(b, elementwiseOps, haloElementwise) })
	b.Run("halo/BuildPrintGeneric", func(b *testing.B) { haloBuildPrint(b, elementwiseOps, true, haloElementwise) })
	b.Run("halo/BuildPrintPretty", func(b *testing.B) { haloBuildPrint(b, elementwiseOps, false, haloElementwise) })
	b.Run("halo/ParseGeneric", func(b *testing.B) { haloParse(b, elementwiseOps, true, haloElementwise) })
	b.Run("halo/ParsePretty", func(b *testing.B) { haloParse(b, elementwiseOps, false, haloElementwise) })
	b.Run("gomlx/Build", func(b *testing.B) {
		gomlxBuild(b, elementwiseOps, false, func() (gomlxBuilder, error) { return GomlxElementwise(elementwiseOps) })
	})
	b.Run("gomlx/BuildPrint", func(b *testing.B) {
		gomlxBuild(b, elementwiseOps, true, func() (gomlxBuilder, error) { return GomlxElementwise(elementwiseOps) })
	})
}

func BenchmarkMLP10k(b *testing.B) {
	b.Run("halo/Build", func(b *testing.B) { haloBuild(b, mlpOps, haloMLP) })
	b.Run("halo/BuildPrintGeneric", func(b *testing.B) { haloBuildPrint(b, mlpOps, true, haloMLP) })
	b.Run("halo/BuildPrintPretty", func(b *testing.B) { haloBuildPrint(b, mlpOps, false, haloMLP) })
	b.Run("halo/ParseGeneric", func(b *testing.B) { haloParse(b, mlpOps, true, haloMLP) })
	b.Run("halo/ParsePretty", func(b *testing.B) { haloParse(b, mlpOps, false, haloMLP) })
	b.Run("gomlx/Build", func(b *testing.B) {
		gomlxBuild(b, mlpOps, false, func() (gomlxBuilder, error) { return GomlxMLP(mlpLayers) })
	})
	b.Run("gomlx/BuildPrint", func(b *testing.B) {
		gomlxBuild(b, mlpOps, true, func() (gomlxBuilder, error) { return GomlxMLP(mlpLayers) })
	})
}
