package interpreter

import (
	"math"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// batch_norm_inference, batch_norm_training and batch_norm_grad, computed as
// the spec's decompositions into reduce/broadcast/elementwise ops: every
// elementwise step is rounded to the element type (each is exact in float64
// and rounded once, which is the IEEE result of the element type's op), and
// the sums over all but the feature dimension run in ascending index order.

func init() {
	shpRegister("stablehlo.batch_norm_inference", shpBatchNormInference)
	shpRegister("stablehlo.batch_norm_training", shpBatchNormTraining)
	shpRegister("stablehlo.batch_norm_grad", shpBatchNormGrad)
}

// shpBN is the layout of a batch norm operand: outer × features × inner.
type shpBN struct {
	dt               xla.DType
	outer, nf, inner int
	rnd              func(float64) float64
	eps, perFeature  float64 // epsilon and elements per feature, in the element type
	operandShape     xla.Shape
	featureShape     xla.Shape
}

func shpNewBN(op *stablehlo.Op, operand *Tensor) (*shpBN, error) {
	dt := operand.Shape.DType
	if !dt.IsFloat() {
		return nil, shpErrf("operand must have a floating-point type, got %v", operand.Shape)
	}
	fi, ok, err := shpAttrInt(op, "feature_index")
	if err != nil {
		return nil, err
	}
	r := operand.Shape.Rank()
	if !ok || fi < 0 || fi >= int64(r) {
		return nil, shpErrf("feature_index %d is out of range for rank %d", fi, r)
	}
	eps := 0.0
	switch a := op.Attr("epsilon").(type) {
	case stablehlo.FloatAttr:
		eps = a.Value
	case nil:
	default:
		return nil, shpErrf("epsilon must be a float, got %T", a)
	}
	b := &shpBN{dt: dt, outer: 1, inner: 1, operandShape: operand.Shape}
	for d, n := range operand.Shape.Dims {
		switch {
		case d < int(fi):
			b.outer *= int(n)
		case d > int(fi):
			b.inner *= int(n)
		}
	}
	b.nf = int(operand.Shape.Dims[fi])
	b.featureShape = xla.MakeShape(dt, operand.Shape.Dims[fi])
	if dt == xla.Float64 {
		b.rnd = func(v float64) float64 { return v }
	} else {
		b.rnd = func(v float64) float64 { return float64(RoundNarrow(dt, float32(v))) }
	}
	// epsilon is an f32 attribute turned into a constant of the element type.
	b.eps = b.rnd(float64(float32(eps)))
	b.perFeature = b.rnd(float64(b.outer * b.inner))
	return b, nil
}

// feature checks a 1-D feature operand and returns its values.
func (b *shpBN) feature(t *Tensor, what string) ([]float64, error) {
	if !t.Shape.Equal(b.featureShape) {
		return nil, shpErrf("%s is %v, want %v", what, t.Shape, b.featureShape)
	}
	return shpFloats(t), nil
}

// shpFloats returns a float tensor's elements as float64.
func shpFloats(t *Tensor) []float64 {
	out := make([]float64, t.Len())
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range d {
			out[i] = float64(v)
		}
	case []float64:
		copy(out, d)
	}
	return out
}

// tensor stores float64 values (already rounded) in a new tensor.
func (b *shpBN) tensor(shape xla.Shape, v []float64) *Tensor {
	t := NewTensor(shape)
	switch d := t.Data.(type) {
	case []float32:
		for i := range d {
			d[i] = float32(v[i])
		}
	case []float64:
		copy(d, v)
	}
	return t
}

// each calls f(feature, offset) for every element, features in the order of
// their elements' ascending indices.
func (b *shpBN) each(f func(c, i int)) {
	for o := 0; o < b.outer; o++ {
		for c := 0; c < b.nf; c++ {
			base := (o*b.nf + c) * b.inner
			for k := 0; k < b.inner; k++ {
				f(c, base+k)
			}
		}
	}
}

// sum is reduce(add) over all dimensions but the feature one, of g(c, i).
func (b *shpBN) sum(g func(c, i int) float64) []float64 {
	s := make([]float64, b.nf)
	// The reduce visits each feature's elements in ascending index order:
	// outer index first, then inner.
	for c := 0; c < b.nf; c++ {
		acc := 0.0
		for o := 0; o < b.outer; o++ {
			base := (o*b.nf + c) * b.inner
			for k := 0; k < b.inner; k++ {
				acc = b.rnd(acc + g(c, base+k))
			}
		}
		s[c] = acc
	}
	return s
}

func (b *shpBN) checkResult(op *stablehlo.Op, i int, sh xla.Shape) error {
	_, err := shpCheckShape(op, i, sh.DType, sh.Dims)
	return err
}

// inference computes scale * ((x - mean) / sqrt(var + eps)) + offset.
func (b *shpBN) inference(x, scale, offset, mean, variance []float64) []float64 {
	out := make([]float64, len(x))
	stddev := make([]float64, b.nf)
	for c := range stddev {
		stddev[c] = b.rnd(math.Sqrt(b.rnd(variance[c] + b.eps)))
	}
	b.each(func(c, i int) {
		n := b.rnd(b.rnd(x[i]-mean[c]) / stddev[c])
		out[i] = b.rnd(b.rnd(scale[c]*n) + offset[c])
	})
	return out
}

func shpBatchNormInference(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 5 {
		return nil, shpErrf("batch_norm_inference takes 5 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	b, err := shpNewBN(op, ts[0])
	if err != nil {
		return nil, err
	}
	var f [4][]float64
	for i, what := range []string{"scale", "offset", "mean", "variance"} {
		if f[i], err = b.feature(ts[1+i], what); err != nil {
			return nil, err
		}
	}
	if err := b.checkResult(op, 0, b.operandShape); err != nil {
		return nil, err
	}
	out := b.inference(shpFloats(ts[0]), f[0], f[1], f[2], f[3])
	return []Value{b.tensor(b.operandShape, out)}, nil
}

func shpBatchNormTraining(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 3 {
		return nil, shpErrf("batch_norm_training takes 3 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	b, err := shpNewBN(op, ts[0])
	if err != nil {
		return nil, err
	}
	scale, err := b.feature(ts[1], "scale")
	if err != nil {
		return nil, err
	}
	offset, err := b.feature(ts[2], "offset")
	if err != nil {
		return nil, err
	}
	for i, sh := range []xla.Shape{b.operandShape, b.featureShape, b.featureShape} {
		if err := b.checkResult(op, i, sh); err != nil {
			return nil, err
		}
	}
	x := shpFloats(ts[0])
	mean := b.sum(func(c, i int) float64 { return x[i] })
	for c := range mean {
		mean[c] = b.rnd(mean[c] / b.perFeature)
	}
	variance := b.sum(func(c, i int) float64 {
		d := b.rnd(x[i] - mean[c])
		return b.rnd(d * d)
	})
	for c := range variance {
		variance[c] = b.rnd(variance[c] / b.perFeature)
	}
	out := b.inference(x, scale, offset, mean, variance)
	return []Value{b.tensor(b.operandShape, out), b.tensor(b.featureShape, mean), b.tensor(b.featureShape, variance)}, nil
}

func shpBatchNormGrad(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 5 {
		return nil, shpErrf("batch_norm_grad takes 5 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	b, err := shpNewBN(op, ts[0])
	if err != nil {
		return nil, err
	}
	var f [3][]float64
	for i, what := range []string{"scale", "mean", "variance"} {
		if f[i], err = b.feature(ts[1+i], what); err != nil {
			return nil, err
		}
	}
	scale, mean, variance := f[0], f[1], f[2]
	if !ts[4].Shape.Equal(b.operandShape) {
		return nil, shpErrf("grad_output is %v, want %v", ts[4].Shape, b.operandShape)
	}
	for i, sh := range []xla.Shape{b.operandShape, b.featureShape, b.featureShape} {
		if err := b.checkResult(op, i, sh); err != nil {
			return nil, err
		}
	}
	x, gy := shpFloats(ts[0]), shpFloats(ts[4])
	r := b.rnd
	varEps := make([]float64, b.nf)
	stddev := make([]float64, b.nf)
	for c := range varEps {
		varEps[c] = r(variance[c] + b.eps)
		stddev[c] = r(math.Sqrt(varEps[c]))
	}
	centered := make([]float64, len(x))
	b.each(func(c, i int) { centered[i] = r(x[i] - mean[c]) })
	sumGy := b.sum(func(c, i int) float64 { return gy[i] })
	sumGyC := b.sum(func(c, i int) float64 { return r(gy[i] * centered[i]) })
	gradScale := b.sum(func(c, i int) float64 { return r(gy[i] * r(centered[i]/stddev[c])) })
	gx := make([]float64, len(x))
	b.each(func(c, i int) {
		i1 := r(gy[i] * b.perFeature)
		i5 := r(r(sumGyC[c]*centered[i]) / varEps[c])
		coef := r(r(scale[c]/stddev[c]) / b.perFeature)
		gx[i] = r(coef * r(r(i1-sumGy[c])-i5))
	})
	return []Value{b.tensor(b.operandShape, gx), b.tensor(b.featureShape, gradScale), b.tensor(b.featureShape, sumGy)}, nil
}
