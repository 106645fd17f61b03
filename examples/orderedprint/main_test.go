package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrderedPrint(t *testing.T) {
	for _, tc := range []struct{ n, devices int }{{0, 1}, {5, 1}, {50, 2}, {30, 3}} {
		t.Run(fmt.Sprintf("n=%d,devices=%d", tc.n, tc.devices), func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(&out, tc.n, tc.devices))
			var want []string
			for i := 0; i < tc.n; i++ {
				want = append(want, fmt.Sprintf("hello %d", i), fmt.Sprintf("world %d", i))
			}
			want = append(want, "done")
			assert.Equal(t, want, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"))
		})
	}
	err := run(&bytes.Buffer{}, 1, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "devices >= 1")
}
