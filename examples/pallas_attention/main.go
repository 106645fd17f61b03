// Command pallas_attention is a flash-attention forward kernel: one
// program per (head, block of queries) walks its head's keys and values
// block by block, keeping the softmax's running maximum, its running sum
// and the weighted values in f32 (the online softmax), so the full
// scores matrix is never formed. Causal attention skips the blocks above
// the diagonal. The same kernel runs in interpret mode (here, on the
// built-in interpreter) and as a Triton kernel on a GPU.
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

// makeAttentionKernel templates the kernel on the key block size bk, the
// causal mask and the scores' scale (Go values resolved at trace time).
// Its refs: q (bq, d) of this program's queries, k and v (seq, d) of its
// head, o (bq, d).
func makeAttentionKernel(bk int64, causal bool, scale float64) pallas.KernelFunc {
	return func(k *pallas.Kernel, refs []*pallas.Ref) {
		q, kr, vr, o := refs[0], refs[1], refs[2], refs[3]
		bq, d, seq := q.Shape()[0], q.Shape()[1], kr.Shape()[0]
		qb := q.Load()
		qi := k.ProgramID(1) // the query block
		var hi any = seq / bk
		if causal {
			// Key blocks up to the one holding this block's last query.
			hi = qi.Add(1).Mul(bq).Add(bk - 1).Div(bk)
		}
		init := []*pallas.Value{
			k.Full(xla.Float32, math.Inf(-1), bq), // running maximum of each row's scores
			k.Zeros(xla.Float32, bq),              // running sum of exp(score - maximum)
			k.Zeros(xla.Float32, bq, d),           // running sum of the weighted values
		}
		out := k.ForLoop(0, hi, init, func(j *pallas.Value, c []*pallas.Value) []*pallas.Value {
			keys := kr.Load(pallas.DS(j.Mul(bk), bk), pallas.All)
			vals := vr.Load(pallas.DS(j.Mul(bk), bk), pallas.All)
			s := pallas.DotTransposed(qb, keys, false, true, xla.Float32).Mul(scale) // (bq, bk)
			if causal {
				row := k.Iota(xla.Int32, 0, bq, bk).Add(qi.Mul(bq))
				col := k.Iota(xla.Int32, 1, bq, bk).Add(j.Mul(bk))
				s = pallas.Where(row.Ge(col), s, math.Inf(-1))
			}
			m := c[0].Max(s.ReduceMax(1))
			p := s.Sub(m.ExpandDims(1)).Exp()
			alpha := c[0].Sub(m).Exp() // rescales what was summed under the old maximum
			l := c[1].Mul(alpha).Add(p.Sum(1))
			acc := c[2].Mul(alpha.ExpandDims(1)).Add(pallas.Dot(p.Astype(vr.DType()), vals, xla.Float32))
			return []*pallas.Value{m, l, acc}
		})
		o.Store(out[2].Div(out[1].ExpandDims(1)).Astype(o.DType()))
	}
}

// Shape is an attention problem: heads (batch × heads folded), the
// sequence length, the head dim and the blocks of queries and keys.
type Shape struct {
	Heads, Seq, Dim int64
	BQ, BK          int64
	Causal          bool
}

// scale is 1/sqrt(dim), the usual scaling of the scores.
func (s Shape) scale() float64 { return 1 / math.Sqrt(float64(s.Dim)) }

// buildAttention emits main(q, k, v dt[heads, seq, dim]) -> dt[heads,
// seq, dim] as one pallas call over a (heads, seq/bq) grid, lowered for
// backend.
func buildAttention(s Shape, dt xla.DType, backend pallas.Backend) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("pallas_attention")
	t := stablehlo.Tensor(dt, s.Heads, s.Seq, s.Dim)
	fb := b.NewFunction("main", t, t, t)
	qMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], g[1], 0} }
	headMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0, 0} }
	queries := &pallas.BlockSpec{BlockShape: []int64{pallas.Squeezed, s.BQ, s.Dim}, IndexMap: qMap}
	head := &pallas.BlockSpec{BlockShape: []int64{pallas.Squeezed, s.Seq, s.Dim}, IndexMap: headMap}
	spec := pallas.CallSpec{
		Name:      "flash_attention",
		Backend:   backend,
		OutShapes: []xla.Shape{xla.MakeShape(dt, s.Heads, s.Seq, s.Dim)},
		Grid:      []int64{s.Heads, s.Seq / s.BQ},
		InSpecs:   []*pallas.BlockSpec{queries, head, head},
		OutSpecs:  []*pallas.BlockSpec{queries},
	}
	fb.Return(pallas.Call(fb, makeAttentionKernel(s.BK, s.Causal, s.scale()), spec, fb.Arg(0), fb.Arg(1), fb.Arg(2))...)
	return b.Build()
}

// buildDenseAttention emits the same function as plain StableHLO ops,
// what a program without the kernel runs: the (heads, seq, seq) scores in
// f32, masked, their softmax, times v.
func buildDenseAttention(s Shape, dt xla.DType) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("dense_attention")
	t := stablehlo.Tensor(dt, s.Heads, s.Seq, s.Dim)
	fb := b.NewFunction("main", t, t, t)
	f32 := stablehlo.DotConfig{ResultDType: xla.Float32}
	sc := fb.DotGeneralWith(fb.Arg(0), fb.Arg(1), stablehlo.DotDimensionNumbers{
		LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0}, LhsContractingDims: []int64{2}, RhsContractingDims: []int64{2}}, f32)
	scores := stablehlo.Tensor(xla.Float32, s.Heads, s.Seq, s.Seq)
	sc = fb.Multiply(sc, fb.SplatOf(xla.Float32, s.scale(), s.Heads, s.Seq, s.Seq))
	if s.Causal {
		rows := stablehlo.Tensor(xla.Int32, s.Heads, s.Seq, s.Seq)
		keep := fb.Compare(fb.Iota(rows, 1), fb.Iota(rows, 2), stablehlo.CompareGE, stablehlo.CompareAuto)
		sc = fb.Select(keep, sc, fb.SplatOf(xla.Float32, math.Inf(-1), s.Heads, s.Seq, s.Seq))
	}
	spread := func(x *stablehlo.Value) *stablehlo.Value { // (heads, seq) over the keys' dim
		return fb.BroadcastInDim(x, scores.Dims, []int64{0, 1})
	}
	p := fb.Exponential(fb.Subtract(sc, spread(fb.ReduceMax(sc, 2))))
	p = fb.Divide(p, spread(fb.ReduceSum(p, 2)))
	out := fb.DotGeneralWith(fb.Convert(p, dt), fb.Arg(2), stablehlo.DotDimensionNumbers{
		LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0}, LhsContractingDims: []int64{2}, RhsContractingDims: []int64{1}}, f32)
	fb.Return(fb.Convert(out, dt))
	return b.Build()
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

// randomQKV returns q, k and v of s, uniform in [-1, 1), rounded to dt.
func randomQKV(seed uint64, s Shape, dt xla.DType) []*interpreter.Tensor {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]*interpreter.Tensor, 3)
	for i := range out {
		out[i] = interpreter.NewTensor(xla.MakeShape(dt, s.Heads, s.Seq, s.Dim))
		d := out[i].Data.([]float32)
		for j := range d {
			d[j] = r.Float32()*2 - 1
		}
		interpreter.RoundNarrowSlice(dt, d)
	}
	return out
}

// kernelAndDense runs the kernel (in interpret mode) and the dense
// program on the same random inputs of s in dt, on the built-in
// interpreter.
func kernelAndDense(s Shape, dt xla.DType, seed uint64) (got, want []float32, err error) {
	kernel, err := buildAttention(s, dt, pallas.Interpret)
	if err != nil {
		return nil, nil, err
	}
	dense, err := buildDenseAttention(s, dt)
	if err != nil {
		return nil, nil, err
	}
	qkv := randomQKV(seed, s, dt)
	g, err := run(kernel, qkv...)
	if err != nil {
		return nil, nil, err
	}
	w, err := run(dense, qkv...)
	if err != nil {
		return nil, nil, err
	}
	return g.Data.([]float32), w.Data.([]float32), nil
}

func main() {
	s := Shape{Heads: 2, Seq: 64, Dim: 16, BQ: 16, BK: 16, Causal: true}
	got, want, err := kernelAndDense(s, xla.Float32, 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
	}
	fmt.Printf("causal attention, %d heads of %dx%d, blocks %dx%d: out[0, 0, :3] = [%.4f %.4f %.4f]\n",
		s.Heads, s.Seq, s.Dim, s.BQ, s.BK, got[0], got[1], got[2])
	fmt.Printf("the dense program's within 1e-5: %v\n", worst < 1e-5)
}
