// Command pallas_ssm is the selective scan of a state-space model (the
// recurrence at the heart of Mamba) as a Pallas kernel: for each channel
// c and state n, h_t = exp(Δ_t·A_cn)·h_{t-1} + Δ_t·B_tn·x_t and
// y_t = Σ_n C_tn·h_t. The recurrence is linear, so pairs (a, b) compose
// associatively as (a1·a2, a2·b1 + b2): pallas.AssociativeScan runs it in
// parallel along the sequence (a tree of tt.scan steps on a GPU) instead
// of one step at a time. One program handles a block of channels with
// all their states, (len, channels, states) values in registers. The same
// kernel runs in interpret mode (here, on the built-in interpreter) and
// as a Triton kernel on a GPU.
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

// Shape is a selective-scan problem: the sequence length, the channels,
// the states per channel, and the channels a program takes.
type Shape struct {
	Len, Chans, States int64
	Block              int64
}

// linear composes two steps of h ← a·h + b: first (a1, b1), then
// (a2, b2), as one step (a1·a2, a2·b1 + b2).
func linear(first, then []*pallas.Value) []*pallas.Value {
	return []*pallas.Value{first[0].Mul(then[0]), then[0].Mul(first[1]).Add(then[1])}
}

// scanKernel's refs: x and delta (len, block) of this program's channels,
// a (block, states) of their decay rates, b and c (len, states) shared by
// all channels, y (len, block).
func scanKernel(k *pallas.Kernel, refs []*pallas.Ref) {
	x, delta, a, b, c, y := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load(), refs[4].Load(), refs[5]
	decay := delta.ExpandDims(2).Mul(a.ExpandDims(0)).Exp()  // (len, block, states): exp(Δ·A)
	input := delta.Mul(x).ExpandDims(2).Mul(b.ExpandDims(1)) // Δ·x·B
	h := pallas.AssociativeScan(0, pallas.Forward, linear, decay, input)[1]
	y.Store(h.Mul(c.ExpandDims(1)).Sum(2)) // Σ_n C·h
}

// scanSpec is the call: chans/block programs, each given its channels'
// x, delta and a, and b and c whole; lowered for backend.
func scanSpec(s Shape, backend pallas.Backend) pallas.CallSpec {
	chans := &pallas.BlockSpec{BlockShape: []int64{s.Len, s.Block},
		IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{0, g[0]} }}
	rates := &pallas.BlockSpec{BlockShape: []int64{s.Block, s.States},
		IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }}
	return pallas.CallSpec{
		Name:      "selective_scan",
		Backend:   backend,
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, s.Len, s.Chans)},
		Grid:      []int64{s.Chans / s.Block},
		InSpecs:   []*pallas.BlockSpec{chans, chans, rates, nil, nil}, // b and c whole
		OutSpecs:  []*pallas.BlockSpec{chans},
	}
}

// buildScan emits main(x, delta f32[len, chans], a f32[chans, states],
// b, c f32[len, states]) -> y f32[len, chans]: the call of scanSpec.
func buildScan(s Shape, backend pallas.Backend) (*stablehlo.Module, error) {
	bld := stablehlo.NewBuilder("pallas_ssm")
	seq := stablehlo.Tensor(xla.Float32, s.Len, s.Chans)
	fb := bld.NewFunction("main", seq, seq, stablehlo.Tensor(xla.Float32, s.Chans, s.States),
		stablehlo.Tensor(xla.Float32, s.Len, s.States), stablehlo.Tensor(xla.Float32, s.Len, s.States))
	fb.Return(pallas.Call(fb, scanKernel, scanSpec(s, backend), fb.Args()...)...)
	return bld.Build()
}

// inputs returns x, delta, a, b and c of s: x, b and c uniform in
// [-1, 1), delta in [0.01, 0.1) (step sizes), a in [-4, -0.5) (decays).
func inputs(seed uint64, s Shape) []*interpreter.Tensor {
	r := rand.New(rand.NewPCG(seed, 3))
	uniform := func(lo, hi float32, dims ...int64) *interpreter.Tensor {
		t := interpreter.NewTensor(xla.MakeShape(xla.Float32, dims...))
		d := t.Data.([]float32)
		for i := range d {
			d[i] = lo + (hi-lo)*r.Float32()
		}
		return t
	}
	return []*interpreter.Tensor{
		uniform(-1, 1, s.Len, s.Chans), uniform(0.01, 0.1, s.Len, s.Chans), uniform(-4, -0.5, s.Chans, s.States),
		uniform(-1, 1, s.Len, s.States), uniform(-1, 1, s.Len, s.States),
	}
}

// goScan is the recurrence run step by step in float64.
func goScan(s Shape, in []*interpreter.Tensor) []float64 {
	x, delta, a := in[0].Data.([]float32), in[1].Data.([]float32), in[2].Data.([]float32)
	b, c := in[3].Data.([]float32), in[4].Data.([]float32)
	L, D, N := int(s.Len), int(s.Chans), int(s.States)
	y := make([]float64, L*D)
	for ch := 0; ch < D; ch++ {
		h := make([]float64, N)
		for t := 0; t < L; t++ {
			dt := float64(delta[t*D+ch])
			for n := 0; n < N; n++ {
				h[n] = math.Exp(dt*float64(a[ch*N+n]))*h[n] + dt*float64(x[t*D+ch])*float64(b[t*N+n])
				y[t*D+ch] += float64(c[t*N+n]) * h[n]
			}
		}
	}
	return y
}

// run compiles mod on the built-in interpreter and runs it on args.
func run(mod *stablehlo.Module, args ...*interpreter.Tensor) (*interpreter.Tensor, error) {
	vals := make([]interpreter.Value, len(args))
	for i, a := range args {
		vals[i] = a
	}
	out, err := interpreter.RunModule(context.Background(), mod, "main", vals...)
	if err != nil {
		return nil, err
	}
	return out[0].(*interpreter.Tensor), nil
}

func main() {
	s := Shape{Len: 64, Chans: 16, States: 8, Block: 8}
	mod, err := buildScan(s, pallas.Interpret)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	in := inputs(1, s)
	got, err := run(mod, in...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	want := goScan(s, in)
	worst := 0.0
	for i, g := range got.Data.([]float32) {
		worst = math.Max(worst, math.Abs(float64(g)-want[i]))
	}
	y := got.Data.([]float32)
	fmt.Printf("selective scan, %d steps of %d channels with %d states: y[last, :3] = [%.4f %.4f %.4f]\n",
		s.Len, s.Chans, s.States, y[(s.Len-1)*s.Chans], y[(s.Len-1)*s.Chans+1], y[(s.Len-1)*s.Chans+2])
	fmt.Printf("the step-by-step recurrence's within 1e-5: %v\n", worst < 1e-5)
}
