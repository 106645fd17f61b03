package interpreter

import (
	"context"
	"math"
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Elementwise throughput over 16M float32s, as GB/s of operands read plus
// results written (b.SetBytes). Each benchmark has the interpreter (a
// compiled one-op program run through Program.Run, which allocates its
// result and splits the loop across GOMAXPROCS goroutines) side by side
// with plain Go loops over []float32 on one goroutine: into a preallocated
// slice, and into a slice made per iteration (what the interpreter does).

const ewtBenchN = 16 << 20

func ewtBenchProgram(b *testing.B, op string, nargs int) (*Program, []Value) {
	b.Helper()
	x := NewTensor(xla.MakeShape(xla.Float32, ewtBenchN))
	y := NewTensor(xla.MakeShape(xla.Float32, ewtBenchN))
	xd, yd := x.Data.([]float32), y.Data.([]float32)
	for i := range xd {
		xd[i] = float32(i%1000) * 0.001
		yd[i] = float32(i%777) * 0.002
	}
	args := []Value{x, y}[:nargs]
	text := ewtProgram("stablehlo."+op, "", []xla.Shape{x.Shape}, x, y)
	if nargs == 1 {
		text = ewtProgram("stablehlo."+op, "", []xla.Shape{x.Shape}, x)
	}
	m, err := stablehlo.Parse([]byte(text))
	if err != nil {
		b.Fatal(err)
	}
	p, err := Compile(m, "")
	if err != nil {
		b.Fatal(err)
	}
	return p, args
}

func BenchmarkAddF32_16M(b *testing.B) {
	p, args := ewtBenchProgram(b, "add", 2)
	x, y := args[0].(*Tensor).Data.([]float32), args[1].(*Tensor).Data.([]float32)
	b.Run("interpreter", func(b *testing.B) {
		b.SetBytes(3 * 4 * ewtBenchN)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Run(context.Background(), Device{}, args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-loop", func(b *testing.B) {
		b.SetBytes(3 * 4 * ewtBenchN)
		b.ReportAllocs()
		d := make([]float32, ewtBenchN)
		for b.Loop() {
			for i := range d {
				d[i] = x[i] + y[i]
			}
		}
	})
	b.Run("go-loop-alloc", func(b *testing.B) {
		b.SetBytes(3 * 4 * ewtBenchN)
		b.ReportAllocs()
		for b.Loop() {
			d := make([]float32, ewtBenchN)
			for i := range d {
				d[i] = x[i] + y[i]
			}
		}
	})
}

func BenchmarkExpF32_16M(b *testing.B) {
	p, args := ewtBenchProgram(b, "exponential", 1)
	x := args[0].(*Tensor).Data.([]float32)
	b.Run("interpreter", func(b *testing.B) {
		b.SetBytes(2 * 4 * ewtBenchN)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Run(context.Background(), Device{}, args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-loop", func(b *testing.B) {
		b.SetBytes(2 * 4 * ewtBenchN)
		b.ReportAllocs()
		d := make([]float32, ewtBenchN)
		for b.Loop() {
			for i := range d {
				d[i] = float32(math.Exp(float64(x[i])))
			}
		}
	})
	b.Run("go-loop-alloc", func(b *testing.B) {
		b.SetBytes(2 * 4 * ewtBenchN)
		b.ReportAllocs()
		for b.Loop() {
			d := make([]float32, ewtBenchN)
			for i := range d {
				d[i] = float32(math.Exp(float64(x[i])))
			}
		}
	})
}

// Narrow floats: bf16 add is float32 add plus a rounding pass.
func BenchmarkAddBF16_16M(b *testing.B) {
	x := NewTensor(xla.MakeShape(xla.BFloat16, ewtBenchN))
	xd := x.Data.([]float32)
	for i := range xd {
		xd[i] = RoundNarrow(xla.BFloat16, float32(i%1000)*0.001)
	}
	m, err := stablehlo.Parse([]byte(ewtProgram("stablehlo.add", "", []xla.Shape{x.Shape}, x, x)))
	if err != nil {
		b.Fatal(err)
	}
	p, err := Compile(m, "")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(3 * 4 * ewtBenchN)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Run(context.Background(), Device{}, []Value{x, x}); err != nil {
			b.Fatal(err)
		}
	}
}
