package stablehlo_test

import (
	"fmt"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Build a small module: a softmax-like function with a reduction region,
// then walk its ops.
func Example() {
	b := stablehlo.NewBuilder("jit_softmax")
	b.SetNumPartitions(1)
	f := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 2, 4))
	f.SetResultAttr(0, "jax.result_info", stablehlo.StringAttr("result"))
	x := f.Arg(0)
	e := f.Exponential(x)
	sum := f.ReduceSum(e, 1)                                // tensor<2xf32>, with an add region
	den := f.BroadcastInDim(sum, []int64{2, 4}, []int64{0}) // back to tensor<2x4xf32>
	f.Return(f.Divide(e, den))

	m, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	m.Walk(func(op *stablehlo.Op) bool {
		fmt.Println(op.Name, typesOf(op.Results))
		return true
	})

	// Errors are sticky and say where they happened.
	b2 := stablehlo.NewBuilder("bad")
	g := b2.NewFunction("main", stablehlo.Tensor(xla.Float32, 2), stablehlo.Tensor(xla.Int32, 2))
	g.Return(g.Add(g.Arg(0), g.Arg(1)))
	_, err = b2.Build()
	fmt.Println(err != nil)
	// Output:
	// stablehlo.exponential [tensor<2x4xf32>]
	// stablehlo.constant [tensor<f32>]
	// stablehlo.reduce [tensor<2xf32>]
	// stablehlo.add [tensor<f32>]
	// stablehlo.return []
	// stablehlo.broadcast_in_dim [tensor<2x4xf32>]
	// stablehlo.divide [tensor<2x4xf32>]
	// func.return []
	// true
}

func typesOf(vs []*stablehlo.Value) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, v.Type.String())
	}
	return out
}
