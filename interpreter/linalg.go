package interpreter

import (
	"fmt"
	"math"
	"math/cmplx"
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// cholesky and triangular_solve, batched over the leading dimensions, in
// float64 (real types) or complex128 (complex types) and rounded once to the
// result type.
//
// cholesky (lower = true) reads the lower triangle of each matrix and
// returns L with a = L·Lᴴ; lower = false reads the upper triangle and
// returns U with a = Uᴴ·U. The other triangle of the result is zero. For a
// matrix that is not Hermitian positive-definite the spec leaves the result
// to the implementation; like XLA (CholeskyExpander), a matrix whose
// factorization meets a negative or NaN pivot comes back filled with NaN
// (that matrix only; the others in the batch are unaffected).
//
// triangular_solve solves op(a)·x = b (left_side) or x·op(a) = b, op(a) being
// a, aᵀ or aᴴ (transpose_a NO_TRANSPOSE, TRANSPOSE, ADJOINT), reading only
// the lower (lower = true) or upper triangle of a, with ones on the
// diagonal when unit_diagonal. A zero on the diagonal gives infinities or
// NaNs, as the division does.

func init() {
	registerKernel("stablehlo.cholesky", choleskyKernel)
	registerKernel("stablehlo.triangular_solve", triangularSolveKernel)
}

// laField is float64 or complex128 with the few operations the
// factorizations need.
type laField[T float64 | complex128] struct {
	conj func(T) T
	re   func(T) float64
	of   func(float64) T
}

func laFieldOf[T float64 | complex128]() laField[T] {
	var z T
	if _, ok := any(z).(complex128); ok {
		return any(laField[complex128]{
			conj: cmplx.Conj,
			re:   func(v complex128) float64 { return real(v) },
			of:   func(v float64) complex128 { return complex(v, 0) },
		}).(laField[T])
	}
	return any(laField[float64]{
		conj: func(v float64) float64 { return v },
		re:   func(v float64) float64 { return v },
		of:   func(v float64) float64 { return v },
	}).(laField[T])
}

// laMatrixBatch checks that s is a batch of rows×cols matrices and returns
// the batch size.
func laMatrixBatch(s xla.Shape) (batch, rows, cols int, err error) {
	r := s.Rank()
	if r < 2 {
		return 0, 0, 0, fmt.Errorf("%v is not a (batch of) matrices: rank < 2", s)
	}
	batch = 1
	for _, d := range s.Dims[:r-2] {
		batch *= int(d)
	}
	return batch, int(s.Dims[r-2]), int(s.Dims[r-1]), nil
}

func choleskyKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := laTensorArgs(args, 1)
	if err != nil {
		return nil, err
	}
	lower, err := laBool(op, "lower", false)
	if err != nil {
		return nil, err
	}
	rt, err := laResultType(op, 0)
	if err != nil {
		return nil, err
	}
	a := ts[0]
	if _, n, m, err := laMatrixBatch(a.Shape); err != nil {
		return nil, err
	} else if n != m {
		return nil, fmt.Errorf("cholesky needs square matrices, got %v", a.Shape)
	}
	if !xla.MakeShape(rt.DType, a.Shape.Dims...).Equal(rt.Shape()) {
		return nil, fmt.Errorf("result type %v does not match operand %v", rt, stablehlo.TensorOf(a.Shape))
	}
	var t *Tensor
	switch {
	case a.Shape.DType.IsComplex() && rt.DType.IsComplex():
		t, err = choleskyT[complex128](a, lower, rt.Shape(), x.stopFlag())
	case a.Shape.DType.IsFloat() && rt.DType.IsFloat():
		t, err = choleskyT[float64](a, lower, rt.Shape(), x.stopFlag())
	default:
		err = fmt.Errorf("cholesky needs floating-point or complex matrices, got %v -> %v", a.Shape.DType, rt.DType)
	}
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

// choleskyT factors each matrix of a; it ends early (its result
// unfinished) once stop is set.
func choleskyT[T float64 | complex128](a *Tensor, lower bool, result xla.Shape, stop *atomic.Bool) (*Tensor, error) {
	f := laFieldOf[T]()
	data, _, err := laSlice[T](a)
	if err != nil {
		return nil, err
	}
	batch, n, _, _ := laMatrixBatch(a.Shape)
	out := make([]T, len(data))
	nan := f.of(math.NaN())
	if _, ok := any(nan).(complex128); ok {
		nan = any(complex(math.NaN(), math.NaN())).(T)
	}
	laParallelFor(batch, int64(batch)*int64(n)*int64(n)*int64(n)/3, func(lo, hi int) {
		l := make([]T, n*n)
		for b := lo; b < hi; b++ {
			m := data[b*n*n : (b+1)*n*n]
			// at(i, j), i >= j: the stored triangle, read as lower.
			at := func(i, j int) T {
				if lower {
					return m[i*n+j]
				}
				return m[j*n+i]
			}
			clear(l)
			bad := false
			for j := 0; j < n; j++ {
				if stopped(stop) {
					return
				}
				s := f.re(at(j, j))
				lj := l[j*n : j*n+j]
				for _, v := range lj {
					s -= f.re(v * f.conj(v))
				}
				if !(s >= 0) {
					bad = true
				}
				d := math.Sqrt(s)
				l[j*n+j] = f.of(d)
				dv := f.of(d)
				for i := j + 1; i < n; i++ {
					v := at(i, j)
					li := l[i*n : i*n+j]
					for k, x := range li {
						v -= x * f.conj(lj[k])
					}
					l[i*n+j] = v / dv
				}
			}
			res := out[b*n*n : (b+1)*n*n]
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					v := l[i*n+j]
					if lower {
						res[i*n+j] = v
					} else {
						res[j*n+i] = v
					}
				}
			}
			if bad {
				for i := range res {
					res[i] = nan
				}
			}
		}
	})
	return laStore(result, out)
}

func triangularSolveKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := laTensorArgs(args, 2)
	if err != nil {
		return nil, err
	}
	var opt triSolveOptions
	if opt.left, err = laBool(op, "left_side", false); err != nil {
		return nil, err
	}
	if opt.lower, err = laBool(op, "lower", false); err != nil {
		return nil, err
	}
	if opt.unit, err = laBool(op, "unit_diagonal", false); err != nil {
		return nil, err
	}
	if opt.transpose, err = laEnum(op, "transpose_a"); err != nil {
		return nil, err
	}
	opt.stop = x.stopFlag()
	rt, err := laResultType(op, 0)
	if err != nil {
		return nil, err
	}
	t, err := triangularSolve(ts[0], ts[1], opt, rt.Shape())
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

type triSolveOptions struct {
	left, lower, unit bool
	transpose         string
	stop              *atomic.Bool // ends the solve early (its result unfinished)
}

func triangularSolve(a, b *Tensor, opt triSolveOptions, result xla.Shape) (*Tensor, error) {
	switch opt.transpose {
	case "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT":
	default:
		return nil, fmt.Errorf("transpose_a %q is not NO_TRANSPOSE, TRANSPOSE or ADJOINT", opt.transpose)
	}
	ba, k, k2, err := laMatrixBatch(a.Shape)
	if err != nil {
		return nil, err
	}
	if k != k2 {
		return nil, fmt.Errorf("a must be square matrices, got %v", a.Shape)
	}
	bb, m, n, err := laMatrixBatch(b.Shape)
	if err != nil {
		return nil, err
	}
	if a.Shape.Rank() != b.Shape.Rank() || ba != bb {
		return nil, fmt.Errorf("a %v and b %v have different batch dimensions", a.Shape, b.Shape)
	}
	for i := 0; i < a.Shape.Rank()-2; i++ {
		if a.Shape.Dims[i] != b.Shape.Dims[i] {
			return nil, fmt.Errorf("a %v and b %v have different batch dimensions", a.Shape, b.Shape)
		}
	}
	if (opt.left && k != m) || (!opt.left && k != n) {
		return nil, fmt.Errorf("a %v does not fit b %v (left_side = %v)", a.Shape, b.Shape, opt.left)
	}
	if !xla.MakeShape(result.DType, b.Shape.Dims...).Equal(result) {
		return nil, fmt.Errorf("result type %v does not match b %v", stablehlo.TensorOf(result), stablehlo.TensorOf(b.Shape))
	}
	complexIn := a.Shape.DType.IsComplex() || b.Shape.DType.IsComplex() || result.DType.IsComplex()
	switch {
	case complexIn && result.DType.IsComplex():
		return triSolveT[complex128](a, b, opt, result, ba, k, m, n)
	case !complexIn && result.DType.IsFloat() && a.Shape.DType.IsFloat() && b.Shape.DType.IsFloat():
		return triSolveT[float64](a, b, opt, result, ba, k, m, n)
	}
	return nil, fmt.Errorf("triangular_solve needs floating-point or complex operands, got %v, %v -> %v", a.Shape.DType, b.Shape.DType, result.DType)
}

func triSolveT[T float64 | complex128](a, b *Tensor, opt triSolveOptions, result xla.Shape, batch, k, m, n int) (*Tensor, error) {
	f := laFieldOf[T]()
	ad, _, err := laSlice[T](a)
	if err != nil {
		return nil, err
	}
	bd, _, err := laSlice[T](b)
	if err != nil {
		return nil, err
	}
	x := make([]T, len(bd))
	copy(x, bd)
	// op(a) is lower triangular when a's lower triangle is read and not
	// transposed, or its upper triangle is read and transposed.
	effLower := opt.lower == (opt.transpose == "NO_TRANSPOSE")
	one := f.of(1)
	laParallelFor(batch, int64(batch)*int64(k)*int64(k)*int64(max(m, n)), func(lo, hi int) {
		mat := make([]T, k*k)
		for bi := lo; bi < hi; bi++ {
			src := ad[bi*k*k : (bi+1)*k*k]
			// mat = op(T), T the read triangle of a.
			clear(mat)
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					if (opt.lower && i < j) || (!opt.lower && i > j) {
						continue
					}
					v := src[i*k+j]
					if i == j && opt.unit {
						v = one
					}
					switch opt.transpose {
					case "NO_TRANSPOSE":
						mat[i*k+j] = v
					case "TRANSPOSE":
						mat[j*k+i] = v
					default:
						mat[j*k+i] = f.conj(v)
					}
				}
			}
			xs := x[bi*m*n : (bi+1)*m*n]
			if opt.left {
				// mat·X = B: rows of X in order (lower) or reverse (upper).
				for step := 0; step < m; step++ {
					if stopped(opt.stop) {
						return
					}
					i := step
					if !effLower {
						i = m - 1 - step
					}
					row := xs[i*n : i*n+n]
					lo, hi := 0, i
					if !effLower {
						lo, hi = i+1, m
					}
					for p := lo; p < hi; p++ {
						c := mat[i*k+p]
						prow := xs[p*n : p*n+n]
						for j := range row {
							row[j] -= c * prow[j]
						}
					}
					d := mat[i*k+i]
					for j := range row {
						row[j] /= d
					}
				}
			} else {
				// X·mat = B: columns of X in order (upper) or reverse (lower).
				for step := 0; step < n; step++ {
					if stopped(opt.stop) {
						return
					}
					j := step
					if effLower {
						j = n - 1 - step
					}
					lo, hi := 0, j
					if effLower {
						lo, hi = j+1, n
					}
					d := mat[j*k+j]
					for i := 0; i < m; i++ {
						row := xs[i*n : i*n+n]
						v := row[j]
						for p := lo; p < hi; p++ {
							v -= row[p] * mat[p*k+j]
						}
						row[j] = v / d
					}
				}
			}
		}
	})
	return laStore(result, x)
}
