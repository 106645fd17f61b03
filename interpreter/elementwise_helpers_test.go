package interpreter

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Test helpers of the elementwise, convert, constant and iota tests.

var (
	ewtNaN  = math.NaN()
	ewtInf  = math.Inf(1)
	ewtNegZ = math.Copysign(0, -1)
)

// ewtTensor makes a 1-D tensor of dt from values: bool, int (int64 or
// uint64 bit patterns, wrapped to dt), float64 or complex128.
func ewtTensor(dt xla.DType, vals ...any) *Tensor {
	return ewtShaped(dt, []int64{int64(len(vals))}, vals...)
}

// ewtShaped makes a tensor of the given dims from values.
func ewtShaped(dt xla.DType, dims []int64, vals ...any) *Tensor {
	t := NewTensor(xla.MakeShape(dt, dims...))
	if t.Len() != len(vals) {
		panic(fmt.Sprintf("%d values for %v", len(vals), dims))
	}
	for i, v := range vals {
		ewtSet(t, i, v)
	}
	return t
}

func ewtAsFloat(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case bool:
		if v {
			return 1
		}
		return 0
	}
	panic(fmt.Sprintf("not a real value: %T", v))
}

func ewtAsInt(v any) uint64 {
	switch v := v.(type) {
	case int:
		return uint64(v)
	case int64:
		return uint64(v)
	case uint64:
		return v
	case float64:
		return uint64(int64(v))
	case bool:
		if v {
			return 1
		}
		return 0
	}
	panic(fmt.Sprintf("not an integer value: %T", v))
}

func ewtSet(t *Tensor, i int, v any) {
	dt := t.Shape.DType
	switch d := t.Data.(type) {
	case []bool:
		b, ok := v.(bool)
		if !ok {
			b = ewtAsInt(v) != 0
		}
		d[i] = b
	case []int8:
		d[i] = int8(WrapInt(dt, int64(ewtAsInt(v))))
	case []int16:
		d[i] = int16(ewtAsInt(v))
	case []int32:
		d[i] = int32(ewtAsInt(v))
	case []int64:
		d[i] = int64(ewtAsInt(v))
	case []uint8:
		d[i] = uint8(WrapUint(dt, ewtAsInt(v)))
	case []uint16:
		d[i] = uint16(ewtAsInt(v))
	case []uint32:
		d[i] = uint32(ewtAsInt(v))
	case []uint64:
		d[i] = ewtAsInt(v)
	case []float32:
		d[i] = RoundNarrow64(dt, ewtAsFloat(v))
	case []float64:
		d[i] = ewtAsFloat(v)
	case []complex64:
		c, ok := v.(complex128)
		if !ok {
			c = complex(ewtAsFloat(v), 0)
		}
		d[i] = complex64(c)
	case []complex128:
		c, ok := v.(complex128)
		if !ok {
			c = complex(ewtAsFloat(v), 0)
		}
		d[i] = c
	}
}

// ewtGet returns element i as bool, int64 (signed types), uint64
// (unsigned types), float64 or complex128.
func ewtGet(t *Tensor, i int) any {
	switch d := t.Data.(type) {
	case []bool:
		return d[i]
	case []int8:
		return int64(d[i])
	case []int16:
		return int64(d[i])
	case []int32:
		return int64(d[i])
	case []int64:
		return d[i]
	case []uint8:
		return uint64(d[i])
	case []uint16:
		return uint64(d[i])
	case []uint32:
		return uint64(d[i])
	case []uint64:
		return d[i]
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	case []complex64:
		return complex128(d[i])
	case []complex128:
		return d[i]
	}
	return nil
}

// ewtSameFloat: both NaN, or equal (with the same sign when tol is 0), or
// within a relative tolerance.
func ewtSameFloat(want, got, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if want == got {
		return tol > 0 || want != 0 || math.Signbit(want) == math.Signbit(got)
	}
	if tol > 0 && !math.IsInf(want, 0) {
		return math.Abs(want-got) <= tol*math.Max(math.Abs(want), 1e-300)
	}
	return false
}

// ewtCheck compares t's elements with want (same conventions as ewtTensor);
// tol is a relative tolerance for floats (0: exact, signed zeros included).
func ewtCheck(t *testing.T, got *Tensor, tol float64, want []any, msg string) {
	t.Helper()
	require.Equal(t, len(want), got.Len(), msg)
	for i, w := range want {
		g := ewtGet(got, i)
		ok := false
		switch g := g.(type) {
		case bool:
			ok = g == w.(bool)
		case int64:
			ok = g == int64(ewtAsInt(w))
		case uint64:
			ok = g == ewtAsInt(w)
		case float64:
			ok = ewtSameFloat(ewtAsFloat(w), g, tol)
		case complex128:
			c, isC := w.(complex128)
			if !isC {
				c = complex(ewtAsFloat(w), 0)
			}
			ok = ewtSameFloat(real(c), real(g), tol) && ewtSameFloat(imag(c), imag(g), tol)
			if tol > 0 && !ok && !cmplx.IsNaN(c) {
				ok = cmplx.Abs(c-g) <= tol*math.Max(cmplx.Abs(c), 1e-300)
			}
		}
		if !ok {
			t.Errorf("%s: element %d: got %v, want %v", msg, i, g, w)
		}
	}
}

// ewtProgram is the text of a module whose @main applies one op to its
// arguments.
func ewtProgram(name, attrs string, results []xla.Shape, args ...*Tensor) string {
	var params, argNames, argTypes, resTypes []string
	for i, a := range args {
		ty := stablehlo.TensorOf(a.Shape).String()
		params = append(params, fmt.Sprintf("%%a%d: %s", i, ty))
		argNames = append(argNames, fmt.Sprintf("%%a%d", i))
		argTypes = append(argTypes, ty)
	}
	var resNames []string
	for i, r := range results {
		resTypes = append(resTypes, stablehlo.TensorOf(r).String())
		resNames = append(resNames, fmt.Sprintf("%%0#%d", i))
	}
	if len(results) == 1 {
		resNames = []string{"%0"}
	}
	if attrs != "" {
		attrs = " {" + attrs + "}"
	}
	return fmt.Sprintf("func.func @main(%s) -> (%s) {\n  %%0%s = \"%s\"(%s)%s : (%s) -> (%s)\n  return %s : %s\n}\n",
		strings.Join(params, ", "), strings.Join(resTypes, ", "),
		ewtMulti(len(results)), name, strings.Join(argNames, ", "), attrs,
		strings.Join(argTypes, ", "), strings.Join(resTypes, ", "),
		strings.Join(resNames, ", "), strings.Join(resTypes, ", "))
}

func ewtMulti(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(":%d", n)
}

// ewtRun runs one op through the parser, Compile and Run.
func ewtRun(name, attrs string, results []xla.Shape, args ...*Tensor) ([]*Tensor, error) {
	text := ewtProgram(name, attrs, results, args...)
	m, err := stablehlo.Parse([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("parse: %w\n%s", err, text)
	}
	p, err := Compile(m, "")
	if err != nil {
		return nil, err
	}
	in := make([]Value, len(args))
	for i, a := range args {
		in[i] = a
	}
	out, err := p.Run(context.Background(), Device{}, in)
	if err != nil {
		return nil, err
	}
	ts := make([]*Tensor, len(out))
	for i, o := range out {
		ts[i] = o.(*Tensor)
	}
	return ts, nil
}

// ewtRun1 runs an op with one result of shape like args[0] and element type
// rdt (Invalid: args[0]'s).
func ewtRun1(t *testing.T, name, attrs string, rdt xla.DType, args ...*Tensor) *Tensor {
	t.Helper()
	if rdt == xla.Invalid {
		rdt = args[0].Shape.DType
	}
	out, err := ewtRun(name, attrs, []xla.Shape{xla.MakeShape(rdt, args[0].Shape.Dims...)}, args...)
	require.NoError(t, err)
	return out[0]
}

// ewtKernel calls a registered kernel directly on a hand-made op, for
// inputs the parser or the builder would refuse.
func ewtKernel(name string, attrs []stablehlo.NamedAttr, result stablehlo.Type, args ...Value) ([]Value, error) {
	k := kernelFor(name)
	if k == nil {
		return nil, fmt.Errorf("no kernel %s", name)
	}
	var types []stablehlo.Type
	if result != nil {
		types = append(types, result)
	}
	op := stablehlo.NewOp(name, nil, types, attrs...)
	return k(&Exec{Ctx: context.Background()}, op, args)
}
