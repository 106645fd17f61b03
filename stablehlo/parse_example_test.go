package stablehlo_test

import (
	"fmt"
	"os"

	"github.com/halo-ml/halo/stablehlo"
)

func ExampleParse() {
	m, err := stablehlo.Parse([]byte(`
module @jit_f {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<f32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	body := m.Func("main").Body.Blocks[0]
	fmt.Println(len(body.Ops), body.Ops[1].Name)
	// The generic form, which any MLIR tool reads.
	_ = stablehlo.Print(os.Stdout, m, stablehlo.PrintOptions{Generic: true})
	// Output:
	// 3 stablehlo.reduce
	// "builtin.module"() <{sym_name = "jit_f"}> ({
	//   "func.func"() <{function_type = (tensor<4xf32>) -> tensor<f32>, sym_name = "main", sym_visibility = "public"}> ({
	//   ^bb0(%arg0: tensor<4xf32>):
	//     %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
	//     %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0>}> ({
	//     ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
	//       %2 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
	//       "stablehlo.return"(%2) : (tensor<f32>) -> ()
	//     }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
	//     "func.return"(%1) : (tensor<f32>) -> ()
	//   }) : () -> ()
	// }) : () -> ()
}

func ExampleSyntaxError() {
	_, err := stablehlo.Parse([]byte("func.func @f(%x: tensor<f32>) {\n  %0 = stablehlo.add %x, %y : tensor<f32>\n}"))
	fmt.Println(err)
	// Output:
	// 2:26: use of undefined value %y
}
