package main

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/testplugin"
	"github.com/halo-ml/halo/pjrt"
)

// TestPrintReadsBackOnlyWhatItShows: printing an output of a plugin that
// copies raw bytes (the conformance plugin) reads back the elements shown,
// not the whole output: the Go heap does not grow by the output's size,
// as it did when the output was copied to the host to show 16 elements.
func TestPrintReadsBackOnlyWhatItShows(t *testing.T) {
	c, err := pjrt.Open(testplugin.Build(t))
	require.NoError(t, err)
	defer c.Close()
	const n = 4 << 20 // 16 MiB of float32
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	b, err := pjrt.BufferFrom(c, vals, []int64{n}, pjrt.WaitForTransfer(), pjrt.CopyDuringCall())
	require.NoError(t, err)
	vals = nil

	var out bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = printOutputs(context.Background(), &out, "", []*pjrt.Buffer{b})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, "output 0: tensor<4194304xf32> = [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 ...]\n", out.String())
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(n), "bytes allocated printing a 16 MiB output")
}

// TestRunShowsSixteenElements: halo run shows 16 elements, then "..."
// when there are more, also where it copies the whole output (the
// interpreter).
func TestRunShowsSixteenElements(t *testing.T) {
	file := writeMLIR(t, `func.func @main() -> (tensor<16xi32>, tensor<17xi4>, tensor<1000x1000xf32>, tensor<0xf32>) {
  %0 = stablehlo.iota dim = 0 : tensor<16xi32>
  %1 = stablehlo.constant dense<-1> : tensor<17xi4>
  %2 = stablehlo.iota dim = 1 : tensor<1000x1000xf32>
  %3 = stablehlo.constant dense<> : tensor<0xf32>
  return %0, %1, %2, %3 : tensor<16xi32>, tensor<17xi4>, tensor<1000x1000xf32>, tensor<0xf32>
}`)
	code, out, errOut := runCLI("run", "-plugin", "interpreter", file)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `output 0: tensor<16xi32> = [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]
output 1: tensor<17xi4> = [-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 ...]
output 2: tensor<1000x1000xf32> = [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 ...]
output 3: tensor<0xf32> = []
`, out)
}
