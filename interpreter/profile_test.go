package interpreter

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

const profileLoop = `func.func @main(%x: tensor<i32>, %m: tensor<64x64xf32>) -> (tensor<i32>, tensor<64x64xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %acc = %c0, %y = %m) : tensor<i32>, tensor<i32>, tensor<64x64xf32>
    cond {
      %n = stablehlo.constant dense<100> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %a = stablehlo.add %acc, %x : tensor<i32>
      %b = stablehlo.multiply %a, %x : tensor<i32>
      %y2 = stablehlo.dot_general %y, %m, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %b, %y2 : tensor<i32>, tensor<i32>, tensor<64x64xf32>
    }
  return %r#1, %r#2 : tensor<i32>, tensor<64x64xf32>
}`

func TestProfileCountsAndTimesEachOp(t *testing.T) {
	m, err := stablehlo.Parse([]byte(profileLoop))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	x := NewTensor(xla.MakeShape(xla.Int32))
	x.Data.([]int32)[0] = 1
	mat := NewTensor(xla.MakeShape(xla.Float32, 64, 64))
	for i := range 64 {
		mat.Data.([]float32)[i*64+i] = 1 // the identity: the products stay finite
	}
	args := []Value{x, mat}

	var prof Profile
	start := time.Now()
	_, err = p.Run(WithProfile(context.Background(), &prof), Device{}, args)
	wall := time.Since(start)
	require.NoError(t, err)
	calls := map[string]int64{}
	for _, o := range prof.Ops() {
		calls[o.Op] = o.Calls
		assert.GreaterOrEqual(t, o.Time, time.Duration(0), o.Op)
	}
	assert.Equal(t, map[string]int64{
		"stablehlo.add": 200, "stablehlo.multiply": 100, "stablehlo.dot_general": 100,
		"stablehlo.compare": 101, "stablehlo.while": 1,
	}, calls)
	// Own times are parts of the run that do not overlap: they add up to
	// no more than it took, and the loop's own time leaves out its body's
	// products.
	assert.LessOrEqual(t, prof.Total(), wall)
	ops := prof.Ops()
	var dot, loop time.Duration
	for _, o := range ops {
		switch o.Op {
		case "stablehlo.dot_general":
			dot = o.Time
		case "stablehlo.while":
			loop = o.Time
		}
	}
	assert.Positive(t, dot)
	assert.LessOrEqual(t, loop, wall-dot)
	assert.Contains(t, prof.String(), "stablehlo.dot_general")
	assert.Contains(t, prof.String(), "total")

	// Runs without the context read no clock and add nothing; runs sharing
	// a Profile add up.
	_, err = p.Run(context.Background(), Device{}, args)
	require.NoError(t, err)
	for _, o := range prof.Ops() {
		if o.Op == "stablehlo.multiply" {
			assert.Equal(t, int64(100), o.Calls)
		}
	}
	prof.Reset()
	assert.Empty(t, prof.Ops())
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			_, err := p.Run(WithProfile(context.Background(), &prof), Device{}, args)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for _, o := range prof.Ops() {
		if o.Op == "stablehlo.multiply" {
			assert.Equal(t, int64(300), o.Calls)
		}
	}
	assert.True(t, strings.HasPrefix(prof.String(), "op "))
}
