// Command pallas_matmul is seed 000's templated matmul: the kernel is made
// by a Go function from an activation and a K block size, accumulates
// x[:, k-block] @ y[k-block, :] in f32 and applies the activation fused in
// the same kernel. It runs in interpret mode on the built-in interpreter.
package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Activation is an elementwise function traced into the kernel.
type Activation func(x *pallas.Value) *pallas.Value

// Gelu is the tanh approximation of GELU (jax.nn.gelu's default).
func Gelu(x *pallas.Value) *pallas.Value {
	inner := x.Add(x.Mul(x).Mul(x).Mul(0.044715)).Mul(math.Sqrt(2 / math.Pi))
	return x.Mul(0.5).Mul(inner.Tanh().Add(1))
}

// Relu is max(x, 0).
func Relu(x *pallas.Value) *pallas.Value { return x.Max(0.0) }

// makeMatmulKernel templates the kernel: Go ints and closures are resolved
// at trace time, the loop over K blocks is unrolled.
func makeMatmulKernel(act Activation, blockK int64) pallas.KernelFunc {
	return func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, y, o := refs[0], refs[1], refs[2]
		bm, bn := x.Shape()[0], y.Shape()[1]
		acc := k.Zeros(xla.Float32, bm, bn)
		for kb := int64(0); kb < x.Shape()[1]/blockK; kb++ {
			xs := x.Load(pallas.All, pallas.Slice(kb*blockK, (kb+1)*blockK))
			ys := y.Load(pallas.Slice(kb*blockK, (kb+1)*blockK), pallas.All)
			acc = acc.Add(pallas.Dot(xs, ys, xla.Float32))
		}
		o.Store(act(acc).Astype(o.DType()))
	}
}

// buildMatmul emits main(x dt[m,kk], y dt[kk,n]) -> dt[m,n] = act(x @ y)
// with (bm, bn) output blocks over an (m/bm, n/bn) grid, the kernel
// lowered for backend (pallas.Interpret or pallas.Triton).
func buildMatmul(m, kk, n, bm, bn, bk int64, act Activation, dt xla.DType, backend pallas.Backend) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("pallas_matmul")
	fb := b.NewFunction("main", stablehlo.Tensor(dt, m, kk), stablehlo.Tensor(dt, kk, n))
	spec := pallas.CallSpec{
		Name:      "matmul",
		Backend:   backend,
		OutShapes: []xla.Shape{xla.MakeShape(dt, m, n)},
		Grid:      []int64{m / bm, n / bn},
		InSpecs: []*pallas.BlockSpec{
			{BlockShape: []int64{bm, kk}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }},
			{BlockShape: []int64{kk, bn}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{0, g[1]} }},
		},
		OutSpecs: []*pallas.BlockSpec{{BlockShape: []int64{bm, bn}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], g[1]} }}},
	}
	fb.Return(pallas.Call(fb, makeMatmulKernel(act, bk), spec, fb.Arg(0), fb.Arg(1))...)
	return b.Build()
}

// buildDenseGelu emits main(x dt[m,kk], y dt[kk,n]) = gelu(x @ y) as
// plain StableHLO ops (tanh form), what a program without the kernel runs.
func buildDenseGelu(m, kk, n int64, dt xla.DType) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("dense_gelu")
	fb := b.NewFunction("main", stablehlo.Tensor(dt, m, kk), stablehlo.Tensor(dt, kk, n))
	v := fb.Dot(fb.Arg(0), fb.Arg(1))
	c := func(f float64) *stablehlo.Value { return fb.SplatOf(dt, f, m, n) }
	cube := fb.Multiply(fb.Multiply(v, v), v)
	inner := fb.Multiply(fb.Add(v, fb.Multiply(cube, c(0.044715))), c(math.Sqrt(2/math.Pi)))
	fb.Return(fb.Multiply(fb.Multiply(v, c(0.5)), fb.Add(fb.Tanh(inner), c(1))))
	return b.Build()
}

func matmul(x, y []float32, m, kk, n, bm, bn, bk int64, act Activation) ([]float32, error) {
	mod, err := buildMatmul(m, kk, n, bm, bn, bk, act, xla.Float32, pallas.Interpret)
	if err != nil {
		return nil, err
	}
	tx := interpreter.NewTensor(xla.MakeShape(xla.Float32, m, kk))
	ty := interpreter.NewTensor(xla.MakeShape(xla.Float32, kk, n))
	copy(tx.Data.([]float32), x)
	copy(ty.Data.([]float32), y)
	out, err := interpreter.RunModule(context.Background(), mod, "main", tx, ty)
	if err != nil {
		return nil, err
	}
	return out[0].(*interpreter.Tensor).Data.([]float32), nil
}

func main() {
	const m, kk, n = 64, 32, 128
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, m*kk)
	y := make([]float32, kk*n)
	for i := range x {
		x[i] = r.Float32() - 0.5
	}
	for i := range y {
		y[i] = r.Float32() - 0.5
	}
	z, err := matmul(x, y, m, kk, n, 16, 32, 8, Gelu)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("gelu(x @ y)[0, :4] = [%.4f %.4f %.4f %.4f]\n", z[0], z[1], z[2], z[3])
}
