package interpreter

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Every op of this part has a kernel.
func TestElementwiseKernelsRegistered(t *testing.T) {
	ops := []string{"abs", "add", "and", "atan2", "cbrt", "ceil", "count_leading_zeros", "complex", "cosine",
		"divide", "exponential", "exponential_minus_one", "floor", "imag", "is_finite", "log", "log_plus_one",
		"logistic", "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real",
		"remainder", "round_nearest_afz", "round_nearest_even", "rsqrt", "shift_left", "shift_right_arithmetic",
		"shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor", "compare", "select",
		"clamp", "convert", "bitcast_convert", "reduce_precision", "iota", "constant"}
	for _, op := range ops {
		assert.NotNil(t, kernelFor("stablehlo."+op), op)
	}
}

// A program built with the builder runs and matches plain Go.
func TestElementwiseBuilderProgram(t *testing.T) {
	b := stablehlo.NewBuilder("elementwise")
	f := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4), stablehlo.Tensor(xla.Int32, 4))
	x, y := f.Arg(0), f.Arg(1)
	sum := f.Add(f.Exponential(x), f.Convert(y, xla.Float32))
	three := stablehlo.Splat(f, float32(3), 4)
	big := f.Compare(sum, three, stablehlo.CompareGT, stablehlo.CompareAuto)
	d := f.Select(big, sum, f.Negate(sum))
	e := f.Clamp(stablehlo.ConstantScalar(f, float32(-5)), d, stablehlo.ConstantScalar(f, float32(5)))
	io := f.Iota(stablehlo.Tensor(xla.Int32, 4), 0)
	f.Return(e, io, f.Convert(e, xla.BFloat16), f.BitcastConvert(x, xla.Int32), f.ReducePrecision(x, 5, 10),
		f.ShiftLeft(y, io), f.Remainder(y, io))
	m, err := b.Build()
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)

	xs := []float32{0, 1, -2, 0.1}
	ys := []int32{1, -3, 7, 100}
	out, err := p.Run(context.Background(), Device{}, []Value{
		&Tensor{Shape: xla.MakeShape(xla.Float32, 4), Data: xs},
		&Tensor{Shape: xla.MakeShape(xla.Int32, 4), Data: ys},
	})
	require.NoError(t, err)
	var wantE, wantBF []float32
	var wantBits, wantShl, wantRem []int32
	var wantRP []float32
	for i := range xs {
		s := float32(math.Exp(float64(xs[i]))) + float32(ys[i])
		if !(s > 3) {
			s = -s
		}
		s = min(max(s, -5), 5)
		wantE = append(wantE, s)
		wantBF = append(wantBF, RoundNarrow(xla.BFloat16, s))
		wantBits = append(wantBits, int32(math.Float32bits(xs[i])))
		wantRP = append(wantRP, RoundNarrow(xla.Float16, xs[i]))
		wantShl = append(wantShl, ys[i]<<i)
		if i == 0 {
			wantRem = append(wantRem, ys[i]) // x % 0 is x
		} else {
			wantRem = append(wantRem, ys[i]%int32(i))
		}
	}
	assert.Equal(t, wantE, out[0].(*Tensor).Data)
	assert.Equal(t, []int32{0, 1, 2, 3}, out[1].(*Tensor).Data)
	assert.Equal(t, wantBF, out[2].(*Tensor).Data)
	assert.Equal(t, wantBits, out[3].(*Tensor).Data)
	assert.Equal(t, wantRP, out[4].(*Tensor).Data)
	assert.Equal(t, wantShl, out[5].(*Tensor).Data)
	assert.Equal(t, wantRem, out[6].(*Tensor).Data)
}
