package interpreter

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// shpSortSrc sorts %k (keys) and %v (values) of type ty along dim with a
// comparator whose body is cmp (on %a %b, the key pair).
func shpSortSrc(kty, vty, et, vet, dim, stable, cmp string) string {
	return fmt.Sprintf(`func.func @main(%%k: %s, %%v: %s) -> (%s, %s) {
  %%r:2 = "stablehlo.sort"(%%k, %%v) ({
  ^bb0(%%a: tensor<%s>, %%b: tensor<%s>, %%c: tensor<%s>, %%d: tensor<%s>):
    %%p = %s
    "stablehlo.return"(%%p) : (tensor<i1>) -> ()
  }) {dimension = %s : i64, is_stable = %s} : (%s, %s) -> (%s, %s)
  return %%r#0, %%r#1 : %s, %s
}`, kty, vty, kty, vty, et, et, vet, vet, cmp, dim, stable, kty, vty, kty, vty, kty, vty)
}

func shpCmpOp(op, dir, et, lhs, rhs, ct string) string {
	attrs := ""
	if op == "stablehlo.compare" {
		attrs = fmt.Sprintf("{comparison_direction = #stablehlo<comparison_direction %s>", dir)
		if ct != "" {
			attrs += fmt.Sprintf(", compare_type = #stablehlo<comparison_type %s>", ct)
		}
		attrs += "}"
	} else {
		attrs = fmt.Sprintf("{dir = %q}", dir)
	}
	return fmt.Sprintf(`"%s"(%%%s, %%%s) %s : (tensor<%s>, tensor<%s>) -> tensor<i1>`, op, lhs, rhs, attrs, et, et)
}

func TestSortSpecExample(t *testing.T) {
	for _, op := range []string{"stablehlo.compare", "shptest.cmp"} {
		t.Run(op, func(t *testing.T) {
			src := shpSortSrc("tensor<2x3xi64>", "tensor<2x3xi64>", "i64", "i64", "0", "true", shpCmpOp(op, "GT", "i64", "a", "b", ""))
			out := shpRun(t, src, shpT(xla.Int64, shpDims(2, 3), 1, 2, 3, 3, 2, 1), shpT(xla.Int64, shpDims(2, 3), 3, 2, 1, 1, 2, 3))
			assert.Equal(t, []float64{3, 2, 3, 1, 2, 1}, shpVals(out[0]))
			assert.Equal(t, []float64{1, 2, 1, 3, 2, 3}, shpVals(out[1]))
		})
	}
}

// Stable sorting keeps equal keys in their original order (argsort with an
// iota), along any dimension, for short and long slices.
func TestSortStability(t *testing.T) {
	for _, n := range []int{5, 13, 100} {
		for _, op := range []string{"stablehlo.compare", "shptest.cmp"} {
			t.Run(fmt.Sprintf("%s n=%d", op, n), func(t *testing.T) {
				keys := make([]float64, 2*n)
				for i := range keys {
					keys[i] = float64((i * 7) % 3)
				}
				kty := fmt.Sprintf("tensor<%dx2xf32>", n)
				vty := fmt.Sprintf("tensor<%dx2xi32>", n)
				// Keys laid out [n, 2]: sort along dimension 0 (strided).
				src := shpSortSrc(kty, vty, "f32", "i32", "0", "true", shpCmpOp(op, "LT", "f32", "a", "b", ""))
				out := shpRun(t, src, shpT(xla.Float32, shpDims(int64(n), 2), keys...), shpIota(xla.Int32, shpDims(int64(n), 2), 0))
				gotK, gotV := shpVals(out[0]), shpVals(out[1])
				for col := 0; col < 2; col++ {
					type kv struct{ k, v float64 }
					var want []kv
					for i := 0; i < n; i++ {
						want = append(want, kv{keys[2*i+col], float64(2*i + col)})
					}
					sort.SliceStable(want, func(a, b int) bool { return want[a].k < want[b].k })
					for i := 0; i < n; i++ {
						require.Equal(t, want[i].k, gotK[2*i+col], "key %d col %d", i, col)
						require.Equal(t, want[i].v, gotV[2*i+col], "value %d col %d", i, col)
					}
				}
			})
		}
	}
}

func TestSortOrders(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan := math.NaN()
	negNaN := math.Float64frombits(math.Float64bits(nan) | 1<<63)
	cases := []struct {
		name, et, cmp string
		in, want      []float64
	}{
		{"descending by swapped operands", "i32", shpCmpOp("stablehlo.compare", "LT", "i32", "b", "a", ""),
			[]float64{3, 1, 2}, []float64{3, 2, 1}},
		{"unsigned", "ui32", shpCmpOp("stablehlo.compare", "LT", "ui32", "a", "b", "UNSIGNED"),
			[]float64{4000000000, 1, 7}, []float64{1, 7, 4000000000}},
		{"booleans", "i1", shpCmpOp("stablehlo.compare", "LT", "i1", "a", "b", ""),
			[]float64{1, 0, 1, 0}, []float64{0, 0, 1, 1}},
		{"total order", "f64", shpCmpOp("stablehlo.compare", "LT", "f64", "a", "b", "TOTALORDER"),
			[]float64{nan, 1, negZero, 0, math.Inf(-1), negNaN, -2}, []float64{negNaN, math.Inf(-1), -2, negZero, 0, 1, nan}},
		{"total order f32", "f32", shpCmpOp("stablehlo.compare", "GT", "f32", "a", "b", "TOTALORDER"),
			[]float64{0, negZero, 3}, []float64{3, 0, negZero}},
		{"bf16", "bf16", shpCmpOp("stablehlo.compare", "LT", "bf16", "a", "b", "FLOAT"),
			[]float64{0.5, -3, 2}, []float64{-3, 0.5, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dt, err := xla.ParseDType(c.et)
			require.NoError(t, err)
			ty := fmt.Sprintf("tensor<%dx%s>", len(c.in), c.et)
			vty := fmt.Sprintf("tensor<%dxi32>", len(c.in))
			src := shpSortSrc(ty, vty, c.et, "i32", "-1", "false", c.cmp)
			out := shpRun(t, src, shpT(dt, shpDims(int64(len(c.in))), c.in...), shpIota(xla.Int32, shpDims(int64(len(c.in))), 0))
			got := shpVals(out[0])
			require.Len(t, got, len(c.want))
			for i := range got {
				if math.IsNaN(c.want[i]) {
					assert.True(t, math.IsNaN(got[i]), "element %d: %v", i, got[i])
				} else {
					assert.Equal(t, c.want[i], got[i], "element %d", i)
				}
				assert.Equal(t, math.Signbit(c.want[i]), math.Signbit(got[i]), "sign of element %d", i)
			}
		})
	}
}

// A general comparator over two inputs: sort by (k1 ascending, k2
// descending).
func TestSortLexicographicComparator(t *testing.T) {
	src := `func.func @main(%k1: tensor<6xi32>, %k2: tensor<6xf32>) -> (tensor<6xi32>, tensor<6xf32>) {
  %r:2 = "stablehlo.sort"(%k1, %k2) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):
    %lt = "shptest.cmp"(%a, %b) {dir = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = "shptest.cmp"(%a, %b) {dir = "EQ"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %gt = "shptest.cmp"(%c, %d) {dir = "GT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %t = "shptest.and"(%eq, %gt) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %p = "shptest.or"(%lt, %t) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64} : (tensor<6xi32>, tensor<6xf32>) -> (tensor<6xi32>, tensor<6xf32>)
  return %r#0, %r#1 : tensor<6xi32>, tensor<6xf32>
}`
	out := shpRun(t, src, shpT(xla.Int32, shpDims(6), 2, 1, 2, 1, 0, 2), shpT(xla.Float32, shpDims(6), 1, 5, 3, 6, 0, 2))
	assert.Equal(t, []float64{0, 1, 1, 2, 2, 2}, shpVals(out[0]))
	assert.Equal(t, []float64{0, 6, 5, 3, 2, 1}, shpVals(out[1]))
}

func TestSortEdgeCasesAndErrors(t *testing.T) {
	cmp := shpCmpOp("stablehlo.compare", "LT", "i32", "a", "b", "")
	// Zero-size and one-element slices.
	out := shpRun(t, shpSortSrc("tensor<0x3xi32>", "tensor<0x3xi32>", "i32", "i32", "1", "true", cmp),
		shpT(xla.Int32, shpDims(0, 3)), shpT(xla.Int32, shpDims(0, 3)))
	assert.Empty(t, shpVals(out[0]))
	out = shpRun(t, shpSortSrc("tensor<3x1xi32>", "tensor<3x1xi32>", "i32", "i32", "1", "true", cmp),
		shpIota(xla.Int32, shpDims(3, 1), 0), shpIota(xla.Int32, shpDims(3, 1), 5))
	assert.Equal(t, []float64{0, 1, 2}, shpVals(out[0]))

	msg := shpRunErr(t, shpSortSrc("tensor<3xi32>", "tensor<3xi32>", "i32", "i32", "1", "true", cmp),
		shpIota(xla.Int32, shpDims(3), 0), shpIota(xla.Int32, shpDims(3), 0))
	assert.Contains(t, msg, "dimension 1 is out of range")
}

// The vectorised sorting network (stablehlo ops in the comparator) orders
// exactly like the merge sort running the same comparator per comparison
// (test ops, which do not vectorise): sorted by (k1 ascending, k2
// descending), ties in original order.
func TestSortNetworkMatchesMergeSort(t *testing.T) {
	shpNeedElementwise(t)
	src := func(op string, n int, dim string) string {
		ty := func(et string) string {
			if dim == "0" {
				return fmt.Sprintf("tensor<%dx3x%s>", n, et)
			}
			return fmt.Sprintf("tensor<3x%dx%s>", n, et)
		}
		cmp := func(dir, l, r, et string) string {
			if op == "stablehlo" {
				return fmt.Sprintf(`"stablehlo.compare"(%%%s, %%%s) {comparison_direction = #stablehlo<comparison_direction %s>} : (tensor<%s>, tensor<%s>) -> tensor<i1>`, l, r, dir, et, et)
			}
			return fmt.Sprintf(`"shptest.cmp"(%%%s, %%%s) {dir = %q} : (tensor<%s>, tensor<%s>) -> tensor<i1>`, l, r, dir, et, et)
		}
		logic := func(name string) string {
			if op == "stablehlo" {
				return "stablehlo." + name
			}
			return "shptest." + name
		}
		return fmt.Sprintf(`func.func @main(%%k1: %s, %%k2: %s, %%v: %s) -> (%s, %s, %s) {
  %%r:3 = "stablehlo.sort"(%%k1, %%k2, %%v) ({
  ^bb0(%%a: tensor<i32>, %%b: tensor<i32>, %%c: tensor<f32>, %%d: tensor<f32>, %%e: tensor<i32>, %%f: tensor<i32>):
    %%lt = %s
    %%eq = %s
    %%gt = %s
    %%t = "%s"(%%eq, %%gt) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %%p = "%s"(%%lt, %%t) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    "stablehlo.return"(%%p) : (tensor<i1>) -> ()
  }) {dimension = %s : i64, is_stable = true} : (%s, %s, %s) -> (%s, %s, %s)
  return %%r#0, %%r#1, %%r#2 : %s, %s, %s
}`, ty("i32"), ty("f32"), ty("i32"), ty("i32"), ty("f32"), ty("i32"),
			cmp("LT", "a", "b", "i32"), cmp("EQ", "a", "b", "i32"), cmp("GT", "c", "d", "f32"),
			logic("and"), logic("or"), dim,
			ty("i32"), ty("f32"), ty("i32"), ty("i32"), ty("f32"), ty("i32"), ty("i32"), ty("f32"), ty("i32"))
	}
	r := rand.New(rand.NewSource(5))
	for _, n := range []int{5, 37, 64, 100} {
		for _, dim := range []string{"0", "1"} {
			t.Run(fmt.Sprintf("n=%d dim=%s", n, dim), func(t *testing.T) {
				k1 := make([]float64, 3*n)
				k2 := make([]float64, 3*n)
				for i := range k1 {
					k1[i] = float64(r.Intn(4))
					k2[i] = float64(r.Intn(3)) - 1
				}
				var dims []int64
				if dim == "0" {
					dims = shpDims(int64(n), 3)
				} else {
					dims = shpDims(3, int64(n))
				}
				args := []Value{shpT(xla.Int32, dims, k1...), shpT(xla.Float32, dims, k2...), shpIota(xla.Int32, dims, 0)}
				net := shpRun(t, src("stablehlo", n, dim), args...)
				merge := shpRun(t, src("shptest", n, dim), args...)
				for i := range net {
					assert.Equal(t, shpVals(merge[i]), shpVals(net[i]), "result %d", i)
				}
			})
		}
	}
}

// TestSortByKeysMatchesRegion: jnp's comparators (canonicalise NaNs and
// signed zeros, then TOTALORDER; argsort's with an index operand) sort by
// keys computed once per element, in the order the region gives: the
// same comparator with its second half behind an optimization_barrier
// (no longer mirrored, so sorted by the vectorised network, itself
// checked against the merge sort) gives the same results, for f32, f64
// and bf16 with NaNs of both signs, signed zeros, infinities and ties,
// along each dimension.
func TestSortByKeysMatchesRegion(t *testing.T) {
	shpNeedElementwise(t)
	src := func(et string, n int, dim string, mirrored bool) string {
		ty := func(et string) string {
			if dim == "0" {
				return fmt.Sprintf("tensor<%dx3x%s>", n, et)
			}
			return fmt.Sprintf("tensor<3x%dx%s>", n, et)
		}
		b := "%b"
		barrier := ""
		if !mirrored {
			barrier = fmt.Sprintf("%%bb = stablehlo.optimization_barrier %%b : tensor<%s>\n    ", et)
			b = "%bb"
		}
		return fmt.Sprintf(`func.func @main(%%x: %[2]s, %%i: %[3]s) -> (%[2]s, %[3]s) {
  %%r:2 = "stablehlo.sort"(%%x, %%i) ({
  ^bb0(%%a: tensor<%[1]s>, %%b: tensor<%[1]s>, %%c: tensor<i32>, %%d: tensor<i32>):
    %[5]s%%z = stablehlo.constant dense<0.000000e+00> : tensor<%[1]s>
    %%nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %%cnan = stablehlo.convert %%nan : (tensor<f32>) -> tensor<%[1]s>
    %%1 = stablehlo.compare  EQ, %%a, %%z,  FLOAT : (tensor<%[1]s>, tensor<%[1]s>) -> tensor<i1>
    %%2 = stablehlo.select %%1, %%z, %%a : tensor<i1>, tensor<%[1]s>
    %%3 = stablehlo.compare  NE, %%a, %%a,  FLOAT : (tensor<%[1]s>, tensor<%[1]s>) -> tensor<i1>
    %%4 = stablehlo.select %%3, %%cnan, %%2 : tensor<i1>, tensor<%[1]s>
    %%5 = stablehlo.compare  EQ, %[4]s, %%z,  FLOAT : (tensor<%[1]s>, tensor<%[1]s>) -> tensor<i1>
    %%6 = stablehlo.select %%5, %%z, %[4]s : tensor<i1>, tensor<%[1]s>
    %%7 = stablehlo.compare  NE, %[4]s, %[4]s,  FLOAT : (tensor<%[1]s>, tensor<%[1]s>) -> tensor<i1>
    %%8 = stablehlo.select %%7, %%cnan, %%6 : tensor<i1>, tensor<%[1]s>
    %%9 = stablehlo.compare  LT, %%4, %%8,  TOTALORDER : (tensor<%[1]s>, tensor<%[1]s>) -> tensor<i1>
    stablehlo.return %%9 : tensor<i1>
  }) {dimension = %[6]s : i64, is_stable = true} : (%[2]s, %[3]s) -> (%[2]s, %[3]s)
  return %%r#0, %%r#1 : %[2]s, %[3]s
}`, et, ty(et), ty("i32"), b, barrier, dim)
	}
	specials := []float64{math.NaN(), -math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1, -1, 2.5}
	r := rand.New(rand.NewSource(9))
	for _, et := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16} {
		for _, n := range []int{33, 100} {
			for _, dim := range []string{"0", "1"} {
				t.Run(fmt.Sprintf("%v n=%d dim=%s", et, n, dim), func(t *testing.T) {
					var dims []int64
					if dim == "0" {
						dims = shpDims(int64(n), 3)
					} else {
						dims = shpDims(3, int64(n))
					}
					x := NewTensor(xla.MakeShape(et, dims...))
					for i := 0; i < x.Len(); i++ {
						v := specials[r.Intn(len(specials))]
						if r.Intn(2) == 0 {
							v = float64(r.Intn(5)) - 2 // ties
						}
						ewtSet(x, i, v)
					}
					args := []Value{x, shpIota(xla.Int32, dims, 0)}
					keyed := shpRun(t, src(et.String(), n, dim, true), args...)
					ref := shpRun(t, src(et.String(), n, dim, false), args...)
					for i := range keyed {
						shpSameBits(t, ref[i].(*Tensor), keyed[i].(*Tensor), fmt.Sprintf("result %d", i))
					}
				})
			}
		}
	}
	// The keyed form is what the mirrored comparator takes, and only it.
	for _, mirrored := range []bool{true, false} {
		m, err := stablehlo.Parse([]byte(src("f32", 100, "0", mirrored)))
		require.NoError(t, err)
		var sortOp *stablehlo.Op
		m.Walk(func(op *stablehlo.Op) bool {
			if op.Name == "stablehlo.sort" {
				sortOp = op
			}
			return true
		})
		p, err := Compile(m, "")
		require.NoError(t, err)
		ins := []*Tensor{NewTensor(xla.MakeShape(xla.Float32, 100, 3)), NewTensor(xla.MakeShape(xla.Int32, 100, 3))}
		base := 0
		less, err := shpKeyedSortLess(&Exec{Ctx: context.Background(), Program: p}, sortOp.Regions[0], ins, []xla.DType{xla.Float32, xla.Int32}, &base, 3)
		require.NoError(t, err)
		assert.Equal(t, mirrored, less != nil, "mirrored %v", mirrored)
	}
}

// TestSortNetworkLeavesNonStrictComparators: a comparator that puts two
// elements each before the other (LE on tied keys) sorts in the merge
// sort's order on every path: the vectorised network (from 64 elements)
// hands it back to the merge sort instead of ordering ties its own way.
func TestSortNetworkLeavesNonStrictComparators(t *testing.T) {
	shpNeedElementwise(t)
	src := func(body string, n int) string {
		ty := fmt.Sprintf("tensor<%dxi32>", n)
		return fmt.Sprintf(`func.func @main(%%k: %s, %%v: %s) -> (%s, %s) {
  %%r:2 = "stablehlo.sort"(%%k, %%v) ({
  ^bb0(%%a: tensor<i32>, %%b: tensor<i32>, %%c: tensor<i32>, %%d: tensor<i32>):
%s
    "stablehlo.return"(%%p) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (%s, %s) -> (%s, %s)
  return %%r#0, %%r#1 : %s, %s
}`, ty, ty, ty, ty, body, ty, ty, ty, ty, ty, ty)
	}
	// a <= b, vectorising (compare LE, or false) and not (the test ops).
	const vectorised = `    %le = stablehlo.compare LE, %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %f = stablehlo.constant dense<false> : tensor<i1>
    %p = stablehlo.or %le, %f : tensor<i1>`
	const perComparison = `    %lt = "shptest.cmp"(%a, %b) {dir = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = "shptest.cmp"(%a, %b) {dir = "EQ"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %p = "shptest.or"(%lt, %eq) : (tensor<i1>, tensor<i1>) -> tensor<i1>`
	for _, n := range []int{8, 64, 100} {
		keys := make([]float64, n)
		for i := range keys {
			keys[i] = float64(i % 2)
		}
		args := []Value{shpT(xla.Int32, shpDims(int64(n)), keys...), shpIota(xla.Int32, shpDims(int64(n)), 0)}
		vec := shpRun(t, src(vectorised, n), args...)
		merge := shpRun(t, src(perComparison, n), args...)
		assert.Equal(t, shpVals(merge[1]), shpVals(vec[1]), "n=%d", n)
	}
}
