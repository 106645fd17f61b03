package interpreter

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halo-ml/halo/xla"
)

func TestTensorCloneIsDeep(t *testing.T) {
	for _, dt := range []xla.DType{xla.Float32, xla.Int8, xla.Bool, xla.Complex128, xla.BFloat16, xla.Uint64} {
		x := NewTensor(xla.MakeShape(dt, 2, 3))
		y := x.Clone()
		assert.Equal(t, x.Shape, y.Shape, "%v", dt)
		assert.Equal(t, x.Data, y.Data, "%v", dt)
		p, _ := storagePtr(x)
		q, _ := storagePtr(y)
		assert.NotEqual(t, p, q, "%v: the clone has its own storage", dt)
	}
	a := f32Tensor([]float32{1, 2, 3, 4}, 2, 2)
	b := a.Clone()
	a.Data.([]float32)[0] = 9
	a.Shape.Dims[0] = 4
	assert.Equal(t, []float32{1, 2, 3, 4}, b.Data)
	assert.Equal(t, []int64{2, 2}, b.Shape.Dims)

	// Storage shorter than the shape says: the clone has the shape's
	// length, zero past what there was.
	short := &Tensor{Shape: xla.MakeShape(xla.Float32, 3), Data: []float32{5}}
	assert.Equal(t, []float32{5, 0, 0}, short.Clone().Data)
	empty := NewTensor(xla.MakeShape(xla.Float32, 0, 4))
	assert.NotNil(t, empty.Clone().Data)
}
