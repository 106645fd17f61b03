package interpreter

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

type ewtBinCase struct {
	op        string
	dt        xla.DType
	lhs, rhs  []any
	want      []any
	tol       float64
	resultDT  xla.DType
	wantError string
}

func TestBinaryOps(t *testing.T) {
	const (
		i32min, i32max = int64(math.MinInt32), int64(math.MaxInt32)
		i64min         = int64(math.MinInt64)
	)
	tests := []ewtBinCase{
		// add
		{op: "add", dt: xla.Int32, lhs: []any{i32max, -1, 2}, rhs: []any{1, i32min, 3}, want: []any{i32min, i32max, 5}},
		{op: "add", dt: xla.Int4, lhs: []any{7, -8, 3}, rhs: []any{1, -1, 5}, want: []any{-8, 7, -8}},
		{op: "add", dt: xla.Uint4, lhs: []any{15, 9}, rhs: []any{1, 9}, want: []any{0, 2}},
		{op: "add", dt: xla.Int2, lhs: []any{1, -2}, rhs: []any{1, -1}, want: []any{-2, 1}},
		{op: "add", dt: xla.Uint2, lhs: []any{3}, rhs: []any{2}, want: []any{1}},
		{op: "add", dt: xla.Bool, lhs: []any{true, false, true}, rhs: []any{true, false, false}, want: []any{true, false, true}},
		{op: "add", dt: xla.Float32, lhs: []any{ewtInf, 3e38, ewtNegZ, 0.0}, rhs: []any{-ewtInf, 3e38, ewtNegZ, ewtNegZ}, want: []any{ewtNaN, ewtInf, ewtNegZ, 0.0}},
		{op: "add", dt: xla.BFloat16, lhs: []any{1.0, 1.0}, rhs: []any{0.00390625, 0.01171875}, want: []any{1.0, 1.015625}},
		{op: "add", dt: xla.Float16, lhs: []any{65504.0, 65504.0}, rhs: []any{8.0, 16.0}, want: []any{65504.0, ewtInf}},
		{op: "add", dt: xla.Complex64, lhs: []any{1 + 2i}, rhs: []any{3 + 4i}, want: []any{4 + 6i}},
		{op: "add", dt: xla.Uint64, lhs: []any{uint64(math.MaxUint64)}, rhs: []any{1}, want: []any{0}},
		// subtract
		{op: "subtract", dt: xla.Uint8, lhs: []any{0}, rhs: []any{1}, want: []any{255}},
		{op: "subtract", dt: xla.Int8, lhs: []any{-128}, rhs: []any{1}, want: []any{127}},
		{op: "subtract", dt: xla.Float32, lhs: []any{ewtInf, 0.0}, rhs: []any{ewtInf, 0.0}, want: []any{ewtNaN, 0.0}},
		{op: "subtract", dt: xla.Complex128, lhs: []any{1 + 2i}, rhs: []any{3 + 5i}, want: []any{-2 - 3i}},
		{op: "subtract", dt: xla.Bool, lhs: []any{true}, rhs: []any{true}, wantError: "not defined for element type i1"},
		// multiply
		{op: "multiply", dt: xla.Int32, lhs: []any{65536, -3}, rhs: []any{65536, 7}, want: []any{0, -21}},
		{op: "multiply", dt: xla.Int4, lhs: []any{4, 3}, rhs: []any{4, 3}, want: []any{0, -7}},
		{op: "multiply", dt: xla.Bool, lhs: []any{true, true}, rhs: []any{true, false}, want: []any{true, false}},
		{op: "multiply", dt: xla.Complex128, lhs: []any{1 + 2i}, rhs: []any{3 + 4i}, want: []any{-5 + 10i}},
		{op: "multiply", dt: xla.Float8E4M3FN, lhs: []any{16.0, 2.0}, rhs: []any{32.0, 0.5}, want: []any{ewtNaN, 1.0}},
		{op: "multiply", dt: xla.Float4E2M1FN, lhs: []any{6.0, 0.5}, rhs: []any{6.0, 0.5}, want: []any{6.0, 0.0}}, // saturates; 0.25 ties to 0
		// divide
		{op: "divide", dt: xla.Int32, lhs: []any{7, -7, 7, 1, i32min, 0}, rhs: []any{2, 2, -2, 0, -1, 0}, want: []any{3, -3, -3, -1, i32min, -1}},
		{op: "divide", dt: xla.Int64, lhs: []any{i64min, -5}, rhs: []any{-1, 0}, want: []any{i64min, -1}},
		{op: "divide", dt: xla.Uint32, lhs: []any{7, 7}, rhs: []any{0, 2}, want: []any{uint64(math.MaxUint32), 3}},
		{op: "divide", dt: xla.Int4, lhs: []any{-8, 5, -7}, rhs: []any{-1, 0, 2}, want: []any{-8, -1, -3}},
		{op: "divide", dt: xla.Uint4, lhs: []any{5}, rhs: []any{0}, want: []any{15}},
		{op: "divide", dt: xla.Float32, lhs: []any{1.0, -1.0, 0.0, 1.0, 17.1}, rhs: []any{0.0, 0.0, 0.0, ewtNegZ, 3.0}, want: []any{ewtInf, -ewtInf, ewtNaN, -ewtInf, 5.7}, tol: 1e-7},
		{op: "divide", dt: xla.Complex128, lhs: []any{1 + 2i}, rhs: []any{3 + 4i}, want: []any{0.44 + 0.08i}, tol: 1e-15},
		// remainder
		{op: "remainder", dt: xla.Int64, lhs: []any{17, -17, 17, -17}, rhs: []any{3, 3, -3, -3}, want: []any{2, -2, 2, -2}},
		{op: "remainder", dt: xla.Int32, lhs: []any{5, i32min}, rhs: []any{0, -1}, want: []any{5, 0}},
		{op: "remainder", dt: xla.Uint8, lhs: []any{5, 7}, rhs: []any{0, 4}, want: []any{5, 3}},
		{op: "remainder", dt: xla.Int4, lhs: []any{-8, 7}, rhs: []any{-1, 0}, want: []any{0, 7}},
		{op: "remainder", dt: xla.Float32, lhs: []any{5.5, -5.5, 1.0, ewtInf, 1.0, ewtNegZ}, rhs: []any{2.0, 2.0, 0.0, 1.0, ewtInf, 1.0}, want: []any{1.5, -1.5, ewtNaN, ewtNaN, 1.0, ewtNegZ}},
		{op: "remainder", dt: xla.Complex64, lhs: []any{1 + 1i}, rhs: []any{1 + 1i}, wantError: "not defined for element type complex<f32>"},
		// maximum and minimum
		{op: "maximum", dt: xla.Float32, lhs: []any{ewtNaN, 1.0, ewtNegZ, 0.0, -ewtInf}, rhs: []any{1.0, ewtNaN, 0.0, ewtNegZ, 1.0}, want: []any{ewtNaN, ewtNaN, 0.0, 0.0, 1.0}},
		{op: "minimum", dt: xla.Float64, lhs: []any{ewtNaN, 1.0, ewtNegZ, 0.0, ewtInf}, rhs: []any{1.0, ewtNaN, 0.0, ewtNegZ, 1.0}, want: []any{ewtNaN, ewtNaN, ewtNegZ, ewtNegZ, 1.0}},
		{op: "maximum", dt: xla.Uint32, lhs: []any{0}, rhs: []any{uint64(math.MaxUint32)}, want: []any{uint64(math.MaxUint32)}},
		{op: "minimum", dt: xla.Int32, lhs: []any{-1, 5}, rhs: []any{1, i32min}, want: []any{-1, i32min}},
		{op: "maximum", dt: xla.Int4, lhs: []any{-8, 7}, rhs: []any{-1, -8}, want: []any{-1, 7}},
		{op: "maximum", dt: xla.Bool, lhs: []any{true, false}, rhs: []any{false, false}, want: []any{true, false}},
		{op: "minimum", dt: xla.Bool, lhs: []any{true, true}, rhs: []any{false, true}, want: []any{false, true}},
		{op: "maximum", dt: xla.Complex128, lhs: []any{1 + 5i, 1 + 5i}, rhs: []any{2 + 0i, 1 + 6i}, want: []any{2 + 0i, 1 + 6i}},
		{op: "minimum", dt: xla.Complex128, lhs: []any{1 + 5i, 1 + 5i}, rhs: []any{2 + 0i, 1 + 6i}, want: []any{1 + 5i, 1 + 5i}},
		{op: "maximum", dt: xla.BFloat16, lhs: []any{ewtNegZ}, rhs: []any{0.0}, want: []any{0.0}},
		// power
		{op: "power", dt: xla.Int32, lhs: []any{2, 2, 3, 0, 2, 1, -1, -1, 0, -3},
			rhs:  []any{10, 31, 0, 0, -1, -5, -3, -2, -1, 3},
			want: []any{1024, i32min, 1, 1, 0, 1, -1, 1, 0, -27}},
		{op: "power", dt: xla.Uint8, lhs: []any{2, 3}, rhs: []any{8, 5}, want: []any{0, 243}},
		{op: "power", dt: xla.Int4, lhs: []any{2, 3}, rhs: []any{3, 2}, want: []any{-8, -7}},
		{op: "power", dt: xla.Float64, lhs: []any{-2.0, ewtNegZ, -36.0, 5.0, 3.0, 10000.0, ewtNaN, 1.0},
			rhs:  []any{2.0, 2.0, 1.1, 2.0, -1.0, 10.0, 0.0, ewtNaN},
			want: []any{4.0, 0.0, ewtNaN, 25.0, 1.0 / 3, 1e40, 1.0, 1.0}, tol: 1e-15},
		{op: "power", dt: xla.Float32, lhs: []any{10000.0}, rhs: []any{10.0}, want: []any{ewtInf}},
		{op: "power", dt: xla.Complex128, lhs: []any{1i, 0i, 2 + 0i}, rhs: []any{2 + 0i, 0i, 0.5 + 0i}, want: []any{-1 + 0i, 1 + 0i, complex(math.Sqrt2, 0)}, tol: 1e-15},
		// bitwise
		{op: "and", dt: xla.Int4, lhs: []any{-8, 6}, rhs: []any{7, 3}, want: []any{0, 2}},
		{op: "or", dt: xla.Int4, lhs: []any{-8, 6}, rhs: []any{7, 3}, want: []any{-1, 7}},
		{op: "xor", dt: xla.Int4, lhs: []any{-8, 6}, rhs: []any{-1, 3}, want: []any{7, 5}},
		{op: "xor", dt: xla.Uint4, lhs: []any{15}, rhs: []any{5}, want: []any{10}},
		{op: "and", dt: xla.Bool, lhs: []any{true, true}, rhs: []any{true, false}, want: []any{true, false}},
		{op: "or", dt: xla.Bool, lhs: []any{false, true}, rhs: []any{false, false}, want: []any{false, true}},
		{op: "xor", dt: xla.Bool, lhs: []any{true, true}, rhs: []any{true, false}, want: []any{false, true}},
		{op: "and", dt: xla.Int32, lhs: []any{12}, rhs: []any{10}, want: []any{8}},
		{op: "and", dt: xla.Float32, lhs: []any{1.0}, rhs: []any{1.0}, wantError: "not defined for element type f32"},
		// shifts
		{op: "shift_left", dt: xla.Int32, lhs: []any{1, 1, 1, -1, 3}, rhs: []any{31, 32, -1, 1, 0}, want: []any{i32min, 0, 0, -2, 3}},
		{op: "shift_left", dt: xla.Int64, lhs: []any{1, 1}, rhs: []any{63, 64}, want: []any{i64min, 0}},
		{op: "shift_left", dt: xla.Int4, lhs: []any{1, 1, 3, 1}, rhs: []any{3, 4, 2, -1}, want: []any{-8, 0, -4, 0}},
		{op: "shift_left", dt: xla.Uint4, lhs: []any{15}, rhs: []any{1}, want: []any{14}},
		{op: "shift_right_arithmetic", dt: xla.Int32, lhs: []any{-8, -1, i32min, 8, -8}, rhs: []any{1, 40, 31, 32, -1}, want: []any{-4, -1, -1, 0, -1}},
		{op: "shift_right_arithmetic", dt: xla.Int4, lhs: []any{-8, -8, 7}, rhs: []any{1, 4, 5}, want: []any{-4, -1, 0}},
		{op: "shift_right_arithmetic", dt: xla.Uint8, lhs: []any{0x80, 0x80, 0x40}, rhs: []any{1, 8, 1}, want: []any{0xc0, 0xff, 0x20}},
		{op: "shift_right_arithmetic", dt: xla.Uint4, lhs: []any{8}, rhs: []any{1}, want: []any{12}},
		{op: "shift_right_logical", dt: xla.Int32, lhs: []any{-1, -1, 16}, rhs: []any{28, 32, 2}, want: []any{15, 0, 4}},
		{op: "shift_right_logical", dt: xla.Int4, lhs: []any{-1, -8, -1}, rhs: []any{1, 3, 4}, want: []any{7, 1, 0}},
		{op: "shift_right_logical", dt: xla.Uint8, lhs: []any{255, 255}, rhs: []any{8, 7}, want: []any{0, 1}},
		{op: "shift_right_logical", dt: xla.Uint64, lhs: []any{uint64(math.MaxUint64)}, rhs: []any{63}, want: []any{1}},
		{op: "shift_left", dt: xla.Float32, lhs: []any{1.0}, rhs: []any{1.0}, wantError: "not defined for element type f32"},
		// atan2
		{op: "atan2", dt: xla.Float64, lhs: []any{0.0, 1.0, -1.0, ewtNegZ, ewtNaN}, rhs: []any{0.0, 0.0, 0.0, -1.0, 1.0},
			want: []any{0.0, math.Pi / 2, -math.Pi / 2, -math.Pi, ewtNaN}},
		{op: "atan2", dt: xla.Complex128, lhs: []any{1 + 0i}, rhs: []any{1 + 0i}, want: []any{complex(math.Pi/4, 0)}, tol: 1e-15},
		{op: "atan2", dt: xla.Int32, lhs: []any{1}, rhs: []any{1}, wantError: "not defined for element type i32"},
		// complex
		{op: "complex", dt: xla.Float32, resultDT: xla.Complex64, lhs: []any{1.0, 3.0}, rhs: []any{2.0, 4.0}, want: []any{1 + 2i, 3 + 4i}},
		{op: "complex", dt: xla.Float64, resultDT: xla.Complex128, lhs: []any{1.0}, rhs: []any{ewtNegZ}, want: []any{complex(1, ewtNegZ)}},
		{op: "complex", dt: xla.BFloat16, resultDT: xla.Complex64, lhs: []any{1.0}, rhs: []any{1.0}, wantError: "complex<f32> from f32 parts"},
	}
	for _, tt := range tests {
		t.Run(tt.op+"/"+tt.dt.String(), func(t *testing.T) {
			rdt := tt.resultDT
			if rdt == xla.Invalid {
				rdt = tt.dt
			}
			lhs, rhs := ewtTensor(tt.dt, tt.lhs...), ewtTensor(tt.dt, tt.rhs...)
			out, err := ewtRun("stablehlo."+tt.op, "", []xla.Shape{xla.MakeShape(rdt, lhs.Shape.Dims...)}, lhs, rhs)
			if tt.wantError != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantError)
				return
			}
			require.NoError(t, err)
			ewtCheck(t, out[0], tt.tol, tt.want, tt.op)
		})
	}
}

// Large operands are split across goroutines; the result is the same as
// element by element.
func TestBinaryOpsParallel(t *testing.T) {
	n := 3*ewParallelMin + 17
	for _, dt := range []xla.DType{xla.Float32, xla.Int4, xla.BFloat16, xla.Complex128} {
		a, b := NewTensor(xla.MakeShape(dt, int64(n))), NewTensor(xla.MakeShape(dt, int64(n)))
		for i := range n {
			ewtSet(a, i, float64(i%13)-6)
			ewtSet(b, i, float64(i%7)-3)
		}
		out := ewtRun1(t, "stablehlo.multiply", "", xla.Invalid, a, b)
		for i := range n {
			want := float64((i%13 - 6) * (i%7 - 3))
			if dt == xla.Int4 {
				want = float64(WrapInt(xla.Int4, int64(want)))
			}
			var got float64
			switch g := ewtGet(out, i).(type) {
			case int64:
				got = float64(g)
			case float64:
				got = g
			case complex128:
				got = real(g)
			}
			if got != want {
				t.Fatalf("%v: element %d: got %v, want %v", dt, i, got, want)
			}
		}
	}
}

func TestBinaryOperandErrors(t *testing.T) {
	f32 := ewtTensor(xla.Float32, 1.0, 2.0)
	i32 := ewtTensor(xla.Int32, 1, 2)
	short := ewtTensor(xla.Float32, 1.0)
	res := stablehlo.Tensor(xla.Float32, 2)
	tests := []struct {
		name   string
		args   []Value
		result stablehlo.Type
		want   string
	}{
		{"different types", []Value{f32, i32}, res, "different types"},
		{"different shapes", []Value{f32, short}, res, "different types"},
		{"one operand", []Value{f32}, res, "takes 2 operands"},
		{"not a tensor", []Value{f32, Token{}}, res, "not a tensor"},
		{"nil tensor", []Value{f32, (*Tensor)(nil)}, res, "not a tensor"},
		{"bad storage", []Value{f32, &Tensor{Shape: f32.Shape, Data: []int32{1, 2}}}, res, "holds []int32"},
		{"short storage", []Value{f32, &Tensor{Shape: f32.Shape, Data: []float32{1}}}, res, "holds 1"},
		{"result type", []Value{f32, f32}, stablehlo.Tensor(xla.Float64, 2), "does not match"},
		{"dynamic result", []Value{f32, f32}, stablehlo.Tensor(xla.Float32, stablehlo.DynamicDim), "dynamic"},
		{"huge result", []Value{f32, f32}, stablehlo.Tensor(xla.Float32, 1<<40), "too large"},
		{"result of other shape", []Value{f32, f32}, stablehlo.Tensor(xla.Float32, 1<<20), "does not match"},
		{"token result", []Value{f32, f32}, stablehlo.TokenType{}, "not a tensor"},
	}
	for _, tt := range tests {
		_, err := ewtKernel("stablehlo.add", nil, tt.result, tt.args...)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
}
