package interpreter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// refDFTAxis applies the DFT straight from its definition along one axis.
func refDFTAxis(x []complex128, dims []int64, axis int, inverse bool) []complex128 {
	n := int(dims[axis])
	inner := 1
	for _, d := range dims[axis+1:] {
		inner *= int(d)
	}
	out := make([]complex128, len(x))
	if n == 0 {
		return out
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for line := 0; line < len(x)/n; line++ {
		base := (line/inner)*n*inner + line%inner
		for k := 0; k < n; k++ {
			var s complex128
			for j := 0; j < n; j++ {
				ang := sign * 2 * math.Pi * float64((j*k)%n) / float64(n)
				s += x[base+j*inner] * complex(math.Cos(ang), math.Sin(ang))
			}
			if inverse {
				s /= complex(float64(n), 0)
			}
			out[base+k*inner] = s
		}
	}
	return out
}

func fftSrc(typ string, in, out string, lengths []int64) string {
	return fmt.Sprintf(`func.func @main(%%a: %s) -> %s {
  %%0 = stablehlo.fft %%a, type = %s, length = %s : (%s) -> %s
  return %%0 : %s
}`, in, out, typ, laInts(lengths), in, out, out)
}

func randComplex(rng *rand.Rand, n int, cplx bool) []complex128 {
	v := make([]complex128, n)
	for i := range v {
		im := 0.0
		if cplx {
			im = rng.Float64()*2 - 1
		}
		v[i] = complex(rng.Float64()*2-1, im)
	}
	return v
}

func TestFFTAgainstDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	cases := []struct {
		dims    []int64
		lengths int
	}{
		{[]int64{1}, 1}, {[]int64{2}, 1}, {[]int64{3}, 1}, {[]int64{4}, 1}, {[]int64{5}, 1}, {[]int64{7}, 1},
		{[]int64{8}, 1}, {[]int64{12}, 1}, {[]int64{17}, 1}, {[]int64{64}, 1}, {[]int64{65}, 1}, {[]int64{97}, 1},
		{[]int64{100}, 1}, {[]int64{128}, 1}, {[]int64{243}, 1}, {[]int64{256}, 1},
		{[]int64{3, 10}, 1}, {[]int64{4, 6}, 2}, {[]int64{2, 3, 5}, 2}, {[]int64{3, 4, 5}, 3}, {[]int64{2, 2, 70, 3}, 3},
		{[]int64{5, 0}, 1},
	}
	for _, c := range cases {
		for _, typ := range []string{"FFT", "IFFT"} {
			for _, dt := range []xla.DType{xla.Complex128, xla.Complex64} {
				t.Run(fmt.Sprint(typ, dt, c.dims, c.lengths), func(t *testing.T) {
					n := int(xla.MakeShape(dt, c.dims...).Size())
					in := laTensor(dt, c.dims, randComplex(rng, n, true))
					want := laValues(in)
					r := len(c.dims)
					for a := r - c.lengths; a < r; a++ {
						want = refDFTAxis(want, c.dims, a, typ == "IFFT")
					}
					ty := laType(dt, c.dims)
					out, err := laRun(t, fftSrc(typ, ty, ty, c.dims[r-c.lengths:]), in)
					require.NoError(t, err)
					tol := 1e-12
					if dt == xla.Complex64 {
						tol = 1e-5
					}
					laRequireClose(t, want, laValues(out[0]), tol*math.Sqrt(float64(max(n, 1))))
				})
			}
		}
	}
}

func TestRFFTAndIRFFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	cases := []struct {
		dims    []int64 // of the real side
		lengths int
	}{
		{[]int64{1}, 1}, {[]int64{2}, 1}, {[]int64{5}, 1}, {[]int64{8}, 1}, {[]int64{9}, 1}, {[]int64{67}, 1},
		{[]int64{3, 16}, 1}, {[]int64{4, 6}, 2}, {[]int64{4, 7}, 2}, {[]int64{2, 3, 5}, 3}, {[]int64{2, 5, 4, 6}, 3},
	}
	for _, c := range cases {
		for _, pair := range [][2]xla.DType{{xla.Float64, xla.Complex128}, {xla.Float32, xla.Complex64}} {
			real, cplx := pair[0], pair[1]
			t.Run(fmt.Sprint(real, c.dims, c.lengths), func(t *testing.T) {
				r := len(c.dims)
				lengths := c.dims[r-c.lengths:]
				n := int(xla.MakeShape(real, c.dims...).Size())
				x := laTensor(real, c.dims, randComplex(rng, n, false))
				// RFFT = the first n/2+1 elements of the full FFT.
				full := laValues(x)
				for a := r - c.lengths; a < r; a++ {
					full = refDFTAxis(full, c.dims, a, false)
				}
				halfDims := append([]int64(nil), c.dims...)
				halfDims[r-1] = c.dims[r-1]/2 + 1
				want := fftResizeLast(full, c.dims, halfDims[r-1])
				out, err := laRun(t, fftSrc("RFFT", laType(real, c.dims), laType(cplx, halfDims), lengths), x)
				require.NoError(t, err)
				tol := 1e-12
				if real == xla.Float32 {
					tol = 1e-5
				}
				laRequireClose(t, want, laValues(out[0]), tol*math.Sqrt(float64(n)))
				// IRFFT(RFFT(x)) = x.
				back, err := laRun(t, fftSrc("IRFFT", laType(cplx, halfDims), laType(real, c.dims), lengths), out[0])
				require.NoError(t, err)
				laRequireClose(t, laValues(x), laValues(back[0]), tol*math.Sqrt(float64(n)))
			})
		}
	}
}

func TestIRFFTIgnoresRedundantImaginaryParts(t *testing.T) {
	// The imaginary parts of X[0] and X[n/2] (n even) do not contribute.
	in := laTensor(xla.Complex128, []int64{3}, []complex128{complex(10, 5), complex(-2, 2), complex(-2, 7)})
	out, err := laRun(t, fftSrc("IRFFT", "tensor<3xcomplex<f64>>", "tensor<4xf64>", []int64{4}), in)
	require.NoError(t, err)
	laRequireClose(t, []complex128{1, 2, 3, 4}, laValues(out[0]), 1e-12)
}

func TestFFTKnownAnswers(t *testing.T) {
	// The spec's example and the StableHLO interpreter's fft tests.
	c := func(re, im float64) complex128 { return complex(re, im) }
	cases := []struct {
		typ             string
		inType, outType xla.DType
		inDims, outDims []int64
		lengths         []int64
		in, want        []complex128
	}{
		{"FFT", xla.Complex64, xla.Complex64, []int64{4}, []int64{4}, []int64{4}, []complex128{1, 0, 0, 0}, []complex128{1, 1, 1, 1}},
		{"FFT", xla.Complex128, xla.Complex128, []int64{2}, []int64{2}, []int64{2},
			[]complex128{c(1, 2), c(3, -4)}, []complex128{c(4, -2), c(-2, 6)}},
		{"FFT", xla.Complex128, xla.Complex128, []int64{2, 2}, []int64{2, 2}, []int64{2, 2},
			[]complex128{c(1, 2), c(3, -4), c(-5, 6), c(-7, -8)}, []complex128{c(-8, -4), c(0, 20), c(16, 0), c(-4, -8)}},
		{"IFFT", xla.Complex128, xla.Complex128, []int64{2, 2}, []int64{2, 2}, []int64{2, 2},
			[]complex128{c(-8, -4), c(16, 0), c(0, 20), c(-4, -8)}, []complex128{c(1, 2), c(-5, 6), c(3, -4), c(-7, -8)}},
		{"RFFT", xla.Float64, xla.Complex128, []int64{4}, []int64{3}, []int64{4},
			[]complex128{1, 2, 3, 4}, []complex128{10, c(-2, 2), -2}},
		{"RFFT", xla.Float64, xla.Complex128, []int64{4, 4}, []int64{4, 3}, []int64{4, 4},
			[]complex128{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			[]complex128{136, c(-8, 8), -8, c(-32, 32), 0, 0, -32, 0, 0, c(-32, -32), 0, 0}},
		{"IRFFT", xla.Complex128, xla.Float64, []int64{3}, []int64{4}, []int64{4},
			[]complex128{10, c(-2, 2), -2}, []complex128{1, 2, 3, 4}},
		{"RFFT", xla.Float64, xla.Complex128, []int64{2, 2, 4}, []int64{2, 2, 3}, []int64{2, 2, 4},
			[]complex128{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			[]complex128{136, c(-8, 8), -8, -32, 0, 0, -64, 0, 0, 0, 0, 0}},
	}
	for _, k := range cases {
		t.Run(fmt.Sprint(k.typ, k.inDims), func(t *testing.T) {
			out, err := laRun(t, fftSrc(k.typ, laType(k.inType, k.inDims), laType(k.outType, k.outDims), k.lengths),
				laTensor(k.inType, k.inDims, k.in))
			require.NoError(t, err)
			laRequireClose(t, k.want, laValues(out[0]), 1e-12)
		})
	}
}

func TestFFTErrors(t *testing.T) {
	cases := []struct {
		typ, in, out string
		lengths      []int64
		wantIn       string
	}{
		{"FFT", "tensor<4xf32>", "tensor<4xcomplex<f32>>", []int64{4}, "complex operand"},
		{"FFT", "tensor<4xcomplex<f32>>", "tensor<4xcomplex<f32>>", []int64{8}, "needs an operand of dimensions [8]"},
		{"RFFT", "tensor<8xf32>", "tensor<8xcomplex<f32>>", []int64{8}, "its operands give tensor<5xcomplex<f32>>"},
		{"IRFFT", "tensor<4xcomplex<f32>>", "tensor<8xf32>", []int64{8}, "needs an operand of dimensions [5]"},
		{"FFT", "tensor<2x2x2x2xcomplex<f32>>", "tensor<2x2x2x2xcomplex<f32>>", []int64{2, 2, 2, 2}, "want 1 to 3"},
	}
	for _, c := range cases {
		m := fftSrc(c.typ, c.in, c.out, c.lengths)
		in := NewTensor(xla.MakeShape(xla.Complex64, 4))
		switch c.in {
		case "tensor<4xf32>":
			in = NewTensor(xla.MakeShape(xla.Float32, 4))
		case "tensor<8xf32>":
			in = NewTensor(xla.MakeShape(xla.Float32, 8))
		case "tensor<2x2x2x2xcomplex<f32>>":
			in = NewTensor(xla.MakeShape(xla.Complex64, 2, 2, 2, 2))
		}
		_, err := laRun(t, m, in)
		require.Error(t, err, c)
		assert.Contains(t, err.Error(), c.wantIn)
	}
}

// The inverse real FFT's widened scratch (complex128, the length of the
// result) is checked like a tensor: too large for the memory available
// is an *AllocError, not a crash of the process.
func TestFFTScratchIsChecked(t *testing.T) {
	m := fftSrc("IRFFT", "tensor<64x5xcomplex<f32>>", "tensor<64x8xf32>", []int64{8})
	in := NewTensor(xla.MakeShape(xla.Complex64, 64, 5))
	defer func(min int64, f func() (int64, bool)) { checkAllocMin, availableMemory = min, f }(checkAllocMin, availableMemory)
	checkAllocMin = 1
	// The result (2 KiB) fits, the 64x8 complex128 scratch (8 KiB) does not.
	availableMemory = func() (int64, bool) { return 6 << 10, true }
	_, err := laRun(t, m, in)
	var ae *AllocError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, xla.MakeShape(xla.Complex128, 64, 8), ae.Shape)
}
