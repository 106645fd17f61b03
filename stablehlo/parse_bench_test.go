package stablehlo

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/halo-ml/halo/internal/mliropt"
)

// Parse benchmarks: the printed text of the builder's benchmark programs
// (a 1,000,000-op elementwise function and a 10,000-layer MLP, 30,000
// ops), parsed from memory. mlir-opt (MLIR's own C++ parser, generic
// form) runs on the same text side by side when it is installed.

type mlirBenchText struct {
	ops             int
	pretty, generic []byte
}

var (
	mlirBenchText1M, mlirBenchTextMLP mlirBenchText
	mlirBenchOnce1M, mlirBenchOnceMLP sync.Once
)

func mlirMakeBenchText(b *testing.B, ops int, build func() (*Module, error)) mlirBenchText {
	m, err := build()
	if err != nil {
		b.Fatal(err)
	}
	var p, g bytes.Buffer
	if err := Print(&p, m, PrintOptions{}); err != nil {
		b.Fatal(err)
	}
	if err := Print(&g, m, PrintOptions{Generic: true}); err != nil {
		b.Fatal(err)
	}
	return mlirBenchText{ops: ops, pretty: p.Bytes(), generic: g.Bytes()}
}

func mlirBenchTexts(b *testing.B, which string) mlirBenchText {
	switch which {
	case "1M":
		mlirBenchOnce1M.Do(func() {
			mlirBenchText1M = mlirMakeBenchText(b, 1_000_000, func() (*Module, error) { return BuildElementwise(1_000_000) })
		})
		return mlirBenchText1M
	default:
		mlirBenchOnceMLP.Do(func() {
			mlirBenchTextMLP = mlirMakeBenchText(b, 30_000, func() (*Module, error) { return BuildMLP(10_000) })
		})
		return mlirBenchTextMLP
	}
}

func mlirBenchParse(b *testing.B, text []byte, ops int) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ops), "ns/stablehlo-op")
}

// mlirBenchOpt times mlir-opt reading the text (and writing nothing).
func mlirBenchOpt(b *testing.B, text []byte, ops int) {
	opt := mliropt.Path()
	if opt == "" {
		b.Skip(mliropt.Missing)
	}
	f, err := os.CreateTemp(b.TempDir(), "*.mlir")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(text); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.SetBytes(int64(len(text)))
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(opt, "--allow-unregistered-dialect", "--mlir-print-op-generic", "--mlir-disable-threading", "-o", os.DevNull, f.Name())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("mlir-opt: %v\n%s", err, out)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(ops)*float64(b.N)/total.Seconds(), "ops/s")
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N)/float64(ops), "ns/stablehlo-op")
}

// BenchmarkParse1MOps parses the printed 1,000,000-op module.
func BenchmarkParse1MOps(b *testing.B) {
	t := mlirBenchTexts(b, "1M")
	b.Run("pretty", func(b *testing.B) { mlirBenchParse(b, t.pretty, t.ops) })
	b.Run("generic", func(b *testing.B) { mlirBenchParse(b, t.generic, t.ops) })
	b.Run("mlir-opt-generic", func(b *testing.B) { mlirBenchOpt(b, t.generic, t.ops) })
}

// BenchmarkParseMLP10k parses the printed 10,000-layer MLP.
func BenchmarkParseMLP10k(b *testing.B) {
	t := mlirBenchTexts(b, "mlp")
	b.Run("pretty", func(b *testing.B) { mlirBenchParse(b, t.pretty, t.ops) })
	b.Run("generic", func(b *testing.B) { mlirBenchParse(b, t.generic, t.ops) })
	b.Run("mlir-opt-generic", func(b *testing.B) { mlirBenchOpt(b, t.generic, t.ops) })
}

// BenchmarkPrint1MOps prints the 1,000,000-op module (for scale).
func BenchmarkPrint1MOps(b *testing.B) {
	m, err := BuildElementwise(1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	for _, generic := range []bool{false, true} {
		name := "pretty"
		if generic {
			name = "generic"
		}
		b.Run(name, func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := Print(&buf, m, PrintOptions{Generic: generic}); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportMetric(1e6*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
