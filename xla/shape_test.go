package xla

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShapeValidate(t *testing.T) {
	assert.NoError(t, MakeShape(Float32, 2, 3).Validate())
	assert.ErrorContains(t, MakeShape(Float32, 2, -1).Validate(), "negative dimension -1 at axis 1")
	assert.ErrorContains(t, MakeShape(Float32, 1<<62, 4).Validate(), "more than 2^63 bytes")
	// A shape without elements has no bytes, whatever the order of its
	// dimensions.
	assert.NoError(t, MakeShape(Float32, 0, 1<<62).Validate())
	assert.NoError(t, MakeShape(Float32, 1<<62, 0).Validate())
	assert.ErrorContains(t, MakeShape(Float32, 1<<62, 0, -2).Validate(), "negative dimension")
	assert.Error(t, Shape{DType: DType(200)}.Validate())
}

func TestShapeStridedBytes(t *testing.T) {
	s := MakeShape(Float32, 2, 3)
	n, err := s.StridedBytes([]int64{12, 4}) // row-major
	require.NoError(t, err)
	assert.Equal(t, int64(24), n)
	n, err = s.StridedBytes([]int64{4, 8}) // column-major
	require.NoError(t, err)
	assert.Equal(t, int64(24), n)
	n, err = s.StridedBytes([]int64{0, 4}) // rows broadcast from one
	require.NoError(t, err)
	assert.Equal(t, int64(12), n)
	n, err = MakeShape(Float32, 1, 3).StridedBytes([]int64{-100, 4}) // a dimension of one ignores its stride
	require.NoError(t, err)
	assert.Equal(t, int64(12), n)
	n, err = MakeShape(Float32, 0, 3).StridedBytes([]int64{1 << 62, 4})
	require.NoError(t, err)
	assert.Zero(t, n)
	_, err = s.StridedBytes([]int64{4})
	assert.ErrorContains(t, err, "xla: 1 byte strides for rank-2 shape")
	_, err = s.StridedBytes([]int64{-12, 4})
	assert.ErrorContains(t, err, "xla: negative byte stride -12 for dimension 0")
	_, err = MakeShape(Float32, 3, 2).StridedBytes([]int64{1 << 62, 4})
	assert.ErrorContains(t, err, "past byte 2^63")
	// An invalid shape is named as such (it read "past byte 2^63").
	_, err = Shape{DType: Float32, Dims: []int64{-2, 3}}.StridedBytes([]int64{12, 4})
	assert.ErrorContains(t, err, "negative dimension -2 at axis 0")
}
