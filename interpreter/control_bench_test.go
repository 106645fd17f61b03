package interpreter

import (
	"context"
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// A 1,000-iteration while loop: the carried counter is compared with the
// bound in cond and incremented by one stablehlo.add in body. Reported per
// iteration (ns/iter) next to a plain Go loop doing the same counting.
const shpWhileBenchSrc = `func.func @main(%n: tensor<i32>) -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %r = stablehlo.while(%i = %zero) : tensor<i32>
    cond {
      %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j : tensor<i32>
    }
  return %r : tensor<i32>
}`

func BenchmarkWhileLoop1000(b *testing.B) {
	m, err := stablehlo.Parse([]byte(shpWhileBenchSrc))
	if err != nil {
		b.Fatal(err)
	}
	p, err := Compile(m, "")
	if err != nil {
		b.Fatal(err)
	}
	n := shpT(xla.Int32, nil, 1000)
	args := []Value{n}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := p.Run(ctx, Device{}, args)
		if err != nil {
			b.Fatal(err)
		}
		if got := out[0].(*Tensor).Data.([]int32)[0]; got != 1000 {
			b.Fatalf("loop ended at %d", got)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/iter")
}

var shpBenchSink int32

// BenchmarkWhileLoop1000GoBaseline is the same loop in plain Go: compare the
// counter with the bound, add one.
func BenchmarkWhileLoop1000GoBaseline(b *testing.B) {
	bound := int32(1000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c := int32(0)
		for c < bound {
			c++
		}
		shpBenchSink += c
		bound += int32(i & 1) // keep the loop from being folded
		bound -= int32(i & 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/iter")
}
