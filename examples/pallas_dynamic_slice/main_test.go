package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBlockDynamicSliceMatchesSlice(t *testing.T) {
	const rows, cols = 64, 96
	x := make([]int32, rows*cols)
	for i := range x {
		x[i] = int32(i*7 - 100)
	}
	cases := []struct {
		starts       [2]int32
		size0, size1 int64
	}{
		{[2]int32{16, 32}, 16, 16},
		{[2]int32{0, 0}, 32, 32},
		{[2]int32{48, 64}, 16, 32},
		{[2]int32{8, 88}, 8, 8},
	}
	for _, c := range cases {
		got, err := blockDynamicSlice(x, rows, cols, c.starts, c.size0, c.size1)
		require.NoError(t, err)
		for i := int64(0); i < c.size0; i++ {
			for j := int64(0); j < c.size1; j++ {
				require.Equal(t, x[(int64(c.starts[0])+i)*cols+int64(c.starts[1])+j], got[i*c.size1+j], "starts %v at [%d,%d]", c.starts, i, j)
			}
		}
	}
	_, err := blockDynamicSlice(x, rows, cols, [2]int32{5, 0}, 16, 16)
	require.ErrorContains(t, err, "multiples")
}

func TestBlockIndexOutOfRangeIsReported(t *testing.T) {
	// starts past the array: the prefetched block index is out of range and
	// interpret mode's check fails the run.
	x := make([]int32, 32*32)
	_, err := blockDynamicSlice(x, 32, 32, [2]int32{32, 0}, 16, 16)
	require.ErrorContains(t, err, `kernel "dynamic_slice": grid point (0, 0): index map of input 0`)
	require.ErrorContains(t, err, "block index (2, 0) outside [0, 2) x [0, 2)")
}
