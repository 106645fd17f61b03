// Command pallas_dynamic_slice is seed 001's block-aligned dynamic slice:
// the block index is computed outside the kernel and passed as a scalar
// prefetch operand, which the input's index map reads to pick the block.
// The kernel itself only copies its block.
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

// dynamicSliceKernel receives the prefetch ref first, then x's block and
// the output.
func dynamicSliceKernel(k *pallas.Kernel, refs []*pallas.Ref) {
	x, o := refs[1], refs[2]
	o.Store(x.Load())
}

// buildBlockDynamicSlice emits main(x i32[rows, cols], starts i32[2]) =
// x[starts[0]:+size0, starts[1]:+size1]. starts must be multiples of the
// sizes; block_idx = starts / sizes is computed in StableHLO and prefetched.
func buildBlockDynamicSlice(rows, cols, size0, size1 int64) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("block_dynamic_slice")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Int32, rows, cols), stablehlo.Tensor(xla.Int32, 2))
	sizes := stablehlo.Constant(fb, []int32{int32(size0), int32(size1)}, 2)
	blockIdx := fb.Divide(fb.Arg(1), sizes)
	spec := pallas.CallSpec{
		Name:              "dynamic_slice",
		OutShapes:         []xla.Shape{xla.MakeShape(xla.Int32, size0, size1)},
		Grid:              []int64{1, 1},
		NumScalarPrefetch: 1,
		InSpecs: []*pallas.BlockSpec{{BlockShape: []int64{size0, size1},
			IndexMap: func(g []*pallas.Value, pf []*pallas.Ref) []any { return []any{pf[0].Load(0), pf[0].Load(1)} }}},
		OutSpecs: []*pallas.BlockSpec{{BlockShape: []int64{size0, size1}}},
	}
	fb.Return(pallas.Call(fb, dynamicSliceKernel, spec, blockIdx, fb.Arg(0))...)
	return b.Build()
}

func blockDynamicSlice(x []int32, rows, cols int64, starts [2]int32, size0, size1 int64) ([]int32, error) {
	if int64(starts[0])%size0 != 0 || int64(starts[1])%size1 != 0 {
		return nil, fmt.Errorf("starts %v must be multiples of the sizes (%d, %d)", starts, size0, size1)
	}
	m, err := buildBlockDynamicSlice(rows, cols, size0, size1)
	if err != nil {
		return nil, err
	}
	tx := interpreter.NewTensor(xla.MakeShape(xla.Int32, rows, cols))
	copy(tx.Data.([]int32), x)
	ts := interpreter.NewTensor(xla.MakeShape(xla.Int32, 2))
	copy(ts.Data.([]int32), starts[:])
	out, err := interpreter.RunModule(context.Background(), m, "main", tx, ts)
	if err != nil {
		return nil, err
	}
	return out[0].(*interpreter.Tensor).Data.([]int32), nil
}

func main() {
	const rows, cols = 512, 512
	x := make([]int32, rows*cols)
	for i := range x {
		x[i] = int32(i)
	}
	got, err := blockDynamicSlice(x, rows, cols, [2]int32{128, 256}, 128, 128)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	maxDiff := int32(0)
	for i := 0; i < 128; i++ {
		for j := 0; j < 128; j++ {
			d := got[i*128+j] - x[(128+i)*cols+256+j]
			maxDiff = max(maxDiff, d, -d)
		}
	}
	fmt.Println("Error |result - lax.dynamic_slice| =", maxDiff)
}
