package chlo_test

import (
	"context"
	"fmt"

	"github.com/halo-ml/halo/chlo"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Build a function with CHLO ops, rewrite them into StableHLO, and run it.
func Example() {
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4))
	x := fb.Arg(0)
	values, indices := chlo.TopK(fb, chlo.Erf(fb, x), 2)
	fb.Return(values, indices)
	m, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := chlo.Expand(m, chlo.ExpandOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	p, err := interpreter.Compile(m, "main")
	if err != nil {
		fmt.Println(err)
		return
	}
	in := interpreter.NewTensor(xla.MakeShape(xla.Float32, 4))
	copy(in.Data.([]float32), []float32{0.5, -1, 2, 0})
	out, err := p.Run(context.Background(), interpreter.Device{}, []interpreter.Value{in})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0].(*interpreter.Tensor).Data, out[1].(*interpreter.Tensor).Data)
	// Output: [0.9953223 0.5204999] [2 0]
}
