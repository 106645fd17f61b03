package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatmulMatchesDense(t *testing.T) {
	gelu := func(v float64) float64 {
		return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
	}
	cases := []struct {
		name                 string
		m, kk, n, bm, bn, bk int64
		act                  Activation
		ref                  func(float64) float64
	}{
		{"gelu 4x4 grid", 32, 16, 64, 8, 16, 4, Gelu, gelu},
		{"relu one K block", 16, 8, 8, 8, 4, 8, Relu, func(v float64) float64 { return math.Max(v, 0) }},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := make([]float32, c.m*c.kk)
			y := make([]float32, c.kk*c.n)
			for i := range x {
				x[i] = r.Float32()*2 - 1
			}
			for i := range y {
				y[i] = r.Float32()*2 - 1
			}
			got, err := matmul(x, y, c.m, c.kk, c.n, c.bm, c.bn, c.bk, c.act)
			require.NoError(t, err)
			for i := int64(0); i < c.m; i++ {
				for j := int64(0); j < c.n; j++ {
					var s float64
					for l := int64(0); l < c.kk; l++ {
						s += float64(x[i*c.kk+l]) * float64(y[l*c.n+j])
					}
					require.InDelta(t, c.ref(s), got[i*c.n+j], 1e-4, "[%d,%d]", i, j)
				}
			}
		})
	}
}
