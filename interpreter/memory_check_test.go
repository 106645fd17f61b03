package interpreter

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// TestCheckAlloc: CheckAlloc is the check NewTensor makes, as an error
// for a byte count (a host copy of a device buffer, say): the same
// *AllocError AllocTensor returns for the shape, nil where it fits or is
// small, and an overflow for a negative count.
func TestCheckAlloc(t *testing.T) {
	defer func(f func() (int64, bool)) { availableMemory = f }(availableMemory)
	availableMemory = func() (int64, bool) { return 1 << 30, true } // 1 GiB left

	big := xla.MakeShape(xla.Float64, 1<<28) // 2 GiB
	err := CheckAlloc(big, 1<<31)
	var ae *AllocError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, &AllocError{Shape: big, Bytes: 1 << 31, Available: 1 << 30}, ae)
	assert.EqualError(t, err, "tensor<268435456xf64> needs 2.0 GiB, more than the 1.0 GiB of memory available")
	_, terr := AllocTensor(big)
	assert.Equal(t, terr, err, "the error AllocTensor returns for the shape")

	assert.NoError(t, CheckAlloc(big, 512<<20), "fits")
	assert.NoError(t, CheckAlloc(xla.MakeShape(xla.Uint8, 16), 16), "small")
	assert.NoError(t, CheckAlloc(xla.Shape{}, 0))

	err = CheckAlloc(xla.MakeShape(xla.Float32, 4), -1)
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, int64(-1), ae.Bytes)
	assert.EqualError(t, err, "tensor<4xf32> is too large to hold")

	// The shape in the error is the caller's, not shared with it.
	s := xla.MakeShape(xla.Float64, 1<<28)
	require.True(t, errors.As(CheckAlloc(s, 1<<31), &ae))
	s.Dims[0] = 1
	assert.Equal(t, int64(1<<28), ae.Shape.Dims[0])

	// Not a typed nil in an interface: err == nil where it fits.
	assert.True(t, CheckAlloc(big, 1) == nil)
}
