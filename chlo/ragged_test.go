package chlo

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// raggedCase is a ragged_dot configuration: operand shapes, dimension
// numbers, group sizes (their shape and values) and the expected mode and
// result shape.
type raggedCase struct {
	name           string
	lhs, rhs, gsSh []int64
	dims           stablehlo.RaggedDotDimensionNumbers
	gs             []int64
	mode           stablehlo.RaggedDotMode
	res            []int64
}

func rd(lb, rb, lc, rc, lr, rg []int64) stablehlo.RaggedDotDimensionNumbers {
	return stablehlo.RaggedDotDimensionNumbers{LhsBatchingDims: lb, RhsBatchingDims: rb,
		LhsContractingDims: lc, RhsContractingDims: rc, LhsRaggedDims: lr, RhsGroupDims: rg}
}

func ints(v ...int64) []int64 { return v }

func raggedCases() []raggedCase {
	return []raggedCase{
		// [m,k] x [g,k,n]: the mixture-of-experts form; sizes sum below m.
		{"moe", ints(7, 3), ints(3, 3, 4), ints(3), rd(nil, nil, ints(1), ints(1), ints(0), ints(0)), ints(2, 0, 3),
			stablehlo.RaggedNonContracting, ints(7, 4)},
		// [b,m,k] x [g,b,k,n] as in upstream's tests, batched group sizes [b, g].
		{"noncontracting batched", ints(2, 5, 3), ints(3, 2, 3, 2), ints(2, 3), rd(ints(0), ints(1), ints(2), ints(2), ints(1), ints(0)),
			ints(1, 2, 2, 4, 0, 1), stablehlo.RaggedNonContracting, ints(2, 5, 2)},
		// A free lhs dimension before the ragged one joins group_sizes's prefix:
		// lhs [b=2, x=2, m=4, k=3], group_sizes [b, x, g].
		{"noncontracting prefix", ints(2, 2, 4, 3), ints(2, 2, 3, 2), ints(2, 2, 2), rd(ints(0), ints(1), ints(3), ints(2), ints(2), ints(0)),
			ints(1, 3, 4, 0, 0, 2, 2, 1), stablehlo.RaggedNonContracting, ints(2, 2, 4, 2)},
		// Transposed rhs: [k, g, n] with the group dimension in the middle.
		{"noncontracting rhs layout", ints(6, 2), ints(2, 2, 3), ints(2), rd(nil, nil, ints(1), ints(0), ints(0), ints(1)), ints(4, 2),
			stablehlo.RaggedNonContracting, ints(6, 3)},
		// [m,k] x [k,n] ragged contracting: [g,m,n].
		{"contracting", ints(3, 6), ints(6, 2), ints(3), rd(nil, nil, ints(1), ints(0), ints(1), nil), ints(2, 3, 0),
			stablehlo.RaggedContracting, ints(3, 3, 2)},
		// Batched: [b,m,k] x [b,k,n], group_sizes [b, g].
		{"contracting batched", ints(2, 3, 5), ints(2, 5, 2), ints(2, 2), rd(ints(0), ints(0), ints(2), ints(1), ints(2), nil), ints(2, 3, 1, 1),
			stablehlo.RaggedContracting, ints(2, 2, 3, 2)},
		// Two contracting dimensions; the first is in group_sizes's prefix:
		// lhs [m=2, k1=2, k2=4], group_sizes [k1, g].
		{"contracting two k", ints(2, 2, 4), ints(2, 4, 3), ints(2, 3), rd(nil, nil, ints(1, 2), ints(0, 1), ints(2), nil), ints(1, 1, 2, 0, 3, 1),
			stablehlo.RaggedContracting, ints(3, 2, 3)},
		// Ragged batch: [b,m,k] x [b,k,n], zero past the groups.
		{"batch", ints(4, 2, 3), ints(4, 3, 2), ints(2), rd(ints(0), ints(0), ints(2), ints(1), ints(0), nil), ints(1, 2),
			stablehlo.RaggedBatch, ints(4, 2, 2)},
		// The ragged batch dimension second: group_sizes [b0, g].
		{"batch prefix", ints(2, 3, 2, 2), ints(2, 3, 2, 2), ints(2, 2), rd(ints(0, 1), ints(0, 1), ints(3), ints(2), ints(1), nil), ints(1, 1, 3, 0),
			stablehlo.RaggedBatch, ints(2, 3, 2, 2)},
	}
}

// raggedRef is ragged_dot by its definition, in float64: for every result
// entry, the sum over contracting indices of the products that the group
// rules keep.
func raggedRef(c raggedCase, lhs, rhs []float64) []float64 {
	d := c.dims
	lt := stablehlo.Tensor(xla.Float64, c.lhs...)
	rt := stablehlo.Tensor(xla.Float64, c.rhs...)
	p, err := stablehlo.PlanRaggedDot(lt, rt, stablehlo.Tensor(xla.Int64, c.gsSh...), d)
	if err != nil {
		panic(err)
	}
	ng := p.NumGroups
	// groupOf(li) = the group of li's ragged coordinate, using the row of
	// group sizes li's prefix coordinates select.
	groupOf := func(li []int64) int64 {
		row := int64(0)
		if len(c.gsSh) > 1 {
			for _, pd := range p.GroupPrefix {
				row = row*c.lhs[pd] + li[pd]
			}
		}
		end := int64(0)
		for j := int64(0); j < ng; j++ {
			end += c.gs[row*ng+j]
			if li[p.Ragged] < end {
				return j
			}
		}
		return -1
	}
	ls, rs := interpreter.Strides(c.lhs), interpreter.Strides(c.rhs)
	out := make([]float64, prod(p.Dims))
	idx := make([]int64, len(p.Dims))
	kd := permuted(c.lhs, d.LhsContractingDims)
	li, ri := make([]int64, len(c.lhs)), make([]int64, len(c.rhs))
	for o := range out {
		if o > 0 {
			interpreter.NextIndex(idx, p.Dims)
		}
		pos, grp := 0, int64(-1)
		if p.Mode == stablehlo.RaggedContracting {
			grp, pos = idx[0], 1
		}
		for i := range d.LhsBatchingDims {
			li[d.LhsBatchingDims[i]], ri[d.RhsBatchingDims[i]] = idx[pos], idx[pos]
			pos++
		}
		for _, i := range p.LhsFree {
			li[i] = idx[pos]
			pos++
		}
		for _, i := range p.RhsFree {
			ri[i] = idx[pos]
			pos++
		}
		k := make([]int64, len(kd))
		for n := int64(0); n < prod(kd); n++ {
			if n > 0 {
				interpreter.NextIndex(k, kd)
			}
			for i, v := range k {
				li[d.LhsContractingDims[i]], ri[d.RhsContractingDims[i]] = v, v
			}
			gl := groupOf(li)
			switch p.Mode {
			case stablehlo.RaggedNonContracting:
				if gl < 0 {
					continue
				}
				ri[d.RhsGroupDims[0]] = gl
			case stablehlo.RaggedContracting:
				if gl != grp {
					continue
				}
			case stablehlo.RaggedBatch:
				if gl < 0 {
					continue
				}
			}
			var l, r int64
			for i, v := range li {
				l += v * ls[i]
			}
			for i, v := range ri {
				r += v * rs[i]
			}
			out[o] += lhs[l] * rhs[r]
		}
	}
	return out
}

func randomTensor(rng *rand.Rand, dt xla.DType, dims []int64) (*interpreter.Tensor, []float64) {
	vs := make([]float64, prod(dims))
	for i := range vs {
		vs[i] = representable(dt, math.Round(rng.NormFloat64()*64)/32)
	}
	x := tensorOf(dt, vs)
	x.Shape = xla.MakeShape(dt, dims...)
	return x, vs
}

func groupTensor(dims, vs []int64) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(xla.Int32, dims...))
	d := x.Data.([]int32)
	for i, v := range vs {
		d[i] = int32(v)
	}
	return x
}

// Every mode, with rank-1 and batched group sizes, built, printed and
// parsed back, run directly and decomposed: both match the definition.
func TestRaggedDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range raggedCases() {
		for _, dts := range [][3]xla.DType{{xla.Float32, xla.Float32, xla.Invalid}, {xla.Float64, xla.Float64, xla.Invalid},
			{xla.BFloat16, xla.BFloat16, xla.Float32}, {xla.Float16, xla.Float16, xla.Invalid}} {
			t.Run(c.name+"/"+dts[0].String(), func(t *testing.T) {
				lt, rt := stablehlo.Tensor(dts[0], c.lhs...), stablehlo.Tensor(dts[1], c.rhs...)
				gt := stablehlo.Tensor(xla.Int32, c.gsSh...)
				p, err := stablehlo.PlanRaggedDot(lt, rt, gt, c.dims)
				require.NoError(t, err)
				assert.Equal(t, c.mode, p.Mode)
				mk := func() *stablehlo.Module {
					return build(t, []stablehlo.TensorType{lt, rt, gt}, func(fb *FuncBuilder, a []*Value) []*Value {
						r := RaggedDotWith(fb, a[0], a[1], a[2], c.dims, RaggedDotConfig{ResultDType: dts[2],
							Precision: []stablehlo.Precision{stablehlo.PrecisionDefault, stablehlo.PrecisionHighest}})
						return []*Value{r}
					})
				}
				m := mk()
				rtype, _ := m.Funcs[0].ResultTypes[0].(stablehlo.TensorType)
				assert.Equal(t, c.res, rtype.Dims)
				// The printed form parses back to the same text.
				text := m.String()
				assert.Contains(t, text, "#chlo.ragged_dot<lhs_batching_dimensions = [")
				assert.Contains(t, text, "precision_config = [#chlo<precision DEFAULT>, #chlo<precision HIGHEST>]")
				m2, err := stablehlo.Parse([]byte(text))
				require.NoError(t, err)
				assert.Equal(t, text, m2.String())
				require.NoError(t, m2.Verify())

				lx, lv := randomTensor(rng, dts[0], c.lhs)
				rx, rv := randomTensor(rng, dts[1], c.rhs)
				gx := groupTensor(c.gsSh, c.gs)
				want := raggedRef(c, lv, rv)
				direct := floats(run(t, m2, lx, rx, gx)[0])
				expanded := floats(expandAndRun(t, mk(), lx, rx, gx)[0])
				odt := rtype.DType
				for i := range want {
					// Inputs are multiples of 1/32 below 2^6: every product and
					// sum is exact in f32 and f64; bf16 and f16 results round
					// the exact sum once.
					w := representable(odt, want[i])
					assert.Equal(t, w, direct[i], "direct %d", i)
					if odt == xla.Float16 {
						assert.InDelta(t, w, expanded[i], math.Abs(w)*2e-3, "decomposed %d", i)
					} else {
						assert.Equal(t, w, expanded[i], "decomposed %d", i)
					}
				}
			})
		}
	}
}

// Shape errors name the rule, from the builder and from Verify.
func TestRaggedDotErrors(t *testing.T) {
	f32 := func(d ...int64) stablehlo.TensorType { return stablehlo.Tensor(xla.Float32, d...) }
	i64 := func(d ...int64) stablehlo.TensorType { return stablehlo.Tensor(xla.Int64, d...) }
	cases := []struct {
		name         string
		lhs, rhs, gs stablehlo.TensorType
		dims         stablehlo.RaggedDotDimensionNumbers
		want         string
	}{
		{"contracting sizes", f32(11, 5), f32(3, 2, 7), i64(3), rd(nil, nil, ints(1), ints(1), ints(0), ints(0)), "contracting dimension sizes must match"},
		{"group_sizes rank", f32(11, 5), f32(3, 5, 7), i64(3, 2), rd(nil, nil, ints(1), ints(1), ints(0), ints(0)), "group_sizes"},
		{"group_sizes shape", f32(19, 17, 11, 5), f32(3, 19, 5, 7), i64(19, 11, 3), rd(ints(0), ints(1), ints(3), ints(2), ints(2), ints(0)),
			"group_sizes is expected to have shape [19 17 3], got [19 11 3]"},
		{"group dim size", f32(11, 5), f32(3, 5, 7), i64(2), rd(nil, nil, ints(1), ints(1), ints(0), ints(0)), "rhs group dimension 0 has size 3, want 2"},
		{"two ragged", f32(11, 5), f32(3, 5, 7), i64(3), rd(nil, nil, ints(1), ints(1), ints(0, 1), ints(0)), "exactly one dimension"},
		{"group is batch", f32(3, 11, 5), f32(3, 5, 7), i64(3), rd(ints(0), ints(0), ints(2), ints(1), ints(1), ints(0)), "in both rhs_group_dimensions and rhs_batching_dimensions"},
		{"group in batch mode", f32(2, 11, 5), f32(3, 2, 5, 7), i64(3), rd(ints(0), ints(1), ints(2), ints(2), ints(0), ints(0)), "the ragged batch mode takes no rhs group dimension"},
		{"no group dim", f32(11, 5), f32(5, 7), i64(3), rd(nil, nil, ints(1), ints(0), ints(0), nil), "needs exactly one rhs group dimension"},
		{"out of range", f32(11, 5), f32(3, 5, 7), i64(3), rd(nil, nil, ints(2), ints(1), ints(0), ints(0)), "out of range"},
		{"bool lhs", stablehlo.Tensor(xla.Bool, 11, 5), f32(3, 5, 7), i64(3), rd(nil, nil, ints(1), ints(1), ints(0), ints(0)), "numeric element types"},
		{"float group sizes", f32(11, 5), f32(3, 5, 7), f32(3), rd(nil, nil, ints(1), ints(1), ints(0), ints(0)), "integer element type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := stablehlo.NewBuilder("m")
			fb := b.NewFunction("main", c.lhs, c.rhs, c.gs)
			r := RaggedDot(fb, fb.Arg(0), fb.Arg(1), fb.Arg(2), c.dims)
			require.NotNil(t, r)
			fb.Return(fb.Arg(0))
			_, err := b.Build()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "chlo.ragged_dot")
		})
	}
	// A hand-written op with a wrong result shape fails Verify.
	src := `func.func @main(%l: tensor<11x5xf32>, %r: tensor<3x5x7xf32>, %g: tensor<3xi64>) -> tensor<11x8xf32> {
  %0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<11x5xf32>, tensor<3x5x7xf32>, tensor<3xi64>) -> tensor<11x8xf32>
  return %0 : tensor<11x8xf32>
}`
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	err = m.Verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tensor<11x7xf32>")
	// An unknown field of the attribute is a parse error with its name.
	_, err = stablehlo.Parse([]byte(strings.Replace(src, "rhs_group_dimensions", "rhs_grup_dimensions", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rhs_grup_dimensions")
}

// An Inf in the operands reaches only the results of its group: the
// decomposition selects the entries outside a group instead of
// multiplying them by 0 (0·Inf made NaN of other groups' results, and of
// results past the groups).
func TestRaggedDotNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	setF32 := func(x *interpreter.Tensor, vs []float64, i int, v float64) {
		vs[i] = v
		x.Data.([]float32)[i] = float32(v)
	}
	for _, c := range raggedCases() {
		for _, where := range []string{"first", "last"} {
			t.Run(c.name+"/"+where, func(t *testing.T) {
				lt, rt := stablehlo.Tensor(xla.Float32, c.lhs...), stablehlo.Tensor(xla.Float32, c.rhs...)
				gt := stablehlo.Tensor(xla.Int32, c.gsSh...)
				mk := func() *stablehlo.Module {
					return build(t, []stablehlo.TensorType{lt, rt, gt}, func(fb *FuncBuilder, a []*Value) []*Value {
						return []*Value{RaggedDotWith(fb, a[0], a[1], a[2], c.dims, RaggedDotConfig{})}
					})
				}
				lx, lv := randomTensor(rng, xla.Float32, c.lhs)
				rx, rv := randomTensor(rng, xla.Float32, c.rhs)
				li, ri := 0, len(rv)-1
				if where == "last" {
					li, ri = len(lv)-1, 0
				}
				setF32(lx, lv, li, math.Inf(1))
				setF32(rx, rv, ri, math.Inf(1))
				gx := groupTensor(c.gsSh, c.gs)
				want := raggedRef(c, lv, rv)
				direct := floats(run(t, mk(), lx, rx, gx)[0])
				expanded := floats(expandAndRun(t, mk(), lx, rx, gx)[0])
				for i, w := range want {
					if math.IsNaN(w) {
						assert.True(t, math.IsNaN(direct[i]) && math.IsNaN(expanded[i]), "%d: want NaN, direct %v, decomposed %v", i, direct[i], expanded[i])
						continue
					}
					assert.Equal(t, float64(float32(w)), direct[i], "direct %d", i)
					assert.Equal(t, float64(float32(w)), expanded[i], "decomposed %d", i)
				}
			})
		}
	}
}

// TestRaggedDotIntegers: an i8 x i8 -> i32 ragged_dot verifies (its types
// are dot_general's), the interpreter's own kernel refuses it naming
// chlo.Expand, and the expansion runs it exactly.
func TestRaggedDotIntegers(t *testing.T) {
	src := `func.func @main(%l: tensor<6x4xi8>, %r: tensor<2x4x3xi8>, %g: tensor<2xi32>) -> tensor<6x3xi32> {
  %0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<6x4xi8>, tensor<2x4x3xi8>, tensor<2xi32>) -> tensor<6x3xi32>
  return %0 : tensor<6x3xi32>
}`
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	_, err = interpreter.Compile(m, "main")
	require.ErrorContains(t, err, "chlo.Expand rewrites it as dot_general")

	l := interpreter.NewTensor(xla.MakeShape(xla.Int8, 6, 4))
	r := interpreter.NewTensor(xla.MakeShape(xla.Int8, 2, 4, 3))
	ld, rdata := l.Data.([]int8), r.Data.([]int8)
	for i := range ld {
		ld[i] = int8(i%7 - 3)
	}
	for i := range rdata {
		rdata[i] = int8(i%5 - 2)
	}
	g := interpreter.NewTensor(xla.MakeShape(xla.Int32, 2))
	copy(g.Data.([]int32), []int32{2, 3}) // rows 0-1 group 0, rows 2-4 group 1, row 5 none
	got := expandAndRun(t, m, l, r, g)[0].Data.([]int32)
	for row := 0; row < 6; row++ {
		for col := 0; col < 3; col++ {
			want := int32(0)
			grp := map[int]int{0: 0, 1: 0, 2: 1, 3: 1, 4: 1}
			if gi, ok := grp[row]; ok {
				for k := 0; k < 4; k++ {
					want += int32(ld[row*4+k]) * int32(rdata[gi*12+k*3+col])
				}
			}
			assert.Equal(t, want, got[row*3+col], "row %d col %d", row, col)
		}
	}
}

// Integer ragged_dots are computed in the result's integer type (exact,
// wrapping as dot_general does, where f32 rounded 16777217 and saturated),
// complex ones in complex arithmetic (the imaginary parts were dropped).
func TestRaggedDotExactTypes(t *testing.T) {
	src := func(et string) string {
		return strings.ReplaceAll(`func.func @main(%l: tensor<2x1xET>, %r: tensor<1x1x2xET>, %g: tensor<1xi32>) -> tensor<2x2xET> {
  %0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<2x1xET>, tensor<1x1x2xET>, tensor<1xi32>) -> tensor<2x2xET>
  return %0 : tensor<2x2xET>
}`, "ET", et)
	}
	g := interpreter.NewTensor(xla.MakeShape(xla.Int32, 1))
	g.Data.([]int32)[0] = 2

	m, err := stablehlo.Parse([]byte(src("i32")))
	require.NoError(t, err)
	l := interpreter.NewTensor(xla.MakeShape(xla.Int32, 2, 1))
	copy(l.Data.([]int32), []int32{16777217, 65536})
	r := interpreter.NewTensor(xla.MakeShape(xla.Int32, 1, 1, 2))
	copy(r.Data.([]int32), []int32{1, 65536})
	// 16777217·65536 = 2^40 + 2^16 and 65536·65536 = 2^32 wrap to 2^16 and 0.
	assert.Equal(t, []int32{16777217, 65536, 65536, 0}, expandAndRun(t, m, l, r, g)[0].Data.([]int32))

	m, err = stablehlo.Parse([]byte(src("complex<f32>")))
	require.NoError(t, err)
	lc := interpreter.NewTensor(xla.MakeShape(xla.Complex64, 2, 1))
	copy(lc.Data.([]complex64), []complex64{1 + 2i, 3 - 1i})
	rc := interpreter.NewTensor(xla.MakeShape(xla.Complex64, 1, 1, 2))
	copy(rc.Data.([]complex64), []complex64{2 + 1i, 1i})
	assert.Equal(t, []complex64{5i, -2 + 1i, 7 + 1i, 1 + 3i}, expandAndRun(t, m, lc, rc, g)[0].Data.([]complex64))
}
