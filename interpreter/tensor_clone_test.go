package interpreter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func TestNewFloatTensor(t *testing.T) {
	// 1 + 2^-8 is halfway between two bf16 values: to even, 1.
	bf, err := NewFloatTensor(xla.BFloat16, []float32{1 + 1.0/256, 3.14159, -2}, 3)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 3.140625, -2}, bf.Data)
	assert.Equal(t, xla.MakeShape(xla.BFloat16, 3), bf.Shape)
	f64, err := NewFloatTensor(xla.Float64, []float32{0.1, 2}, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, []float64{float64(float32(0.1)), 2}, f64.Data)
	f32, err := NewFloatTensor(xla.Float32, []float32{0.1})
	require.NoError(t, err)
	assert.Equal(t, []float32{0.1}, f32.Data, "a scalar")

	_, err = NewFloatTensor(xla.Int32, []float32{1}, 1)
	assert.EqualError(t, err, "interpreter: NewFloatTensor: i32 is not a float type")
	_, err = NewFloatTensor(xla.Float32, []float32{1, 2}, 3)
	assert.EqualError(t, err, "interpreter: NewFloatTensor: tensor<3xf32> has 3 elements, data 2")
}

func TestNewTensorOneElement(t *testing.T) {
	for _, s := range []xla.Shape{xla.MakeShape(xla.Int32), xla.MakeShape(xla.Float32, 1), xla.MakeShape(xla.Bool, 1, 1)} {
		x := NewTensor(s)
		assert.Equal(t, s, x.Shape)
		assert.Equal(t, 1, x.Len(), "%v", s)
		y := NewTensor(s)
		switch d := x.Data.(type) {
		case []int32:
			d[0] = 7
			assert.Equal(t, int32(0), y.Data.([]int32)[0], "tensors do not share their element")
		case []float32:
			d[0] = 7
			assert.Equal(t, float32(0), y.Data.([]float32)[0])
		case []bool:
			d[0] = true
			assert.False(t, y.Data.([]bool)[0])
		}
	}
	// The scalars of index arithmetic: the tensor and its element in one
	// allocation, and the slice header boxed into Data.
	scalar := xla.MakeShape(xla.Int32)
	assert.Equal(t, 2.0, testing.AllocsPerRun(100, func() { NewTensor(scalar) }))
}
