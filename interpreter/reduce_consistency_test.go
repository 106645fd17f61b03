package interpreter

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// The typed fast paths of reduce, reduce_window and scatter must compute
// exactly what running the region through the elementwise kernels computes.
// Each case runs the same op twice: once with a region the fast path
// recognises, once with the result routed through an optimization_barrier
// (which the fast path does not recognise, so the region runs per element).

// shpSpecialInput returns n values of type dt mixing special and ordinary
// values (NaN, signed zeros, infinities, extremes for floats; the range ends
// for integers).
func shpSpecialInput(r *rand.Rand, dt xla.DType, dims ...int64) *Tensor {
	t := NewTensor(xla.MakeShape(dt, dims...))
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 2.5, -3.25, 0.1, 7, math.NaN(), math.Inf(1), math.Inf(-1), 1e30, -65504, 448}
	pick := func() float64 { return floats[r.Intn(len(floats))] }
	for i := 0; i < t.Len(); i++ {
		switch d := t.Data.(type) {
		case []bool:
			d[i] = r.Intn(2) == 1
		case []int8:
			d[i] = int8(WrapInt(dt, int64(r.Intn(256)-128)))
		case []int16:
			d[i] = int16(r.Intn(1 << 16))
		case []int32:
			d[i] = int32(r.Uint32())
			if r.Intn(4) == 0 {
				d[i] = math.MinInt32
			}
		case []int64:
			d[i] = int64(r.Uint64())
		case []uint8:
			d[i] = uint8(WrapUint(dt, uint64(r.Intn(256))))
		case []uint16:
			d[i] = uint16(r.Intn(1 << 16))
		case []uint32:
			d[i] = r.Uint32()
		case []uint64:
			d[i] = r.Uint64()
		case []float32:
			d[i] = RoundNarrow(dt, float32(pick()))
		case []float64:
			d[i] = pick()
		case []complex64:
			d[i] = complex(float32(pick()), float32(pick()))
		case []complex128:
			d[i] = complex(pick(), pick())
		}
	}
	return t
}

// shpSameBits compares two tensors element by element: equal bits, or both
// NaN.
func shpSameBits(t *testing.T, want, got *Tensor, msg string) {
	t.Helper()
	require.True(t, want.Shape.Equal(got.Shape), "%s: shapes %v and %v", msg, want.Shape, got.Shape)
	for i := 0; i < want.Len(); i++ {
		var ok bool
		var a, b any
		switch w := want.Data.(type) {
		case []float32:
			g := got.Data.([]float32)
			a, b = w[i], g[i]
			ok = math.Float32bits(w[i]) == math.Float32bits(g[i]) || (w[i] != w[i] && g[i] != g[i])
		case []float64:
			g := got.Data.([]float64)
			a, b = w[i], g[i]
			ok = math.Float64bits(w[i]) == math.Float64bits(g[i]) || (w[i] != w[i] && g[i] != g[i])
		case []complex64:
			g := got.Data.([]complex64)
			a, b = w[i], g[i]
			ok = shpSameF64(float64(real(w[i])), float64(real(g[i]))) && shpSameF64(float64(imag(w[i])), float64(imag(g[i])))
		case []complex128:
			g := got.Data.([]complex128)
			a, b = w[i], g[i]
			ok = shpSameF64(real(w[i]), real(g[i])) && shpSameF64(imag(w[i]), imag(g[i]))
		default:
			s := shpScalarFrom(want, i)
			u := shpScalarFrom(got, i)
			a, b = s.Data, u.Data
			ok = fmt.Sprint(s.Data) == fmt.Sprint(u.Data)
		}
		require.True(t, ok, "%s: element %d: region path %v, fast path %v", msg, i, a, b)
	}
}

// shpSameF64 reports equal values with equal signs, or two NaNs.
func shpSameF64(a, b float64) bool {
	return (a == b && math.Signbit(a) == math.Signbit(b)) || (a != a && b != b)
}

func shpConsistencyTypes(op string) []xla.DType {
	switch op {
	case "and", "or", "xor":
		return []xla.DType{xla.Bool, xla.Int4, xla.Int8, xla.Int32, xla.Uint2, xla.Uint8, xla.Uint64, xla.Int64}
	case "maximum", "minimum":
		return []xla.DType{xla.Bool, xla.Int4, xla.Int8, xla.Int16, xla.Int32, xla.Int64, xla.Uint4, xla.Uint8,
			xla.Uint16, xla.Uint32, xla.Uint64, xla.Float32, xla.Float64, xla.BFloat16, xla.Float16, xla.Float8E4M3FN, xla.Float8E5M2}
	}
	return []xla.DType{xla.Bool, xla.Int2, xla.Int4, xla.Int8, xla.Int16, xla.Int32, xla.Int64, xla.Uint4, xla.Uint8,
		xla.Uint16, xla.Uint32, xla.Uint64, xla.Float32, xla.Float64, xla.BFloat16, xla.Float16, xla.Float8E4M3FN,
		xla.Float8E5M2, xla.Complex64, xla.Complex128}
}

// shpRegion returns a binary region body for op on element type et; slow
// routes the result through an optimization_barrier.
func shpRegion(op, et string, slow bool) string {
	s := fmt.Sprintf(`%%s = "stablehlo.%s"(%%x, %%y) : (tensor<%s>, tensor<%s>) -> tensor<%s>`, op, et, et, et)
	r := "%s"
	if slow {
		s += fmt.Sprintf("\n    %%b = \"stablehlo.optimization_barrier\"(%%s) : (tensor<%s>) -> tensor<%s>", et, et)
		r = "%b"
	}
	return s + fmt.Sprintf("\n    \"stablehlo.return\"(%s) : (tensor<%s>) -> ()", r, et)
}

func TestFastPathsMatchRegions(t *testing.T) {
	for _, k := range []string{"add", "multiply", "maximum", "minimum", "and", "or", "xor"} {
		if kernelFor("stablehlo."+k) == nil || shpStubbed["stablehlo."+k] {
			t.Skipf("stablehlo.%s kernel not linked in", k)
		}
	}
	r := rand.New(rand.NewSource(1))
	for _, op := range []string{"add", "multiply", "maximum", "minimum", "and", "or", "xor"} {
		for _, dt := range shpConsistencyTypes(op) {
			et := dt.String()
			t.Run(op+"/"+et, func(t *testing.T) {
				in := shpSpecialInput(r, dt, 4, 6)
				init := shpSpecialInput(r, dt)
				run := func(src string, args ...Value) *Tensor {
					out := shpRun(t, src, args...)
					return out[0].(*Tensor)
				}
				// reduce along each dimension and both.
				for _, dims := range []string{"0", "1", "0, 1"} {
					out := "tensor<" + et + ">"
					switch dims {
					case "0":
						out = "tensor<6x" + et + ">"
					case "1":
						out = "tensor<4x" + et + ">"
					}
					src := func(slow bool) string {
						return fmt.Sprintf(`func.func @main(%%a: tensor<4x6x%s>, %%i: tensor<%s>) -> %s {
  %%0 = "stablehlo.reduce"(%%a, %%i) ({
  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):
    %s
  }) {dimensions = array<i64: %s>} : (tensor<4x6x%s>, tensor<%s>) -> %s
  return %%0 : %s
}`, et, et, out, et, et, shpRegion(op, et, slow), dims, et, et, out, out)
					}
					shpSameBits(t, run(src(true), in, init), run(src(false), in, init), "reduce "+dims)
				}
				// reduce_window with padding and dilation.
				rw := func(slow bool) string {
					return fmt.Sprintf(`func.func @main(%%a: tensor<4x6x%s>, %%i: tensor<%s>) -> tensor<3x3x%s> {
  %%0 = "stablehlo.reduce_window"(%%a, %%i) ({
  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):
    %s
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>, window_dilations = array<i64: 2, 1>, padding = dense<[[1, 0], [1, 0]]> : tensor<2x2xi64>} : (tensor<4x6x%s>, tensor<%s>) -> tensor<3x3x%s>
  return %%0 : tensor<3x3x%s>
}`, et, et, et, et, et, shpRegion(op, et, slow), et, et, et, et)
				}
				shpSameBits(t, run(rw(true), in, init), run(rw(false), in, init), "reduce_window")
				// Cumulative windows (TPU's cumsum and kin) along each
				// dimension: the one-pass form when f(init, init) is init
				// (always for the zero init), the window walk otherwise.
				cum := func(slow bool, win, pad string) string {
					return fmt.Sprintf(`func.func @main(%%a: tensor<4x6x%s>, %%i: tensor<%s>) -> tensor<4x6x%s> {
  %%0 = "stablehlo.reduce_window"(%%a, %%i) ({
  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):
    %s
  }) {window_dimensions = array<i64: %s>, padding = dense<%s> : tensor<2x2xi64>} : (tensor<4x6x%s>, tensor<%s>) -> tensor<4x6x%s>
  return %%0 : tensor<4x6x%s>
}`, et, et, et, et, et, shpRegion(op, et, slow), win, pad, et, et, et, et)
				}
				zero := NewTensor(xla.MakeShape(dt))
				for _, c := range [][2]string{{"1, 6", "[[0, 0], [5, 0]]"}, {"4, 1", "[[3, 0], [0, 0]]"}} {
					for _, i := range []*Tensor{init, zero} {
						shpSameBits(t, run(cum(true, c[0], c[1]), in, i), run(cum(false, c[0], c[1]), in, i), "cumulative "+c[0])
					}
				}
				// scatter with duplicate and out-of-bounds indices.
				upd := shpSpecialInput(r, dt, 5, 6)
				idx := shpT(xla.Int32, shpDims(5, 1), 1, 3, 1, -1, 7)
				sc := func(slow bool) string {
					return fmt.Sprintf(`func.func @main(%%a: tensor<4x6x%s>, %%i: tensor<5x1xi32>, %%u: tensor<5x6x%s>) -> tensor<4x6x%s> {
  %%0 = "stablehlo.scatter"(%%a, %%i, %%u) ({
  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):
    %s
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<4x6x%s>, tensor<5x1xi32>, tensor<5x6x%s>) -> tensor<4x6x%s>
  return %%0 : tensor<4x6x%s>
}`, et, et, et, et, et, shpRegion(op, et, slow), et, et, et, et)
				}
				shpSameBits(t, run(sc(true), in, idx, upd), run(sc(false), in, idx, upd), "scatter")
			})
		}
	}
}

// Sort with a single compare comparator (typed path) must order like the
// same comparator run through the compare kernel (here: the vectorised
// sorting network) whenever the comparator is a strict weak order (LT/GT;
// FLOAT compares only without NaNs). For other comparators the order is
// implementation-defined; the result must still be a permutation.
func TestSortFastPathMatchesRegion(t *testing.T) {
	if kernelFor("stablehlo.compare") == nil || shpStubbed["stablehlo.compare"] {
		t.Skip("stablehlo.compare kernel not linked in")
	}
	r := rand.New(rand.NewSource(2))
	for _, dt := range []xla.DType{xla.Bool, xla.Int4, xla.Int32, xla.Uint8, xla.Uint64, xla.Float32, xla.Float64, xla.BFloat16, xla.Float8E4M3FN} {
		for _, dir := range []string{"LT", "GT", "LE", "GE"} {
			cts := []string{""}
			if dt.IsFloat() {
				cts = []string{"FLOAT", "TOTALORDER"}
			}
			for _, ct := range cts {
				et := dt.String()
				t.Run(fmt.Sprintf("%s/%s/%s", et, dir, ct), func(t *testing.T) {
					keys := shpSpecialInput(r, dt, 3, 40)
					vals := shpIota(xla.Int32, shpDims(3, 40), 0)
					cmp := shpCmpOp("stablehlo.compare", dir, et, "a", "b", ct)
					fast := shpSortSrc("tensor<3x40x"+et+">", "tensor<3x40xi32>", et, "i32", "1", "true", cmp)
					slow := shpSortSrc("tensor<3x40x"+et+">", "tensor<3x40xi32>", et, "i32", "1", "true",
						cmp+"\n    %q = \"stablehlo.optimization_barrier\"(%p) : (tensor<i1>) -> tensor<i1>")
					slow = shpReplaceLast(slow, `"stablehlo.return"(%p)`, `"stablehlo.return"(%q)`)
					a := shpRun(t, fast, keys, vals)
					b := shpRun(t, slow, keys, vals)
					strict := dir == "LT" || dir == "GT"
					if ct == "FLOAT" {
						for _, v := range shpVals(keys) {
							if math.IsNaN(v) {
								strict = false
							}
						}
					}
					if !strict {
						perm := shpVals(b[1])
						seen := map[float64]bool{}
						for i, p := range perm {
							require.Equal(t, float64(i/40), math.Floor(p/40), "element %d stays in its row", i)
							require.False(t, seen[p], "index %v twice", p)
							seen[p] = true
						}
						return
					}
					shpSameBits(t, b[1].(*Tensor), a[1].(*Tensor), "permutation")
					shpSameBits(t, b[0].(*Tensor), a[0].(*Tensor), "keys")
				})
			}
		}
	}
}

func shpReplaceLast(s, old, new string) string {
	i := -1
	for j := 0; j+len(old) <= len(s); j++ {
		if s[j:j+len(old)] == old {
			i = j
		}
	}
	if i < 0 {
		return s
	}
	return s[:i] + new + s[i+len(old):]
}
