package pallas

import (
	"context"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/require"
)

// runCall builds main(args) = Call(kernel, spec, args...) and runs it on the
// interpreter.
func runCall(kernel KernelFunc, spec CallSpec, args ...*interpreter.Tensor) ([]*interpreter.Tensor, error) {
	return runCallCtx(context.Background(), kernel, spec, args...)
}

// runCallCtx is runCall with a context for the run.
func runCallCtx(ctx context.Context, kernel KernelFunc, spec CallSpec, args ...*interpreter.Tensor) ([]*interpreter.Tensor, error) {
	b := stablehlo.NewBuilder("test")
	types := make([]stablehlo.Type, len(args))
	for i, a := range args {
		types[i] = stablehlo.TensorOf(a.Shape)
	}
	fb := b.NewFunction("main", types...)
	outs := Call(fb, kernel, spec, fb.Args()...)
	fb.Return(outs...)
	m, err := b.Build()
	if err != nil {
		return nil, err
	}
	vals := make([]interpreter.Value, len(args))
	for i, a := range args {
		vals[i] = a
	}
	res, err := interpreter.RunModule(ctx, m, "main", vals...)
	if err != nil {
		return nil, err
	}
	out := make([]*interpreter.Tensor, len(res))
	for i, r := range res {
		out[i] = r.(*interpreter.Tensor)
	}
	return out, nil
}

func tensor[T interpreter.Value](t *testing.T, dt xla.DType, data []T, dims ...int64) *interpreter.Tensor {
	t.Helper()
	x := interpreter.NewTensor(xla.MakeShape(dt, dims...))
	switch d := x.Data.(type) {
	case []float32:
		for i, v := range data {
			d[i] = any(v).(float32)
		}
	case []int32:
		for i, v := range data {
			d[i] = any(v).(int32)
		}
	default:
		require.Failf(t, "unsupported", "%v", dt)
	}
	return x
}

func f32s(n int, f func(i int) float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func i32s(n int, f func(i int) int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}
