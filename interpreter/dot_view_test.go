package interpreter

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// windowValues cuts the window at start (clamped like dynamic_slice) of
// sizes out of vals (row-major dims).
func windowValues(vals []complex128, dims, start, sizes []int64) []complex128 {
	st := make([]int64, len(dims))
	for d := range dims {
		st[d] = min(max(start[d], 0), dims[d]-sizes[d])
	}
	str := Strides(dims)
	n := int64(1)
	for _, s := range sizes {
		n *= s
	}
	out := make([]complex128, 0, n)
	idx := make([]int64, len(sizes))
	for i := int64(0); i < n; i++ {
		off := int64(0)
		for d := range idx {
			off += (st[d] + idx[d]) * str[d]
		}
		out = append(out, vals[off])
		NextIndex(idx, sizes)
	}
	return out
}

// sliceDotSrc slices a window of %x and one of %y (starts given as i32
// arguments) and multiplies them.
func sliceDotSrc(dt xla.DType, xd, xs, yd, ys []int64, dn stablehlo.DotDimensionNumbers, res []int64) string {
	ty := func(d []int64) string { return laType(dt, d) }
	var b strings.Builder
	fmt.Fprintf(&b, "func.func @main(%%x: %s, %%y: %s", ty(xd), ty(yd))
	for i := range xd {
		fmt.Fprintf(&b, ", %%xs%d: tensor<i32>", i)
	}
	for i := range yd {
		fmt.Fprintf(&b, ", %%ys%d: tensor<i32>", i)
	}
	fmt.Fprintf(&b, ") -> %s {\n", ty(res))
	starts := func(p string, n int) string {
		var s []string
		for i := 0; i < n; i++ {
			s = append(s, fmt.Sprintf("%%%s%d", p, i))
		}
		return strings.Join(s, ", ")
	}
	ti := func(n int) string { return strings.TrimSuffix(strings.Repeat("tensor<i32>, ", n), ", ") }
	fmt.Fprintf(&b, "  %%a = stablehlo.dynamic_slice %%x, %s, sizes = %s : (%s, %s) -> %s\n", starts("xs", len(xd)), laInts(xs), ty(xd), ti(len(xd)), ty(xs))
	fmt.Fprintf(&b, "  %%b = stablehlo.dynamic_slice %%y, %s, sizes = %s : (%s, %s) -> %s\n", starts("ys", len(yd)), laInts(ys), ty(yd), ti(len(yd)), ty(ys))
	batching := ""
	if len(dn.LhsBatchingDims) > 0 {
		batching = fmt.Sprintf("batching_dims = %s x %s, ", laInts(dn.LhsBatchingDims), laInts(dn.RhsBatchingDims))
	}
	fmt.Fprintf(&b, "  %%d = stablehlo.dot_general %%a, %%b, %scontracting_dims = %s x %s : (%s, %s) -> %s\n",
		batching, laInts(dn.LhsContractingDims), laInts(dn.RhsContractingDims), ty(xs), ty(ys), ty(res))
	fmt.Fprintf(&b, "  return %%d : %s\n}", ty(res))
	return b.String()
}

func TestDotOfSlicesMatchesReference(t *testing.T) {
	// Windows read in place (row-major and transposed), windows that must
	// be copied (column dim not contiguous, batch dims, integer and
	// narrow types), unit dims, and starts dynamic_slice clamps.
	rng := rand.New(rand.NewPCG(7, 8))
	c := func(l, r int64) stablehlo.DotDimensionNumbers {
		return stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{l}, RhsContractingDims: []int64{r}}
	}
	cases := []struct {
		name           string
		xd, xs, yd, ys []int64
		xst, yst       []int64
		dn             stablehlo.DotDimensionNumbers
	}{
		{"rowmajor", []int64{12, 10}, []int64{4, 6}, []int64{9, 11}, []int64{6, 5}, []int64{3, 2}, []int64{1, 4}, c(1, 0)},
		{"lhs_transposed", []int64{12, 10}, []int64{6, 4}, []int64{9, 11}, []int64{6, 5}, []int64{5, 1}, []int64{2, 3}, c(0, 0)},
		{"rhs_transposed", []int64{12, 10}, []int64{4, 6}, []int64{9, 11}, []int64{5, 6}, []int64{0, 4}, []int64{4, 5}, c(1, 1)},
		{"clamped_starts", []int64{12, 10}, []int64{4, 6}, []int64{9, 11}, []int64{6, 5}, []int64{30, -4}, []int64{8, 100}, c(1, 0)},
		{"leading_unit_dim", []int64{5, 4, 6}, []int64{1, 4, 6}, []int64{6, 8}, []int64{6, 3}, []int64{2, 0, 0}, []int64{0, 5}, c(2, 0)},
		{"middle_unit_dim", []int64{7, 3, 6}, []int64{4, 1, 6}, []int64{6, 8}, []int64{6, 3}, []int64{1, 2, 0}, []int64{0, 2}, c(2, 0)},
		{"column_not_contiguous", []int64{7, 6, 2}, []int64{4, 6, 1}, []int64{6, 8}, []int64{6, 3}, []int64{1, 0, 1}, []int64{0, 2}, c(1, 0)},
		{"vector", []int64{12, 10}, []int64{1, 6}, []int64{9, 11}, []int64{6, 1}, []int64{3, 2}, []int64{1, 4}, c(1, 0)},
		{"batched", []int64{3, 5, 4}, []int64{2, 3, 4}, []int64{3, 4, 5}, []int64{2, 4, 2}, []int64{1, 1, 0}, []int64{0, 0, 3},
			stablehlo.DotDimensionNumbers{LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0}, LhsContractingDims: []int64{2}, RhsContractingDims: []int64{1}}},
	}
	for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.Int32, xla.BFloat16} {
		for _, tc := range cases {
			t.Run(fmt.Sprint(dt, "_", tc.name), func(t *testing.T) {
				n := func(d []int64) int { return int(xla.MakeShape(dt, d...).Size()) }
				xv, yv := laRandInts(rng, n(tc.xd), 4, false), laRandInts(rng, n(tc.yd), 4, false)
				want, resDims := refDotGeneral(windowValues(xv, tc.xd, tc.xst, tc.xs), tc.xs, windowValues(yv, tc.yd, tc.yst, tc.ys), tc.ys, tc.dn)
				args := []*Tensor{laTensor(dt, tc.xd, xv), laTensor(dt, tc.yd, yv)}
				for _, s := range append(append([]int64{}, tc.xst...), tc.yst...) {
					args = append(args, shpT(xla.Int32, nil, float64(s)))
				}
				out, err := laRun(t, sliceDotSrc(dt, tc.xd, tc.xs, tc.yd, tc.ys, tc.dn, resDims), args...)
				require.NoError(t, err)
				assert.Equal(t, laExpected(dt, want), laValues(out[0]))
			})
		}
	}
}

// viewKernels names, per dynamic_slice of main in order, whether it was
// planned to yield a view.
func viewKernels(t *testing.T, src string) []bool {
	t.Helper()
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err, src)
	p, err := Compile(m, "")
	require.NoError(t, err)
	var out []bool
	var walk func(ops []*stablehlo.Op)
	walk = func(ops []*stablehlo.Op) {
		for _, op := range ops {
			if op.Name == "stablehlo.dynamic_slice" {
				k := p.funcs["main"].ops[op].kernel
				out = append(out, reflect.ValueOf(k).Pointer() == reflect.ValueOf(Kernel(dynamicSliceView)).Pointer())
			}
			for _, r := range op.Regions {
				for _, b := range r.Blocks {
					walk(b.Ops)
				}
			}
		}
	}
	walk(p.Main.Body.Blocks[0].Ops)
	return out
}

func TestSliceViewPlanning(t *testing.T) {
	const head = `func.func @main(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>, %i: tensor<i32>) -> tensor<4x4xf32> {
  %a = stablehlo.dynamic_slice %x, %i, %i, sizes = [4, 4] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
  %b = stablehlo.dynamic_slice %y, %i, %i, sizes = [4, 4] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
`
	dot := "  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n"
	ret := "  return %d : tensor<4x4xf32>\n}"
	// Both slices feed only the dot: both are views.
	assert.Equal(t, []bool{true, true}, viewKernels(t, head+dot+ret))
	// A slice read twice is copied.
	assert.Equal(t, []bool{true, false}, viewKernels(t, head+dot+
		"  %e = stablehlo.add %d, %b : tensor<4x4xf32>\n  return %e : tensor<4x4xf32>\n}"))
	// An op between the slice and the dot that reads the sliced tensor
	// (it could write into it) makes a copy.
	between := strings.Replace(head, "  %b =", "  %u = stablehlo.dynamic_update_slice %x, %y, %i, %i : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<8x8xf32>\n  %b =", 1)
	useU := `  %s = stablehlo.slice %u [0:4, 0:4] : (tensor<8x8xf32>) -> tensor<4x4xf32>
  %e = stablehlo.add %d, %s : tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}`
	assert.Equal(t, []bool{false, true}, viewKernels(t, between+dot+useU))
	// Unless nothing reads what that op makes: it does not run (dce.go).
	assert.Equal(t, []bool{true, true}, viewKernels(t, between+dot+ret))
	// The dot inside a nested region: the slice is copied.
	nested := head + `  %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %d = "stablehlo.if"(%c) ({
    %e = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    stablehlo.return %e : tensor<4x4xf32>
  }, {
    stablehlo.return %a : tensor<4x4xf32>
  }) : (tensor<i1>) -> tensor<4x4xf32>
` + ret
	assert.Equal(t, []bool{false, false}, viewKernels(t, nested))
}

func TestDotOfSlicesCopiesNothing(t *testing.T) {
	// 256x256 f32 windows of 1024x1024 operands: read in place, a run
	// allocates the 256 KiB result and little else; copying the windows
	// would add 512 KiB.
	const n, w = 1024, 256
	dn := stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}
	src := sliceDotSrc(xla.Float32, []int64{n, n}, []int64{w, w}, []int64{n, n}, []int64{w, w}, dn, []int64{w, w})
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	args := []Value{NewTensor(xla.MakeShape(xla.Float32, n, n)), NewTensor(xla.MakeShape(xla.Float32, n, n))}
	for _, s := range []float64{128, 256, 512, 0} {
		args = append(args, shpT(xla.Int32, nil, s))
	}
	run := func() {
		_, err := p.Run(context.Background(), Device{}, args)
		require.NoError(t, err)
	}
	run()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 10
	for i := 0; i < runs; i++ {
		run()
	}
	runtime.ReadMemStats(&after)
	perRun := float64(after.TotalAlloc-before.TotalAlloc) / runs
	// Under the race detector sync.Pool drops a quarter of what it is
	// given, and a run sometimes packs into new memory: allow one more
	// half of the result, still far below the copies' 512 KiB.
	assert.Less(t, perRun, float64(w*w*4)*2, "bytes allocated per run")
}

func TestDotOfSlicesIEEESpecials(t *testing.T) {
	// 0 × Inf is NaN also when B is a window read in place: the finite
	// check covers the window (an Inf outside it changes nothing).
	dn := stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}
	src := sliceDotSrc(xla.Float32, []int64{4, 4}, []int64{2, 2}, []int64{4, 4}, []int64{2, 2}, dn, []int64{2, 2})
	x := laTensor(xla.Float32, []int64{4, 4}, make([]complex128, 16)) // all zeros
	yv := make([]complex128, 16)
	for i := range yv {
		yv[i] = 1
	}
	yv[0] = complex(math.Inf(1), 0) // outside the window at (1, 1)
	yv[1*4+1] = complex(math.Inf(1), 0)
	y := laTensor(xla.Float32, []int64{4, 4}, yv)
	args := []*Tensor{x, y}
	for _, s := range []float64{0, 0, 1, 1} {
		args = append(args, shpT(xla.Int32, nil, s))
	}
	out, err := laRun(t, src, args...)
	require.NoError(t, err)
	got := out[0].Data.([]float32)
	assert.True(t, math.IsNaN(float64(got[0])), "0 × Inf in the window: %v", got)
	assert.Equal(t, float32(0), got[1], "%v", got)
}
