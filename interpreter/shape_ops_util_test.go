package interpreter

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Test support for the shape, reduction, sort, gather/scatter, control-flow
// and dynamic kernels.
//
// Region bodies in these tests use test-only ops ("shptest.add",
// "shptest.cmp" ...) when they must take the general per-element region
// path, so the tests do not depend on the elementwise kernels; regions that
// use stablehlo.add/maximum/... take the typed fast paths, which do not call
// those kernels (Compile still wants a kernel for every op, so a minimal one
// is registered when the elementwise kernels are not linked in).

func init() {
	mustRegister(RegisterKernel("shptest.add", shpTestArith(func(a, b float64) float64 { return a + b })))
	mustRegister(RegisterKernel("shptest.mul", shpTestArith(func(a, b float64) float64 { return a * b })))
	mustRegister(RegisterKernel("shptest.max", shpTestArith(func(a, b float64) float64 { return max(a, b) })))
	mustRegister(RegisterKernel("shptest.cmp", shpTestCompare))
	mustRegister(RegisterKernel("shptest.select", shpTestSelect))
	mustRegister(RegisterKernel("shptest.or", shpTestLogic(func(a, b bool) bool { return a || b })))
	mustRegister(RegisterKernel("shptest.and", shpTestLogic(func(a, b bool) bool { return a && b })))
	for _, name := range []string{"add", "multiply", "maximum", "minimum", "and", "or", "xor", "compare"} {
		if kernelFor("stablehlo."+name) == nil {
			shpStubbed["stablehlo."+name] = true
			n := name
			mustRegister(RegisterKernel("stablehlo."+name, func(*Exec, *stablehlo.Op, []Value) ([]Value, error) {
				return nil, fmt.Errorf("stablehlo.%s is not linked into this test binary", n)
			}))
		}
	}
}

// shpStubbed lists the elementwise ops registered as stubs above.
var shpStubbed = map[string]bool{}

// shpTestNum reads element i of a numeric tensor as float64.
func shpTestNum(t *Tensor, i int) float64 {
	switch d := t.Data.(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	case []int8:
		return float64(d[i])
	case []int16:
		return float64(d[i])
	case []int32:
		return float64(d[i])
	case []int64:
		return float64(d[i])
	case []uint8:
		return float64(d[i])
	case []uint32:
		return float64(d[i])
	case []uint64:
		return float64(d[i])
	}
	panic(fmt.Sprintf("shptest: unsupported %v", t.Shape))
}

func shpTestSetNum(t *Tensor, i int, v float64) {
	switch d := t.Data.(type) {
	case []float32:
		d[i] = RoundNarrow(t.Shape.DType, float32(v))
	case []float64:
		d[i] = v
	case []int8:
		d[i] = int8(WrapInt(t.Shape.DType, int64(v)))
	case []int16:
		d[i] = int16(v)
	case []int32:
		d[i] = int32(v)
	case []int64:
		d[i] = int64(v)
	case []uint8:
		d[i] = uint8(v)
	case []uint32:
		d[i] = uint32(v)
	case []uint64:
		d[i] = uint64(v)
	default:
		panic(fmt.Sprintf("shptest: unsupported %v", t.Shape))
	}
}

func shpTestArith(f func(a, b float64) float64) Kernel {
	return func(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		a, b := args[0].(*Tensor), args[1].(*Tensor)
		out := NewTensor(a.Shape)
		for i := 0; i < a.Len(); i++ {
			shpTestSetNum(out, i, f(shpTestNum(a, i), shpTestNum(b, i)))
		}
		return []Value{out}, nil
	}
}

func shpTestLogic(f func(a, b bool) bool) Kernel {
	return func(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		a, b := args[0].(*Tensor).Data.([]bool), args[1].(*Tensor).Data.([]bool)
		out := NewTensor(args[0].(*Tensor).Shape)
		o := out.Data.([]bool)
		for i := range o {
			o[i] = f(a[i], b[i])
		}
		return []Value{out}, nil
	}
}

// shptest.cmp compares numerically with the "dir" string attribute.
func shpTestCompare(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	a, b := args[0].(*Tensor), args[1].(*Tensor)
	dir, _ := op.Attr("dir").(stablehlo.StringAttr)
	out := NewTensor(xla.MakeShape(xla.Bool, a.Shape.Dims...))
	o := out.Data.([]bool)
	for i := range o {
		x, y := shpTestNum(a, i), shpTestNum(b, i)
		switch dir {
		case "LT":
			o[i] = x < y
		case "GT":
			o[i] = x > y
		case "GE":
			o[i] = x >= y
		case "EQ":
			o[i] = x == y
		default:
			return nil, fmt.Errorf("shptest.cmp: bad dir %q", dir)
		}
	}
	return []Value{out}, nil
}

func shpTestSelect(_ *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	p := args[0].(*Tensor).Data.([]bool)[0]
	if p {
		return []Value{args[1]}, nil
	}
	return []Value{args[2]}, nil
}

// shpT builds a tensor of dtype dt and dims from Go values (converted to the
// dtype's storage).
func shpT(dt xla.DType, dims []int64, vals ...float64) *Tensor {
	t := NewTensor(xla.MakeShape(dt, dims...))
	if len(vals) != t.Len() {
		panic(fmt.Sprintf("shpT: %d values for %v", len(vals), t.Shape))
	}
	for i, v := range vals {
		switch d := t.Data.(type) {
		case []bool:
			d[i] = v != 0
		case []uint16:
			d[i] = uint16(v)
		case []complex64:
			d[i] = complex(float32(v), 0)
		case []complex128:
			d[i] = complex(v, 0)
		default:
			shpTestSetNum(t, i, v)
		}
	}
	return t
}

// shpIota returns a tensor holding 0, 1, 2, ... (start at from).
func shpIota(dt xla.DType, dims []int64, from float64) *Tensor {
	n := xla.MakeShape(dt, dims...).Size()
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = from + float64(i)
	}
	return shpT(dt, dims, vals...)
}

func shpDims(d ...int64) []int64 { return d }

// shpCompile parses and compiles a module.
func shpCompile(t *testing.T, src string) *Program {
	t.Helper()
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err, "parse:\n%s", src)
	p, err := Compile(m, "")
	require.NoError(t, err)
	return p
}

// shpRun parses, compiles and runs a module's main function.
func shpRun(t *testing.T, src string, args ...Value) []Value {
	t.Helper()
	p := shpCompile(t, src)
	out, err := p.Run(context.Background(), Device{}, args)
	require.NoError(t, err)
	return out
}

// shpRunErr runs a module that must fail (at compile or run time) and
// returns the error text.
func shpRunErr(t *testing.T, src string, args ...Value) string {
	t.Helper()
	m, err := stablehlo.Parse([]byte(src))
	if err != nil {
		return err.Error()
	}
	p, err := Compile(m, "")
	if err != nil {
		return err.Error()
	}
	_, err = p.Run(context.Background(), Device{}, args)
	require.Error(t, err)
	return err.Error()
}

// shpVals returns a tensor's elements as float64 (booleans as 0/1).
func shpVals(v Value) []float64 {
	t := v.(*Tensor)
	out := make([]float64, t.Len())
	for i := range out {
		switch d := t.Data.(type) {
		case []bool:
			if d[i] {
				out[i] = 1
			}
		case []uint16:
			out[i] = float64(d[i])
		case []complex64:
			out[i] = float64(real(d[i]))
		case []complex128:
			out[i] = real(d[i])
		default:
			out[i] = shpTestNum(t, i)
		}
	}
	return out
}
