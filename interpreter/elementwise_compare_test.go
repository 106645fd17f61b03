package interpreter

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func ewtCompareAttrs(dir, typ string) string {
	s := "comparison_direction = #stablehlo<comparison_direction " + dir + ">"
	if typ != "" {
		s += ", compare_type = #stablehlo<comparison_type " + typ + ">"
	}
	return s
}

func TestCompare(t *testing.T) {
	type dirs map[string][]any
	tests := []struct {
		name     string
		dt       xla.DType
		typ      string
		lhs, rhs []any
		want     dirs
	}{
		{"signed", xla.Int32, "SIGNED", []any{1, 2, 3, -1}, []any{2, 2, 2, 1}, dirs{
			"EQ": {false, true, false, false}, "NE": {true, false, true, true},
			"GE": {false, true, true, false}, "GT": {false, false, true, false},
			"LE": {true, true, false, true}, "LT": {true, false, false, true},
		}},
		{"unsigned", xla.Uint8, "UNSIGNED", []any{0, 255}, []any{255, 0}, dirs{"LT": {true, false}, "GE": {false, true}}},
		{"i4", xla.Int4, "SIGNED", []any{-8, 7}, []any{7, -8}, dirs{"LT": {true, false}}},
		{"ui4", xla.Uint4, "", []any{15, 0}, []any{0, 15}, dirs{"GT": {true, false}}},
		{"i64 extremes", xla.Int64, "", []any{int64(math.MinInt64)}, []any{int64(math.MaxInt64)}, dirs{"LT": {true}}},
		{"u64 extremes", xla.Uint64, "", []any{uint64(math.MaxUint64)}, []any{0}, dirs{"GT": {true}}},
		{"bool", xla.Bool, "UNSIGNED", []any{false, true, true}, []any{true, false, true}, dirs{
			"LT": {true, false, false}, "EQ": {false, false, true}, "GE": {false, true, true},
		}},
		{"float quiet", xla.Float32, "FLOAT", []any{ewtNaN, 1.0, ewtNegZ, -ewtInf}, []any{ewtNaN, ewtNaN, 0.0, ewtInf}, dirs{
			"EQ": {false, false, true, false}, "NE": {true, true, false, true},
			"LT": {false, false, false, true}, "GE": {false, false, true, false},
			"LE": {false, false, true, true}, "GT": {false, false, false, false},
		}},
		{"float default", xla.Float64, "", []any{ewtNaN, 2.0}, []any{1.0, 1.0}, dirs{"GT": {false, true}}},
		{"bf16", xla.BFloat16, "FLOAT", []any{1.0, ewtNaN}, []any{1.0, 1.0}, dirs{"EQ": {true, false}}},
		{"total order zeros and NaN", xla.Float32, "TOTALORDER", []any{ewtNegZ, ewtNaN, ewtNaN}, []any{0.0, ewtNaN, ewtInf}, dirs{
			"EQ": {false, true, false}, "LT": {true, false, false}, "GT": {false, false, true},
		}},
		// The reference interpreter's weak-order cases: all NaNs are equal
		// and above +Inf, -0 == +0.
		{"weak order", xla.Float64, "WEAKORDER",
			[]any{math.Copysign(ewtNaN, -1), math.Copysign(ewtNaN, -1), -ewtInf, ewtNegZ, 1.0, ewtInf, ewtInf, math.Copysign(ewtNaN, -1)},
			[]any{math.Copysign(ewtNaN, -1), ewtNaN, ewtInf, 0.0, 2.0, ewtInf, math.Copysign(ewtNaN, -1), ewtInf}, dirs{
				"EQ": {true, true, false, true, false, true, false, false},
				"NE": {false, false, true, false, true, false, true, true},
				"GE": {true, true, false, true, false, true, false, true},
				"GT": {false, false, false, false, false, false, false, true},
				"LE": {true, true, true, true, true, true, true, false},
				"LT": {false, false, true, false, true, false, true, false},
			}},
		{"weak order f32", xla.Float32, "WEAKORDER", []any{ewtNaN, 1.0}, []any{ewtInf, ewtNaN}, dirs{"GT": {true, false}}},
		{"complex", xla.Complex64, "FLOAT", []any{1 + 2i, 1 + 2i, 2 + 0i, complex(ewtNaN, 0)}, []any{1 + 3i, 1 + 2i, 1 + 5i, 0i}, dirs{
			"LT": {true, false, false, false}, "EQ": {false, true, false, false}, "NE": {true, false, true, true},
			"LE": {true, true, false, false}, "GT": {false, false, true, false}, "GE": {false, true, true, false},
		}},
	}
	for _, tt := range tests {
		for dir, want := range tt.want {
			t.Run(tt.name+"/"+dir, func(t *testing.T) {
				out := ewtRun1(t, "stablehlo.compare", ewtCompareAttrs(dir, tt.typ), xla.Bool,
					ewtTensor(tt.dt, tt.lhs...), ewtTensor(tt.dt, tt.rhs...))
				ewtCheck(t, out, 0, want, dir)
			})
		}
	}
}

// TOTALORDER orders -NaN < -Inf < -1 < -min subnormal < -0 < +0 < min
// subnormal < 1 < +Inf < +NaN, for every direction.
func TestCompareTotalOrder(t *testing.T) {
	for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16, xla.Float16} {
		negNaN := math.Copysign(math.NaN(), -1)
		ordered := []any{negNaN, -ewtInf, -1.0, -math.SmallestNonzeroFloat64, ewtNegZ, 0.0,
			math.SmallestNonzeroFloat64, 1.0, ewtInf, math.NaN()}
		if dt != xla.Float64 {
			// The smallest value of the narrower types.
			tiny := float64(DecodeNarrow(dt, 1))
			if dt == xla.Float32 {
				tiny = float64(math.SmallestNonzeroFloat32)
			}
			ordered[3], ordered[6] = -tiny, tiny
		}
		n := len(ordered)
		var lhs, rhs []any
		for i := range n {
			for j := range n {
				lhs, rhs = append(lhs, ordered[i]), append(rhs, ordered[j])
			}
		}
		a, b := ewtTensor(dt, lhs...), ewtTensor(dt, rhs...)
		for _, dir := range []string{"EQ", "NE", "LT", "LE", "GT", "GE"} {
			out := ewtRun1(t, "stablehlo.compare", ewtCompareAttrs(dir, "TOTALORDER"), xla.Bool, a, b)
			got := out.Data.([]bool)
			for i := range n {
				for j := range n {
					want := map[string]bool{"EQ": i == j, "NE": i != j, "LT": i < j, "LE": i <= j, "GT": i > j, "GE": i >= j}[dir]
					assert.Equal(t, want, got[i*n+j], "%v %v %s %v", dt, ordered[i], dir, ordered[j])
				}
			}
		}
	}
}

func TestCompareErrors(t *testing.T) {
	i32 := ewtTensor(xla.Int32, 1)
	f32 := ewtTensor(xla.Float32, 1.0)
	res := stablehlo.Tensor(xla.Bool, 1)
	dir := func(v string) stablehlo.NamedAttr {
		return stablehlo.NamedAttr{Name: "comparison_direction", Value: stablehlo.EnumAttr{Dialect: "stablehlo", Enum: "comparison_direction", Value: v}}
	}
	typ := func(v string) stablehlo.NamedAttr {
		return stablehlo.NamedAttr{Name: "compare_type", Value: stablehlo.EnumAttr{Dialect: "stablehlo", Enum: "comparison_type", Value: v}}
	}
	tests := []struct {
		name   string
		attrs  []stablehlo.NamedAttr
		args   []Value
		result stablehlo.Type
		want   string
	}{
		{"no direction", nil, []Value{i32, i32}, res, "comparison_direction must be"},
		{"direction kind", []stablehlo.NamedAttr{{Name: "comparison_direction", Value: stablehlo.StringAttr("LT")}}, []Value{i32, i32}, res, "comparison_direction must be"},
		{"unknown direction", []stablehlo.NamedAttr{dir("LTE")}, []Value{i32, i32}, res, `unknown comparison_direction "LTE"`},
		{"total order on ints", []stablehlo.NamedAttr{dir("LT"), typ("TOTALORDER")}, []Value{i32, i32}, res, "TOTALORDER does not apply to i32"},
		{"signed on floats", []stablehlo.NamedAttr{dir("LT"), typ("SIGNED")}, []Value{f32, f32}, res, "SIGNED does not apply to f32"},
		{"float on ints", []stablehlo.NamedAttr{dir("LT"), typ("FLOAT")}, []Value{i32, i32}, res, "FLOAT does not apply to i32"},
		// compare_type must match the integer's signedness (the spec's C3):
		// UNSIGNED on i32 compared -1 < 1 as true before.
		{"unsigned on signed ints", []stablehlo.NamedAttr{dir("LT"), typ("UNSIGNED")}, []Value{i32, i32}, res, "UNSIGNED does not apply to i32"},
		{"signed on unsigned ints", []stablehlo.NamedAttr{dir("LT"), typ("SIGNED")}, []Value{ewtTensor(xla.Uint32, 1), ewtTensor(xla.Uint32, 1)}, res, "SIGNED does not apply to ui32"},
		{"signed on bools", []stablehlo.NamedAttr{dir("LT"), typ("SIGNED")}, []Value{ewtTensor(xla.Bool, true), ewtTensor(xla.Bool, true)}, res, "SIGNED does not apply to i1"},
		{"unknown type", []stablehlo.NamedAttr{dir("LT"), typ("FUZZY")}, []Value{f32, f32}, res, `unknown compare_type "FUZZY"`},
		{"type kind", []stablehlo.NamedAttr{dir("LT"), {Name: "compare_type", Value: stablehlo.IntAttr{Value: 1}}}, []Value{f32, f32}, res, "compare_type must be"},
		{"mixed operands", []stablehlo.NamedAttr{dir("LT")}, []Value{f32, i32}, res, "different types"},
		{"result not bool", []stablehlo.NamedAttr{dir("LT")}, []Value{f32, f32}, stablehlo.Tensor(xla.Float32, 1), "does not match tensor<1xi1>"},
	}
	for _, tt := range tests {
		_, err := ewtKernel("stablehlo.compare", tt.attrs, tt.result, tt.args...)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name        string
		pred        *Tensor
		dt          xla.DType
		onT, onF    []any
		want        []any
		dims, pdims []int64
	}{
		{name: "scalar true", pred: ewtShaped(xla.Bool, nil, true), dt: xla.Float32, onT: []any{1.0, 2.0}, onF: []any{3.0, 4.0}, want: []any{1.0, 2.0}},
		{name: "scalar false", pred: ewtShaped(xla.Bool, nil, false), dt: xla.Float32, onT: []any{1.0, 2.0}, onF: []any{3.0, 4.0}, want: []any{3.0, 4.0}},
		{name: "elementwise i4", pred: ewtTensor(xla.Bool, true, false, true), dt: xla.Int4, onT: []any{-8, 1, 2}, onF: []any{7, 6, 5}, want: []any{-8, 6, 2}},
		{name: "elementwise complex", pred: ewtTensor(xla.Bool, false, true), dt: xla.Complex128, onT: []any{1i, 2i}, onF: []any{3i, 4i}, want: []any{3i, 2i}},
		{name: "elementwise bool", pred: ewtTensor(xla.Bool, false, true), dt: xla.Bool, onT: []any{true, true}, onF: []any{false, false}, want: []any{false, true}},
		{name: "elementwise NaN", pred: ewtTensor(xla.Bool, true, false), dt: xla.BFloat16, onT: []any{ewtNaN, 1.0}, onF: []any{0.0, ewtNegZ}, want: []any{ewtNaN, ewtNegZ}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			onT, onF := ewtTensor(tt.dt, tt.onT...), ewtTensor(tt.dt, tt.onF...)
			out, err := ewtRun("stablehlo.select", "", []xla.Shape{onT.Shape}, tt.pred, onT, onF)
			require.NoError(t, err)
			ewtCheck(t, out[0], 0, tt.want, tt.name)
			// The result never aliases an operand.
			if d, ok := out[0].Data.([]float32); ok {
				d[0] = 42
				assert.NotEqual(t, float32(42), onT.Data.([]float32)[0])
				assert.NotEqual(t, float32(42), onF.Data.([]float32)[0])
			}
		})
	}
	// Shapes of two dimensions with an elementwise predicate.
	p := ewtShaped(xla.Bool, []int64{2, 2}, true, false, false, true)
	a := ewtShaped(xla.Int32, []int64{2, 2}, 1, 2, 3, 4)
	b := ewtShaped(xla.Int32, []int64{2, 2}, 5, 6, 7, 8)
	out := ewtRun1(t, "stablehlo.select", "", xla.Int32, p, a, b)
	assert.Equal(t, []int32{1, 6, 7, 4}, out.Data.([]int32))
}

func TestSelectErrors(t *testing.T) {
	f := ewtTensor(xla.Float32, 1.0, 2.0)
	res := stablehlo.Tensor(xla.Float32, 2)
	tests := []struct {
		name string
		args []Value
		want string
	}{
		{"pred not bool", []Value{ewtTensor(xla.Int32, 1, 0), f, f}, "pred must have i1 elements"},
		{"pred shape", []Value{ewtTensor(xla.Bool, true, false, true), f, f}, "must be a scalar or have the shape"},
		{"branch types", []Value{ewtShaped(xla.Bool, nil, true), f, ewtTensor(xla.Float64, 1.0, 2.0)}, "different types"},
		{"two operands", []Value{ewtShaped(xla.Bool, nil, true), f}, "takes 3 operands"},
	}
	for _, tt := range tests {
		_, err := ewtKernel("stablehlo.select", nil, res, tt.args...)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
}

func TestClamp(t *testing.T) {
	tests := []struct {
		name         string
		dt           xla.DType
		lo, x, hi    []any
		loDims, hDim []int64 // nil: the operand's shape; {}: scalar
		want         []any
	}{
		{name: "spec", dt: xla.Int32, lo: []any{5, 10, 15}, x: []any{3, 13, 23}, hi: []any{10, 15, 20}, want: []any{5, 13, 20}},
		{name: "scalar bounds", dt: xla.Float32, lo: []any{1.0}, x: []any{0.0, 2.0, 5.0, ewtNaN}, hi: []any{3.0}, loDims: []int64{}, hDim: []int64{}, want: []any{1.0, 2.0, 3.0, ewtNaN}},
		{name: "scalar min full max", dt: xla.Int8, lo: []any{-1}, x: []any{-100, 50, 3}, hi: []any{0, 10, 2}, loDims: []int64{}, want: []any{-1, 10, 2}},
		{name: "signed zero", dt: xla.Float64, lo: []any{0.0}, x: []any{ewtNegZ}, hi: []any{1.0}, want: []any{0.0}},
		{name: "NaN bound", dt: xla.Float32, lo: []any{ewtNaN}, x: []any{1.0}, hi: []any{2.0}, want: []any{ewtNaN}},
		{name: "ui4", dt: xla.Uint4, lo: []any{2}, x: []any{0, 9, 15}, hi: []any{12}, loDims: []int64{}, hDim: []int64{}, want: []any{2, 9, 12}},
		{name: "bool", dt: xla.Bool, lo: []any{false, true}, x: []any{false, false}, hi: []any{true, true}, want: []any{false, true}},
		{name: "complex", dt: xla.Complex64, lo: []any{1 + 1i}, x: []any{0i, 1 + 2i, 5 + 0i}, hi: []any{2 + 0i}, loDims: []int64{}, hDim: []int64{}, want: []any{1 + 1i, 1 + 2i, 2 + 0i}},
		{name: "f8", dt: xla.Float8E4M3FN, lo: []any{-448.0}, x: []any{-500.0, 3.0}, hi: []any{2.0}, loDims: []int64{}, hDim: []int64{}, want: []any{ewtNaN, 2.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := ewtTensor(tt.dt, tt.x...)
			bound := func(vals []any, dims []int64) *Tensor {
				if dims == nil {
					dims = x.Shape.Dims
				}
				return ewtShaped(tt.dt, dims, vals...)
			}
			res, err := ewtRun("stablehlo.clamp", "", []xla.Shape{x.Shape}, bound(tt.lo, tt.loDims), x, bound(tt.hi, tt.hDim))
			require.NoError(t, err)
			ewtCheck(t, res[0], 0, tt.want, tt.name)
		})
	}
}

func TestClampErrors(t *testing.T) {
	x := ewtTensor(xla.Float32, 1.0, 2.0)
	res := stablehlo.Tensor(xla.Float32, 2)
	tests := []struct {
		name string
		args []Value
		want string
	}{
		{"min shape", []Value{ewtTensor(xla.Float32, 1.0, 2.0, 3.0), x, x}, "scalars or have the operand's type"},
		{"max type", []Value{x, x, ewtShaped(xla.Float64, nil, 1.0)}, "scalars or have the operand's type"},
		{"operands", []Value{x, x}, "takes 3 operands"},
	}
	for _, tt := range tests {
		_, err := ewtKernel("stablehlo.clamp", nil, res, tt.args...)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
	_, err := ewtKernel("stablehlo.clamp", nil, stablehlo.Tensor(xla.Float32, 3), x, x, x)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not match")
}
