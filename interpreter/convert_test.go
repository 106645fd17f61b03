package interpreter

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func TestConvert(t *testing.T) {
	const (
		i32min, i32max = int64(math.MinInt32), int64(math.MaxInt32)
		i64min, i64max = int64(math.MinInt64), int64(math.MaxInt64)
		u64max         = uint64(math.MaxUint64)
	)
	tests := []struct {
		name     string
		from, to xla.DType
		in, want []any
		tol      float64
	}{
		// booleans
		{"bool to int", xla.Bool, xla.Int32, []any{true, false}, []any{1, 0}, 0},
		{"bool to float", xla.Bool, xla.Float32, []any{true, false}, []any{1.0, 0.0}, 0},
		{"bool to complex", xla.Bool, xla.Complex64, []any{true}, []any{1 + 0i}, 0},
		{"bool to bf16", xla.Bool, xla.BFloat16, []any{true}, []any{1.0}, 0},
		{"bool to ui4", xla.Bool, xla.Uint4, []any{true, false}, []any{1, 0}, 0},
		{"int to bool", xla.Int32, xla.Bool, []any{0, 5, -1}, []any{false, true, true}, 0},
		{"float to bool", xla.Float32, xla.Bool, []any{0.0, ewtNegZ, ewtNaN, 0.5}, []any{false, false, true, true}, 0},
		{"complex to bool", xla.Complex64, xla.Bool, []any{0i, 1i, 1 + 0i}, []any{false, true, true}, 0},
		// integers wrap
		{"i32 to i8", xla.Int32, xla.Int8, []any{300, -129, 127}, []any{44, 127, 127}, 0},
		{"i8 to ui8", xla.Int8, xla.Uint8, []any{-1}, []any{255}, 0},
		{"ui8 to i8", xla.Uint8, xla.Int8, []any{255}, []any{-1}, 0},
		{"ui32 to i64 zero-extends", xla.Uint32, xla.Int64, []any{uint64(math.MaxUint32)}, []any{int64(math.MaxUint32)}, 0},
		{"i32 to ui64 sign-extends", xla.Int32, xla.Uint64, []any{-1}, []any{u64max}, 0},
		{"i32 to i4", xla.Int32, xla.Int4, []any{8, -9, 15, 16}, []any{-8, 7, -1, 0}, 0},
		{"i32 to ui4", xla.Int32, xla.Uint4, []any{16, -1}, []any{0, 15}, 0},
		{"i4 to i32", xla.Int4, xla.Int32, []any{-8, 7}, []any{-8, 7}, 0},
		{"ui4 to i4", xla.Uint4, xla.Int4, []any{15, 7}, []any{-1, 7}, 0},
		{"i2 to ui2", xla.Int2, xla.Uint2, []any{-1, -2}, []any{3, 2}, 0},
		{"ui2 to i8", xla.Uint2, xla.Int8, []any{3}, []any{3}, 0},
		{"i64 to i32", xla.Int64, xla.Int32, []any{i64max, i64min}, []any{-1, 0}, 0},
		// integers to floats: round to nearest even, each type's overflow
		{"i64 to f32", xla.Int64, xla.Float32, []any{16777217, 16777219, i64max}, []any{16777216.0, 16777220.0, 9223372036854775807.0}, 0},
		{"ui64 to f32", xla.Uint64, xla.Float32, []any{u64max}, []any{18446744073709551615.0}, 0},
		{"ui64 to f64", xla.Uint64, xla.Float64, []any{u64max}, []any{18446744073709551615.0}, 0},
		{"i32 to bf16", xla.Int32, xla.BFloat16, []any{257, 259, -257}, []any{256.0, 260.0, -256.0}, 0},
		{"i32 to f8e4m3fn", xla.Int32, xla.Float8E4M3FN, []any{1000, 17, -449}, []any{ewtNaN, 16.0, -448.0}, 0},
		{"i32 to f8e5m2", xla.Int32, xla.Float8E5M2, []any{100000}, []any{ewtInf}, 0},
		{"i32 to f4e2m1fn", xla.Int32, xla.Float4E2M1FN, []any{100, -5}, []any{6.0, -4.0}, 0},
		{"i32 to f8e8m0fnu", xla.Int32, xla.Float8E8M0FNU, []any{0, 3, -2}, []any{ewtNaN, 4.0, ewtNaN}, 0},
		{"i8 to c128", xla.Int8, xla.Complex128, []any{-3}, []any{-3 + 0i}, 0},
		// floats to integers: truncate and saturate, NaN is 0
		{"f32 to i32", xla.Float32, xla.Int32, []any{1.9, -1.9, 3e9, -3e9, ewtNaN, ewtInf, -ewtInf, 2147483520.0, ewtNegZ},
			[]any{1, -1, i32max, i32min, 0, i32max, i32min, 2147483520, 0}, 0},
		{"f32 to ui8", xla.Float32, xla.Uint8, []any{-1.5, 255.9, 256.0, 1e10, ewtNaN, -0.5}, []any{0, 255, 255, 255, 0, 0}, 0},
		{"f32 to i4", xla.Float32, xla.Int4, []any{100.0, -100.0, 7.9, -8.5}, []any{7, -8, 7, -8}, 0},
		{"f32 to ui2", xla.Float32, xla.Uint2, []any{3.5, 4.0, -1.0}, []any{3, 3, 0}, 0},
		{"f64 to i64", xla.Float64, xla.Int64, []any{9.3e18, -9.3e18, 1e18, ewtNaN}, []any{i64max, i64min, int64(1e18), 0}, 0},
		{"f64 to ui64", xla.Float64, xla.Uint64, []any{1.8e19, 2e19, -5.0, ewtInf}, []any{uint64(18000000000000000000), u64max, 0, u64max}, 0},
		{"bf16 to i8", xla.BFloat16, xla.Int8, []any{200.0, -1.5}, []any{127, -1}, 0},
		{"f8e4m3fn to i32", xla.Float8E4M3FN, xla.Int32, []any{448.0, ewtNaN}, []any{448, 0}, 0},
		{"complex to int", xla.Complex64, xla.Int32, []any{3.7 + 9i}, []any{3}, 0},
		// floats to floats
		{"f64 to f32", xla.Float64, xla.Float32, []any{1e39, 1.0000000596046448, 1.0000000596046449, ewtNaN, ewtNegZ},
			[]any{ewtInf, 1.0, 1.0000001192092896, ewtNaN, ewtNegZ}, 0},
		// Directly from f64: through f32 this value would be a tie and round to 1.
		{"f64 to bf16 rounds once", xla.Float64, xla.BFloat16, []any{1 + 1.0/256 + 1.0/(1<<30)}, []any{1.0078125}, 0},
		{"f32 to f16", xla.Float32, xla.Float16, []any{65520.0, 65519.0, 1e-8, 6e-8, ewtNegZ}, []any{ewtInf, 65504.0, 0.0, math.Ldexp(1, -24), ewtNegZ}, 0},
		{"f32 to f8e5m2", xla.Float32, xla.Float8E5M2, []any{ewtNaN, -ewtInf, 1e6}, []any{ewtNaN, -ewtInf, ewtInf}, 0},
		{"f32 to f8e4m3fnuz", xla.Float32, xla.Float8E4M3FNUZ, []any{ewtNegZ, -1e-6, ewtInf}, []any{0.0, 0.0, ewtNaN}, 0},
		{"f32 to f6e3m2fn", xla.Float32, xla.Float6E3M2FN, []any{ewtInf, ewtNaN}, []any{28.0, ewtNegZ}, 0},
		{"f16 to f32", xla.Float16, xla.Float32, []any{65504.0, math.Ldexp(1, -24), -ewtInf}, []any{65504.0, math.Ldexp(1, -24), -ewtInf}, 0},
		{"bf16 to f16", xla.BFloat16, xla.Float16, []any{99840.0, 1.0}, []any{ewtInf, 1.0}, 0},
		{"f8e4m3fn to bf16", xla.Float8E4M3FN, xla.BFloat16, []any{448.0, ewtNaN}, []any{448.0, ewtNaN}, 0},
		{"f8e5m2 to f8e4m3fn", xla.Float8E5M2, xla.Float8E4M3FN, []any{57344.0, 0.5}, []any{ewtNaN, 0.5}, 0},
		{"f32 to f64", xla.Float32, xla.Float64, []any{0.1, ewtNaN}, []any{float64(float32(0.1)), ewtNaN}, 0},
		// complex
		{"f32 to c64", xla.Float32, xla.Complex64, []any{1.5}, []any{1.5 + 0i}, 0},
		{"c128 to f64", xla.Complex128, xla.Float64, []any{1 + 2i}, []any{1.0}, 0},
		{"c128 to c64", xla.Complex128, xla.Complex64, []any{complex(1e39, 1)}, []any{complex(ewtInf, 1)}, 0},
		{"c64 to c128", xla.Complex64, xla.Complex128, []any{1.5 + 2.5i}, []any{1.5 + 2.5i}, 0},
		{"c64 to bf16", xla.Complex64, xla.BFloat16, []any{257 + 1i}, []any{256.0}, 0},
		{"same type", xla.Int4, xla.Int4, []any{-8, 7}, []any{-8, 7}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ewtRun1(t, "stablehlo.convert", "", tt.to, ewtTensor(tt.from, tt.in...))
			ewtCheck(t, out, tt.tol, tt.want, tt.name)
		})
	}
}

// Every pair of element types converts without error, and round trips
// through a wider type are exact.
func TestConvertEveryPair(t *testing.T) {
	var types []xla.DType
	for _, dt := range xla.AllDTypes() {
		if StorageOf(dt) != StorageInvalid {
			types = append(types, dt)
		}
	}
	for _, from := range types {
		in := NewTensor(xla.MakeShape(from, 3))
		for i := range 3 {
			if from == xla.Bool {
				ewtSet(in, i, i == 1)
			} else {
				ewtSet(in, i, float64(i))
			}
		}
		for _, to := range types {
			out := NewTensor(xla.MakeShape(to, 3))
			require.NoError(t, Convert(out, in), "%v -> %v", from, to)
			back := NewTensor(xla.MakeShape(from, 3))
			require.NoError(t, Convert(back, out), "%v -> %v -> %v", from, to, from)
			if to == xla.Float8E8M0FNU || from == xla.Float8E8M0FNU {
				continue // no zero
			}
			if from != xla.Bool && (to == xla.Bool || to == xla.Int1 || to == xla.Uint1 || to == xla.Int2) {
				continue // 2 does not fit
			}
			assert.Equal(t, in.Host(), back.Host(), "%v -> %v -> %v", from, to, from)
		}
	}
}

func TestConvertErrors(t *testing.T) {
	_, err := ewtKernel("stablehlo.convert", nil, stablehlo.Tensor(xla.Float32, 3), ewtTensor(xla.Int32, 1, 2))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not match the shape of the operand's type tensor<2xi32>")
	_, err = ewtKernel("stablehlo.convert", nil, stablehlo.Tensor(xla.Float32, 2))
	require.Error(t, err)
	err = Convert(NewTensor(xla.MakeShape(xla.Float32, 3)), ewtTensor(xla.Int32, 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "different sizes")
}

// ewtBits returns the raw bits of a tensor's elements.
func ewtBits(t *Tensor) []uint64 {
	words, _ := cvRawBits(t)
	return words
}

func TestBitcastConvert(t *testing.T) {
	f64 := ewtShaped(xla.Float64, nil, math.Float64frombits(0x0123456789ABCDEF))
	t.Run("spec: f64 to 4xf16", func(t *testing.T) {
		out, err := ewtRun("stablehlo.bitcast_convert", "", []xla.Shape{xla.MakeShape(xla.Float16, 4)}, f64)
		require.NoError(t, err)
		assert.Equal(t, []uint64{0xCDEF, 0x89AB, 0x4567, 0x0123}, ewtBits(out[0]))
		back, err := ewtRun("stablehlo.bitcast_convert", "", []xla.Shape{xla.MakeShape(xla.Float64)}, out[0])
		require.NoError(t, err)
		assert.Equal(t, []uint64{0x0123456789ABCDEF}, ewtBits(back[0]))
	})
	tests := []struct {
		name string
		in   *Tensor
		to   xla.Shape
		want []uint64
	}{
		{"f32 to i32", ewtTensor(xla.Float32, 1.0, ewtNegZ), xla.MakeShape(xla.Int32, 2), []uint64{0x3f800000, 0x80000000}},
		{"i32 to 4xui8", ewtTensor(xla.Int32, 0x01020304), xla.MakeShape(xla.Uint8, 1, 4), []uint64{4, 3, 2, 1}},
		{"2xi4 to i8", ewtShaped(xla.Int4, []int64{1, 2}, -1, 1), xla.MakeShape(xla.Int8, 1), []uint64{0x1f}},
		{"i8 to 2xi4", ewtTensor(xla.Int8, 0x1f), xla.MakeShape(xla.Int4, 1, 2), []uint64{0xf, 1}},
		{"ui8 to 2xui4", ewtTensor(xla.Uint8, 0xab), xla.MakeShape(xla.Uint4, 1, 2), []uint64{0xb, 0xa}},
		{"ui8 to 4xui2", ewtTensor(xla.Uint8, 0xe4), xla.MakeShape(xla.Uint2, 1, 4), []uint64{0, 1, 2, 3}},
		{"c64 to i64", ewtTensor(xla.Complex64, 1+2i), xla.MakeShape(xla.Int64, 1), []uint64{0x400000003f800000}},
		{"c128 to 2xf64", ewtTensor(xla.Complex128, 1+2i), xla.MakeShape(xla.Float64, 1, 2), []uint64{math.Float64bits(1), math.Float64bits(2)}},
		{"4xf32 to c128", ewtShaped(xla.Float32, []int64{1, 4}, 1.0, 0.0, 2.0, 0.0), xla.MakeShape(xla.Complex128, 1),
			[]uint64{0x3f800000, 0x40000000}},
		{"bf16 to i16", ewtTensor(xla.BFloat16, 1.0), xla.MakeShape(xla.Int16, 1), []uint64{0x3f80}},
		{"f8e4m3fn to i8", ewtTensor(xla.Float8E4M3FN, 448.0, ewtNaN), xla.MakeShape(xla.Int8, 2), []uint64{0x7e, 0x7f}},
		{"ui8 to f8e5m2 (NaN payload)", ewtTensor(xla.Uint8, 0x7d), xla.MakeShape(xla.Float8E5M2, 1), []uint64{0x7d}},
		{"f16 to ui16", ewtTensor(xla.Float16, -2.0), xla.MakeShape(xla.Uint16, 1), []uint64{0xc000}},
		{"2xf16 to f32", ewtTensor(xla.Float16, 0.0, 1.875), xla.MakeShape(xla.Float32), []uint64{0x3f800000}},
		{"bool to bool", ewtTensor(xla.Bool, true, false), xla.MakeShape(xla.Bool, 2), []uint64{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ewtRun("stablehlo.bitcast_convert", "", []xla.Shape{tt.to}, tt.in)
			require.NoError(t, err)
			got := ewtBits(out[0])
			assert.Equal(t, tt.want, got)
			// And back.
			back, err := ewtRun("stablehlo.bitcast_convert", "", []xla.Shape{tt.in.Shape}, out[0])
			require.NoError(t, err)
			assert.Equal(t, ewtBits(tt.in), ewtBits(back[0]))
		})
	}
	t.Run("shape errors", func(t *testing.T) {
		for _, to := range []stablehlo.TensorType{
			stablehlo.Tensor(xla.Float64, 2),    // wider elements, same shape
			stablehlo.Tensor(xla.Int16, 2),      // narrower elements need a new dimension
			stablehlo.Tensor(xla.Int16, 2, 3),   // of size 2
			stablehlo.Tensor(xla.Int32, 3),      // same width, other shape
			stablehlo.Tensor(xla.Complex128, 1), // 2 x 32 bits is not 128
		} {
			_, err := ewtKernel("stablehlo.bitcast_convert", nil, to, ewtTensor(xla.Float32, 1.0, 2.0))
			require.Error(t, err, "%v", to)
			assert.Contains(t, err.Error(), "cannot bitcast tensor<2xf32> to "+to.String())
		}
	})
}

func TestReducePrecision(t *testing.T) {
	attrs := func(e, m int) string {
		return "exponent_bits = " + strconv.Itoa(e) + " : i32, mantissa_bits = " + strconv.Itoa(m) + " : i32"
	}
	f16sub := math.Ldexp(3, -24) // an f16 subnormal
	tests := []struct {
		name string
		dt   xla.DType
		e, m int
		in   []any
		want []any
		tol  float64
	}{
		{"spec f64 to f16 format", xla.Float64, 5, 10,
			[]any{ewtInf, ewtNaN, math.Float64frombits(1), 0.0, 65519.0, 65520.0},
			[]any{ewtInf, ewtNaN, 0.0, 0.0, 65504.0, ewtInf}, 0},
		{"f32 to bf16 format", xla.Float32, 8, 7, []any{1.00390625, 1.01171875, -3e38}, []any{1.0, 1.015625, float64(RoundNarrow(xla.BFloat16, -3e38))}, 0},
		// Without mantissa bits a tie goes to the even exponent: 1.5 (2^0 odd
		// biased exponent) rounds up to 2, 3 (between 2^1 and 2^2) down to 2.
		{"no mantissa", xla.Float32, 8, 0, []any{1.5, 1.4, -1.5, 3.0, ewtNaN}, []any{2.0, 1.0, -2.0, 2.0, ewtInf}, 0},
		{"flush below normal", xla.Float32, 5, 10, []any{1e-5, -1e-5, math.Ldexp(1, -14)}, []any{0.0, ewtNegZ, math.Ldexp(1, -14)}, 0},
		{"overflow keeps sign", xla.Float64, 5, 2, []any{-1e6, 57344.0}, []any{-ewtInf, 57344.0}, 0},
		{"bf16 operand", xla.BFloat16, 5, 10, []any{1e-6, 3.0}, []any{0.0, 3.0}, 0},
		{"f16 operand keeps subnormals", xla.Float16, 5, 10, []any{f16sub, 65504.0}, []any{f16sub, 65504.0}, 0},
		{"f16 operand to 1 mantissa bit", xla.Float16, 5, 1, []any{1.75, 1.25}, []any{2.0, 1.0}, 0},
		{"wider than the type", xla.Float32, 11, 52, []any{0.1}, []any{float64(float32(0.1))}, 0},
		// Types whose top exponent holds finite values: a rounding carry
		// out of it overflows (their NaN, or the MX kinds' saturation),
		// it does not flip the sign (448 once gave -0) nor give a finite
		// value larger than the input (32 once gave 256).
		{"f8E4M3FN carry overflows", xla.Float8E4M3FN, 4, 1, []any{448.0, -448.0}, []any{ewtNaN, ewtNaN}, 0},
		{"f8E4M3FN exponent overflow", xla.Float8E4M3FN, 3, 3, []any{448.0, 32.0, 16.0, 1.5}, []any{ewtNaN, ewtNaN, ewtNaN, 1.5}, 0},
		{"f8E4M3FNUZ overflow", xla.Float8E4M3FNUZ, 4, 2, []any{-240.0, 240.0}, []any{ewtNaN, ewtNaN}, 0},
		{"f4E2M1FN saturates", xla.Float4E2M1FN, 2, 0, []any{6.0, -6.0}, []any{6.0, -6.0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ewtRun1(t, "stablehlo.reduce_precision", attrs(tt.e, tt.m), xla.Invalid, ewtTensor(tt.dt, tt.in...))
			ewtCheck(t, out, tt.tol, tt.want, tt.name)
		})
	}
	int32Attr := func(name string, v int64) stablehlo.NamedAttr {
		return stablehlo.NamedAttr{Name: name, Value: stablehlo.IntAttr{Value: v, Type: xla.Int32}}
	}
	res := stablehlo.Tensor(xla.Float32, 1)
	_, err := ewtKernel("stablehlo.reduce_precision", []stablehlo.NamedAttr{int32Attr("exponent_bits", 0), int32Attr("mantissa_bits", 1)}, res, ewtTensor(xla.Float32, 1.0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exponent_bits must be >= 1")
	_, err = ewtKernel("stablehlo.reduce_precision", []stablehlo.NamedAttr{int32Attr("mantissa_bits", 1)}, res, ewtTensor(xla.Float32, 1.0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exponent_bits must be an integer")
	_, err = ewtKernel("stablehlo.reduce_precision", []stablehlo.NamedAttr{int32Attr("exponent_bits", 5), int32Attr("mantissa_bits", 1)},
		stablehlo.Tensor(xla.Int32, 1), ewtTensor(xla.Int32, 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not defined for element type i32")
}

// TestConvertWideIntsToNarrowFloatsRoundOnce converts 64-bit integers past
// 2^53 to bf16 and f8E8M0FNU: rounded once from the exact value (the
// float64 in between once moved them onto a tie they are not on).
func TestConvertWideIntsToNarrowFloatsRoundOnce(t *testing.T) {
	for _, c := range []struct {
		from, to xla.DType
		in       any
		want     float64
	}{
		{xla.Int64, xla.BFloat16, int64(1<<62 + 1<<54 + 1), math.Ldexp(1, 62) + math.Ldexp(1, 55)},
		{xla.Int64, xla.BFloat16, int64(-(1<<62 + 1<<54 + 1)), -(math.Ldexp(1, 62) + math.Ldexp(1, 55))},
		{xla.Uint64, xla.BFloat16, uint64(1<<63 + 1<<55 + 1), math.Ldexp(1, 63) + math.Ldexp(1, 56)},
		{xla.Int64, xla.Float8E8M0FNU, int64(3<<60 - 1), math.Ldexp(1, 61)},
		{xla.Int64, xla.BFloat16, int64(1<<62 + 1<<54 + 1<<38), math.Ldexp(1, 62) + math.Ldexp(1, 55)},
		{xla.Int64, xla.BFloat16, int64(1<<62 + 1<<54), math.Ldexp(1, 62)}, // a true tie: to even
	} {
		out := ewtRun1(t, "stablehlo.convert", "", c.to, ewtTensor(c.from, c.in))
		ewtCheck(t, out, 0, []any{c.want}, fmt.Sprintf("%v %v -> %v", c.in, c.from, c.to))
	}
}
