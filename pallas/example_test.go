package pallas_test

import (
	"context"
	"fmt"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// A kernel over (2,)-blocks of two vectors, on a grid of 4 steps, emitted in
// interpret mode and run on the built-in interpreter.
func Example() {
	add := func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, y, o := refs[0], refs[1], refs[2]
		o.Store(x.Load().Add(y.Load()).Mul(k.ProgramID(0).Add(1).Astype(xla.Float32)))
	}
	block := &pallas.BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }}
	b := stablehlo.NewBuilder("example")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 8), stablehlo.Tensor(xla.Float32, 8))
	out := pallas.Call(fb, add, pallas.CallSpec{
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
		Grid:      []int64{4},
		InSpecs:   []*pallas.BlockSpec{block, block},
		OutSpecs:  []*pallas.BlockSpec{block},
	}, fb.Arg(0), fb.Arg(1))
	fb.Return(out...)
	m, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := interpreter.Compile(m, "main")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 8))
	y := interpreter.NewTensor(xla.MakeShape(xla.Float32, 8))
	copy(x.Data.([]float32), []float32{0, 1, 2, 3, 4, 5, 6, 7})
	copy(y.Data.([]float32), []float32{1, 1, 1, 1, 1, 1, 1, 1})
	res, err := p.Run(context.Background(), interpreter.Device{}, []interpreter.Value{x, y})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res[0].(*interpreter.Tensor).Data)
	// Output: [1 2 6 8 15 18 28 32]
}

// Trace shows the kernel IR a lowering walks.
func ExampleTrace() {
	kernel := func(k *pallas.Kernel, refs []*pallas.Ref) {
		refs[1].Store(refs[0].Load().Exp().Sum())
	}
	p, err := pallas.Trace(kernel, pallas.CallSpec{Name: "softsum", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32)}},
		[]stablehlo.TensorType{stablehlo.Tensor(xla.Float32, 4)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(p)
	// Output:
	// kernel softsum grid[]
	// body(%1: ref f32[4], %2: ref f32[]) {
	//   %3 = load %1 {[0:+4]} : f32[4]
	//   %4 = exp %3 : f32[4]
	//   %5 = reduce %4 {sum axes=[0]} : f32[]
	//   store %2, %5 {[]}
	// }
}
