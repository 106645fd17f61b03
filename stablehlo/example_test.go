package stablehlo_test

import (
	"fmt"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Build a small module (a softmax with a reduction region), print it,
// walk it, and see what a sticky error looks like.
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
	fmt.Print(m) // the pretty form; stablehlo.Print with Generic: true writes the generic one

	// The IR can be walked (and rewritten) directly.
	n := 0
	m.Walk(func(op *stablehlo.Op) bool { n++; return true })
	fmt.Println(n, "ops")

	// Errors are sticky and say where they happened.
	b2 := stablehlo.NewBuilder("bad")
	g := b2.NewFunction("main", stablehlo.Tensor(xla.Float32, 2), stablehlo.Tensor(xla.Int32, 2))
	g.Return(g.Add(g.Arg(0), g.Arg(1)))
	_, err = b2.Build()
	fmt.Println(err)
	// Output:
	// module @jit_softmax attributes {mhlo.num_partitions = 1 : i32} {
	//   func.func @main(%arg0: tensor<2x4xf32>) -> (tensor<2x4xf32> {jax.result_info = "result"}) {
	//     %0 = stablehlo.exponential %arg0 : tensor<2x4xf32>
	//     %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
	//     %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
	//     %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<2xf32>) -> tensor<2x4xf32>
	//     %3 = stablehlo.divide %0, %2 : tensor<2x4xf32>
	//     return %3 : tensor<2x4xf32>
	//   }
	// }
	// 8 ops
	// stablehlo: stablehlo.add(tensor<2xf32>, tensor<2xi32>) at example_test.go:38: operands must have the same type
}
