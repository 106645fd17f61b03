package interpreter

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// refEinsum evaluates an einsum over explicit label strings (no "...")
// by brute force over every assignment of values to labels.
func refEinsum(ins []string, out string, ops [][]complex128, dims [][]int64) ([]complex128, []int64) {
	size := map[byte]int64{}
	var labels []byte
	for i, s := range ins {
		for d := 0; d < len(s); d++ {
			if _, ok := size[s[d]]; !ok {
				labels = append(labels, s[d])
			}
			size[s[d]] = dims[i][d]
		}
	}
	outDims := make([]int64, len(out))
	for i := range out {
		outDims[i] = size[out[i]]
	}
	n := int64(1)
	for _, d := range outDims {
		n *= d
	}
	res := make([]complex128, n)
	all := make([]int64, len(labels))
	for i, l := range labels {
		all[i] = size[l]
	}
	idx := make([]int64, len(labels))
	total := int64(1)
	for _, d := range all {
		total *= d
	}
	val := func(l byte) int64 {
		for i, m := range labels {
			if m == l {
				return idx[i]
			}
		}
		panic("label")
	}
	for c := int64(0); c < total; c++ {
		p := complex128(1)
		for i, s := range ins {
			off := int64(0)
			st := Strides(dims[i])
			for d := 0; d < len(s); d++ {
				off += val(s[d]) * st[d]
			}
			p *= ops[i][off]
		}
		o := int64(0)
		st := Strides(outDims)
		for d := 0; d < len(out); d++ {
			o += val(out[d]) * st[d]
		}
		res[o] += p
		NextIndex(idx, all)
	}
	return res, outDims
}

func TestEinsum(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	cases := []struct {
		cfg  string
		ins  []string // labels for the reference
		out  string
		dims [][]int64
		dt   xla.DType
	}{
		{"ij,jk->ik", []string{"ij", "jk"}, "ik", [][]int64{{2, 3}, {3, 4}}, xla.Float32},
		{"ij,jk->ki", []string{"ij", "jk"}, "ki", [][]int64{{2, 3}, {3, 4}}, xla.Int32},
		{"bij,bjk->bik", []string{"bij", "bjk"}, "bik", [][]int64{{2, 2, 3}, {2, 3, 2}}, xla.Float64},
		{"ab,ab->", []string{"ab", "ab"}, "", [][]int64{{3, 4}, {3, 4}}, xla.Int64},
		{"i,j->ij", []string{"i", "j"}, "ij", [][]int64{{3}, {4}}, xla.Complex64},
		{"ij,jk", []string{"ij", "jk"}, "ik", [][]int64{{2, 3}, {3, 4}}, xla.Float32},
		{"ii->i", []string{"ii"}, "i", [][]int64{{4, 4}}, xla.Float32},
		{"ii->", []string{"ii"}, "", [][]int64{{4, 4}}, xla.Int32},
		{"ab->ba", []string{"ab"}, "ba", [][]int64{{2, 5}}, xla.BFloat16},
		{"abc->b", []string{"abc"}, "b", [][]int64{{2, 3, 4}}, xla.Float32},
		{"...ij,...jk->...ik", []string{"xyij", "xyjk"}, "xyik", [][]int64{{2, 2, 2, 3}, {2, 2, 3, 2}}, xla.Float32},
		{"i...,i...->...", []string{"ixy", "ixy"}, "xy", [][]int64{{3, 2, 2}, {3, 2, 2}}, xla.Int32},
	}
	for _, c := range cases {
		t.Run(c.cfg, func(t *testing.T) {
			var ts []*Tensor
			var vals [][]complex128
			var types []string
			for _, d := range c.dims {
				n := int(xla.MakeShape(c.dt, d...).Size())
				tt := laTensor(c.dt, d, laRandInts(rng, n, 3, c.dt.IsComplex()))
				ts = append(ts, tt)
				vals = append(vals, laValues(tt))
				types = append(types, laType(c.dt, d))
			}
			want, outDims := refEinsum(c.ins, c.out, vals, c.dims)
			rt := laType(c.dt, outDims)
			var src string
			if len(ts) == 1 {
				src = fmt.Sprintf(`func.func @main(%%a: %s) -> %s {
  %%0 = "stablehlo.unary_einsum"(%%a) {einsum_config = %q} : (%s) -> %s
  return %%0 : %s
}`, types[0], rt, c.cfg, types[0], rt, rt)
			} else {
				src = fmt.Sprintf(`func.func @main(%%a: %s, %%b: %s) -> %s {
  %%0 = "stablehlo.einsum"(%%a, %%b) {einsum_config = %q} : (%s, %s) -> %s
  return %%0 : %s
}`, types[0], types[1], rt, c.cfg, types[0], types[1], rt, rt)
			}
			args := make([]*Tensor, len(ts))
			copy(args, ts)
			out, err := laRun(t, src, args...)
			require.NoError(t, err)
			assert.Equal(t, laExpected(c.dt, want), laValues(out[0]))
		})
	}
	// Errors name the problem.
	_, err := einsum("ij,jk->ik", []*Tensor{NewTensor(xla.MakeShape(xla.Float32, 2, 3)), NewTensor(xla.MakeShape(xla.Float32, 4, 5))},
		xla.MakeShape(xla.Float32, 2, 5), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has sizes 3 and 4")
	_, err = einsum("ijk,jk->ik", []*Tensor{NewTensor(xla.MakeShape(xla.Float32, 2, 3)), NewTensor(xla.MakeShape(xla.Float32, 3, 5))},
		xla.MakeShape(xla.Float32, 2, 5), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 2")
	_, err = einsum("ij,jk->iz", []*Tensor{NewTensor(xla.MakeShape(xla.Float32, 2, 3)), NewTensor(xla.MakeShape(xla.Float32, 3, 5))},
		xla.MakeShape(xla.Float32, 2, 5), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not an operand label")
}
