package interpreter

import (
	"context"
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// BenchmarkElementwiseChain4M runs four dependent elementwise ops over 4M
// f32. With buffer reuse the chain allocates its first result only; the
// planned reuse is switched off in the "fresh" case for comparison.
func BenchmarkElementwiseChain4M(b *testing.B) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<4194304xf32>) -> tensor<4194304xf32> {
  %0 = stablehlo.exponential %a : tensor<4194304xf32>
  %1 = stablehlo.add %0, %a : tensor<4194304xf32>
  %2 = stablehlo.multiply %1, %1 : tensor<4194304xf32>
  %3 = stablehlo.negate %2 : tensor<4194304xf32>
  return %3 : tensor<4194304xf32>
}`))
	if err != nil {
		b.Fatal(err)
	}
	a := NewTensor(xla.MakeShape(xla.Float32, 4194304))
	for _, mode := range []string{"reuse", "fresh"} {
		b.Run(mode, func(b *testing.B) {
			p, err := Compile(m, "")
			if err != nil {
				b.Fatal(err)
			}
			if mode == "fresh" {
				for _, pl := range p.funcs["main"].blocks[m.Funcs[0].Body.Blocks[0]] {
					pl.reuse = nil
				}
			}
			b.SetBytes(4 * 4194304 * 4)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := p.Run(context.Background(), Device{}, []Value{a}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
