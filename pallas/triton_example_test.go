package pallas_test

import (
	"fmt"
	"strings"

	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// A vector add with (2,) blocks over a (4,) grid, lowered for Triton: the
// launch grid and the kernel's signature.
func ExampleLowerTriton() {
	byStep := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }
	spec := pallas.CallSpec{
		Name:      "add",
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
		Grid:      []int64{4},
		InSpecs:   []*pallas.BlockSpec{{BlockShape: []int64{2}, IndexMap: byStep}, {BlockShape: []int64{2}, IndexMap: byStep}},
		OutSpecs:  []*pallas.BlockSpec{{BlockShape: []int64{2}, IndexMap: byStep}},
	}
	add := func(k *pallas.Kernel, refs []*pallas.Ref) { refs[2].Store(refs[0].Load().Add(refs[1].Load())) }
	f32 := stablehlo.Tensor(xla.Float32, 8)
	p, err := pallas.Trace(add, spec, []stablehlo.TensorType{f32, f32})
	if err != nil {
		fmt.Println(err)
		return
	}
	k, err := pallas.LowerTriton(p, pallas.CompilerParams{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(k.Name, k.Grid, k.NumWarps, k.NumStages)
	for _, line := range strings.Split(k.IR, "\n") {
		if strings.Contains(line, "^bb0") || strings.Contains(line, "tt.load") || strings.Contains(line, "tt.store") {
			fmt.Println(strings.TrimSpace(line))
		}
	}
	// Output:
	// add [4 1 1] 4 3
	// ^bb0(%arg0: !tt.ptr<f32>, %arg1: !tt.ptr<f32>, %arg2: !tt.ptr<f32>):
	// %7 = "tt.load"(%6) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<2x!tt.ptr<f32>>) -> tensor<2xf32>
	// %11 = "tt.load"(%10) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<2x!tt.ptr<f32>>) -> tensor<2xf32>
	// "tt.store"(%15, %12) : (tensor<2x!tt.ptr<f32>>, tensor<2xf32>) -> ()
}
