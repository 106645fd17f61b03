package interpreter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// convCase describes one convolution: layouts as the MLIR shorthand
// ("b01f", "01io", "b01f"), operand shapes in those layouts, window
// attributes and group counts.
type convCase struct {
	name             string
	in, kernel, out  string
	lhsDims, rhsDims []int64
	strides, lhsDil  []int64
	rhsDil           []int64
	pad              [][2]int64
	reverse          []bool
	fgc, bgc         int64
	inType, outType  xla.DType
	lhsData, rhsData []complex128 // optional operand values (else random)
	wantOut          []complex128 // optional exact expectation
	noWindowAttrs    bool
}

// convDims turns a layout string into dimension numbers; spatial dims are
// digits, batch/feature letters.
func convDims(in, kernel, out string) stablehlo.ConvDimensionNumbers {
	var dn stablehlo.ConvDimensionNumbers
	spatial := func(layout string) []int64 {
		var n int
		for _, r := range layout {
			if r >= '0' && r <= '9' {
				n++
			}
		}
		s := make([]int64, n)
		for i, r := range layout {
			if r >= '0' && r <= '9' {
				s[r-'0'] = int64(i)
			}
		}
		return s
	}
	dn.InputBatchDim, dn.InputFeatureDim = int64(strings.IndexByte(in, 'b')), int64(strings.IndexByte(in, 'f'))
	dn.InputSpatialDims = spatial(in)
	dn.KernelInputFeatureDim, dn.KernelOutputFeature = int64(strings.IndexByte(kernel, 'i')), int64(strings.IndexByte(kernel, 'o'))
	dn.KernelSpatialDims = spatial(kernel)
	dn.OutputBatchDim, dn.OutputFeatureDim = int64(strings.IndexByte(out, 'b')), int64(strings.IndexByte(out, 'f'))
	dn.OutputSpatialDims = spatial(out)
	return dn
}

func (c *convCase) defaults() {
	s := len(c.lhsDims) - 2
	one := func(v []int64) []int64 {
		if v != nil {
			return v
		}
		v = make([]int64, s)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	c.strides, c.lhsDil, c.rhsDil = one(c.strides), one(c.lhsDil), one(c.rhsDil)
	if c.pad == nil {
		c.pad = make([][2]int64, s)
	}
	if c.reverse == nil {
		c.reverse = make([]bool, s)
	}
	if c.fgc == 0 {
		c.fgc = 1
	}
	if c.bgc == 0 {
		c.bgc = 1
	}
	if c.outType == 0 {
		c.outType = c.inType
	}
}

// refConv computes a convolution from the spec's definition: pad and
// dilate the input, slide the dilated (and possibly reversed) window,
// take the dot product over input features and window positions, group by
// feature_group_count / batch_group_count.
func refConv(c convCase, lhs, rhs []complex128) ([]complex128, []int64) {
	dn := convDims(c.in, c.kernel, c.out)
	s := len(c.lhsDims) - 2
	ls, rs := Strides(c.lhsDims), Strides(c.rhsDims)
	nb := c.lhsDims[dn.InputBatchDim]
	o := c.rhsDims[dn.KernelOutputFeature]
	ci := c.rhsDims[dn.KernelInputFeatureDim]
	outDims := make([]int64, s+2)
	outDims[dn.OutputBatchDim] = nb / c.bgc
	outDims[dn.OutputFeatureDim] = o
	paddedIdx := make([][]int64, s)
	for d := 0; d < s; d++ {
		in := c.lhsDims[dn.InputSpatialDims[d]]
		k := c.rhsDims[dn.KernelSpatialDims[d]]
		// The padded, dilated input as a list of source indices (-1: zero).
		var padded []int64
		for i := int64(0); i < c.pad[d][0]; i++ {
			padded = append(padded, -1)
		}
		var dil []int64
		for i := int64(0); i < in; i++ {
			if i > 0 {
				for j := int64(1); j < c.lhsDil[d]; j++ {
					dil = append(dil, -1)
				}
			}
			dil = append(dil, i)
		}
		padded = append(padded, dil...)
		for i := int64(0); i < c.pad[d][1]; i++ {
			padded = append(padded, -1)
		}
		// Negative padding removes elements from the ends.
		if c.pad[d][0] < 0 {
			padded = padded[min(int64(len(padded)), -c.pad[d][0]):]
		}
		if c.pad[d][1] < 0 {
			padded = padded[:max(0, int64(len(padded))+c.pad[d][1])]
		}
		wsize := int64(0)
		if k > 0 {
			wsize = (k-1)*c.rhsDil[d] + 1
		}
		n := int64(0)
		if len(padded) > 0 && wsize <= int64(len(padded)) {
			n = (int64(len(padded))-wsize)/c.strides[d] + 1
		}
		outDims[dn.OutputSpatialDims[d]] = n
		paddedIdx[d] = padded
	}
	size := int64(1)
	for _, d := range outDims {
		size *= d
	}
	out := make([]complex128, size)
	ri := make([]int64, s+2)
	for r := range out {
		b, f := ri[dn.OutputBatchDim], ri[dn.OutputFeatureDim]
		inBatch, featBase := b, int64(0)
		if c.bgc > 1 {
			inBatch = (f/(o/c.bgc))*(nb/c.bgc) + b
		}
		if c.fgc > 1 {
			featBase = (f / (o / c.fgc)) * ci
		}
		var sum complex128
		kdims := make([]int64, s)
		for d := 0; d < s; d++ {
			kdims[d] = c.rhsDims[dn.KernelSpatialDims[d]]
		}
		for cc := int64(0); cc < ci; cc++ {
			kk := make([]int64, s)
			nk := int64(1)
			for _, x := range kdims {
				nk *= x
			}
			for kpos := int64(0); kpos < nk; kpos++ {
				li := make([]int64, s+2)
				li[dn.InputBatchDim] = inBatch
				li[dn.InputFeatureDim] = featBase + cc
				ok := true
				for d := 0; d < s && ok; d++ {
					wk := kk[d]
					if c.reverse[d] {
						wk = kdims[d] - 1 - kk[d]
					}
					// Position in the padded, dilated input.
					q := paddedIdx[d][ri[dn.OutputSpatialDims[d]]*c.strides[d]+wk*c.rhsDil[d]]
					if q < 0 {
						ok = false
						break
					}
					li[dn.InputSpatialDims[d]] = q
				}
				if ok {
					wi := make([]int64, s+2)
					wi[dn.KernelOutputFeature] = f
					wi[dn.KernelInputFeatureDim] = cc
					for d := 0; d < s; d++ {
						wi[dn.KernelSpatialDims[d]] = kk[d]
					}
					sum += lhs[Offset(li, ls)] * rhs[Offset(wi, rs)]
				}
				NextIndex(kk, kdims)
			}
		}
		out[r] = sum
		NextIndex(ri, outDims)
	}
	return out, outDims
}

// convLayout prints a layout string as MLIR's "[b, 0, 1, f]".
func convLayout(layout string) string {
	return "[" + strings.Join(strings.Split(layout, ""), ", ") + "]"
}

func convSrc(c convCase, outDims []int64) string {
	lt, rt, ot := laType(c.inType, c.lhsDims), laType(c.inType, c.rhsDims), laType(c.outType, outDims)
	var w []string
	w = append(w, "stride = "+laInts(c.strides))
	var pads []string
	for _, p := range c.pad {
		pads = append(pads, fmt.Sprintf("[%d, %d]", p[0], p[1]))
	}
	w = append(w, "pad = ["+strings.Join(pads, ", ")+"]")
	w = append(w, "lhs_dilate = "+laInts(c.lhsDil), "rhs_dilate = "+laInts(c.rhsDil))
	var rev []string
	for _, r := range c.reverse {
		rev = append(rev, fmt.Sprint(r))
	}
	w = append(w, "reverse = ["+strings.Join(rev, ", ")+"]")
	window := strings.Join(w, ", ")
	if c.noWindowAttrs {
		window = ""
	}
	groups := fmt.Sprintf(" {batch_group_count = %d : i64, feature_group_count = %d : i64}", c.bgc, c.fgc)
	return fmt.Sprintf(`func.func @main(%%a: %s, %%b: %s) -> %s {
  %%0 = stablehlo.convolution(%%a, %%b) dim_numbers = %s x %s -> %s, window = {%s}%s : (%s, %s) -> %s
  return %%0 : %s
}`, lt, rt, ot, convLayout(c.in), convLayout(c.kernel), convLayout(c.out), window, groups, lt, rt, ot, ot)
}

func TestConvolution(t *testing.T) {
	img := []complex128{1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17}
	ones := func(n int) []complex128 {
		v := make([]complex128, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	cases := []convCase{
		// Known answers: the spec's example and the StableHLO interpreter's
		// convolution tests (padding, batch groups, feature groups).
		{name: "spec-example", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 1}, rhsDims: []int64{3, 3, 1, 1},
			strides: []int64{4, 4}, lhsDil: []int64{2, 2}, inType: xla.Int64,
			lhsData: img, rhsData: ones(9), wantOut: []complex128{10, 26, 46, 62}},
		{name: "known-padding", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 1}, rhsDims: []int64{3, 3, 1, 1},
			strides: []int64{4, 4}, lhsDil: []int64{2, 2}, pad: [][2]int64{{1, 1}, {1, 1}}, inType: xla.Int64,
			lhsData: img, rhsData: ones(9), wantOut: []complex128{1, 5, 10, 14}},
		{name: "known-batch-groups", in: "0b1f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 1}, rhsDims: []int64{1, 2, 1, 4},
			strides: []int64{4, 4}, lhsDil: []int64{2, 2}, bgc: 4, inType: xla.Int64,
			lhsData: img, rhsData: ones(8), wantOut: []complex128{1, 3, 10, 12, 5, 7, 14, 16}},
		{name: "known-feature-groups", in: "b0f1", kernel: "0i1o", out: "b01f", lhsDims: []int64{1, 4, 4, 1}, rhsDims: []int64{1, 2, 1, 4},
			strides: []int64{4, 4}, lhsDil: []int64{2, 2}, fgc: 2, inType: xla.Int64,
			lhsData: img, rhsData: ones(8), wantOut: []complex128{3, 3, 11, 11, 21, 21, 29, 29}},
		{name: "known-i8-to-i32", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 1}, rhsDims: []int64{3, 3, 1, 1},
			strides: []int64{4, 4}, lhsDil: []int64{2, 2}, inType: xla.Int8, outType: xla.Int32,
			lhsData: img, rhsData: []complex128{10, 10, 10, 10, 10, 10, 10, 10, 10}, wantOut: []complex128{100, 260, 460, 620}},
		{name: "known-feature-before-batch", in: "0fb", kernel: "0io", out: "0fb", lhsDims: []int64{2, 1, 1}, rhsDims: []int64{1, 1, 2},
			inType: xla.Float32, lhsData: []complex128{1, 2}, rhsData: []complex128{3, 4}, wantOut: []complex128{3, 4, 6, 8}},
		{name: "nchw-oihw-pad-stride", in: "bf01", kernel: "oi01", out: "bf01", lhsDims: []int64{2, 3, 7, 6}, rhsDims: []int64{4, 3, 3, 2},
			strides: []int64{2, 1}, pad: [][2]int64{{1, 1}, {0, 2}}, inType: xla.Float32},
		{name: "nhwc-hwio-rhs-dilation", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 9, 8, 2}, rhsDims: []int64{3, 2, 2, 3},
			rhsDil: []int64{2, 3}, inType: xla.Float64},
		{name: "scrambled-layouts", in: "0fb1", kernel: "i1o0", out: "1b0f", lhsDims: []int64{6, 3, 2, 5}, rhsDims: []int64{3, 2, 4, 3},
			strides: []int64{1, 2}, pad: [][2]int64{{2, 0}, {1, 1}}, inType: xla.Float32},
		{name: "negative-padding", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 8, 7, 1}, rhsDims: []int64{2, 2, 1, 2},
			pad: [][2]int64{{-1, -2}, {-2, 1}}, inType: xla.Int32},
		{name: "transposed-conv", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{2, 3, 4, 2}, rhsDims: []int64{3, 3, 2, 2},
			lhsDil: []int64{2, 3}, pad: [][2]int64{{2, 2}, {1, 2}}, inType: xla.Float32},
		{name: "everything", in: "bf01", kernel: "oi01", out: "b01f", lhsDims: []int64{2, 2, 9, 7}, rhsDims: []int64{3, 2, 3, 2},
			strides: []int64{2, 3}, lhsDil: []int64{2, 1}, rhsDil: []int64{1, 2}, pad: [][2]int64{{1, -1}, {3, 0}},
			reverse: []bool{true, false}, inType: xla.Float64},
		{name: "window-reversal", in: "b0f", kernel: "0io", out: "b0f", lhsDims: []int64{1, 6, 1}, rhsDims: []int64{3, 1, 1},
			reverse: []bool{true}, inType: xla.Int64},
		{name: "feature-groups", in: "bf01", kernel: "oi01", out: "bf01", lhsDims: []int64{2, 6, 5, 5}, rhsDims: []int64{9, 2, 3, 3},
			fgc: 3, pad: [][2]int64{{1, 1}, {1, 1}}, inType: xla.Float32},
		{name: "depthwise", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 5, 5, 4}, rhsDims: []int64{3, 3, 1, 8},
			fgc: 4, inType: xla.Int32},
		{name: "batch-groups", in: "bf01", kernel: "oi01", out: "bf01", lhsDims: []int64{6, 2, 4, 4}, rhsDims: []int64{6, 2, 2, 2},
			bgc: 3, inType: xla.Float32},
		{name: "batch-groups-scrambled", in: "0b1f", kernel: "01io", out: "b01f", lhsDims: []int64{4, 4, 4, 1}, rhsDims: []int64{1, 2, 1, 4},
			bgc: 4, strides: []int64{4, 4}, lhsDil: []int64{2, 2}, inType: xla.Int64},
		{name: "conv1d", in: "bf0", kernel: "oi0", out: "bf0", lhsDims: []int64{3, 2, 10}, rhsDims: []int64{4, 2, 3},
			strides: []int64{3}, pad: [][2]int64{{2, 1}}, inType: xla.Float32},
		{name: "conv3d", in: "b012f", kernel: "012io", out: "b012f", lhsDims: []int64{1, 4, 5, 3, 2}, rhsDims: []int64{2, 3, 2, 2, 3},
			pad: [][2]int64{{0, 1}, {1, 0}, {1, 1}}, inType: xla.Float32},
		{name: "no-spatial", in: "bf", kernel: "io", out: "bf", lhsDims: []int64{3, 4}, rhsDims: []int64{4, 5}, inType: xla.Float32},
		{name: "i8-to-i32", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 2}, rhsDims: []int64{2, 2, 2, 3},
			inType: xla.Int8, outType: xla.Int32},
		{name: "i8-wraps", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 2}, rhsDims: []int64{2, 2, 2, 3},
			inType: xla.Int8},
		{name: "bf16", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 2}, rhsDims: []int64{2, 2, 2, 3},
			inType: xla.BFloat16},
		{name: "f16-to-f32", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 2}, rhsDims: []int64{2, 2, 2, 3},
			inType: xla.Float16, outType: xla.Float32},
		{name: "complex64", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 3, 2}, rhsDims: []int64{2, 2, 2, 2},
			pad: [][2]int64{{1, 0}, {0, 1}}, inType: xla.Complex64},
		{name: "ui4", in: "b0f", kernel: "0io", out: "b0f", lhsDims: []int64{1, 5, 2}, rhsDims: []int64{2, 2, 2}, inType: xla.Uint4},
		{name: "window-too-big", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 2, 2, 1}, rhsDims: []int64{3, 3, 1, 1}, inType: xla.Float32},
		{name: "empty-batch", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{0, 3, 3, 1}, rhsDims: []int64{2, 2, 1, 1}, inType: xla.Float32},
		{name: "empty-features", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 3, 3, 0}, rhsDims: []int64{2, 2, 0, 2}, inType: xla.Float32},
		{name: "default-window", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 3, 3, 1}, rhsDims: []int64{2, 2, 1, 1},
			inType: xla.Float32, noWindowAttrs: true},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.defaults()
			size := func(d []int64) int { return int(xla.MakeShape(c.inType, d...).Size()) }
			r := 3
			if c.inType == xla.Int8 && c.outType == xla.Int8 {
				r = 100 // products wrap
			}
			gen := func(n int) []complex128 {
				v := laRandInts(rng, n, r, c.inType.IsComplex())
				if c.inType.IsUnsigned() {
					for i := range v {
						v[i] = complex(float64(int(real(v[i]))+r), 0)
					}
				}
				return v
			}
			lhs := laTensor(c.inType, c.lhsDims, gen(size(c.lhsDims)))
			rhs := laTensor(c.inType, c.rhsDims, gen(size(c.rhsDims)))
			if c.lhsData != nil {
				lhs = laTensor(c.inType, c.lhsDims, c.lhsData)
				rhs = laTensor(c.inType, c.rhsDims, c.rhsData)
			}
			want, outDims := refConv(c, laValues(lhs), laValues(rhs))
			if c.wantOut != nil {
				require.Equal(t, c.wantOut, want, "reference disagrees with the known answer")
			}
			out, err := laRun(t, convSrc(c, outDims), lhs, rhs)
			require.NoError(t, err)
			require.Equal(t, xla.MakeShape(c.outType, outDims...), out[0].Shape)
			assert.Equal(t, laExpected(c.outType, want), laValues(out[0]))
		})
	}
}

func TestConvolutionLargeMatchesReference(t *testing.T) {
	// Enough output positions for im2col tiles and cores to be used.
	rng := rand.New(rand.NewPCG(9, 9))
	cases := []convCase{
		{name: "f32", in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{3, 40, 36, 8}, rhsDims: []int64{3, 3, 8, 16},
			pad: [][2]int64{{1, 1}, {1, 1}}, inType: xla.Float32},
		{name: "f64-groups", in: "bf01", kernel: "oi01", out: "bf01", lhsDims: []int64{2, 8, 30, 30}, rhsDims: []int64{8, 2, 3, 3},
			fgc: 4, strides: []int64{2, 1}, inType: xla.Float64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.defaults()
			size := func(d []int64) int { return int(xla.MakeShape(c.inType, d...).Size()) }
			lhs := laTensor(c.inType, c.lhsDims, laRandInts(rng, size(c.lhsDims), 4, false))
			rhs := laTensor(c.inType, c.rhsDims, laRandInts(rng, size(c.rhsDims), 4, false))
			want, outDims := refConv(c, laValues(lhs), laValues(rhs))
			out, err := laRun(t, convSrc(c, outDims), lhs, rhs)
			require.NoError(t, err)
			assert.Equal(t, laExpected(c.outType, want), laValues(out[0]))
		})
	}
}

func TestDynamicConv(t *testing.T) {
	src := `func.func @main(%a: tensor<1x4x4x1xf32>, %b: tensor<3x3x1x1xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x1xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, window_strides = array<i64: 4, 4>, lhs_dilation = array<i64: 2, 2>, batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<2x2xi64>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}`
	lhs := laTensor(xla.Float32, []int64{1, 4, 4, 1}, []complex128{1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17})
	rhs := laTensor(xla.Float32, []int64{3, 3, 1, 1}, []complex128{1, 1, 1, 1, 1, 1, 1, 1, 1})
	pad := laTensor(xla.Int64, []int64{2, 2}, []complex128{1, 1, 1, 1})
	out, err := laRun(t, src, lhs, rhs, pad)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 5, 10, 14}, out[0].Data)
}

func TestConvolutionErrors(t *testing.T) {
	base := convCase{in: "b01f", kernel: "01io", out: "b01f", lhsDims: []int64{1, 4, 4, 2}, rhsDims: []int64{2, 2, 2, 3}, inType: xla.Float32}
	cases := []struct {
		name   string
		edit   func(c *convCase, p *convParams, res *xla.Shape)
		wantIn string
	}{
		{"zero-stride", func(c *convCase, p *convParams, _ *xla.Shape) { p.strides = []int64{0, 1} }, "window_strides must be positive"},
		{"stride-count", func(c *convCase, p *convParams, _ *xla.Shape) { p.strides = []int64{1} }, "window_strides has 1 values"},
		{"both-groups", func(c *convCase, p *convParams, _ *xla.Shape) { p.fgc, p.bgc = 2, 2 }, "cannot both exceed 1"},
		{"feature-groups", func(c *convCase, p *convParams, _ *xla.Shape) { p.fgc = 2 }, "kernel input features"},
		{"batch-groups", func(c *convCase, p *convParams, _ *xla.Shape) { p.bgc = 3 }, "not divisible"},
		{"result-shape", func(c *convCase, p *convParams, res *xla.Shape) { *res = xla.MakeShape(xla.Float32, 1, 3, 3, 4) }, "does not match"},
		{"dup-dims", func(c *convCase, p *convParams, _ *xla.Shape) { p.dn.InputFeatureDim = 0 }, "used twice"},
		{"reversal-count", func(c *convCase, p *convParams, _ *xla.Shape) { p.reversal = nil }, "window_reversal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			c.defaults()
			p := convParams{dn: convDims(c.in, c.kernel, c.out), strides: c.strides, lhsDil: c.lhsDil, rhsDil: c.rhsDil,
				padLo: []int64{0, 0}, padHi: []int64{0, 0}, reversal: c.reverse, fgc: 1, bgc: 1}
			res := xla.MakeShape(xla.Float32, 1, 3, 3, 3)
			tc.edit(&c, &p, &res)
			_, err := convolution(NewTensor(xla.MakeShape(c.inType, c.lhsDims...)), NewTensor(xla.MakeShape(c.inType, c.rhsDims...)), &p, res)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantIn)
		})
	}
	// Attribute of the wrong kind: an error naming it.
	op := stablehlo.NewOp("stablehlo.convolution", nil, []stablehlo.Type{stablehlo.Tensor(xla.Float32, 1, 3, 3, 3)},
		stablehlo.NamedAttr{Name: "dimension_numbers", Value: convDims("b01f", "01io", "b01f")},
		stablehlo.NamedAttr{Name: "window_strides", Value: stablehlo.StringAttr("1")})
	_, err := convolutionKernel(nil, op, []Value{NewTensor(xla.MakeShape(xla.Float32, 1, 4, 4, 2)), NewTensor(xla.MakeShape(xla.Float32, 2, 2, 2, 3))})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "window_strides")
}

func TestConvolutionRandom(t *testing.T) {
	// Random layouts, window attributes and groups against the reference.
	rng := rand.New(rand.NewPCG(17, 18))
	layout := func(a, b byte, s int) string {
		l := []byte{a, b}
		for d := 0; d < s; d++ {
			l = append(l, byte('0'+d))
		}
		rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
		return string(l)
	}
	for iter := 0; iter < 200; iter++ {
		s := 1 + rng.IntN(3)
		c := convCase{in: layout('b', 'f', s), kernel: layout('i', 'o', s), out: layout('b', 'f', s)}
		c.inType = []xla.DType{xla.Float32, xla.Int32, xla.Float64}[iter%3]
		groups := int64(1)
		switch rng.IntN(3) {
		case 1:
			c.fgc, groups = 2, 2
		case 2:
			c.bgc, groups = 2, 2
		}
		c.lhsDims = make([]int64, s+2) // for defaults
		c.defaults()
		ci, og, nb := int64(1+rng.IntN(3)), int64(1+rng.IntN(2)), int64(1+rng.IntN(2))
		dims := func(layout string, sizes map[byte]int64, spatial []int64) []int64 {
			out := make([]int64, len(layout))
			for i := 0; i < len(layout); i++ {
				if d := layout[i]; d >= '0' && d <= '9' {
					out[i] = spatial[d-'0']
				} else {
					out[i] = sizes[d]
				}
			}
			return out
		}
		in, k := make([]int64, s), make([]int64, s)
		for d := 0; d < s; d++ {
			in[d], k[d] = int64(1+rng.IntN(6)), int64(1+rng.IntN(3))
			c.strides[d], c.lhsDil[d], c.rhsDil[d] = int64(1+rng.IntN(3)), int64(1+rng.IntN(2)), int64(1+rng.IntN(2))
			c.pad[d] = [2]int64{int64(rng.IntN(4) - 1), int64(rng.IntN(4) - 1)}
			c.reverse[d] = rng.IntN(2) == 1
		}
		c.lhsDims = dims(c.in, map[byte]int64{'b': nb * c.bgc, 'f': ci * c.fgc}, in)
		c.rhsDims = dims(c.kernel, map[byte]int64{'i': ci, 'o': og * groups}, k)
		checkConvWithRef(t, rng, c)
	}
}

// checkConvWithRef runs convolution on random small integers of c's
// shapes and compares with refConv.
func checkConvWithRef(t *testing.T, rng *rand.Rand, c convCase) {
	t.Helper()
	n := func(d []int64) int { return int(xla.MakeShape(c.inType, d...).Size()) }
	lhs := laTensor(c.inType, c.lhsDims, laRandInts(rng, n(c.lhsDims), 3, false))
	rhs := laTensor(c.inType, c.rhsDims, laRandInts(rng, n(c.rhsDims), 3, false))
	want, outDims := refConv(c, laValues(lhs), laValues(rhs))
	p := convParams{dn: convDims(c.in, c.kernel, c.out), strides: c.strides, lhsDil: c.lhsDil, rhsDil: c.rhsDil,
		reversal: c.reverse, fgc: c.fgc, bgc: c.bgc}
	for _, pd := range c.pad {
		p.padLo, p.padHi = append(p.padLo, pd[0]), append(p.padHi, pd[1])
	}
	got, err := convolution(lhs, rhs, &p, xla.MakeShape(c.inType, outDims...))
	require.NoError(t, err, "%+v", c)
	require.Equal(t, laExpected(c.inType, want), laValues(got), "tab %d cols %d %+v", convTabLimit, convColsLimit, c)
}

// TestConvolutionWithoutTables: input indices computed as they are needed
// (for a kernel size x output size table over convTabLimit entries) and
// column matrices made in parts of input features or kernel positions
// (over convColsLimit elements) give the reference's results. A 1-D
// kernel as wide as its padded input is the small cousin of one whose
// 65536 x 131071 table took 64 GiB.
func TestConvolutionWithoutTables(t *testing.T) {
	defer func(tab int64, cols int) { convTabLimit, convColsLimit = tab, cols }(convTabLimit, convColsLimit)
	rng := rand.New(rand.NewPCG(23, 24))
	run := func(c convCase) {
		t.Helper()
		c.defaults()
		checkConvWithRef(t, rng, c)
	}
	for _, lim := range []struct {
		tab  int64
		cols int
	}{{1000, 1 << 20}, {0, 1 << 20}, {0, 1}, {0, 5}, {0, 20}, {40, 50}, {0, 200}} {
		convTabLimit, convColsLimit = lim.tab, lim.cols
		run(convCase{in: "b0f", kernel: "0io", out: "b0f", lhsDims: []int64{1, 64, 1}, rhsDims: []int64{64, 1, 1},
			pad: [][2]int64{{63, 63}}, inType: xla.Float32})
		run(convCase{in: "b0f", kernel: "0io", out: "b0f", lhsDims: []int64{2, 30, 3}, rhsDims: []int64{30, 3, 2},
			pad: [][2]int64{{29, 28}}, reverse: []bool{true}, inType: xla.Float64})
		run(convCase{in: "bf01", kernel: "oi01", out: "b01f", lhsDims: []int64{2, 4, 9, 7}, rhsDims: []int64{6, 2, 3, 4},
			strides: []int64{2, 1}, lhsDil: []int64{2, 1}, rhsDil: []int64{1, 2}, pad: [][2]int64{{1, -1}, {3, 2}},
			reverse: []bool{false, true}, fgc: 2, inType: xla.Int32})
		run(convCase{in: "bf01", kernel: "oi01", out: "bf01", lhsDims: []int64{6, 2, 5, 5}, rhsDims: []int64{6, 2, 2, 3},
			pad: [][2]int64{{2, 1}, {0, 3}}, bgc: 3, inType: xla.Float32})
		run(convCase{in: "b012f", kernel: "012io", out: "b012f", lhsDims: []int64{1, 4, 5, 3, 2}, rhsDims: []int64{2, 3, 2, 2, 3},
			lhsDil: []int64{1, 2, 1}, pad: [][2]int64{{0, 1}, {1, 0}, {1, 1}}, inType: xla.Complex64})
	}
}

// Window edge cases as the spec has them: a convolution kernel with a
// zero-size spatial dimension has floor(padded/stride)+1 windows (of
// nothing: zeros), which the result-type inference gave 0 of; a
// reduce_window or select_and_scatter whose negative padding crops past
// the input has no windows (the kernels called it an error, the verifier
// and convolution did not); dynamic_conv's run-time padding that
// overflows int64 is an error (it wrapped around into a result).
func TestWindowEdgeCases(t *testing.T) {
	src := `func.func @main(%a: tensor<1x4x1xf32>, %b: tensor<0x1x1xf32>) -> tensor<1x5x1xf32> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<0x1x1xf32>) -> tensor<1x5x1xf32>
  return %0 : tensor<1x5x1xf32>
}`
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	out := shpRun(t, src, f32Tensor([]float32{1, 2, 3, 4}, 1, 4, 1), NewTensor(xla.MakeShape(xla.Float32, 0, 1, 1)))
	assert.Equal(t, []float32{0, 0, 0, 0, 0}, out[0].(*Tensor).Data)

	body := `{
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }`
	out = shpRun(t, `func.func @main(%a: tensor<2xf32>, %i: tensor<f32>) -> tensor<0xf32> {
  %r = "stablehlo.reduce_window"(%a, %i) (`+body+`) {window_dimensions = array<i64: 1>, padding = dense<[[-3, 0]]> : tensor<1x2xi64>} : (tensor<2xf32>, tensor<f32>) -> tensor<0xf32>
  return %r : tensor<0xf32>
}`, f32Tensor([]float32{1, 2}, 2), f32Tensor([]float32{0}))
	assert.Equal(t, 0, out[0].(*Tensor).Len())
	out = shpRun(t, `func.func @main(%a: tensor<2xf32>, %src: tensor<0xf32>, %i: tensor<f32>) -> tensor<2xf32> {
  %r = "stablehlo.select_and_scatter"(%a, %src, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, `+body+`) {window_dimensions = array<i64: 1>, padding = dense<[[-3, 0]]> : tensor<1x2xi64>} : (tensor<2xf32>, tensor<0xf32>, tensor<f32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}`, f32Tensor([]float32{1, 2}, 2), NewTensor(xla.MakeShape(xla.Float32, 0)), f32Tensor([]float32{7}))
	assert.Equal(t, []float32{7, 7}, out[0].(*Tensor).Data)

	dyn := `func.func @main(%a: tensor<1x4x1xf32>, %b: tensor<2x1x1xf32>, %p: tensor<1x2xi64>) -> tensor<1x1x1xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, window_strides = array<i64: 3>, batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<2x1x1xf32>, tensor<1x2xi64>) -> tensor<1x1x1xf32>
  return %0 : tensor<1x1x1xf32>
}`
	a, b := f32Tensor([]float32{1, 2, 3, 4}, 1, 4, 1), f32Tensor([]float32{1, 10}, 2, 1, 1)
	pad := func(lo, hi int64) *Tensor {
		p := NewTensor(xla.MakeShape(xla.Int64, 1, 2))
		copy(p.Data.([]int64), []int64{lo, hi})
		return p
	}
	assert.Equal(t, []float32{21}, shpRun(t, dyn, a, b, pad(0, 0))[0].(*Tensor).Data)
	for _, p := range [][2]int64{{math.MaxInt64, math.MaxInt64}, {math.MinInt64, math.MinInt64}} {
		assert.Contains(t, shpRunErr(t, dyn, a, b, pad(p[0], p[1])), "overflows int64", "padding %v", p)
	}
}

// select_and_scatter with a scatter body in a promotion of the operand's
// type (spec C11): the result takes the body's type (it was refused).
func TestSelectAndScatterPromotes(t *testing.T) {
	a := NewTensor(xla.MakeShape(xla.Float32, 4))
	copy(a.Data.([]float32), []float32{1, 3, 2, 0})
	s := NewTensor(xla.MakeShape(xla.Float32, 2))
	copy(s.Data.([]float32), []float32{10, 20})
	i := NewTensor(xla.MakeShape(xla.Float32))
	i.Data.([]float32)[0] = 0.5
	out := shpRun(t, `func.func @main(%a: tensor<4xf32>, %s: tensor<2xf32>, %i: tensor<f32>) -> tensor<4xf64> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f64>, %y: tensor<f64>):
    %r = stablehlo.add %x, %y : tensor<f64>
    stablehlo.return %r : tensor<f64>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}`, a, s, i)
	assert.Equal(t, []float64{0.5, 10.5, 20.5, 0.5}, out[0].(*Tensor).Data)
}
