package pallas

import (
	"math"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// attentionCase is examples/pallas_attention's flash-attention kernel (a
// ForLoop over key blocks carrying the online softmax's maximum, sum and
// weighted values; DotTransposed, ReduceMax, Exp, Sum, Dot; the causal
// mask from iotas and a loop bound from the program id), here so that its
// Triton form runs on the TTIR evaluator against interpret mode (the
// example's tests run it in interpret mode and through mlir-opt only).
func attentionCase(causal bool) tritonCase {
	const heads, seq, dim, bq, bk = 2, 32, 16, 16, 8
	scale := 1 / math.Sqrt(dim)
	kernel := func(k *Kernel, refs []*Ref) {
		q, kr, vr, o := refs[0], refs[1], refs[2], refs[3]
		qb, qi := q.Load(), k.ProgramID(1)
		var hi any = int64(seq / bk)
		if causal {
			hi = qi.Add(1).Mul(bq).Add(bk - 1).Div(bk)
		}
		init := []*Value{k.Full(xla.Float32, math.Inf(-1), bq), k.Zeros(xla.Float32, bq), k.Zeros(xla.Float32, bq, dim)}
		out := k.ForLoop(0, hi, init, func(j *Value, c []*Value) []*Value {
			keys := kr.Load(DS(j.Mul(bk), bk), All)
			vals := vr.Load(DS(j.Mul(bk), bk), All)
			s := DotTransposed(qb, keys, false, true, xla.Float32).Mul(scale)
			if causal {
				row := k.Iota(xla.Int32, 0, bq, bk).Add(qi.Mul(bq))
				col := k.Iota(xla.Int32, 1, bq, bk).Add(j.Mul(bk))
				s = Where(row.Ge(col), s, math.Inf(-1))
			}
			m := c[0].Max(s.ReduceMax(1))
			p := s.Sub(m.ExpandDims(1)).Exp()
			alpha := c[0].Sub(m).Exp()
			return []*Value{m, c[1].Mul(alpha).Add(p.Sum(1)),
				c[2].Mul(alpha.ExpandDims(1)).Add(Dot(p.Astype(vr.DType()), vals, xla.Float32))}
		})
		o.Store(out[2].Div(out[1].ExpandDims(1)).Astype(o.DType()))
	}
	qMap := blockMap(func(g []*Value) []any { return []any{g[0], g[1], 0} })
	headMap := blockMap(func(g []*Value) []any { return []any{g[0], 0, 0} })
	queries := &BlockSpec{BlockShape: []int64{Squeezed, bq, dim}, IndexMap: qMap}
	head := &BlockSpec{BlockShape: []int64{Squeezed, seq, dim}, IndexMap: headMap}
	name := "attention"
	if causal {
		name = "attention_causal"
	}
	arg := func(seed int) *interpreter.Tensor {
		return fTensor([]int64{heads, seq, dim}, func(i int) float64 { return math.Sin(float64(i * seed)) })
	}
	return tritonCase{name: name, kernel: kernel, spec: CallSpec{Name: name,
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, heads, seq, dim)}, Grid: []int64{heads, seq / bq},
		InSpecs: []*BlockSpec{queries, head, head}, OutSpecs: []*BlockSpec{queries}},
		args: []*interpreter.Tensor{arg(3), arg(7), arg(11)}}
}
