package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAddMatchesDense(t *testing.T) {
	cases := []struct{ x, y []int32 }{
		{[]int32{0, 1, 2, 3, 4, 5, 6, 7}, []int32{8, 9, 10, 11, 12, 13, 14, 15}},
		{[]int32{-5, 7, 1 << 20, 3, 0, 0, 9, -9}, []int32{5, -7, 1, 2, 3, 4, 5, 6}},
	}
	for _, c := range cases {
		got, err := add(c.x, c.y)
		require.NoError(t, err)
		want := make([]int32, len(c.x))
		for i := range want {
			want[i] = c.x[i] + c.y[i]
		}
		require.Equal(t, want, got)
	}
}
