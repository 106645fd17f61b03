package effects

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// An Array formats its elements with the verb it is given (it printed its
// struct fields: %d of an f32 array gave "{16 [3] [0 0 128 63 ...]}";
// found in review); %v and %s keep String's form.
func TestArrayFormat(t *testing.T) {
	must := func(a Array, err error) Array {
		t.Helper()
		require.NoError(t, err)
		return a
	}
	ints := must(ArrayOf([]int32{1, 2, 3}, 3))
	floats := must(ArrayOf([]float32{1, 2}, 2))
	matrix := must(ArrayOf([]int32{1, 2, 3, 4}, 2, 2))
	short := Array{DType: xla.Float32, Dims: []int64{3}, Data: []byte{1, 2}}
	f8 := Array{DType: xla.Float8E4M3FN, Dims: []int64{2}, Data: []byte{0x38, 0x40}}
	for _, c := range []struct {
		format string
		a      Array
		want   string
	}{
		{"%d", ints, "[1 2 3]"},
		{"%v", ints, "[1 2 3]"},
		{"%s", ints, "[1 2 3]"},
		{"%-9s|", ints, "[1 2 3]  |"},
		{"%.3s", ints, "[1 "},
		{"%5d", ints, "[    1     2     3]"},
		{"%-3d|", ints, "[1   2   3  ]|"},
		{"%03d", ints, "[001 002 003]"},
		{"%+d", ints, "[+1 +2 +3]"},
		{"%x", must(ArrayOf([]int32{255, 16}, 2)), "[ff 10]"},
		{"%#x", must(ArrayOf([]int32{255, 16}, 2)), "[0xff 0x10]"},
		{"%X", must(ArrayOf([]uint8{255})), "FF"},
		{"%b", must(ArrayOf([]int64{5}, 1)), "[101]"},
		{"%q", must(ArrayOf([]int32{'a'}, 1)), "['a']"},
		{"%d", matrix, "[[1 2] [3 4]]"},
		{"%.3f", floats, "[1.000 2.000]"},
		{"%g", must(ArrayOf([]float64{0.5})), "0.5"},
		{"%8.2e", floats, "[1.00e+00 2.00e+00]"},
		{"%+.1f", floats, "[+1.0 +2.0]"},
		{"%+v", floats, "[1 2]"}, // as fmt prints []float32
		{"%6v", floats, "[     1      2]"},
		{"%v", floats, "[1 2]"},
		{"%.1f", must(ArrayOf([]complex64{1 + 2i}, 1)), "[(1.0+2.0i)]"},
		{"%t", must(ArrayOf([]bool{true, false}, 2)), "[true false]"},
		{"%d%%", ints, "[1 2 3]%"},
		// Element types without a Go type take %v and %s only.
		{"%v", f8, f8.String()},
		{"%5v", f8, "[ 0x38  0x40]"},
		{"%d", f8, "%!d(effects.Array=[0x38 0x40])"},
		// A verb the element type does not take, as fmt says it.
		{"%d", floats, "%!d(effects.Array=[1 2])"},
		{"%t", ints, "%!t(effects.Array=[1 2 3])"},
		// An array whose data is short prints what String prints.
		{"%f", short, short.String()},
		{"%d", short, "%!d(effects.Array=" + short.String() + ")"},
	} {
		assert.Equal(t, c.want, fmt.Sprintf(c.format, c.a), "%s of %v", c.format, c.a)
	}
	// %#v is the struct in Go syntax, as before Array had a Format.
	type plain Array
	for _, a := range []Array{floats, {}, short} {
		want := strings.Replace(fmt.Sprintf("%#v", plain(a)), "effects.plain", "effects.Array", 1)
		assert.Equal(t, want, fmt.Sprintf("%#v", a))
	}
	assert.Equal(t, "effects.Array", fmt.Sprintf("%T", floats))
}

// A print format that does not fit its values is an error when building,
// recorded as the builder's error (it printed "%!v(MISSING)" and the
// fields of the Array struct at run time; found in review).
func TestPrintFormatErrors(t *testing.T) {
	f32x3 := stablehlo.Tensor(xla.Float32, 3)
	i32x3 := stablehlo.Tensor(xla.Int32, 3)
	boolT := stablehlo.Scalar(xla.Bool)
	f8 := stablehlo.Tensor(xla.Float8E4M3FN, 2)
	for _, c := range []struct {
		format string
		args   []stablehlo.Type
		want   []string // nil: no error
	}{
		{"x=%d %v %v", []stablehlo.Type{f32x3}, []string{
			`effects: print format "x=%d %v %v": `,
			"%d does not format value 0 (tensor<3xf32>): f32 elements take %v %s %b %e %E %f %F %g %G %x %X",
			"the format's verbs take 3 values, 1 given"}},
		{"%v", []stablehlo.Type{i32x3, i32x3}, []string{"the format's verbs take 1 value, 2 given"}},
		{"%v %v", nil, []string{"the format's verbs take 2 values, 0 given"}},
		{"%d", []stablehlo.Type{boolT}, []string{"%d does not format value 0 (tensor<i1>): i1 elements take %v %s %t"}},
		{"%f", []stablehlo.Type{i32x3}, []string{"%f does not format value 0 (tensor<3xi32>): i32 elements take %v %s %b %c %d %o %O %q %x %X %U"}},
		{"%t", []stablehlo.Type{i32x3}, []string{"%t does not format value 0"}},
		{"%p", []stablehlo.Type{i32x3}, []string{"%p does not format value 0"}},
		{"%w", []stablehlo.Type{i32x3}, []string{"%w does not format value 0"}},
		{"%.2f", []stablehlo.Type{f8}, []string{"%.2f does not format value 0 (tensor<2xf8E4M3FN>): f8E4M3FN elements take %v %s"}},
		{"%*d", []stablehlo.Type{i32x3, i32x3}, []string{"%*d reads a width or precision from an int value (*)"}},
		{"%.*f", []stablehlo.Type{f32x3}, []string{"%.*f reads a width or precision", "the format's verbs take 2 values, 1 given"}},
		{"%[3]v", []stablehlo.Type{i32x3}, []string{"%[3]v has a bad argument index (the values are numbered from 1 to 1)"}},
		{"%[x]v", []stablehlo.Type{i32x3}, []string{"%[x]v has a bad argument index"}},
		{"%[1]v", nil, []string{"%[1]v has a bad argument index (there are no values)"}},
		{"%[1]2d", []stablehlo.Type{i32x3}, []string{"%[1]2d has a bad argument index"}},
		{"%[2]v", []stablehlo.Type{i32x3, i32x3}, []string{"value 0 (%[1]) is not formatted"}},
		{"%[2]v %v", []stablehlo.Type{i32x3, i32x3}, []string{"%v has no value (the values are numbered from 1 to 2)", "value 0 (%[1]) is not formatted"}},
		{"50%", nil, []string{`"%" at the end has no verb (%% prints a percent sign)`}},
		{"%-5", []stablehlo.Type{i32x3}, []string{`"%-5" at the end has no verb`}},
		{"%99999999d", []stablehlo.Type{i32x3}, []string{"at the end has no verb"}},

		{"x=%d y=%.3f", []stablehlo.Type{i32x3, f32x3}, nil},
		{"100%%", nil, nil},
		{"%5%|%d", []stablehlo.Type{i32x3}, nil}, // a percent sign takes no value, whatever its width
		{"%-8v|%+e|%x|%G", []stablehlo.Type{f32x3, f32x3, f32x3, f32x3}, nil},
		{"%[2]v %[1]d", []stablehlo.Type{i32x3, f32x3}, nil},
		{"%[1]d %[1]x", []stablehlo.Type{i32x3}, nil},
		{"%T %#v %s", []stablehlo.Type{f8, f8, f8}, nil},
		{"%t %q %c %U", []stablehlo.Type{boolT, i32x3, i32x3, i32x3}, nil},
	} {
		t.Run(c.format, func(t *testing.T) {
			b := stablehlo.NewBuilder("m")
			fb := b.NewFunction("main", c.args...)
			err := Fprint(fb, &lines{}, Ordered("log"), c.format, fb.Args()...)
			fb.Return()
			_, berr := b.Build()
			if c.want == nil {
				require.NoError(t, err)
				require.NoError(t, berr)
				return
			}
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			// The builder holds it: Build fails even when the caller drops
			// Print's error, and the error names the caller's line.
			require.Error(t, berr)
			assert.Equal(t, err, berr)
			var be *stablehlo.BuildError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, "effects.print", be.Op)
			assert.Equal(t, "format_test.go", be.File)
		})
	}
}

// A print formats its values' elements with the format's verbs at run
// time.
func TestPrintFormatsElements(t *testing.T) {
	c := openInterpreter(t, 1)
	var out lines
	m := build(t, func(fb *stablehlo.FuncBuilder) {
		x := stablehlo.Constant(fb, []int32{1, 2, 3})
		y := stablehlo.Constant(fb, []float32{0.5, 2})
		require.NoError(t, Fprint(fb, &out, Ordered("log"), "x=%d %03d y=%.2f %v 100%%", x, x, y, y))
		fb.Return()
	})
	exe := compile(t, c, m)
	s := NewStream()
	_, err := s.Execute(exe)
	require.NoError(t, err)
	require.NoError(t, s.Barrier(ctxT(t)))
	assert.Equal(t, []string{"x=[1 2 3] [001 002 003] y=[0.50 2.00] [0.5 2] 100%"}, out.all())
}
