package stablehlo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/xla"
)

// chloProgram holds every CHLO op in the form MLIR prints it (the pretty
// form where ChloOps.td has an assemblyFormat, the generic form otherwise).
const chloProgram = `module {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<2x3xi1>, %arg3: tensor<2x3xi32>, %arg4: tensor<f64>, %arg5: tensor<2x3xcomplex<f32>>, %arg6: tensor<4x6xbf16>) -> tensor<2x3xf32> {
    %0 = chlo.acos %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %1 = chlo.acosh %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %2 = chlo.asin %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %3 = chlo.asinh %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %4 = chlo.atan %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %5 = chlo.atanh %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %6 = chlo.bessel_i1e %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %7 = chlo.conj %arg5 : tensor<2x3xcomplex<f32>> -> tensor<2x3xcomplex<f32>>
    %8 = chlo.cosh %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %9 = chlo.sinh %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %10 = chlo.tan %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %11 = chlo.digamma %arg4 : tensor<f64> -> tensor<f64>
    %12 = chlo.erf %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %13 = chlo.erf_inv %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %14 = chlo.erfc %arg6 : tensor<4x6xbf16> -> tensor<4x6xbf16>
    %15 = chlo.lgamma %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %16 = chlo.is_inf %arg0 : tensor<2x3xf32> -> tensor<2x3xi1>
    %17 = chlo.is_neg_inf %arg0 : tensor<2x3xf32> -> tensor<2x3xi1>
    %18 = chlo.is_pos_inf %arg0 : tensor<2x3xf32> -> tensor<2x3xi1>
    %19 = chlo.square %arg5 : tensor<2x3xcomplex<f32>> -> tensor<2x3xcomplex<f32>>
    %20 = chlo.next_after %arg0, %0 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    %21 = chlo.polygamma %arg0, %0 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    %22 = chlo.zeta %arg0, %0 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    %23 = chlo.igamma %arg0, %0 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    %24 = chlo.igammac %arg0, %0 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    %25 = chlo.broadcast_add %arg0, %arg1 {broadcast_dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %26 = chlo.broadcast_multiply %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %27 = chlo.broadcast_and %arg3, %arg3 : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
    %28 = chlo.broadcast_compare %arg0, %arg1 {compare_type = #chlo<comparison_type FLOAT>, comparison_direction = #chlo<comparison_direction LT>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    %29 = chlo.broadcast_complex %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xcomplex<f32>>
    %30 = chlo.broadcast_select %arg2, %arg0, %arg1 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %31 = chlo.broadcast_next_after %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %32 = chlo.broadcast_zeta %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %33 = chlo.broadcast_polygamma %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<2x3xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
    %34 = chlo.constant dense<1.000000e+00> : tensor<2x3xf32>
    %35 = "chlo.constant_like"(%arg0) <{value = 1.000000e+00 : f32}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %36 = "chlo.ragged_dot"(%arg0, %arg1, %arg3) <{ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [0], rhs_group_dimensions = []>}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xi32>) -> tensor<2xf32>
    return %30 : tensor<2x3xf32>
  }
}
`

// The printer writes chloProgram back exactly; the generic form parses
// back into an equal module.
func TestChloRoundTrip(t *testing.T) {
	m, err := Parse([]byte(chloProgram))
	require.NoError(t, err)
	got := mlirPrintString(t, m, PrintOptions{})
	// MLIR names top_k's results %values, %indices; halo numbers them.
	want := strings.Replace(chloProgram, "%values, %indices =", "%34:2 =", 1)
	for i := 36; i >= 34; i-- {
		want = strings.ReplaceAll(want, "%"+itoa(i)+" ", "%"+itoa(i+1)+" ")
	}
	assert.Equal(t, want, got)

	m2, err := Parse([]byte(got))
	require.NoError(t, err)
	assert.Empty(t, equalModules(m, m2, false))

	generic := mlirPrintString(t, m, PrintOptions{Generic: true})
	assert.Contains(t, generic, `"chlo.top_k"(%arg0) <{k = 2 : i64}>`)
	assert.Contains(t, generic, `"chlo.broadcast_add"(%arg0, %arg1) <{broadcast_dimensions = array<i64: 1>}>`)
	m3, err := Parse([]byte(generic))
	require.NoError(t, err)
	assert.Empty(t, equalModules(m, m3, false))
}

// mlir-opt --allow-unregistered-dialect reads the generic form of every
// CHLO op and prints it back as halo does.
func TestChloMLIROpt(t *testing.T) {
	opt := mliropt.Path()
	if opt == "" {
		t.Skip(mliropt.Missing)
	}
	m, err := Parse([]byte(chloProgram))
	require.NoError(t, err)
	text := mlirPrintString(t, m, PrintOptions{Generic: true})
	out := strings.TrimRight(mlirRunOpt(t, opt, text), "\n") + "\n"
	m2, err := Parse([]byte(out))
	require.NoError(t, err, out)
	assert.Empty(t, equalModulesOpaque(m, m2, false, true))
}

func TestChloInferResultTypes(t *testing.T) {
	arg := func(dt xla.DType, dims ...int64) *Value {
		b := NewBlock(Tensor(dt, dims...))
		return b.Args[0]
	}
	f32 := arg(xla.Float32, 2, 3)
	row := arg(xla.Float32, 3)
	col := arg(xla.Float32, 2, 1)
	i32 := arg(xla.Int32, 2, 3)
	bdims := func(d ...int64) NamedAttr {
		return NamedAttr{Name: "broadcast_dimensions", Value: DenseArrayAttr{DType: xla.Int64, Values: d}}
	}
	cases := []struct {
		name     string
		op       string
		operands []*Value
		attrs    []NamedAttr
		want     []Type
		err      string
	}{
		{"erf", "chlo.erf", []*Value{f32}, nil, []Type{Tensor(xla.Float32, 2, 3)}, ""},
		{"erf of int", "chlo.erf", []*Value{i32}, nil, nil, "element type i32 is not"},
		{"lgamma of complex", "chlo.lgamma", []*Value{arg(xla.Complex64, 2)}, nil, nil, "element type complex<f32> is not"},
		{"asin of complex", "chlo.asin", []*Value{arg(xla.Complex64, 2)}, nil, []Type{Tensor(xla.Complex64, 2)}, ""},
		{"is_inf", "chlo.is_inf", []*Value{f32}, nil, []Type{Tensor(xla.Bool, 2, 3)}, ""},
		{"square of int", "chlo.square", []*Value{i32}, nil, []Type{Tensor(xla.Int32, 2, 3)}, ""},
		{"zeta mismatched", "chlo.zeta", []*Value{f32, row}, nil, nil, "same type"},
		{"numpy broadcast", "chlo.broadcast_add", []*Value{col, row}, nil, []Type{Tensor(xla.Float32, 2, 3)}, ""},
		{"explicit dims", "chlo.broadcast_add", []*Value{f32, arg(xla.Float32, 2)}, []NamedAttr{bdims(0)}, []Type{Tensor(xla.Float32, 2, 3)}, ""},
		{"bad dims", "chlo.broadcast_add", []*Value{f32, arg(xla.Float32, 2)}, nil, nil, "do not broadcast"},
		{"dims out of range", "chlo.broadcast_add", []*Value{f32, row}, []NamedAttr{bdims(2)}, nil, "out of range"},
		{"compare", "chlo.broadcast_compare", []*Value{f32, row}, []NamedAttr{{Name: "comparison_direction", Value: EnumAttr{Dialect: "chlo", Enum: "comparison_direction", Value: "EQ"}}}, []Type{Tensor(xla.Bool, 2, 3)}, ""},
		{"complex", "chlo.broadcast_complex", []*Value{f32, row}, nil, []Type{Tensor(xla.Complex64, 2, 3)}, ""},
		{"shift of floats", "chlo.broadcast_shift_left", []*Value{f32, f32}, nil, nil, "is not"},
		{"mixed dtypes", "chlo.broadcast_add", []*Value{f32, i32}, nil, nil, "same element type"},
		{"select", "chlo.broadcast_select", []*Value{arg(xla.Bool), f32, row}, nil, []Type{Tensor(xla.Float32, 2, 3)}, ""},
		{"top_k", "chlo.top_k", []*Value{f32}, []NamedAttr{{Name: "k", Value: IntAttr{Value: 2, Type: xla.Int64}}}, []Type{Tensor(xla.Float32, 2, 2), Tensor(xla.Int32, 2, 2)}, ""},
		{"top_k too large", "chlo.top_k", []*Value{f32}, []NamedAttr{{Name: "k", Value: IntAttr{Value: 4, Type: xla.Int64}}}, nil, "k = 4 is not in [0, 3]"},
		{"constant_like", "chlo.constant_like", []*Value{f32}, []NamedAttr{{Name: "value", Value: IntAttr{Value: 1, Type: xla.Int8}}}, []Type{Tensor(xla.Int8, 2, 3)}, ""},
		// A dense value must be one element or a splat, as the interpreter
		// and Expand require (Verify passed two distinct elements).
		{"constant_like of a list", "chlo.constant_like", []*Value{f32}, []NamedAttr{{Name: "value", Value: DenseElementsAttr{Type: Tensor(xla.Float32, 2), Data: make([]byte, 8)}}}, nil, "must be one element or a splat"},
		{"constant_like of a splat", "chlo.constant_like", []*Value{f32}, []NamedAttr{{Name: "value", Value: DenseElementsAttr{Type: Tensor(xla.Float32, 2), Data: make([]byte, 4), Splat: true}}}, []Type{Tensor(xla.Float32, 2, 3)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := NewOp(c.op, c.operands, nil, c.attrs...)
			types, known, err := InferResultTypes(op)
			require.True(t, known)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, types)
		})
	}
}

// Ops built with EmitInferred get inferred types; bad input is a sticky
// error naming the op and the user's line.
func TestEmitInferred(t *testing.T) {
	b := NewBuilder("m")
	fb := b.NewFunction("main", Tensor(xla.Float32, 2, 3), Tensor(xla.Float32, 3))
	r := fb.EmitInferred("chlo.broadcast_add", []*Value{fb.Arg(0), fb.Arg(1)})
	require.Len(t, r, 1)
	assert.Equal(t, Tensor(xla.Float32, 2, 3), r[0].Type)
	tk := fb.EmitInferred("chlo.top_k", []*Value{fb.Arg(0)}, NamedAttr{Name: "k", Value: IntAttr{Value: 1, Type: xla.Int64}})
	require.Len(t, tk, 2)
	fb.Return(r[0])
	_, err := b.Build()
	require.NoError(t, err)

	b = NewBuilder("m")
	fb = b.NewFunction("main", Tensor(xla.Int32, 2))
	bad := fb.EmitInferred("chlo.erf", []*Value{fb.Arg(0)})
	require.Len(t, bad, 1)
	fb.Return(bad[0])
	_, err = b.Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chlo.erf(tensor<2xi32>) at chlo_ops_test.go:")
	assert.Contains(t, err.Error(), "element type i32 is not")
}
