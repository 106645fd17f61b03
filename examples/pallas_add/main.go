// Command pallas_add adds two vectors with a Pallas kernel in Go: (2,)
// blocks over a (4,) grid, run in interpret mode on the built-in
// interpreter (seed 000's add example).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// addKernel sees (2,)-blocks of x, y and o.
func addKernel(k *pallas.Kernel, refs []*pallas.Ref) {
	x, y, o := refs[0], refs[1], refs[2]
	o.Store(x.Load().Add(y.Load()))
}

func block(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0]} }

// buildAdd returns the module main(x, y: i32[8]) -> i32[8], the kernel
// lowered for backend (pallas.Interpret or pallas.Triton).
func buildAdd(backend pallas.Backend) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("pallas_add")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Int32, 8), stablehlo.Tensor(xla.Int32, 8))
	spec := pallas.CallSpec{
		Backend:   backend,
		OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 8)},
		Grid:      []int64{4},
		InSpecs:   []*pallas.BlockSpec{{BlockShape: []int64{2}, IndexMap: block}, {BlockShape: []int64{2}, IndexMap: block}},
		OutSpecs:  []*pallas.BlockSpec{{BlockShape: []int64{2}, IndexMap: block}},
	}
	fb.Return(pallas.Call(fb, addKernel, spec, fb.Arg(0), fb.Arg(1))...)
	return b.Build()
}

// add runs the kernel on x and y.
func add(x, y []int32) ([]int32, error) {
	m, err := buildAdd(pallas.Interpret)
	if err != nil {
		return nil, err
	}
	tx := interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))
	ty := interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))
	copy(tx.Data.([]int32), x)
	copy(ty.Data.([]int32), y)
	out, err := interpreter.RunModule(context.Background(), m, "main", tx, ty)
	if err != nil {
		return nil, err
	}
	return out[0].(*interpreter.Tensor).Data.([]int32), nil
}

func main() {
	x := []int32{0, 1, 2, 3, 4, 5, 6, 7}
	y := []int32{8, 9, 10, 11, 12, 13, 14, 15}
	z, err := add(x, y)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(z)
}
