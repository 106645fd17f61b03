package interpreter

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

func choleskySrc(ty string, lower bool) string {
	return fmt.Sprintf(`func.func @main(%%a: %s) -> %s {
  %%0 = stablehlo.cholesky %%a, lower = %v : %s
  return %%0 : %s
}`, ty, ty, lower, ty, ty)
}

// hermitianPD returns n×n matrices M·Mᴴ + n·I (real when !cplx).
func hermitianPD(rng *rand.Rand, n int, cplx bool) []complex128 {
	m := randComplex(rng, n*n, cplx)
	a := make([]complex128, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s complex128
			for k := 0; k < n; k++ {
				s += m[i*n+k] * cmplx.Conj(m[j*n+k])
			}
			a[i*n+j] = s
		}
		a[i*n+i] += complex(float64(n), 0)
	}
	return a
}

func TestCholeskySpecExample(t *testing.T) {
	a := []complex128{1, 2, 3, 2, 20, 26, 3, 26, 70}
	for _, lower := range []bool{true, false} {
		out, err := laRun(t, choleskySrc("tensor<3x3xf32>", lower), laTensor(xla.Float32, []int64{3, 3}, a))
		require.NoError(t, err)
		want := []float32{1, 0, 0, 2, 4, 0, 3, 5, 6}
		if !lower {
			want = []float32{1, 2, 3, 0, 4, 5, 0, 0, 6}
		}
		assert.Equal(t, want, out[0].Data, "lower=%v", lower)
	}
}

func TestCholeskyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []xla.DType{xla.Float64, xla.Float32, xla.Complex128, xla.Complex64, xla.BFloat16} {
		for _, n := range []int{1, 2, 5, 17} {
			for _, lower := range []bool{true, false} {
				t.Run(fmt.Sprint(dt, n, lower), func(t *testing.T) {
					const batch = 3
					var vals []complex128
					for b := 0; b < batch; b++ {
						a := hermitianPD(rng, n, dt.IsComplex())
						// Garbage in the triangle that must not be read.
						for i := 0; i < n; i++ {
							for j := 0; j < n; j++ {
								if (lower && j > i) || (!lower && j < i) {
									a[i*n+j] = 1e6
								}
							}
						}
						vals = append(vals, a...)
					}
					dims := []int64{batch, int64(n), int64(n)}
					in := laTensor(dt, dims, vals)
					out, err := laRun(t, choleskySrc(laType(dt, dims), lower), in)
					require.NoError(t, err)
					av, got := laValues(in), laValues(out[0])
					tol := 1e-12
					switch dt {
					case xla.Float32, xla.Complex64:
						tol = 1e-5
					case xla.BFloat16:
						tol = 3e-2
					}
					for b := 0; b < batch; b++ {
						a, f := av[b*n*n:(b+1)*n*n], got[b*n*n:(b+1)*n*n]
						for i := 0; i < n; i++ {
							for j := 0; j < n; j++ {
								// The other triangle is zero.
								if (lower && j > i) || (!lower && j < i) {
									require.Equal(t, complex128(0), f[i*n+j])
									continue
								}
								// Reconstruct the read triangle: L·Lᴴ or Uᴴ·U.
								var s complex128
								for k := 0; k < n; k++ {
									if lower {
										s += f[i*n+k] * cmplx.Conj(f[j*n+k])
									} else {
										s += cmplx.Conj(f[k*n+i]) * f[k*n+j]
									}
								}
								want := a[i*n+j]
								require.True(t, laClose(s, want, tol*float64(n)), "b %d (%d,%d): %v vs %v", b, i, j, s, want)
							}
							require.True(t, real(f[i*n+i]) > 0 && imag(f[i*n+i]) == 0, "diagonal %v", f[i*n+i])
						}
					}
				})
			}
		}
	}
}

func TestCholeskyNotPositiveDefinite(t *testing.T) {
	// Batch of two: the second matrix is indefinite and comes back NaN;
	// the first is unaffected.
	vals := []complex128{4, 2, 2, 3, 1, 2, 2, 1}
	out, err := laRun(t, choleskySrc("tensor<2x2x2xf64>", true), laTensor(xla.Float64, []int64{2, 2, 2}, vals))
	require.NoError(t, err)
	got := out[0].Data.([]float64)
	assert.Equal(t, []float64{2, 0, 1, math.Sqrt(2)}, got[:4])
	for _, v := range got[4:] {
		assert.True(t, math.IsNaN(v), "%v", got)
	}
	out, err = laRun(t, choleskySrc("tensor<2x2xcomplex<f32>>", false),
		laTensor(xla.Complex64, []int64{2, 2}, []complex128{-1, 0, 0, 1}))
	require.NoError(t, err)
	for _, v := range out[0].Data.([]complex64) {
		assert.True(t, cmplx.IsNaN(complex128(v)))
	}
}

func triSolveSrc(aty, bty string, left, lower, unit bool, transpose string) string {
	return fmt.Sprintf(`func.func @main(%%a: %s, %%b: %s) -> %s {
  %%0 = "stablehlo.triangular_solve"(%%a, %%b) {left_side = %v, lower = %v, unit_diagonal = %v, transpose_a = #stablehlo<transpose %s>} : (%s, %s) -> %s
  return %%0 : %s
}`, aty, bty, bty, left, lower, unit, transpose, aty, bty, bty, bty)
}

func TestTriangularSolveKnownAnswers(t *testing.T) {
	// From the StableHLO interpreter's triangular_solve tests.
	lowerA := []complex128{1, 0, 0, 2, 3, 0, 4, 5, 6}
	upperA := []complex128{1, 2, 4, 0, 3, 5, 0, 0, 6}
	col := []complex128{7, 8, 9}
	cases := []struct {
		name        string
		a           []complex128
		bDims       []int64
		left, lower bool
		transpose   string
		want        []complex128
	}{
		{"left-lower", lowerA, []int64{3, 1}, true, true, "NO_TRANSPOSE", []complex128{7, -2, -1.5}},
		{"left-upper", upperA, []int64{3, 1}, true, false, "NO_TRANSPOSE", []complex128{2.0 / 3, 1.0 / 6, 1.5}},
		{"right-lower", lowerA, []int64{1, 3}, false, true, "NO_TRANSPOSE", []complex128{2.0 / 3, 1.0 / 6, 1.5}},
		{"right-upper", upperA, []int64{1, 3}, false, false, "NO_TRANSPOSE", []complex128{7, -2, -1.5}},
		{"left-lower-transpose", lowerA, []int64{3, 1}, true, true, "TRANSPOSE", []complex128{2.0 / 3, 1.0 / 6, 1.5}},
		{"left-upper-transpose", upperA, []int64{3, 1}, true, false, "TRANSPOSE", []complex128{7, -2, -1.5}},
		{"right-lower-transpose", lowerA, []int64{1, 3}, false, true, "TRANSPOSE", []complex128{7, -2, -1.5}},
		{"right-upper-transpose", upperA, []int64{1, 3}, false, false, "TRANSPOSE", []complex128{2.0 / 3, 1.0 / 6, 1.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := laRun(t, triSolveSrc("tensor<3x3xf32>", laType(xla.Float32, c.bDims), c.left, c.lower, false, c.transpose),
				laTensor(xla.Float32, []int64{3, 3}, c.a), laTensor(xla.Float32, c.bDims, col))
			require.NoError(t, err)
			laRequireClose(t, c.want, laValues(out[0]), 1e-6)
		})
	}
	// Complex, with and without the adjoint.
	ca := []complex128{complex(1, 1), 0, 0, complex(2, -2), complex(3, 4), 0, complex(4, -3), complex(5, 5), complex(6, -8)}
	cb := []complex128{complex(7, -2), complex(8, 4), complex(9, -5)}
	for _, c := range []struct {
		transpose string
		want      []complex128
	}{
		{"NO_TRANSPOSE", []complex128{complex(2.5, -4.5), complex(4.32, 0.24), complex(-0.29, -0.77)}},
		{"ADJOINT", []complex128{complex(7.18, 2.68), complex(-0.08, 3.16), complex(0.14, -1.02)}},
	} {
		out, err := laRun(t, triSolveSrc("tensor<3x3xcomplex<f32>>", "tensor<3x1xcomplex<f32>>", true, true, false, c.transpose),
			laTensor(xla.Complex64, []int64{3, 3}, ca), laTensor(xla.Complex64, []int64{3, 1}, cb))
		require.NoError(t, err)
		laRequireClose(t, c.want, laValues(out[0]), 1e-5, c.transpose)
	}
}

func TestTriangularSolveRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const batch, k, other = 2, 5, 3
	for _, dt := range []xla.DType{xla.Float64, xla.Complex128, xla.Float32} {
		for _, left := range []bool{true, false} {
			for _, lower := range []bool{true, false} {
				for _, tr := range []string{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"} {
					for _, unit := range []bool{false, true} {
						t.Run(fmt.Sprint(dt, left, lower, tr, unit), func(t *testing.T) {
							av := randComplex(rng, batch*k*k, dt.IsComplex())
							for b := 0; b < batch; b++ {
								for i := 0; i < k; i++ {
									av[b*k*k+i*k+i] += 4 // well conditioned
								}
							}
							bDims := []int64{batch, k, other}
							if !left {
								bDims = []int64{batch, other, k}
							}
							bv := randComplex(rng, batch*k*other, dt.IsComplex())
							aT, bT := laTensor(dt, []int64{batch, k, k}, av), laTensor(dt, bDims, bv)
							out, err := laRun(t, triSolveSrc(laType(dt, []int64{batch, k, k}), laType(dt, bDims), left, lower, unit, tr), aT, bT)
							require.NoError(t, err)
							x := laValues(out[0])
							av, bv = laValues(aT), laValues(bT)
							tol := 1e-10
							if dt == xla.Float32 {
								tol = 1e-4
							}
							for b := 0; b < batch; b++ {
								// opA(i, j) from the read triangle only.
								opA := func(i, j int) complex128 {
									r, c := i, j
									if tr != "NO_TRANSPOSE" {
										r, c = j, i
									}
									if (lower && c > r) || (!lower && c < r) {
										return 0
									}
									v := av[b*k*k+r*k+c]
									if r == c && unit {
										v = 1
									}
									if tr == "ADJOINT" {
										v = cmplx.Conj(v)
									}
									return v
								}
								rows, cols := int(bDims[1]), int(bDims[2])
								xs, bs := x[b*rows*cols:(b+1)*rows*cols], bv[b*rows*cols:(b+1)*rows*cols]
								for i := 0; i < rows; i++ {
									for j := 0; j < cols; j++ {
										var s complex128
										for p := 0; p < k; p++ {
											if left {
												s += opA(i, p) * xs[p*cols+j]
											} else {
												s += xs[i*cols+p] * opA(p, j)
											}
										}
										require.True(t, laClose(s, bs[i*cols+j], tol), "batch %d (%d,%d): %v vs %v", b, i, j, s, bs[i*cols+j])
									}
								}
							}
						})
					}
				}
			}
		}
	}
}

func TestLinalgErrors(t *testing.T) {
	_, err := laRun(t, choleskySrc("tensor<3xf32>", true), NewTensor(xla.MakeShape(xla.Float32, 3)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank < 2")
	_, err = laRun(t, choleskySrc("tensor<2x2xi32>", true), NewTensor(xla.MakeShape(xla.Int32, 2, 2)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "floating-point or complex")
	_, err = laRun(t, triSolveSrc("tensor<3x3xf32>", "tensor<2x3xf32>", true, true, false, "NO_TRANSPOSE"),
		NewTensor(xla.MakeShape(xla.Float32, 3, 3)), NewTensor(xla.MakeShape(xla.Float32, 2, 3)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not fit")
	_, err = triangularSolve(NewTensor(xla.MakeShape(xla.Float32, 3, 3)), NewTensor(xla.MakeShape(xla.Float32, 3, 3)),
		triSolveOptions{left: true, transpose: "TRANSPOSE_INVALID"}, xla.MakeShape(xla.Float32, 3, 3))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TRANSPOSE_INVALID")
	_, err = triangularSolve(NewTensor(xla.MakeShape(xla.Float32, 2, 3, 3)), NewTensor(xla.MakeShape(xla.Float32, 3, 3, 3)),
		triSolveOptions{left: true, transpose: "NO_TRANSPOSE"}, xla.MakeShape(xla.Float32, 3, 3, 3))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "batch dimensions")
}
