package stablehlo_test

// Tests of the builder from outside the package: what a user's package
// sees (error locations with the compiler's inlining, results of built
// programs run by the interpreter).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// ReduceMin and ReduceMax start from the bounds of the element type's bit
// width: 7 and -8 for i4, 1 and -2 for i2 (not the bounds of its byte).
func TestReduceExtremaSubByteInts(t *testing.T) {
	cases := []struct {
		dt       xla.DType
		in       []int64
		min, max int64
		minInit  string
		maxInit  string
	}{
		{xla.Int4, []int64{1, 2, 3}, 1, 3, "dense<7> : tensor<i4>", "dense<-8> : tensor<i4>"},
		{xla.Int4, []int64{-1, -2, -3}, -3, -1, "dense<7> : tensor<i4>", "dense<-8> : tensor<i4>"},
		{xla.Int2, []int64{1, 0, 1}, 0, 1, "dense<1> : tensor<i2>", "dense<-2> : tensor<i2>"},
		{xla.Int2, []int64{-1, -2, -1}, -2, -1, "dense<1> : tensor<i2>", "dense<-2> : tensor<i2>"},
		{xla.Uint4, []int64{1, 2, 3}, 1, 3, "dense<15> : tensor<ui4>", "dense<0> : tensor<ui4>"},
		{xla.Uint2, []int64{1, 2, 3}, 1, 3, "dense<3> : tensor<ui2>", "dense<0> : tensor<ui2>"},
		{xla.Int8, []int64{-1, -2, -3}, -3, -1, "dense<127> : tensor<i8>", "dense<-128> : tensor<i8>"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s%v", c.dt, c.in), func(t *testing.T) {
			b := stablehlo.NewBuilder("extrema")
			f := b.NewFunction("main", stablehlo.Tensor(c.dt, 3))
			f.Return(f.ReduceMin(f.Arg(0)), f.ReduceMax(f.Arg(0)))
			m, err := b.Build()
			require.NoError(t, err)
			text := m.String()
			assert.Contains(t, text, c.minInit)
			assert.Contains(t, text, c.maxInit)
			m2, err := stablehlo.Parse([]byte(text))
			require.NoError(t, err)
			assert.Equal(t, text, m2.String())

			p, err := interpreter.Compile(m, "")
			require.NoError(t, err)
			x := interpreter.NewTensor(xla.MakeShape(c.dt, 3))
			switch d := x.Data.(type) {
			case []int8:
				for i, v := range c.in {
					d[i] = int8(v)
				}
			case []uint8:
				for i, v := range c.in {
					d[i] = uint8(v)
				}
			default:
				t.Fatalf("storage %T", x.Data)
			}
			out, err := p.Run(context.Background(), interpreter.Device{}, []interpreter.Value{x})
			require.NoError(t, err)
			require.Len(t, out, 2)
			scalar := func(v interpreter.Value) int64 {
				switch d := v.(*interpreter.Tensor).Data.(type) {
				case []int8:
					return int64(d[0])
				case []uint8:
					return int64(d[0])
				}
				t.Fatalf("storage %T", v.(*interpreter.Tensor).Data)
				return 0
			}
			assert.Equal(t, c.min, scalar(out[0]), "min")
			assert.Equal(t, c.max, scalar(out[1]), "max")
		})
	}
}

// A builder error names the user's file:line even when the compiler
// inlines the builder method (and its closures) into the user's function:
// the closure's symbol then carries the user's package name.
func TestBuildErrorLocationInlined(t *testing.T) {
	b := stablehlo.NewBuilder("loc")
	f := b.NewFunction("main", stablehlo.Tensor(xla.Complex64, 3))
	f.Return(f.ReduceMax(f.Arg(0), 0))
	_, err := b.Build()
	require.Error(t, err)
	var be *stablehlo.BuildError
	require.True(t, errors.As(err, &be), "%v", err)
	assert.Equal(t, "builder_external_test.go", be.File, "%v", err)
	assert.Equal(t, "stablehlo.reduce", be.Op, "%v", err)
	assert.Contains(t, err.Error(), "ReduceMax")
	assert.Contains(t, err.Error(), "complex<f32>")

	// The same for ops built inside a region closure.
	b = stablehlo.NewBuilder("loc")
	f = b.NewFunction("main", stablehlo.Tensor(xla.Float32, 3))
	r := f.Reduce([]*stablehlo.Value{f.Arg(0)}, []*stablehlo.Value{stablehlo.ConstantScalar(f, float32(0))}, []int64{0},
		func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
			return []*stablehlo.Value{rb.ReduceMin(rb.Iota(stablehlo.Tensor(xla.Complex64, 2), 0))}
		})
	f.Return(r...)
	_, err = b.Build()
	require.Error(t, err)
	require.True(t, errors.As(err, &be), "%v", err)
	assert.Equal(t, "builder_external_test.go", be.File, "%v", err)
	assert.True(t, strings.Contains(err.Error(), "ReduceMin"), "%v", err)
}

// Automatic locations name the user's file for every op a builder method
// adds, those of its regions included, with the method inlined.
func TestAutoLocationsInlined(t *testing.T) {
	b := stablehlo.NewBuilder("loc")
	b.AutoLocations(true)
	f := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 3), stablehlo.Tensor(xla.Int4, 3))
	f.Return(f.ReduceMax(f.Arg(0)), f.ReduceSum(f.Arg(0)), f.ReduceMin(f.Arg(1)))
	m, err := b.Build()
	require.NoError(t, err)
	n := 0
	m.Walk(func(op *stablehlo.Op) bool {
		if op.Name != "func.return" && op.Name != "stablehlo.return" {
			assert.Equal(t, "builder_external_test.go", op.Loc.File, "%s", op.Name)
			n++
		}
		return true
	})
	assert.Equal(t, 9, n) // 3 x (constant, reduce, combiner)
}
