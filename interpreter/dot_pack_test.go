package interpreter

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
)

// Eight steps multiply x by windows of y (columns 0..255 and 256..511 in
// turn, each 1024 rows of a 512-wide y: packed windows, kept from their
// first product on), and by the same windows of y2 = 2y (computed in the
// run, so never kept), summing all.
const packedWindowLoop = `func.func @main(%x: tensor<8x1024xf32>, %y: tensor<1024x512xf32>) -> tensor<8x256xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<8x256xf32>
  %y2 = stablehlo.add %y, %y : tensor<1024x512xf32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %z) : tensor<i32>, tensor<8x256xf32>
    cond {
      %n = stablehlo.constant dense<8> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %two = stablehlo.constant dense<2> : tensor<i32>
      %w = stablehlo.constant dense<256> : tensor<i32>
      %h = stablehlo.remainder %i, %two : tensor<i32>
      %col = stablehlo.multiply %h, %w : tensor<i32>
      %win = stablehlo.dynamic_slice %y, %c0, %col, sizes = [1024, 256] : (tensor<1024x512xf32>, tensor<i32>, tensor<i32>) -> tensor<1024x256xf32>
      %d = stablehlo.dot_general %x, %win, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
      %win2 = stablehlo.dynamic_slice %y2, %c0, %col, sizes = [1024, 256] : (tensor<1024x512xf32>, tensor<i32>, tensor<i32>) -> tensor<1024x256xf32>
      %d2 = stablehlo.dot_general %x, %win2, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
      %s = stablehlo.add %d, %d2 : tensor<8x256xf32>
      %acc2 = stablehlo.add %acc, %s : tensor<8x256xf32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %acc2 : tensor<i32>, tensor<8x256xf32>
    }
  return %r#1 : tensor<8x256xf32>
}`

// compileWindowLoop compiles a variant of packedWindowLoop and draws its
// x (8×1024) and y (1024×512) from small integers: every sum of the
// products is exact whatever the order.
func compileWindowLoop(t *testing.T, src string, seed uint64) (p *Program, xv, yv []float32) {
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err = Compile(m, "")
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(seed, 2))
	xv, yv = make([]float32, 8*1024), make([]float32, 1024*512)
	for i := range xv {
		xv[i] = float32(r.IntN(5) - 2)
	}
	for i := range yv {
		yv[i] = float32(r.IntN(5) - 2)
	}
	return p, xv, yv
}

func TestPackedWindowsOfArgumentsAreReused(t *testing.T) {
	p, xv, yv := compileWindowLoop(t, packedWindowLoop, 1)
	x := &Exec{Ctx: context.Background(), Program: p}
	out, err := x.Call(p.Main, []Value{f32Tensor(xv, 8, 1024), f32Tensor(yv, 1024, 512)})
	require.NoError(t, err)
	want := make([]float32, 8*256)
	for i := 0; i < 8; i++ {
		for j := 0; j < 256; j++ {
			var s float32
			for q := 0; q < 1024; q++ {
				s += xv[i*1024+q] * (yv[q*512+j] + yv[q*512+256+j])
			}
			want[i*256+j] = 4 * 3 * s // 4 steps per window, y + 2y
		}
	}
	assert.Equal(t, want, out[0].(*Tensor).Data)
	// The two windows of the argument y were packed once each for their
	// eight products; those of y2 never kept. The run gave them back.
	assert.Equal(t, 2, x.packs.made)
	assert.Empty(t, x.packs.m)
	assert.Zero(t, x.packs.bytes)
}

// Windows that together take more than the run's arguments: the cache
// starts over when the next would pass that limit, giving the old windows'
// memory back (the next packing may reuse it), and the results stay right.
func TestPackedWindowsOverTheLimit(t *testing.T) {
	// Four overlapping windows, columns 0, 64, 128 and 192 on: 1 MiB each
	// packed, against 2.03 MiB of arguments.
	src := strings.NewReplacer(
		"%two = stablehlo.constant dense<2>", "%two = stablehlo.constant dense<4>",
		"%w = stablehlo.constant dense<256>", "%w = stablehlo.constant dense<64>",
	).Replace(packedWindowLoop)
	require.NotEqual(t, packedWindowLoop, src)
	p, xv, yv := compileWindowLoop(t, src, 3)
	for run := 0; run < 2; run++ { // the second run packs into freed memory
		x := &Exec{Ctx: context.Background(), Program: p}
		out, err := x.Call(p.Main, []Value{f32Tensor(xv, 8, 1024), f32Tensor(yv, 1024, 512)})
		require.NoError(t, err)
		want := make([]float32, 8*256)
		for step := 0; step < 8; step++ {
			col := (step % 4) * 64
			for i := 0; i < 8; i++ {
				for j := 0; j < 256; j++ {
					var s float32
					for q := 0; q < 1024; q++ {
						s += xv[i*1024+q] * yv[q*512+col+j]
					}
					want[i*256+j] += 3 * s
				}
			}
		}
		assert.Equal(t, want, out[0].(*Tensor).Data)
		// Two windows fit under the limit: every step packs its window.
		assert.Equal(t, 8, x.packs.made)
		assert.Empty(t, x.packs.m)
	}
}
