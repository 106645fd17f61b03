package interpreter

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Test helpers of the linear-algebra kernels: tensors from complex128
// values (any element type), programs from MLIR text.

// laTensor builds a tensor of dtype and dims from vals (real parts for real
// types; integers wrapped, narrow floats rounded).
func laTensor(dt xla.DType, dims []int64, vals []complex128) *Tensor {
	t := NewTensor(xla.MakeShape(dt, dims...))
	if len(vals) != t.Len() {
		panic(fmt.Sprintf("laTensor: %d values for %v", len(vals), t.Shape))
	}
	for i, v := range vals {
		re := real(v)
		switch d := t.Data.(type) {
		case []bool:
			d[i] = v != 0
		case []int8:
			d[i] = int8(WrapInt(dt, int64(re)))
		case []int16:
			d[i] = int16(int64(re))
		case []int32:
			d[i] = int32(int64(re))
		case []int64:
			d[i] = int64(re)
		case []uint8:
			d[i] = uint8(WrapUint(dt, uint64(int64(re))))
		case []uint16:
			d[i] = uint16(int64(re))
		case []uint32:
			d[i] = uint32(int64(re))
		case []uint64:
			d[i] = uint64(int64(re))
		case []float32:
			d[i] = RoundNarrow(dt, float32(re))
		case []float64:
			d[i] = re
		case []complex64:
			d[i] = complex64(v)
		case []complex128:
			d[i] = v
		}
	}
	return t
}

// laValues reads a tensor's elements as complex128.
func laValues(t *Tensor) []complex128 {
	out := make([]complex128, t.Len())
	for i := range out {
		switch d := t.Data.(type) {
		case []bool:
			if d[i] {
				out[i] = 1
			}
		case []int8:
			out[i] = complex(float64(d[i]), 0)
		case []int16:
			out[i] = complex(float64(d[i]), 0)
		case []int32:
			out[i] = complex(float64(d[i]), 0)
		case []int64:
			out[i] = complex(float64(d[i]), 0)
		case []uint8:
			out[i] = complex(float64(d[i]), 0)
		case []uint16:
			out[i] = complex(float64(d[i]), 0)
		case []uint32:
			out[i] = complex(float64(d[i]), 0)
		case []uint64:
			out[i] = complex(float64(d[i]), 0)
		case []float32:
			out[i] = complex(float64(d[i]), 0)
		case []float64:
			out[i] = complex(d[i], 0)
		case []complex64:
			out[i] = complex128(d[i])
		case []complex128:
			out[i] = d[i]
		}
	}
	return out
}

// laExpected converts exact reference values (computed in complex128) to
// what a result of dtype holds.
func laExpected(dt xla.DType, vals []complex128) []complex128 {
	return laValues(laTensor(dt, []int64{int64(len(vals))}, vals))
}

// laRandInts returns n small integers in [-r, r] (complex parts too when
// cplx), exact in every element type wide enough.
func laRandInts(rng *rand.Rand, n, r int, cplx bool) []complex128 {
	out := make([]complex128, n)
	for i := range out {
		re := float64(rng.IntN(2*r+1) - r)
		im := 0.0
		if cplx {
			im = float64(rng.IntN(2*r+1) - r)
		}
		out[i] = complex(re, im)
	}
	return out
}

// laRun parses src, compiles its main function and runs it with args.
func laRun(t testing.TB, src string, args ...*Tensor) ([]*Tensor, error) {
	t.Helper()
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err, src)
	p, err := Compile(m, "")
	if err != nil {
		return nil, err
	}
	vals := make([]Value, len(args))
	for i, a := range args {
		vals[i] = a
	}
	out, err := p.Run(context.Background(), Device{}, vals)
	if err != nil {
		return nil, err
	}
	res := make([]*Tensor, len(out))
	for i, o := range out {
		res[i] = o.(*Tensor)
	}
	return res, nil
}

// laType prints an MLIR tensor type.
func laType(dt xla.DType, dims []int64) string {
	return stablehlo.Tensor(dt, dims...).String()
}

// laInts prints "[1, 2, 3]".
func laInts(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// laClose reports whether got is within tol (relative to max(1, |want|))
// of want, treating NaNs as equal.
func laClose(got, want complex128, tol float64) bool {
	if cmplx.IsNaN(want) {
		return cmplx.IsNaN(got)
	}
	if cmplx.IsInf(want) {
		return got == want
	}
	return cmplx.Abs(got-want) <= tol*math.Max(1, cmplx.Abs(want))
}

// laRequireClose compares element by element.
func laRequireClose(t testing.TB, want, got []complex128, tol float64, msg ...any) {
	t.Helper()
	require.Equal(t, len(want), len(got), msg...)
	for i := range want {
		if !laClose(got[i], want[i], tol) {
			require.Failf(t, "values differ", "index %d: want %v, got %v (%v)", i, want[i], got[i], fmt.Sprint(msg...))
		}
	}
}
