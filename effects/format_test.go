package effects

import (
	"fmt"
	"math/rand/v2"
	"slices"
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
	f8small := Array{DType: xla.Float8E4M3FN, Data: []byte{0x1d}}
	i4 := Array{DType: xla.Int4, Dims: []int64{3}, Data: []byte{0xff, 0x07, 0xf8}}
	u4 := Array{DType: xla.Uint4, Dims: []int64{3}, Data: []byte{0x0f, 0x00, 0x0a}}
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
		// An array of no elements prints as Go prints such nested slices,
		// but a long dim shows three rows at each end: the text of an
		// [2^40, 0] array filled memory (review).
		{"%v", Array{DType: xla.Float32, Dims: []int64{2, 0}}, "[[] []]"},
		{"%v", Array{DType: xla.Float32, Dims: []int64{7, 0}}, "[[] [] [] [] [] [] []]"},
		{"%v", Array{DType: xla.Float32, Dims: []int64{8, 0}}, "[[] [] [] ... [] [] []]"},
		{"%d", Array{DType: xla.Int32, Dims: []int64{1 << 40, 0}}, "[[] [] [] ... [] [] []]"},
		{"%v", Array{DType: xla.Float32, Dims: []int64{1 << 40, 2, 0}}, "[[[] []] [[] []] [[] []] ... [[] []] [[] []] [[] []]]"},
		{"%v", Array{DType: xla.Float32, Dims: []int64{0, 1 << 40}}, "[]"},
		// ... and at most 64 empty rows in all ([7, 7, ..., 0] was 7^rank).
		{"%v", Array{DType: xla.Float32, Dims: []int64{7, 7, 7, 0}},
			"[[" + strings.TrimSuffix(strings.Repeat("[[] [] [] [] [] [] []] ", 7), " ") + "] " +
				"[" + strings.Repeat("[[] [] [] [] [] [] []] ", 2) + "[[] ...] ...] ...]"},
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
		// Element types without a Go type print their values, which
		// take the verbs of the Go type the interpreter holds them in
		// (they printed the host bytes, 0x38, and took %v and %s only;
		// found in review).
		{"%v", f8, "[1 2]"},
		{"%5v", f8, "[    1     2]"},
		{"%.2f", f8, "[1.00 2.00]"},
		{"%d", f8, "%!d(effects.Array=[1 2])"},
		{"%v", i4, "[-1 7 -8]"},
		{"%d", i4, "[-1 7 -8]"},
		{"%+03d", i4, "[-01 +07 -08]"},
		{"%x", u4, "[f 0 a]"},
		{"%v", u4, "[15 0 10]"},
		{"%f", i4, "%!f(effects.Array=[-1 7 -8])"},
		{"%v", f8small, "0.1015625"},
		{"%.3e", f8small, "1.016e-01"},
		{"%v", must(ArrayOf([]complex64{1 - 2i}, 1)), "[(1-2i)]"},
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
	i4 := stablehlo.Tensor(xla.Int4, 2)
	for _, c := range []struct {
		format string
		args   []stablehlo.Type
		want   []string // nil: no error
	}{
		{"x=%d %v %v", []stablehlo.Type{f32x3}, []string{
			`stablehlo: effects.print(tensor<3xf32>) at format_test.go:`,
			`: print format "x=%d %v %v": `,
			"%d does not format value 0 (tensor<3xf32>): f32 elements take %v %s %b %e %E %f %F %g %G %x %X",
			"%v and %v have no value (the format's verbs take 3 values, 1 given)"}},
		// A verb without a value before the first argument index
		// (printed "y=%!v(MISSING)" at run time; found in review).
		{"x=%v y=%v again=%[1]d", []stablehlo.Type{i32x3}, []string{"%v has no value (the values are numbered from 1 to 1)"}},
		{"%v %v %[1]v %v %x", []stablehlo.Type{i32x3}, []string{"%v, %v and %x have no value (the values are numbered from 1 to 1)"}},
		{"%v", []stablehlo.Type{i32x3, i32x3}, []string{"the format's verbs take 1 value, 2 given"}},
		{"%v %v", nil, []string{"the format's verbs take 2 values, 0 given"}},
		{"%d", []stablehlo.Type{boolT}, []string{"%d does not format value 0 (tensor<i1>): i1 elements take %v %s %t"}},
		{"%f", []stablehlo.Type{i32x3}, []string{"%f does not format value 0 (tensor<3xi32>): i32 elements take %v %s %b %c %d %o %O %q %x %X %U"}},
		{"%t", []stablehlo.Type{i32x3}, []string{"%t does not format value 0"}},
		{"%p", []stablehlo.Type{i32x3}, []string{"%p does not format value 0"}},
		{"%w", []stablehlo.Type{i32x3}, []string{"%w does not format value 0"}},
		{"%d", []stablehlo.Type{f8}, []string{"%d does not format value 0 (tensor<2xf8E4M3FN>): f8E4M3FN elements take %v %s %b %e %E %f %F %g %G %x %X"}},
		{"%f", []stablehlo.Type{i4}, []string{"%f does not format value 0 (tensor<2xi4>): i4 elements take %v %s %b %c %d %o %O %q %x %X %U"}},
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
		{"%.2f %d %x", []stablehlo.Type{f8, i4, i4}, nil},
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
			// One package prefix, and the operands' types, as the
			// builder's own errors (it read "stablehlo: effects.print()
			// at f.go:13: effects: print format ..."; found in review).
			msg := err.Error()
			assert.Equal(t, 1, strings.Count(msg, "stablehlo: "), msg)
			assert.NotContains(t, msg, "effects: ")
			assert.Contains(t, msg, "effects.print("+typeList(c.args)+") at format_test.go:")
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
	got := printOnce(t, func(fb *stablehlo.FuncBuilder, out *lines) {
		x := stablehlo.Constant(fb, []int32{1, 2, 3})
		y := stablehlo.Constant(fb, []float32{0.5, 2})
		require.NoError(t, Fprint(fb, out, Ordered("log"), "x=%d %03d y=%.2f %v 100%%", x, x, y, y))
	})
	assert.Equal(t, []string{"x=[1 2 3] [001 002 003] y=[0.50 2.00] [0.5 2] 100%"}, got)
}

// printOnce builds a program whose body prints to out, runs it once on
// the interpreter in a new stream and returns the lines printed.
func printOnce(t *testing.T, body func(fb *stablehlo.FuncBuilder, out *lines)) []string {
	t.Helper()
	c := openInterpreter(t, 1)
	var out lines
	exe := compile(t, c, build(t, func(fb *stablehlo.FuncBuilder) {
		body(fb, &out)
		fb.Return()
	}))
	s := NewStream()
	_, err := s.Execute(exe)
	require.NoError(t, err)
	require.NoError(t, s.Barrier(ctxT(t)))
	return out.all()
}

// typeList joins types as a BuildError prints its operands.
func typeList(ts []stablehlo.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// usedArray is a print value that records whether fmt formatted it (its
// Format called) and formats as the Array it holds.
type usedArray struct {
	a    Array
	used *bool
}

func (u usedArray) Format(f fmt.State, verb rune) {
	*u.used = true
	u.a.Format(f, verb)
}

// The format check agrees with fmt.Sprintf on random formats: the check
// finds a problem exactly when fmt would print one (%!v(MISSING),
// %!(EXTRA ...), %!(BADINDEX), %!(NOVERB), %!(BADWIDTH), a bad verb's
// %!f(...)) or leaves a value unformatted (with argument indexes fmt does
// not say so). A verb without a value before the first argument index
// passed the check (found in review).
func TestPrintFormatCheckMatchesFmt(t *testing.T) {
	pieces := []string{"%", "%", "%", "%", "v", "d", "x", "s", "q", "f", "t", "y", "%%",
		"[1]", "[2]", "[3]", "[0]", "[x]", "[", "]", "*", ".", ".2", "2", "13", "9999999",
		"-", "+", "#", " ", "0", "a", "=", "\n"}
	i32, f32, pred := stablehlo.Tensor(xla.Int32, 2), stablehlo.Tensor(xla.Float32, 2), stablehlo.Tensor(xla.Bool, 2)
	arrays := map[xla.DType]Array{
		xla.Int32:   {DType: xla.Int32, Dims: []int64{2}, Data: make([]byte, 8)},
		xla.Float32: {DType: xla.Float32, Dims: []int64{2}, Data: make([]byte, 8)},
		xla.Bool:    {DType: xla.Bool, Dims: []int64{2}, Data: make([]byte, 2)},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	failures := 0
	for iter := 0; iter < 30000 && failures < 10; iter++ {
		var sb strings.Builder
		for k := rng.IntN(9) + 1; k > 0; k-- {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		format := sb.String()
		types := make([]stablehlo.Type, rng.IntN(4))
		for i := range types {
			types[i] = []stablehlo.Type{i32, i32, f32, pred}[rng.IntN(4)]
		}
		b := stablehlo.NewBuilder("m")
		fb := b.NewFunction("main", types...)
		checkErr := checkFormat(format, fb.Args())

		used := make([]bool, len(types))
		args := make([]any, len(types))
		for i, ty := range types {
			args[i] = usedArray{a: arrays[ty.(stablehlo.TensorType).DType], used: &used[i]}
		}
		out := fmt.Sprintf(format, args...)
		fmtBad := strings.Contains(out, "%!") || slices.Contains(used, false)
		if fmtBad != (checkErr != nil) {
			failures++
			t.Errorf("format %q with %d values: fmt prints %q (values formatted: %v), the check says %v", format, len(types), out, used, checkErr)
		}
	}
}

// A bad format where the builder holds an earlier error is returned with
// this package's prefix (once), and the builder keeps its first error.
func TestPrintFormatErrorAfterEarlierError(t *testing.T) {
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main")
	fb.Arg(5) // out of range: the builder's first error
	err := Print(fb, "%v")
	assert.EqualError(t, err, `effects: print format "%v": %v has no value (the format's verbs take 1 value, 0 given)`)
	_, berr := b.Build()
	assert.ErrorContains(t, berr, "argument 5 out of range")
}

// A print shows the values of sub-byte integers and float8 elements, as
// Tensor.String and halo run do (it printed their host bytes, 0xff for an
// i4 -1, and took %v and %s only; found in review).
func TestPrintSubByteValues(t *testing.T) {
	got := printOnce(t, func(fb *stablehlo.FuncBuilder, out *lines) {
		i4 := fb.ConstantBytes(stablehlo.Tensor(xla.Int4, 2), []byte{0xff, 0x07})
		u2 := fb.ConstantBytes(stablehlo.Tensor(xla.Uint2, 2), []byte{0x03, 0x01})
		f8 := fb.ConstantBytes(stablehlo.Tensor(xla.Float8E4M3FN, 1), []byte{0x1d})
		require.NoError(t, Fprint(fb, out, Ordered("log"), "i4=%v %+d u2=%v %b f8=%v %.3f", i4, i4, u2, u2, f8, f8))
	})
	assert.Equal(t, []string{"i4=[-1 7] [-1 +7] u2=[3 1] [11 1] f8=[0.1015625] [0.102]"}, got)
}
