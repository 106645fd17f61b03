package stablehlo

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// opCase is one row of a table test: build an op on function arguments
// of types args and check its result type, or the error it records.
type opCase struct {
	name    string
	op      string // the op name (checked on the IR, and in errors)
	args    []Type
	build   func(f *FuncBuilder, a []*Value) *Value
	want    Type   // expected result type
	wantErr string // expected error substring (then want is ignored)
}

func runOpCases(t *testing.T, cases []opCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFunc(c.args...)
			v := c.build(f, f.Args())
			require.NotNil(t, v)
			if c.wantErr != "" {
				be := requireErr(t, b, c.op, c.wantErr, "_test.go:")
				for i, a := range c.args {
					if i < len(be.Operands) && be.Operands[i] != nil {
						assert.Contains(t, be.Error(), a.String())
					}
				}
				return
			}
			require.NoError(t, b.Err())
			assert.Equal(t, c.want.String(), v.Type.String())
			assert.True(t, TypesEqual(c.want, v.Type), "want %s, got %s", c.want, v.Type)
			require.NotNil(t, v.Op())
			assert.Equal(t, c.op, v.Op().Name)
			assert.NoError(t, checkOpSpec(v.Op()))
			f.Return(v)
			m, err := b.Build()
			require.NoError(t, err)
			require.NoError(t, m.Verify())
		})
	}
}

func TestUnaryOps(t *testing.T) {
	type u struct {
		op   string
		fn   func(f *FuncBuilder, x *Value) *Value
		ok   []xla.DType
		fail xla.DType
	}
	ops := []u{
		{"abs", (*FuncBuilder).Abs, []xla.DType{xla.Int8, xla.Float32}, xla.Uint32},
		{"cbrt", (*FuncBuilder).Cbrt, []xla.DType{xla.Float64, xla.Complex64}, xla.Int32},
		{"ceil", (*FuncBuilder).Ceil, []xla.DType{xla.BFloat16}, xla.Complex64},
		{"cosine", (*FuncBuilder).Cosine, []xla.DType{xla.Float16}, xla.Int64},
		{"count_leading_zeros", (*FuncBuilder).CountLeadingZeros, []xla.DType{xla.Int64, xla.Uint8}, xla.Float32},
		{"exponential", (*FuncBuilder).Exponential, []xla.DType{xla.Float32, xla.Complex128}, xla.Bool},
		{"exponential_minus_one", (*FuncBuilder).ExponentialMinusOne, []xla.DType{xla.Float32}, xla.Int32},
		{"floor", (*FuncBuilder).Floor, []xla.DType{xla.Float32}, xla.Int32},
		{"log", (*FuncBuilder).Log, []xla.DType{xla.Float32}, xla.Int32},
		{"log_plus_one", (*FuncBuilder).LogPlusOne, []xla.DType{xla.Float32}, xla.Int32},
		{"logistic", (*FuncBuilder).Logistic, []xla.DType{xla.Float32}, xla.Int32},
		{"negate", (*FuncBuilder).Negate, []xla.DType{xla.Int32, xla.Uint16, xla.Float32, xla.Complex64}, xla.Bool},
		{"not", (*FuncBuilder).Not, []xla.DType{xla.Bool, xla.Int8}, xla.Float32},
		{"popcnt", (*FuncBuilder).Popcnt, []xla.DType{xla.Int32}, xla.Float32},
		{"round_nearest_afz", (*FuncBuilder).RoundNearestAfz, []xla.DType{xla.Float32}, xla.Int32},
		{"round_nearest_even", (*FuncBuilder).RoundNearestEven, []xla.DType{xla.Float64}, xla.Int32},
		{"rsqrt", (*FuncBuilder).Rsqrt, []xla.DType{xla.Float32}, xla.Int32},
		{"sign", (*FuncBuilder).Sign, []xla.DType{xla.Int32, xla.Float32, xla.Complex64}, xla.Uint8},
		{"sine", (*FuncBuilder).Sine, []xla.DType{xla.Float32}, xla.Int32},
		{"sqrt", (*FuncBuilder).Sqrt, []xla.DType{xla.Float32}, xla.Int32},
		{"tan", (*FuncBuilder).Tan, []xla.DType{xla.Float32}, xla.Int32},
		{"tanh", (*FuncBuilder).Tanh, []xla.DType{xla.Float32}, xla.Int32},
	}
	var cases []opCase
	for _, o := range ops {
		for _, dt := range o.ok {
			want := Tensor(dt, 2, 3)
			if o.op == "abs" && dt.IsComplex() {
				want = Tensor(dt.ComplexElem(), 2, 3)
			}
			cases = append(cases, opCase{name: o.op + "/" + dt.String(), op: "stablehlo." + o.op,
				args: []Type{Tensor(dt, 2, 3)}, build: func(f *FuncBuilder, a []*Value) *Value { return o.fn(f, a[0]) }, want: want})
		}
		cases = append(cases, opCase{name: o.op + "/bad-" + o.fail.String(), op: "stablehlo." + o.op,
			args: []Type{Tensor(o.fail, 4)}, build: func(f *FuncBuilder, a []*Value) *Value { return o.fn(f, a[0]) },
			wantErr: "element type " + o.fail.String() + " is not"})
	}
	cases = append(cases,
		opCase{name: "abs/complex128", op: "stablehlo.abs", args: []Type{Tensor(xla.Complex128, 5)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Abs(a[0]) }, want: Tensor(xla.Float64, 5)},
		opCase{name: "is_finite", op: "stablehlo.is_finite", args: []Type{f32(2, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.IsFinite(a[0]) }, want: Tensor(xla.Bool, 2, 2)},
		opCase{name: "is_finite/int", op: "stablehlo.is_finite", args: []Type{i32(2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.IsFinite(a[0]) }, wantErr: "float tensor"},
		opCase{name: "real/complex", op: "stablehlo.real", args: []Type{Tensor(xla.Complex64, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Real(a[0]) }, want: f32(3)},
		opCase{name: "real/float", op: "stablehlo.real", args: []Type{f32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Real(a[0]) }, want: f32(3)},
		opCase{name: "imag/complex", op: "stablehlo.imag", args: []Type{Tensor(xla.Complex128, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Imag(a[0]) }, want: Tensor(xla.Float64, 3)},
		opCase{name: "imag/int", op: "stablehlo.imag", args: []Type{i32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Imag(a[0]) }, wantErr: "float or complex"},
		opCase{name: "negate/token", op: "stablehlo.negate", args: []Type{TokenType{}},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Negate(a[0]) }, wantErr: "operand must be a tensor"},
		opCase{name: "quantized operand", op: "stablehlo.negate", args: []Type{OpaqueType{Text: "tensor<2x!quant.uniform<i8:f32, 1.0>>"}},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Negate(a[0]) }, want: OpaqueType{Text: "tensor<2x!quant.uniform<i8:f32, 1.0>>"}},
		opCase{name: "dynamic dims", op: "stablehlo.sine", args: []Type{f32(DynamicDim, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Sine(a[0]) }, want: f32(DynamicDim, 3)},
	)
	runOpCases(t, cases)
}

func TestBinaryOps(t *testing.T) {
	type bin struct {
		op   string
		fn   func(f *FuncBuilder, x, y *Value) *Value
		ok   []xla.DType
		fail xla.DType
	}
	ops := []bin{
		{"add", (*FuncBuilder).Add, []xla.DType{xla.Bool, xla.Int8, xla.Float32, xla.Complex64}, xla.Invalid},
		{"subtract", (*FuncBuilder).Subtract, []xla.DType{xla.Int32, xla.Float32}, xla.Bool},
		{"multiply", (*FuncBuilder).Multiply, []xla.DType{xla.Bool, xla.Uint8, xla.Float64}, xla.Invalid},
		{"divide", (*FuncBuilder).Divide, []xla.DType{xla.Int32, xla.Float32, xla.Complex64}, xla.Bool},
		{"remainder", (*FuncBuilder).Remainder, []xla.DType{xla.Int32, xla.Float32}, xla.Bool},
		{"power", (*FuncBuilder).Power, []xla.DType{xla.Int32, xla.Float32}, xla.Bool},
		{"maximum", (*FuncBuilder).Maximum, []xla.DType{xla.Bool, xla.Float32}, xla.Invalid},
		{"minimum", (*FuncBuilder).Minimum, []xla.DType{xla.Int64, xla.BFloat16}, xla.Invalid},
		{"atan2", (*FuncBuilder).Atan2, []xla.DType{xla.Float32, xla.Complex64}, xla.Int32},
		{"and", (*FuncBuilder).And, []xla.DType{xla.Bool, xla.Uint32}, xla.Float32},
		{"or", (*FuncBuilder).Or, []xla.DType{xla.Bool, xla.Int16}, xla.Float32},
		{"xor", (*FuncBuilder).Xor, []xla.DType{xla.Bool, xla.Int64}, xla.Float32},
		{"shift_left", (*FuncBuilder).ShiftLeft, []xla.DType{xla.Int32, xla.Uint8}, xla.Bool},
		{"shift_right_arithmetic", (*FuncBuilder).ShiftRightArithmetic, []xla.DType{xla.Int32}, xla.Float32},
		{"shift_right_logical", (*FuncBuilder).ShiftRightLogical, []xla.DType{xla.Uint64}, xla.Float32},
	}
	var cases []opCase
	for _, o := range ops {
		for _, dt := range o.ok {
			cases = append(cases, opCase{name: o.op + "/" + dt.String(), op: "stablehlo." + o.op,
				args:  []Type{Tensor(dt, 4), Tensor(dt, 4)},
				build: func(f *FuncBuilder, a []*Value) *Value { return o.fn(f, a[0], a[1]) }, want: Tensor(dt, 4)})
		}
		if o.fail != xla.Invalid {
			cases = append(cases, opCase{name: o.op + "/bad-" + o.fail.String(), op: "stablehlo." + o.op,
				args:    []Type{Tensor(o.fail, 4), Tensor(o.fail, 4)},
				build:   func(f *FuncBuilder, a []*Value) *Value { return o.fn(f, a[0], a[1]) },
				wantErr: "element type " + o.fail.String() + " is not"})
		}
		cases = append(cases,
			opCase{name: o.op + "/shape-mismatch", op: "stablehlo." + o.op, args: []Type{Tensor(o.ok[0], 4), Tensor(o.ok[0], 5)},
				build: func(f *FuncBuilder, a []*Value) *Value { return o.fn(f, a[0], a[1]) }, wantErr: "operands must have the same type"},
			opCase{name: o.op + "/dtype-mismatch", op: "stablehlo." + o.op, args: []Type{Tensor(o.ok[0], 4), Tensor(xla.Float8E5M2, 4)},
				build: func(f *FuncBuilder, a []*Value) *Value { return o.fn(f, a[0], a[1]) }, wantErr: "operands must have the same type"},
			opCase{name: o.op + "/nil", op: "stablehlo." + o.op, args: []Type{Tensor(o.ok[0], 4)},
				build: func(f *FuncBuilder, a []*Value) *Value { return o.fn(f, nil, a[0]) }, wantErr: "operand 0 is nil"},
		)
	}
	cases = append(cases,
		opCase{name: "complex/f32", op: "stablehlo.complex", args: []Type{f32(2), f32(2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Complex(a[0], a[1]) }, want: Tensor(xla.Complex64, 2)},
		opCase{name: "complex/f64", op: "stablehlo.complex", args: []Type{Tensor(xla.Float64), Tensor(xla.Float64)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Complex(a[0], a[1]) }, want: Tensor(xla.Complex128)},
		opCase{name: "complex/f16", op: "stablehlo.complex", args: []Type{Tensor(xla.Float16), Tensor(xla.Float16)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Complex(a[0], a[1]) }, wantErr: "f32 or f64"},
		opCase{name: "dynamic dim matches static", op: "stablehlo.add", args: []Type{f32(DynamicDim), f32(DynamicDim)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Add(a[0], a[1]) }, want: f32(DynamicDim)},
	)
	runOpCases(t, cases)
}

func TestCompareSelectClamp(t *testing.T) {
	cases := []opCase{
		{name: "compare/float", op: "stablehlo.compare", args: []Type{f32(3), f32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareLT, CompareAuto) },
			want:  Tensor(xla.Bool, 3)},
		{name: "compare/bad-direction", op: "stablehlo.compare", args: []Type{f32(3), f32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], "LESS", CompareAuto) },
			wantErr: `invalid comparison direction "LESS"`},
		{name: "compare/bad-type", op: "stablehlo.compare", args: []Type{f32(3), f32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareEQ, "FUZZY") },
			wantErr: `invalid compare type "FUZZY"`},
		{name: "compare/mismatch", op: "stablehlo.compare", args: []Type{f32(3), i32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareEQ, CompareAuto) },
			wantErr: "same type"},
		// A compare_type that does not fit the element type is a build
		// error (it failed only when the program ran).
		// WEAKORDER is not in StableHLO's enum: XLA would not load it.
		{name: "compare/weakorder", op: "stablehlo.compare", args: []Type{f32(3), f32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareLT, "WEAKORDER") },
			wantErr: `invalid compare type "WEAKORDER"`},
		{name: "compare/signed-float", op: "stablehlo.compare", args: []Type{f32(3), f32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareLT, CompareSigned) },
			wantErr: "compare type SIGNED does not apply to element type f32"},
		{name: "compare/unsigned-float", op: "stablehlo.compare", args: []Type{f32(3), f32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareLT, CompareUnsigned) },
			wantErr: "compare type UNSIGNED does not apply to element type f32"},
		{name: "compare/float-int", op: "stablehlo.compare", args: []Type{i32(3), i32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareLT, CompareFloat) },
			wantErr: "compare type FLOAT does not apply to element type i32"},
		{name: "compare/totalorder-complex", op: "stablehlo.compare", args: []Type{Tensor(xla.Complex64, 3), Tensor(xla.Complex64, 3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareEQ, CompareTotalOrder) },
			wantErr: "compare type TOTALORDER does not apply to element type complex<f32>"},
		{name: "compare/float-complex", op: "stablehlo.compare", args: []Type{Tensor(xla.Complex64, 3), Tensor(xla.Complex64, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareEQ, CompareFloat) },
			want:  Tensor(xla.Bool, 3)},
		{name: "compare/unsigned-bool", op: "stablehlo.compare", args: []Type{Tensor(xla.Bool, 3), Tensor(xla.Bool, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareLT, CompareUnsigned) },
			want:  Tensor(xla.Bool, 3)},
		{name: "compare/notype-int", op: "stablehlo.compare", args: []Type{i32(3), i32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Compare(a[0], a[1], CompareLT, "NOTYPE") },
			want:  Tensor(xla.Bool, 3)},
		{name: "select/scalar-pred", op: "stablehlo.select", args: []Type{Tensor(xla.Bool), f32(2, 2), f32(2, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Select(a[0], a[1], a[2]) }, want: f32(2, 2)},
		{name: "select/full-pred", op: "stablehlo.select", args: []Type{Tensor(xla.Bool, 2, 2), i32(2, 2), i32(2, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Select(a[0], a[1], a[2]) }, want: i32(2, 2)},
		{name: "select/pred-shape", op: "stablehlo.select", args: []Type{Tensor(xla.Bool, 3), f32(2, 2), f32(2, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Select(a[0], a[1], a[2]) }, wantErr: "pred must be a scalar or have the shape"},
		{name: "select/pred-type", op: "stablehlo.select", args: []Type{i32(), f32(2), f32(2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Select(a[0], a[1], a[2]) }, wantErr: "pred must be an i1 tensor"},
		{name: "select/branches", op: "stablehlo.select", args: []Type{Tensor(xla.Bool), f32(2), f32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Select(a[0], a[1], a[2]) }, wantErr: "same type"},
		{name: "clamp/scalars", op: "stablehlo.clamp", args: []Type{f32(), f32(4), f32()},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Clamp(a[0], a[1], a[2]) }, want: f32(4)},
		{name: "clamp/full", op: "stablehlo.clamp", args: []Type{f32(4), f32(4), f32(4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Clamp(a[0], a[1], a[2]) }, want: f32(4)},
		{name: "clamp/bad-max", op: "stablehlo.clamp", args: []Type{f32(), f32(4), i32()},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Clamp(a[0], a[1], a[2]) }, wantErr: "max must be a scalar"},
	}
	runOpCases(t, cases)

	// compare_type follows the element type when left to the builder.
	for dt, want := range map[xla.DType]string{xla.Float32: "FLOAT", xla.Complex64: "FLOAT", xla.Int8: "SIGNED", xla.Uint32: "UNSIGNED", xla.Bool: "UNSIGNED"} {
		_, f := newFunc(Tensor(dt), Tensor(dt))
		v := f.Compare(f.Arg(0), f.Arg(1), CompareNE, CompareAuto)
		assert.Equal(t, Enum("comparison_type", want), v.Op().Attr("compare_type"), dt.String())
		assert.Equal(t, Enum("comparison_direction", "NE"), v.Op().Attr("comparison_direction"))
	}
	_, f := newFunc(f32(), f32())
	v := f.Compare(f.Arg(0), f.Arg(1), CompareGE, CompareTotalOrder)
	assert.Equal(t, EnumAttr{Dialect: "stablehlo", Enum: "comparison_type", Value: "TOTALORDER"}, v.Op().Attr("compare_type"))
}

func TestConversions(t *testing.T) {
	cases := []opCase{
		{name: "convert", op: "stablehlo.convert", args: []Type{i32(2, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Convert(a[0], xla.BFloat16) }, want: Tensor(xla.BFloat16, 2, 3)},
		{name: "convert/invalid", op: "stablehlo.convert", args: []Type{i32(2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Convert(a[0], xla.Invalid) }, wantErr: "invalid element type"},
		{name: "bitcast/same-width", op: "stablehlo.bitcast_convert", args: []Type{f32(2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.BitcastConvert(a[0], xla.Int32) }, want: i32(2)},
		{name: "bitcast/narrower", op: "stablehlo.bitcast_convert", args: []Type{Tensor(xla.Float64, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.BitcastConvert(a[0], xla.Float16) }, want: Tensor(xla.Float16, 3, 4)},
		{name: "bitcast/wider", op: "stablehlo.bitcast_convert", args: []Type{Tensor(xla.Uint8, 5, 4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.BitcastConvert(a[0], xla.Float32) }, want: f32(5)},
		{name: "bitcast/wider-bad", op: "stablehlo.bitcast_convert", args: []Type{Tensor(xla.Uint8, 5, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.BitcastConvert(a[0], xla.Float32) }, wantErr: "needs a last dimension of 4"},
		{name: "reduce_precision", op: "stablehlo.reduce_precision", args: []Type{f32(6)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.ReducePrecision(a[0], 5, 10) }, want: f32(6)},
		{name: "reduce_precision/int", op: "stablehlo.reduce_precision", args: []Type{i32(6)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.ReducePrecision(a[0], 5, 10) }, wantErr: "float tensor"},
		{name: "reduce_precision/bits", op: "stablehlo.reduce_precision", args: []Type{f32(6)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.ReducePrecision(a[0], 0, 10) }, wantErr: "exponent_bits must be >= 1"},
		{name: "iota", op: "stablehlo.iota",
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Iota(i32(4, 5), 1) }, want: i32(4, 5)},
		{name: "iota/dim", op: "stablehlo.iota",
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Iota(i32(4, 5), 2) }, wantErr: "iota_dimension 2 out of range"},
		{name: "iota/bool", op: "stablehlo.iota",
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Iota(Tensor(xla.Bool, 4), 0) }, wantErr: "not numeric"},
	}
	runOpCases(t, cases)

	_, f := newFunc(f32(6))
	v := f.ReducePrecision(f.Arg(0), 8, 7)
	assert.Equal(t, IntAttr{Value: 8, Type: xla.Int32}, v.Op().Attr("exponent_bits"))
	assert.Equal(t, IntAttr{Value: 7, Type: xla.Int32}, v.Op().Attr("mantissa_bits"))
	v = f.Iota(i32(3), 0)
	assert.Equal(t, IntAttr{Value: 0, Type: xla.Int64}, v.Op().Attr("iota_dimension"))
}

func TestConstants(t *testing.T) {
	b, f := newFunc()
	c1 := Constant(f, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	c2 := Constant(f, []int64{7, 8})
	c3 := ConstantScalar(f, true)
	c4 := Splat(f, BF16FromFloat32(1.5), 4, 4)
	c5 := Constant(f, []complex64{complex(1, 2)})
	c6 := ConstantScalar(f, F16FromFloat32(-2))
	c7 := Constant(f, []bool{true, false, true})
	c8 := f.ScalarOf(xla.Uint8, 255)
	c9 := f.SplatOf(xla.Float64, math.Pi, 2)
	c10 := f.ConstantBytes(Tensor(xla.Float8E4M3FN, 2), []byte{0x38, 0x40})
	c11 := f.Zero(i32(3))
	c12 := Constant(f, []int{1, 2})
	type myFloat float64
	c13 := ConstantScalar(f, myFloat(2.5))
	require.NoError(t, b.Err())

	check := func(v *Value, want TensorType, data []byte, splat bool) {
		t.Helper()
		assert.Equal(t, want.String(), v.Type.String())
		a, ok := v.Op().Attr("value").(DenseElementsAttr)
		require.True(t, ok)
		assert.Equal(t, want.String(), a.Type.String())
		assert.Equal(t, data, a.Data)
		assert.Equal(t, splat, a.Splat)
		assert.Equal(t, "stablehlo.constant", v.Op().Name)
	}
	le32 := func(vs ...float32) []byte {
		var out []byte
		for _, v := range vs {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
		return out
	}
	le64 := func(vs ...int64) []byte {
		var out []byte
		for _, v := range vs {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
		return out
	}
	check(c1, f32(2, 3), le32(1, 2, 3, 4, 5, 6), false)
	check(c2, i64(2), le64(7, 8), false)
	check(c3, Tensor(xla.Bool), []byte{1}, false)
	check(c4, Tensor(xla.BFloat16, 4, 4), []byte{0xc0, 0x3f}, true)
	check(c5, Tensor(xla.Complex64, 1), le32(1, 2), false)
	check(c6, Tensor(xla.Float16), []byte{0x00, 0xc0}, false)
	check(c7, Tensor(xla.Bool, 3), []byte{1, 0, 1}, false)
	check(c8, Tensor(xla.Uint8), []byte{255}, false)
	check(c9, Tensor(xla.Float64, 2), binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Pi)), true)
	check(c10, Tensor(xla.Float8E4M3FN, 2), []byte{0x38, 0x40}, false)
	check(c11, i32(3), []byte{0, 0, 0, 0}, true)
	check(c12, i64(2), le64(1, 2), false)
	check(c13, Tensor(xla.Float64), binary.LittleEndian.AppendUint64(nil, math.Float64bits(2.5)), false)

	// Constants copy the caller's data.
	data := []int32{1, 2}
	c := Constant(f, data)
	data[0] = 9
	assert.Equal(t, []byte{1, 0, 0, 0, 2, 0, 0, 0}, c.Op().Attr("value").(DenseElementsAttr).Data)

	b, f = newFunc()
	Constant(f, []float32{1, 2, 3}, 2, 2)
	requireErr(t, b, "stablehlo.constant", "3 elements do not fill tensor<2x2xf32>")
	b, f = newFunc()
	f.ConstantBytes(f32(2), []byte{1, 2, 3})
	requireErr(t, b, "stablehlo.constant", "holds 3 bytes, want 8")
	b, f = newFunc()
	f.ScalarOf(xla.Invalid, 1)
	requireErr(t, b, "stablehlo.constant", "no scalar encoding")
	b, f = newFunc()
	Splat(f, float32(1), -1)
	requireErr(t, b, "stablehlo.constant", "negative dimension -1 in [-1] (DynamicDim marks a type's dynamic dimension; a size is static)")
}

func TestHalfFloats(t *testing.T) {
	for _, v := range []float32{0, 1, -2, 0.5, 65504, 1e-5, 3.140625} {
		assert.InDelta(t, v, F16FromFloat32(v).Float32(), math.Abs(float64(v))*1e-3+1e-7, "f16 %v", v)
		assert.InDelta(t, v, BF16FromFloat32(v).Float32(), math.Abs(float64(v))*1e-2+1e-9, "bf16 %v", v)
	}
	assert.Equal(t, F16(0x3c00), F16FromFloat32(1))
	assert.Equal(t, F16(0x7c00), F16FromFloat32(1e6))
	assert.Equal(t, BF16(0x3f80), BF16FromFloat32(1))
	assert.True(t, math.IsNaN(float64(BF16FromFloat32(float32(math.NaN())).Float32())))
	assert.True(t, math.IsNaN(float64(F16FromFloat32(float32(math.NaN())).Float32())))
	assert.Equal(t, float32(math.Inf(-1)), F16FromFloat32(float32(math.Inf(-1))).Float32())
}
